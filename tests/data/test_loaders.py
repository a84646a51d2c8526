"""Tests of the data layer: loaders against published statistics, checksums, discovery,
downloads (faked, never over the network) and the simulated stand-ins.

Real-data tests read ``$RECBIAS_DATA`` (e.g. ``export RECBIAS_DATA=/work/shared/data``).
A dataset that is absent is skipped, or fails when ``RECBIAS_REQUIRE_DATA=1``.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from recbias_tutorial import course
from recbias_tutorial import data as datasets
from recbias_tutorial.data import _files, _registry
from recbias_tutorial.data import (
    DatasetChecksumError,
    DatasetNotFoundError,
    FeedbackData,
    load_coat,
    load_kuairec,
    load_or_standin,
    load_yahoo_r3,
)

FIXTURES = Path(__file__).parents[1] / "fixtures"


def _kuairec_files(dest: Path) -> Path:
    """Copy the format fixtures under the official KuaiRec file names into ``dest``.

    (They are stored as ``kuairec_*.fixture.csv`` so no tracked file looks like a dataset file.)
    """
    dest.mkdir(parents=True, exist_ok=True)
    for short, official in (("small", "small_matrix"), ("big", "big_matrix")):
        shutil.copyfile(FIXTURES / "kuairec" / f"kuairec_{short}.fixture.csv", dest / f"{official}.csv")
    return dest
REAL_DATA = _files.data_root()  # captured before any test changes the environment
COAT_FILES = ("train.ascii", "test.ascii")


@pytest.fixture(autouse=True)
def _isolated(monkeypatch, tmp_path):
    """No test downloads anything, nor touches the user's cache or CI settings."""
    monkeypatch.setenv("RECBIAS_OFFLINE", "1")
    monkeypatch.setenv("RECBIAS_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("CI", raising=False)


def _load_real(name: str, cache: Path) -> FeedbackData:
    """Load a real dataset from $RECBIAS_DATA; skip when absent, fail when it is required."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("RECBIAS_OFFLINE", "1")
        mp.setenv("RECBIAS_CACHE", str(cache))  # an empty cache: test $RECBIAS_DATA only
        try:
            return datasets.load(name)
        except DatasetNotFoundError as exc:
            if _files.env_flag("RECBIAS_REQUIRE_DATA"):
                pytest.fail(f"RECBIAS_REQUIRE_DATA=1 but {name} is missing:\n{exc}")
            pytest.skip(f"{name} not found in RECBIAS_DATA={REAL_DATA} (set it to test real data)")


@pytest.fixture(scope="module")
def coat(tmp_path_factory) -> FeedbackData:
    return _load_real("coat", tmp_path_factory.mktemp("cache"))


@pytest.fixture(scope="module")
def yahoo(tmp_path_factory) -> FeedbackData:
    return _load_real("yahoo_r3", tmp_path_factory.mktemp("cache"))


@pytest.fixture(scope="module")
def movielens(tmp_path_factory) -> FeedbackData:
    return _load_real("movielens_100k", tmp_path_factory.mktemp("cache"))


def _star_counts(frame: pd.DataFrame) -> list[int]:
    return frame["rating"].value_counts().reindex([1.0, 2.0, 3.0, 4.0, 5.0]).tolist()


def _check_contract(data: FeedbackData) -> None:
    """Columns, dtypes, 0-based ids in range, one row per pair."""
    for label in ("mnar", "mar", "full"):
        frame = getattr(data, label)
        if frame is None:
            continue
        assert tuple(frame.columns) == ("user", "item", "rating"), label
        assert frame["user"].dtype == np.int64 and frame["item"].dtype == np.int64
        assert frame["rating"].dtype == np.float64
        assert frame["user"].between(0, data.n_users - 1).all()
        assert frame["item"].between(0, data.n_items - 1).all()
        assert not frame.duplicated(["user", "item"]).any(), label


# --- real data: published statistics --------------------------------------------------


def test_coat_matches_published_statistics(coat):
    _check_contract(coat)
    assert (coat.n_users, coat.n_items, coat.threshold) == (290, 300, 4.0)
    assert len(coat.mnar) == 6960 and len(coat.mar) == 4640
    assert (coat.mnar.groupby("user").size() == 24).all() and coat.mnar["user"].nunique() == 290
    assert (coat.mar.groupby("user").size() == 16).all() and coat.mar["user"].nunique() == 290
    assert coat.mnar["item"].nunique() == 300 and coat.mar["item"].nunique() == 300
    assert _star_counts(coat.mnar) == [1901, 1437, 1717, 1275, 630]
    assert _star_counts(coat.mar) == [1879, 899, 1002, 641, 219]
    assert len(coat.mnar.merge(coat.mar, on=["user", "item"])) == 366
    assert not coat.is_standin and coat.info["sha256"]["train.ascii"].startswith("a87bd9e7")


def test_yahoo_r3_matches_published_statistics(yahoo):
    _check_contract(yahoo)
    assert (yahoo.n_users, yahoo.n_items) == (15400, 1000)
    assert len(yahoo.mnar) == 311704 and len(yahoo.mar) == 54000
    assert yahoo.mnar["user"].nunique() == 15400 and yahoo.mnar["item"].nunique() == 1000
    assert yahoo.mnar["user"].min() == 0 and yahoo.mnar["item"].max() == 999
    per_user = yahoo.mar.groupby("user").size()
    assert (per_user == 10).all() and per_user.index.tolist() == list(range(5400))
    assert _star_counts(yahoo.mnar) == [97844, 39652, 49131, 48480, 76597]
    assert _star_counts(yahoo.mar) == [28417, 13064, 7770, 3371, 1378]
    assert len(yahoo.mnar.merge(yahoo.mar, on=["user", "item"])) == 0


def test_movielens_100k_matches_published_statistics(movielens):
    _check_contract(movielens)
    assert (movielens.n_users, movielens.n_items) == (943, 1682)
    assert len(movielens.mnar) == 100000 and movielens.mar is None and movielens.full is None
    assert movielens.mnar["user"].nunique() == 943 and movielens.mnar["item"].nunique() == 1682
    assert movielens.mnar.groupby("user").size().min() >= 20
    assert _star_counts(movielens.mnar) == [6110, 11370, 27145, 34174, 21201]


# --- checksums ---------------------------------------------------------------------------


@pytest.fixture
def coat_copy(tmp_path, monkeypatch) -> Path:
    """Coat's two files in a fresh folder: the real ones when available, else synthetic
    290x300 matrices whose sums are patched into the registry (same code path)."""
    folder = tmp_path / "src"
    folder.mkdir()
    real = [REAL_DATA / "coat" / f for f in COAT_FILES] if REAL_DATA else []
    if real and all(p.is_file() for p in real):
        for path in real:
            shutil.copy(path, folder / path.name)
        return folder
    rng = np.random.default_rng(0)
    for fname in COAT_FILES:
        matrix = np.where(rng.random((290, 300)) < 0.08, rng.integers(1, 6, (290, 300)), 0)
        lines = ("".join(f"{v} " for v in row) for row in matrix)
        (folder / fname).write_text("\n".join(lines) + "\n")
        monkeypatch.setitem(_registry.SHA256["coat"], fname, _files.sha256sum(folder / fname))
    return folder


def _flip_byte(path: Path) -> None:
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0x01
    path.write_bytes(bytes(data))


def _truncate(path: Path) -> None:
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])


@pytest.mark.parametrize("damage", [_flip_byte, _truncate], ids=["flipped", "partial"])
def test_corrupt_file_in_data_dir_raises_and_is_kept(coat_copy, tmp_path, monkeypatch, damage):
    data = tmp_path / "data"
    shutil.copytree(coat_copy, data / "coat")
    bad = data / "coat" / "train.ascii"
    damage(bad)
    monkeypatch.setenv("RECBIAS_DATA", str(data))
    with pytest.raises(DatasetChecksumError) as info:
        load_coat()
    err = info.value
    assert isinstance(err, ValueError)
    assert str(bad) in str(err) and "train.ascii" in str(err)
    assert err.expected in str(err) and err.actual in str(err) and err.expected != err.actual
    assert not err.removed and bad.exists()  # never delete anything under RECBIAS_DATA


def test_corrupt_file_in_cache_is_removed(coat_copy, tmp_path, monkeypatch):
    monkeypatch.delenv("RECBIAS_DATA", raising=False)
    cached = tmp_path / "cache" / "coat"
    shutil.copytree(coat_copy, cached)
    _flip_byte(cached / "test.ascii")
    with pytest.raises(DatasetChecksumError, match="test.ascii") as info:
        load_coat()
    assert info.value.removed and "deleted" in str(info.value)
    assert not (cached / "test.ascii").exists() and (cached / "train.ascii").exists()
    # Next time the dataset is reported missing (and would be downloaded when online).
    with pytest.raises(DatasetNotFoundError, match="RECBIAS_OFFLINE"):
        load_coat()


def test_intact_copy_in_cache_loads(coat_copy, tmp_path, monkeypatch):
    monkeypatch.delenv("RECBIAS_DATA", raising=False)
    shutil.copytree(coat_copy, tmp_path / "cache" / "coat")
    data = load_coat()
    assert (data.n_users, data.n_items) == (290, 300)
    assert data.info["source"] == str(tmp_path / "cache" / "coat")


# --- missing datasets ------------------------------------------------------------------


@pytest.mark.parametrize("name", ["coat", "movielens_100k", "kuairec"])
def test_missing_public_dataset_offline(name, tmp_path, monkeypatch):
    monkeypatch.setenv("RECBIAS_DATA", str(tmp_path / "empty"))
    with pytest.raises(DatasetNotFoundError) as info:
        datasets.load(name)
    message = str(info.value)
    assert isinstance(info.value, FileNotFoundError)
    for fname in _registry.REQUIRED[name]:
        assert fname in message
    assert str(tmp_path / "empty" / name) in message and str(tmp_path / "cache" / name) in message
    assert "RECBIAS_OFFLINE=1" in message and _registry.SOURCES[name].url in message


def test_missing_yahoo_explains_webscope_and_never_downloads(tmp_path, monkeypatch):
    monkeypatch.delenv("RECBIAS_OFFLINE")  # even online, Yahoo! R3 is never downloaded
    monkeypatch.delenv("RECBIAS_DATA", raising=False)
    monkeypatch.setattr(_files, "download", lambda name: pytest.fail("tried to download"))
    with pytest.raises(DatasetNotFoundError) as info:
        load_yahoo_r3()
    message = str(info.value)
    assert "Webscope" in message and "Data Sharing Agreement" in message
    assert "https://webscope.sandbox.yahoo.com/catalog.php?datatype=r" in message
    assert "dataset R3" in message and "RECBIAS_DATA is not set" in message
    assert "ydata-ymusic-rating-study-v1_0-train.txt" in message
    assert "ydata-ymusic-rating-study-v1_0-test.txt" in message


def test_failed_download_is_reported_as_not_found(tmp_path, monkeypatch):
    monkeypatch.delenv("RECBIAS_OFFLINE")
    monkeypatch.setenv("RECBIAS_DATA", str(tmp_path / "empty"))

    def no_network(name):
        raise OSError("Name or service not known")

    monkeypatch.setattr(_files, "download", no_network)
    with pytest.raises(DatasetNotFoundError, match="download failed.*Name or service"):
        load_coat()


# --- downloads (pooch faked: the archive is "extracted" from a local folder) -------------


def _fake_retrieve(source: Path):
    def retrieve(url, known_hash=None, fname=None, path=None, processor=None, **kwargs):
        extracted = Path(path) / "extracted"
        shutil.copytree(source, extracted / "coat")
        junk = extracted / "__MACOSX" / "coat" / "._train.ascii"
        junk.parent.mkdir(parents=True)
        junk.write_bytes(b"resource fork")
        return [str(p) for p in extracted.rglob("*") if p.is_file()]
    return retrieve


def test_download_verifies_then_installs(coat_copy, tmp_path, monkeypatch):
    import pooch

    monkeypatch.delenv("RECBIAS_OFFLINE")
    monkeypatch.setenv("RECBIAS_DATA", str(tmp_path / "empty"))
    monkeypatch.setattr(pooch, "retrieve", _fake_retrieve(coat_copy))
    data = load_coat()
    cache = tmp_path / "cache"
    assert data.info["source"] == str(cache / "coat")
    assert sorted(p.name for p in (cache / "coat").iterdir()) == sorted(COAT_FILES)
    assert [p.name for p in cache.iterdir()] == ["coat"]  # staging folder removed


def test_download_with_bad_member_installs_nothing(coat_copy, tmp_path, monkeypatch):
    import pooch

    monkeypatch.delenv("RECBIAS_OFFLINE")
    monkeypatch.setenv("RECBIAS_DATA", str(tmp_path / "empty"))
    _flip_byte(coat_copy / "train.ascii")
    monkeypatch.setattr(pooch, "retrieve", _fake_retrieve(coat_copy))
    with pytest.raises(DatasetChecksumError, match="train.ascii.*nothing was installed"):
        load_coat()
    assert list((tmp_path / "cache").iterdir()) == []


# --- KuaiRec (format fixture) ----------------------------------------------------------


def _expected_kuairec() -> tuple[pd.DataFrame, pd.DataFrame]:
    # Original users 3, 14, 21 -> 0, 1, 2; videos 9, 60, 148 -> 0, 1, 2.
    full = pd.DataFrame({"user": [0, 0, 0, 1, 1, 1, 2, 2], "item": [0, 1, 2, 0, 1, 2, 0, 2],
                         "rating": [2.0, 0.9, 2.6, 2.4, 1.1, 0.7, 3.3, 0.2]})
    mnar = pd.DataFrame({"user": [0, 0, 1, 2, 2], "item": [0, 2, 1, 0, 2],
                         "rating": [0.5, 2.0, 0.8, 4.1, 0.3]})
    return full, mnar


def _check_kuairec(data: FeedbackData) -> None:
    _check_contract(data)
    full, mnar = _expected_kuairec()
    assert (data.name, data.n_users, data.n_items, data.threshold) == ("kuairec", 3, 3, 2.0)
    pd.testing.assert_frame_equal(data.full, full)
    pd.testing.assert_frame_equal(data.mnar, mnar)  # user 99 and video 777 dropped
    assert data.mar is None
    assert data.info["user_ids"].tolist() == [3, 14, 21]
    assert data.info["video_ids"].tolist() == [9, 60, 148]
    assert data.info["duplicates_merged"] == {"full": 1, "mnar": 1}
    assert data.info["nonfinite_dropped"] == {"full": 0, "mnar": 1}
    # (user 3, video 9) was watched 1.0x then 3.0x: the mean, 2.0, is relevant.
    assert (data.full["rating"] >= data.threshold).sum() == 4


def test_kuairec_fixture_parses(monkeypatch, tmp_path):
    _kuairec_files(tmp_path / "data" / "kuairec")
    monkeypatch.setenv("RECBIAS_DATA", str(tmp_path / "data"))
    _check_kuairec(load_kuairec())
    record = tmp_path / "cache" / "kuairec" / _files.FIRST_SEEN
    assert sorted(line.split("  ")[1] for line in record.read_text().splitlines()) == [
        "big_matrix.csv", "small_matrix.csv"]
    _check_kuairec(load_kuairec())  # second load checks against the recorded sums
    assert len(record.read_text().splitlines()) == 2


def test_kuairec_official_layout_and_first_seen_check(monkeypatch, tmp_path):
    nested = tmp_path / "data" / "kuairec" / "KuaiRec 2.0" / "data"
    _kuairec_files(nested)
    monkeypatch.setenv("RECBIAS_DATA", str(tmp_path / "data"))
    _check_kuairec(load_kuairec())
    small = nested / "small_matrix.csv"
    small.write_text(small.read_text().replace("0.7\n", "0.8\n"))
    with pytest.raises(DatasetChecksumError, match="small_matrix.csv.*first seen") as info:
        load_kuairec()
    assert not info.value.removed and small.exists()


def test_kuairec_truncated_file_is_an_error_and_not_trusted(monkeypatch, tmp_path):
    folder = tmp_path / "data" / "kuairec"
    _kuairec_files(folder)
    monkeypatch.setenv("RECBIAS_DATA", str(tmp_path / "data"))
    small = folder / "small_matrix.csv"
    good = small.read_bytes()
    small.write_bytes(good[:-4])  # an interrupted copy: the last row is cut mid-way
    with pytest.raises(ValueError, match="small_matrix.csv.*truncated"):
        load_kuairec()
    record = tmp_path / "cache" / "kuairec" / _files.FIRST_SEEN
    assert not record.exists()  # the sum of a file that did not parse is never recorded
    small.write_bytes(good)  # restoring the intact file works (it is not "corrupt")
    _check_kuairec(load_kuairec())
    assert len(record.read_text().splitlines()) == 2


def test_kuairec_unparsable_file_names_the_file(monkeypatch, tmp_path):
    folder = tmp_path / "data" / "kuairec"
    _kuairec_files(folder)
    monkeypatch.setenv("RECBIAS_DATA", str(tmp_path / "data"))
    (folder / "big_matrix.csv").write_text("user_id,video_id\n1,2\n")
    with pytest.raises(ValueError, match="big_matrix.csv"):
        load_kuairec()
    assert not (tmp_path / "cache" / "kuairec" / _files.FIRST_SEEN).exists()


HEADER = "user_id,video_id,play_duration,video_duration,time,date,timestamp,watch_ratio\n"


@pytest.mark.parametrize("fname", ["small_matrix.csv", "big_matrix.csv"])
def test_kuairec_negative_watch_ratio_is_an_error(fname, monkeypatch, tmp_path):
    folder = tmp_path / "data" / "kuairec"
    _kuairec_files(folder)
    monkeypatch.setenv("RECBIAS_DATA", str(tmp_path / "data"))
    path = folder / fname
    path.write_text(path.read_text() + "3,9,1,1,,,,-0.5\n14,9,1,1,,,,-inf\n")
    with pytest.raises(ValueError, match=rf"{fname}: column watch_ratio must be >= 0.*"
                                         r"1 row\(s\) are negative, e\.g\. -0\.5") as info:
        load_kuairec()
    assert str(path) in str(info.value)
    assert not (tmp_path / "cache" / "kuairec" / _files.FIRST_SEEN).exists()


def test_kuairec_nonfinite_watch_ratios_are_still_dropped(monkeypatch, tmp_path):
    folder = tmp_path / "data" / "kuairec"
    _kuairec_files(folder)
    monkeypatch.setenv("RECBIAS_DATA", str(tmp_path / "data"))
    big = folder / "big_matrix.csv"
    big.write_text(big.read_text() + "3,60,1,1,,,,-inf\n3,60,1,1,,,,inf\n3,60,1,1,,,,nan\n")
    data = load_kuairec()
    assert data.info["nonfinite_dropped"] == {"full": 0, "mnar": 4}
    pd.testing.assert_frame_equal(data.mnar, _expected_kuairec()[1])


@pytest.mark.parametrize("fname", ["small_matrix.csv", "big_matrix.csv"])
@pytest.mark.parametrize(("rows", "match"), [
    ("", "the file has only its header and no rows"),
    ("3,9,1,1,,,,nan\n14,9,1,1,,,,inf\n", "no row has a finite watch_ratio")],
    ids=["header-only", "no-finite-ratio"])
def test_kuairec_file_without_data_is_an_error(fname, rows, match, monkeypatch, tmp_path):
    folder = tmp_path / "data" / "kuairec"
    _kuairec_files(folder)
    monkeypatch.setenv("RECBIAS_DATA", str(tmp_path / "data"))
    (folder / fname).write_text(HEADER + rows)
    with pytest.raises(ValueError, match=f"{fname}: {match}"):
        load_kuairec()
    assert not (tmp_path / "cache" / "kuairec" / _files.FIRST_SEEN).exists()


def test_checksum_memo_sees_a_same_size_edit_with_the_mtime_restored(tmp_path):
    import os
    import time

    path = tmp_path / "f.txt"
    path.write_bytes(b"abcd")
    before = _files.sha256sum(path)
    stat = path.stat()
    time.sleep(0.05)  # past the file system's timestamp granularity
    path.write_bytes(b"abce")
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert _files.sha256sum(path) != before


# --- load_or_standin ---------------------------------------------------------------------


def test_standin_when_missing_and_not_required(tmp_path, monkeypatch):
    monkeypatch.setenv("RECBIAS_DATA", str(tmp_path / "empty"))
    monkeypatch.delenv("RECBIAS_REQUIRE_DATA", raising=False)
    with pytest.warns(UserWarning, match="simulated stand-in"):
        data = load_or_standin("coat", seed=3)
    assert data.is_standin and data.info["standin_for"] == "coat"
    assert data.name == "coat (simulated stand-in)"
    assert (data.n_users, data.n_items, data.threshold) == (290, 300, 4.0)
    assert (data.mar.groupby("user").size() == 16).all() and data.mar["user"].nunique() == 290
    assert 20 < len(data.mnar) / 290 < 28
    _check_contract(data)


def test_standin_shows_admonition_in_notebooks(tmp_path, monkeypatch):
    IPython = pytest.importorskip("IPython")
    import IPython.display

    shown = []
    monkeypatch.setenv("RECBIAS_DATA", str(tmp_path / "empty"))
    monkeypatch.delenv("RECBIAS_REQUIRE_DATA", raising=False)
    monkeypatch.setattr(IPython, "get_ipython", lambda: object())
    monkeypatch.setattr(IPython.display, "display", shown.append)
    with pytest.warns(datasets.StandinWarning):
        data = load_or_standin("coat", seed=0)
    assert not shown  # the loader only warns; the chapter's notice shows the box
    assert course.standin_notice(data) is True
    (html,) = [obj.data for obj in shown]
    assert '<div class="admonition warning">' in html and "Simulated stand-in" in html


@pytest.mark.parametrize("env", [("RECBIAS_REQUIRE_DATA", "1"), ("CI", "true")])
def test_standin_refused_when_data_required(env, tmp_path, monkeypatch):
    monkeypatch.setenv("RECBIAS_DATA", str(tmp_path / "empty"))
    monkeypatch.setenv(*env)
    with pytest.raises(DatasetNotFoundError, match="train.ascii"):
        load_or_standin("coat", seed=0)


def test_load_or_standin_prefers_real_data(monkeypatch, recwarn, tmp_path):
    _kuairec_files(tmp_path / "data" / "kuairec")
    monkeypatch.setenv("RECBIAS_DATA", str(tmp_path / "data"))
    data = load_or_standin("kuairec", seed=0)
    assert not data.is_standin and data.n_users == 3
    assert not [w for w in recwarn if issubclass(w.category, UserWarning)]


def test_corrupt_data_is_never_replaced_by_a_standin(coat_copy, tmp_path, monkeypatch):
    shutil.copytree(coat_copy, tmp_path / "data" / "coat")
    _flip_byte(tmp_path / "data" / "coat" / "train.ascii")
    monkeypatch.setenv("RECBIAS_DATA", str(tmp_path / "data"))
    with pytest.raises(DatasetChecksumError):
        load_or_standin("coat", seed=0)


def test_standin_shapes_match_the_real_datasets():
    shapes = {name: (kw["n_users"], kw["n_items"]) for name, kw in datasets.STANDINS.items()}
    assert shapes == {"coat": (290, 300), "yahoo_r3": (15400, 1000),
                      "movielens_100k": (943, 1682), "kuairec": (1411, 3327)}
    assert set(datasets.STANDINS) == set(datasets.DATASETS)
    assert datasets.STANDINS["yahoo_r3"]["n_mar_users"] == 5400


def test_unknown_name_is_a_value_error():
    with pytest.raises(ValueError, match="name must be one of"):
        load_or_standin("netflix", seed=0)


def test_kuairec_wang2025_split_partitions_the_small_matrix(monkeypatch, tmp_path):
    _kuairec_files(tmp_path / "data" / "kuairec")
    monkeypatch.setenv("RECBIAS_DATA", str(tmp_path / "data"))
    whole = load_kuairec()
    data = load_kuairec(split="wang2025")
    _check_contract(data)
    # the log's pairs inside the small matrix keep the log's ratings; the rest is the test set
    pd.testing.assert_frame_equal(data.mnar, pd.DataFrame(
        {"user": [0, 0, 1, 2, 2], "item": [0, 2, 1, 0, 2], "rating": [0.5, 2.0, 0.8, 4.1, 0.3]}))
    pd.testing.assert_frame_equal(data.full, pd.DataFrame(
        {"user": [0, 1, 1], "item": [1, 0, 2], "rating": [0.9, 2.4, 0.7]}))
    assert len(data.mnar) + len(data.full) == len(whole.full)
    both = data.mnar.merge(data.full, on=["user", "item"])
    assert both.empty
    assert data.info["split"] == "wang2025"
    assert data.info["paper_counts"] == {"mnar": 1_934_404, "full": 2_742_166}
    assert data.info["matches_paper"] is False  # made-up rows, of course
    assert whole.info["split"] == "all" and "paper_counts" not in whole.info


def test_kuairec_split_is_validated_before_any_file_is_read():
    with pytest.raises(ValueError, match="split"):
        load_kuairec(split="paper")


@pytest.mark.skipif(not (Path(os.environ.get("RECBIAS_DATA", "/nonexistent")) / "kuairec").is_dir(),
                    reason="KuaiRec is not in RECBIAS_DATA")
def test_kuairec_wang2025_split_counts_on_the_real_files():
    """Our reading of the paper's split must reproduce its Table 2 counts on the real data."""
    data = load_kuairec(split="wang2025")
    assert {"mnar": len(data.mnar), "full": len(data.full)} == data.info["paper_counts"]


def test_every_dataset_is_one_record_with_one_loader():
    from recbias_tutorial.data import _loaders, _registry

    assert tuple(_registry.RECORDS) == datasets.DATASETS == tuple(_loaders.LOADERS)
    for name, record in _registry.RECORDS.items():
        assert record.name == name and record.title
        assert set(record.required) <= set(record.sha256)  # every file read has a sum (or TOFU)
        assert datasets.STANDINS[name] is record.standin
        assert _registry.SHA256[name] is record.sha256  # the views are the records' own dicts
        assert (name in _registry.SOURCES) == (record.source is not None)
    assert "yahoo_r3" not in _registry.SOURCES  # Webscope licence: never downloaded
    with pytest.raises(ValueError, match="name must be a dataset of the registry"):
        _loaders._loader("netflix")
