"""The package's estimators, registered in the order the capstone comparison reports them.

Each class gives the per-user terms of its public function (when it has them) and its
comparison kernel, vectorised over models (:mod:`recbias_tutorial._comparison_methods`).
The public functions, with their documentation and validation, are in
:mod:`recbias_tutorial.estimators` (and :func:`~recbias_tutorial.sampling.intervene`).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from . import _comparison_methods as _k
from ._estimator_registry import Estimator, Redraw, register
from ._stratification import assign_strata
from .propensity import naive_bayes_propensity
from .sampling import intervene


class AOA(Estimator):
    """Average-Over-All: each user's mean gain."""

    name, family, label, function = "aoa", "log", "AOA (log)", "estimators"

    def terms(self, gain, users, p, n_relevant, n_users):
        return pd.Series(gain).groupby(users).mean().rename_axis("user")

    def compare(self, s, o, d: Redraw):
        return [_k.weighted_metrics(s, d.u, d.i)]


class IPS(Estimator):
    """IPS: each user's sum of gain / P over the true number of relevant items."""

    name, family, label, function = "ips", "reweighting", "IPS (true P)", "estimators"
    propensity, needs_n_relevant = "absolute", True

    def terms(self, gain, users, p, n_relevant, n_users):
        sums = np.bincount(users, weights=gain / p, minlength=n_users)
        keep = np.flatnonzero(n_relevant >= 1)  # users with relevant items, none observed: 0
        return pd.Series(sums[keep] / n_relevant[keep], index=pd.Index(keep, name="user"))

    def compare(self, s, o, d: Redraw):
        return [_k.weighted_metrics(s, d.u, d.i, 1.0 / s.propensity[d.u, d.i], ips=True)]


class SNIPS(Estimator):
    """SNIPS: each user's 1/P-weighted mean gain; compared with several propensity models."""

    name, family, function = "snips", "reweighting", "estimators"
    propensity = "relative"

    def terms(self, gain, users, p, n_relevant, n_users):
        w = pd.DataFrame({"num": gain / p, "den": 1.0 / p}).groupby(users).sum()
        return (w["num"] / w["den"]).rename_axis("user")

    def methods(self, o):
        return ["SNIPS (true P)", *[f"SNIPS (pop, γ={g:g})" for g in o.gammas],
                f"SNIPS (pop, γ={o.clip_gamma:g}, clipped)", "SNIPS (NB)", "SNIPS (NB, clipped)"]

    def compare(self, s, o, d: Redraw):
        u, i = d.u, d.i
        out = [_k.snips(s, u, i, s.propensity[u, i])]
        out += [_k.snips(s, u, i, o.pop_p[g][i]) for g in o.gammas]
        out.append(_k.snips(s, u, i, o.pop_p[o.clip_gamma][i], o.clip_quantile))
        nb = naive_bayes_propensity(s.train, d.random, n_users=s.n_users, n_items=s.n_items)
        p_nb = d.test["rating"].iloc[d.relevant].map(nb).to_numpy(float)
        if np.isfinite(p_nb).all() and (p_nb > 0).all():
            return out + [_k.snips(s, u, i, p_nb), _k.snips(s, u, i, p_nb, o.clip_quantile)]
        return out + [np.full((s.z.shape[0], 2), np.nan)] * 2


class Stratified(Estimator):
    """Propensity-stratified evaluation: the authors' bins and quantile bins."""

    name, family, function = "stratified", "stratified", "estimators"

    def methods(self, o):
        return ["stratified (authors' bins)", "stratified (quantile bins)"]

    def compare(self, s, o, d: Redraw):
        u, i = d.u, d.i
        # the authors' strata: pandas.cut bins and shares over all test ratings
        p_all = o.authors_p[d.test["item"].to_numpy()]
        stratum, _ = assign_strata(o.authors_p[i], o.n_strata, binning="cut", reference=p_all)
        all_s, _ = assign_strata(p_all, o.n_strata, binning="cut", reference=p_all)
        authors = _k.stratified_metrics(s, u, i, stratum,
                                        np.bincount(all_s, minlength=o.n_strata) / len(all_s))
        stratum, _ = assign_strata(o.quantile_p[i], o.n_strata, binning="quantile")
        quantile = _k.stratified_metrics(s, u, i, stratum,
                                         np.bincount(stratum, minlength=o.n_strata) / len(stratum))
        return [authors, quantile]


class Intervened(Estimator):
    """The plain average on an intervened subset of the test log (Carraro & Bridge)."""

    name, family, function = "intervene", "intervened", "sampling"
    strategies = ("reg", "skew", "wtd", "wtd_h")

    def methods(self, o):
        return [f"{st.upper()} ρ={r:g}" for r in o.sizes for st in self.strategies]

    def compare(self, s, o, d: Redraw):
        out = []
        for size in o.sizes:
            for strategy in self.strategies:
                part = intervene(d.test, strategy=strategy, size=size, train=s.train,
                                 mar=d.random, item_power=o.item_power, seed=d.int_rng)
                keep = part["rating"].to_numpy() >= s.threshold
                out.append(_k.weighted_metrics(s, part["user"].to_numpy()[keep],
                                               part["item"].to_numpy()[keep]))
        return out


class URE(Estimator):
    """URE (Wang et al., 2025): the plain average on the random sample (recall only)."""

    name, family, label, function = "ure_recall", "random sample", "URE (random)", "estimators"

    def compare(self, s, o, d: Redraw):
        rel = d.random["rating"].to_numpy() >= s.threshold
        ure = _k.weighted_metrics(s, d.random["user"].to_numpy()[rel],
                                  d.random["item"].to_numpy()[rel])
        ure[:, 1] = np.nan  # URE estimates recall only
        return [ure]


class RecallAtKbar(Estimator):
    """Recall@K̄ on the random sample: each user's random items ranked among themselves."""

    name, family, label, function = ("recall_at_kbar", "random sample", "Recall@K̄ (random)",
                                     "estimators")

    def compare(self, s, o, d: Redraw):
        rel = d.random["rating"].to_numpy() >= s.threshold
        recall = _k.kbar_recall(s, d.random["user"].to_numpy(), d.random["item"].to_numpy(),
                                rel, o.k_bar)
        return [np.column_stack([recall, np.full(s.z.shape[0], np.nan)])]


for _cls in (AOA, IPS, SNIPS, Stratified, Intervened, URE, RecallAtKbar):
    register(_cls())
