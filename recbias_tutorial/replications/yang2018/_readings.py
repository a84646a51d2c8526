r"""The readings of Yang et al.'s Section 5: the public code's, the course's, the slides' (private).

Re-exported by :mod:`recbias_tutorial.replications.yang2018`; import it from there. A
:class:`Reading` fixes every choice that turns the authors' scores into the slides' table
(each field's source in ``_authors``' docstring):

* :data:`AUTHORS` — Section 5 as the public code computes it (the replication);
* :data:`COURSE` — the course's earlier full-catalogue reading; :data:`LADDER` walks from
  :data:`AUTHORS` to it one choice at a time;
* :data:`SLIDES` — the reading the slides' numbers imply: the MNAR estimate exactly as the
  public code computes it (the authors' sampled negatives, the last 300 kept), Recall@10 on
  both sides (``calc_metrics`` defaults to ``K=10``; the slide's second rendering is headed
  "Average-Recall@10"; the notebook's call passes ``K=1``), against the MAR positives ranked
  among every item the user has no training pair with, each side over its own users, MAE =
  the gap between the aggregates. :data:`SLIDES_LADDER` walks from :data:`AUTHORS` to it one
  choice at a time.
* :data:`SLIDES_FAMILY` — the truths that fit the slides about as well (the full catalogue,
  the catalogue without the held-out items, OpenRec's ``_evaluate_full`` exclusions, the test
  script's 200 negatives that ``eq`` cuts off): the slides do not tell them apart;
  :data:`SLIDES_NEGATIVES` — :data:`SLIDES` with 200 or with 300 negatives for every model;
* :func:`reading_grid` — the grid of readings searched against the slides.

:data:`SLIDES` was **found by searching** :func:`reading_grid` against the slides' table with
the BPR and PMF models; U-CML and A-CML only check it (``_grid``'s :func:`grid_search`).
Where several readings fit, the one the sources support is named, not the one that fits best.
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Sequence

from ..._validation import check_int

#: Negatives the test scripts sample for the MAR side (``*_yahoo_test.py``: 200 for every
#: model), which ``eq`` then cuts off; the ``truth="sampled"`` reading keeps them.
TEST_NEGATIVES = 200
#: The MAR-side candidate sets a :class:`Reading` may name (see the module docstring).
TRUTHS = ("mar", "full", "catalogue", "no-heldout", "openrec", "sampled")


@dataclasses.dataclass(frozen=True)
class Reading:
    """One way of running the protocol (each field's source: the ``_authors`` module's docstring).

    Attributes
    ----------
    name : str
        Label shown in tables.
    estimate : str
        Candidates of the MNAR (estimate) side: ``"sampled"`` (the authors' sampled
        negatives and the positives) or ``"full"`` (every item without a training pair).
    truth : str
        Candidates of the MAR (truth) side: ``"mar"`` (the user's MAR-rated items),
        ``"full"`` (every item without a training pair), ``"catalogue"`` (every item),
        ``"no-heldout"`` (every item without a training or held-out MNAR pair),
        ``"openrec"`` (OpenRec's ``_evaluate_full`` exclusions: every item the user has
        neither trained on nor MAR-rated) or ``"sampled"`` (the test script's
        :data:`TEST_NEGATIVES` sampled negatives plus the MAR positives).
    k : int
        Recall cut-off (of both sides unless ``k_truth`` is given).
    users : str
        ``"own"`` (each side over its own users) or ``"common"`` (both over the users present
        on both sides).
    mae : str
        ``"aggregate"`` (:math:`|\\hat R - R|` of the means) or ``"per_user"`` (the mean of
        per-user gaps, common users only).
    k_truth : int or None
        Recall cut-off of the MAR side; ``None`` (the default): ``k``.
    n_negatives : int or None
        Sampled negatives per user on the MNAR side (``estimate="sampled"``); ``None`` (the
        default): the authors' count for the model (300 for U-CML / A-CML, 200 otherwise).
    """

    name: str
    estimate: str = "sampled"
    truth: str = "mar"
    k: int = 1
    users: str = "own"
    mae: str = "aggregate"
    k_truth: int | None = None
    n_negatives: int | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name.strip():
            raise ValueError(f"name must be a non-empty string (the reading's label), got "
                             f"{self.name!r}")
        for field, allowed in (("estimate", ("sampled", "full")), ("truth", TRUTHS),
                               ("users", ("own", "common")), ("mae", ("aggregate", "per_user"))):
            if getattr(self, field) not in allowed:
                raise ValueError(f"{field} must be one of {allowed}, got {getattr(self, field)!r}")
        check_int(self.k, "k")
        if self.k_truth is not None:
            check_int(self.k_truth, "k_truth")
        if self.n_negatives is not None:
            check_int(self.n_negatives, "n_negatives", low=0)
            if self.estimate != "sampled":
                raise ValueError("n_negatives needs estimate='sampled' (only sampled "
                                 "candidates have negatives to count)")
        if self.mae == "per_user" and self.users != "common":
            raise ValueError("mae='per_user' needs users='common' (a per-user gap needs both sides)")


#: The authors' protocol (the replication).
AUTHORS = Reading("authors' protocol")
#: The course's earlier full-catalogue reading.
COURSE = Reading("course's reading", estimate="full", truth="full", k=10, users="common",
                 mae="per_user")
#: From the authors' protocol to the course's reading, one change at a time.
LADDER: tuple[Reading, ...] = (
    AUTHORS,
    Reading("+ MNAR candidates: full catalogue", estimate="full"),
    Reading("+ MAR candidates: full catalogue", estimate="full", truth="full"),
    Reading("+ K = 10", estimate="full", truth="full", k=10),
    Reading("+ common users", estimate="full", truth="full", k=10, users="common"),
    dataclasses.replace(COURSE, name="+ per-user MAE (= course's reading)"),
)


#: The reading the slides' numbers imply (see the module docstring): found by a grid search
#: on BPR and PMF, checked on U-CML and A-CML.
SLIDES = Reading("slides' reading", truth="full", k=10)
#: From the authors' protocol to the slides' reading, one choice at a time: the MAR side's
#: candidates, then the MNAR side's cut-off, then the MAR side's.
SLIDES_LADDER: tuple[Reading, ...] = (
    AUTHORS,
    Reading("+ MAR candidates: every item without a training pair (K = 1)", truth="full"),
    Reading("+ K = 10 on the MNAR side (MAR side K = 1)", truth="full", k=10, k_truth=1),
    SLIDES,  # + K = 10 on the MAR side
)
#: :data:`SLIDES` and the truths that fit the slides about as well (one change each).
SLIDES_FAMILY: tuple[Reading, ...] = (
    SLIDES,
    dataclasses.replace(SLIDES, name="slides' reading, MAR truth over every item",
                        truth="catalogue"),
    dataclasses.replace(SLIDES, name="slides' reading, MAR truth without held-out items",
                        truth="no-heldout"),
    dataclasses.replace(SLIDES, name="slides' reading, MAR truth as OpenRec's _evaluate_full",
                        truth="openrec"),
    dataclasses.replace(SLIDES, name="slides' reading, MAR truth among the test script's "
                        "200 negatives", truth="sampled"),
)
#: :data:`SLIDES` with one negative count for every model (the authors': 200 for BPR and
#: PMF, 300 for U-CML and A-CML).
SLIDES_NEGATIVES: tuple[Reading, ...] = tuple(
    dataclasses.replace(SLIDES, name=f"slides' reading, {n} negatives for every model",
                        n_negatives=n) for n in (200, 300))
#: Every named reading the stored full-scale run holds for every model (each once, in this
#: order). The ladder to the slides' reading is there up to its last two steps; they are
#: grid readings (:func:`reading_grid`), stored for the slides' four models in the grid file.
READINGS: tuple[Reading, ...] = tuple(dict.fromkeys(
    LADDER + SLIDES_LADDER[:2] + SLIDES_FAMILY + SLIDES_NEGATIVES))

#: The grid's choices: MNAR and MAR candidates, the cut-offs of each side, users and MAE.
GRID_CHOICES = {"estimate": ("sampled", "full"), "truth": TRUTHS, "k": (1, 5, 10, 20),
                "k_truth": (1, 5, 10, 20),
                "users_mae": (("own", "aggregate"), ("common", "aggregate"),
                              ("common", "per_user"))}


def grid_name(reading: Reading) -> str:
    """The label of a grid reading, spelled from its fields (``grid: ...``).

    Raises
    ------
    ValueError
        If ``reading`` is not a :class:`Reading`.

    Examples
    --------
    >>> grid_name(SLIDES)
    'grid: sampled / full, K 10 / 10, own users, aggregate MAE'
    >>> grid_name(dataclasses.replace(SLIDES, n_negatives=50))
    'grid: sampled / full, K 10 / 10, own users, aggregate MAE, 50 negatives'
    """
    if not isinstance(reading, Reading):
        raise ValueError(f"reading must be a Reading, got {reading!r:.60}")
    k_truth = reading.k if reading.k_truth is None else reading.k_truth
    # a reading with its own negative count is another reading: its name says so
    negatives = "" if reading.n_negatives is None else f", {reading.n_negatives} negatives"
    return (f"grid: {reading.estimate} / {reading.truth}, K {reading.k} / {k_truth}, "
            f"{reading.users} users, {reading.mae} MAE{negatives}")


def reading_grid(ks: Sequence[int] = GRID_CHOICES["k"]) -> tuple[Reading, ...]:
    """Every reading of the grid searched against the slides (one per combination).

    MNAR candidates (sampled or full) x MAR candidates (:data:`TRUTHS`) x the MNAR side's
    cut-off x the MAR side's cut-off (each of ``ks``) x users and MAE (own users and the
    aggregate gap, common users and the aggregate gap, common users and the per-user gap);
    the authors' negative counts. Each reading is named by :func:`grid_name`. Evaluated on
    Recall@k and on AUC (which has no cut-off: the grid's AUC readings are its
    ``len(ks) ** 2`` times fewer distinct ones).

    Parameters
    ----------
    ks : sequence of int, default (1, 5, 10, 20)
        Cut-offs tried on each side.

    Returns
    -------
    tuple of Reading

    Raises
    ------
    ValueError
        If ``ks`` is empty, not a sequence of positive integers, or names a cut-off twice.

    Examples
    --------
    >>> grid = reading_grid()
    >>> len(grid), sum(dataclasses.replace(r, name="-") == dataclasses.replace(SLIDES, name="-")
    ...                for r in grid)
    (576, 1)
    """
    if isinstance(ks, (str, bytes)) or not isinstance(ks, Sequence) or not ks:
        raise ValueError(f"ks must be a non-empty sequence of cut-offs, got {ks!r}")
    ks = [check_int(k, "ks") for k in ks]
    if len(set(ks)) != len(ks):
        raise ValueError(f"ks names a cut-off twice: {ks}")
    out = []
    for estimate, truth, k, k_truth, (users, mae) in itertools.product(
            GRID_CHOICES["estimate"], GRID_CHOICES["truth"], ks, ks, GRID_CHOICES["users_mae"]):
        reading = Reading("grid", estimate=estimate, truth=truth, k=k, users=users, mae=mae,
                          k_truth=None if k_truth == k else k_truth)
        out.append(dataclasses.replace(reading, name=grid_name(reading)))
    return tuple(out)
