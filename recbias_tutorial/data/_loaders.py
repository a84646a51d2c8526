"""Loaders of the real datasets, each returning a :class:`FeedbackData`.

Four real datasets are supported (``DATASETS``):

- ``coat``: ``mnar`` = ``train.ascii``, ``mar`` = ``test.ascii``; threshold 4.0.
- ``yahoo_r3``: ``mnar`` = ``...-train.txt``, ``mar`` = ``...-test.txt``; threshold 4.0.
- ``movielens_100k``: ``mnar`` = ``u.data``, no ``mar``; threshold 4.0.
- ``kuairec``: ``full`` = small matrix, ``mnar`` = big matrix restricted to the small
  matrix's users and videos; ``rating`` = watch ratio, threshold 2.0.

Files are looked up in ``$RECBIAS_DATA/<name>/``, then in the user cache
(``$RECBIAS_CACHE`` or ``pooch.os_cache("recbias_tutorial")``), then downloaded with
pooch (Coat, MovieLens 100K and KuaiRec only; not when ``RECBIAS_OFFLINE=1``). Every file
read is checked against the package's sha256 registry. Chapters call
:func:`~recbias_tutorial.load_or_standin`, which falls back to a simulated world of the same
shape when a dataset is missing, unless ``CI=true`` or ``RECBIAS_REQUIRE_DATA=1``.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd

from .._params import Options, declare
from .._validation import check_choice
from . import _files
from ._feedback import FeedbackData, feedback_frame
from ._registry import DATASETS, RECORDS

__all__ = ["LOADERS", "load", "load_coat", "load_kuairec", "load_movielens_100k", "load_yahoo_r3"]

#: The loader of each dataset, registered by :func:`_loader` (one per record of the registry).
LOADERS: dict[str, Callable[[], FeedbackData]] = {}


def _loader(name: str) -> Callable:
    """Register the decorated function as the loader of the dataset record ``name``."""
    if name not in RECORDS:
        raise ValueError(f"name must be a dataset of the registry {DATASETS}, got {name!r}")

    def add(function: Callable[[], FeedbackData]) -> Callable[[], FeedbackData]:
        LOADERS[name] = function
        return function

    return add

def _check_ids(frame: pd.DataFrame, n_users: int, n_items: int, path: Path) -> pd.DataFrame:
    for column, n in (("user", n_users), ("item", n_items)):
        values = frame[column].to_numpy()
        if len(values) and (values.min() < 0 or values.max() >= n):
            raise ValueError(f"{path}: {column} ids must lie in 0..{n - 1} after conversion, "
                             f"got {values.min()}..{values.max()}")
    return frame


def _info(located: _files.Located, **extra) -> dict:
    return {"standin": False, "source": str(located.folder), "sha256": located.sha256, **extra}


def _read_dense(path: Path, shape: tuple[int, int]) -> pd.DataFrame:
    """Non-zero cells of a dense whitespace-separated integer matrix (0 = missing)."""
    matrix = np.loadtxt(path, dtype=np.int64, ndmin=2)
    if matrix.shape != shape:
        raise ValueError(f"{path}: expected a {shape[0]}x{shape[1]} matrix, "
                         f"got {matrix.shape[0]}x{matrix.shape[1]}")
    user, item = np.nonzero(matrix)
    return feedback_frame(user, item, matrix[user, item])


@_loader("coat")
def load_coat() -> FeedbackData:
    """Coat shopping (Schnabel et al., ICML 2016): 290 users x 300 coats, 1-5 stars.

    ``mnar`` = ``train.ascii`` (24 self-selected coats per user), ``mar`` = ``test.ascii``
    (16 uniformly random coats per user). Both files are dense 290x300 matrices with 0
    for missing. Downloaded from the authors' Cornell page when needed.

    Returns
    -------
    FeedbackData
        ``threshold=4.0``.

    Raises
    ------
    DatasetNotFoundError
        When the files are absent and cannot be downloaded (offline, or the download
        failed).
    DatasetChecksumError
        When a file (or the downloaded archive) does not match its sha256.
    ValueError
        If a file is not a 290x300 matrix.

    See Also
    --------
    recbias_tutorial.data.load : any dataset by name.
    recbias_tutorial.data.load_or_standin : falls back to a simulated stand-in.
    recbias_tutorial.data.drop_seen : removes MAR pairs that are also in the log.

    Examples
    --------
    >>> data = load_coat()  # doctest: +SKIP
    >>> len(data.mnar), len(data.mar)  # doctest: +SKIP
    (6960, 4640)
    """
    located = _files.locate("coat")
    shape = (290, 300)
    return FeedbackData(
        name="coat", n_users=shape[0], n_items=shape[1],
        mnar=_read_dense(located.paths["train.ascii"], shape),
        mar=_read_dense(located.paths["test.ascii"], shape),
        threshold=4.0, info=_info(located))


def _read_triples(path: Path, n_users: int, n_items: int, *, extra: int = 0) -> pd.DataFrame:
    """Tab-separated ``user item rating [...]`` with 1-based ids, as 0-based frame."""
    names = ["user", "item", "rating"] + [f"_{k}" for k in range(extra)]
    raw = pd.read_csv(path, sep="\t", header=None, names=names, usecols=[0, 1, 2],
                      dtype={"user": np.int64, "item": np.int64, "rating": np.float64})
    frame = feedback_frame(raw["user"] - 1, raw["item"] - 1, raw["rating"])
    frame = frame.sort_values(["user", "item"], kind="stable", ignore_index=True)
    return _check_ids(frame, n_users, n_items, path)


@_loader("yahoo_r3")
def load_yahoo_r3() -> FeedbackData:
    """Yahoo! R3 music ratings (Marlin & Zemel): 15,400 users x 1,000 songs, 1-5 stars.

    ``mnar`` = ``ydata-ymusic-rating-study-v1_0-train.txt`` (user-selected songs),
    ``mar`` = ``ydata-ymusic-rating-study-v1_0-test.txt`` (10 random songs for each of
    the first 5,400 users). The files' 1-based ids become 0-based.

    The data is never downloaded: Yahoo! Webscope shares it only under its data-sharing
    agreement (https://webscope.sandbox.yahoo.com/catalog.php?datatype=r, dataset R3).
    Put the two files in ``$RECBIAS_DATA/yahoo_r3/`` (or the user cache's ``yahoo_r3/``).

    Returns
    -------
    FeedbackData
        ``threshold=4.0``.

    Raises
    ------
    DatasetNotFoundError
        With instructions when the files are absent.
    DatasetChecksumError
        When a file does not match its sha256.
    ValueError
        If a file holds ids outside the 15,400 users or 1,000 songs.

    See Also
    --------
    recbias_tutorial.data.load : any dataset by name.
    recbias_tutorial.data.load_or_standin : falls back to a simulated stand-in.
    recbias_tutorial.data.restrict_to_mar_users : keep the 5,400 users with MAR data.

    Examples
    --------
    >>> data = load_yahoo_r3()  # doctest: +SKIP
    >>> data.mar["user"].nunique()  # doctest: +SKIP
    5400
    """
    located = _files.locate("yahoo_r3")
    n_users, n_items = 15400, 1000
    paths = located.paths
    return FeedbackData(
        name="yahoo_r3", n_users=n_users, n_items=n_items,
        mnar=_read_triples(paths["ydata-ymusic-rating-study-v1_0-train.txt"], n_users, n_items),
        mar=_read_triples(paths["ydata-ymusic-rating-study-v1_0-test.txt"], n_users, n_items),
        threshold=4.0, info=_info(located, attribution=(
            "Yahoo! Webscope dataset ydata-ymusic-rating-study-v1_0, "
            "https://webscope.sandbox.yahoo.com/")))


@_loader("movielens_100k")
def load_movielens_100k() -> FeedbackData:
    """MovieLens 100K (GroupLens): 943 users x 1,682 movies, 100,000 ratings of 1-5 stars.

    ``mnar`` = ``u.data`` (``user item rating timestamp``, tab-separated, 1-based ids,
    converted to 0-based; timestamps dropped). There is no randomly exposed set
    (``mar`` and ``full`` are None). Downloaded from GroupLens when needed; the
    GroupLens terms forbid redistributing it.

    Returns
    -------
    FeedbackData
        ``threshold=4.0``; only ``mnar``.

    Raises
    ------
    DatasetNotFoundError
        When the files are absent and cannot be downloaded (offline, or the download
        failed).
    DatasetChecksumError
        When a file (or the downloaded archive) does not match its sha256.
    ValueError
        If the file holds ids outside the 943 users or 1,682 movies.

    See Also
    --------
    recbias_tutorial.data.load : any dataset by name.
    recbias_tutorial.data.load_or_standin : falls back to a simulated stand-in.

    Examples
    --------
    >>> data = load_movielens_100k()  # doctest: +SKIP
    >>> data.n_users, data.n_items, len(data.mnar)  # doctest: +SKIP
    (943, 1682, 100000)
    """
    located = _files.locate("movielens_100k")
    n_users, n_items = 943, 1682
    mnar = _read_triples(located.paths["u.data"], n_users, n_items, extra=1)
    return FeedbackData(name="movielens_100k", n_users=n_users, n_items=n_items, mnar=mnar,
                        threshold=4.0, info=_info(located))


def _read_kuairec(path: Path) -> tuple[pd.DataFrame, int]:
    """``user_id, video_id, watch_ratio`` of a KuaiRec matrix; non-finite ratios dropped.

    A file that does not end with a newline was cut mid-row (an interrupted copy), one with
    only its header (or no finite ratio) holds no data, and a negative ratio (play time /
    video length) cannot be real: each is an error naming the file, never a silently
    dropped row or an empty dataset.
    """
    with path.open("rb") as handle:
        handle.seek(0, 2)
        size = handle.tell()
        handle.seek(max(0, size - 1))
        if size == 0 or handle.read(1) != b"\n":
            raise ValueError(f"{path}: the file is empty or ends mid-row (truncated copy?)")
    try:
        raw = pd.read_csv(path, usecols=["user_id", "video_id", "watch_ratio"],
                          dtype={"user_id": np.int64, "video_id": np.int64,
                                 "watch_ratio": np.float64})
    except (ValueError, pd.errors.ParserError) as exc:
        raise ValueError(f"{path}: not a KuaiRec matrix ({type(exc).__name__}: {exc})") from exc
    if raw.empty:
        raise ValueError(f"{path}: the file has only its header and no rows (truncated copy?)")
    ratio = raw["watch_ratio"].to_numpy()
    finite = np.isfinite(ratio)
    if not finite.any():
        raise ValueError(f"{path}: no row has a finite watch_ratio (all missing or infinite)")
    negative = np.flatnonzero(finite & (ratio < 0))
    if len(negative):
        raise ValueError(
            f"{path}: column watch_ratio must be >= 0 (play time / video length), but "
            f"{len(negative)} row(s) are negative, e.g. {ratio[negative[0]]:g} in data "
            f"row {negative[0] + 1}")
    return raw.loc[finite], int((~finite).sum())


def _parse_kuairec(small_path: Path, big_path: Path) -> dict:
    small, small_bad = _read_kuairec(small_path)
    big, big_bad = _read_kuairec(big_path)
    users = pd.Index(np.unique(small["user_id"].to_numpy()))
    videos = pd.Index(np.unique(small["video_id"].to_numpy()))
    big = big.loc[big["user_id"].isin(users) & big["video_id"].isin(videos)]
    frames, merged = {}, {}
    for label, raw in (("full", small), ("mnar", big)):
        # One row per (user, video), sorted, with the mean watch ratio of repeated rows.
        key = (users.get_indexer(raw["user_id"]).astype(np.int64) * len(videos)
               + videos.get_indexer(raw["video_id"]))
        pairs, inverse = np.unique(key, return_inverse=True)
        total = np.bincount(inverse, weights=raw["watch_ratio"].to_numpy(), minlength=len(pairs))
        count = np.bincount(inverse, minlength=len(pairs))
        frames[label] = feedback_frame(pairs // len(videos), pairs % len(videos), total / count)
        merged[label] = len(key) - len(pairs)
    return dict(n_users=len(users), n_items=len(videos), **frames,
                info={"user_ids": users.to_numpy(), "video_ids": videos.to_numpy(),
                      "duplicates_merged": merged,
                      "nonfinite_dropped": {"full": small_bad, "mnar": big_bad}})


#: Wang et al. (WWW 2025), Table 2: KuaiRec "Biased train" and "test (D_full)" counts.
WANG2025_KUAIREC_COUNTS = {"mnar": 1_934_404, "full": 2_742_166}
_KUAIREC_SPLITS = ("all", "wang2025")


def _split_wang2025(full: pd.DataFrame, mnar: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The small matrix's pairs split into those the feed's log also holds and the rest."""
    n = int(max(full["item"].max(), mnar["item"].max() if len(mnar) else 0)) + 1
    key_full = full["user"].to_numpy() * n + full["item"].to_numpy()
    key_mnar = mnar["user"].to_numpy() * n + mnar["item"].to_numpy()
    logged = mnar[np.isin(key_mnar, key_full)].reset_index(drop=True)
    unlogged = full[~np.isin(key_full, key_mnar)].reset_index(drop=True)
    return unlogged, logged


@_loader("kuairec")
def load_kuairec(*, split: str = "all") -> FeedbackData:
    """KuaiRec 2.0 (Gao et al., CIKM 2022): a fully observed block of a video feed.

    With ``split="all"`` (default): ``full`` = ``small_matrix.csv`` (1,411 users x 3,327
    videos, 99.6% observed); ``mnar`` = ``big_matrix.csv`` (the closed-loop log) restricted
    to the small matrix's users and videos.

    With ``split="wang2025"``: the small matrix's pairs are split in two, as the counts of
    Wang et al. (WWW 2025, Table 2: 1,934,404 biased training pairs + 2,742,166 fully
    exposed test pairs = the small matrix's 4,676,570) require. The paper does not state
    its rule and its code was not reachable: this option is **our reading** — ``mnar`` =
    the small matrix's pairs that the closed-loop log (``big_matrix.csv``) also holds, with
    the log's watch ratio; ``full`` = the small matrix's other pairs, so that no pair is in
    both. ``info["paper_counts"]`` holds the paper's counts and ``info["matches_paper"]``
    says whether this reading reproduces them on the files at hand. Ids are remapped to contiguous 0-based ids over the small matrix's
    users and videos, in increasing order of the original ids (``info["user_ids"]`` and
    ``info["video_ids"]`` map them back). ``rating`` is ``watch_ratio`` (play time /
    video length) and a video is relevant when it is watched at least twice
    (``threshold=2.0``, the binarisation the KuaiRec authors suggest).

    The official files contain repeated (user, video) rows (re-watches); each pair keeps
    the **mean** of its watch ratios (the counts merged are in
    ``info["duplicates_merged"]``). Rows with a missing or infinite ratio are dropped.

    Files may sit directly in ``<root>/kuairec/`` or in ``<root>/kuairec/KuaiRec 2.0/data/``
    as in ``KuaiRec.zip``, which is downloaded from Zenodo (record 18164998, ~430 MB) when
    needed. Their sha256 sums are not in the registry: the first sums seen are recorded
    in ``<cache>/kuairec/SHA256SUMS.first-seen`` and checked on every later load
    (trust on first use; the downloaded archive itself is checked by MD5).

    Parameters
    ----------
    split : {"all", "wang2025"}, keyword-only
        ``"all"``: the whole small matrix as ``full`` and the log's pairs in its block as
        ``mnar`` (they overlap); ``"wang2025"``: the disjoint split described above.

    Returns
    -------
    FeedbackData
        ``full`` and ``mnar``, ``threshold=2.0``; ``info`` maps the ids back (and, for
        ``split="wang2025"``, holds ``paper_counts`` and ``matches_paper``).

    Raises
    ------
    DatasetNotFoundError
        When the files are absent and cannot be downloaded (offline, or the download
        failed).
    DatasetChecksumError
        When a file does not match the sha256 first seen, or the downloaded archive fails
        its MD5 check.
    ValueError
        If a file lacks the ``user_id``, ``video_id`` or ``watch_ratio`` column, is cut
        mid-row, has no data rows, holds a negative ``watch_ratio``, or ``split`` is not
        one of ``"all"``, ``"wang2025"``.

    See Also
    --------
    recbias_tutorial.data.load : any dataset by name.
    recbias_tutorial.data.load_or_standin : falls back to a simulated stand-in.
    recbias_tutorial.estimators.ure_recall : evaluation on random samples of ``full``.

    Examples
    --------
    >>> data = load_kuairec()  # doctest: +SKIP
    >>> data.n_users, data.n_items, data.threshold  # doctest: +SKIP
    (1411, 3327, 2.0)
    """
    split = check_choice(split, "split", _KUAIREC_SPLITS)
    located = _files.locate("kuairec")
    parsed = _parse_kuairec(located.paths["small_matrix.csv"], located.paths["big_matrix.csv"])
    _files.record_first_seen("kuairec", located)  # only files that also parsed are trusted
    extra = {"split": split}
    if split == "wang2025":
        parsed["full"], parsed["mnar"] = _split_wang2025(parsed["full"], parsed["mnar"])
        counts = {"mnar": len(parsed["mnar"]), "full": len(parsed["full"])}
        extra.update(paper_counts=dict(WANG2025_KUAIREC_COUNTS),
                     matches_paper=counts == WANG2025_KUAIREC_COUNTS)
    info = _info(located, **parsed.pop("info"), **extra)
    return FeedbackData(name="kuairec", threshold=2.0, info=info, **parsed)


@declare(name=Options(DATASETS))
def load(name: str) -> FeedbackData:
    """Load dataset ``name`` (one of ``DATASETS``).

    Parameters
    ----------
    name : {"coat", "yahoo_r3", "movielens_100k", "kuairec"}
        The dataset.

    Returns
    -------
    FeedbackData
        What the dataset's loader (e.g. :func:`load_coat`) returns.

    Raises
    ------
    ValueError
        If ``name`` is not a known dataset (or the loader finds a malformed file).
    DatasetNotFoundError
        When the files are absent and cannot be downloaded.
    DatasetChecksumError
        When a file does not match its sha256.

    See Also
    --------
    recbias_tutorial.data.load_or_standin : the same with a simulated fallback.
    recbias_tutorial.data.load_coat : one of the loaders.

    Examples
    --------
    >>> load("netflix")
    Traceback (most recent call last):
    ...
    ValueError: name must be one of ('coat', 'yahoo_r3', 'movielens_100k', 'kuairec'), got 'netflix'
    """
    return LOADERS[name]()
