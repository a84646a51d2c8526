"""Feedback inputs as partitions of users: a pandas frame, a dask.dataframe or Parquet files.

A *source* is a list of :class:`Part`: a piece of a feedback frame and the range of user ids
it holds. The blocks of :func:`~recbias_tutorial.distributed.evaluate` are the test source's
parts; every other frame (exclusions, random data, the intervention's train and MAR data)
gives each block the rows of its users from every part whose range meets the block's, so
those frames may be partitioned in any way. Parts are loaded where the block's task runs:
a Parquet file is read by the worker itself, a dask.dataframe partition is computed there.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from .._params import Interval, declare
from .._validation import check_feedback

#: The file :func:`write_feedback` writes beside the parts: sizes, ranges and rows.
META_FILE = "_feedback.json"


@dataclass(frozen=True)
class Part:
    """One partition: ``data`` is a pandas frame, a Parquet file's path or a Delayed; ``lo``
    and ``hi`` are its smallest and largest user id (None when it has no rows)."""

    data: Any
    lo: int | None
    hi: int | None
    rows: int | None = None
    positions: np.ndarray | None = None  # a pandas block's row positions in the whole frame


@dataclass(frozen=True)
class Source:
    """A feedback frame cut into parts; ``n_users``/``n_items`` when its writer recorded them."""

    name: str
    parts: tuple[Part, ...]
    n_users: int | None = None
    n_items: int | None = None
    frame: pd.DataFrame | None = None  # the whole frame, when given as pandas

    @property
    def rows(self) -> int | None:
        counts = [p.rows for p in self.parts]
        return None if any(c is None for c in counts) else int(sum(counts))


def _is_dask_frame(obj: Any) -> bool:
    return type(obj).__module__.split(".")[0] in ("dask", "dask_expr") and hasattr(obj, "to_delayed")


def _parquet_files(path: Any, name: str) -> list[str] | None:
    """The Parquet files of a path (a file, a folder of ``*.parquet``) or list of paths."""
    if isinstance(path, (str, os.PathLike)):
        p = Path(path)
        if p.is_dir():
            files = sorted(str(f) for f in p.glob("*.parquet"))
            if not files:
                raise ValueError(f"{name} is a folder without .parquet files: {p}")
            return files
        if p.is_file():
            return [str(p)]
        raise ValueError(f"{name} is a path that does not exist: {p}")
    if isinstance(path, (list, tuple)) and path and all(isinstance(f, (str, os.PathLike))
                                                         for f in path):
        files = [str(f) for f in path]
        missing = [f for f in files if not Path(f).is_file()]
        if missing:
            raise ValueError(f"{name} lists files that do not exist, e.g. {missing[0]}")
        return files
    return None


def _footer_range(file: str) -> tuple[int | None, int | None, int]:
    """Smallest and largest user id and the row count of a Parquet file, from its footer."""
    import pyarrow.parquet as pq

    meta = pq.ParquetFile(file).metadata
    names = [meta.schema.column(i).name for i in range(meta.num_columns)]
    if "user" not in names:
        raise ValueError(f"Parquet file {file} has no column 'user'")
    col = names.index("user")
    lo = hi = None
    for g in range(meta.num_row_groups):
        group = meta.row_group(g)
        if group.num_rows == 0:
            continue
        stats = group.column(col).statistics
        if stats is None or not stats.has_min_max:
            return None, None, meta.num_rows  # unknown: measured by a task
        lo = stats.min if lo is None else min(lo, stats.min)
        hi = stats.max if hi is None else max(hi, stats.max)
    return (None if lo is None else int(lo)), (None if hi is None else int(hi)), meta.num_rows


def source(frame: Any, name: str, *, users_per_task: int) -> Source:
    """The parts of an input frame (pandas, dask.dataframe, Parquet path or file list)."""
    if isinstance(frame, pd.DataFrame):
        return _pandas_source(frame, name, users_per_task)
    files = _parquet_files(frame, name)
    if files is not None:
        meta_path = Path(files[0]).parent / META_FILE
        meta = json.loads(meta_path.read_text()) if meta_path.is_file() else None
        if meta is not None and set(f["file"] for f in meta["files"]) == {Path(f).name
                                                                          for f in files}:
            by_name = {f["file"]: f for f in meta["files"]}
            parts = tuple(Part(f, by_name[Path(f).name]["user_min"],
                               by_name[Path(f).name]["user_max"], by_name[Path(f).name]["rows"])
                          for f in files)
            return Source(name, parts, meta["n_users"], meta["n_items"])
        return Source(name, tuple(Part(f, *_footer_range(f)) for f in files))
    if _is_dask_frame(frame):
        missing = [c for c in ("user", "item") if c not in frame.columns]
        if missing:
            raise ValueError(f"{name} is missing column(s) {missing}")
        return Source(name, tuple(Part(d, None, None) for d in frame.to_delayed()))
    raise ValueError(f"{name} must be a pandas DataFrame, a dask.dataframe partitioned by user, "
                     f"a Parquet file or folder, or a list of Parquet files; got "
                     f"{type(frame).__name__}")


def _pandas_source(frame: pd.DataFrame, name: str, users_per_task: int) -> Source:
    """A frame in the client's memory, cut into blocks of ``users_per_task`` user ids."""
    check_feedback(frame, name, require_rating=False, allow_empty=name != "test", unique=False)
    users = frame["user"].to_numpy(np.int64)
    order = np.argsort(users, kind="stable")  # keeps each user's rows in their order
    cuts = users[order] // users_per_task
    bounds = np.flatnonzero(np.r_[True, cuts[1:] != cuts[:-1], True])
    parts = []
    for a, b in zip(bounds[:-1], bounds[1:]):
        rows = np.sort(order[a:b])  # the block's rows in their order in the frame
        parts.append(Part(frame.iloc[rows], int(users[order[a]]), int(users[order[b - 1]]),
                          len(rows), rows))
    return Source(name, tuple(parts), frame=frame)


def load(part: Part, columns: list[str], lo: int, hi: int, name: str) -> pd.DataFrame:
    """The rows of users ``lo..hi`` (inclusive) of a part, with only ``columns`` (those that
    exist, ``user`` and ``item`` at least): what a task reads."""
    data = part.data
    if isinstance(data, str):
        import pyarrow.parquet as pq

        present = set(pq.read_schema(data).names)
        frame = pd.read_parquet(data, columns=[c for c in columns if c in present],
                                filters=[("user", ">=", lo), ("user", "<=", hi)])
    elif isinstance(data, pd.DataFrame):
        frame = data[[c for c in columns if c in data.columns]]
    else:  # a computed dask partition, handed over by the scheduler
        frame = data[[c for c in columns if c in data.columns]]
    missing = [c for c in ("user", "item") if c not in frame.columns]
    if missing:
        raise ValueError(f"{name} is missing column(s) {missing}")
    users = frame["user"].to_numpy()
    if len(users) and not np.issubdtype(users.dtype, np.integer):
        raise ValueError(f"{name}.user must hold integer ids, got dtype {users.dtype}")
    keep = (users >= lo) & (users <= hi)
    return frame if keep.all() else frame[keep]


def user_range(frame: pd.DataFrame) -> tuple[int | None, int | None, int]:
    """Smallest and largest user of a partition and its rows (the task that measures ranges)."""
    if "user" not in frame.columns:
        raise ValueError("a partition is missing column 'user'")
    users = frame["user"].to_numpy()
    if len(users) == 0:
        return None, None, 0
    return int(users.min()), int(users.max()), len(users)


def check_partitioned(src: Source) -> None:
    """Refuse test parts whose user ranges overlap: a user split across partitions would be
    counted as two users (or its rows ranked against only part of its exclusions)."""
    spans = sorted((p.lo, p.hi, i) for i, p in enumerate(src.parts) if p.lo is not None)
    for (lo_a, hi_a, a), (lo_b, hi_b, b) in zip(spans[:-1], spans[1:]):
        if lo_b <= hi_a:
            raise ValueError(
                f"{src.name} is not partitioned by user: partitions {a} (users {lo_a}..{hi_a}) "
                f"and {b} (users {lo_b}..{hi_b}) overlap, so a user's rows may be split across "
                "them. Each partition must hold a contiguous range of users, disjoint from the "
                "others': write the frame with write_feedback, or use ddf.set_index('user') / "
                "sort by user before writing")


def covering(parts: tuple[Part, ...], lo: int, hi: int) -> list[Part]:
    """The parts whose user range meets ``lo..hi`` (a part of unknown range always does)."""
    return [p for p in parts if p.lo is None or (p.rows != 0 and p.lo <= hi and p.hi >= lo)]


@declare(users_per_file=Interval(int, 1), n_users=Interval(int, 1, optional=True),
         n_items=Interval(int, 1, optional=True))
def write_feedback(frame: pd.DataFrame, path: str | os.PathLike, *, users_per_file: int = 10_000,
                   n_users: int | None = None, n_items: int | None = None) -> Path:
    """Write a feedback frame as Parquet files partitioned by user, for :func:`evaluate`.

    File ``part-NNNNN.parquet`` holds the rows of users ``N*users_per_file`` to
    ``(N+1)*users_per_file - 1`` (only files with rows are written), each user's rows in
    their order in ``frame``; ``_feedback.json`` records the sizes, each file's user range
    and row count. Frames written with the same ``users_per_file`` (a test log and its
    training log) have matching files, so a block reads one file of each. The folder is
    written under a temporary name and renamed when complete: nothing half written remains
    after an error.

    Parameters
    ----------
    frame : pandas.DataFrame
        Feedback with integer columns ``user``, ``item`` (and usually ``rating``; other
        columns, e.g. a per-row ``propensity``, are kept).
    path : str or path-like
        Folder to create; it must not exist yet.
    users_per_file : int, default 10,000
        User ids per file (a block of :func:`evaluate`).
    n_users, n_items : int, optional
        Size of the id spaces (default: largest id + 1), recorded so that :func:`evaluate`
        can check that every model scores the whole catalogue.

    Returns
    -------
    pathlib.Path
        The folder written.

    Raises
    ------
    ValueError
        If ``frame`` is not a non-empty DataFrame with integer, non-negative ``user`` and
        ``item`` ids (within ``n_users``/``n_items`` when given) and finite ratings (when it
        has a ``rating`` column); if ``users_per_file``, ``n_users`` or ``n_items`` is not a
        positive integer; if ``path`` exists.

    See Also
    --------
    recbias_tutorial.distributed.evaluate : reads such a folder block by block on the workers.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> frame = pd.DataFrame({"user": [0, 0, 5], "item": [1, 2, 0], "rating": [5.0, 3.0, 4.0]})
    >>> folder = pathlib.Path(tempfile.mkdtemp()) / "test"
    >>> sorted(f.name for f in write_feedback(frame, folder, users_per_file=4).iterdir())
    ['_feedback.json', 'part-00000.parquet', 'part-00001.parquet']
    """
    check_feedback(frame, "frame", n_users or np.iinfo(np.int64).max,
                   n_items or np.iinfo(np.int64).max,
                   require_rating="rating" in getattr(frame, "columns", ()), unique=False)
    target = Path(path)
    if target.exists():
        raise ValueError(f"path must not exist yet (nothing is overwritten), got {target}")
    users = frame["user"].to_numpy(np.int64)
    n_users = int(users.max()) + 1 if n_users is None else n_users
    n_items = int(frame["item"].max()) + 1 if n_items is None else n_items
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=target.parent))
    try:
        order = np.argsort(users, kind="stable")
        cuts = users[order] // users_per_file
        bounds = np.flatnonzero(np.r_[True, cuts[1:] != cuts[:-1], True])
        files = []
        for a, b in zip(bounds[:-1], bounds[1:]):
            part = frame.iloc[order[a:b]].reset_index(drop=True)
            part = part.astype({"user": np.int64, "item": np.int64})
            name = f"part-{int(cuts[a]):05d}.parquet"
            part.to_parquet(tmp / name, index=False)
            files.append({"file": name, "user_min": int(part["user"].iloc[0]),
                          "user_max": int(part["user"].iloc[-1]), "rows": len(part)})
        (tmp / META_FILE).write_text(json.dumps(
            {"n_users": n_users, "n_items": n_items, "users_per_file": users_per_file,
             "columns": [str(c) for c in frame.columns], "files": files}, indent=1))
        os.replace(tmp, target)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return target
