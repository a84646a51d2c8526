"""Each report row's margin, with its reason: the smallest difference that matters (private).

Re-exported by :mod:`recbias_tutorial.replications.report`; the replication pages grade their
own tables with the same functions.

The report decides every verdict against a margin: half the gap from the paper's number to the
nearest value the paper sets it against, never less than its rounding
(:func:`recbias_tutorial.replications.report.distinction_margin`). What a paper sets a number
against is read from the paper, per kind of number:

* Yang et al.'s slides: each model's AOA MAE against its SNIPS MAEs (the slides' point is that
  SNIPS errs less); SNIPS's change of the MAE against no change and against the abstract's
  "more than 30%";
* Carraro & Bridge's Figure 4: τ against τ one swap away; a contrast against no difference
  (:func:`recbias_tutorial.replications.carraro2022.tau_margin`,
  :func:`recbias_tutorial.replications.carraro2022.contrast_margin`);
* Jadidinejad et al.'s Table 6: the holdout τ against the stratified one, the stratified τ
  against the holdout and IPS ones (§6: "0.710 > 0.622, 0.710 > 0.644"); the gain against
  no gain;
* Wang et al.'s Table 1: a model's value against the other models' in the same column (the
  table ranks them); an ordering of two models against no difference.
"""

from __future__ import annotations

from .._margins import Margin, distinction_margin, half_unit, ratio_rounding


def yang_aoa_margin(paper_row) -> Margin:
    """A slide model's AOA MAE, against its own SNIPS MAEs (the slides print 3 decimals).

    ``paper_row`` is the model's row of ``yang2018.PAPER_MAE_RECALL`` (``AOA`` and the SNIPS
    columns)."""
    snips = {f"its SNIPS MAE at {c.removeprefix('SNIPS ')}": float(v)
             for c, v in paper_row.items() if c.startswith("SNIPS")}
    return distinction_margin(float(paper_row["AOA"]), snips, rounding=half_unit(3))


#: The cut of the MAE the published abstract claims ("more than 30%").
ABSTRACT_CUT = -0.30


def yang_cut_margin(paper_row, column: str) -> Margin:
    """SNIPS's relative change of a slide model's MAE, against no change and the abstract's
    30% cut (a change on the other side of 30% draws the other conclusion); ``column`` names
    the SNIPS column of ``paper_row`` (e.g. ``"SNIPS γ=2.0"``). The rounding is that of a ratio
    of two values printed to 3 decimals."""
    snips, aoa = float(paper_row[column]), float(paper_row["AOA"])
    return distinction_margin(snips / aoa - 1, {"no change": 0.0,
                                                "the abstract's 30% cut": ABSTRACT_CUT},
                              rounding=ratio_rounding(snips, aoa, decimals=3))


def jadidinejad_level_margin(paper, dataset: str, k: int, method: str) -> Margin:
    """A Table 6 τ against the evaluations §6 compares it with (3 decimals); ``paper`` is
    ``jadidinejad2021.PAPER_TABLE6``'s ``tau`` indexed by ``(dataset, k, method)``."""
    against = {"holdout": ("stratified",), "stratified": ("holdout", "ips")}[method]
    names = {"holdout": "the holdout τ", "stratified": "the stratified τ", "ips": "the IPS τ"}
    return distinction_margin(float(paper.loc[(dataset, k, method)]),
                              {names[m]: float(paper.loc[(dataset, k, m)]) for m in against},
                              rounding=half_unit(3))


def jadidinejad_gain_margin(gain: float) -> Margin:
    """Table 6's gain of the stratified τ over the holdout one, against no gain."""
    return distinction_margin(gain, {"no gain": 0.0}, rounding=half_unit(3, terms=2))


def wang_level_margin(column, model: str) -> Margin:
    """A Table 1 value against the other models' in its column (4 decimals); ``column`` is a
    column of ``wang2025.PAPER_TABLE1`` (one value per model)."""
    return distinction_margin(float(column[model]),
                              {m: float(v) for m, v in column.items() if m != model}, rounding=half_unit(4))


def wang_order_margin(diff: float) -> Margin:
    """An ordering of two Table 1 values (their difference), against no difference."""
    return distinction_margin(diff, {"no difference": 0.0}, rounding=half_unit(4, terms=2))
