"""The :class:`FeedbackData` container shared by loaders, simulated worlds and splits."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from .._validation import check_feedback, check_int, check_real

__all__ = ["FeedbackData"]

COLUMNS = ("user", "item", "rating")


@dataclass(frozen=True, eq=False)
class FeedbackData:
    """Explicit or implicit feedback split by how it was collected.

    Attributes
    ----------
    name : str
        Short name of the dataset (``"coat"``, ``"yahoo_r3"``, ...).
    n_users, n_items : int
        Size of the id spaces; ids are contiguous ``0..n-1``.
    mnar : pandas.DataFrame
        Biased, user-selected / closed-loop feedback: columns ``user``, ``item``
        (int64) and ``rating`` (float).
    mar : pandas.DataFrame or None
        Randomly exposed feedback, same columns, or ``None``.
    full : pandas.DataFrame or None
        Fully observed feedback (every user-item pair of a sub-matrix), or ``None``.
    threshold : float
        An item is relevant when ``rating >= threshold``.
    propensity : numpy.ndarray or None
        True probability that each (user, item) pair enters ``mnar``, shape
        ``(n_users, n_items)``; known only for worlds with full ground truth
        (:func:`simulate`, :func:`semi_synthetic`).
    info : dict
        Free-form provenance (e.g. ``{"standin": True}`` for simulated stand-ins).

    Raises
    ------
    ValueError
        On construction (and ``dataclasses.replace``), if ``n_users`` or ``n_items`` is not a
        positive integer, ``threshold`` not a finite number, a frame not feedback with integer
        ids inside the id spaces and finite ratings (``mnar`` and ``mar`` also without
        duplicate pairs), or ``propensity`` not of shape ``(n_users, n_items)``: functions
        that index by id would otherwise fail deep inside or read the wrong rows.
    AttributeError
        On assignment to a field: the container is frozen
        (``dataclasses.FrozenInstanceError``); use ``dataclasses.replace``.

    See Also
    --------
    recbias_tutorial.data.load_or_standin : a real dataset, or a simulated stand-in.
    recbias_tutorial.data.simulate : a simulated world with ``full`` and ``propensity``.
    recbias_tutorial.data.random_split : seeded splits of its frames.

    Examples
    --------
    >>> log = pd.DataFrame({"user": [0, 1], "item": [1, 0], "rating": [5.0, 3.0]})
    >>> data = FeedbackData("toy", n_users=2, n_items=2, mnar=log)
    >>> data
    FeedbackData(name='toy', n_users=2, n_items=2, mnar=2, threshold=4.0)
    >>> data.is_standin
    False
    """

    name: str
    n_users: int
    n_items: int
    mnar: pd.DataFrame
    mar: pd.DataFrame | None = None
    full: pd.DataFrame | None = None
    threshold: float = 4.0
    propensity: np.ndarray | None = None
    info: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        n_users = check_int(self.n_users, "n_users")
        n_items = check_int(self.n_items, "n_items")
        check_real(self.threshold, "threshold")
        check_feedback(self.mnar, "mnar", n_users, n_items, allow_empty=True)
        if self.mar is not None:
            check_feedback(self.mar, "mar", n_users, n_items, allow_empty=True)
        if self.full is not None:  # can hold every pair: ids and ratings, not a sort for pairs
            check_feedback(self.full, "full", n_users, n_items, allow_empty=True, unique=False)
        if self.propensity is not None and np.shape(self.propensity) != (n_users, n_items):
            raise ValueError(f"propensity must have shape (n_users, n_items) = "
                             f"{(n_users, n_items)}, got {np.shape(self.propensity)}")

    @property
    def is_standin(self) -> bool:
        """True when this is a simulated stand-in for a missing real dataset."""
        return bool(self.info.get("standin", False))

    def __repr__(self) -> str:  # short: DataFrames would flood notebooks
        parts = [f"mnar={len(self.mnar):,}"]
        for label in ("mar", "full"):
            frame = getattr(self, label)
            if frame is not None:
                parts.append(f"{label}={len(frame):,}")
        return (f"FeedbackData(name={self.name!r}, n_users={self.n_users:,}, "
                f"n_items={self.n_items:,}, {', '.join(parts)}, threshold={self.threshold})")


def feedback_frame(user, item, rating) -> pd.DataFrame:
    """A feedback frame with the package's dtypes: int64 ids and float64 ratings."""
    return pd.DataFrame({"user": np.asarray(user, dtype=np.int64),
                         "item": np.asarray(item, dtype=np.int64),
                         "rating": np.asarray(rating, dtype=np.float64)})
