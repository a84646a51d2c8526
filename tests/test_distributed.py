"""recbias_tutorial.distributed on a local Dask cluster (worker processes) equals the in-process
estimators: every estimator of the registry, several models in one pass, pandas, Parquet and
dask.dataframe inputs, the intervened test sets, the bootstrap; bad inputs are clear errors."""

from __future__ import annotations

import os
import sys

import numpy as np
import pandas as pd
import pytest

import recbias_tutorial as rb

distributed = pytest.importorskip("dask.distributed")
dd = pytest.importorskip("dask.dataframe")
from recbias_tutorial import distributed as rbd  # noqa: E402
from recbias_tutorial.distributed import _bootstrap, _specs  # noqa: E402

REL = dict(rel=1e-12, abs=1e-15)


@pytest.fixture(scope="module")
def client():
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                       dashboard_address=None)
    with distributed.Client(cluster) as c:
        yield c
    cluster.close()


@pytest.fixture(scope="module")
def case(make_world):
    world = make_world(150, 80, seed=11, mean_ratings_per_user=12.0, popularity_bias=1.0,
                       rating_bias=1.0)
    train, test = rb.random_split(world.mnar, (0.7, 0.3), seed=1)
    rng = np.random.default_rng(3)
    U, V = rng.normal(size=(world.n_users, 4)), rng.normal(size=(world.n_items, 4))
    return world, train, test, U, V


@pytest.fixture(scope="module")
def parquet(case, tmp_path_factory):
    world, train, test, U, V = case
    root = tmp_path_factory.mktemp("feedback")
    mar = world.mar.iloc[::2]
    frames = {"test": test, "train": train, "random": world.mar, "mar": mar}
    return {name: rbd.write_feedback(frame, root / name, users_per_file=40,
                                     n_users=world.n_users, n_items=world.n_items)
            for name, frame in frames.items()}


@pytest.mark.parametrize("estimator, metric", [("aoa", "recall"), ("aoa", "auc"),
                                               ("snips", "dcg"), ("ips", "recall")])
def test_cluster_equals_in_process(client, case, estimator, metric):
    world, train, test, U, V = case
    scorer = rb.Scorer.from_factors(U, V)
    dense = scorer.dense()
    kw = dict(estimator=estimator, metric=metric, k=10, exclude=train)
    if estimator == "ips":
        full = world.full["rating"].to_numpy().reshape(world.n_users, world.n_items)
        kw["n_relevant"] = (full >= world.threshold).sum(axis=1)
        args, test_set = (world.propensity,), world.full
        kw.pop("exclude")
    elif estimator == "snips":
        args, test_set = (rb.popularity_propensity(train, world.n_items, gamma=2.0),), test
    else:
        args, test_set = (), test
    reference = rb.estimators.user_values(dense, test_set, *args, **kw).mean()
    for scores in (dense, scorer):
        got = rbd.estimate(scores, test_set, *args, client=client, users_per_task=37, **kw)
        assert got == pytest.approx(reference, **REL)


def test_every_registered_estimator_is_evaluated_here():
    assert _specs.distributable() == tuple(e.name for e in rb.estimators.registered())


def _estimators():
    return ["aoa", "snips", ("snips", {"clip": 0.05}), ("aoa", {"metric": "auc"}),
            ("aoa", {"metric": "dcg", "k": 5}), "stratified",
            ("stratified", {"metric": "ndcg", "binning": "cut", "bins_from": "all",
                            "weights_from": "all", "n_strata": 3, "k": None}),
            ("stratified", {"binning": "width", "n_strata": 4, "metric": "auc"}),
            "ure_recall", ("recall_at_kbar", {"k_bar": 3}),
            ("intervene", {"strategy": "skew", "size": 0.5, "seed": 4, "label": "skew"}),
            ("intervene", {"strategy": "wtd", "size": 0.3, "seed": 5, "label": "wtd"}),
            ("intervene", {"strategy": "wtd_h", "size": 0.3, "seed": 6, "item_power": 1.0,
                           "smoothing": "notebook", "label": "wtd_h"}),
            ("intervene", {"strategy": "reg", "size": 0.4, "seed": 7, "label": "reg"}),
            ("intervene", {"strategy": "full", "size": 1.0, "seed": 0, "label": "full"})]


def _reference(scores, world, train, test, mar, p) -> dict:
    """Every estimator of :func:`_estimators` by the in-process functions."""
    kw = dict(k=10, exclude=train)
    strat = dict(propensity=p, **kw)
    out = {"aoa": rb.aoa(scores, test, **kw), "snips": rb.snips(scores, test, p, **kw),
           "snips(clip=0.05)": rb.snips(scores, test, p, clip=0.05, **kw),
           "aoa(metric='auc')": rb.aoa(scores, test, metric="auc", exclude=train),
           "aoa(metric='dcg', k=5)": rb.aoa(scores, test, metric="dcg", k=5, exclude=train),
           "ure_recall": rb.ure_recall(scores, world.mar, **kw),
           "recall_at_kbar(k_bar=3)": rb.recall_at_kbar(scores, world.mar, k_bar=3)}
    out["stratified"] = rb.stratified(scores, test, **strat)
    out[_specs._label("stratified", dict(metric="ndcg", binning="cut", bins_from="all",
                                         weights_from="all", n_strata=3, k=None))] = \
        rb.stratified(scores, test, p, metric="ndcg", binning="cut", bins_from="all",
                      weights_from="all", n_strata=3, k=None, exclude=train)
    out[_specs._label("stratified", dict(binning="width", n_strata=4, metric="auc"))] = \
        rb.stratified(scores, test, p, binning="width", n_strata=4, metric="auc", exclude=train)
    for label, kwargs in (("skew", dict(strategy="skew", size=0.5, seed=4)),
                          ("wtd", dict(strategy="wtd", size=0.3, seed=5, mar=mar)),
                          ("wtd_h", dict(strategy="wtd_h", size=0.3, seed=6, item_power=1.0,
                                         smoothing="notebook")),
                          ("reg", dict(strategy="reg", size=0.4, seed=7)),
                          ("full", dict(strategy="full", size=1.0, seed=0))):
        out[label] = rb.aoa(scores, rb.intervene(test, train=train, **kwargs), **kw)
    return out


def _check(table: pd.DataFrame, reference: dict, model: str) -> None:
    rows = table[table["model"] == model].set_index("estimator")
    assert set(rows.index) == set(reference)
    for label, ref in reference.items():
        if isinstance(ref, pd.DataFrame):  # stratified: the whole table
            got = table.attrs["strata"]
            got = got[(got["model"] == model) & (got["estimator"] == label)]
            got = got.drop(columns=["model", "estimator"]).reset_index(drop=True)
            pd.testing.assert_frame_equal(got, ref, check_dtype=False, rtol=1e-12, atol=1e-15)
            ref = ref["value"].iloc[-1]
        assert rows.loc[label, "value"] == pytest.approx(ref, **REL), label


def test_every_estimator_several_models_one_pass(client, case):
    """Factor matrices, a Scorer and a dense matrix, scored in one pass by every estimator,
    on the cluster and in process: each value is the in-process function's."""
    world, train, test, U, V = case
    mar = world.mar.iloc[::2]
    p = rb.popularity_propensity(train, world.n_items, gamma=2.0)
    bias = np.linspace(-1, 1, world.n_items)
    models = {"factors": {"user_factors": U, "item_factors": V, "item_bias": bias},
              "scorer": rb.Scorer.from_factors(U[:, ::-1], V[:, ::-1]),
              "dense": rb.Scorer.from_factors(U[:, :2], V[:, :2]).dense()}
    dense = {"factors": rb.Scorer.from_factors(U, V, item_bias=bias).dense(),
             "scorer": models["scorer"].dense(), "dense": models["dense"]}
    kw = dict(estimators=_estimators(), propensity=p, exclude=train, random=world.mar,
              train=train, mar=mar, k=10, users_per_task=37)
    on_cluster = rbd.evaluate(models, test, client=client, **kw)
    in_process = rbd.evaluate(models, test, client=None, **kw)
    for name in models:
        reference = _reference(dense[name], world, train, test, mar, p)
        _check(on_cluster, reference, name)
        _check(in_process, reference, name)


def test_ips_with_true_propensities_and_counts(client, case):
    world, train, test, U, V = case
    full = world.full["rating"].to_numpy().reshape(world.n_users, world.n_items)
    n_rel = (full >= world.threshold).sum(axis=1)
    dense = rb.Scorer.from_factors(U, V).dense()
    table = rbd.evaluate({"m": (U, V)}, world.mnar, client=client, estimators="ips",
                         propensity=world.propensity, n_relevant=n_rel, users_per_task=50)
    assert table["value"].iloc[0] == pytest.approx(
        rb.ips(dense, world.mnar, world.propensity, n_relevant=n_rel), **REL)
    assert table["users"].iloc[0] == int((n_rel >= 1).sum())


def test_parquet_and_dask_dataframe_read_by_the_workers(client, case, parquet):
    """The same log as Parquet files and as a dask.dataframe: the in-process numbers
    (``intervene`` draws in the files' order, the order of the concatenated files)."""
    world, train, test, U, V = case
    mar = pd.read_parquet(parquet["mar"])
    p = rb.popularity_propensity(train, world.n_items, gamma=2.0)
    held = pd.concat([pd.read_parquet(f) for f in sorted(parquet["test"].glob("*.parquet"))],
                     ignore_index=True)
    dense = rb.Scorer.from_factors(U, V).dense()
    reference = _reference(dense, world, train, held, mar, p)
    kw = dict(estimators=_estimators(), propensity=p, k=10)
    paths = {n: str(v) for n, v in parquet.items()}
    from_files = rbd.evaluate({"m": (U, V)}, paths["test"], client=client,
                              exclude=paths["train"], random=paths["random"],
                              train=paths["train"], mar=paths["mar"], **kw)
    _check(from_files, reference, "m")
    frames = {n: dd.read_parquet(v) for n, v in paths.items()}
    some = ["aoa", "snips", "stratified", "ure_recall", ("recall_at_kbar", {"k_bar": 3}),
            _estimators()[11]]  # wtd: every frame
    from_dask = rbd.evaluate({"m": (U, V)}, frames["test"], client=client,
                             exclude=frames["train"], random=frames["random"],
                             train=frames["train"], mar=frames["mar"], **{**kw, "estimators": some})
    _check(from_dask, {label: reference[label] for label in from_dask["estimator"]}, "m")
    files = sorted(str(f) for f in parquet["train"].glob("*.parquet"))  # a list of files
    listed = rbd.evaluate({"m": (U, V)}, paths["test"], client=None, exclude=files,
                          estimators="aoa", k=10)
    assert listed["value"].iloc[0] == pytest.approx(reference["aoa"], **REL)


def test_parquet_files_without_statistics_are_measured(client, case, tmp_path):
    """Files whose footers hold no user range are measured by a task, never skipped."""
    world, train, test, U, V = case
    test = test.sort_values("user", kind="stable")
    folder = tmp_path / "plain"
    folder.mkdir()
    for i, (lo, hi) in enumerate(((0, 50), (50, 100), (100, world.n_users))):
        part = test[(test["user"] >= lo) & (test["user"] < hi)]
        part.to_parquet(folder / f"{i}.parquet", write_statistics=False)
    dense = rb.Scorer.from_factors(U, V).dense()
    for c in (client, None):
        table = rbd.evaluate({"m": dense}, str(folder), client=c, exclude=train)
        assert table["value"].iloc[0] == pytest.approx(rb.aoa(dense, test, exclude=train), **REL)


def test_a_propensity_column_of_the_log(client, case, tmp_path):
    world, train, test, U, V = case
    p = rb.popularity_propensity(train, world.n_items, gamma=2.0)
    path = rbd.write_feedback(test.assign(propensity=p[test["item"].to_numpy()]),
                              tmp_path / "t", users_per_file=30)
    dense = rb.Scorer.from_factors(U, V).dense()
    table = rbd.evaluate({"m": dense}, str(path), client=client, propensity="propensity",
                         estimators=["snips", "stratified"], exclude=train)
    assert table["value"].tolist() == pytest.approx(
        [rb.snips(dense, test, p, exclude=train),
         rb.stratified(dense, test, p, exclude=train)["value"].iloc[-1]], **REL)


def test_bootstrap_same_on_cluster_and_in_process(client, case):
    world, train, test, U, V = case
    kw = dict(estimators=["aoa", "snips", "ure_recall",
                          ("intervene", {"strategy": "reg", "size": 0.5, "seed": 1})],
              propensity=rb.popularity_propensity(train, world.n_items, gamma=2.0),
              exclude=train, random=world.mar, n_resamples=300, seed=9, users_per_task=40)
    models = {"a": (U, V), "b": (U[:, :2], V[:, :2])}
    on_cluster = rbd.evaluate(models, test, client=client, **kw)
    in_process = rbd.evaluate(models, test, client=None, **kw)
    pd.testing.assert_frame_equal(on_cluster, in_process, rtol=1e-12, atol=1e-15)
    assert (on_cluster["low"] <= on_cluster["value"]).all()
    assert (on_cluster["value"] <= on_cluster["high"]).all()
    # the estimate is bootstrap_ci's; its resamples' law is checked by the next test
    ci = rb.bootstrap_ci(rb.Scorer.from_factors(U, V).dense(), test, seed=0, k=10,
                         exclude=train, n_resamples=10)
    assert on_cluster.iloc[0]["value"] == pytest.approx(ci[0], **REL)


def test_block_resamples_are_multinomial_counts_of_users():
    """The two-step draws give each resample multinomial(N, 1/N) counts of the users: they
    add up to N, each has mean 1 and variance 1 - 1/N, two users covary by -1/N (seeded
    Monte Carlo, tolerance 5 standard errors)."""
    sizes = [5, 10, 15]
    n, r = sum(sizes), 20_000
    counts = {"x": np.array(sizes)}
    boot = _bootstrap.plan(counts, r, seed=3)
    draws = []
    for b, size in enumerate(sizes):  # per-user values = indicator columns: sums are counts
        values = np.eye(size)
        models = {"m": {"x": (0.0, size, values)}}
        part = _bootstrap.for_block(boot, counts, b)
        cols = _bootstrap.block_sums({"m": {f"u{j}": (0, size, values[:, j])
                                            for j in range(size)}},
                                     {**part, "groups": {f"u{j}": "g0" for j in range(size)}},
                                     b)
        draws.append(np.column_stack([cols["m", f"u{j}"] for j in range(size)]))
        del models
    c = np.hstack(draws)  # resamples x users
    assert (c.sum(axis=1) == n).all()
    assert np.abs(c.mean(axis=0) - 1).max() < 5 * np.sqrt((1 - 1 / n) / r)
    var = c.var(axis=0)
    assert np.abs(var - (1 - 1 / n)).max() < 5 * np.sqrt(3 / r)
    cov = np.cov(c[:, 0], c[:, -1])[0, 1]
    assert abs(cov + 1 / n) < 5 / np.sqrt(r)


def _dies_once(flag: str):
    """A scorer whose first call kills its worker process (a lost worker)."""
    def fn(users):
        try:  # the first call anywhere creates the flag and dies; every other call scores
            os.close(os.open(flag, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
        except FileExistsError:
            pass
        else:
            os._exit(1)
        return np.tile(np.linspace(0, 1, 80), (len(users), 1)) + users[:, None] * 1e-3
    return fn


def test_a_lost_worker_is_retried_to_the_same_sums(client, case, tmp_path):
    world, train, test, U, V = case
    import cloudpickle

    cloudpickle.register_pickle_by_value(sys.modules[__name__])
    scorer = rb.Scorer(_dies_once(str(tmp_path / "died")), n_users=world.n_users,
                       n_items=world.n_items)
    table = rbd.evaluate({"m": scorer}, test, client=client, exclude=train, users_per_task=50)
    assert (tmp_path / "died").exists()  # a worker did die
    healthy = rb.Scorer(_dies_once(str(tmp_path / "died")), n_users=world.n_users,
                        n_items=world.n_items)
    assert table["value"].iloc[0] == pytest.approx(rb.aoa(healthy, test, exclude=train), **REL)


# ------------------------------------------------------------------ bad inputs
def test_a_user_split_across_partitions_is_an_error(client, case, tmp_path):
    world, train, test, U, V = case
    test = test.sort_values("user", kind="stable")
    half = len(test) // 2
    while test["user"].iloc[half] != test["user"].iloc[half - 1]:
        half += 1  # cut inside a user
    folder = tmp_path / "split"
    folder.mkdir()
    test.iloc[:half].to_parquet(folder / "a.parquet")
    test.iloc[half:].to_parquet(folder / "b.parquet")
    with pytest.raises(ValueError, match="not partitioned by user"):
        rbd.evaluate({"m": (U, V)}, str(folder), client=client)
    parts = dd.concat([dd.from_pandas(test.iloc[:half], npartitions=1),
                       dd.from_pandas(test.iloc[half:], npartitions=1)])
    with pytest.raises(ValueError, match="not partitioned by user"):
        rbd.evaluate({"m": (U, V)}, parts, client=client)


def test_a_model_that_does_not_cover_the_catalogue_is_an_error(client, case, parquet):
    world, train, test, U, V = case
    with pytest.raises(ValueError, match=r"models\['short'\] scores 79 items.*catalogue"):
        rbd.evaluate({"short": (U, V[:-1])}, str(parquet["test"]), client=client)
    with pytest.raises(ValueError, match=r"models\['b'\] has shape"):
        rbd.evaluate({"a": (U, V), "b": (U, V[:-1])}, test, client=client)
    with pytest.raises(ValueError, match="test.item has ids outside"):  # pandas: on a worker
        rbd.evaluate({"short": (U, V[:-1])}, test, client=client)
    lying = rb.Scorer(lambda users: np.zeros((len(users), 5)), n_users=world.n_users,
                      n_items=world.n_items)
    with pytest.raises(ValueError, match="scorer returned shape"):
        rbd.evaluate({"lying": lying}, test, client=client)
    with pytest.raises(ValueError, match=r"models\['few users'\] scores 10 users"):
        rbd.evaluate({"few users": (U[:10], V)}, str(parquet["test"]), client=client)


@pytest.mark.parametrize("kwargs, match", [
    (dict(estimators="dr"), "not an estimator evaluated here"),
    (dict(estimators=["aoa", "aoa"]), "listed twice"),
    (dict(estimators=[("aoa", {"cut": 3})]), "takes options"),
    (dict(estimators=[("stratified", {"n_strata": 0})]), "n_strata"),
    (dict(estimators=[("stratified", {"bins_from": "some"})]), "bins_from"),
    (dict(estimators=[("aoa", {"k": 0})]), "k must be"),
    (dict(estimators=[("aoa", {"metric": "ndcg"})]), "metric"),
    (dict(estimators=["recall_at_kbar"]), "k_bar must be given"),
    (dict(estimators=[("intervene", {"strategy": "reg", "size": 0.5})]), "seed"),
    (dict(estimators=[("intervene", {"strategy": "reg", "size": 1.5, "seed": 0})]), "size"),
    (dict(estimators=[("intervene", {"strategy": "bad", "size": 0.5, "seed": 0})]), "strategy"),
    (dict(estimators=[("intervene", {"strategy": "skew", "size": 0.5, "seed": 0})]), "train"),
    (dict(estimators=[("intervene", {"strategy": "wtd", "size": 0.5, "seed": 0})], train=True),
     "mar is required"),
    (dict(estimators=[("intervene", {"strategy": "reg", "size": 1e-4, "seed": 0})]),
     "keeps round"),
    (dict(estimators="ure_recall"), "random is required"),
    (dict(estimators="snips"), "propensity is required"),
    (dict(estimators="snips", propensity=np.ones(7)), "propensity"),
    (dict(estimators="snips", propensity="no_such_column"), "no_such_column"),
    (dict(estimators="snips", propensity=-np.ones(80)), "propensity must be > 0"),
    (dict(estimators="ips", propensity=np.full(80, 0.5)), "n_relevant"),
    (dict(n_resamples=10), "seed must be given"),
    (dict(n_resamples=10, seed=0, estimators=("aoa", {"k": 3}), threshold=5.5), "no relevant"),
    (dict(client="tcp://x:8786"), "client must be"),
    (dict(models={}), "models must be a non-empty mapping"),
    (dict(models={"m": np.full((150, 80), np.nan)}), r"models\['m'\].*finite"),
    (dict(models={"m": ({"a": 1}, 2)}), r"models\['m'\]"),
    (dict(models={"m": {"user_factors": 1}}), "keys user_factors, item_factors"),
    (dict(exclude=np.zeros((3, 2))), "exclude must be"),
    (dict(exclude="/no/such/path"), "does not exist"),
])
def test_bad_inputs_are_clear_errors(case, kwargs, match):
    world, train, test, U, V = case
    kwargs = dict(kwargs)
    if kwargs.pop("train", None):
        kwargs["train"] = train
    models = kwargs.pop("models", {"m": (U, V)})
    client = kwargs.pop("client", None)
    with pytest.raises(ValueError, match=match):
        rbd.evaluate(models, test, client=client, **kwargs)


def test_bad_rows_found_by_the_workers_are_clear_errors(client, case):
    world, train, test, U, V = case
    twice = pd.concat([test, test.iloc[:1]], ignore_index=True)
    with pytest.raises(ValueError, match="test has duplicate"):
        rbd.evaluate({"m": (U, V)}, twice, client=client)
    nan = test.assign(rating=test["rating"].where(test.index != test.index[3]))
    with pytest.raises(ValueError, match="test.rating has NaN"):
        rbd.evaluate({"m": (U, V)}, nan, client=client)
    with pytest.raises(ValueError, match="test.user has ids outside"):
        rbd.evaluate({"m": (U[:100], V)}, test, client=client)


def test_write_feedback_refuses_and_leaves_nothing(case, tmp_path):
    world, train, test, U, V = case
    rbd.write_feedback(test, tmp_path / "t")
    with pytest.raises(ValueError, match="path must not exist"):
        rbd.write_feedback(test, tmp_path / "t")
    for bad, match in ((test.iloc[:0], "frame is empty"),
                       (test.assign(user=-test["user"] - 1), "negative"),
                       (test.assign(item=test["item"] + 0.5), "integer"),
                       (test.assign(rating=np.nan), "NaN"),
                       ("not a frame", "frame must be")):
        with pytest.raises(ValueError, match=match):
            rbd.write_feedback(bad, tmp_path / "bad")
        assert not (tmp_path / "bad").exists()
    with pytest.raises(ValueError, match="outside"):
        rbd.write_feedback(test, tmp_path / "bad", n_items=3)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t"]  # no temporary folder left


def test_synthetic_log_is_what_it_says():
    train, test = rbd.synthetic_log(300, 40, per_user=10, test_share=0.3, popularity=1.0, seed=2)
    assert len(train) == 300 * 7 and len(test) == 300 * 3
    both = pd.concat([train, test])
    assert not both.duplicated(["user", "item"]).any()  # distinct items per user
    counts = np.bincount(both["item"], minlength=40)
    assert counts[:5].sum() > counts[-5:].sum()  # the popular items are drawn more often
    assert set(both["rating"]) <= {1.0, 5.0}
    again = rbd.synthetic_log(300, 40, per_user=10, test_share=0.3, seed=2)
    pd.testing.assert_frame_equal(again[1], test)  # seeded
    with pytest.raises(ValueError, match="per_user must be <= n_items"):
        rbd.synthetic_log(5, 3, per_user=4, seed=0)
