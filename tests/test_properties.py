"""Property-based tests (hypothesis) of the core estimators on random valid and malformed input.

Valid input: small random worlds (users x items scores, possibly tied; held-out frames with
distinct pairs and at least one relevant rating; positive propensities). Every estimator must
return finite values inside its metric's range, and the same values when called twice.

Malformed input: one defect injected into an otherwise valid call (a NaN or infinite score, an
id outside the score matrix, a float or negative id, a repeated pair, a missing column, a
propensity of the wrong shape or <= 0, a cut-off out of range, ...). Every such call must raise
``ValueError`` whose message names the argument that is wrong.

The examples are derandomised (the same every run) and small, so the file runs in seconds.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import recbias_tutorial as rb

SETTINGS = settings(derandomize=True, deadline=None, max_examples=int(__import__("os").environ.get("PROP_N", 60)), database=None,
                    suppress_health_check=[HealthCheck.too_slow])


@st.composite
def worlds(draw, *, min_users: int = 1):
    """(scores, test, propensity): a random valid input of every estimator."""
    n_users = draw(st.integers(min_users, 5))
    n_items = draw(st.integers(2, 8))
    # integer-valued scores make ties frequent (the tie rule is part of the contract)
    tied = draw(st.booleans())
    elems = (st.integers(-3, 3).map(float) if tied
             else st.floats(-1e6, 1e6, allow_nan=False, allow_infinity=False))
    scores = np.array(draw(st.lists(elems, min_size=n_users * n_items,
                                    max_size=n_users * n_items))).reshape(n_users, n_items)
    pairs = draw(st.lists(st.tuples(st.integers(0, n_users - 1), st.integers(0, n_items - 1)),
                          min_size=1, max_size=n_users * n_items, unique=True))
    ratings = draw(st.lists(st.integers(1, 5), min_size=len(pairs), max_size=len(pairs)))
    ratings[draw(st.integers(0, len(pairs) - 1))] = 5  # at least one relevant rating
    test = pd.DataFrame({"user": [u for u, _ in pairs], "item": [i for _, i in pairs],
                         "rating": np.array(ratings, dtype=float)})
    propensity = np.array(draw(st.lists(st.floats(1e-3, 1.0), min_size=n_items,
                                        max_size=n_items)))
    return scores, test, propensity


def _k(draw, n_items):
    return draw(st.integers(1, n_items))


def _in_unit(x: float) -> bool:
    return math.isfinite(x) and -1e-12 <= x <= 1 + 1e-12


# --------------------------------------------------------------------------- valid input

@SETTINGS
@given(worlds(), st.data(), st.sampled_from(["recall", "dcg", "auc"]))
def test_aoa_and_snips_in_range_and_repeatable(world, data, metric):
    scores, test, p = world
    k = _k(data.draw, scores.shape[1])
    for fn in (lambda: rb.aoa(scores, test, metric=metric, k=k),
               lambda: rb.snips(scores, test, p, metric=metric, k=k)):
        first, second = fn(), fn()
        assert _in_unit(first), first
        assert first == second


@SETTINGS
@given(worlds(), st.data())
def test_ips_finite_nonnegative_and_repeatable(world, data):
    scores, test, p = world
    k = _k(data.draw, scores.shape[1])
    relevant = test[test["rating"] >= 4].groupby("user").size()
    n_relevant = relevant.reindex(range(scores.shape[0]), fill_value=0).to_numpy()
    first = rb.ips(scores, test, p, n_relevant=n_relevant, k=k)
    assert math.isfinite(first) and first >= 0
    assert first == rb.ips(scores, test, p, n_relevant=n_relevant, k=k)
    # with the propensity all equal to 1 the IPS of recall is Recall averaged over all users
    # with a relevant item, weighted by their relevant counts: never above 1
    assert rb.ips(scores, test, np.ones_like(p), n_relevant=n_relevant, k=k) <= 1 + 1e-12


@SETTINGS
@given(worlds(), st.data(), st.integers(1, 4), st.sampled_from(["quantile", "width", "cut"]))
def test_stratified_in_range_and_repeatable(world, data, n_strata, binning):
    scores, test, p = world
    k = _k(data.draw, scores.shape[1])
    table = rb.stratified(scores, test, p, n_strata=n_strata, k=k, binning=binning)
    again = rb.stratified(scores, test, p, n_strata=n_strata, k=k, binning=binning)
    pd.testing.assert_frame_equal(table, again)
    combined = table.set_index("stratum").loc["combined"]
    assert _in_unit(float(combined["value"]))
    strata = table[table["stratum"] != "combined"]
    assert len(strata) == n_strata
    values = strata["value"].to_numpy(float)
    assert all(_in_unit(v) for v in values[~np.isnan(values)])
    assert np.isclose(strata["share"].sum(), 1.0)


@SETTINGS
@given(worlds(), st.data())
def test_ure_and_kbar_in_range_and_repeatable(world, data):
    scores, test, _ = world
    k = _k(data.draw, scores.shape[1])
    ure = rb.ure_recall(scores, test, k=k)
    kbar = rb.recall_at_kbar(scores, test, k_bar=k)
    assert _in_unit(ure) and _in_unit(kbar)
    assert ure == rb.ure_recall(scores, test, k=k)
    assert kbar == rb.recall_at_kbar(scores, test, k_bar=k)
    # ranking against the whole catalogue never helps an item: URE <= Recall@K-bar
    assert ure <= kbar + 1e-12


@SETTINGS
@given(worlds(), worlds(), st.sampled_from(["full", "reg", "skew", "wtd", "wtd_h"]),
       st.floats(0.05, 1.0), st.integers(0, 2**31 - 1))
def test_intervene_subset_size_and_repeatable(world, other, strategy, size, seed):
    _, heldout, _ = world
    _, train, _ = other
    mar = train.iloc[::2]
    n_keep = len(heldout) if strategy == "full" else round(size * len(heldout))
    kw = dict(strategy=strategy, size=size, train=train, mar=mar, seed=seed)
    if n_keep == 0:
        with pytest.raises(ValueError, match="size"):
            rb.intervene(heldout, **kw)
        return
    sample = rb.intervene(heldout, **kw)
    assert len(sample) == n_keep
    assert sample.index.is_unique and sample.index.isin(heldout.index).all()
    pd.testing.assert_frame_equal(sample, heldout.loc[sample.index])
    pd.testing.assert_frame_equal(sample, rb.intervene(heldout, **kw))


finite = st.floats(-1e6, 1e6, allow_nan=False, allow_infinity=False)


@SETTINGS
@given(st.lists(st.tuples(finite, finite), min_size=2, max_size=30))
def test_kendall_tau_in_range_and_repeatable(pairs):
    x, y = np.array(pairs).T
    tau, p = rb.kendall_tau(x, y)
    assert (tau, p) == rb.kendall_tau(x, y) or (np.isnan(tau) and np.isnan(p))
    if np.unique(x).size < 2 or np.unique(y).size < 2:
        assert np.isnan(tau)  # tau-b is undefined for a constant ranking (documented)
        return
    assert -1 - 1e-12 <= tau <= 1 + 1e-12 and 0 <= p <= 1
    assert rb.kendall_tau(y, x)[0] == pytest.approx(tau)
    assert rb.kendall_tau(x, -y)[0] == pytest.approx(-tau)


# --------------------------------------------------------------------------- malformed input

def _estimators(scores, test, p, k):
    n_relevant = np.ones(scores.shape[0])
    return {
        "aoa": lambda s=scores, t=test, q=p, kk=k: rb.aoa(s, t, k=kk),
        "snips": lambda s=scores, t=test, q=p, kk=k: rb.snips(s, t, q, k=kk),
        "ips": lambda s=scores, t=test, q=p, kk=k: rb.ips(s, t, q, n_relevant=n_relevant, k=kk),
        "stratified": lambda s=scores, t=test, q=p, kk=k: rb.stratified(s, t, q, k=kk),
        "ure_recall": lambda s=scores, t=test, q=p, kk=k: rb.ure_recall(s, t, k=kk),
        "recall_at_kbar": lambda s=scores, t=test, q=p, kk=k: rb.recall_at_kbar(s, t, k_bar=kk),
    }


NAMES = ["aoa", "snips", "ips", "stratified", "ure_recall", "recall_at_kbar"]
USES_PROPENSITY = {"snips", "ips", "stratified"}


def _call(name, scores, test, p, k):
    return _estimators(scores, test, p, k)[name]


@st.composite
def bad_scores(draw, scores):
    kind = draw(st.sampled_from(["nan", "inf", "-inf", "1-D", "3-D", "text", "complex", "empty"]))
    if kind in ("nan", "inf", "-inf"):
        bad = scores.copy()
        bad.flat[draw(st.integers(0, scores.size - 1))] = float(kind)
        return bad
    return {"1-D": scores.ravel(), "3-D": scores[None], "text": scores.astype(str),
            "complex": scores.astype(complex), "empty": scores[:0]}[kind]


@SETTINGS
@given(worlds(), st.data(), st.sampled_from(NAMES))
def test_malformed_scores(world, data, name):
    scores, test, p = world
    bad = data.draw(bad_scores(scores))
    with pytest.raises(ValueError, match="scores"):
        _call(name, bad, test, p, 1)()


@st.composite
def bad_frames(draw, test, shape):
    """A held-out frame with one defect, and the word its error message must contain."""
    n_users, n_items = shape
    row = draw(st.integers(0, len(test) - 1))
    kind = draw(st.sampled_from(["user too large", "item too large", "negative user",
                                 "float ids", "text ids", "NaN rating", "inf rating",
                                 "duplicate pair", "missing column", "empty", "not a frame"]))
    bad = test.copy()
    if kind == "user too large":
        bad.loc[row, "user"] = n_users + draw(st.integers(0, 2**40))
        return bad, "user"
    if kind == "item too large":
        bad.loc[row, "item"] = n_items + draw(st.integers(0, 10))
        return bad, "item"
    if kind == "negative user":
        bad.loc[row, "user"] = -draw(st.integers(1, 10))
        return bad, "user"
    if kind == "float ids":
        column = draw(st.sampled_from(["user", "item"]))
        bad[column] = bad[column].astype(float) + draw(st.sampled_from([0.0, 0.5]))
        return bad, column
    if kind == "text ids":
        bad["item"] = bad["item"].astype(str)
        return bad, "item"
    if kind in ("NaN rating", "inf rating"):
        bad.loc[row, "rating"] = np.nan if kind == "NaN rating" else np.inf
        return bad, "rating"
    if kind == "duplicate pair":
        return pd.concat([bad, bad.iloc[[row]]], ignore_index=True), "duplicate"
    if kind == "missing column":
        return bad.drop(columns=draw(st.sampled_from(["user", "item", "rating"]))), "test"
    if kind == "empty":
        return bad.iloc[:0], "test"
    return bad.to_numpy(), "test"


@SETTINGS
@given(worlds(), st.data(), st.sampled_from(NAMES))
def test_malformed_frames(world, data, name):
    scores, test, p = world
    bad, word = data.draw(bad_frames(test, scores.shape))
    argument = "random" if name in ("ure_recall", "recall_at_kbar") else "test"
    with pytest.raises(ValueError) as err:
        _call(name, scores, bad, p, 1)()
    message = str(err.value)
    assert argument in message, message
    assert word in message or word == "test", message


@st.composite
def bad_propensities(draw, p, n_users):
    kind = draw(st.sampled_from(["zero", "negative", "nan", "inf", "too short", "too long",
                                 "wrong 2-D shape", "text", "none"]))
    bad = p.copy()
    i = draw(st.integers(0, p.size - 1))
    if kind in ("zero", "negative", "nan", "inf"):
        bad[i] = {"zero": 0.0, "negative": -0.5, "nan": np.nan, "inf": np.inf}[kind]
        return bad
    return {"too short": p[:-1], "too long": np.r_[p, 0.5],
            "wrong 2-D shape": np.tile(p, (n_users + 1, 1)), "text": p.astype(str),
            "none": None}[kind]


@SETTINGS
@given(worlds(), st.data(), st.sampled_from(sorted(USES_PROPENSITY)))
def test_malformed_propensity(world, data, name):
    scores, test, p = world
    # every item is in the test set, so a bad value at any item is used
    full = pd.DataFrame({"user": 0, "item": np.arange(scores.shape[1]), "rating": 5.0})
    bad = data.draw(bad_propensities(p, scores.shape[0]))
    with pytest.raises(ValueError, match="propensity"):
        _call(name, scores, full, bad, 1)()


@SETTINGS
@given(worlds(), st.data(), st.sampled_from(NAMES))
def test_malformed_cutoff(world, data, name):
    scores, test, p = world
    n_items = scores.shape[1]
    k = data.draw(st.one_of(st.integers(-5, 0), st.integers(n_items + 1, n_items + 10**6),
                            st.sampled_from([1.5, float("nan"), True, "5", [3]])))
    if name == "recall_at_kbar" and isinstance(k, int) and not isinstance(k, bool) and k > 0:
        return  # K-bar above a user's random items is valid (every relevant item counts)
    with pytest.raises(ValueError, match="k_bar" if name == "recall_at_kbar" else "k"):
        _call(name, scores, test, p, k)()


@SETTINGS
@given(worlds(), st.data())
def test_malformed_n_relevant(world, data):
    scores, test, p = world
    n_users = scores.shape[0]
    kind = data.draw(st.sampled_from(["short", "long", "negative", "fraction", "nan", "text"]))
    good = np.full(n_users, 3.0)
    bad = {"short": good[:-1], "long": np.r_[good, 3], "negative": -good,
           "fraction": good + 0.5, "nan": np.full(n_users, np.nan),
           "text": good.astype(str)}[kind]
    with pytest.raises(ValueError, match="n_relevant"):
        rb.ips(scores, test, p, n_relevant=bad, k=1)


@SETTINGS
@given(worlds(), st.data())
def test_malformed_intervene(world, data):
    _, heldout, _ = world
    kind = data.draw(st.sampled_from(["size", "strategy", "seed", "train", "mar", "heldout"]))
    kw = dict(strategy="wtd", size=0.5, train=heldout, mar=heldout, seed=0)
    if kind == "size":
        kw["size"] = data.draw(st.one_of(st.floats(-10, 0), st.floats(1.0001, 10),
                                         st.just(float("nan"))))
    elif kind == "strategy":
        kw["strategy"] = data.draw(st.sampled_from(["WTD ", "random", "", "popularity"]))
    elif kind == "seed":
        kw["seed"] = data.draw(st.sampled_from([None, -1, 1.5, "0"]))
    elif kind in ("train", "mar"):
        kw[kind] = data.draw(st.sampled_from([None, heldout.iloc[:0],
                                              heldout.drop(columns="item")]))
    else:
        bad = data.draw(st.sampled_from([
            heldout.assign(user=-1), heldout.assign(item=heldout["item"] + 0.5),
            heldout.drop(columns="user"), heldout.iloc[:0], heldout.to_numpy()]))
        with pytest.raises(ValueError, match="heldout"):
            rb.intervene(bad, **kw)
        return
    with pytest.raises(ValueError, match=kind):
        rb.intervene(heldout, **kw)


@SETTINGS
@given(st.lists(finite, min_size=2, max_size=10), st.data())
def test_malformed_kendall_tau(x, data):
    x = np.array(x)
    kind = data.draw(st.sampled_from(["length", "nan", "inf", "2-D", "one pair", "text",
                                      "keys", "keyed and not"]))
    y = x[::-1].copy()
    if kind == "length":
        y = np.r_[y, 1.0]
    elif kind in ("nan", "inf"):
        y[data.draw(st.integers(0, y.size - 1))] = np.nan if kind == "nan" else np.inf
    elif kind == "2-D":
        x, y = x[None], y[None]
    elif kind == "one pair":
        x, y = x[:1], y[:1]
    elif kind == "text":
        y = y.astype(str)
    elif kind == "keys":
        x = pd.Series(x, index=[f"m{i}" for i in range(x.size)])
        y = pd.Series(y, index=[f"n{i}" for i in range(y.size)])
    else:
        x = pd.Series(x)
    with pytest.raises(ValueError, match=r"\bx\b|\by\b"):
        rb.kendall_tau(x, y)
