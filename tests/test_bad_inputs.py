"""Bad inputs to the public functions: each is a ValueError whose message names the argument.

One row per bad input: (label, call, the argument's name as it must appear in the message).
Rows cover the silent wrong answers found in review (a Cornac sparse ``exclude``, fractional
``n_relevant``, boolean cut-offs, duplicate held-out pairs, integer score dtypes, NaN in rank
statistics, ``n=inf`` in Steiger's test, ``base=1`` in KL, infinite bootstrap values, ...)
and the errors that used to come from deep inside (TypeError, IndexError).
"""

from __future__ import annotations

import io
import os
from unittest import mock

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp

import recbias_tutorial as rb
from recbias_tutorial import (comparison, course, distributed, estimators, leaderboard, metrics,
                              propensity, sampling, stats)
from recbias_tutorial.replications import carraro2022, jadidinejad2021, report, wang2025, yang2018
from recbias_tutorial.debiased_mf import calibrate_propensity, fit_mf

S = np.random.default_rng(0).random((3, 12))  # 3 users x 12 items (k=10 is a valid cut-off)
T = pd.DataFrame({"user": [0, 0, 1, 2], "item": [0, 1, 1, 3], "rating": [5.0, 4.0, 5.0, 1.0]})
P = np.linspace(0.1, 0.9, 12)
X = pd.DataFrame({"user": [0], "item": [2]})
DUP = pd.concat([T, T.head(1)], ignore_index=True)
BIG = pd.DataFrame({"user": [0, 10**12], "item": [0, 1], "rating": 5.0})


def _frame(**cols):
    return T.assign(**cols)


CASES = [
    # --- scores
    ("scores 1-D", lambda: rb.aoa(S[0], T), "scores"),
    ("scores NaN", lambda: rb.aoa(np.where(S > 0.8, np.nan, S), T), "scores"),
    ("scores inf", lambda: rb.snips(np.where(S > 0.8, np.inf, S), T, P), "scores"),
    ("scores strings", lambda: rb.aoa(S.astype(str), T), "scores"),
    ("scores complex", lambda: rb.aoa(S.astype(complex), T), "scores"),
    ("scores empty", lambda: rb.aoa(np.empty((0, 12)), T), "scores"),
    # --- test frames
    ("test not a frame", lambda: rb.aoa(S, T.to_numpy()), "test"),
    ("test missing rating", lambda: rb.aoa(S, T[["user", "item"]]), "test"),
    ("test float ids", lambda: rb.aoa(S, _frame(user=T["user"].astype(float))), "test.user"),
    ("test negative ids", lambda: rb.aoa(S, _frame(item=[0, -1, 1, 3])), "test.item"),
    ("test ids too large", lambda: rb.aoa(S, _frame(user=[0, 0, 1, 3])), "test.user"),
    ("test NaN rating", lambda: rb.aoa(S, _frame(rating=[5.0, np.nan, 5.0, 1.0])), "test.rating"),
    ("test duplicates", lambda: rb.aoa(S, DUP), "test"),
    ("test empty", lambda: rb.aoa(S, T.head(0)), "test"),
    ("test no relevant", lambda: rb.aoa(S, _frame(rating=1.0)), "test"),
    ("rank test float ids", lambda: rb.rank_positions(S, _frame(item=[0.0, 1, 1, 3])), "test.item"),
    # --- exclude
    ("exclude Cornac csr", lambda: rb.aoa(S, T, exclude=sp.csr_matrix(np.eye(3, 12))), "exclude"),
    ("exclude coo", lambda: rb.snips(S, T, P, exclude=sp.coo_matrix(np.eye(3, 12))), "exclude"),
    ("exclude csr in ips", lambda: rb.ips(S, T, P, n_relevant=[2, 1, 0],
                                          exclude=sp.csr_matrix(np.eye(3, 12))), "exclude"),
    ("exclude csr in ranks", lambda: rb.rank_positions(S, T, exclude=sp.csr_matrix(S)), "exclude"),
    ("exclude csr in ure", lambda: rb.ure_recall(S, T, k=1, exclude=sp.csr_matrix(S)), "exclude"),
    ("exclude csr in user_values", lambda: estimators.user_values(
        S, T, exclude=sp.csr_matrix(S)), "exclude"),
    ("exclude ndarray", lambda: rb.aoa(S, T, exclude=np.array([[0, 2]])), "exclude"),
    ("exclude ids too large", lambda: rb.aoa(S, T, exclude=X.assign(item=99)), "exclude.item"),
    # --- cut-offs and thresholds
    ("k None", lambda: rb.aoa(S, T, k=None), "k"),
    ("k zero", lambda: rb.aoa(S, T, k=0), "k"),
    ("k too large", lambda: rb.aoa(S, T, k=13), "k"),
    ("k float", lambda: rb.aoa(S, T, k=2.0), "k"),
    ("k bool", lambda: rb.aoa(S, T, k=True), "k"),
    ("k string", lambda: rb.ranking_metrics(S, T, k="10"), "k"),
    ("threshold None", lambda: rb.aoa(S, T, threshold=None), "threshold"),
    ("threshold string", lambda: rb.aoa(S, T, threshold="4"), "threshold"),
    ("threshold NaN", lambda: rb.ranking_metrics(S, T, threshold=np.nan), "threshold"),
    ("metric unknown", lambda: rb.aoa(S, T, metric="ndcg@10"), "metric"),
    ("estimator unknown", lambda: estimators.user_values(S, T, estimator="dr"), "estimator"),
    ("ks bool inside", lambda: metrics.recall_curves(S, T, [True, 2]), "ks"),
    ("ks empty", lambda: metrics.recall_curves(S, T, []), "ks"),
    ("ks floats", lambda: metrics.recall_curves(S, T, [1.5]), "ks"),
    ("k_bars bool inside", lambda: estimators.kbar_curves(S, T, [True, 2]), "k_bars"),
    ("k_bar zero", lambda: rb.recall_at_kbar(S, T, k_bar=0), "k_bar"),
    ("k_bar float", lambda: rb.recall_at_kbar(S, T, k_bar=1.0), "k_bar"),
    ("ure k too large", lambda: rb.ure_recall(S, T, k=99), "k"),
    # --- propensities
    ("propensity wrong length", lambda: rb.snips(S, T, P[:3]), "propensity"),
    ("propensity zero", lambda: rb.snips(S, T, np.zeros(12)), "propensity"),
    ("propensity NaN", lambda: rb.snips(S, T, np.full(12, np.nan)), "propensity"),
    ("propensity 3-D", lambda: rb.snips(S, T, np.ones((1, 3, 12))), "propensity"),
    ("propensity 2-D shape", lambda: rb.snips(S, T, np.ones((2, 12))), "propensity"),
    ("ips propensity above 1", lambda: rb.ips(S, T, P * 20, n_relevant=[2, 1, 0]), "propensity"),
    ("clip bool", lambda: rb.snips(S, T, P, clip=True), "clip"),
    ("clip string", lambda: rb.snips(S, T, P, clip="0.1"), "clip"),
    ("clip inf", lambda: rb.snips(S, T, P, clip=np.inf), "clip"),
    ("clip zero", lambda: rb.snips(S, T, P, clip=0.0), "clip"),
    ("ips clip above 1", lambda: rb.ips(S, T, P, n_relevant=[2, 1, 0], clip=2.0), "clip"),
    ("n_relevant fractional", lambda: rb.ips(S, T, P, n_relevant=[2.5, 1, 0]), "n_relevant"),
    ("n_relevant bool", lambda: rb.ips(S, T, P, n_relevant=[True, True, False]), "n_relevant"),
    ("n_relevant short", lambda: rb.ips(S, T, P, n_relevant=[2, 1]), "n_relevant"),
    ("n_relevant below observed", lambda: rb.ips(S, T, P, n_relevant=[1, 1, 0]), "n_relevant"),
    ("n_relevant missing", lambda: rb.ips(S, T, P, n_relevant=None), "n_relevant"),
    ("gamma bool", lambda: rb.popularity_propensity(T, 4, gamma=True), "gamma"),
    ("gamma below -1", lambda: rb.popularity_propensity(T, 4, gamma=-1.5), "gamma"),
    ("gamma string", lambda: rb.popularity_propensity(T, 4, gamma="2"), "gamma"),
    ("n_items fractional", lambda: propensity.item_counts(T, 8.5), "n_items"),
    ("n_items zero", lambda: rb.popularity_propensity(T, 0, gamma=2.0), "n_items"),
    ("naive bayes bad mar", lambda: rb.naive_bayes_propensity(T, "mar", n_users=3, n_items=4),
     "mar"),
    ("calibrate n_observed", lambda: calibrate_propensity(P, n_observed=0, n_users=3),
     "n_observed"),
    # --- strata
    ("n_strata zero", lambda: rb.stratified(S, T, P, n_strata=0), "n_strata"),
    ("n_strata float", lambda: rb.stratified(S, T, P, n_strata=2.0), "n_strata"),
    ("binning unknown", lambda: rb.stratified(S, T, P, binning="log"), "binning"),
    ("assign_strata empty", lambda: estimators.assign_strata([], 2), "p"),
    # --- bootstrap
    ("confidence 1", lambda: rb.bootstrap_ci(S, T, seed=0, confidence=1.0), "confidence"),
    ("confidence string", lambda: stats.user_bootstrap([0.1, 0.2], seed=0, confidence="0.9"),
     "confidence"),
    ("n_resamples zero", lambda: stats.user_bootstrap([0.1, 0.2], seed=0, n_resamples=0),
     "n_resamples"),
    ("bootstrap inf", lambda: stats.user_bootstrap([0.1, np.inf, 0.3], seed=0), "values"),
    ("bootstrap 3-D", lambda: stats.user_bootstrap(np.zeros((3, 2, 2)), seed=0), "values"),
    ("bootstrap one user", lambda: stats.user_bootstrap([0.1], seed=0), "values"),
    # --- statistics
    ("kendall NaN", lambda: rb.kendall_tau([1.0, np.nan, 3.0], [1.0, 2.0, 3.0]), "x"),
    ("kendall lengths", lambda: rb.kendall_tau([1.0, 2.0], [1.0, 2.0, 3.0]), "length"),
    ("kendall keys", lambda: rb.kendall_tau({"a": 1.0, "b": 2.0}, {"a": 1.0, "c": 2.0}), "keys"),
    ("wilcoxon NaN", lambda: stats.paired_wilcoxon([1.0, 2.0, 3.0], [1.0, np.nan, 2.0]), "y"),
    ("steiger n inf", lambda: rb.steiger_test(0.5, 0.4, 0.3, np.inf), "n"),
    ("steiger n small", lambda: rb.steiger_test(0.5, 0.4, 0.3, 3), "n"),
    ("steiger r above 1", lambda: rb.steiger_test(1.5, 0.4, 0.3, 30), "r_xy"),
    ("kl base 1", lambda: rb.kl_divergence([1, 2], [1, 2], base=1), "base"),
    ("kl base negative", lambda: rb.kl_divergence([1, 2], [1, 2], base=-2), "base"),
    ("kl smoothing negative", lambda: rb.kl_divergence([1, 2], [1, 2], smoothing=-1), "smoothing"),
    ("kl NaN ratings", lambda: rb.kl_divergence([1, np.nan], [1, 2]), "p_ratings"),
    ("agreement no truth", lambda: stats.ranking_agreement(pd.DataFrame({"a": [1.0]}),
                                                           truth="t"), "table"),
    ("reversal missing column", lambda: stats.reversal_pairs(pd.DataFrame({"a": [1.0]}),
                                                             overall="o", strata=["a"]), "table"),
    # --- seeds
    ("seed None", lambda: rb.random_split(T, (0.5, 0.5), seed=None), "seed"),
    ("seed negative", lambda: rb.simulate(5, 20, seed=-1, mean_ratings_per_user=2), "seed"),
    ("seed float", lambda: rb.intervene(T, strategy="reg", size=0.5, seed=1.0), "seed"),
    ("seed string", lambda: rb.bootstrap_ci(S, T, seed="0"), "seed"),
    # --- sampling and splits
    ("strategy unknown", lambda: rb.intervene(T, strategy="random", size=0.5, seed=0), "strategy"),
    ("size zero", lambda: rb.intervene(T, strategy="reg", size=0.0, seed=0), "size"),
    ("size above one", lambda: rb.intervene(T, strategy="reg", size=1.5, seed=0), "size"),
    ("heldout duplicates", lambda: rb.intervene(DUP, strategy="reg", size=0.5, seed=0),
     "heldout"),
    ("skew without train", lambda: rb.intervene(T, strategy="skew", size=0.5, seed=0), "train"),
    ("wtd without mar", lambda: rb.intervene(T, strategy="wtd", size=0.5, train=T, seed=0), "mar"),
    ("item_power negative", lambda: sampling.intervention_weights(
        T, strategy="skew", train=T, item_power=-1.0), "item_power"),
    ("heldout huge ids", lambda: rb.intervene(BIG, strategy="reg", size=0.5, seed=0),
     "heldout.user"),
    ("fractions sum", lambda: rb.random_split(T, (0.5, 0.4), seed=0), "fractions"),
    ("split empty frame", lambda: rb.random_split(T.head(0), (0.5, 0.5), seed=0), "frame"),
    ("drop_seen not a frame", lambda: rb.drop_seen([1, 2], T), "test"),
    # --- simulated worlds and data
    ("n_users zero", lambda: rb.simulate(0, 20, seed=0), "n_users"),
    ("n_items float", lambda: rb.simulate(5, 20.5, seed=0), "n_items"),
    ("mean ratings bool", lambda: rb.simulate(5, 20, seed=0, mean_ratings_per_user=True),
     "mean_ratings_per_user"),
    ("mean ratings too many", lambda: rb.simulate(5, 20, seed=0, mean_ratings_per_user=25),
     "mean_ratings_per_user"),
    ("popularity_bias NaN", lambda: rb.simulate(5, 20, seed=0, mean_ratings_per_user=2,
                                                popularity_bias=np.nan), "popularity_bias"),
    ("n_mar_items too many", lambda: rb.simulate(5, 20, seed=0, mean_ratings_per_user=2,
                                                 n_mar_items=21), "n_mar_items"),
    ("sample_random_exposure zero", lambda: rb.data.sample_random_exposure(T, 0, seed=0),
     "n_items_per_user"),
    ("load list", lambda: rb.load(["coat"]), "name"),
    ("load unknown", lambda: rb.load("netflix"), "name"),
    ("load_or_standin unknown", lambda: rb.load_or_standin("netflix", seed=0), "name"),
    # --- models (the Cornac bridge)
    ("fit_scores dtype int", lambda: rb.fit_scores(rb.models.PosPop(), T, n_users=3, n_items=4,
                                                   seed=0, dtype=np.int32), "dtype"),
    ("fit_scores dtype bool", lambda: rb.fit_scores(rb.models.PosPop(), T, n_users=3, n_items=4,
                                                    seed=0, dtype=bool), "dtype"),
    ("fit_scores dtype str", lambda: rb.fit_scores(rb.models.PosPop(), T, n_users=3, n_items=4,
                                                   seed=0, dtype="U8"), "dtype"),
    ("fit_scores not a model", lambda: rb.fit_scores("MostPop", T, n_users=3, n_items=4, seed=0),
     "model"),
    ("fit_scores n_users", lambda: rb.fit_scores(rb.models.PosPop(), T, n_users=0, n_items=4,
                                                 seed=0), "n_users"),
    ("model_zoo family", lambda: rb.model_zoo(seed=0, families=["GPT"]), "families"),
    ("model_zoo sizes", lambda: rb.model_zoo(seed=0, sizes=[0]), "sizes"),
    ("fit_mf method", lambda: fit_mf(T, n_users=3, n_items=4, seed=0, method="snips"), "method"),
    ("fit_mf lr", lambda: fit_mf(T, n_users=3, n_items=4, seed=0, lr=0.0), "lr"),
    # --- metrics of subsets
    ("subset positions length", lambda: metrics.subset_metrics(np.zeros(2), T, {0: [0]}),
     "positions"),
    ("subset rows out of range", lambda: metrics.subset_metrics(np.zeros(4), T, {0: [7]}),
     "subsets"),
    ("subset positions negative", lambda: metrics.subset_metrics(np.array([0, -1, 2, 3]), T, {0: [0]}),
     "positions"),
    ("subset positions fractional", lambda: metrics.subset_metrics(np.full(4, 0.5), T, {0: [0]}),
     "positions"),
    ("subset positions NaN", lambda: metrics.subset_metrics(np.full(4, np.nan), T, {0: [0]}),
     "positions"),
]


# --- a small world and models for the comparison, replication and data functions
W = rb.simulate(40, 30, seed=0, mean_ratings_per_user=5, n_mar_items=5)
R = np.random.default_rng(1)
MODELS = {name: R.random((40, 30)) for name in ("a", "b", "c")}
TABLE = comparison.compare_methods(W, models=MODELS, seed=0, n_redraws=2, k=3, gammas=(1.0,),
                                   sizes=(0.5,))
TABLE_CSV = pd.read_csv(io.StringIO(TABLE.to_csv(index=False)))
PER_USER = pd.DataFrame({"model": "m", "metric": "recall", "estimator": "AOA",
                         "user": [0, 1, 2], "value": [0.0, 0.5, 1.0]})
SCHEMES = pd.DataFrame({("a", "ure"): [1.0, 0.0], ("b", "ure"): [0.0, 0.0]})
RAND = pd.DataFrame({"user": [0, 0, 1, 1], "item": [1, 2, 0, 1], "rating": [5.0, 1.0, 5.0, 4.0]})
PROTOCOLS = yang2018.snips_protocols(T, T, train=T, n_items=12, gammas={"SNIPS": 2.0})
E = T.head(0)
SC = rb.Scorer(lambda u: S[u], n_users=3, n_items=12)


_AGREE = pd.DataFrame({"model": list("abcabc"), "metric": "recall",
                       "estimator": ["MAR truth"] * 3 + ["AOA"] * 3,
                       "value": [0.1, 0.2, 0.3, 0.2, 0.3, 0.4]})
_PER_USER_Y = pd.DataFrame({"model": "m", "metric": "recall",
                            "estimator": ["MAR truth"] * 2 + ["AOA"] * 2,
                            "user": [0, 1, 0, 1], "value": [1.0, 0.0, 0.5, 0.5]})


def _scorer(fn):
    return rb.Scorer(fn, n_users=3, n_items=12)


MORE_CASES = [
    # --- inputs numpy or pandas used to refuse in their own words
    ("scores ragged lists", lambda: rb.aoa([[0.1, 0.2, 0.3], [0.1, 0.2], [0.3, 0.1, 0.2]],
                                           T.assign(item=T["item"] % 3)), "scores"),
    ("scorer ragged lists", lambda: rb.aoa(rb.Scorer(
        lambda u: [[0.1, 0.2, 0.3], [0.1, 0.2], [0.3, 0.1, 0.2]][: len(u)], n_users=3,
        n_items=3), T.assign(item=T["item"] % 3), k=2), "scorer fn's scores"),
    ("test rating text", lambda: rb.aoa(S, T.assign(rating=["a", "b", "c", "d"])), "test.rating"),
    ("test rating mixed", lambda: rb.aoa(S, T.assign(rating=[5.0, "4", None, "x"])),
     "test.rating"),
    ("steiger shapes", lambda: rb.steiger_test([0.5, 0.6], [0.4, 0.3, 0.2], 0.1, 10), "r_xz"),
    ("steiger n shape", lambda: rb.steiger_test([0.3, 0.4], [0.4, 0.5], [0.5, 0.5],
                                                [100, 100, 100]), "n"),
    ("paired_bootstrap baseline only", lambda: wang2025.paired_bootstrap(
        SCHEMES[["b"]], baseline="b", seed=0), "per_user"),
    ("agreement_table duplicated row", lambda: yang2018.agreement_table(
        pd.concat([_AGREE, _AGREE.head(1)])), "results"),
    ("agreement_table one model", lambda: yang2018.agreement_table(
        _AGREE[_AGREE["model"] == "a"]), "results"),
    ("per_model_mae duplicated row", lambda: yang2018.per_model_mae(
        pd.concat([_PER_USER_Y, _PER_USER_Y.head(1)])), "per_user"),
    # --- the Dask path checks what the in-memory estimators check
    ("dask client string", lambda: distributed.estimate(S, T, client="tcp://x:8786"), "client"),
    ("dask client None", lambda: distributed.estimate(S, T, client=None), "client"),
    ("dask propensity short", lambda: distributed.estimate(S, T, P[:5], client=_FakeClient(),
                                                           estimator="snips"), "propensity"),
    ("dask propensity 2-D rows", lambda: distributed.estimate(
        S, T, np.full((5, 12), 0.5), client=_FakeClient(), estimator="snips"), "propensity"),
    ("dask propensity missing", lambda: distributed.estimate(S, T, client=_FakeClient(),
                                                             estimator="snips"), "propensity"),
    ("dask n_relevant long", lambda: distributed.estimate(
        S, T, P, client=_FakeClient(), estimator="ips", n_relevant=[2, 1, 0, 4]), "n_relevant"),
    ("dask n_relevant short", lambda: distributed.estimate(
        S, T, P, client=_FakeClient(), estimator="ips", n_relevant=[2]), "n_relevant"),
    ("dask users_per_task zero", lambda: distributed.estimate(S, T, client=_FakeClient(),
                                                              users_per_task=0), "users_per_task"),
    ("dask estimator", lambda: distributed.estimate(S, T, client=_FakeClient(), estimator="dr"),
     "estimator"),
    # --- names that become rows or columns are unique
    ("estimate_models duplicate model", lambda: yang2018.estimate_models(
        [("m", S), ("m", S)], PROTOCOLS, exclude=None, seed=0, metrics=["recall"], k=2), "scores"),
    ("estimate_models duplicate metric", lambda: yang2018.estimate_models(
        {"m": S}, PROTOCOLS, exclude=None, seed=0, metrics=["recall", "recall"], k=2), "metrics"),
    ("user_table metrics string", lambda: yang2018.user_table(
        {"m": S}, PROTOCOLS, exclude=None, metrics="recall", k=2), "metrics"),
    ("user_table scores not pairs", lambda: yang2018.user_table(
        [S], PROTOCOLS, exclude=None, metrics=["recall"], k=2), "scores"),
    ("user_table scores empty", lambda: yang2018.user_table(
        {}, PROTOCOLS, exclude=None, metrics=["recall"], k=2), "scores"),
    ("scheme_users duplicate model", lambda: wang2025.scheme_users(
        [("m", S[:2, :3]), ("m", S[:2, :3])], RAND, k=1, k_bar=1, threshold=4.0, exclude=None),
     "scores"),
    ("scheme_table duplicate model", lambda: wang2025.scheme_table(
        [("m", S[:2, :3]), ("m", S[:2, :3])], RAND, k=1, k_bar=1, threshold=4.0, exclude=None,
        seed=0), "scores"),
    ("summarise_schemes duplicate columns", lambda: wang2025.summarise_schemes(
        pd.concat([SCHEMES, SCHEMES], axis=1), seed=0), "per_user"),
    ("paired_bootstrap duplicate columns", lambda: wang2025.paired_bootstrap(
        pd.concat([SCHEMES, SCHEMES], axis=1), baseline="b", seed=0), "per_user"),
    ("paired_bootstrap flat columns", lambda: wang2025.paired_bootstrap(
        pd.DataFrame({"a": [1.0]}), baseline="a", seed=0), "per_user"),
    ("paired_bootstrap baseline", lambda: wang2025.paired_bootstrap(SCHEMES, baseline="z",
                                                                    seed=0), "baseline"),
    ("model_zoo duplicate family", lambda: rb.model_zoo(seed=0, families=["MF", "MF"]),
     "families"),
    ("recall_curves repeated k", lambda: metrics.recall_curves(S, T, [2, 2]), "ks"),
    ("kbar_curves repeated k_bar", lambda: estimators.kbar_curves(S, T, [2, 2]), "k_bars"),
    # --- summaries refuse NaN users and mixed tables
    ("summarise NaN value", lambda: yang2018.summarise(PER_USER.assign(value=[0.0, np.nan, 1.0]),
                                                       seed=0), "per_user.value"),
    ("summarise inf value", lambda: yang2018.summarise(PER_USER.assign(value=[0.0, np.inf, 1.0]),
                                                       seed=0), "per_user.value"),
    ("summarise text value", lambda: yang2018.summarise(PER_USER.assign(value=["a", "b", "c"]),
                                                        seed=0), "per_user.value"),
    ("summarise user twice", lambda: yang2018.summarise(pd.concat([PER_USER, PER_USER]), seed=0),
     "per_user"),
    ("summarise missing column", lambda: yang2018.summarise(PER_USER.drop(columns="value"),
                                                            seed=0), "per_user"),
    ("rank_agreement mixed worlds", lambda: comparison.rank_agreement(pd.concat([TABLE, TABLE])),
     "table"),
    ("rank_agreement after CSV", lambda: comparison.rank_agreement(TABLE_CSV), "table.redraws"),
    ("method_summary mixed worlds", lambda: comparison.method_summary(pd.concat([TABLE, TABLE])),
     "table"),
    ("method_summary after CSV", lambda: comparison.method_summary(TABLE_CSV), "table.redraws"),
    ("rank_agreement empty", lambda: comparison.rank_agreement(TABLE.head(0)), "table"),
    ("rank_agreement text estimate", lambda: comparison.rank_agreement(
        TABLE.assign(true="x")), "table.true"),
    ("rank_agreement not a frame", lambda: comparison.rank_agreement([1, 2]), "table"),
    # --- compare_methods
    ("compare one user", lambda: comparison.compare_methods(
        rb.simulate(1, 30, seed=0, mean_ratings_per_user=5, n_mar_items=5),
        models={"a": R.random((1, 30)), "b": R.random((1, 30))}, seed=0), "world"),
    ("compare tiny world", lambda: comparison.compare_methods(
        rb.simulate(3, 30, seed=0, mean_ratings_per_user=5, n_mar_items=5),
        models={"a": R.random((3, 30)), "b": R.random((3, 30))}, seed=0, k=3), "world"),
    ("compare one model", lambda: comparison.compare_methods(W, models={"a": MODELS["a"]},
                                                             seed=0), "models"),
    ("compare model shape", lambda: comparison.compare_methods(
        W, models={"a": MODELS["a"], "b": S}, seed=0), "models"),
    ("compare model NaN", lambda: comparison.compare_methods(
        W, models={"a": MODELS["a"], "b": np.full((40, 30), np.nan)}, seed=0), "models"),
    ("compare world without truth", lambda: comparison.compare_methods(
        rb.FeedbackData("x", 40, 30, mnar=W.mnar, mar=W.mar), models=MODELS, seed=0), "world"),
    ("compare n_redraws one", lambda: comparison.compare_methods(W, models=MODELS, seed=0,
                                                                 n_redraws=1), "n_redraws"),
    ("compare k too large", lambda: comparison.compare_methods(W, models=MODELS, seed=0, k=31),
     "k"),
    ("compare sizes above one", lambda: comparison.compare_methods(W, models=MODELS, seed=0,
                                                                   sizes=(1.5,)), "sizes"),
    ("compare gammas at -1", lambda: comparison.compare_methods(W, models=MODELS, seed=0,
                                                                gammas=(-1.0,)), "gammas"),
    ("compare seed None", lambda: comparison.compare_methods(W, models=MODELS, seed=None),
     "seed"),
    # --- data
    ("sample_random_exposure float ids", lambda: rb.data.sample_random_exposure(
        T.assign(user=T["user"].astype(float)), 1, seed=0), "full.user"),
    ("sample_random_exposure float users", lambda: rb.data.sample_random_exposure(
        W.full, 2, seed=0, users=[0.5, 1.7]), "users"),
    ("sample_random_exposure not a frame", lambda: rb.data.sample_random_exposure([1, 2], 1,
                                                                                  seed=0), "full"),
    ("sample_random_exposure empty", lambda: rb.data.sample_random_exposure(E, 1, seed=0),
     "full"),
    ("sample_random_exposure too many", lambda: rb.data.sample_random_exposure(T, 3, seed=0),
     "n_items_per_user"),
    ("sample_observed without truth", lambda: rb.data.sample_observed(
        rb.FeedbackData("x", 40, 30, mnar=W.mnar), seed=0), "data"),
    ("sample_observed seed None", lambda: rb.data.sample_observed(W, seed=None), "seed"),
    ("restrict_to_mar_users no mar", lambda: rb.data.restrict_to_mar_users(
        rb.FeedbackData("x", 40, 30, mnar=W.mnar)), "data"),
    ("restrict_to_mar_users too many", lambda: rb.data.restrict_to_mar_users(
        W, n_users=10**6, seed=0), "n_users"),
    ("restrict_to_mar_users not data", lambda: rb.data.restrict_to_mar_users(W.mnar), "data"),
    ("FeedbackData ids outside", lambda: rb.FeedbackData("x", 2, 30, mnar=W.mnar), "mnar.user"),
    ("FeedbackData float ids", lambda: rb.FeedbackData(
        "x", 40, 30, mnar=W.mnar.assign(item=W.mnar["item"].astype(float))), "mnar.item"),
    ("FeedbackData duplicate mar", lambda: rb.FeedbackData(
        "x", 40, 30, mnar=W.mnar, mar=pd.concat([W.mar, W.mar])), "mar"),
    ("FeedbackData propensity shape", lambda: rb.FeedbackData(
        "x", 40, 30, mnar=W.mnar, propensity=np.ones((3, 3))), "propensity"),
    ("FeedbackData n_users zero", lambda: rb.FeedbackData("x", 0, 30, mnar=E), "n_users"),
    ("FeedbackData threshold NaN", lambda: rb.FeedbackData("x", 40, 30, mnar=W.mnar,
                                                           threshold=np.nan), "threshold"),
    ("FeedbackData mnar not a frame", lambda: rb.FeedbackData("x", 40, 30, mnar=[1]), "mnar"),
    ("semi_synthetic not data", lambda: rb.semi_synthetic(W.mnar, seed=0), "data"),
    ("semi_synthetic n_iter zero", lambda: rb.semi_synthetic(W, seed=0, n_iter=0), "n_iter"),
    ("drop_seen train not a frame", lambda: rb.drop_seen(T, "train"), "train"),
    ("random_split fractions negative", lambda: rb.random_split(T, (1.5, -0.5), seed=0),
     "fractions"),
    # --- memory: refused up front with the size needed
    ("simulate 10^12 pairs", lambda: rb.simulate(10**6, 10**6, seed=0), "n_users x n_items"),
    ("semi_synthetic 10^6 x 10^4", lambda: rb.semi_synthetic(rb.FeedbackData(
        "x", 10**6, 10**4, mnar=T, mar=T), seed=0), "n_users x n_items"),
    ("fit_scores 10^12 scores", lambda: rb.fit_scores(rb.models.PosPop(), T, n_users=10**6,
                                                      n_items=10**6, seed=0),
     "n_users x n_items"),
    ("score_models 10^12 scores", lambda: rb.models.score_models(
        {"p": rb.models.PosPop()}, T, n_users=10**6, n_items=10**6, seed=0, progress=False),
     "n_users x n_items"),
    # --- ids beyond 2^32 (no int64 overflow in the duplicate check)
    ("test ids above 2^32", lambda: rb.aoa(S, _frame(user=[0, 0, 1, 2**33])), "test.user"),
    ("heldout items above 2^32", lambda: rb.intervene(
        T.assign(item=[0, 1, 1, 2**33]), strategy="reg", size=0.5, seed=0), "heldout.item"),
    # --- statistics
    ("kl infinite p", lambda: rb.kl_divergence([1, np.inf], [1, 2]), "p_ratings"),
    ("kl infinite q", lambda: rb.kl_divergence([1, 2], [1, -np.inf]), "q_ratings"),
    ("kl text ratings", lambda: rb.kl_divergence(["a", "b"], [1, 2]), "p_ratings"),
    ("kl complex ratings", lambda: rb.kl_divergence([1 + 1j], [1, 2]), "p_ratings"),
    ("kl infinite support", lambda: rb.kl_divergence([1, 2], [1, 2], support=[1, np.inf]),
     "support"),
    ("kl empty support", lambda: rb.kl_divergence([1, 2], [1, 2], support=[]), "support"),
    ("rating_distribution inf", lambda: stats.rating_distribution([1.0, np.inf]), "ratings"),
    ("kendall 2-D", lambda: rb.kendall_tau(np.ones((2, 2)), np.ones((2, 2))), "x"),
    ("kendall one pair", lambda: rb.kendall_tau([1.0], [2.0]), "x"),
    ("kendall inf", lambda: rb.kendall_tau([1.0, np.inf, 2.0], [1.0, 2.0, 3.0]), "x"),
    ("steiger NaN", lambda: rb.steiger_test(np.nan, 0.4, 0.3, 30), "r_xy"),
    ("wilcoxon lengths", lambda: stats.paired_wilcoxon([1.0, 2.0], [1.0, 2.0, 3.0]), "length"),
    ("user_bootstrap text", lambda: stats.user_bootstrap(["a", "b"], seed=0), "values"),
    # --- scorer
    ("scorer complex scores", lambda: rb.aoa(_scorer(lambda u: S[u].astype(complex)), T),
     "scores"),
    ("scorer boolean scores", lambda: rb.aoa(_scorer(lambda u: S[u] > 0.5), T), "scores"),
    ("scorer text scores", lambda: rb.aoa(_scorer(lambda u: S[u].astype(str)), T), "scores"),
    ("scorer wrong shape", lambda: rb.aoa(_scorer(lambda u: S[u, :5]), T), "shape"),
    ("scorer NaN scores", lambda: rb.aoa(_scorer(lambda u: np.full((len(u), 12), np.nan)), T),
     "scores"),
    ("scorer not callable", lambda: rb.Scorer(S, n_users=3, n_items=12), "fn"),
    ("scorer n_users float", lambda: rb.Scorer(lambda u: S[u], n_users=3.0, n_items=12),
     "n_users"),
    ("scorer factors mismatch", lambda: rb.Scorer.from_factors(np.ones((3, 2)), np.ones((4, 3))),
     "item_factors"),
    ("scorer bias length", lambda: rb.Scorer.from_factors(np.ones((3, 2)), np.ones((4, 2)),
                                                          item_bias=[1.0]), "item_bias"),
    ("scorer test outside", lambda: rb.aoa(SC, _frame(user=[0, 0, 1, 5])), "test.user"),
    # --- the Jadidinejad replication
    ("kendall_taus cutoff zero", lambda: jadidinejad2021.kendall_taus(W, seed=0, cutoff=0,
                                                                      sizes=(2,)), "cutoff"),
    ("kendall_taus all-zero ratings", lambda: jadidinejad2021.kendall_taus(
        rb.FeedbackData("z", 40, 30, mnar=W.mnar.assign(rating=0.0), mar=W.mar.assign(rating=0.0)),
        seed=0, sizes=(2,)), "rating"),
    ("kendall_taus too many strata", lambda: jadidinejad2021.kendall_taus(
        W, seed=0, n_strata=50, sizes=(2,)), "n_strata"),
    ("kendall_taus protocol", lambda: jadidinejad2021.kendall_taus(W, seed=0, protocol="paper"),
     "protocol"),
    ("kendall_taus no mar", lambda: jadidinejad2021.kendall_taus(
        rb.FeedbackData("x", 40, 30, mnar=W.mnar), seed=0), "data"),
    ("powerlaw counts one value", lambda: jadidinejad2021.powerlaw_propensity([3, 3, 3]),
     "counts"),
    ("powerlaw counts negative", lambda: jadidinejad2021.powerlaw_propensity([3, -1, 2]),
     "counts"),
    ("powerlaw fit unknown", lambda: jadidinejad2021.powerlaw_propensity([3, 1, 2, 5], fit="2.0"),
     "fit"),
    ("protocol_values powerlaw_fit unknown", lambda: jadidinejad2021.protocol_values(
        W, seeds=[0], powerlaw_fit="powerlaw3"), "powerlaw_fit"),
    ("protocol_taus missing columns", lambda: jadidinejad2021.protocol_taus(PER_USER), "values"),
    ("zoo_sensitivity missing columns", lambda: jadidinejad2021.zoo_sensitivity(PER_USER),
     "values"),
    ("authors_split not a frame", lambda: jadidinejad2021.authors_split([1], seed=0), "mnar"),
    ("authors_zoo ncf_backend unknown", lambda: jadidinejad2021.authors_zoo(
        families=["GMF"], ncf_backend="pytorch"), "ncf_backend"),
    ("protocol_values ncf_backend unknown", lambda: jadidinejad2021.protocol_values(
        W, seeds=[0], families=["GMF"], ncf_backend="keras"), "ncf_backend"),
    ("trainer_comparison dataset unknown", lambda: jadidinejad2021.trainer_comparison(
        "movielens_100k"), "dataset"),
    ("neural_costs dataset unknown", lambda: jadidinejad2021.neural_costs("nope"), "dataset"),
    ("ncf_seed_spread not data", lambda: jadidinejad2021.ncf_seed_spread(PER_USER), "data"),
    ("ncf_seed_spread repeated seeds", lambda: jadidinejad2021.ncf_seed_spread(
        W, seeds=[1, 1]), "seeds"),
    ("ncf_seed_spread family not NCF", lambda: jadidinejad2021.ncf_seed_spread(
        W, families=["WMF"]), "families"),
    ("ncf_seed_spread no sizes", lambda: jadidinejad2021.ncf_seed_spread(W, sizes=[]), "sizes"),
    ("ncf_seed_spread cut-off zero", lambda: jadidinejad2021.ncf_seed_spread(W, ks=[0]), "ks"),
    ("rank_relevant k zero", lambda: jadidinejad2021.rank_relevant(S, T, k=0), "k"),
    # --- the Carraro & Bridge replication
    ("kl_by_seed repeated seeds", lambda: carraro2022.kl_by_seed(W, seeds=[1, 1]), "seeds"),
    ("table2_kl no seeds", lambda: carraro2022.table2_kl(W, seeds=[]), "seeds"),
    ("split_feedback fractions", lambda: carraro2022.split_feedback(
        W, seed=0, mnar_fractions=(0.5, 0.4)), "mnar_fractions"),
    ("posterior_check no mar", lambda: carraro2022.posterior_check(
        rb.FeedbackData("x", 40, 30, mnar=W.mnar)), "data"),
    ("weight_noise no seeds", lambda: carraro2022.weight_noise(W, seeds=[]), "seeds"),
    # --- the Yang replication
    ("snips_protocols gammas empty", lambda: yang2018.snips_protocols(
        T, T, train=T, n_items=12, gammas={}), "gammas"),
    ("snips_protocols gamma below -1", lambda: yang2018.snips_protocols(
        T, T, train=T, n_items=12, gammas={"S": -1.5}), "gamma"),
    ("same_users threshold", lambda: yang2018.same_users(T, T, threshold="4"), "threshold"),
    ("agreement_table missing truth", lambda: yang2018.agreement_table(
        PER_USER.assign(low=0.0, high=1.0, users=3)), "truth"),
    ("course_models threshold text", lambda: yang2018.course_models(threshold="4"), "threshold"),
    ("course_models threshold NaN", lambda: yang2018.course_models(threshold=np.nan), "threshold"),
    # --- the Yang replication: the slides' reading, its grid and the search
    ("Reading truth unknown", lambda: yang2018.Reading("x", truth="all"), "truth"),
    ("Reading k_truth zero", lambda: yang2018.Reading("x", k_truth=0), "k_truth"),
    ("Reading n_negatives full", lambda: yang2018.Reading("x", estimate="full", n_negatives=200),
     "n_negatives"),
    ("reading_grid ks empty", lambda: yang2018.reading_grid([]), "ks"),
    ("reading_grid ks twice", lambda: yang2018.reading_grid([10, 10]), "ks"),
    ("reading_grid ks bool", lambda: yang2018.reading_grid([True]), "ks"),
    ("grid_table not a frame", lambda: yang2018.grid_table([1]), "rows"),
    ("grid_table no grid rows", lambda: yang2018.grid_table(pd.DataFrame(
        {c: [] for c in ("seed", "model", "reading", "draw", "metric", "estimator", "quantity",
                         "value")})), "rows"),
    ("grid_search missing column", lambda: yang2018.grid_search(T), "grid"),
    ("grid_search cut zero", lambda: yang2018.grid_search(T, cut=0.0), "cut"),
    ("grid_family missing column", lambda: yang2018.grid_family(T), "search"),
    ("direction_test missing column", lambda: yang2018.direction_test(T), "table"),
    ("authors_split_table grid_models", lambda: yang2018.authors_split_table(
        {"m": rb.models.PosPop()}, rb.simulate(20, 10, seed=0, mean_ratings_per_user=3), seed=0,
        grid_models=["other"]), "grid_models"),
    ("authors_split_table grid_models text", lambda: yang2018.authors_split_table(
        {"m": rb.models.PosPop()}, rb.simulate(20, 10, seed=0, mean_ratings_per_user=3), seed=0,
        grid_models="m"), "grid_models"),
    ("authors_split_table grid not readings", lambda: yang2018.authors_split_table(
        {"m": rb.models.PosPop()}, rb.simulate(20, 10, seed=0, mean_ratings_per_user=3), seed=0,
        grid=["grid: sampled / full"], grid_models=["m"]), "grid"),
    ("Reading name empty", lambda: yang2018.Reading(" "), "name"),
    ("Reading n_negatives negative", lambda: yang2018.Reading("x", n_negatives=-1), "n_negatives"),
    ("grid_name not a Reading", lambda: yang2018.grid_name("slides' reading"), "reading"),
    ("grid_table grid not readings", lambda: yang2018.grid_table(Y_GRID_ROWS, grid=["x"]), "grid"),
    ("grid_table grid text", lambda: yang2018.grid_table(Y_GRID_ROWS, grid="x"), "grid"),
    ("grid_search level negative", lambda: yang2018.grid_search(T, level=-0.1), "level"),
    ("grid_search paper not a frame", lambda: yang2018.grid_search(Y_GRID, paper=[0.4]), "paper"),
    ("grid_search paper lacks a model", lambda: yang2018.grid_search(
        Y_GRID, paper=yang2018.PAPER_MAE_RECALL.drop(index="PMF")), "paper"),
    ("grid_family not a frame", lambda: yang2018.grid_family([1]), "search"),
    ("grid_rows missing column", lambda: yang2018.grid_rows(T, yang2018.SLIDES), "table"),
    ("grid_rows not a Reading", lambda: yang2018.grid_rows(Y_GRID, "slides' reading"), "reading"),
    ("grid_rows n_negatives", lambda: yang2018.grid_rows(Y_GRID, yang2018.SLIDES_NEGATIVES[-1]),
     "n_negatives"),
    ("grid_rows reading absent", lambda: yang2018.grid_rows(Y_GRID, yang2018.AUTHORS), "reading"),
    ("direction_test readings empty", lambda: yang2018.direction_test(Y_DIR, readings=[]),
     "readings"),
    ("direction_test reading absent", lambda: yang2018.direction_test(Y_DIR, readings=["x"]),
     "readings"),
    ("direction_test metric", lambda: yang2018.direction_test(Y_DIR, readings=["r"],
                                                              metric="ndcg"), "metric"),
    # --- Wang
    ("paper_random_split share", lambda: wang2025.paper_random_split(RAND, seed=0,
                                                                     test_share=1.0), "test_share"),
    ("scheme_users k_bar zero", lambda: wang2025.scheme_users({"m": S[:2, :3]}, RAND, k=1,
                                                              k_bar=0, threshold=4.0,
                                                              exclude=None), "k_bar"),
    ("course_trainers n_users zero", lambda: wang2025.course_trainers(T, n_users=0, n_items=12),
     "n_users"),
    ("course_trainers empty train", lambda: wang2025.course_trainers(E, n_users=3, n_items=12),
     "train"),
    ("course_trainers item outside", lambda: wang2025.course_trainers(T, n_users=3, n_items=2),
     "train"),
    ("course_trainers regularisation", lambda: wang2025.course_trainers(
        T, n_users=3, n_items=12, regularisation="none"), "regularisation"),
    ("autodebias_split generator seed", lambda: wang2025.autodebias_split(
        RAND, seed=np.random.default_rng(0)), "seed"),
    ("autodebias_split shares sum", lambda: wang2025.autodebias_split(
        RAND, seed=0, uniform_share=0.5, validation_share=0.5), "uniform_share"),
    ("signed_labels threshold", lambda: wang2025.signed_labels(RAND, threshold="4"), "threshold"),
    ("fit_autodebias method", lambda: wang2025.fit_autodebias(
        "DNS", T, uniform=T, validation=T, n_users=3, n_items=12, threshold=4.0, seed=0), "method"),
    ("fit_autodebias epochs", lambda: wang2025.fit_autodebias(
        "MF", T, uniform=T, validation=T, n_users=3, n_items=12, threshold=4.0, seed=0,
        epochs=0), "epochs"),
    ("convention_ladder train", lambda: wang2025.convention_ladder(
        {"m": S[:2, :3]}, RAND, train=None, threshold=4.0), "train"),
    ("ordering_over_seeds one model", lambda: wang2025.ordering_over_seeds(
        pd.DataFrame({"a": [1.0, 2.0]})), "values"),
    # --- propensities
    ("popularity_propensity empty train", lambda: rb.popularity_propensity(E, 12, gamma=2.0),
     "train"),
    ("popularity_propensity gamma NaN", lambda: rb.popularity_propensity(T, 12, gamma=np.nan),
     "gamma"),
    ("naive_bayes empty mar", lambda: rb.naive_bayes_propensity(T, E, n_users=3, n_items=12),
     "mar"),
    ("fit_popularity_exponent n_min", lambda: propensity.fit_popularity_exponent(T, 12, n_min=0),
     "n_min"),
    ("selection_exponent threshold", lambda: propensity.selection_exponent(
        T, T, train=T, n_items=12, threshold=np.inf), "threshold"),
    # --- debiased MF
    ("fit_mf propensity missing", lambda: fit_mf(T, n_users=3, n_items=12, seed=0, method="ips"),
     "propensity"),
    ("fit_mf factors zero", lambda: fit_mf(T, n_users=3, n_items=12, seed=0, factors=0),
     "factors"),
    ("calibrate NaN", lambda: calibrate_propensity(np.full(12, np.nan), n_observed=3, n_users=3),
     "propensity"),
    # --- found by sweeping generic bad values over the public functions
    ("ure k None", lambda: rb.ure_recall(S, T, k=None), "k"),
    ("ranking_metrics k None", lambda: rb.ranking_metrics(S, T, k=None), "k"),
    ("naive_bayes n_users None", lambda: rb.naive_bayes_propensity(T, T, n_users=None,
                                                                   n_items=12), "n_users"),
    ("naive_bayes n_items text", lambda: rb.naive_bayes_propensity(T, T, n_users=3,
                                                                   n_items="12"), "n_items"),
    ("kendall objects", lambda: rb.kendall_tau([object(), 1.0], [1.0, 2.0]), "x"),
    ("kendall keyed text", lambda: rb.kendall_tau({"a": "x", "b": 1.0}, {"a": 1.0, "b": 2.0}),
     "x"),
    ("wilcoxon objects", lambda: stats.paired_wilcoxon([1.0, 2.0], [object(), 1.0]), "y"),
    ("steiger dict", lambda: rb.steiger_test({"r": 0.5}, 0.4, 0.3, 30), "r_xy"),
    ("steiger n text", lambda: rb.steiger_test(0.5, 0.4, 0.3, "30"), "n"),
    ("agreement truth list", lambda: stats.ranking_agreement(pd.DataFrame({"t": [1.0, 2.0]}),
                                                             truth=["t"]), "truth"),
    ("reversal strata None", lambda: stats.reversal_pairs(pd.DataFrame({"o": [1.0]}),
                                                          overall="o", strata=None), "strata"),
    ("reversal overall dict", lambda: stats.reversal_pairs(pd.DataFrame({"o": [1.0]}),
                                                           overall={}, strata=["o"]), "overall"),
    ("sample_observed not data", lambda: rb.data.sample_observed("world", seed=0), "data"),
    # --- course plumbing
    ("course.table not a frame", lambda: course.table([1, 2]), "frame"),
    ("course.table digits", lambda: course.table(T, digits=-1), "digits"),
    ("glue_values not a mapping", lambda: course.glue_values("x", [1]), "values"),
    ("glue NaN", lambda: course.glue("x_nan", float("nan")), "value of 'x_nan'"),
    ("glue numpy inf", lambda: course.glue("x_inf", np.float64(np.inf)), "finite"),
    ("glue an array", lambda: course.glue("x_arr", np.arange(3)), "value of 'x_arr'"),
    ("glue a list", lambda: course.glue("x_list", [0.5]), "number or a string"),
    ("glue_values NaN", lambda: course.glue_values("x", {"gap": np.nan}), "value of 'x_gap'"),
]


# --- issue 45: what the replications added (findings' verdicts, stored results, readings,
# trainers) tried as a careless user would; the findings, the stored results and the grading
# have their own tables (tests/test_findings.py, tests/test_stored_results.py,
# tests/test_homework.py)
YW = rb.simulate(40, 30, seed=0, mean_ratings_per_user=5, n_mar_items=5)
Y_TRAIN, Y_VAL, Y_TRUTH = yang2018.authors_split(YW, seed=0)
Y_S = np.random.default_rng(1).random((40, 30))
Y_ALL = np.ones((40, 30), bool)
Y_COUNTS = np.bincount(Y_TRAIN["item"], minlength=30)
_TERMS = pd.MultiIndex.from_tuples([("recall", "AOA")], names=["metric", "estimator"])
Y_EST = pd.DataFrame([[1.0], [0.0]], index=[0, 1], columns=_TERMS)
Y_TRU = pd.DataFrame([[0.0], [0.5]], index=[1, 2], columns=_TERMS)
Y_GRID_ROWS = pd.DataFrame({"seed": 0, "model": "m", "reading": [yang2018.reading_grid()[0].name],
                            "draw": 0, "metric": "recall", "estimator": "AOA",
                            "quantity": "mae", "value": 0.1})
Y_GRID = pd.DataFrame([{"seed": 0, "metric": "recall", "estimate": "sampled", "truth": "full",
                        "k": 10, "k_truth": 10, "users": "own", "mae": "aggregate", "draws": 5,
                        "model": "PMF (authors)", "AOA estimate": 0.42, "AOA truth": 0.04,
                        "MAE: AOA": 0.38, "MAE: SNIPS γ=2.0": 0.27}])
Y_DIR = pd.DataFrame({"seed": [0, 0], "model": "m", "reading": "r", "draw": 0, "metric": "recall",
                      "estimator": "AOA", "quantity": ["estimate", "truth"], "value": [0.4, 0.1]})
Y_RUNS = pd.DataFrame({"seed": [0, 1], "model": "m", "reading": "r", "draw": 0,
                       "metric": "recall", "estimator": "AOA", "quantity": "mae", "users": 5,
                       "value": [0.1, 0.3]})
Y_SUMMARY = yang2018.mae_summary(pd.concat([Y_RUNS, Y_RUNS.assign(estimator="SNIPS γ=2.0",
                                                                  value=[0.05, 0.1])]),
                                 reading="r")
Y_PER_USER = pd.DataFrame({"model": "m", "metric": "recall",
                           "estimator": ["MAR truth"] * 2 + ["AOA"] * 2,
                           "user": [0, 1, 0, 1], "value": [1.0, 0.0, 0.5, 0.5]})
W_LOG = pd.DataFrame({"user": np.repeat(np.arange(20), 5), "item": np.tile(np.arange(5), 20),
                      "rating": np.random.default_rng(0).choice([1.0, 5.0], 100)})
W_FIT = dict(uniform=W_LOG, validation=W_LOG, n_users=20, n_items=5, threshold=4.0, seed=0,
             epochs=3, patience=2, block=(8, 5))
W_SCHEMES = pd.DataFrame({("a", "ure"): [1.0, 0.0], ("b", "ure"): [0.0, 0.0]})
C_METRICS = pd.DataFrame({"seed": np.repeat([0, 1], 6), "metric": "recall", "size": 1.0,
                          "model": ["a", "b", "c"] * 4,
                          "strategy": (["gt"] * 3 + ["full"] * 3) * 2,
                          "value": [0.1, 0.2, 0.3, 0.2, 0.1, 0.3, 0.1, 0.2, 0.3, 0.1, 0.2, 0.3]})
C_TWICE = pd.concat([C_METRICS, C_METRICS.head(1).assign(value=0.9)], ignore_index=True)
_SMALL = pd.DataFrame({"user": [0, 0, 1, 2], "item": [0, 1, 1, 2], "rating": [5.0, 3, 4, 2]})


C_DIFF = carraro2022.difference_from_truth(C_METRICS)


def _jad_frame():
    """Tidy estimator values of five models (holdout_evaluator on random scores)."""
    evaluate = jadidinejad2021.holdout_evaluator(holdout=T, propensity=P, n_items=12, truth=T,
                                                 ks=2)
    rng = np.random.default_rng(0)
    return pd.concat([evaluate(rng.random((3, 12))).assign(model=f"m{i}") for i in range(5)],
                     ignore_index=True)


def _stored_zoo():
    return course.stored_results("jadidinejad2021")[0]["coat"]


def _fitted(cls, **kwargs):
    model = cls(**kwargs)
    model.fit(rb.models.to_cornac_dataset(_SMALL, n_users=3, n_items=3, seed=0))
    return model


def _reading_args(**kw):
    return {"n_items": 30, "threshold": 4.0, "readings": [yang2018.AUTHORS], "gammas": {},
            "n_negatives": 3, "draws": [0], "seed": 0, **kw}


def _readings(scores=None, train=None, val=None, truth=None, **kw):
    return yang2018.evaluate_readings(
        Y_S if scores is None else scores, Y_TRAIN if train is None else train,
        Y_VAL if val is None else val, Y_TRUTH if truth is None else truth, **_reading_args(**kw))


def _terms(scores=None, candidates=None, positives=None, counts=None, **kw):
    return yang2018.user_terms(Y_S if scores is None else scores,
                               Y_ALL if candidates is None else candidates,
                               Y_VAL if positives is None else positives,
                               Y_COUNTS if counts is None else counts,
                               **{"k": 1, "gammas": {"AOA": -1.0}, **kw})


def _candidates(train=None, val=None, **kw):
    return yang2018.sampled_candidates(Y_TRAIN if train is None else train,
                                       Y_VAL if val is None else val,
                                       **{"n_users": 40, "n_items": 30, "n_negatives": 3,
                                          "seed": 0, **kw})


REPLICATION_CASES = [
    # --- report.verdict and the report
    ("verdict ours text", lambda: report.verdict(0.5, "0.5", margin=0.1), "ours"),
    ("verdict ours two models", lambda: report.verdict(
        0.5, pd.DataFrame({"a": [0.4, 0.5], "b": [0.6, 0.7]}), margin=0.1), "ours"),
    ("verdict ours 2-D", lambda: report.verdict(0.5, np.ones((2, 2)), margin=0.1), "ours"),
    ("verdict ours booleans", lambda: report.verdict(0.5, [True, False], margin=0.1), "ours"),
    ("verdict ours mapping", lambda: report.verdict(0.5, {"a": 0.5}, margin=0.1), "ours"),
    ("verdict ours complex", lambda: report.verdict(0.5, [0.5 + 1j], margin=0.1), "ours"),
    ("verdict ours None", lambda: report.verdict(0.5, None, margin=0.1), "ours"),
    ("verdict interval without our mean", lambda: report.verdict(
        0.5, [0.9], margin=0.1, interval=(0.4, 0.6)), "interval"),
    ("verdict interval text", lambda: report.verdict(0.5, [0.5], margin=0.1, interval="ab"), "interval"),
    ("verdict interval three numbers", lambda: report.verdict(
        0.5, [0.5], margin=0.1, interval=(0.1, 0.5, 0.9)),
     "interval"),
    ("verdict interval reversed", lambda: report.verdict(0.5, [0.5], margin=0.1, interval=(0.9, 0.1)),
     "interval"),
    ("verdict interval NaN", lambda: report.verdict(0.5, [0.5], margin=0.1, interval=(np.nan, 1.0)),
     "interval"),
    ("verdict reference bool", lambda: report.verdict(0.5, [0.5, 0.6], margin=0.1, reference=True), "reference"),
    ("replication_report paper twice", lambda: report.replication_report(
        papers=("wang2025", "wang2025")), "papers"),
    ("replication_report no paper", lambda: report.replication_report(papers=()), "papers"),
    ("replication_report root missing", lambda: report.replication_report(
        papers=("wang2025",), root="/nonexistent/results"), "root"),
    ("replication_report root int", lambda: report.replication_report(papers=("wang2025",),
                                                                      root=3), "root"),
    ("verdict_changes row twice", lambda: report.verdict_changes(
        pd.concat([report.recorded_report()] * 2), report.recorded_report()), "report"),
    ("verdict_tally not a report", lambda: report.verdict_tally(pd.DataFrame({"a": [1]})),
     "report"),
    ("verdict_tally verdict off the scale", lambda: report.verdict_tally(
        pd.DataFrame({"paper": ["x"], "verdict": ["maybe"]})), "report"),
    ("single_run_verdict one run", lambda: report.single_run_verdict(0.5, [0.5], margin=0.1), "ours"),
    ("mean_verdict one seed", lambda: report.mean_verdict(0.5, [0.5], paper_n=5, margin=0.1), "ours"),
    ("contrast_verdict unpaired", lambda: report.contrast_verdict(0.1, [1, 2], [1], margin=0.1), "paired"),
    ("contrast_verdict other text", lambda: report.contrast_verdict(0.1, [1, 2], "ab", margin=0.1), "other"),
    ("tau_verdict truth array", lambda: report.tau_verdict(
        0.5, _TAU_TRUTH.to_numpy(), _TAU_TRUTH, margin=0.1), "truth"),
    ("tau_verdict other models", lambda: report.tau_verdict(
        0.5, _TAU_TRUTH, _TAU_TRUTH.rename(columns={"a": "z"}), margin=0.1), "truth and test"),
    ("tau_verdict two models", lambda: report.tau_verdict(
        0.5, _TAU_TRUTH[["a", "b"]], _TAU_TRUTH[["a", "b"]], margin=0.1), "truth"),
    ("tau_verdict NaN", lambda: report.tau_verdict(0.5, _TAU_TRUTH, _TAU_TRUTH * np.nan, margin=0.1), "test"),
    ("tau_verdict contrasts list", lambda: report.tau_verdict(
        0.5, _TAU_TRUTH, _TAU_TRUTH, margin=0.1, contrasts=["differs"]), "contrasts"),
    ("figure4_verdicts with_paper text", lambda: carraro2022.figure4_verdicts(
        _TAU, with_paper="yes"), "with_paper"),
    ("figure4_sign_tests metric absent", lambda: carraro2022.figure4_sign_tests(
        _TAU, metric="ndcg"), "metric"),
    ("smoothing_comparison no smoothing column", lambda: carraro2022.smoothing_comparison(
        _TAU), "table"),
    ("ips_stability no MAR", lambda: wang2025.ips_stability(W_LOG, seeds=[0]), "data"),
    ("ips_stability seeds twice", lambda: wang2025.ips_stability(
        rb.simulate(60, 30, seed=0), seeds=[0, 0]), "seeds"),
    ("ips_stability lr zero", lambda: wang2025.ips_stability(
        rb.simulate(60, 30, seed=0), seeds=[0], lrs=[0.0]), "lrs"),
    ("ips_stability lrs text", lambda: wang2025.ips_stability(
        rb.simulate(60, 30, seed=0), seeds=[0], lrs="fast"), "lrs"),
    ("ips_stability block single", lambda: wang2025.ips_stability(
        rb.simulate(60, 30, seed=0), seeds=[0], blocks=[(8,)]), "blocks"),
    ("ips_stability_table not runs", lambda: wang2025.ips_stability_table(
        pd.DataFrame({"seed": [0]})), "runs"),
    ("intervene smoothing unknown", lambda: rb.sampling.intervene(
        W_LOG, strategy="reg", size=0.5, seed=0, smoothing="authors"), "smoothing"),
    ("ImplicitALS fresh_starts text", lambda: carraro2022.ImplicitALS(fresh_starts="yes"),
     "fresh_starts"),
    # --- yang2018: the authors' protocol
    ("sampled_candidates negative user", lambda: _candidates(val=Y_VAL.assign(user=-1)),
     "val.user"),
    ("sampled_candidates item outside", lambda: _candidates(val=Y_VAL.assign(item=30)),
     "val.item"),
    ("sampled_candidates train user outside", lambda: _candidates(train=Y_TRAIN.assign(user=40)),
     "train.user"),
    ("sampled_candidates float ids", lambda: _candidates(val=Y_VAL.assign(item=0.5)), "val.item"),
    ("sampled_candidates val not a frame", lambda: _candidates(val=[1]), "val"),
    ("sampled_candidates val empty", lambda: _candidates(val=Y_VAL.head(0)), "val"),
    ("sampled_candidates train lacks item", lambda: _candidates(train=Y_TRAIN[["user"]]),
     "train"),
    ("user_terms k list with 0", lambda: _terms(k=[1, 0]), "k"),
    ("user_terms k empty list", lambda: _terms(k=[]), "k"),
    ("user_terms k repeated", lambda: _terms(k=[1, 1]), "k"),
    ("user_terms k above the catalogue", lambda: _terms(k=31), "k"),
    ("user_terms gammas empty", lambda: _terms(gammas={}), "gammas"),
    ("user_terms gamma NaN", lambda: _terms(gammas={"g": np.nan}), "gammas"),
    ("user_terms gamma text", lambda: _terms(gammas={"g": "2"}), "gammas"),
    ("user_terms gamma below -1", lambda: _terms(gammas={"g": -2.0}), "gammas"),
    ("user_terms outside text", lambda: _terms(outside="yes"), "outside"),
    ("evaluate_readings candidates list", lambda: _readings(candidates=[]), "candidates"),
    ("user_terms gammas list", lambda: _terms(gammas=[2.0]), "gammas"),
    ("user_terms negative counts", lambda: _terms(counts=Y_COUNTS - 1), "counts"),
    ("user_terms fractional counts", lambda: _terms(counts=Y_COUNTS + 0.5), "counts"),
    ("user_terms counts short", lambda: _terms(counts=Y_COUNTS[:3]), "counts"),
    ("user_terms counts text", lambda: _terms(counts=["1"] * 30), "counts"),
    ("user_terms every positive cold", lambda: _terms(counts=np.zeros(30, int)), "counts"),
    ("user_terms candidates shape", lambda: _terms(candidates=Y_ALL[:, :5]), "candidates"),
    ("user_terms candidates not boolean", lambda: _terms(candidates=Y_ALL * 2.0), "candidates"),
    ("user_terms scores 1-D", lambda: _terms(scores=Y_S[0]), "scores"),
    ("user_terms scores NaN", lambda: _terms(scores=np.full((40, 30), np.nan)), "scores"),
    ("user_terms positives outside", lambda: _terms(positives=Y_VAL.assign(user=45)),
     "positives.user"),
    ("user_terms positives negative", lambda: _terms(positives=Y_VAL.assign(item=-1)),
     "positives.item"),
    ("user_terms positives twice", lambda: _terms(positives=pd.concat([Y_VAL, Y_VAL])),
     "positives"),
    ("user_terms positives not a frame", lambda: _terms(positives=[1]), "positives"),
    ("user_terms positives empty", lambda: _terms(positives=Y_VAL.head(0)), "positives"),
    ("reading_rows reading text", lambda: yang2018.reading_rows(Y_EST, Y_TRU, "authors"),
     "reading"),
    ("reading_rows estimate not a frame", lambda: yang2018.reading_rows([1], Y_TRU,
                                                                        yang2018.AUTHORS),
     "estimate"),
    ("reading_rows estimate empty", lambda: yang2018.reading_rows(Y_EST.head(0), Y_TRU,
                                                                  yang2018.AUTHORS), "estimate"),
    ("reading_rows flat columns", lambda: yang2018.reading_rows(pd.DataFrame({"a": [1.0]}), Y_TRU,
                                                                yang2018.AUTHORS), "estimate"),
    ("reading_rows NaN term", lambda: yang2018.reading_rows(Y_EST.where(Y_EST > 0.5), Y_TRU,
                                                            yang2018.AUTHORS), "estimate"),
    ("reading_rows truth_label absent", lambda: yang2018.reading_rows(
        Y_EST, Y_TRU, yang2018.AUTHORS, truth_label="MAR"), "truth_label"),
    ("reading_rows no common user", lambda: yang2018.reading_rows(
        Y_EST.loc[[0]], Y_TRU.loc[[2]], yang2018.COURSE), "common"),
    ("Reading name not text", lambda: yang2018.Reading(3), "name"),
    ("Reading k zero", lambda: yang2018.Reading("r", k=0), "k"),
    ("evaluate_readings readings empty", lambda: _readings(readings=[]), "readings"),
    ("evaluate_readings readings text", lambda: _readings(readings="AUTHORS"), "readings"),
    ("evaluate_readings reading twice", lambda: _readings(
        readings=[yang2018.AUTHORS, yang2018.AUTHORS]), "readings"),
    ("evaluate_readings draws empty", lambda: _readings(draws=[]), "draws"),
    ("evaluate_readings draw negative", lambda: _readings(draws=[-1]), "draws"),
    ("evaluate_readings draw twice", lambda: _readings(draws=[0, 0]), "draws"),
    ("evaluate_readings seed Generator", lambda: _readings(seed=np.random.default_rng(0)),
     "seed"),
    ("evaluate_readings n_items mismatch", lambda: _readings(n_items=5), "n_items"),
    ("evaluate_readings scores shape", lambda: _readings(scores=Y_S[:, :5]), "n_items"),
    ("evaluate_readings gamma labelled AOA", lambda: _readings(gammas={"AOA": 2.0}), "gammas"),
    ("evaluate_readings gamma NaN", lambda: _readings(gammas={"g": np.nan}), "gammas"),
    ("evaluate_readings truth item outside", lambda: _readings(
        truth=Y_TRUTH.assign(item=Y_TRUTH["item"] + 30)), "truth.item"),
    ("evaluate_readings val empty", lambda: _readings(val=Y_VAL.head(0)), "val"),
    ("evaluate_readings truth without a relevant rating", lambda: _readings(
        truth=Y_TRUTH.assign(rating=1.0)), "truth"),
    ("evaluate_readings no common user", lambda: _readings(
        readings=[yang2018.COURSE], truth=Y_TRUTH[~Y_TRUTH["user"].isin(Y_VAL["user"])]),
     "truth"),
    ("evaluate_readings train empty", lambda: _readings(train=Y_TRAIN.head(0)), "train"),
    ("pmf_training a user with every item", lambda: yang2018.pmf_training(
        pd.DataFrame({"user": [0, 0], "item": [0, 1], "rating": 5.0}), n_items=2, seed=0),
     "train"),
    ("pmf_training item outside", lambda: yang2018.pmf_training(Y_TRAIN, n_items=3, seed=0),
     "train.item"),
    ("pmf_training empty", lambda: yang2018.pmf_training(Y_TRAIN.head(0), n_items=30, seed=0),
     "train"),
    ("pmf_training not a frame", lambda: yang2018.pmf_training([1], n_items=30, seed=0), "train"),
    ("authors_split_table draws empty", lambda: yang2018.authors_split_table(
        {"P": rb.models.PosPop()}, YW, seed=0, draws=[], gammas=[2.0]), "draws"),
    ("authors_split_table gamma NaN", lambda: yang2018.authors_split_table(
        {"P": rb.models.PosPop()}, YW, seed=0, draws=[0], gammas=[np.nan]), "gammas"),
    ("authors_split_table gammas text", lambda: yang2018.authors_split_table(
        {"P": rb.models.PosPop()}, YW, seed=0, draws=[0], gammas="2"), "gammas"),
    ("authors_split_table two gammas one label", lambda: yang2018.authors_split_table(
        {"P": rb.models.PosPop()}, YW, seed=0, draws=[0], gammas=[2.0, 2.01]), "gammas"),
    ("authors_split_table n_negatives negative", lambda: yang2018.authors_split_table(
        {"P": rb.models.PosPop()}, YW, seed=0, draws=[0], n_negatives={"P": -1}),
     "n_negatives"),
    ("authors_split_table readings empty", lambda: yang2018.authors_split_table(
        {"P": rb.models.PosPop()}, YW, seed=0, draws=[0], readings=[]), "readings"),
    ("authors_split_table readings of names", lambda: yang2018.authors_split_table(
        {"P": rb.models.PosPop()}, YW, seed=0, draws=[0], readings=["authors' protocol"]),
     "readings"),
    ("mae_summary missing column", lambda: yang2018.mae_summary(Y_RUNS.drop(columns="value"),
                                                                reading="r"), "table"),
    ("mae_summary not a frame", lambda: yang2018.mae_summary([1], reading="r"), "table"),
    ("mae_summary unknown reading", lambda: yang2018.mae_summary(Y_RUNS, reading="zz"),
     "reading"),
    ("mae_summary text value", lambda: yang2018.mae_summary(Y_RUNS.assign(value=["a", "b"]),
                                                            reading="r"), "table.value"),
    ("mae_summary NaN value", lambda: yang2018.mae_summary(Y_RUNS.assign(value=[np.nan, 0.1]),
                                                           reading="r"), "table.value"),
    ("mae_summary run twice", lambda: yang2018.mae_summary(pd.concat([Y_RUNS, Y_RUNS]),
                                                           reading="r"), "table"),
    ("snips_reduction not a frame", lambda: yang2018.snips_reduction([1]), "summary"),
    ("snips_reduction without AOA", lambda: yang2018.snips_reduction(
        Y_SUMMARY.drop(columns="AOA", level=0)), "summary"),
    ("snips_reduction flat columns", lambda: yang2018.snips_reduction(pd.DataFrame({"a": [1.0]})),
     "summary"),
    ("snips_reduction AOA zero", lambda: yang2018.snips_reduction(Y_SUMMARY * 0), "summary"),
    ("snips_protocols truth_label AOA", lambda: yang2018.snips_protocols(
        T, T, train=T, n_items=12, gammas={"S": 2.0}, truth_label="AOA"), "truth_label"),
    ("snips_protocols gamma labelled AOA", lambda: yang2018.snips_protocols(
        T, T, train=T, n_items=12, gammas={"AOA": 2.0}), "gammas"),
    ("per_model_mae NaN value", lambda: yang2018.per_model_mae(
        Y_PER_USER.assign(value=[1.0, np.nan, 0.5, 0.5])), "per_user.value"),
    ("per_model_mae no common user", lambda: yang2018.per_model_mae(
        Y_PER_USER.assign(user=[0, 1, 2, 3])), "per_user"),
    ("mae_over_splits seed twice", lambda: yang2018.mae_over_splits(
        {"P": rb.models.PosPop()}, YW, seeds=[0, 0]), "seeds"),
    ("mae_over_splits gamma NaN", lambda: yang2018.mae_over_splits(
        {"P": rb.models.PosPop()}, YW, seeds=[0], gammas=[np.nan]), "gammas"),
    ("agreement_table metric_names list", lambda: yang2018.agreement_table(
        _AGREE, metric_names=["Recall"]), "metric_names"),
    # --- wang2025: the paper's trainers and splits
    ("fit_autodebias MF overflows", lambda: wang2025.fit_autodebias(
        "MF", W_LOG, **{**W_FIT, "lr": 1e6}), "lr"),
    ("fit_autodebias IPS overflows", lambda: wang2025.fit_autodebias(
        "IPS", W_LOG, **{**W_FIT, "lr": 1e6}), "lr"),
    ("fit_autodebias DR overflows", lambda: wang2025.fit_autodebias(
        "DR", W_LOG, **{**W_FIT, "lr": 1e3, "imputation_lr": 1e3}), "lr"),
    ("fit_autodebias block bool", lambda: wang2025.fit_autodebias(
        "MF", W_LOG, **{**W_FIT, "block": (True, 5)}), "block"),
    ("fit_autodebias train empty", lambda: wang2025.fit_autodebias("MF", W_LOG.head(0), **W_FIT),
     "train"),
    ("fit_autodebias validation one label", lambda: wang2025.fit_autodebias(
        "MF", W_LOG, **{**W_FIT, "validation": W_LOG.assign(rating=5.0)}), "validation"),
    ("autodebias_split tiny", lambda: wang2025.autodebias_split(RAND, seed=0), "random"),
    ("autodebias_split empty", lambda: wang2025.autodebias_split(RAND.head(0), seed=0), "random"),
    ("paper_random_split tiny", lambda: wang2025.paper_random_split(RAND.head(1), seed=0),
     "random"),
    ("paper_random_split float ids", lambda: wang2025.paper_random_split(
        RAND.assign(user=[0.5, 0, 1, 1]), seed=0), "random.user"),
    ("scheme_users k above the catalogue", lambda: wang2025.scheme_users(
        {"m": S[:2, :3]}, RAND, k=4, k_bar=1, threshold=4.0, exclude=None), "k"),
    ("scheme_users random not a frame", lambda: wang2025.scheme_users(
        {"m": S[:2, :3]}, [1], k=1, k_bar=1, threshold=4.0, exclude=None), "random"),
    ("summarise_schemes NaN", lambda: wang2025.summarise_schemes(
        W_SCHEMES.where(W_SCHEMES > 0.5), seed=0), "per_user"),
    ("paired_bootstrap NaN", lambda: wang2025.paired_bootstrap(
        W_SCHEMES.where(W_SCHEMES > 0.5), baseline="b", seed=0), "per_user"),
    ("convention_ladder k_bars empty", lambda: wang2025.convention_ladder(
        {"m": S[:2, :3]}, RAND, train=RAND, threshold=4.0, k=1, k_bars=[]), "k_bars"),
    ("convention_ladder k above the catalogue", lambda: wang2025.convention_ladder(
        {"m": S[:2, :3]}, RAND, train=RAND, threshold=4.0, k=5, k_bars=[1]), "k"),
    ("ordering_over_seeds text", lambda: wang2025.ordering_over_seeds(
        pd.DataFrame({"a": ["x", "y"], "b": [1.0, 2.0]})), "values"),
    ("ordering_over_seeds inf", lambda: wang2025.ordering_over_seeds(
        pd.DataFrame({"a": [np.inf, 1.0], "b": [1.0, 2.0]})), "values"),
    ("ordering_over_seeds model twice", lambda: wang2025.ordering_over_seeds(
        pd.DataFrame([[1.0, 2.0], [2.0, 3.0]], columns=["a", "a"])), "values"),
    # --- carraro2022: the RankSys-like recommenders and the tables of repetitions
    ("RankSysUserKNN scores an unknown user", lambda: _fitted(
        carraro2022.RankSysUserKNN, k=1).score_batch([7]), "user_indices"),
    ("RankSysUserKNN scores a negative user", lambda: _fitted(
        carraro2022.RankSysUserKNN, k=1).score_batch([-1]), "user_indices"),
    ("RankSysUserKNN scores a float user", lambda: _fitted(
        carraro2022.RankSysUserKNN, k=1).score_batch([0.5]), "user_indices"),
    ("RankSysItemKNN scores an unknown user", lambda: _fitted(
        carraro2022.RankSysItemKNN, k=1).score(9), "user_idx"),
    ("ImplicitALS scores an unknown user", lambda: _fitted(
        carraro2022.ImplicitALS, k=2, n_iter=2).score(9), "user_idx"),
    ("ImplicitALS scores an unknown item", lambda: _fitted(
        carraro2022.ImplicitALS, k=2, n_iter=2).score(0, 99), "item_idx"),
    ("tau_bands row twice", lambda: carraro2022.tau_bands(C_TWICE, seed=0, n_boot=5), "metrics"),
    ("tau_bands NaN value", lambda: carraro2022.tau_bands(
        C_METRICS.assign(value=C_METRICS["value"].where(C_METRICS.index != 3)), seed=0,
        n_boot=5), "metrics.value"),
    ("tau_bands text value", lambda: carraro2022.tau_bands(C_METRICS.assign(value="x"), seed=0,
                                                           n_boot=5), "metrics.value"),
    ("tau_bands unknown strategy", lambda: carraro2022.tau_bands(
        C_METRICS.assign(strategy=C_METRICS["strategy"].replace("full", "wtd2")), seed=0,
        n_boot=5), "metrics.strategy"),
    ("tau_on_means row twice", lambda: carraro2022.tau_on_means(C_TWICE), "metrics"),
    ("table3 row twice", lambda: carraro2022.table3(C_TWICE), "metrics"),
    ("table5_wilcoxon row twice", lambda: carraro2022.table5_wilcoxon(C_TWICE), "metrics"),
    ("kendall_vs_truth row twice", lambda: carraro2022.kendall_vs_truth(C_TWICE), "metrics"),
    ("difference_from_truth row twice", lambda: carraro2022.difference_from_truth(C_TWICE),
     "metrics"),
    ("run_protocol seed twice", lambda: carraro2022.run_protocol(
        _W, {"PosPop": rb.models.PosPop}, seeds=[0, 0]), "seeds"),
    ("weight_noise seed Generator", lambda: carraro2022.weight_noise(
        _W, seeds=[np.random.default_rng(0)]), "seeds"),
    ("table3 metric a list", lambda: carraro2022.table3(C_METRICS, metric=["recall"]), "metric"),
    ("tau_bands metric a mapping", lambda: carraro2022.tau_bands(C_METRICS, metric={}, seed=0),
     "metric"),
    ("kendall_vs_truth metric a list", lambda: carraro2022.kendall_vs_truth(C_METRICS,
                                                                           metric=[]), "metric"),
    ("best_sizes metric a list", lambda: carraro2022.best_sizes(C_DIFF, metric=["recall"]),
     "metric"),
    ("wilcoxon_vs_truth sizes None", lambda: carraro2022.wilcoxon_vs_truth(C_DIFF, None),
     "sizes"),
    ("wilcoxon_vs_truth sizes text", lambda: carraro2022.wilcoxon_vs_truth(C_DIFF, "full"),
     "sizes"),
    ("wilcoxon_vs_truth unknown strategy", lambda: carraro2022.wilcoxon_vs_truth(
        C_DIFF, {"wtd2": 0.5}), "sizes"),
    ("wilcoxon_vs_truth size above one", lambda: carraro2022.wilcoxon_vs_truth(
        C_DIFF, {"full": 2.0}), "sizes"),
    ("wilcoxon_vs_truth no row of the metric", lambda: carraro2022.wilcoxon_vs_truth(
        C_DIFF, {"full": 1.0}, metric="ndcg"), "metric"),
    ("kl_by_seed strategies None", lambda: carraro2022.kl_by_seed(_W, seeds=[0],
                                                                 strategies=None), "strategies"),
    ("draw_test_sets sizes a number", lambda: carraro2022.draw_test_sets(_SPLIT, sizes=0.5),
     "sizes"),
    ("popular_share strategies a name", lambda: carraro2022.popular_share(
        _W, seeds=[0], strategies="full", cache=False), "strategies"),
    ("run_repetition data None", lambda: carraro2022.run_repetition(
        None, {"PosPop": rb.models.PosPop}, seed=0), "data"),
    ("run_protocol data a frame", lambda: carraro2022.run_protocol(
        _W.mnar, {"PosPop": rb.models.PosPop}, seeds=[0]), "data"),
    ("paper_grid recommenders a frame", lambda: carraro2022.paper_grid(
        recommenders=pd.DataFrame()), "recommenders"),
    # --- jadidinejad2021
    ("zoo_sensitivity a model of no family", lambda: jadidinejad2021.zoo_sensitivity(
        _stored_zoo().assign(model=_stored_zoo()["model"].replace("GA", "GA10"))), "values"),
    ("zoo_sensitivity methods None", lambda: jadidinejad2021.zoo_sensitivity(
        _stored_zoo(), methods=None), "methods"),
    ("ladder n_strata None", lambda: jadidinejad2021.ladder(_stored_zoo(), n_strata=None),
     "n_strata"),
    ("ladder no rung", lambda: jadidinejad2021.ladder(_stored_zoo(), n_strata=7), "n_strata"),
    ("authors_zoo sizes None", lambda: jadidinejad2021.authors_zoo(sizes=None), "sizes"),
    ("authors_zoo sizes empty", lambda: jadidinejad2021.authors_zoo(sizes=[]), "sizes"),
    ("authors_zoo size twice", lambda: jadidinejad2021.authors_zoo(sizes=[10, 10]), "sizes"),
    ("authors_zoo families None", lambda: jadidinejad2021.authors_zoo(families=None),
     "families"),
    ("powerlaw counts text", lambda: jadidinejad2021.powerlaw_propensity("x"), "counts"),
    ("powerlaw counts mapping", lambda: jadidinejad2021.powerlaw_propensity({}), "counts"),
    ("protocol_values seed twice", lambda: jadidinejad2021.protocol_values(W, seeds=[0, 0]),
     "seeds"),
    ("protocol_values size twice", lambda: jadidinejad2021.protocol_values(W, seeds=[0],
                                                                           sizes=(10, 10)),
     "sizes"),
    ("holdout_evaluator propensity text", lambda: jadidinejad2021.holdout_evaluator(
        holdout=T, propensity="x", n_items=12), "propensity"),
    ("agreement truth a list", lambda: jadidinejad2021.agreement(_jad_frame(), truth=[]),
     "truth"),
    ("steiger y None", lambda: jadidinejad2021.steiger(_jad_frame(), y=None), "y"),
    ("steiger z a list", lambda: jadidinejad2021.steiger(_jad_frame(), z=[]), "z"),
    ("steiger n_strata a list", lambda: jadidinejad2021.steiger(_jad_frame(), n_strata=[]),
     "n_strata"),
    ("steiger binning unknown", lambda: jadidinejad2021.steiger(_jad_frame(), binning="log"),
     "binning"),
    # --- found by sweeping generic bad values over the replications' functions
    ("user_table metrics of numbers", lambda: yang2018.user_table(
        {"m": S}, PROTOCOLS, exclude=None, metrics=[1], k=2), "metrics"),
    ("agreement_table truth a list", lambda: yang2018.agreement_table(_AGREE, truth=[]),
     "truth"),
    ("per_model_mae truth a mapping", lambda: yang2018.per_model_mae(Y_PER_USER, truth={}),
     "truth"),
    ("snips_protocols heldout None", lambda: yang2018.snips_protocols(
        None, T, train=T, n_items=12, gammas={"S": 2.0}), "heldout"),
    ("model_curves sets None", lambda: wang2025.model_curves(
        {"m": S[:2, :3]}, None, [1], random_sets={"r": RAND}, k_bars=[1], threshold=4.0,
        exclude=None), "sets"),
    ("model_curves random set not a frame", lambda: wang2025.model_curves(
        {"m": S[:2, :3]}, {"r": RAND}, [1], random_sets={"r": [1]}, k_bars=[1], threshold=4.0,
        exclude=None), "random_sets"),
]


class _FakeClient:
    """Has a Dask client's methods; the checks must refuse bad inputs before any task runs."""

    def submit(self, *args, **kwargs):
        raise AssertionError("a task was submitted before the inputs were checked")

    def gather(self, futures):
        raise AssertionError("gather reached before the inputs were checked")



# --- issue 57: the slider builders' grids, Figure 4's grid, Yang's readers, takeaways
def _plots():
    from recbias_tutorial import plots

    return plots


_SL = pd.DataFrame({"model": ["a", "a", "b", "b"], "g": [1.0, 2.0, 1.0, 2.0],
                    "est": [0.1, 0.2, 0.3, 0.4], "kind": "x"})
_KN = pd.DataFrame({"knob": "k", "value": [0.1, 0.2, 0.1, 0.2], "y": [1.0, 2.0, 1.5, 2.5],
                    "line": ["a", "a", "b", "b"]})


def _slider(frame, **kw):
    return _plots().estimate_slider(frame, param="g", value="est", y="model", **kw)


def _dots(frame):
    return _plots().slider_dots(frame, param="g", x="est", y="model", series="kind")


def _knobs(frame):
    return _plots().knob_lines(frame, knob="knob", value="value", y="y", line="line")


def _rho(values=None, summary=None):
    v = pd.DataFrame({"model": "a", "test_set": ["FULL", "REG", "REG"], "rho": [1.0, 0.5, 1.0],
                      "value": [0.3, 0.1, 0.2], "truth": 0.2})
    s = v.groupby(["test_set", "rho"], as_index=False)["value"].mean()
    return _plots().rho_slider(v if values is None else values(v),
                               s if summary is None else summary(s),
                               value_title="x", summary_title="y")


def _fig4(size):
    m = pd.DataFrame([(s, mo, st, sz, "recall", v) for s in range(6)
                      for st, sz in (("gt", 1.0), ("wtd", size))
                      for mo, v in zip("abc", (0.1, 0.2, 0.3))],
                     columns=["seed", "model", "strategy", "size", "metric", "value"])
    return carraro2022.figure4_verdicts(m)


_YR = pd.DataFrame({"seed": [0, 0], "model": "m", "reading": "r", "draw": 0, "metric": "recall",
                    "estimator": "AOA", "quantity": ["estimate", "truth"], "value": [0.2, 0.1]})

ISSUE57_CASES = [
    ("slider frame a dict", lambda: _slider(_SL.to_dict()), "frame"),
    ("slider frame empty", lambda: _slider(_SL.head(0)), "frame"),
    ("slider NaN estimate", lambda: _slider(_SL.assign(est=[np.nan, 0.2, 0.3, 0.4])), "frame.est"),
    ("slider inf grid", lambda: _slider(_SL.assign(g=[1.0, np.inf, 1.0, 2.0])), "frame.g"),
    ("slider text grid", lambda: _slider(_SL.assign(g=["a", "b", "a", "b"])), "frame.g"),
    ("slider duplicated point", lambda: _slider(pd.concat([_SL, _SL.head(1)])), "frame"),
    ("slider NaN reference", lambda: _slider(_SL.assign(ref=np.nan), references=["ref"]),
     "frame.ref"),
    ("dots frame a list", lambda: _dots([1, 2]), "frame"),
    ("dots NaN x", lambda: _dots(_SL.assign(est=[np.nan, 0.2, 0.3, 0.4])), "frame.est"),
    ("dots duplicated point", lambda: _dots(pd.concat([_SL, _SL.tail(1)])), "frame"),
    ("dots empty", lambda: _dots(_SL.iloc[:0]), "frame"),
    ("knobs inf y", lambda: _knobs(_KN.assign(y=[1.0, np.inf, 1.5, 2.5])), "frame.y"),
    ("knobs text value", lambda: _knobs(_KN.assign(value=["p", "q", "p", "q"])), "frame.value"),
    ("knobs duplicated point", lambda: _knobs(pd.concat([_KN, _KN.head(1)])), "frame"),
    ("knobs empty", lambda: _knobs(_KN.head(0)), "frame"),
    ("rho values a dict", lambda: _rho(values=lambda v: v.to_dict()), "values"),
    ("rho NaN value", lambda: _rho(values=lambda v: v.assign(value=np.nan)), "values.value"),
    ("rho duplicated point", lambda: _rho(values=lambda v: pd.concat([v, v.tail(1)])), "values"),
    ("rho summary empty", lambda: _rho(summary=lambda s: s.head(0)), "summary"),
    ("rho summary inf", lambda: _rho(summary=lambda s: s.assign(value=np.inf)), "summary.value"),
    ("figure4 rho off the grid", lambda: _fig4(0.25), "metrics.size"),
    ("figure4 rho near but off", lambda: _fig4(0.6 + 1e-7), "metrics.size"),
    ("yang direction NaN", lambda: yang2018.direction_test(_YR.assign(value=[np.nan, 0.1]),
                                                           readings=["r"]), "table.value"),
    ("yang direction duplicated run", lambda: yang2018.direction_test(
        pd.concat([_YR, _YR]), readings=["r"]), "table"),
    ("yang direction text value", lambda: yang2018.direction_test(
        _YR.assign(value=["a", "b"]), readings=["r"]), "table.value"),
    ("takeaway keyword name", lambda: course.takeaways({"lambda": "Words."}), "name"),
]

CASES = CASES + MORE_CASES + REPLICATION_CASES + ISSUE57_CASES


def test_table_is_large_and_distinct():
    labels = [c[0] for c in CASES]
    assert len(labels) == len(set(labels)) and len(labels) >= 200


@pytest.mark.parametrize("label, call, argument", CASES, ids=[c[0] for c in CASES])
def test_bad_input_is_a_clear_value_error(label, call, argument):
    with pytest.raises(ValueError) as info:
        call()
    assert argument in str(info.value), f"{label}: {info.value}"


# --- the rules the public functions declare (recbias_tutorial._params): one valid call of
# each declared function; every value each declared rule refuses is tried in turn
_W = rb.simulate(20, 10, seed=0, mean_ratings_per_user=3, n_mar_items=4)
_SPLIT = carraro2022.split_feedback(_W, seed=0)
_ZIPF = pd.DataFrame({"user": 0, "item": np.repeat(
    np.arange(2000), np.random.default_rng(0).zipf(2.5, size=2000))})  # a power law: gamma 2.5
_TRAIN = pd.DataFrame({"user": 0, "item": np.repeat(np.arange(200), np.arange(1, 201))})
_FULL = pd.DataFrame({"user": np.repeat(np.arange(50), 200), "item": np.tile(np.arange(200), 50),
                      "rating": 5.0})
_LOGGED = _FULL[np.random.default_rng(0).random(len(_FULL))
                < 0.5 * ((_FULL["item"] + 1) / 200) ** 0.9]  # propensity ~ training count^0.9
_T3 = pd.DataFrame({"model": "a", "test_set": ["FULL", "SKEW"], "pct_diff": [50.0, -3.0]})
_TAU = pd.DataFrame({"seed": np.repeat([0, 1], 6), "metric": "recall", "size": 1.0,
                     "model": ["a", "b", "c"] * 4, "strategy": (["gt"] * 3 + ["full"] * 3) * 2,
                     "value": [0.1, 0.2, 0.3, 0.2, 0.1, 0.3, 0.1, 0.2, 0.3, 0.1, 0.2, 0.3]})
_TAU_TRUTH = pd.DataFrame({"a": [0.1, 0.2, 0.1], "b": [0.3, 0.4, 0.5], "c": [0.6, 0.6, 0.7]})
_T4 = pd.DataFrame({"model": "a", "test_set_a": ["SKEW"], "test_set_b": ["FULL"],
                    "p_value": [0.002]})


def _files_may_be_absent(load):
    """A loader's valid call, never downloading: without the files it says they are missing."""
    with mock.patch.dict(os.environ, {"RECBIAS_OFFLINE": "1"}):
        try:
            return load()
        except rb.data.DatasetNotFoundError:
            return None

VALID_CALLS = {
    estimators.user_values: lambda **kw: estimators.user_values(S, T, P, **kw),
    estimators.aoa: lambda **kw: estimators.aoa(S, T, **kw),
    estimators.snips: lambda **kw: estimators.snips(S, T, P, **kw),
    estimators.ips: lambda **kw: estimators.ips(S, T, P, n_relevant=[2, 1, 0], **kw),
    estimators.bootstrap_ci: lambda **kw: estimators.bootstrap_ci(
        S, T, **{"seed": 0, "n_resamples": 10, **kw}),
    sampling.intervene: lambda **kw: sampling.intervene(
        T, **{"strategy": "reg", "size": 0.5, "seed": 0, **kw}),
    sampling.intervention_weights: lambda **kw: sampling.intervention_weights(
        T, **{"strategy": "reg", **kw}),
    propensity.popularity_propensity: lambda **kw: propensity.popularity_propensity(
        T, **{"n_items": 12, "gamma": 1.0, **kw}),
    comparison.compare_methods: lambda **kw: comparison.compare_methods(
        _W, models={"a": np.eye(20, 10), "b": np.ones((20, 10))},
        **{"seed": 0, "n_redraws": 2, "k": 2, "cache": False, **kw}),
    leaderboard.leaderboard_table: lambda **kw: leaderboard.leaderboard_table(
        **{"lesson": 1, "cache": False, **kw}),
    distributed.estimate: lambda **kw: distributed.estimate(S, T, client=_FakeClient(), **kw),
    distributed.evaluate: lambda **kw: distributed.evaluate({"m": S}, T, client=None, **kw),
    distributed.synthetic_log: lambda **kw: distributed.synthetic_log(
        **{"n_users": 5, "n_items": 6, "per_user": 3, "seed": 0, **kw}),
    distributed.write_feedback: lambda **kw: distributed.write_feedback(
        T, os.path.join(__import__("tempfile").mkdtemp(), "t"), **kw),
    estimators.stratified: lambda **kw: estimators.stratified(S, T, P, **kw),
    estimators.ure_recall: lambda **kw: estimators.ure_recall(S, T, **{"k": 2, **kw}),
    estimators.recall_at_kbar: lambda **kw: estimators.recall_at_kbar(S, T, **{"k_bar": 1, **kw}),
    metrics.ranking_metrics: lambda **kw: metrics.ranking_metrics(S, T, **kw),
    metrics.rank_positions: lambda **kw: metrics.rank_positions(S, T, **kw),
    stats.user_bootstrap: lambda **kw: stats.user_bootstrap(
        np.arange(6.0), **{"seed": 0, "n_resamples": 10, **kw}),
    metrics.recall_curves: lambda **kw: metrics.recall_curves(S, T, [1, 2], **kw),
    jadidinejad2021.rank_relevant: lambda **kw: jadidinejad2021.rank_relevant(
        S, T, **{"k": 2, **kw}),
    jadidinejad2021.holdout_evaluator: lambda **kw: jadidinejad2021.holdout_evaluator(
        holdout=T, propensity=P, **{"n_items": 12, **kw}),
    jadidinejad2021.trainer_comparison: lambda **kw: jadidinejad2021.trainer_comparison(
        "coat", **{"what": "taus", **kw}),
    rb.debiased_mf.train_mf: lambda **kw: rb.debiased_mf.train_mf(
        T, **{"n_users": 3, "n_items": 12, "seed": 0, "factors": 2, "epochs": 1, **kw}),
    fit_mf: lambda **kw: fit_mf(
        T, **{"n_users": 3, "n_items": 12, "seed": 0, "factors": 2, "epochs": 1, "cache": False,
              **kw}),
    metrics.subset_metrics: lambda **kw: metrics.subset_metrics(np.zeros(4), T, {0: [0]}, **kw),
    propensity.item_counts: lambda **kw: propensity.item_counts(T, **{"n_items": 12, **kw}),
    propensity.fit_popularity_exponent: lambda **kw: propensity.fit_popularity_exponent(
        _ZIPF, **{"n_items": 2000, **kw}),
    propensity.selection_exponent: lambda **kw: propensity.selection_exponent(
        _LOGGED, _FULL, train=_TRAIN, **{"n_items": 200, **kw}),
    propensity.naive_bayes_propensity: lambda **kw: propensity.naive_bayes_propensity(
        T, T, **{"n_users": 3, "n_items": 12, **kw}),
    stats.kl_divergence: lambda **kw: stats.kl_divergence([1, 2], [1, 2], **kw),
    calibrate_propensity: lambda **kw: calibrate_propensity(
        P, **{"n_observed": 3, "n_users": 3, **kw}),
    course.table: lambda **kw: course.table(T, **kw),
    rb.data.simulate: lambda **kw: rb.data.simulate(
        **{"n_users": 5, "n_items": 20, "seed": 0, "mean_ratings_per_user": 2, **kw}),
    rb.data.sample_observed: lambda **kw: rb.data.sample_observed(_W, **{"seed": 0, **kw}),
    rb.data.sample_random_exposure: lambda **kw: rb.data.sample_random_exposure(
        _W.full, **{"n_items_per_user": 2, "seed": 0, **kw}),
    rb.data.random_split: lambda **kw: rb.data.random_split(T, (0.5, 0.5), **{"seed": 0, **kw}),
    rb.data.semi_synthetic: lambda **kw: rb.data.semi_synthetic(
        _W, **{"seed": 0, "n_iter": 1, **kw}),
    rb.data.load: lambda **kw: _files_may_be_absent(
        lambda: rb.data.load(**{"name": "coat", **kw})),
    rb.data.load_or_standin: lambda **kw: _files_may_be_absent(
        lambda: rb.data.load_or_standin(**{"name": "coat", "seed": 0, **kw})),
    rb.models.to_cornac_dataset: lambda **kw: rb.models.to_cornac_dataset(
        T, **{"n_users": 3, "n_items": 12, "seed": 0, **kw}),
    rb.models.fit_scorer: lambda **kw: rb.models.fit_scorer(
        rb.models.PosPop(), T, **{"n_users": 3, "n_items": 12, "seed": 0, **kw}),
    rb.models.fit_scores: lambda **kw: rb.models.fit_scores(
        rb.models.PosPop(), T, **{"n_users": 3, "n_items": 12, "seed": 0, "cache": False, **kw}),
    rb.models.iter_scores: lambda **kw: list(rb.models.iter_scores(
        {"p": rb.models.PosPop()}, T, **{"n_users": 3, "n_items": 12, "seed": 0,
                                         "progress": False, "cache": False, **kw})),
    rb.models.score_models: lambda **kw: rb.models.score_models(
        {"p": rb.models.PosPop()}, T, **{"n_users": 3, "n_items": 12, "seed": 0,
                                         "progress": False, "cache": False, **kw}),
    rb.models.model_zoo: lambda **kw: rb.models.model_zoo(**{"seed": 0, "families": ["MostPop"],
                                                             **kw}),
    carraro2022.split_feedback: lambda **kw: carraro2022.split_feedback(_W, **{"seed": 0, **kw}),
    carraro2022.tune: lambda **kw: carraro2022.tune(
        _W, {"PosPop": {"t=4": rb.models.PosPop}}, **{"seed": 0, "k": 2, **kw}),
    carraro2022.draw_test_sets: lambda **kw: carraro2022.draw_test_sets(
        _SPLIT, **{"strategies": ("reg",), "sizes": (0.5,), **kw}),
    carraro2022.run_repetition: lambda **kw: carraro2022.run_repetition(
        _W, {"PosPop": rb.models.PosPop},
        **{"seed": 0, "strategies": ("full",), "sizes": (1.0,), "k": 2, **kw}),
    carraro2022.kl_by_seed: lambda **kw: carraro2022.kl_by_seed(
        _W, **{"seeds": [0], "strategies": ("full",), "cache": False, **kw}),
    carraro2022.closest_test_sets: lambda **kw: carraro2022.closest_test_sets(_T3, _T4, **kw),
    carraro2022.tau_bands: lambda **kw: carraro2022.tau_bands(_TAU, **{"seed": 0, "n_boot": 5, **kw}),
    carraro2022.popular_share: lambda **kw: carraro2022.popular_share(
        _W, **{"seeds": [0], "top": 3, "strategies": ("full",), "cache": False, **kw}),
    carraro2022.RankSysUserKNN: lambda **kw: _fitted(carraro2022.RankSysUserKNN, **{"k": 1, **kw}),
    carraro2022.RankSysItemKNN: lambda **kw: _fitted(carraro2022.RankSysItemKNN, **{"k": 1, **kw}),
    carraro2022.ImplicitALS: lambda **kw: _fitted(carraro2022.ImplicitALS,
                                                  **{"k": 2, "n_iter": 2, **kw}),
    report.verdict: lambda **kw: report.verdict(**{"paper": 0.5, "ours": [0.4, 0.6],
                                                   "margin": 0.1, **kw}),
    report.single_run_verdict: lambda **kw: report.single_run_verdict(
        **{"paper": 0.5, "ours": [0.4, 0.6], "margin": 0.1, **kw}),
    report.mean_verdict: lambda **kw: report.mean_verdict(
        **{"paper": 0.5, "ours": [0.4, 0.6], "paper_n": 5, "margin": 0.1, **kw}),
    report.contrast_verdict: lambda **kw: report.contrast_verdict(
        **{"paper": 0.2, "ours": [0.4, 0.6], "other": [0.3, 0.5], "margin": 0.1, **kw}),
    report.tau_verdict: lambda **kw: report.tau_verdict(
        **{"paper": 0.6, "truth": _TAU_TRUTH, "test": _TAU_TRUTH[::-1], "margin": 0.1, **kw}),
    report.distinction_margin: lambda **kw: report.distinction_margin(
        **{"paper": 0.5, "against": {"other": 0.7}, "rounding": 0.005, **kw}),
    report.half_unit: lambda **kw: report.half_unit(**{"decimals": 3, **kw}),
    carraro2022.figure4_verdicts: lambda **kw: carraro2022.figure4_verdicts(_TAU, **kw),
    carraro2022.figure4_sign_tests: lambda **kw: carraro2022.figure4_sign_tests(_TAU, **kw),
    wang2025.ips_stability: lambda **kw: wang2025.ips_stability(
        rb.simulate(60, 30, seed=0), **{"seeds": [0], "lrs": [0.01], "blocks": [(8, 5)], "epochs": 1, "patience": 1, **kw}),
    yang2018.sampled_candidates: _candidates,
    yang2018.user_terms: _terms,
    yang2018.evaluate_readings: lambda **kw: _readings(**kw),
    yang2018.pmf_training: lambda **kw: yang2018.pmf_training(
        Y_TRAIN, **{"n_items": 30, "seed": 0, **kw}),
    yang2018.authors_models: lambda **kw: yang2018.authors_models(
        **{"n_train": 100, "n_iter": 11, **kw}),
    yang2018.mae_summary: lambda **kw: yang2018.mae_summary(Y_RUNS, **{"reading": "r", **kw}),
    wang2025.autodebias_split: lambda **kw: wang2025.autodebias_split(W_LOG, **{"seed": 0, **kw}),
    wang2025.paper_random_split: lambda **kw: wang2025.paper_random_split(
        W_LOG, **{"seed": 0, **kw}),
    wang2025.signed_labels: lambda **kw: wang2025.signed_labels(RAND, **{"threshold": 4.0, **kw}),
    wang2025.fit_autodebias: lambda **kw: wang2025.fit_autodebias(
        **{"method": "MF", "train": W_LOG, **W_FIT, "epochs": 1, **kw}),
    wang2025.scheme_users: lambda **kw: wang2025.scheme_users(
        {"m": S[:2, :3]}, RAND, **{"k": 1, "k_bar": 1, "threshold": 4.0, "exclude": None, **kw}),
    wang2025.model_curves: lambda **kw: list(wang2025.model_curves(
        {"m": S[:2, :3]}, {"r": RAND}, [1], **{"random_sets": {"r": RAND}, "k_bars": [1],
                                               "threshold": 4.0, "exclude": None,
                                               "cache": False, **kw})),
    wang2025.convention_ladder: lambda **kw: wang2025.convention_ladder(
        {"m": S[:2, :3]}, RAND, **{"train": RAND, "threshold": 4.0, "k": 1, "k_bars": [1], **kw}),
}


def _declared_cases():
    from recbias_tutorial._params import declared

    for function, call in VALID_CALLS.items():
        for argument, rule in declared(function).items():
            for bad in rule.bad_values():
                yield (f"{function.__module__.split('.')[-1]}.{function.__name__} "
                       f"{argument}={bad!r}", call, argument, bad)


DECLARED = list(_declared_cases())


def test_every_declared_function_has_a_valid_call():
    """A new declaration is covered without editing this file beyond one valid call."""
    import importlib
    import pkgutil

    from recbias_tutorial._params import declared

    found = set()
    for module in pkgutil.walk_packages(rb.__path__, "recbias_tutorial."):
        if module.name.split(".")[-1].startswith("_"):
            continue
        mod = importlib.import_module(module.name)
        for name in getattr(mod, "__all__", ()):
            obj = getattr(mod, name, None)
            if callable(obj) and declared(obj):
                found.add(obj)
    assert found == set(VALID_CALLS)
    assert len(DECLARED) >= 80
    for function, call in VALID_CALLS.items():  # the valid calls are valid
        if function is not distributed.estimate:  # its fake client stops it after the checks
            call()


@pytest.mark.parametrize("label, call, argument, bad", DECLARED, ids=[c[0] for c in DECLARED])
def test_declared_rules_refuse_bad_values(label, call, argument, bad):
    with pytest.raises(ValueError) as info:
        call(**{argument: bad})
    assert argument in str(info.value), f"{label}: {info.value}"
