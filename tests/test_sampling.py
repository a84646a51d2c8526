"""Tests of recbias_tutorial.sampling (interventions FULL, REG, SKEW, WTD, WTD_H)."""

import numpy as np
import pandas as pd
import pytest
import scipy.integrate
import scipy.stats

from recbias_tutorial.sampling import STRATEGIES, intervene, intervention_weights

N_USERS, N_ITEMS = 6, 10


@pytest.fixture(scope="module")
def data():
    """30 distinct held-out pairs, a popularity-skewed MNAR train log and a uniform MAR log."""
    rng = np.random.default_rng(42)
    pairs = rng.choice(N_USERS * N_ITEMS, size=30, replace=False)
    heldout = pd.DataFrame({"user": pairs // N_ITEMS, "item": pairs % N_ITEMS,
                            "rating": rng.integers(1, 6, 30).astype(float)})
    item_p = 1.0 / np.arange(1, N_ITEMS + 1) ** 1.2
    user_p = np.arange(1, N_USERS + 1, dtype=float)
    train = pd.DataFrame({"user": rng.choice(N_USERS, 400, p=user_p / user_p.sum()),
                          "item": rng.choice(N_ITEMS, 400, p=item_p / item_p.sum()),
                          "rating": 4.0})
    mar = pd.DataFrame({"user": rng.integers(0, N_USERS, 120), "item": rng.integers(0, N_ITEMS, 120),
                        "rating": 3.0})
    return heldout, train, mar


def kwargs_for(strategy, train, mar):
    return {"train": None if strategy in ("full", "reg") else train,
            "mar": mar if strategy == "wtd" else None}


def successive_inclusion(w, m):
    """Exact inclusion probabilities of successive sampling (= Efraimidis-Spirakis keys).

    Row k is drawn iff its key E_k / w_k (Exp with rate w_k) is among the m smallest:
    pi_k = int_0^inf w_k exp(-w_k t) P(#{j != k : key_j < t} <= m - 1) dt, where the count is
    Poisson-binomial with success probabilities 1 - exp(-w_j t) (computed by a DP).
    """
    w = np.asarray(w, dtype=float) / np.mean(w)
    n = w.size

    def integrand(t):
        q = 1.0 - np.exp(-w * t)
        dist = np.zeros((n, m))
        dist[:, 0] = 1.0
        for j in range(n):
            new = dist * (1.0 - q[j])
            new[:, 1:] += dist[:, :-1] * q[j]
            new[j] = dist[j]  # row k = j: its own key does not count
            dist = new
        return w * np.exp(-w * t) * dist.sum(axis=1)

    return scipy.integrate.quad_vec(integrand, 0, np.inf, epsabs=1e-12, epsrel=1e-10)[0]


def inclusion_counts(heldout, n_draws, seed, **kw):
    gen = np.random.default_rng(seed)
    counts = np.zeros(len(heldout))
    for _ in range(n_draws):
        counts[intervene(heldout, seed=gen, **kw).index.to_numpy()] += 1
    return counts


# ----------------------------------------------------------------------------- weights
def test_successive_inclusion_helper_is_right():
    w = np.array([1.0, 2.0, 3.0, 4.0, 10.0])
    p = w / w.sum()
    np.testing.assert_allclose(successive_inclusion(w, 1), p, atol=1e-9)
    # m = 2 closed form: pi_k = p_k + sum_{j != k} p_j p_k / (1 - p_j)
    closed = p + np.array([sum(p[j] * p[k] / (1 - p[j]) for j in range(5) if j != k) for k in range(5)])
    np.testing.assert_allclose(successive_inclusion(w, 2), closed, atol=1e-9)
    np.testing.assert_allclose(successive_inclusion(w, 3).sum(), 3, atol=1e-8)


def test_wtd_weights_match_the_definition(data):
    heldout, train, mar = data
    w = intervention_weights(heldout, strategy="wtd", train=train, mar=mar, item_power=2.0, smoothing=0)
    # all held-out ids occur in train and mar here, so smoothing=0 is the paper's formula
    p_mnar_u = train.user.value_counts(normalize=True)
    p_mnar_i = train.item.value_counts(normalize=True)
    p_mar_u = mar.user.value_counts(normalize=True)
    p_mar_i = mar.item.value_counts(normalize=True)
    w_u = (p_mar_u / p_mnar_u)[heldout.user].to_numpy()
    w_i = (p_mar_i / p_mnar_i)[heldout.item].to_numpy()
    np.testing.assert_allclose(w, w_u * w_i**2, rtol=1e-12)
    w_h = intervention_weights(heldout, strategy="wtd_h", train=train, item_power=1.0, smoothing=0)
    expected_h = ((1 / N_USERS) / p_mnar_u[heldout.user].to_numpy()) * (
        (1 / N_ITEMS) / p_mnar_i[heldout.item].to_numpy())
    np.testing.assert_allclose(w_h, expected_h, rtol=1e-12)


def test_item_power_is_an_exponent_of_the_item_weight(data):
    heldout, train, mar = data
    w = {p: intervention_weights(heldout, strategy="wtd", train=train, mar=mar, item_power=p)
         for p in (0, 1, 2)}
    np.testing.assert_allclose(w[2] * w[0], w[1] ** 2, rtol=1e-12)
    assert not np.allclose(w[2], w[1])


def test_skew_weights_are_inverse_item_popularity(data):
    heldout, train, _ = data
    w = intervention_weights(heldout, strategy="skew", train=train, smoothing=0)
    counts = train.item.value_counts()[heldout.item].to_numpy()
    np.testing.assert_allclose(w, 1.0 / counts)
    w1 = intervention_weights(heldout, strategy="skew", train=train)  # default smoothing=1
    np.testing.assert_allclose(w1, 1.0 / (counts + 1))


@pytest.mark.parametrize("strategy", ["full", "reg"])
def test_full_and_reg_weights_are_uniform(data, strategy):
    heldout, _, _ = data
    np.testing.assert_array_equal(intervention_weights(heldout, strategy=strategy), np.ones(len(heldout)))


def test_absent_ids_get_laplace_smoothed_finite_weights():
    heldout = pd.DataFrame({"user": [0, 1, 2, 3], "item": [0, 1, 2, 3], "rating": 4.0})
    # user 2 and item 2 are absent from train; user 3 and item 3 are absent from mar
    train = pd.DataFrame({"user": [0, 0, 0, 1, 3], "item": [0, 0, 1, 1, 3], "rating": 4.0})
    mar = pd.DataFrame({"user": [0, 1, 2], "item": [0, 1, 2], "rating": 4.0})
    w = intervention_weights(heldout, strategy="wtd", train=train, mar=mar, item_power=1.0)
    assert np.all(np.isfinite(w)) and np.all(w > 0)
    # id space = {0, 1, 2, 3} for users and items; P = (count + 1) / (n_rows + 1 * 4)
    p_mnar_u = (np.array([3, 1, 0, 1]) + 1) / (5 + 4)
    p_mar_u = (np.array([1, 1, 1, 0]) + 1) / (3 + 4)
    p_mnar_i = (np.array([2, 2, 0, 1]) + 1) / (5 + 4)
    p_mar_i = (np.array([1, 1, 1, 0]) + 1) / (3 + 4)
    np.testing.assert_allclose(w, (p_mar_u / p_mnar_u) * (p_mar_i / p_mnar_i), rtol=1e-12)
    # deterministic: same inputs, same weights; sampling works with absent ids
    again = intervention_weights(heldout, strategy="wtd", train=train, mar=mar, item_power=1.0)
    np.testing.assert_array_equal(w, again)
    assert len(intervene(heldout, strategy="wtd", size=0.5, train=train, mar=mar, seed=0)) == 2
    # skew: an item absent from train has count 0 -> weight 1 / (0 + smoothing)
    np.testing.assert_allclose(intervention_weights(heldout, strategy="skew", train=train),
                               1 / (np.array([2, 2, 0, 1]) + 1.0))
    np.testing.assert_allclose(intervention_weights(heldout, strategy="skew", train=train, smoothing=0.5),
                               1 / (np.array([2, 2, 0, 1]) + 0.5))


def _notebook_weights(heldout, train, mar, use_ideal, users, items):
    """The authors' notebook (cdiego89phd/wtd-debiasing-RS-eval, Debiasing Intervention),
    transcribed: calculate_p_u_o / calculate_p_i_o (a zero share becomes 0.0001),
    exact_weight_calculation, norm, then P(S|u,i) = w_u * w_i of each held-out pair."""
    def shares(df, col, ids, ideal):
        out = {}
        for x in ids:
            out[x] = 1 / len(ids) if ideal else len(df[df[col] == x]) / len(df)
            if out[x] == 0:
                out[x] = 0.0001
        return out

    def weights(col, ids):
        p_mar, p_mnar = shares(mar, col, ids, use_ideal), shares(train, col, ids, False)
        w = {x: p_mar[x] / p_mnar[x] for x in p_mnar}
        total = sum(w.values())
        return {x: v / total for x, v in w.items()}

    wu, wi = weights("user", users), weights("item", items)
    return np.array([wu[u] * wi[i] for u, i in zip(heldout["user"], heldout["item"])])


def test_notebook_smoothing_is_the_authors_rule():
    """smoothing='notebook' gives the notebook's weights up to one constant (sampling
    probabilities are the same), for WTD and WTD_H with w_u * w_i, ids absent from the log
    and from the MAR weight split included."""
    heldout = pd.DataFrame({"user": [0, 1, 2, 3, 1], "item": [0, 1, 2, 3, 3], "rating": 4.0})
    train = pd.DataFrame({"user": [0, 0, 0, 1, 3, 2], "item": [0, 0, 1, 1, 3, 3], "rating": 4.0})
    mar = pd.DataFrame({"user": [0, 1, 2], "item": [0, 1, 1], "rating": 4.0})  # 3 absent
    ids = [0, 1, 2, 3]
    for strategy, ideal in (("wtd", False), ("wtd_h", True)):
        ours = intervention_weights(heldout, strategy=strategy, train=train, mar=mar,
                                    item_power=1.0, smoothing="notebook")
        theirs = _notebook_weights(heldout, train, mar, ideal, ids, ids)
        np.testing.assert_allclose(ours / ours.sum(), theirs / theirs.sum(), rtol=1e-12)
        add_one = intervention_weights(heldout, strategy=strategy, train=train, mar=mar,
                                       item_power=1.0)
        if strategy == "wtd":  # item 2 and user 3 absent from mar: the two rules differ
            assert not np.allclose(add_one / add_one.sum(), theirs / theirs.sum())
    # skew: 1 / count, an item absent from train gets 0.5 (the notebook's uniform draw's mean)
    skew = intervention_weights(heldout, strategy="skew", train=train.iloc[:5],
                                smoothing="notebook")
    np.testing.assert_allclose(skew, [0.5, 0.5, 0.5, 1.0, 1.0])
    with pytest.raises(ValueError, match="smoothing"):
        intervention_weights(heldout, strategy="wtd", train=train, mar=mar, smoothing="Notebook")


def test_the_protocol_passes_the_smoothing_to_its_test_sets():
    from recbias_tutorial import simulate
    from recbias_tutorial.replications import carraro2022

    split = carraro2022.split_feedback(simulate(80, 60, seed=0), seed=0)
    assert (~split.heldout["user"].isin(split.weights["user"])).any()  # absent from D_w
    a, b = (carraro2022.draw_test_sets(split, strategies=("wtd",), sizes=(0.3,), smoothing=s)
            for s in (1.0, "notebook"))
    assert not np.array_equal(a[("wtd", 0.3)], b[("wtd", 0.3)])


def test_smoothing_zero_rejects_absent_ids():
    heldout = pd.DataFrame({"user": [0, 1], "item": [0, 1], "rating": 4.0})
    train = pd.DataFrame({"user": [0, 1], "item": [0, 0], "rating": 4.0})  # item 1 absent
    mar = pd.DataFrame({"user": [0], "item": [0], "rating": 4.0})  # user 1 absent
    with pytest.raises(ValueError, match="smoothing=0.*item.*train"):
        intervention_weights(heldout, strategy="skew", train=train, smoothing=0)
    with pytest.raises(ValueError, match="smoothing=0.*train"):
        intervention_weights(heldout, strategy="wtd_h", train=train, smoothing=0)
    train_ok = pd.DataFrame({"user": [0, 1], "item": [0, 1], "rating": 4.0})
    with pytest.raises(ValueError, match="smoothing=0.*user.*mar"):
        intervention_weights(heldout, strategy="wtd", train=train_ok, mar=mar, smoothing=0)


def test_wtd_h_on_a_uniform_log_behaves_like_reg(data):
    heldout, _, _ = data
    grid = np.arange(N_USERS * N_ITEMS)  # every user and every item equally often
    train = pd.DataFrame({"user": grid // N_ITEMS, "item": grid % N_ITEMS, "rating": 4.0})
    w = intervention_weights(heldout, strategy="wtd_h", train=train)
    np.testing.assert_allclose(w, np.full(len(heldout), w[0]), rtol=1e-12)
    for seed in range(5):
        a = intervene(heldout, strategy="wtd_h", size=0.4, train=train, seed=seed)
        b = intervene(heldout, strategy="reg", size=0.4, seed=seed)
        pd.testing.assert_frame_equal(a, b)


# ----------------------------------------------------------------------------- samples
def test_full_returns_the_heldout_set_unchanged(data):
    heldout, _, _ = data
    out = intervene(heldout, strategy="full", size=0.3, seed=1)
    pd.testing.assert_frame_equal(out, heldout)
    assert out is not heldout
    out.loc[out.index[0], "rating"] = -1.0
    assert heldout["rating"].iloc[0] != -1.0


@pytest.mark.parametrize("strategy", [s for s in STRATEGIES if s != "full"])
@pytest.mark.parametrize("size", [1 / 30, 0.1, 0.33, 0.5, 0.9, 1.0])
def test_exact_size_distinct_rows_in_order(data, strategy, size):
    heldout, train, mar = data
    out = intervene(heldout, strategy=strategy, size=size, seed=3, **kwargs_for(strategy, train, mar))
    assert len(out) == round(size * len(heldout))
    assert out.index.is_unique and out.index.is_monotonic_increasing
    pd.testing.assert_frame_equal(out, heldout.loc[out.index])
    assert not out.duplicated(["user", "item"]).any()


@pytest.mark.parametrize("strategy", [s for s in STRATEGIES if s != "full"])
def test_seed_determinism(data, strategy):
    heldout, train, mar = data
    kw = dict(strategy=strategy, size=0.5, **kwargs_for(strategy, train, mar))
    a, b = intervene(heldout, seed=7, **kw), intervene(heldout, seed=7, **kw)
    pd.testing.assert_frame_equal(a, b)
    c = intervene(heldout, seed=np.random.default_rng(7), **kw)
    pd.testing.assert_frame_equal(a, c)
    draws = {tuple(intervene(heldout, seed=s, **kw).index) for s in range(10)}
    assert len(draws) > 1


def test_single_draw_inclusion_is_proportional_to_weights(data):
    """m = 1: P(row k drawn) = w_k / sum(w) exactly; 4-SE band per row + chi-square fit."""
    heldout, train, mar = data
    kw = dict(strategy="wtd", size=1 / 30, train=train, mar=mar, item_power=2.0)
    p = intervention_weights(heldout, **{k: v for k, v in kw.items() if k != "size"})
    p = p / p.sum()
    assert p.max() / p.min() > 5  # the weights are far from uniform, so the test has teeth
    n_draws = 2000
    counts = inclusion_counts(heldout, n_draws, seed=123, **kw)
    assert counts.sum() == n_draws
    se = np.sqrt(p * (1 - p) / n_draws)
    assert np.all(np.abs(counts / n_draws - p) <= 4 * se)
    assert scipy.stats.chisquare(counts, n_draws * p).pvalue > 1e-3


def test_multi_draw_inclusion_follows_successive_sampling(data):
    """m = 10: inclusion probabilities are those of successive sampling (not m * w / sum(w))."""
    heldout, train, mar = data
    kw = dict(strategy="wtd", size=10 / 30, train=train, mar=mar, item_power=2.0)
    w = intervention_weights(heldout, **{k: v for k, v in kw.items() if k != "size"})
    pi = successive_inclusion(w, 10)
    assert np.isclose(pi.sum(), 10)
    order = np.argsort(w)
    assert np.all(np.diff(pi[order]) >= -1e-12)  # monotone in the weight
    assert pi.max() < 10 * w.max() / w.sum()  # flatter than proportional-to-size
    n_draws = 2000
    freq = inclusion_counts(heldout, n_draws, seed=321, **kw) / n_draws
    se = np.sqrt(pi * (1 - pi) / n_draws)
    assert np.all(np.abs(freq - pi) <= 4 * se + 1e-12)


# ----------------------------------------------------------------------------- errors
def test_errors(data):
    heldout, train, mar = data
    valid = r"strategy must be one of \('full', 'reg', 'skew', 'wtd', 'wtd_h'\)"
    with pytest.raises(ValueError, match=valid):
        intervene(heldout, strategy="random", size=0.5, seed=0)
    for bad in (0, 0.0, -0.1, 1.5, True, "0.5", None, float("nan")):
        with pytest.raises(ValueError, match="size"):
            intervene(heldout, strategy="reg", size=bad, seed=0)
    with pytest.raises(ValueError, match="size"):
        intervene(heldout, strategy="full", size=2.0, seed=0)
    for strategy in ("skew", "wtd", "wtd_h"):
        with pytest.raises(ValueError, match="train is required"):
            intervene(heldout, strategy=strategy, size=0.5, mar=mar, seed=0)
        with pytest.raises(ValueError, match="train is required"):
            intervention_weights(heldout, strategy=strategy, mar=mar)
    with pytest.raises(ValueError, match="mar is required"):
        intervene(heldout, strategy="wtd", size=0.5, train=train, seed=0)
    with pytest.raises(ValueError, match=r"heldout is missing column\(s\) \['item'\]"):
        intervene(heldout.drop(columns="item"), strategy="reg", size=0.5, seed=0)
    with pytest.raises(ValueError, match=r"train is missing column\(s\) \['user'\]"):
        intervene(heldout, strategy="skew", size=0.5, train=train.drop(columns="user"), seed=0)
    with pytest.raises(ValueError, match=r"mar is missing column"):
        intervene(heldout, strategy="wtd", size=0.5, train=train, mar=mar[["user"]], seed=0)
    with pytest.raises(ValueError, match="heldout is empty"):
        intervene(heldout.iloc[:0], strategy="reg", size=0.5, seed=0)
    with pytest.raises(ValueError, match="train is empty"):
        intervene(heldout, strategy="skew", size=0.5, train=train.iloc[:0], seed=0)
    with pytest.raises(ValueError, match="heldout must be a pandas DataFrame"):
        intervene(heldout.to_numpy(), strategy="reg", size=0.5, seed=0)
    with pytest.raises(ValueError, match=r"heldout.user must hold integer ids"):
        intervene(heldout.astype({"user": float}), strategy="reg", size=0.5, seed=0)
    with pytest.raises(ValueError, match="negative ids"):
        intervene(heldout.assign(item=-heldout.item - 1), strategy="reg", size=0.5, seed=0)
    for bad in (-1.0, float("inf")):
        with pytest.raises(ValueError, match="item_power"):
            intervene(heldout, strategy="wtd", size=0.5, train=train, mar=mar, item_power=bad, seed=0)
    with pytest.raises(ValueError, match="smoothing"):
        intervention_weights(heldout, strategy="skew", train=train, smoothing=-1)
    with pytest.raises(ValueError, match=r"round\(0.01 \* 30\) = 0 rows"):
        intervene(heldout, strategy="reg", size=0.01, seed=0)
    with pytest.raises(ValueError, match="seed"):
        intervene(heldout, strategy="reg", size=0.5, seed=1.5)


def test_random_split_partitions_rows():
    from recbias_tutorial.data import random_split

    df = pd.DataFrame({"user": np.arange(1000), "item": 0, "rating": 1.0})
    parts = random_split(df, (0.6, 0.4), seed=3)
    assert [len(p) for p in parts] == [600, 400]
    assert sorted(np.concatenate([p["user"] for p in parts]).tolist()) == list(range(1000))
    again = random_split(df, (0.6, 0.4), seed=3)
    assert all(a.equals(b) for a, b in zip(parts, again))
    with pytest.raises(ValueError, match="fractions"):
        random_split(df, (0.6, 0.6), seed=0)
    with pytest.raises(ValueError, match="seed"):
        random_split(df, (0.5, 0.5), seed=None)
