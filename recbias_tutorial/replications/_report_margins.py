"""Each report row's margin, with its reason: the smallest difference that matters (private).

The report decides every verdict against a margin (:func:`recbias_tutorial._margins.
distinction_margin`): half the gap from the paper's number to the nearest value the paper sets
it against, never less than its rounding. What a paper sets a number against is read from the
paper, per kind of number:

* Yang et al.'s slides: each model's AOA MAE against its SNIPS MAEs (the slides' point is that
  SNIPS errs less); SNIPS's change of the MAE against no change;
* Carraro & Bridge's Figure 4: τ against τ one swap away; a contrast against no difference
  (:func:`carraro2022.tau_margin`, :func:`carraro2022.contrast_margin`);
* Jadidinejad et al.'s Table 6: the holdout τ against the stratified one, the stratified τ
  against the holdout and IPS ones (§6: "0.710 > 0.622, 0.710 > 0.644"); the gain against
  no gain;
* Wang et al.'s Table 1: a model's value against the other models' in the same column (the
  table ranks them); an ordering of two models against no difference.
"""

from __future__ import annotations

from .._margins import Margin, distinction_margin, half_unit, ratio_rounding


def yang_aoa(paper_row) -> Margin:
    """A slide model's AOA MAE, against its own SNIPS MAEs (the slides print 3 decimals)."""
    snips = {f"its SNIPS MAE at {c.removeprefix('SNIPS ')}": float(v)
             for c, v in paper_row.items() if c.startswith("SNIPS")}
    return distinction_margin(float(paper_row["AOA"]), snips, rounding=half_unit(3))


def yang_cut(paper_row, column: str) -> Margin:
    """SNIPS's relative change of a slide model's MAE, against no change."""
    snips, aoa = float(paper_row[column]), float(paper_row["AOA"])
    return distinction_margin(snips / aoa - 1, {"no change": 0.0},
                              rounding=ratio_rounding(snips, aoa, decimals=3))


def jadidinejad_level(paper, dataset: str, k: int, method: str) -> Margin:
    """A Table 6 τ against the evaluations §6 compares it with (3 decimals)."""
    against = {"holdout": ("stratified",), "stratified": ("holdout", "ips")}[method]
    names = {"holdout": "the holdout τ", "stratified": "the stratified τ", "ips": "the IPS τ"}
    return distinction_margin(float(paper.loc[(dataset, k, method)]),
                              {names[m]: float(paper.loc[(dataset, k, m)]) for m in against},
                              rounding=half_unit(3))


def jadidinejad_gain(gain: float) -> Margin:
    """Table 6's gain of the stratified τ over the holdout one, against no gain."""
    return distinction_margin(gain, {"no gain": 0.0}, rounding=half_unit(3, terms=2))


def wang_level(column, model: str) -> Margin:
    """A Table 1 value against the other models' in its column (4 decimals)."""
    return distinction_margin(float(column[model]),
                              {m: float(v) for m, v in column.items() if m != model}, rounding=half_unit(4))


def wang_order(diff: float) -> Margin:
    """An ordering of two Table 1 values (their difference), against no difference."""
    return distinction_margin(diff, {"no difference": 0.0}, rounding=half_unit(4, terms=2))
