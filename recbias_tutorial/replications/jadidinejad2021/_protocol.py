"""Private engine of :mod:`recbias_tutorial.replications.jadidinejad2021`: the authors' protocol.

Everything here mirrors terrierteam/stratified_recsys_eval (``eval_methods/
stratified_evaluation.py``, ``experiment/result.py``, ``utils.get_models``, ``train/*.py``)
run with Cornac 1.x (2020), and the course's own protocol, so that the two differ only in
the choices listed in :data:`CHOICES`. The public functions (with docstrings, validation and
examples) are re-exported by :mod:`recbias_tutorial.replications.jadidinejad2021`; the test
sets prepared once (:class:`PreparedSet`, :class:`Strata`) are in
:mod:`._testsets`.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from ..._ranking import dcg_gain, exclude_matrix, ideal_dcg, mean_ndcg, positions, relevant
from ...data import drop_seen
from ...estimators import assign_strata
from ..._powerlaw import fit_powerlaw
from ...models._ncf import NCF_BACKENDS as _NCF_BACKENDS
from ...propensity import fit_popularity_exponent, popularity_propensity
from ._testsets import PreparedSet, _CornacWeighted, _sums, truth_values

#: One protocol = one value for each choice. The authors' values come first:
#: ``cutoff`` nDCG over the whole ranking vs nDCG@10; ``propensity`` a powerlaw.Fit on all
#: closed-loop counts vs n^((gamma+1)/2) of the training split; ``strata`` pd.cut over all
#: test ratings vs quantiles of the relevant rows; ``weights`` shares of all test ratings vs
#: of the relevant rows; ``candidates`` every known item (training ones too) vs training
#: pairs excluded; ``truth`` models fitted on 100% of the log vs the evaluated models;
#: ``zoo`` their families (Cornac defaults) vs models.model_zoo.
CHOICES: dict[str, tuple[Any, Any]] = {
    "cutoff": (None, 10),
    "propensity": ("powerlaw", "course"),
    "strata": ("cut_all", "quantile_relevant"),
    "weights": ("all", "relevant"),
    "candidates": ("all", "unseen"),
    "truth": ("separate", "same"),
    "zoo": ("authors", "course"),
}
AUTHORS = {name: v[0] for name, v in CHOICES.items()}
COURSE = {name: v[1] for name, v in CHOICES.items()}

#: The authors' latent sizes (``dims = range(10, 110, 10)`` in ``train/*.py``).
AUTHORS_SIZES = tuple(range(10, 101, 10))
#: Families of the authors' zoo (``utils.get_models(variant="large")``) Cornac 3 trains here.
AUTHORS_FAMILIES = ("GlobalAvg", "MostPop", "BaselineOnly", "MF", "SVD", "PMF-linear",
                    "PMF-nonlinear", "MMMF", "BPR", "WBPR")
#: Families of their zoo left out of the default zoo: Cornac implements them with TensorFlow /
#: PyTorch.
LEFT_OUT_FAMILIES = ("MLP", "WMF", "GMF", "NeuMF")
#: Of those, the ones the ``neural`` extra (TensorFlow, CPU build) trains: all four, with
#: Cornac's TensorFlow backend, the authors' (Cornac 3's PyTorch backend refuses their
#: ``NeuMF{k}``: it asserts ``layers[-1] == num_factors``, and theirs keep the default layers).
NEURAL_FAMILIES = ("MLP", "WMF", "GMF", "NeuMF")
#: Of those, Cornac's NCF family, which the package also trains without TensorFlow
#: (``ncf_backend="numpy"``, the default: TensorFlow's initial weights, Cornac's batches,
#: Keras's Adam; ``models._ncf_train``). WMF still needs TensorFlow.
NCF_FAMILIES = ("MLP", "GMF", "NeuMF")
#: The trainers of the NCF families: the package's (``"numpy"``) or Cornac's TensorFlow backend.
NCF_BACKENDS = _NCF_BACKENDS


def require_tensorflow(families, ncf_backend: str = "numpy") -> None:
    """A clear ImportError when a family that needs TensorFlow is asked for without it: WMF,
    and the NCF families with ``ncf_backend="tensorflow"``."""
    need = [f for f in NEURAL_FAMILIES if f in set(families)
            and (f not in NCF_FAMILIES or ncf_backend == "tensorflow")]
    if need:
        try:
            import tensorflow  # noqa: F401
        except ImportError:
            raise ImportError("the families " + ", ".join(need) + " need TensorFlow"
                              + (" (with ncf_backend='tensorflow')" if ncf_backend == "tensorflow"
                                 and set(need) & set(NCF_FAMILIES) else "")
                              + ": pip install -e '.[neural]' (CPU build)") from None


def zoo_of(sizes=AUTHORS_SIZES, families=AUTHORS_FAMILIES, ncf_backend: str = "numpy") -> dict:
    """Their models (``utils.get_models``), same hyper-parameters, seed 123 (the neural
    families only if asked for: WMF with Cornac's TensorFlow backend, the authors'; MLP, GMF
    and NeuMF with ``backend=ncf_backend``)."""
    import cornac  # lazy

    require_tensorflow(families, ncf_backend)
    M = cornac.models
    neural = dict(verbose=False, seed=123, backend=ncf_backend)
    zoo = {"GA": M.GlobalAvg(name="GA"), "MPOP": M.MostPop(name="MPOP"),
           # their BaselineOnly(verbose=False) has no seed and draws from numpy's global
           # generator; we seed it (123, like the others) so that runs are reproducible
           "BaselineOnly": M.BaselineOnly(verbose=False, seed=123)}
    if "MLP" in families:
        zoo["MLP"] = M.MLP(name="MLP", **neural)
    # their order: [gavg, mpop, bo, mlp] + mf + svd + pmf + wmf + mmmf + bpr + gmf + neumf
    for k in sizes:
        zoo[f"MF{k}"] = M.MF(name=f"MF{k}", k=k, learning_rate=0.001, early_stop=True,
                             verbose=False, use_bias=False, seed=123)
    for k in sizes:
        zoo[f"SVD{k}"] = M.SVD(name=f"SVD{k}", k=k, learning_rate=0.001, verbose=False, seed=123)
    for k in sizes:
        zoo[f"PMFL{k}"] = M.PMF(name=f"PMFL{k}", k=k, verbose=False, variant="linear", seed=123)
        zoo[f"PMFNL{k}"] = M.PMF(name=f"PMFNL{k}", k=k, verbose=False, variant="non_linear",
                                 seed=123)
    if "WMF" in families:
        for k in sizes:
            zoo[f"WMF{k}"] = M.WMF(name=f"WMF{k}", k=k, verbose=False, seed=123)
    for k in sizes:
        zoo[f"MMMF{k}"] = M.MMMF(name=f"MMMF{k}", k=k, verbose=False, seed=123)
    for k in sizes:
        zoo[f"BPR{k}"] = M.BPR(name=f"BPR{k}", k=k, verbose=False, seed=123)
        zoo[f"WBPR{k}"] = M.WBPR(name=f"WBPR{k}", k=k, verbose=False, seed=123)
    if "GMF" in families:
        for k in sizes:
            zoo[f"GMF{k}"] = M.GMF(name=f"GMF{k}", num_factors=k, **neural)
    if "NeuMF" in families:
        for k in sizes:
            zoo[f"NeuMF{k}"] = M.NeuMF(name=f"NeuMF{k}", num_factors=k, **neural)
    keep = set(families)
    return {name: m for name, m in zoo.items() if family_of(name) in keep}


#: The authors' models without a latent size: name -> family.
UNSIZED = {"GA": "GlobalAvg", "MPOP": "MostPop", "BaselineOnly": "BaselineOnly", "MLP": "MLP"}


def family_of(name: str) -> str:
    """The family of a model of the authors' zoo, from its name (``"PMFNL40"`` ->
    ``"PMF-nonlinear"``, ``"GA"`` -> ``"GlobalAvg"``)."""
    if name in UNSIZED:
        return UNSIZED[name]
    stem = name.rstrip("0123456789")
    return {"PMFL": "PMF-linear", "PMFNL": "PMF-nonlinear"}.get(stem, stem)


def ratio_split(mnar: pd.DataFrame, seed: int, test_size: float = 0.2):
    """``StratifiedEvaluation._split``: a RandomState(seed) permutation, last 20% for test.

    Returns the training rows (in their shuffled order, which fixes Cornac's internal item
    indices), all test rows (which define the strata edges) and the test rows whose user
    and item are known in training (``exclude_unknowns=True``), which are evaluated.
    """
    n = len(mnar)
    n_test = int(test_size * n)  # RatioSplit.validate_size
    perm = np.random.RandomState(seed).permutation(n)
    train = mnar.iloc[perm[: n - n_test]].reset_index(drop=True)
    test_all = mnar.iloc[perm[n - n_test:]].reset_index(drop=True)
    known = (test_all["user"].isin(set(train["user"])) & test_all["item"].isin(set(train["item"])))
    return train, test_all, test_all[known].reset_index(drop=True)


class SplitSet:
    """One seeded split prepared once: rows, propensities and strata of every choice."""

    def __init__(self, data, seed: int, *, n_strata: int, sweep, ks, mar_same: pd.DataFrame,
                 powerlaw_fit: str = "powerlaw2"):
        self.n_items = data.n_items
        self.ks = tuple(ks)
        self.train, test_all, test = ratio_split(data.mnar, seed)
        self.test = test
        thr = data.threshold
        counts_all = np.bincount(data.mnar["item"].to_numpy(np.int64), minlength=data.n_items)
        self.p_powerlaw, self.alpha, self.xmin = fit_powerlaw(counts_all, powerlaw_fit)
        self.gamma = fit_popularity_exponent(self.train, data.n_items)
        self.p_course = popularity_propensity(self.train, data.n_items, gamma=self.gamma)
        props = {"powerlaw": self.p_powerlaw, "course": self.p_course}
        held = PreparedSet(test, thr)
        self.rel, self.codes, self.n_codes, self.counts = held.rel, held.codes, held.n_codes, held.counts
        items_rel = self.rel["item"].to_numpy(np.int64)
        # the truth of the evaluated models: MAR rows not in training, training pairs excluded
        self.mar = relevant(mar_same, thr).reset_index(drop=True)
        self.mar_users, self.mar_codes = np.unique(self.mar["user"].to_numpy(np.int64),
                                                   return_inverse=True)
        # every position comes from the shared kernel: the relevant test rows among all items,
        # and those rows plus the MAR rows among all items minus the training pairs
        self.pairs_all = self.rel[["user", "item"]]
        self.pairs_unseen = pd.concat([self.pairs_all, self.mar[["user", "item"]]],
                                      ignore_index=True)
        self.exclude = exclude_matrix(self.train, (data.n_users, data.n_items))
        # the authors' IPS looks propensities up as props[str(idx)], idx = Cornac's internal
        # index of the item (order of first appearance in the shuffled training rows)
        internal = np.full(data.n_items, -1, dtype=np.int64)
        first = pd.unique(self.train["item"].to_numpy(np.int64))
        internal[first] = np.arange(len(first))
        looked_up = np.zeros(len(items_rel))
        idx = internal[items_rel]
        ok = (idx >= 0) & (idx < data.n_items)
        looked_up[ok] = self.p_powerlaw[idx[ok]]  # raw id str(idx); a missing key reads 0
        hit = looked_up > 0
        ips_w = np.where(hit, 1.0 / np.where(hit, looked_up, 1.0), 1.0)
        self.ips_authors = _CornacWeighted(self.codes, self.n_codes, ips_w)
        self.ips_total_authors = np.bincount(self.codes, weights=np.where(hit, ips_w, 0.0),
                                             minlength=self.n_codes)
        self.w_course = 1.0 / self.p_course[items_rel]
        self.den_course = np.bincount(self.codes, weights=self.w_course, minlength=self.n_codes)
        # strata: for every (propensity, rule, n) the (stratum, user) cells and the shares
        self.strata: dict = {}
        specs = {(pk, rule, n_strata) for pk in props for rule in CHOICES["strata"]}
        specs |= {("powerlaw", "cut_all", n) for n in sweep}
        specs |= {("course", "quantile_relevant", n) for n in sweep}
        for pk, rule, n in sorted(specs):
            p_item = props[pk]
            p_rel = p_item[items_rel]
            if rule == "cut_all":
                p_bins = p_item[test_all["item"].to_numpy(np.int64)]
                stratum, edges = assign_strata(p_rel, n, binning="cut", reference=p_bins)
                side = "left"
            else:
                stratum, edges = assign_strata(p_rel, n, binning="quantile")
                side = "right"
            shares = {}
            for wk, p_w in (("all", p_item[test["item"].to_numpy(np.int64)]), ("relevant", p_rel)):
                s = np.clip(np.searchsorted(edges[1:-1], p_w, side=side), 0, n - 1)
                shares[wk] = np.bincount(s, minlength=n) / len(s)
            self.strata[pk, rule, n] = held.strata(stratum, n, shares)
        self.n_strata = n_strata

    def evaluate(self, scores: np.ndarray) -> tuple[list[tuple], list[tuple]]:
        """Rows (candidates, propensity, strata, weights, n_strata, k, estimator, value) and
        the truth rows (k, value) of the same model."""
        rows: list[tuple] = []
        n_items, n_rel_rows = self.n_items, len(self.rel)
        kks = np.array([n_items if k is None else k for k in self.ks])
        kns = [-1 if k is None else k for k in self.ks]
        z_unseen = positions(scores, self.pairs_unseen, self.exclude, None)
        z_of = {"all": positions(scores, self.pairs_all, None, None),
                "unseen": z_unseen[:n_rel_rows]}
        for cand in CHOICES["candidates"]:
            gain = dcg_gain(z_of[cand], kks)
            dcg = _sums(self.codes, gain, self.n_codes)
            holdout = np.mean(dcg / ideal_dcg(kks[:, None], self.counts[None, :]), axis=1)
            # IPS / SNIPS as the authors' code runs them (wrong key, Cornac 1.x gains)
            v = self.ips_authors.values(z_of[cand], kks)
            tot = self.ips_total_authors
            snips = np.where(tot > 0, v / np.where(tot > 0, tot, 1.0), v)
            ips, snips = np.nanmean(v, axis=1), np.nanmean(snips, axis=1)
            # IPS / SNIPS of the course (holdout_evaluator)
            num = _sums(self.codes, gain * self.w_course[None, :], self.n_codes)
            ips_c, snips_c = np.mean(num / self.counts, axis=1), np.mean(num / self.den_course, axis=1)
            strata = {}
            for spec, cells in self.strata.items():
                values = cells.values(gain, kks)
                strata[spec] = (values, {wk: np.nansum(sh[None, :] * values, axis=1)
                                         for wk, sh in cells.shares.items()})
            for j, kn in enumerate(kns):
                rows += [(cand, "", "", "", 0, kn, "holdout", float(holdout[j])),
                         (cand, "powerlaw", "", "", 0, kn, "ips", float(ips[j])),
                         (cand, "powerlaw", "", "", 0, kn, "snips", float(snips[j])),
                         (cand, "course", "", "", 0, kn, "ips", float(ips_c[j])),
                         (cand, "course", "", "", 0, kn, "snips", float(snips_c[j]))]
                for (pk, rule, n), (values, combined) in strata.items():
                    rows += [(cand, pk, rule, wk, n, kn, "stratified", float(c[j]))
                             for wk, c in combined.items()]
                    if n == self.n_strata:
                        rows += [(cand, pk, rule, "", n, kn, f"Q{s + 1}", float(v))
                                 for s, v in enumerate(values[j])]
        truth: list[tuple] = []
        if len(self.mar):
            z = z_unseen[n_rel_rows:]
            n_mar = len(self.mar_users)
            truth = [(kn, mean_ndcg(self.mar_codes, n_mar, z, int(kk))) for kn, kk in zip(kns, kks)]
        return rows, truth


VALUE_COLUMNS = ["seed", "zoo", "truth", "model", "candidates", "propensity", "strata", "weights",
                 "n_strata", "k", "estimator", "value"]


def unit_values(data, unit, *, sizes, ks, n_strata, sweep, zoos, course_zoo, families,
                powerlaw_fit="powerlaw2", ncf_backend="numpy", progress=False,
                fit_cache=None) -> pd.DataFrame:
    """The rows of one unit of work: ``unit=-1`` the separate truth, else one seed's split.

    ``attrs["seconds"]`` is its wall time. Units are independent, so they can run in any
    order or process; :func:`protocol_values` concatenates them in order.
    """
    import time

    from ...models import iter_scores, model_zoo  # lazy: Cornac

    n_users, n_items, thr = data.n_users, data.n_items, data.threshold
    rows: list[tuple] = []
    start = time.perf_counter()
    if unit == -1:  # open-loop truth: separate models fitted on 100% of the log
        for name, scores in iter_scores(zoo_of(sizes, families, ncf_backend), data.mnar,
                                        n_users=n_users, n_items=n_items, seed=0,
                                        progress=progress, cache=fit_cache):
            rows += [(-1, "authors", "separate", name, "", "", "", "", 0, k, "truth", v)
                     for k, v in truth_values(scores, data.mar, threshold=thr, ks=ks)]
    else:
        seed = unit
        train = ratio_split(data.mnar, seed)[0]
        split = SplitSet(data, seed, n_strata=n_strata, sweep=sweep, ks=ks,
                         mar_same=drop_seen(data.mar, train), powerlaw_fit=powerlaw_fit)
        for zoo in zoos:
            models = (zoo_of(sizes, families, ncf_backend) if zoo == "authors"
                      else model_zoo(seed=seed, **course_zoo))
            for name, scores in iter_scores(models, split.train, n_users=n_users, n_items=n_items,
                                            seed=seed, progress=progress, cache=fit_cache):
                values, truth = split.evaluate(scores)
                rows += [(seed, zoo, "", name, *r) for r in values]
                rows += [(seed, zoo, "same", name, "", "", "", "", 0, k, "truth", v)
                         for k, v in truth]
    out = pd.DataFrame(rows, columns=VALUE_COLUMNS)
    out.attrs["seconds"] = time.perf_counter() - start
    return out


def combine_units(units, parts) -> pd.DataFrame:
    """The units' rows in order, with ``attrs["seconds"]`` per unit ("truth", "seed s")."""
    # the parts end to end (each built by unit_values: the same columns and dtypes); a loop
    # over their rows took 3 s for chapter 4's 4 x 10^5 rows
    out = pd.concat([part[VALUE_COLUMNS] for part in parts], ignore_index=True)
    out.attrs = {"seconds": {("truth" if u == -1 else f"seed {u}"): part.attrs["seconds"]
                             for u, part in zip(units, parts)}}
    return out


def protocol_mask(values: pd.DataFrame, choices: dict, n_strata: int) -> pd.Series:
    """The rows one protocol reads, at every cut-off: its truth, holdout, IPS, SNIPS,
    stratified value and strata ``Q1..Q{n_strata}``."""
    # NumPy's comparisons of the text columns' object arrays: about 3x faster than pandas'
    # (chapter 4 selects protocols dozens of times from frames of 10^5 rows)
    col = {c: values[c].to_numpy(dtype=object) for c in
           ("estimator", "zoo", "truth", "candidates", "propensity", "strata", "weights")}
    est = col["estimator"]
    zoo = col["zoo"] == choices["zoo"]
    truth = (est == "truth") & (col["truth"] == choices["truth"])
    same = (est != "truth") & (col["candidates"] == choices["candidates"])
    prop = col["propensity"] == choices["propensity"]
    strat = (prop & (col["strata"] == choices["strata"])
             & (values["n_strata"].to_numpy() == n_strata))
    strata = np.zeros(len(est), dtype=bool)
    for s in range(n_strata):
        strata |= est == f"Q{s + 1}"
    mask = zoo & (truth | (same & ((est == "holdout") | (((est == "ips") | (est == "snips")) & prop)
                                   | (strat & (((est == "stratified")
                                                & (col["weights"] == choices["weights"]))
                                               | strata)))))
    return pd.Series(mask, index=values.index)


def select(values: pd.DataFrame, choices: dict, n_strata: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    """One protocol's truth (seed, model, value; seed -1 = every seed) and estimates (wide)."""
    k = -1 if choices["cutoff"] is None else int(choices["cutoff"])
    v = values[protocol_mask(values, choices, n_strata) & (values["k"] == k)]
    truth = v.loc[v["estimator"] == "truth", ["seed", "model", "value"]]
    est = v[v["estimator"] != "truth"]
    names = ["holdout", "ips", "snips", "stratified"] + [f"Q{s + 1}" for s in range(n_strata)]
    pieces = {m: est[est["estimator"] == m] for m in names}
    pieces = {m: p for m, p in pieces.items() if not p.empty}
    if truth.empty or "holdout" not in pieces or "stratified" not in pieces:
        return truth, pd.DataFrame()
    wide = pd.concat({m: p.set_index(["seed", "model"])["value"] for m, p in pieces.items()}, axis=1)
    return truth, wide


def taus(values: pd.DataFrame, choices: dict, n_strata: int, *, with_steiger: bool = False):
    """Kendall tau-b of every method against the truth, per seed (and both Steiger tests)."""
    from scipy import stats as sps

    from ...stats import kendall_tau, steiger_test

    truth, wide = select(values, choices, n_strata)
    rows = []
    if wide.empty:
        return pd.DataFrame(rows)
    for seed, part in wide.groupby(level="seed"):
        t = truth[truth["seed"].isin([seed, -1])].set_index("model")["value"]
        part = part.droplevel("seed").join(t.rename("truth"), how="inner")
        for method in [c for c in part.columns if c != "truth"]:
            ok = part[["truth", method, "holdout"]].notna().all(axis=1)
            x, y, z = (part.loc[ok, c].to_numpy(float) for c in ("truth", method, "holdout"))
            n = int(ok.sum())
            if n < 2:  # e.g. a stratum with no relevant test interaction for any model
                raise ValueError(f"n_strata={n_strata}: {method} has a value for {n} model(s) "
                                 f"with seed {seed}, too few for Kendall's tau (a stratum holds "
                                 "no relevant test interaction); use fewer strata")
            row = {"seed": seed, "method": method, "tau": kendall_tau(x, y)[0], "n_models": n}
            if with_steiger and method != "holdout" and n > 3:
                t_xy, t_xz, t_yz = row["tau"], kendall_tau(x, z)[0], kendall_tau(y, z)[0]
                try:  # corrstats.dependent_corr(xy, xz, yz, n) on the taus, one-sided
                    stat, _ = steiger_test(t_xy, t_xz, t_yz, n)
                    row.update(authors_t=float(stat),
                               authors_p=float(1 - sps.t.cdf(abs(stat), n - 3)))
                except ValueError:  # taus that do not form a correlation matrix
                    row.update(authors_t=np.nan, authors_p=np.nan)
                r = np.corrcoef(np.vstack([x, y, z]))
                try:
                    stat, p = steiger_test(r[0, 1], r[0, 2], r[1, 2], n)
                except ValueError:
                    stat, p = np.nan, np.nan
                row.update(pearson_xy=r[0, 1], pearson_xz=r[0, 2], course_t=float(stat),
                           course_p=float(p))
            rows.append(row)
    return pd.DataFrame(rows)
