"""The replication report: each paper's headline numbers beside ours, graded on one scale.

For every paper the course replicates, :func:`replication_report` reads the full-scale stored
run (``recbias_tutorial/results/<paper>/``, through :func:`recbias_tutorial.course.stored_results`,
which refuses a file edited by hand) and the paper's own tables kept in the replication
modules, and grades each headline number with :func:`verdict`:

* **reproduced within our interval**: the paper's value lies in our 95% interval (Student's t interval of the mean
  over seeds or splits; for Carraro & Bridge's Figure 4, the bootstrap band over the
  repetitions that the chapter draws);
* **same direction, other level**: it does not, but it lies on the same side of the
  row's reference as ours (zero for an effect such as "stratified minus holdout");
* **differs**: neither.

The book's Replication report page shows this table, and ``make report`` writes it to
``recbias_tutorial/results/report.csv`` for others to diff (a test recomputes it).

Examples
--------
>>> from recbias_tutorial.replications import report
>>> report.verdict(0.62, [0.60, 0.62, 0.64]).verdict
'reproduced within our interval'
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable
from pathlib import Path

import pandas as pd

from .._findings import VERDICTS, Verdict, verdict
from .._validation import check_names, check_unique_rows
from ._report_notes import NOTES

__all__ = ["NOTES", "VERDICTS", "Verdict", "recorded_report", "replication_report", "verdict",
           "verdict_changes"]

_COLUMNS = ["paper", "dataset", "quantity", "paper_value", "ours", "low", "high", "n",
            "interval", "verdict", "cause", "chapter", "section"]


def _row(paper: str, dataset: str, quantity: str, value: float, v: Verdict, *, n: int,
         interval: str, cause: str, section: str) -> dict:
    return {"paper": paper, "dataset": dataset, "quantity": quantity, "paper_value": value,
            "ours": v.mean, "low": v.low, "high": v.high, "n": n, "interval": interval,
            "verdict": v.verdict, "cause": cause, "chapter": NOTES[paper]["chapter"],
            "section": NOTES[paper]["sections"][section]}


def _yang2018(stored: dict) -> list[dict]:
    """The slides' AOA MAE and SNIPS's change of it (γ = 2) for the four models, under the
    public code's reading (yang2018.AUTHORS) and the one the slides' numbers imply
    (yang2018.SLIDES, found by a grid search: the cause says what it leaves open)."""
    from . import yang2018

    runs = stored["yahoo_r3"]
    four = yang2018.SLIDE_MODELS
    means = {r.name: yang2018.mae_summary(runs, reading=r.name).xs("mean", axis=1, level=1)
             for r in (*yang2018.LADDER, *yang2018.SLIDES_FAMILY, *yang2018.SLIDES_NEGATIVES)}

    def mean(reading, model: str, column: str) -> float:  # AOA MAE, or SNIPS's change of it
        m = means[reading.name].loc[model]
        return m["AOA"] if column == "AOA" else m[column] / m["AOA"] - 1

    # the ladder step that moves the AOA MAE most, averaged over the slides' four models
    steps = pd.Series({r.name: means[r.name].loc[list(four.values()), "AOA"].mean()
                       for r in yang2018.LADDER})
    big = steps.diff().abs().idxmax()
    ladder = (f"the ladder's largest move of the AOA MAE is its step \"{big}\" "
              f"({steps.shift().loc[big]:.3f} to {steps.loc[big]:.3f})")
    rows = []
    for reading, label, section in (
            (yang2018.AUTHORS, "as the public code computes", "ladder"),
            (yang2018.SLIDES, "as the slides' numbers imply", "slides")):
        per_run = runs[(runs["reading"] == reading.name) & (runs["metric"] == "recall")
                       & (runs["quantity"] == "mae")].pivot_table(
            index=["model", "seed", "draw"], columns="estimator", values="value")
        for slide, ours in four.items():
            paper = yang2018.PAPER_MAE_RECALL.loc[slide]
            r = per_run.loc[ours]
            for quantity, column, value, values, reference in (
                    ("MAE of Recall, AOA", "AOA", paper["AOA"], r["AOA"], None),
                    ("MAE change, SNIPS γ=2 vs AOA", "SNIPS γ=2.0",
                     paper["SNIPS γ=2.0"] / paper["AOA"] - 1, r["SNIPS γ=2.0"] / r["AOA"] - 1,
                     0.0)):
                cause = ladder
                if reading is yang2018.SLIDES:  # found by a search: what it leaves open
                    spread = [mean(f, ours, column) for f in yang2018.SLIDES_FAMILY]
                    cause = (f"found by searching a grid of readings against the slides (BPR "
                             f"and PMF; U-CML and A-CML only check it); the MAR truths that fit "
                             f"about as well (yang2018.SLIDES_FAMILY) put ours between "
                             f"{min(spread):.3f} and {max(spread):.3f}; 300 negatives for "
                             f"every model: "
                             f"{mean(yang2018.SLIDES_NEGATIVES[-1], ours, column):.3f}")
                rows.append(_row("yang2018", "Yahoo! R3", f"{slide}: {quantity} ({label})",
                                 value, verdict(value, values, reference=reference), n=len(r),
                                 interval="t, over runs", cause=cause, section=section))
    return rows


def _carraro2022(stored: dict) -> list[dict]:
    from . import carraro2022

    table = stored["yahoo_r3"]
    rows = []
    wanted = [("FULL", 1.0), ("REG", 0.5), ("SKEW", 0.5), ("WTD", 0.6), ("WTD", 0.7),
              ("WTD_H", 0.7), ("WTD_H", 0.8)]
    paper = carraro2022.PAPER_FIGURE4_TAU.drop_duplicates(["strategy", "rho"]).set_index(
        ["strategy", "rho"])["tau"]
    for power, weight in ((1, "w_u·w_i, the authors' notebook"), (2, "w_u·w_i², the paper's §4.3")):
        part = table[(table["recommenders"] == "ranksys") & (table["item_power"] == power)]
        bands = carraro2022.tau_bands(part.drop(columns=["recommenders", "item_power"]),
                                      metric="recall", seed=0).set_index(["strategy", "rho"])
        n = int(part["seed"].nunique())
        for strategy, rho in wanted:
            b = bands.loc[(strategy, rho)]
            rows.append(_row("carraro2022", "Yahoo! R3",
                             f"Figure 4 τ, {strategy} at ρp = {rho:g} (RankSys-like, {weight})",
                             float(paper.loc[(strategy, rho)]),
                             verdict(float(paper.loc[(strategy, rho)]), [b["tau"]],
                                     interval=(b["low"], b["high"])),
                             n=n, interval="bootstrap band over repetitions", cause="",
                             section="stored"))
    return rows


def _jadidinejad2021(stored: dict, provenance: dict) -> list[dict]:
    from . import jadidinejad2021 as jad

    authors = {choice: values[0] for choice, values in jad.CHOICES.items()}
    nice = {"coat": "Coat", "yahoo_r3": "Yahoo! R3"}
    paper = jad.PAPER_TABLE6.set_index(["dataset", "k", "method"])["tau"]
    rows = []
    for name, table in stored.items():
        n_models = int(table["model"].nunique())
        for k, label in ((None, "whole ranking"), (10, "nDCG@10")):
            protocol = {**authors, "cutoff": k}
            taus = jad.protocol_taus(table, protocol=protocol).pivot_table(
                index="seed", columns="method", values="tau")
            # the zoo's weight on tau: the largest move of the mean tau when one family is left out
            zoo = jad.zoo_sensitivity(table, protocol=protocol).groupby(
                ["kind", "zoo", "method"])["tau"].mean().unstack("method")
            moves = (zoo.xs("family left out", level="kind") - zoo.xs("all", level="kind").iloc[0]).abs()
            kk = -1 if k is None else k
            for method in ("holdout", "stratified"):
                p = float(paper.loc[(name, kk, method)])
                cause = ("" if n_models == jad.PAPER_N_MODELS else
                         f"the zoo: ours has {n_models} of the paper's {jad.PAPER_N_MODELS} models, and "
                         f"leaving one family out moves this τ by up to {moves[method].max():.3f} "
                         f"({moves[method].idxmax()})")
                rows.append(_row("jadidinejad2021", nice[name], f"Table 6 τ, {method}, {label}", p,
                                 verdict(p, taus[method]), n=len(taus), interval="t, over splits",
                                 cause=cause, section="stored"))
            cause = ("" if n_models == jad.PAPER_N_MODELS else
                     f"the zoo: ours has {n_models} of the paper's {jad.PAPER_N_MODELS} models")
            gain = taus["stratified"] - taus["holdout"]
            p = float(paper.loc[(name, kk, "stratified")] - paper.loc[(name, kk, "holdout")])
            rows.append(_row("jadidinejad2021", nice[name],
                             f"Table 6 τ gain, stratified − holdout, {label}", p,
                             verdict(p, gain, reference=0.0), n=len(taus),
                             interval="t, over splits", cause=cause, section="stored"))
    return rows


def _wang2025(stored: dict) -> list[dict]:
    from . import wang2025

    full = stored["yahoo_r3"]
    liked = wang2025.USERS[0]
    paper = wang2025.PAPER_TABLE1["Yahoo!R3"]
    def seeds(metric: str, candidates: str) -> pd.DataFrame:
        part = full[(full["metric"] == metric) & (full["cutoff"] == 5)
                    & (full["candidates"] == candidates) & (full["users"] == liked)
                    & (full["trainers"] == "AutoDebias baselines")]
        return part.pivot(index="seed", columns="model", values="value")

    # the convention the paper leaves open that moves URE: are logged songs candidates?
    excluded = seeds("URE Recall@K", "logged songs excluded").mean()
    rows = []
    for quantity, metric, candidates, column in (
            ("Recall@5̄ on D_rand", "Recall@K̄", "random items", "traditional Recall@5̄"),
            ("URE Recall@5", "URE Recall@K", "all items", "URE Recall@5")):
        values = seeds(metric, candidates)
        for model in ("MF", "IPS", "DR"):
            p = float(paper.loc[model, column])
            cause = "" if metric != "URE Recall@K" else (
                f"the candidate set, which the paper leaves open, moves it: without the logged "
                f"songs, {excluded[model]:.4f} ({excluded[model] / values[model].mean():.1f}× ours)")
            rows.append(_row("wang2025", "Yahoo! R3", f"Table 1, {model}: {quantity}", p,
                             verdict(p, values[model]), n=len(values), interval="t, over seeds",
                             cause=cause, section="stored"))
    return rows


def replication_report(*, papers: tuple[str, ...] | None = None,
                       root: str | Path | None = None) -> pd.DataFrame:
    """Each replicated paper's headline numbers, ours beside them, and a verdict for each.

    Parameters
    ----------
    papers : tuple of str, optional
        Which papers (default: all four: ``yang2018``, ``carraro2022``, ``jadidinejad2021``,
        ``wang2025``).
    root : str or path, optional
        A folder holding ``<paper>/`` results folders (e.g. a copy under test); default the
        package's stored results.

    Returns
    -------
    pandas.DataFrame
        One row per headline number: ``paper, dataset, quantity, paper_value, ours, low,
        high, n, interval, verdict, cause, chapter, section`` (``ours`` is our mean, or
        Figure 4's τ on the repetition means; ``low``/``high`` our 95% interval; ``n`` the
        seeds, splits, runs or repetitions; ``cause`` what an ablation in the chapter
        identifies, where one does; ``section`` the chapter's section that shows it).

    Raises
    ------
    ValueError
        If a paper is unknown or named twice, ``papers`` is empty, ``root`` is not a folder,
        or a paper's stored results are missing or differ from their recorded sha256
        (:func:`recbias_tutorial.course.stored_results`).

    Examples
    --------
    >>> r = replication_report(papers=("wang2025",))
    >>> r["verdict"].isin(VERDICTS).all(), r["quantity"].iloc[0]
    (np.True_, 'Table 1, MF: Recall@5̄ on D_rand')
    """
    from ..course import stored_results

    if papers is None:
        papers = tuple(NOTES)
    if isinstance(papers, str) or not isinstance(papers, Iterable) \
            or not all(isinstance(p, str) and p in NOTES for p in papers):
        raise ValueError(f"papers must be a tuple of {', '.join(NOTES)}, got {papers!r}")
    papers = check_names(papers, "papers")  # a paper twice would give each of its rows twice
    if root is not None:
        if not isinstance(root, (str, os.PathLike)) or not Path(root).is_dir():
            raise ValueError(f"root must be a folder holding <paper>/ results folders, got "
                             f"{root!r}")
    rows: list[dict] = []
    for paper in papers:
        stored, provenance = stored_results(paper if root is None else Path(root) / paper)
        rows += {"yang2018": lambda: _yang2018(stored),
                 "carraro2022": lambda: _carraro2022(stored),
                 "jadidinejad2021": lambda: _jadidinejad2021(stored, provenance),
                 "wang2025": lambda: _wang2025(stored)}[paper]()
    report = pd.DataFrame(rows, columns=_COLUMNS)
    # a cause explains a difference: a number reproduced within our interval needs none
    report.loc[report["verdict"] == VERDICTS[0], "cause"] = ""
    return report


def verdict_changes(report: pd.DataFrame, recorded: pd.DataFrame) -> pd.DataFrame:
    """The rows whose verdict differs from a recorded report (e.g. ``report.csv``).

    Parameters
    ----------
    report, recorded : pandas.DataFrame
        :func:`replication_report` output, now and as recorded.

    Returns
    -------
    pandas.DataFrame
        ``paper, dataset, quantity, recorded, now``: one row per headline number whose
        verdict changed, appeared or disappeared (empty when the report still holds).

    Raises
    ------
    ValueError
        If either frame lacks the columns ``paper, dataset, quantity, verdict`` or holds a
        ``(paper, dataset, quantity)`` row twice.
    """
    key = ["paper", "dataset", "quantity"]
    for name, frame in (("report", report), ("recorded", recorded)):
        if not isinstance(frame, pd.DataFrame) or not set(key + ["verdict"]) <= set(frame.columns):
            raise ValueError(f"{name} must be a replication report (columns {key + ['verdict']})")
        check_unique_rows(frame, name, key)  # a row twice would hide or invent a change
    both = report[key + ["verdict"]].merge(recorded[key + ["verdict"]], on=key, how="outer",
                                           suffixes=("_now", "_recorded"))
    changed = both[both["verdict_now"].fillna("") != both["verdict_recorded"].fillna("")]
    return changed.rename(columns={"verdict_now": "now", "verdict_recorded": "recorded"})[
        key + ["recorded", "now"]].reset_index(drop=True)


def recorded_report() -> pd.DataFrame:
    """The report as last written by ``make report`` (``recbias_tutorial/results/report.csv``)."""
    from importlib import resources

    with resources.files("recbias_tutorial").joinpath("results", "report.csv").open(
            encoding="utf-8") as f:
        return pd.read_csv(f, keep_default_na=False, na_values=[""])


def _write(path: str | Path) -> Path:
    """Write the report as CSV (``make report``); floats at full precision, as stored."""
    path = Path(path)
    report = replication_report()
    tmp = path.with_suffix(".tmp")
    report.to_csv(tmp, index=False, float_format="%.17g", lineterminator="\n")
    tmp.replace(path)  # never a half-written report
    return path


if __name__ == "__main__":  # pragma: no cover - `make report`
    target = sys.argv[1] if len(sys.argv) > 1 else str(
        Path(__file__).resolve().parents[1] / "results" / "report.csv")
    print(_write(target))
