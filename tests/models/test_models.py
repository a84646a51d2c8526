"""models / zoo: id remapping, unknown users and items, the baselines, vectorised scorers
(exactly Cornac's ``score``), the model zoo, Cornac's own evaluation, input validation."""

from __future__ import annotations

import cornac
import numpy as np
import pandas as pd
import pytest
from cornac.exception import ScoreException
from cornac.models import Recommender

from recbias_tutorial.models import (
    DEFAULT_FAMILIES,
    FAMILIES,
    UNKNOWN_USER_SCORE,
    AvgRating,
    PosPop,
    RandomScores,
    batch_scorer,
    fit_scores,
    iter_scores,
    model_zoo,
    score_models,
    to_cornac_dataset,
)

N_USERS, N_ITEMS = 40, 30
ABSENT_USERS = (37, 38, 39)
ABSENT_ITEMS = (27, 28, 29)
M = cornac.models


def _frame(seed: int = 0, n_rows: int = 320) -> pd.DataFrame:
    """Random explicit feedback; the last users and items never appear."""
    rng = np.random.default_rng(seed)
    users = rng.integers(0, N_USERS - len(ABSENT_USERS), size=n_rows * 2)
    items = rng.integers(0, N_ITEMS - len(ABSENT_ITEMS), size=n_rows * 2)
    frame = pd.DataFrame({"user": users, "item": items}).drop_duplicates().head(n_rows)
    frame["rating"] = rng.integers(1, 6, size=len(frame)).astype(float)
    return frame.reset_index(drop=True)


@pytest.fixture(scope="module")
def train() -> pd.DataFrame:
    return _frame()


def _relabel(frame: pd.DataFrame, seed: int = 1):
    """Same rows, ids replaced by a random bijection (Cornac then builds the same indices)."""
    rng = np.random.default_rng(seed)
    pu, pi = rng.permutation(N_USERS), rng.permutation(N_ITEMS)
    return frame.assign(user=pu[frame["user"]], item=pi[frame["item"]]), pu, pi


def _fit(model, frame, **kw):
    return fit_scores(model, frame, n_users=N_USERS, n_items=N_ITEMS, **{"seed": 0, **kw})


# ----------------------------------------------------------------------------------------
# id remapping
# ----------------------------------------------------------------------------------------
RELABEL_MODELS = {
    "MostPop": lambda: M.MostPop(),
    "AvgRating": lambda: AvgRating(),
    "PosPop": lambda: PosPop(),
    "BPR": lambda: M.BPR(k=5, max_iter=20, learning_rate=0.05, seed=3),
    "MF": lambda: M.MF(k=4, max_iter=10, seed=3),
    "EASE": lambda: M.EASE(lamb=10, verbose=False),
    "ItemKNN": lambda: M.ItemKNN(k=3, verbose=False, seed=3),
    "Random": lambda: RandomScores(seed=3),
}


@pytest.mark.parametrize("name", list(RELABEL_MODELS))
def test_relabelled_ids_permute_rows_and_columns(train, name):
    """Relabelling ids (same row order, hence same Cornac indices, same seeded fit) must
    move each score to the relabelled (user, item): exact even for BPR."""
    scores = _fit(RELABEL_MODELS[name](), train)
    relabelled, pu, pi = _relabel(train)
    moved = _fit(RELABEL_MODELS[name](), relabelled)
    np.testing.assert_array_equal(moved[np.ix_(pu, pi)], scores)


@pytest.mark.parametrize("name", ["MostPop", "AvgRating", "PosPop", "EASE"])
def test_order_free_models_do_not_depend_on_row_order(train, name):
    """Relabel *and* shuffle rows: Cornac's internal indices change completely."""
    scores = _fit(RELABEL_MODELS[name](), train)
    relabelled, pu, pi = _relabel(train, seed=5)
    shuffled = relabelled.sample(frac=1.0, random_state=7)
    moved = _fit(RELABEL_MODELS[name](), shuffled)
    np.testing.assert_allclose(moved[np.ix_(pu, pi)], scores, rtol=1e-9, atol=1e-12)


def test_dataset_uses_our_ids_as_raw_ids():
    frame = pd.DataFrame({"user": [5, 2, 5], "item": [3, 3, 0], "rating": [1.0, 2.0, 3.0]})
    ds = to_cornac_dataset(frame, n_users=6, n_items=4, seed=0)
    assert dict(ds.uid_map) == {5: 0, 2: 1}
    assert dict(ds.iid_map) == {3: 0, 0: 1}


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_dataset_equals_cornacs_from_uir(seed):
    """Built without from_uir's loop over the rows, but equal to it in every attribute a
    model reads, and the same fit."""
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame({"user": rng.integers(0, 500, 3000), "item": rng.integers(0, 80, 3000)})
    frame = frame.drop_duplicates().reset_index(drop=True)
    frame["rating"] = rng.integers(1, 6, len(frame)) * (0.5 if seed == 1 else 1.0)
    ours = to_cornac_dataset(frame, n_users=500, n_items=80, seed=seed)
    theirs = cornac.data.Dataset.from_uir(list(zip(frame.user.tolist(), frame.item.tolist(),
                                                   frame.rating.tolist())), seed=seed)
    assert list(ours.uid_map.items()) == list(theirs.uid_map.items())  # same order
    assert list(ours.iid_map.items()) == list(theirs.iid_map.items())
    assert all(type(k) is int for k in ours.uid_map) and all(type(k) is int for k in ours.iid_map)
    for a, b in zip(ours.uir_tuple, theirs.uir_tuple):
        assert a.dtype == b.dtype
        np.testing.assert_array_equal(a, b)
    for attr in ("num_users", "num_items", "num_ratings", "min_rating", "max_rating",
                 "global_mean"):
        assert getattr(ours, attr) == getattr(theirs, attr), attr
    assert ours.timestamps is None and theirs.timestamps is None
    assert (ours.csr_matrix != theirs.csr_matrix).nnz == 0
    fitted = [M.BPR(k=4, max_iter=5, seed=1).fit(d) for d in (ours, theirs)]
    np.testing.assert_array_equal(fitted[0].u_factors, fitted[1].u_factors)
    draws = [list(d.uij_iter(batch_size=64, shuffle=True)) for d in (ours, theirs)]
    for x, y in zip(draws[0], draws[1]):
        for a, b in zip(x, y):
            np.testing.assert_array_equal(a, b)


# ----------------------------------------------------------------------------------------
# the non-personalised baselines against pandas
# ----------------------------------------------------------------------------------------
def _seen_items(frame):
    return np.sort(frame["item"].unique())


def test_mostpop_avgrating_pospop_match_pandas(train):
    seen = _seen_items(train)
    counts = train.groupby("item").size()
    means = train.groupby("item")["rating"].mean()
    positives = train.assign(pos=train["rating"] >= 4).groupby("item")["pos"].sum()
    for model, expected in ((M.MostPop(), counts), (AvgRating(), means), (PosPop(), positives)):
        scores = _fit(model, train)
        for u in (0, 5, 17):  # the same row for every training user
            np.testing.assert_allclose(scores[u, seen], expected.loc[seen].to_numpy(float))


def test_pospop_threshold_is_a_parameter(train):
    strict = _fit(PosPop(threshold=5.0), train)
    expected = train.assign(pos=train["rating"] >= 5).groupby("item")["pos"].sum()
    seen = _seen_items(train)
    np.testing.assert_array_equal(strict[0, seen], expected.loc[seen].to_numpy(float))
    with pytest.raises(ValueError, match="threshold"):
        PosPop(threshold=float("nan"))


# ----------------------------------------------------------------------------------------
# unknown users / items, non-finite scores
# ----------------------------------------------------------------------------------------
UNKNOWN_MODELS = [
    M.MostPop(), AvgRating(), PosPop(), RandomScores(seed=0), M.GlobalAvg(),
    M.BPR(k=4, max_iter=5, seed=0), M.MF(k=4, max_iter=5, seed=0), M.PMF(k=3, max_iter=3, seed=0),
    M.EASE(lamb=5, verbose=False), M.ItemKNN(k=4, verbose=False, seed=0),
    M.UserKNN(k=4, verbose=False, seed=0), M.BaselineOnly(max_iter=3, seed=0),
]


@pytest.mark.parametrize("model", UNKNOWN_MODELS, ids=lambda m: m.name)
def test_unknown_items_rank_last_unknown_users_tie(train, model):
    scores = _fit(model, train)
    assert scores.shape == (N_USERS, N_ITEMS) and scores.dtype == np.float64
    assert np.isfinite(scores).all()
    seen = _seen_items(train)
    unseen = np.setdiff1d(np.arange(N_ITEMS), seen)
    np.testing.assert_array_equal(unseen, ABSENT_ITEMS)
    known_users = np.setdiff1d(np.arange(N_USERS), ABSENT_USERS)
    low = scores[np.ix_(known_users, seen)].min(axis=1)
    high_unseen = scores[np.ix_(known_users, unseen)].max(axis=1)
    assert (high_unseen < low).all()
    np.testing.assert_array_equal(scores[list(ABSENT_USERS)], UNKNOWN_USER_SCORE)


class _Broken(Recommender):
    """Returns NaN / inf for some items and raises ScoreException for Cornac user 0."""

    def __init__(self, name="Broken"):
        super().__init__(name=name)

    def score(self, user_idx, item_idx=None):
        if user_idx == 0:
            raise ScoreException("no scores for this user")
        s = np.arange(self.num_items, dtype=float)
        s[0], s[1], s[2] = np.nan, np.inf, -np.inf
        return s if item_idx is None else s[item_idx]


def test_non_finite_scores_and_score_exceptions_are_handled(train):
    model = _Broken()
    scores = _fit(model, train)
    assert np.isfinite(scores).all()
    ds = to_cornac_dataset(train, n_users=N_USERS, n_items=N_ITEMS, seed=0)
    ours = {v: k for k, v in ds.iid_map.items()}
    first_user = next(iter(ds.uid_map))  # Cornac user 0 raised ScoreException
    assert np.ptp(scores[first_user]) == 0
    other = int(train["user"].iloc[np.flatnonzero(train["user"] != first_user)[0]])
    row = scores[other]
    bad = [ours[0], ours[1], ours[2], *ABSENT_ITEMS]
    good = np.setdiff1d(np.arange(N_ITEMS), bad)
    assert row[bad].max() < row[good].min()  # NaN and +-inf become "below everything"
    assert len(set(row[bad])) == 1


def test_float32_output(train):
    scores = _fit(AvgRating(), train, dtype=np.float32)
    assert scores.dtype == np.float32 and np.isfinite(scores).all()


def test_hpf_is_silenced(train, capsys):
    _fit(M.HPF(k=2, max_iter=2, seed=0), train)
    assert capsys.readouterr().out == ""


# ----------------------------------------------------------------------------------------
# vectorised scorers reproduce Cornac's score
# ----------------------------------------------------------------------------------------
def _tie_heavy(seed=3):
    """Small, sparse, few rating values: Cornac's co-rated cosine gives many ties (sim = 1)."""
    return _frame(seed=seed, n_rows=180)


SCORER_MODELS = [
    M.MF(k=4, max_iter=5, seed=0), M.SVD(k=4, max_iter=5, seed=0),
    M.MF(k=3, use_bias=False, seed=0),
    M.NMF(k=4, max_iter=5, seed=0),
    M.BPR(k=4, max_iter=5, seed=0), M.WBPR(k=4, max_iter=5, seed=0),
    M.MMMF(k=4, max_iter=5, seed=0),
    M.PMF(k=4, max_iter=5, seed=0), M.HPF(k=3, max_iter=3, seed=0), M.EASE(lamb=3, verbose=False),
    M.EASE(lamb=3, posB=False, verbose=False), M.BaselineOnly(max_iter=3, seed=0), M.MostPop(),
    M.GlobalAvg(), AvgRating(), PosPop(), RandomScores(seed=0),
    *[M.ItemKNN(k=k, verbose=False, seed=0) for k in (1, 2, 3, 5, 50)],
    M.ItemKNN(k=3, similarity="pearson", verbose=False, seed=0),  # negative similarities
    M.ItemKNN(k=2, mean_centered=True, amplify=2.0, verbose=False, seed=0),
    *[M.UserKNN(k=k, verbose=False, seed=0) for k in (1, 2, 3, 5, 50)],
    M.UserKNN(k=3, similarity="pearson", verbose=False, seed=0),
    M.UserKNN(k=2, mean_centered=True, amplify=2.0, verbose=False, seed=0),
]


@pytest.mark.parametrize("model", SCORER_MODELS, ids=lambda m: f"{m.name}-{getattr(m, 'k', '')}")
def test_batch_scorer_equals_cornac_score(model):
    ds = to_cornac_dataset(_tie_heavy(), n_users=N_USERS, n_items=N_ITEMS, seed=0)
    with np.errstate(all="ignore"):
        model.fit(ds)
    fast = batch_scorer(model)
    assert fast is not None
    users = np.arange(ds.num_users)
    expected = np.stack([np.asarray(model.score(int(u)), float).ravel() for u in users])
    got = np.asarray(fast(users), float)
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6)


def test_nmf_with_biases_is_scored(train):
    """Cornac 3.0.1's own NMF(use_bias=True).score fails under NumPy 2 (float64 global mean
    promotes the float32 buffer passed to fast_dot); the vectorised scorer does not."""
    model = M.NMF(k=3, max_iter=5, use_bias=True, seed=0)
    scores = _fit(model, train)
    ds = to_cornac_dataset(train, n_users=N_USERS, n_items=N_ITEMS, seed=0)
    u, i = int(train["user"].iloc[0]), int(train["item"].iloc[0])
    cu, ci = ds.uid_map[u], ds.iid_map[i]
    expected = (model.global_mean + model.u_biases[cu] + model.i_biases[ci]
                + model.u_factors[cu] @ model.i_factors[ci])
    assert scores[u, i] == pytest.approx(expected, rel=1e-5)


class _PerUserUserKNN(M.UserKNN):
    """Cornac's UserKNN with ``score`` overridden: no batch scorer, Cornac's own scores."""

    def score(self, user_idx, item_idx=None):
        return super().score(user_idx, item_idx)


def test_unknown_families_use_the_per_user_loop(train):
    assert batch_scorer(M.SKMeans(k=3)) is None
    assert batch_scorer(_Broken()) is None
    assert batch_scorer(_PerUserUserKNN(k=3, verbose=False)) is None  # score overridden


# ----------------------------------------------------------------------------------------
# vectorised KNN == Cornac to 1e-12, on tie-heavy data
# ----------------------------------------------------------------------------------------
def _feedback(n_users, n_items, n, *, seed, integer):
    rng = np.random.default_rng(seed)
    pairs = rng.choice(n_users * n_items, size=n, replace=False)
    ratings = rng.integers(1, 6, n).astype(float) if integer else rng.uniform(1, 5, n)
    return pd.DataFrame({"user": pairs // n_items, "item": pairs % n_items, "rating": ratings})


def _cornac_rows(model, n_users):
    return np.stack([model.score(u) for u in range(n_users)])


@pytest.mark.parametrize("integer", [True, False])
@pytest.mark.parametrize("k", [1, 3, 10, 200])
@pytest.mark.parametrize("knn", [M.UserKNN, M.ItemKNN], ids=lambda c: c.__name__)
def test_knn_batch_scorer_reproduces_cornac(knn, k, integer):
    # sparse data: many cosine similarities are exactly 1 (one co-rated item), so ties at the
    # k-th neighbour, with and without larger weights, are common
    train = _feedback(70, 50, 500, seed=k, integer=integer)
    ds = to_cornac_dataset(train, n_users=70, n_items=50, seed=0)
    model = knn(k=k, verbose=False, num_threads=1).fit(ds)
    got = batch_scorer(model)(np.arange(ds.num_users))
    np.testing.assert_allclose(got, _cornac_rows(model, ds.num_users), rtol=0, atol=1e-12)


@pytest.mark.parametrize("knn", [M.UserKNN, M.ItemKNN], ids=lambda c: c.__name__)
def test_knn_batch_scorer_negative_similarities_and_batches(knn):
    train = _feedback(40, 30, 300, seed=5, integer=True)
    ds = to_cornac_dataset(train, n_users=40, n_items=30, seed=0)
    model = knn(k=4, similarity="pearson", verbose=False, num_threads=1).fit(ds)  # sims < 0
    score = batch_scorer(model)
    want = _cornac_rows(model, ds.num_users)
    np.testing.assert_allclose(score(np.arange(ds.num_users)), want, rtol=0, atol=1e-12)
    users = np.array([7, 3, 3, 0])  # any order, repeats, one user at a time
    np.testing.assert_allclose(score(users), want[users], rtol=0, atol=1e-12)
    np.testing.assert_allclose(score(np.array([3]))[0], model.score(3), rtol=0, atol=1e-12)


def test_fit_scores_uses_the_vectorised_userknn():
    train = _feedback(30, 20, 150, seed=1, integer=True)
    fast = fit_scores(M.UserKNN(k=5, verbose=False), train, n_users=35, n_items=22, seed=0)
    slow = fit_scores(_PerUserUserKNN(k=5, verbose=False), train, n_users=35, n_items=22, seed=0)
    np.testing.assert_allclose(fast, slow, rtol=0, atol=1e-12)


# ----------------------------------------------------------------------------------------
# RandomScores
# ----------------------------------------------------------------------------------------
def test_random_scores_reproducible_and_seed_dependent(train):
    a = _fit(RandomScores(seed=11), train)
    b = _fit(RandomScores(seed=11), train)
    c = _fit(RandomScores(seed=12), train)
    np.testing.assert_array_equal(a, b)
    known = np.setdiff1d(np.arange(N_USERS), ABSENT_USERS)
    seen = _seen_items(train)
    block = a[np.ix_(known, seen)]
    assert not np.isclose(block, c[np.ix_(known, seen)]).any()
    assert ((block >= 0) & (block < 1)).all()
    assert len(np.unique(block)) == block.size  # i.i.d. continuous: no ties


def test_random_scores_same_single_and_batch():
    ds = to_cornac_dataset(_frame(), n_users=N_USERS, n_items=N_ITEMS, seed=0)
    model = RandomScores(seed=4).fit(ds)
    np.testing.assert_array_equal(
        model.score_batch(np.array([3, 1])), np.stack([model.score(3), model.score(1)])
    )
    assert model.score(3, 2) == model.score(3)[2]
    clone = model.clone()  # Cornac's clone() rebuilds from the constructor arguments
    assert isinstance(clone, RandomScores) and clone.seed == 4 and clone.name == model.name
    assert PosPop(threshold=3.0).clone().threshold == 3.0
    with pytest.raises(ValueError, match="seed"):
        RandomScores(seed=-1)


# ----------------------------------------------------------------------------------------
# score_models / iter_scores
# ----------------------------------------------------------------------------------------
def test_score_models_deterministic_and_ordered(train):
    def make():
        families = ["PosPop", "BPR", "ItemKNN", "Random"]
        return model_zoo(families=families, sizes=(4, 8), knn_sizes=(3,), seed=0)

    first = score_models(make(), train, n_users=N_USERS, n_items=N_ITEMS, progress=False, seed=0)
    second = score_models(make(), train, n_users=N_USERS, n_items=N_ITEMS, progress=False, seed=0)
    assert list(first) == ["PosPop", "Random", "BPR-4", "BPR-8", "ItemKNN-3"]
    for name in first:
        np.testing.assert_array_equal(first[name], second[name])
        np.testing.assert_array_equal(first[name], _fit(make()[name], train))


def test_iter_scores_validates_eagerly_and_fits_lazily(train):
    model = AvgRating()
    gen = iter_scores({"a": model}, train, n_users=N_USERS, n_items=N_ITEMS, progress=False, seed=0)
    assert not model.is_fitted
    name, scores = next(gen)
    assert name == "a" and model.is_fitted and scores.shape == (N_USERS, N_ITEMS)
    with pytest.raises(ValueError, match="train.item"):
        iter_scores({"a": AvgRating()}, train, n_users=N_USERS, n_items=5, seed=0)


# ----------------------------------------------------------------------------------------
# the zoo
# ----------------------------------------------------------------------------------------
def _family(name: str) -> str:
    return name.split("-")[0]


def test_default_zoo_composition():
    zoo = model_zoo(seed=0)
    assert len(zoo) >= 40
    assert all(model.name == key for key, model in zoo.items())
    assert len({key.lower() for key in zoo}) == len(zoo)
    assert {_family(k) for k in zoo} == set(DEFAULT_FAMILIES)
    assert {"HPF", "UserKNN"} <= set(FAMILIES) - set(DEFAULT_FAMILIES)
    assert {"BPR-40", "ItemKNN-20", "EASE-100", "MostPop", "Random", "AvgRating"} <= set(zoo)
    for model in zoo.values():
        assert isinstance(model, Recommender)
        assert getattr(model, "seed", 0) in (0, None) or model.seed == 0
        assert not model.verbose
        if hasattr(model, "num_threads"):
            assert model.num_threads == 1  # seeded: deterministic single-thread training


def test_zoo_options():
    everything = model_zoo(
        families=FAMILIES, sizes=(5,), knn_sizes=(7,), ease_lambdas=(2.5,), seed=9
    )
    assert {_family(k) for k in everything} == set(FAMILIES)
    assert {"HPF-5", "UserKNN-7", "ItemKNN-7", "EASE-2.5"} <= set(everything)
    assert everything["BPR-5"].seed == 9 and everything["Random"].seed == 9
    assert list(model_zoo(families="MostPop", seed=0)) == ["MostPop"]
    with pytest.raises(ValueError, match="families"):
        model_zoo(families=["BPR", "NoSuchModel"], seed=0)
    with pytest.raises(ValueError, match="sizes"):
        model_zoo(sizes=(10, 0), seed=0)
    with pytest.raises(ValueError, match="sizes"):
        model_zoo(sizes=(10, 10), seed=0)
    with pytest.raises(ValueError, match="seed"):
        model_zoo(seed=-3)


def test_cheap_zoo_members_fit_on_a_small_frame(train):
    zoo = model_zoo(sizes=(3,), knn_sizes=(2,), ease_lambdas=(10,), seed=0)
    zoo.update(model_zoo(families=["HPF", "UserKNN"], sizes=(2,), knn_sizes=(2,), seed=0))
    out = score_models(zoo, train, n_users=N_USERS, n_items=N_ITEMS, progress=False, seed=0)
    for name, scores in out.items():
        assert scores.shape == (N_USERS, N_ITEMS) and np.isfinite(scores).all(), name


# ----------------------------------------------------------------------------------------
# Cornac's own evaluation accepts the baselines
# ----------------------------------------------------------------------------------------
def _uir(frame):
    return list(frame[["user", "item", "rating"]].itertuples(index=False, name=None))


@pytest.mark.parametrize(
    "model", [AvgRating(), PosPop(), RandomScores(seed=2)], ids=lambda m: m.name
)
def test_cornac_base_method_evaluates_the_baselines(train, model):
    test = _frame(seed=9, n_rows=120)
    test = test.merge(train[["user", "item"]], how="left", indicator=True)
    test = test[test["_merge"] == "left_only"].drop(columns="_merge")
    test = pd.concat([test, pd.DataFrame({"user": [0, 39], "item": [29, 1], "rating": [5.0, 5.0]})])
    method = cornac.eval_methods.BaseMethod.from_splits(
        _uir(train), _uir(test), rating_threshold=4.0, exclude_unknowns=False, verbose=False
    )
    metrics = [
        cornac.metrics.Recall(k=5), cornac.metrics.NDCG(k=5), cornac.metrics.AUC(),
        cornac.metrics.MAE(),
    ]
    result, _ = method.evaluate(model, metrics, user_based=True)
    for metric in ("Recall@5", "NDCG@5", "AUC"):
        assert 0.0 <= result.metric_avg_results[metric] <= 1.0
    assert np.isfinite(result.metric_avg_results["MAE"])


def test_cornac_ranking_eval_agrees_with_our_scores(train):
    """Cornac's Recall@k of RandomScores (no ties) equals the recall computed from the
    fit_scores matrix with Cornac's candidate rule (known items minus training positives)."""
    k, threshold = 5, 4.0
    test = _frame(seed=21, n_rows=200)
    test = test.merge(train[["user", "item"]], how="left", indicator=True)
    test = test[(test["_merge"] == "left_only") & test["item"].isin(train["item"])]
    test = test[test["user"].isin(train["user"])].drop(columns="_merge")
    train_set = cornac.data.Dataset.build(_uir(train))
    test_set = cornac.data.Dataset.build(
        _uir(test), global_uid_map=train_set.uid_map, global_iid_map=train_set.iid_map
    )
    model = RandomScores(seed=8).fit(train_set)
    (recall,), (per_user,) = cornac.eval_methods.ranking_eval(
        model, [cornac.metrics.Recall(k=k)], train_set, test_set, rating_threshold=threshold
    )
    scores = _fit(RandomScores(seed=8), train)
    seen = _seen_items(train)
    ours = []
    for u, rows in test.groupby("user"):
        relevant = rows.loc[rows["rating"] >= threshold, "item"].to_numpy()
        if relevant.size == 0:
            continue
        train_pos = train.loc[(train["user"] == u) & (train["rating"] >= threshold), "item"]
        candidates = np.union1d(np.setdiff1d(seen, train_pos), relevant)
        top = candidates[np.argsort(-scores[u, candidates])[:k]]
        ours.append(np.isin(relevant, top).mean())
    assert len(per_user) == len(ours)
    assert recall == pytest.approx(np.mean(ours), abs=1e-12)


# ----------------------------------------------------------------------------------------
# validation
# ----------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("mutate", "kwargs", "match"),
    [
        (lambda f: f.drop(columns="rating"), {}, "train"),
        (lambda f: f.iloc[:0], {}, "train"),
        (lambda f: f.assign(user=f["user"] + N_USERS), {}, "train.user"),
        (lambda f: f.assign(item=f["item"] - 1), {}, "train.item"),
        (lambda f: f.assign(user=f["user"].astype(float)), {}, "train.user"),
        (lambda f: pd.concat([f, f.head(1)]), {}, "duplicate"),
        (lambda f: f.assign(rating=np.nan), {}, "rating"),
        (lambda f: f, {"n_users": 0}, "n_users"),
        (lambda f: f, {"n_items": 2.5}, "n_items"),
    ],
)
def test_fit_scores_rejects_bad_input(train, mutate, kwargs, match):
    args = {"n_users": N_USERS, "n_items": N_ITEMS, "seed": 0, **kwargs}
    with pytest.raises(ValueError, match=match):
        fit_scores(M.MostPop(), mutate(train), **args)


def test_bad_models_are_rejected(train):
    with pytest.raises(ValueError, match="model"):
        fit_scores("MostPop", train, n_users=N_USERS, n_items=N_ITEMS, seed=0)
    with pytest.raises(ValueError, match="models"):
        score_models([M.MostPop()], train, n_users=N_USERS, n_items=N_ITEMS, seed=0)
    with pytest.raises(ValueError, match=r"models\['x'\]"):
        score_models({"x": object()}, train, n_users=N_USERS, n_items=N_ITEMS, seed=0)


# ----------------------------------------------------------------------------------------
# re-exports and progress bar
# ----------------------------------------------------------------------------------------
def test_debiasing_trainers_have_one_home():
    from recbias_tutorial import debiased_mf, models

    for name in ("MFResult", "calibrate_propensity", "fit_mf", "train_mf"):
        assert name in debiased_mf.__all__
        assert not hasattr(models, name)


def test_progress_bar_is_plain_text(train, capsys):
    score_models({"PosPop": PosPop()}, train, n_users=N_USERS, n_items=N_ITEMS, progress=True, seed=0)
    err = capsys.readouterr().err
    assert "fit + score" in err and "1/1" in err  # tqdm.std's text bar, not a widget
