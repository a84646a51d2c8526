r"""Private ranking kernels shared by metrics, estimators and the replications.

Nothing here validates its inputs: the public functions of :mod:`recbias_tutorial.metrics`
and :mod:`recbias_tutorial.estimators` do, once, before calling these kernels.

The rank of a test pair :math:`(u, i)` is its 0-based position :math:`Z_{ui}` in the stable
descending sort of the user's scores over the candidate items (all items minus ``exclude``;
the item being ranked always stays a candidate). Work is done in chunks of users with one
reused buffer, so the score matrix is never copied whole.
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pandas as pd
import scipy.sparse as sp

from ._jit import HAVE_NUMBA
from ._validation import check_feedback, check_k
from .scorer import Scorer, check_scores

CHUNK_CELLS = 1 << 20  # ~8 MB of float64 per chunk of users: stays in cache, one reused buffer
#: From this many cells (of a score matrix, or compared in one call) on, exact positions
#: use the compiled kernel: below, loading Numba would cost more than it saves.
COMPILED_MIN_CELLS = 4_000_000
_SORT_ROWS_PER_USER = 8  # above this many test rows per user, one sort beats comparisons
_SORT_ROWS_PER_USER_COMPILED = 256  # ... beats the compiled comparisons (measured: 1k items)
_DENSE_USERS = 0.75  # below this share of a chunk's users with test rows, rank only those users


class ExcludeMatrix:
    """The excluded pairs, built only by :func:`exclude_matrix`: a boolean CSR matrix over the
    users that have excluded pairs (plus an empty row 0 for every other user).

    Its size follows ``exclude``, not ``n_users`` (a scorer may describe 10^9 users). A
    distinct type, so that kernels can tell a matrix built here from our ids apart from any
    sparse matrix a caller passes (e.g. Cornac's ``train_set.csr_matrix``, in Cornac's own
    indices), which is refused instead of silently used.
    """

    def __init__(self, users: np.ndarray, items: np.ndarray, n_items: int) -> None:
        self.row_users, row = np.unique(users, return_inverse=True)
        m = sp.csr_matrix((np.ones(len(users), dtype=bool), (row + 1, items)),
                          shape=(len(self.row_users) + 1, n_items))
        m.sum_duplicates()
        self.matrix = m

    def _rows(self, users: slice | np.ndarray) -> np.ndarray:
        if isinstance(users, slice):
            users = np.arange(users.start, users.stop, dtype=np.int64)
        at = np.searchsorted(self.row_users, users)
        found = at < len(self.row_users)
        found[found] = self.row_users[at[found]] == users[found]
        return np.where(found, at + 1, 0)

    def __getitem__(self, users: slice | np.ndarray) -> sp.csr_matrix:
        """The excluded pairs of ``users`` (a slice or an id array), one CSR row each."""
        return self.matrix[self._rows(users)]

    def counts(self, users: np.ndarray) -> np.ndarray:
        """Number of excluded items of each user."""
        return np.diff(self.matrix.indptr)[self._rows(users)]

    def contains(self, users: np.ndarray, items: np.ndarray) -> np.ndarray:
        """Whether each (user, item) pair is excluded."""
        return np.asarray(self.matrix[self._rows(users), items]).ravel().astype(bool)


def exclude_matrix(exclude, shape) -> ExcludeMatrix | None:
    """Validate ``exclude`` (None or a user/item DataFrame) and build its matrix."""
    if exclude is None or isinstance(exclude, ExcludeMatrix):
        return exclude
    if sp.issparse(exclude):
        raise ValueError("exclude must be a pandas DataFrame with columns user, item (a sparse "
                         f"matrix such as Cornac's train_set.csr_matrix uses other ids), got "
                         f"{type(exclude).__name__}")
    check_feedback(exclude, "exclude", *shape, require_rating=False, allow_empty=True, unique=False)
    return ExcludeMatrix(exclude["user"].to_numpy(np.int64), exclude["item"].to_numpy(np.int64),
                         shape[1])


def is_scorer(scores) -> bool:
    """True for a :class:`recbias_tutorial.Scorer` (scores read in blocks of users)."""
    return isinstance(scores, Scorer)


def raw_chunk(scores, lo: int, hi: int) -> tuple[np.ndarray, bool]:
    """Scores of users lo..hi-1 and whether the array is a fresh copy (safe to modify)."""
    if is_scorer(scores):
        return scores.block(lo, hi), True
    return scores[lo:hi], False


def masked_chunk(block: np.ndarray, fresh: bool, excl, users: slice | np.ndarray,
                 buffer: np.ndarray | None = None) -> np.ndarray:
    """``block`` (the rows of ``users``) with excluded pairs set to -inf, copied only if needed.

    A fresh block is masked in place; a view of the caller's matrix is copied into ``buffer``
    (float64, at least as many rows, reused across chunks) first.
    """
    if excl is None:
        return block
    sub = excl[users]
    if sub.nnz == 0:
        return block
    n = block.shape[0]
    if fresh:
        out = block
    else:
        if buffer is None or buffer.shape[0] < n:
            buffer = np.empty(block.shape, dtype=float)
        out = buffer[:n]
        np.copyto(out, block)
    rows = np.repeat(np.arange(n), np.diff(sub.indptr))
    out[rows, sub.indices] = -np.inf
    return out


def n_threads() -> int:
    """Threads for evaluating user chunks: ``RECBIAS_THREADS`` or the CPU count (at most 8);
    one in the browser (Pyodide cannot start threads)."""
    if sys.platform == "emscripten":
        return 1
    env = os.environ.get("RECBIAS_THREADS")
    if env:
        try:
            return max(1, int(env))
        except ValueError:
            raise ValueError(f"RECBIAS_THREADS must be an integer, got {env!r}") from None
    return max(1, min(8, os.cpu_count() or 1))


_POOL: dict[str, ThreadPoolExecutor] = {}  # one long-lived pool, keyed by its thread count
_POOL_LOCK = threading.Lock()
_IN_POOL = threading.local()  # set in the pool's threads: a nested call runs serially


def _pool(workers: int) -> ThreadPoolExecutor:
    """The shared pool of ``workers`` threads (starting threads per call costs milliseconds)."""
    with _POOL_LOCK:
        pool = _POOL.get("pool")
        if pool is None or pool._max_workers != workers:
            if pool is not None:
                pool.shutdown(wait=False)
            pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="recbias",
                                      initializer=setattr, initargs=(_IN_POOL, "active", True))
            _POOL["pool"] = pool
        return pool


def map_chunks(fn, spans: list[tuple]) -> None:
    """Call ``fn(*span)`` for every span (a chunk of users), on :func:`n_threads` threads.

    NumPy releases the GIL in the sorting, partitioning and comparison kernels, so chunks of
    different users run in parallel; ``fn`` must write only its own users' results. The
    calling thread works too (it takes the last chunks), so 2 threads use one pool thread.
    """
    workers = min(n_threads(), len(spans))
    if workers <= 1 or getattr(_IN_POOL, "active", False):
        for span in spans:
            fn(*span)
        return
    queue = iter(spans)
    lock = threading.Lock()
    failed = threading.Event()

    def drain() -> None:  # take chunks until none is left (balances uneven chunks)
        while not failed.is_set():
            with lock:
                span = next(queue, None)
            if span is None:
                return
            try:
                fn(*span)
            except BaseException:
                failed.set()  # the other threads stop after their current chunk
                raise

    futures = [_pool(workers - 1).submit(drain) for _ in range(workers - 1)]
    try:
        drain()
    finally:
        for future in futures:
            future.result()  # re-raises the first error of a chunk


def pair_scores(scores, users: np.ndarray, items: np.ndarray) -> np.ndarray:
    """Scores of the (user, item) pairs, read chunk by chunk from a scorer."""
    if not is_scorer(scores):
        return scores[users, items]
    out = np.empty(len(users))
    order = np.argsort(users, kind="stable")
    for lo, hi, a, b in test_spans(users[order], *scores.shape):
        rows = order[a:b]
        out[rows] = scores.block(lo, hi)[users[rows] - lo, items[rows]]
    return out


def test_spans(sorted_users: np.ndarray, n_users: int, n_items: int) -> list[tuple]:
    """The chunks of users that hold test rows, as ``(lo, hi, a, b)``: users ``lo..hi-1``
    own rows ``a..b-1`` of ``sorted_users``. Only chunks with test rows are listed, so the
    work and memory follow the test set, not ``n_users`` (a scorer may describe 10^9 users)."""
    if len(sorted_users) == 0:
        return []
    step = chunk_rows(n_items)
    los = np.unique(sorted_users // step) * step
    his = np.minimum(los + step, n_users)
    a = np.searchsorted(sorted_users, los)
    b = np.searchsorted(sorted_users, his)
    return [(int(lo), int(hi), int(i), int(j)) for lo, hi, i, j in zip(los, his, a, b)]


def chunk_rows(n_items: int) -> int:
    return max(1, CHUNK_CELLS // max(n_items, 1))


def _batches(n: int, width: int):
    """Slices of ``range(n)`` whose rows x ``width`` cells stay within the chunk budget."""
    step = max(1, CHUNK_CELLS // max(width, 1))
    for a in range(0, n, step):
        yield slice(a, min(n, a + step))


def exact_positions(m: np.ndarray, local: np.ndarray, s: np.ndarray,
                    items: np.ndarray, *, compiled: bool | None = None) -> np.ndarray:
    """Z of test rows by comparison: #candidates of the row's user (``m[local]``) scored > s plus
    #tied ones with a smaller column index. ``compiled``: one compiled pass over each test
    row's scores (:mod:`._ranking_kernels`: no temporaries, four times fewer passes); else
    NumPy's batched comparisons, which spare small problems loading Numba (0.5 s per
    process). None: compiled from :data:`COMPILED_MIN_CELLS` compared cells. Both give the
    same integers; memory stays within the chunk budget either way. Without Numba (the core
    install) always NumPy's: the kernel would run as Python, one cell at a time."""
    out = np.empty(len(s), dtype=np.int64)
    if compiled is None:
        compiled = len(s) * m.shape[1] >= COMPILED_MIN_CELLS
    compiled = compiled and HAVE_NUMBA
    if compiled:
        from ._ranking_kernels import exact_positions_into  # lazy: Numba loads on first use

        # m as given (a view compiles for its layout: no copy), s in its own dtype (compared
        # with m's entries as NumPy compares them)
        exact_positions_into(m, np.asarray(local, dtype=np.int64), np.asarray(s),
                             np.asarray(items, dtype=np.int64), out)
        return out
    cols = np.arange(m.shape[1])
    for b in _batches(len(s), m.shape[1]):
        rows, sv = m[local[b]], s[b, None]
        out[b] = (rows > sv).sum(axis=1) + ((rows == sv) & (cols < items[b, None])).sum(axis=1)
    return out


def _sorted_positions(m: np.ndarray, local: np.ndarray, s: np.ndarray,
                      items: np.ndarray) -> np.ndarray:
    """Z of test rows from one stable sort of each user's candidates (ties: smaller id first).

    Cheaper than :func:`exact_positions` when users have many test rows; memory is the chunk's
    rank matrix. A test pair that is itself excluded (``-inf`` in ``m``) ranks with its own
    score ``s``, exactly as in :func:`exact_positions`.
    """
    n_items = m.shape[1]
    rank = np.empty(m.shape, dtype=np.int64)
    np.put_along_axis(rank, np.argsort(-m, axis=1, kind="stable"),
                      np.arange(n_items)[None, :], axis=1)
    z = rank[local, items]
    dropped = np.flatnonzero(np.isneginf(m[local, items]))
    if len(dropped):
        z[dropped] = exact_positions(m, local[dropped], s[dropped], items[dropped])
    return z


def _excluded_cells(excl, users: slice | np.ndarray, shape: tuple[int, int]) -> np.ndarray | None:
    """The excluded pairs of a block of users as a boolean (rows, items) mask, or None."""
    if excl is None:
        return None
    sub = excl[users]
    if sub.nnz == 0:
        return None
    cells = np.zeros(shape, dtype=bool)
    cells[np.repeat(np.arange(shape[0]), np.diff(sub.indptr)), sub.indices] = True
    return cells


def _top_k_positions(block: np.ndarray, excluded: np.ndarray | None, local: np.ndarray,
                     s: np.ndarray, items: np.ndarray, k: int) -> np.ndarray:
    """Z capped at ``k``, from the unmasked ``block`` and the ``excluded`` cells of its users.

    No copy of the block and no full partition: the k-th largest candidate of a sample of
    ~sqrt(k * n_items) columns is a lower bound ``t`` of each user's k-th largest candidate, so
    every candidate that can precede a test item ranked < k scores >= ``t``. Those few
    candidates (about sqrt(k * n_items) per user) are gathered into a padded matrix and
    counted. A test item scored below ``t`` ranks >= k. Ties with another candidate need the
    ids: those rows are counted exactly on their users' masked rows.
    """
    n_rows, n_items = block.shape
    n_sample = min(n_items, max(4 * k, int(2 * np.sqrt(k * n_items))))
    step = n_items // n_sample
    sample = block[:, ::step]  # a strided copy of every step-th column
    if excluded is not None:
        sample = np.where(excluded[:, ::step], -np.inf, sample)
    else:
        sample = np.array(sample)
    width = sample.shape[1]
    sample.partition(width - k, axis=1)
    t = sample[:, width - k]  # k-th largest sampled candidate <= k-th largest candidate
    keep = block >= t[:, None]
    if excluded is not None:
        keep &= ~excluded
    counts = np.count_nonzero(keep, axis=1)
    top = np.full((n_rows, max(int(counts.max()), 1)), -np.inf)
    starts = np.cumsum(counts) - counts
    row_of = np.repeat(np.arange(n_rows), counts)
    top[row_of, np.arange(len(row_of)) - starts[row_of]] = block[keep]
    z = np.full(len(s), k, dtype=np.int64)
    inside = np.flatnonzero(s >= t[local])
    self_in = np.ones(len(inside), dtype=np.int64)  # the test item is among its own candidates
    if excluded is not None:
        self_in -= excluded[local[inside], items[inside]]
    tied_rows = []
    for b in _batches(len(inside), top.shape[1]):
        rows = inside[b]
        tv, sv = top[local[rows]], s[rows, None]
        z[rows] = (tv > sv).sum(1)
        tied_rows.append(rows[(tv == sv).sum(1) > self_in[b]])
    tied = np.concatenate(tied_rows) if tied_rows else np.empty(0, dtype=np.int64)
    if len(tied):
        users, at = np.unique(local[tied], return_inverse=True)
        masked = block[users] if excluded is None else np.where(excluded[users], -np.inf, block[users])
        z[tied] = exact_positions(masked, at, s[tied], items[tied])
    return np.minimum(z, k)


def positions(scores, test: pd.DataFrame, exclude, k: int | None, *,
              full_sort: bool | None = None) -> np.ndarray:
    """:func:`rank_positions` on inputs that were already validated.

    ``scores`` is a dense matrix or a :class:`~recbias_tutorial.Scorer` (read a chunk of users
    at a time). Exact positions (``k`` None) come from comparisons (:func:`exact_positions`)
    when users have few test rows and from one sort per user (:func:`_sorted_positions`) when
    they have many (``full_sort=None`` chooses per chunk; True / False force one way). Memory
    is bounded by the chunk budget :data:`CHUNK_CELLS` per thread in every path, whatever the
    test density. ``exclude`` may be None, a DataFrame or the matrix of :func:`exclude_matrix`.
    """
    n_users, n_items = scores.shape
    excl = exclude_matrix(exclude, scores.shape)
    users = test["user"].to_numpy(np.int64)
    items = test["item"].to_numpy(np.int64)
    out = np.empty(len(test), dtype=np.int64)
    order = np.argsort(users, kind="stable")
    exact = k is None or k >= n_items
    local_buffer = threading.local()  # one reusable masking buffer per thread
    compiled = HAVE_NUMBA and n_users * n_items >= COMPILED_MIN_CELLS  # the problem's size

    def run(lo: int, hi: int, a: int, b: int) -> None:
        rows = order[a:b]
        local = users[rows] - lo
        present = np.unique(local)
        if len(present) < _DENSE_USERS * (hi - lo):  # rank only the users with test rows
            sel = present + lo
            block, fresh = (scores(sel), True) if is_scorer(scores) else (scores[sel], True)
            local = np.searchsorted(present, local)
        else:
            sel = slice(lo, hi)
            block, fresh = raw_chunk(scores, lo, hi)
        s = block[local, items[rows]]  # the ranked item keeps its own score (read before masking)
        if not exact:
            excluded = _excluded_cells(excl, sel, block.shape)
            out[rows] = _top_k_positions(block, excluded, local, s, items[rows], k)
            return
        if excl is not None and not fresh and getattr(local_buffer, "array", None) is None:
            local_buffer.array = np.empty((min(n_users, chunk_rows(n_items)), n_items))
        m = masked_chunk(block, fresh, excl, sel, getattr(local_buffer, "array", None))
        per_user = _SORT_ROWS_PER_USER_COMPILED if compiled else _SORT_ROWS_PER_USER
        if full_sort or (full_sort is None and len(rows) > per_user * block.shape[0]):
            out[rows] = _sorted_positions(m, local, s, items[rows])
        else:
            out[rows] = exact_positions(m, local, s, items[rows], compiled=compiled)

    map_chunks(run, test_spans(users[order], n_users, n_items))
    return out


def n_candidates(shape: tuple[int, int], test: pd.DataFrame,
                 exclude: pd.DataFrame | None = None) -> np.ndarray:
    """Size of the candidate set :math:`|C_u|` for each test pair (the pair itself included).

    Examples
    --------
    >>> t = pd.DataFrame({"user": [0, 0], "item": [0, 1]})
    >>> n_candidates((1, 5), t, exclude=pd.DataFrame({"user": [0], "item": [0]})).tolist()
    [5, 4]
    """
    users = test["user"].to_numpy(np.int64)
    items = test["item"].to_numpy(np.int64)
    n = np.full(len(test), shape[1], dtype=np.int64)
    excl = exclude_matrix(exclude, shape)
    if excl is not None:
        n -= excl.counts(users)
        n += excl.contains(users, items)  # the ranked item stays a candidate
    return n


def relevant(test: pd.DataFrame, threshold: float) -> pd.DataFrame:
    """Rows of ``test`` whose rating is at least ``threshold`` (the relevant test items)."""
    return test[test["rating"].to_numpy(dtype=float) >= threshold]


def ranking_input(scores, test, *, k: int | None, threshold: float,
                   name: str = "test") -> tuple[np.ndarray, int | None, pd.DataFrame]:
    """Validate scores, a feedback frame and a cut-off against them; return them with the
    relevant rows (``threshold`` is declared, so checked, by every public caller)."""
    scores = check_scores(scores)
    check_feedback(test, name, *scores.shape)
    if k is not None:
        k = check_k(k, scores.shape[1])
    rel = relevant(test, threshold)
    if len(rel) == 0:
        raise ValueError(f"{name} has no relevant items (rating >= threshold={threshold})")
    return scores, k, rel


#: Gains understood by the estimators' ``metric`` argument.
GAINS = ("recall", "dcg", "auc")


def gains(scores, rel: pd.DataFrame, metric: str, k: int, exclude) -> np.ndarray:
    """Gain c(Z) of each relevant test row: recall 1[Z<k], dcg 1[Z<k]/log2(Z+2), auc."""
    if metric == "auc":
        z = positions(scores, rel, exclude, None)
        n = n_candidates(scores.shape, rel, exclude)
        return np.where(n > 1, 1.0 - z / np.maximum(n - 1, 1), 1.0)
    z = positions(scores, rel, exclude, k)
    if metric == "recall":
        return (z < k).astype(float)
    return dcg_gain(z, k)


def dcg_gain(z: np.ndarray, k) -> np.ndarray:
    """DCG@k gain of positions z: 1/log2(z + 2) in the top k, else 0.

    The one place the package writes this gain. ``k`` is a cut-off, or a 1-D array of
    cut-offs: then one row of gains per cut-off, shape ``(len(k), len(z))``.
    """
    k = np.asarray(k)
    if k.ndim == 0:
        return np.where(z < k, 1.0 / np.log2(z + 2.0), 0.0)
    return np.where(z[None, :] < k[:, None], (1.0 / np.log2(z + 2.0))[None, :], 0.0)


def ideal_dcg(k, n_rel) -> np.ndarray:
    """IDCG@k of ``n_rel`` relevant items (counts below 1 read as 1): the DCG of the first
    ``min(n_rel, k)`` positions. ``k`` may be an array that broadcasts against ``n_rel``."""
    ideal = np.cumsum(1.0 / np.log2(np.arange(int(np.max(k))) + 2.0))
    return ideal[np.clip(np.minimum(n_rel, k), 1, None) - 1]


def ndcg(dcg, n_rel, k):
    """nDCG@k: DCG divided by the ideal DCG of ``n_rel`` >= 1 relevant items."""
    return dcg / ideal_dcg(k, n_rel)


def mean_ndcg(codes: np.ndarray, n_codes: int, z: np.ndarray, k: int) -> float:
    """Mean over users (``codes`` in ``0..n_codes-1``) with >= 1 row of their nDCG@k, each
    user's rows being their relevant items; NaN without rows."""
    if len(codes) == 0:
        return float("nan")
    dcg = np.bincount(codes, weights=dcg_gain(z, k), minlength=n_codes)
    n_rel = np.bincount(codes, minlength=n_codes)
    has = n_rel > 0
    return float(np.mean(ndcg(dcg[has], n_rel[has], k)))


def cell_ndcg_means(dcg: np.ndarray, n_rel: np.ndarray, k) -> np.ndarray:
    """Per stratum, the mean nDCG@k of its users with >= 1 row: ``dcg`` and ``n_rel`` are
    (..., n_strata, n_users) sums and counts per cell; NaN for an empty stratum."""
    has = n_rel > 0
    per_user = np.where(has, ndcg(dcg, n_rel, k), 0.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        return per_user.sum(axis=-1) / has.sum(axis=-1)


def as_sets(test, name: str) -> dict[str, pd.DataFrame]:
    """A feedback frame as ``{name: frame}``, or a mapping of named frames as is."""
    if isinstance(test, pd.DataFrame):
        return {name: test}
    if isinstance(test, Mapping) and len(test) and all(
            isinstance(v, pd.DataFrame) for v in test.values()):
        return {str(k): v for k, v in test.items()}
    raise ValueError(f"{name} must be a DataFrame or a non-empty mapping name -> DataFrame")


def recall_per_user(users: np.ndarray, pos: np.ndarray, ks: np.ndarray) -> pd.DataFrame:
    """Per user, the share of its relevant pairs with position < k, for every k in ``ks``."""
    uniq, inv = np.unique(users, return_inverse=True)
    n = np.bincount(inv, minlength=len(uniq)).astype(float)
    order = np.argsort(ks, kind="stable")
    first = np.searchsorted(ks[order], pos, side="right")  # first sorted k with pos < k
    width = len(ks) + 1
    counts = np.bincount(inv * width + first, minlength=len(uniq) * width)
    hits = np.cumsum(counts.reshape(len(uniq), width)[:, :-1], axis=1)
    out = np.empty((len(uniq), len(ks)))
    out[:, order] = hits / n[:, None]
    return pd.DataFrame(out, index=pd.Index(uniq, name="user"), columns=pd.Index(ks, name="k"))


def curves_frame(frames: dict[str, pd.DataFrame], per_user: bool) -> pd.DataFrame:
    """Per-user frames of several sets as one frame: stacked, or their means one row per set."""
    if per_user:
        return pd.concat(frames, names=["set"])
    return pd.DataFrame({name: f.mean(axis=0) for name, f in frames.items()}).T.rename_axis("set")


def within_user_positions(scores, users: np.ndarray, items: np.ndarray) -> np.ndarray:
    """0-based position of each pair among its user's pairs, by score descending, then id."""
    order = np.lexsort((items, -pair_scores(scores, users, items), users))  # user, score desc, id
    su = users[order]
    starts = np.r_[0, np.flatnonzero(su[1:] != su[:-1]) + 1]
    pos = np.empty(len(users), dtype=np.int64)
    pos[order] = np.arange(len(su)) - np.repeat(starts, np.diff(np.r_[starts, len(su)]))
    return pos
