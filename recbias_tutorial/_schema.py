"""Declared schemas of the tables that cross a public boundary: columns, dtypes, finiteness,
ranges and unique keys, checked where the table is read.

The frame counterpart of :mod:`recbias_tutorial._params` (which declares scalars): a
:class:`TableSchema` names each column's :class:`Column` rule and the key columns that
identify a row. :meth:`TableSchema.check` returns the frame typed by the schema (numbers as
numbers, a missing number as NaN, text as text) or raises a ``ValueError`` naming the table
and the column: a text entry in a numeric column, a NaN or an infinity where the rule says
finite, a value out of range, a missing or undeclared column, a duplicated key (a run or a
learning rate stored twice would be double-counted by every mean over it).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

__all__ = ["Column", "TableSchema"]


@dataclass(frozen=True)
class Column:
    """One column's rule.

    ``dtype``: ``"int"``, ``"float"``, ``"str"`` or ``"auto"`` (numbers when every non-empty
    entry is one, missing as NaN; else text: for tables no schema declares).
    ``finite``: no missing value (NaN or an
    empty entry) for numbers, no empty text for ``"str"``; an infinity is never accepted.
    A non-finite ``"int"`` column (an epoch that did not happen) comes back as float64 with
    NaN where it is missing. ``low`` / ``high``: inclusive bounds of a number.
    """

    dtype: str
    finite: bool = True
    low: float | None = None
    high: float | None = None

    def __post_init__(self) -> None:
        if self.dtype not in ("int", "float", "str", "auto"):
            raise ValueError(f"dtype must be 'int', 'float', 'str' or 'auto', got {self.dtype!r}")

    def apply(self, values: pd.Series, where: str) -> pd.Series:
        """``values`` typed by this rule; a ``ValueError`` naming ``where`` if they break it."""
        if self.dtype == "auto":
            try:
                numbers = Column("float", finite=False).apply(values, where)
                whole = numbers.notna().all() and (numbers == np.round(numbers)).all()
                return numbers.astype(np.int64) if whole and values.dtype.kind in "iu" else numbers
            except ValueError:
                return Column("str", finite=False).apply(values, where)
        if self.dtype == "str":
            out = values.astype(str)
            if self.finite and (values.isna() | (out == "")).any():
                raise ValueError(f"{where} has empty entries")
            return out.where(values.notna(), "")
        textual = values.dtype == object or pd.api.types.is_string_dtype(values.dtype)
        text = values.astype(str).str.strip().where(values.notna(), "") if textual else None
        numbers = pd.to_numeric(values.where(text != "", np.nan) if text is not None else values,
                                errors="coerce")
        unparsed = numbers.isna() & values.notna() & ((text != "") if text is not None else True)
        if unparsed.any():
            raise ValueError(f"{where} must hold {self.dtype} numbers, got "
                             f"{values[unparsed].iloc[0]!r}")
        numbers = numbers.astype(np.float64)
        if np.isinf(numbers).any():
            raise ValueError(f"{where} holds an infinity")
        missing = numbers.isna()
        if self.finite and missing.any():
            raise ValueError(f"{where} has missing values (NaN or empty) in "
                             f"{int(missing.sum())} rows")
        present = numbers[~missing]
        if self.dtype == "int" and (present != np.round(present)).any():
            fraction = present[present != np.round(present)].iloc[0]
            raise ValueError(f"{where} must hold integers, got {fraction!r}")
        if self.low is not None and (present < self.low).any():
            raise ValueError(f"{where} must be >= {self.low:g}, got {present.min()!r}")
        if self.high is not None and (present > self.high).any():
            raise ValueError(f"{where} must be <= {self.high:g}, got {present.max()!r}")
        if self.dtype == "int" and not missing.any():
            return numbers.astype(np.int64)
        return numbers


@dataclass(frozen=True)
class TableSchema:
    """The columns of a table (in any order), its unique key and the rule of its further
    columns (``others``: e.g. one measure column per estimator; None: none allowed)."""

    columns: Mapping[str, Column]
    key: tuple[str, ...] = ()
    others: Column | None = None
    required: tuple[str, ...] | None = field(default=None)  # None: every declared column

    def check(self, frame: pd.DataFrame, name: str) -> pd.DataFrame:
        """``frame`` typed by the schema (a copy); a ``ValueError`` naming ``name`` otherwise."""
        if not isinstance(frame, pd.DataFrame):
            raise ValueError(f"{name} must be a pandas DataFrame, got {type(frame).__name__}")
        need = tuple(self.columns) if self.required is None else self.required
        missing = [c for c in need if c not in frame.columns]
        if missing:
            raise ValueError(f"{name} lacks the column(s) {missing} (has {list(frame.columns)})")
        if frame.columns.duplicated().any():
            raise ValueError(f"{name} has duplicated column names")
        out = {}
        for column in frame.columns:
            rule = self.columns.get(column, self.others)
            if rule is None:
                raise ValueError(f"{name} has an undeclared column {column!r} (declared: "
                                 f"{list(self.columns)})")
            out[column] = rule.apply(frame[column], f"{name}.{column}")
        typed = pd.DataFrame(out, index=frame.index)
        key = [c for c in self.key if c in typed.columns]
        if key:
            dup = typed.duplicated(key, keep=False)
            if dup.any():
                first = typed.loc[dup, key].iloc[0].to_dict()
                raise ValueError(f"{name} has {int(dup.sum())} rows sharing their key {key} "
                                 f"(e.g. {first}): each must appear once (a run stored twice would "
                                 "be counted twice)")
        return typed


def checked_frame(frame: object, name: str, *, numbers: tuple = (), texts: tuple = (),
                  key: tuple = ()) -> pd.DataFrame:
    """The columns ``numbers`` (finite reals) and ``texts`` (as text) of ``frame``, typed, with
    ``key`` unique; a ``ValueError`` naming ``name`` for a frame that is not one, is empty,
    lacks a column, holds a NaN, an infinity or text among the numbers, or repeats a key
    (the boundary check of the chart builders, whose specs must be valid JSON)."""
    if not isinstance(frame, pd.DataFrame):
        raise ValueError(f"{name} must be a pandas DataFrame, got {type(frame).__name__}")
    columns = list(dict.fromkeys([*numbers, *texts]))
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise ValueError(f"{name} is missing column(s) {missing}")
    if frame.empty:
        raise ValueError(f"{name} is empty: there is nothing to draw")
    schema = TableSchema({**{c: Column("str", finite=False) for c in texts},
                          **{c: Column("float") for c in numbers}}, key=tuple(key))
    return schema.check(frame.loc[:, columns], name)
