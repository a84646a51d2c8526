"""The declared schema of every stored results table (``recbias_tutorial/results/``).

One :class:`~recbias_tutorial._schema.TableSchema` per (paper, table label of its
provenance.json); :func:`recbias_tutorial._stored_results.read_stored_results` applies it, so a
stored column comes back as the numbers it holds (missing as NaN), not as text, and a run
stored twice is refused instead of double-counted. A table no schema declares (a folder of
one's own) gets :data:`FALLBACK`: ``value`` a number, a column of numbers as numbers.
"""

from __future__ import annotations

from ._schema import Column, TableSchema

_INT, _FLOAT = Column("int"), Column("float")
_STR = Column("str", finite=False)  # an empty text is a level of its own (e.g. no truth)
_COUNT = Column("int", low=0)
_SEED = Column("int", low=0)
_SHARE = Column("float", low=0.0, high=1.0)
_VALUE = Column("float", finite=False)  # a metric on an empty set is NaN (missing), never text


def _schema(key: dict[str, Column], measures: dict[str, Column] | None = None, *,
            others: Column | None = None) -> TableSchema:
    return TableSchema({**key, **(measures or {"value": _VALUE})}, key=tuple(key), others=others)


_CARRARO = dict(item_power=_INT, seed=_SEED, model=_STR, strategy=_STR,
                size=Column("float", low=0.0, high=1.0), metric=_STR)
# seed -1: the rows of the truth, not of a seed
_JADIDINEJAD = _schema(dict(seed=_INT, zoo=_STR, truth=_STR, model=_STR, candidates=_STR,
                            propensity=_STR, strata=_STR, weights=_STR, n_strata=_COUNT,
                            k=_INT, estimator=_STR))

#: (paper, table label) -> the schema of that stored table.
STORED_SCHEMAS: dict[tuple[str, str], TableSchema] = {
    **{("carraro2022", d): _schema(dict(recommenders=_STR, **_CARRARO))
       for d in ("coat", "yahoo_r3")},
    **{("carraro2022", f"{d}_smoothing"): _schema(dict(smoothing=_STR, **_CARRARO))
       for d in ("coat", "yahoo_r3")},
    **{("jadidinejad2021", d): _JADIDINEJAD
       for d in ("coat", "yahoo_r3", "coat_ncf_tensorflow", "yahoo_r3_ncf_tensorflow")},
    ("wang2025", "yahoo_r3"): _schema(
        dict(seed=_SEED, model=_STR, trainers=_STR, metric=_STR, cutoff=_INT, candidates=_STR,
             users=_STR), {"n_users": _COUNT, "value": _VALUE}),
    ("wang2025", "yahoo_r3_ips_stability"): _schema(
        dict(seed=_SEED, model=_STR, lr=Column("float", low=0.0), block_users=_COUNT,
             block_items=_COUNT),
        {"status": _STR, "diverged_epoch": Column("int", finite=False, low=0),
         "best_epoch": _COUNT, "epochs": _COUNT, "validation_auc": _SHARE},
        others=_VALUE),  # one column per metric (Recall@5̄, URE Recall@5)
    ("yang2018", "yahoo_r3"): _schema(
        dict(seed=_SEED, model=_STR, reading=_STR, draw=_INT, metric=_STR, estimator=_STR,
             quantity=_STR), {"users": _COUNT, "value": _VALUE}),
    ("yang2018", "yahoo_r3_grid"): _schema(
        dict(seed=_SEED, model=_STR, metric=_STR, estimate=_STR, truth=_STR, k=_INT,
             k_truth=_INT, users=_STR, mae=_STR),
        {"draws": _COUNT, "AOA estimate": _SHARE, "AOA truth": _SHARE},
        others=Column("float", low=0.0)),  # one MAE per estimator (MAE: AOA, MAE: SNIPS γ=...)
    # a stored yang2018 "yahoo_r3" table is what direction_test reads (with "users" or not)
}

#: The rule of a table no schema declares: ``value`` a number (missing as NaN), every other
#: column numbers when it holds only numbers (missing as NaN), else text.
FALLBACK = TableSchema({"value": _VALUE}, required=(), others=Column("auto"))


def schema_of(paper: str, label: str) -> TableSchema | None:
    """The declared schema of ``paper``'s stored table ``label`` (None: undeclared)."""
    return STORED_SCHEMAS.get((paper, label))
