r"""Full-catalogue ranks and per-user ranking metrics.

The rank of a test pair :math:`(u, i)` is its 0-based position :math:`Z_{ui}` in the stable
descending sort of the user's scores over the candidate items :math:`C_u` (all items minus the
pairs in ``exclude``; the item being ranked always stays a candidate): the number of candidates
scored strictly higher plus the number of tied candidates with a smaller id. Every item of the
catalogue is ranked: sampled-negative metrics are inconsistent (Krichene & Rendle, 2020).

Work is vectorised over users and items and done in chunks of users, so the score matrix is
never copied whole. :func:`recall_curves` gives Recall@K for many K from one sort per user.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd
import scipy.sparse as sp

from ._validation import check_feedback, check_k, check_scores

_CHUNK_CELLS = 1 << 20  # ~8 MB of float64 per chunk of users: stays in cache, one reused buffer


def _exclude_matrix(exclude, shape) -> sp.csr_matrix | None:
    if exclude is None:
        return None
    check_feedback(exclude, "exclude", *shape, require_rating=False, allow_empty=True, unique=False)
    u = exclude["user"].to_numpy(np.int64)
    i = exclude["item"].to_numpy(np.int64)
    m = sp.csr_matrix((np.ones(len(u), dtype=bool), (u, i)), shape=shape)
    m.sum_duplicates()
    return m


def _masked_chunk(scores, excl, lo, hi, buffer=None) -> np.ndarray:
    """Scores of users lo..hi-1 with excluded pairs set to -inf (copied only when needed).

    ``buffer`` (float64, at least hi-lo rows) is reused across chunks to avoid reallocating.
    """
    block = scores[lo:hi]
    if excl is None:
        return block
    sub = excl[lo:hi]
    if sub.nnz == 0:
        return block
    if buffer is None or buffer.shape[0] < hi - lo:
        buffer = np.empty(block.shape, dtype=float)
    out = buffer[: hi - lo]
    np.copyto(out, block)
    rows = np.repeat(np.arange(hi - lo), np.diff(sub.indptr))
    out[rows, sub.indices] = -np.inf
    return out


def _chunk_rows(n_items: int) -> int:
    return max(1, _CHUNK_CELLS // max(n_items, 1))


def _chunks(n_users: int, n_items: int):
    step = _chunk_rows(n_items)
    for lo in range(0, n_users, step):
        yield lo, min(n_users, lo + step)


def _exact_positions(m_rows: np.ndarray, s: np.ndarray, items: np.ndarray) -> np.ndarray:
    """Z for each row of m_rows: #entries > s plus #entries == s with a smaller column index."""
    higher = (m_rows > s[:, None]).sum(axis=1)
    cols = np.arange(m_rows.shape[1])
    tied = ((m_rows == s[:, None]) & (cols[None, :] < items[:, None])).sum(axis=1)
    return higher + tied


def rank_positions(scores, test: pd.DataFrame, *, exclude: pd.DataFrame | None = None,
                   k: int | None = None) -> np.ndarray:
    """Position :math:`Z_{ui}` of every test pair in its user's full-catalogue ranking.

    Parameters
    ----------
    scores : array of shape (n_users, n_items)
        Finite scores, higher is better.
    test : DataFrame
        Pairs to rank (columns ``user``, ``item``; other columns are ignored).
    exclude : DataFrame, optional
        Pairs removed from the candidates (typically the training pairs).
    k : int, optional
        When given, only positions below ``k`` are computed exactly and larger ones are
        returned as ``k`` (all that top-k metrics need; much faster). ``None``: exact.

    Returns
    -------
    numpy.ndarray of int64, one position per row of ``test`` (0 = ranked first).

    Examples
    --------
    >>> scores = np.array([[0.9, 0.1, 0.5, 0.5]])
    >>> test = pd.DataFrame({"user": [0, 0, 0], "item": [1, 2, 3]})
    >>> rank_positions(scores, test).tolist()
    [3, 1, 2]
    >>> rank_positions(scores, test, exclude=pd.DataFrame({"user": [0], "item": [0]})).tolist()
    [2, 0, 1]
    """
    scores = check_scores(scores)
    n_users, n_items = scores.shape
    check_feedback(test, "test", n_users, n_items, require_rating=False, unique=False)
    if k is not None:
        k = check_k(k, n_items)
    return _positions(scores, test, exclude, k)


def _positions(scores: np.ndarray, test: pd.DataFrame, exclude, k: int | None, *,
               full_sort: bool = False) -> np.ndarray:
    """:func:`rank_positions` on inputs that were already validated.

    ``full_sort=True`` (exact positions only, ``k`` must be None) sorts each user's candidates
    once instead of comparing every test pair with all of them: faster when users have many
    test pairs (the few test pairs that are themselves excluded are counted exactly).
    ``exclude`` may be a DataFrame or the matrix of :func:`_exclude_matrix`.
    """
    n_users, n_items = scores.shape
    excl = exclude if sp.issparse(exclude) else _exclude_matrix(exclude, scores.shape)
    buffer = None if excl is None else np.empty((min(n_users, _chunk_rows(n_items)), n_items))
    users = test["user"].to_numpy(np.int64)
    items = test["item"].to_numpy(np.int64)
    out = np.empty(len(test), dtype=np.int64)
    order = np.argsort(users, kind="stable")
    bounds = np.searchsorted(users[order], np.arange(n_users + 1))
    for lo, hi in _chunks(n_users, n_items):
        rows = order[bounds[lo]:bounds[hi]]
        if len(rows) == 0:
            continue
        m = _masked_chunk(scores, excl, lo, hi, buffer)
        local = users[rows] - lo
        if full_sort:  # stable sort of -scores: ties keep the smaller id first
            rank = np.empty(m.shape, dtype=np.int64)
            np.put_along_axis(rank, np.argsort(-m, axis=1, kind="stable"),
                              np.arange(n_items)[None, :], axis=1)
            z = rank[local, items[rows]]
            dropped = np.flatnonzero(np.isneginf(m[local, items[rows]]))
            if len(dropped):  # an excluded test pair still ranks with its own score
                d_rows = rows[dropped]
                z[dropped] = _exact_positions(m[local[dropped]], scores[users[d_rows], items[d_rows]],
                                              items[d_rows])
            out[rows] = z
            continue
        s = scores[users[rows], items[rows]]  # the ranked item keeps its own score
        if k is None or k >= n_items:
            out[rows] = _exact_positions(m[local], s, items[rows])
            continue
        # Top-k path: only candidates in the user's top k can precede an item ranked < k.
        top = np.argpartition(m, n_items - k, axis=1)[:, n_items - k:]  # no negated copy
        top_val = np.take_along_axis(m, top, axis=1)
        kth = top_val.min(axis=1)[local]
        tv, ti = top_val[local], top[local]
        z = (tv > s[:, None]).sum(1) + ((tv == s[:, None]) & (ti < items[rows, None])).sum(1)
        z = np.where(s < kth, k, z)
        boundary = s == kth  # ties with the k-th value may extend past the partition: count exactly
        if boundary.any():
            b = np.flatnonzero(boundary)
            z[b] = _exact_positions(m[local[b]], s[b], items[rows][b])
        out[rows] = np.minimum(z, k)
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
    excl = _exclude_matrix(exclude, shape)
    if excl is not None:
        n -= np.diff(excl.indptr)[users]
        n += np.asarray(excl[users, items]).ravel().astype(np.int64)  # the ranked item stays
    return n


def relevant(test: pd.DataFrame, threshold: float) -> pd.DataFrame:
    """Rows of ``test`` whose rating is at least ``threshold`` (the relevant test items)."""
    return test[test["rating"].to_numpy(dtype=float) >= threshold]


def _ranking_input(scores, test, *, k: int | None, threshold: float,
                   name: str = "test") -> tuple[np.ndarray, int | None, pd.DataFrame]:
    """Validate scores, a feedback frame and a cut-off; return them with the relevant rows."""
    scores = check_scores(scores)
    check_feedback(test, name, *scores.shape)
    if k is not None:
        k = check_k(k, scores.shape[1])
    rel = relevant(test, threshold)
    if len(rel) == 0:
        raise ValueError(f"{name} has no relevant items (rating >= threshold={threshold})")
    return scores, k, rel


def _dcg_gain(z: np.ndarray, k: int) -> np.ndarray:
    """DCG@k gain of positions z: 1/log2(z + 2) in the top k, else 0."""
    return np.where(z < k, 1.0 / np.log2(z + 2.0), 0.0)


def _ndcg(dcg, n_rel, k: int):
    """nDCG@k: DCG divided by the ideal DCG of ``n_rel`` >= 1 relevant items."""
    ideal = np.cumsum(1.0 / np.log2(np.arange(k) + 2.0))
    return dcg / ideal[np.minimum(n_rel, k) - 1]


def ranking_metrics(scores, test: pd.DataFrame, *, k: int = 10, threshold: float = 4.0,
                    exclude: pd.DataFrame | None = None, auc: bool = True) -> pd.DataFrame:
    """Per-user Recall@k, Precision@k, nDCG@k, MAP@k and AUC over the full catalogue.

    Users with at least one relevant test item (``rating >= threshold``) get a row.
    nDCG@k is normalised by the ideal DCG of the user's relevant test items; AP@k divides by
    ``min(k, |relevant|)``; AUC is the share of (relevant, other candidate) pairs ordered
    correctly, where the other candidates are the non-relevant candidate items (as in
    Cornac's ``AUC`` metric).

    Returns
    -------
    DataFrame indexed by ``user`` with columns ``n_relevant``, ``recall``, ``precision``,
    ``ndcg``, ``map`` and (unless ``auc=False``, which skips the full ranking and is much
    faster) ``auc``.

    Examples
    --------
    >>> scores = np.array([[0.9, 0.1, 0.5, 0.7]])
    >>> test = pd.DataFrame({"user": [0, 0], "item": [1, 3], "rating": [5.0, 4.0]})
    >>> ranking_metrics(scores, test, k=2).round(3).to_dict("records")
    [{'n_relevant': 2, 'recall': 0.5, 'precision': 0.5, 'ndcg': 0.387, 'map': 0.25, 'auc': 0.25}]
    """
    scores, k, rel = _ranking_input(scores, test, k=k, threshold=threshold)
    z = _positions(scores, rel, exclude, None if auc else k)
    users = rel["user"].to_numpy(np.int64)
    frame = pd.DataFrame({"user": users, "z": z,
                          "n_cand": n_candidates(scores.shape, rel, exclude)})
    frame = frame.sort_values(["user", "z"], kind="stable")
    frame["hit"] = frame["z"] < k
    frame["rank_among_rel"] = frame.groupby("user").cumcount()  # relevant items ranked above
    frame["dcg"] = _dcg_gain(frame["z"].to_numpy(), k)
    frame["prec_at_hit"] = np.where(frame["hit"], (frame["rank_among_rel"] + 1) / (frame["z"] + 1), 0.0)
    # negatives ranked below a relevant item: candidates below it minus relevant ones below it
    g = frame.groupby("user", sort=True)
    n_rel = g.size()
    frame["n_rel"] = frame["user"].map(n_rel)
    below = frame["n_cand"] - 1 - frame["z"]
    rel_below = frame["n_rel"] - 1 - frame["rank_among_rel"]
    frame["neg_below"] = below - rel_below
    g = frame.groupby("user", sort=True)
    hits = g["hit"].sum()
    n_neg = g["n_cand"].first() - n_rel
    out = pd.DataFrame({
        "n_relevant": n_rel,
        "recall": hits / n_rel,
        "precision": hits / k,
        "ndcg": _ndcg(g["dcg"].sum(), n_rel.to_numpy(), k),
        "map": g["prec_at_hit"].sum() / np.minimum(n_rel, k),
        "auc": g["neg_below"].sum() / (n_rel * n_neg).where(n_neg > 0),
    })
    if not auc:
        out = out.drop(columns="auc")
    out.index.name = "user"
    return out


# --------------------------------------------------------------------------------------
# many cut-offs at once
# --------------------------------------------------------------------------------------
def _check_cutoffs(ks, n_items: int, name: str) -> np.ndarray:
    """A non-empty 1-D int64 array of cut-offs in 1..n_items."""
    arr = np.atleast_1d(np.asarray(ks))
    if arr.ndim != 1 or len(arr) == 0 or not np.issubdtype(arr.dtype, np.integer):
        raise ValueError(f"{name} must be a non-empty list of integers, got {ks!r}")
    if arr.min() < 1 or arr.max() > n_items:
        raise ValueError(f"{name} must lie in 1..{n_items} (the catalogue size), got {arr.tolist()}")
    return arr.astype(np.int64)


def _as_sets(test, name: str) -> dict[str, pd.DataFrame]:
    """A feedback frame as ``{name: frame}``, or a mapping of named frames as is."""
    if isinstance(test, pd.DataFrame):
        return {name: test}
    if isinstance(test, Mapping) and len(test) and all(
            isinstance(v, pd.DataFrame) for v in test.values()):
        return {str(k): v for k, v in test.items()}
    raise ValueError(f"{name} must be a DataFrame or a non-empty mapping name -> DataFrame")


def _recall_per_user(users: np.ndarray, pos: np.ndarray, ks: np.ndarray) -> pd.DataFrame:
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


def _curves_frame(frames: dict[str, pd.DataFrame], per_user: bool) -> pd.DataFrame:
    """Per-user frames of several sets as one frame: stacked, or their means one row per set."""
    if per_user:
        return pd.concat(frames, names=["set"])
    return pd.DataFrame({name: f.mean(axis=0) for name, f in frames.items()}).T.rename_axis("set")


def recall_curves(scores, test, ks, *, threshold: float = 4.0,
                  exclude: pd.DataFrame | None = None, per_user: bool = False) -> pd.DataFrame:
    r"""Full-catalogue Recall@K for many K at once (one sort per user instead of one per K).

    For every relevant pair of ``test`` the position :math:`Z_{ui}` in the stable descending
    sort of the user's scores over all items minus ``exclude`` is computed once (ties: smaller
    item id first, as in :func:`rank_positions`); Recall@K is the mean over users with a
    relevant test item of the share of their relevant test items with :math:`Z < K`. Each
    value equals :func:`recbias_tutorial.estimators.aoa` with ``metric="recall"`` and the
    same ``k``, ``threshold`` and ``exclude``.

    Applied to a randomly exposed set :math:`D_{rand}`, this is the URE estimate of
    :func:`recbias_tutorial.estimators.ure_recall` (equal to it when the scores have no ties).

    Parameters
    ----------
    scores : array (n_users, n_items)
    test : DataFrame, or mapping name -> DataFrame
        Pairs with ``user``, ``item``, ``rating``. Several sets share one sort of the scores.
    ks : sequence of int
        Cut-offs in 1..n_items.
    threshold : float
        A pair is relevant when ``rating >= threshold``.
    exclude : DataFrame, optional
        Pairs removed from the candidates (the training pairs); the item being ranked always
        stays a candidate, as in :func:`rank_positions`.
    per_user : bool
        Return per-user values (for a user-level bootstrap) instead of means.

    Returns
    -------
    pandas.DataFrame
        ``per_user=False``: one row per set (index ``set``; ``"test"`` for a single frame),
        one column per K. ``per_user=True``: rows indexed by (``set``, ``user``).

    Examples
    --------
    >>> scores = np.array([[0.9, 0.1, 0.5, 0.3], [0.2, 0.8, 0.4, 0.6]])
    >>> test = pd.DataFrame({"user": [0, 0, 1], "item": [1, 2, 1], "rating": [5.0, 4.0, 5.0]})
    >>> recall_curves(scores, test, [1, 2, 4]).loc["test"].tolist()
    [0.5, 0.75, 1.0]
    >>> recall_curves(scores, test, [1], exclude=pd.DataFrame({"user": [0], "item": [0]}))[1].item()
    0.75
    """
    scores = check_scores(scores)
    sets = _as_sets(test, "test")
    ks = _check_cutoffs(ks, scores.shape[1], "ks")
    excl = _exclude_matrix(exclude, scores.shape)
    rels = {}
    for name, frame in sets.items():
        label = f"test[{name!r}]" if len(sets) > 1 else "test"
        rel = _ranking_input(scores, frame, k=None, threshold=threshold, name=label)[2]
        rels[name] = rel
    pos = np.split(_positions(scores, pd.concat(rels.values()), excl, None, full_sort=True),
                   np.cumsum([len(r) for r in rels.values()])[:-1])
    frames = {name: _recall_per_user(rel["user"].to_numpy(np.int64), z, ks)
              for (name, rel), z in zip(rels.items(), pos)}
    return _curves_frame(frames, per_user)
