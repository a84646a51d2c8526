r"""Full-catalogue ranks and per-user ranking metrics.

The rank of a test pair :math:`(u, i)` is its 0-based position :math:`Z_{ui}` in the stable
descending sort of the user's scores over the candidate items :math:`C_u` (all items minus the
pairs in ``exclude``; the item being ranked always stays a candidate): the number of candidates
scored strictly higher plus the number of tied candidates with a smaller id. Every item of the
catalogue is ranked: sampled-negative metrics are inconsistent (Krichene & Rendle, 2020).

Work is vectorised over users and items and done in chunks of users, so the score matrix is
never copied whole.
"""

from __future__ import annotations

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


def _positions(scores: np.ndarray, test: pd.DataFrame, exclude, k: int | None) -> np.ndarray:
    """:func:`rank_positions` on inputs that were already validated."""
    n_users, n_items = scores.shape
    excl = _exclude_matrix(exclude, scores.shape)
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
    scores = check_scores(scores)
    check_feedback(test, "test", *scores.shape)
    k = check_k(k, scores.shape[1])
    rel = relevant(test, threshold)
    if len(rel) == 0:
        raise ValueError(f"test has no relevant items (rating >= threshold={threshold})")
    z = _positions(scores, rel, exclude, None if auc else k)
    users = rel["user"].to_numpy(np.int64)
    frame = pd.DataFrame({"user": users, "z": z,
                          "n_cand": n_candidates(scores.shape, rel, exclude)})
    frame = frame.sort_values(["user", "z"], kind="stable")
    frame["hit"] = frame["z"] < k
    frame["rank_among_rel"] = frame.groupby("user").cumcount()  # relevant items ranked above
    frame["dcg"] = np.where(frame["hit"], 1.0 / np.log2(frame["z"] + 2.0), 0.0)
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
    ideal = np.cumsum(1.0 / np.log2(np.arange(k) + 2.0))
    idcg = ideal[np.minimum(n_rel.to_numpy(), k) - 1]
    n_neg = g["n_cand"].first() - n_rel
    out = pd.DataFrame({
        "n_relevant": n_rel,
        "recall": hits / n_rel,
        "precision": hits / k,
        "ndcg": g["dcg"].sum() / idcg,
        "map": g["prec_at_hit"].sum() / np.minimum(n_rel, k),
        "auc": g["neg_below"].sum() / (n_rel * n_neg).where(n_neg > 0),
    })
    if not auc:
        out = out.drop(columns="auc")
    out.index.name = "user"
    return out
