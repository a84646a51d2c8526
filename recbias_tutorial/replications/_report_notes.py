"""What the replication report says beside its numbers: sections, unstated choices, inconsistencies.

Kept as data, apart from the computation (``report.py``), so that the report page and
``report.csv`` quote the same words, and a test can check that every section a row links to
still exists in its chapter.
"""

from __future__ import annotations

from .yang2018 import GRID_CHOICES, reading_grid

#: The readings of Yang et al.'s grid searched against the slides (AUC has no cut-off).
_GRID_RECALL = len(reading_grid())
_GRID_AUC = _GRID_RECALL // (len(GRID_CHOICES["k"]) * len(GRID_CHOICES["k_truth"]))

#: Per paper: its citation, its chapter, the sections a row's cause links to (heading text
#: of the chapter), the choices the paper leaves unstated with the one we took, and the
#: paper's internal inconsistencies found while replicating it.
NOTES: dict[str, dict] = {
    "yang2018": {
        "title": "Yang et al., RecSys 2018: IPS / SNIPS with popularity propensities",
        "chapter": "yang2018",
        "sections": {
            "stored": "The slides' table beside our runs",
            "ladder": "From the authors' protocol to the course's reading, one change at a time",
            "slides": "The slides' table under each reading",
        },
        "unstated": [
            ("how the slides' table was computed (the code computes Recall@1 against each "
             "user's own MAR songs; the slides' numbers do not fit it)",
             "both readings, each graded: the public code's (yang2018.AUTHORS) and the one the "
             "slides' numbers imply (yang2018.SLIDES: the code's sampled estimate at "
             "Recall@10, the MAR truth ranked among every item without a training pair at "
             "Recall@10). The second was found by searching a grid of readings against the "
             f"slides' table ({_GRID_RECALL} Recall readings, {_GRID_AUC} distinct AUC ones; "
             "the issue's earlier audit counted 3,672 reading x model rows), with BPR and PMF; "
             "U-CML and A-CML were not used to find it and only check it (yang2018.grid_search). "
             "With that many readings tried, a close fit can be luck: the named reading is the "
             "one the sources support (calc_metrics defaults to K = 10; the slide's second "
             "rendering is headed Average-Recall@10), not the one that fits best"),
            ("the MAE of the slides' table (no MAE function in the code)",
             "the gap between the aggregated estimate and the aggregated MAR truth, per run"),
            ("the split (the authors' arrays sit on S3, outside the repository)",
             "our own seeded 80/20 split of the MNAR log, five splits"),
            ("which model is U-CML and which A-CML",
             "U-CML = CML (uniform negatives), A-CML = WCML, as read from their notebooks"),
        ],
        "inconsistencies": [
            "The published abstract says SNIPS cuts the MAE by \"more than 30%\"; the slides' "
            "table is the only place with numbers, and the repository prints no AOA estimate "
            "to check its AOA column against.",
        ],
    },
    "carraro2022": {
        "title": "Carraro & Bridge: intervened test sets (SKEW, WTD, WTD_H)",
        "chapter": "carraro2022",
        "sections": {
            "stored": "Figure 4 at full scale, with its uncertainty",
            "peak": "The peak of Figure 4 is one tied pair",
            "inconsistencies": "Two inconsistencies in the paper's Figure 4",
        },
        "unstated": [
            ("how ids missing from the training or weighting data are handled",
             "one pseudo-count of smoothing; the authors' notebook's rule (a zero share "
             "becomes 1e-4) is run beside it and leaves Yahoo! R3's Figure 4 τ unchanged"),
            ("MF's starting values (RankSys draws new ones on every run)",
             "drawn afresh in each repetition, seeded from it"),
            ("what the Wilcoxon tests pair", "repetitions"),
            ("whether hyper-parameters are re-tuned in every repetition",
             "tuned once, on the first repetition's split, and kept for all ten"),
            ("RankSys settings the paper does not state (e.g. ALS iterations)",
             "RankSys's example values"),
        ],
        "inconsistencies": [
            "At ρp = 1 every strategy draws the whole held-out set, so SKEW is FULL there, yet "
            "the text gives SKEW a constant τ of 0.8 and FULL 0.6.",
            "At ρp = 0.6 the text gives WTD both τ = 1 and, one sentence later, τ = 0.8.",
            "Section 4.3 squares WTD's item weight (w_u·w_i²); Section 3.3.2 and the authors' "
            "notebook do not (w_u·w_i).",
        ],
    },
    "jadidinejad2021": {
        "title": "Jadidinejad et al., SIGIR 2021: propensity-stratified evaluation",
        "chapter": "jadidinejad2021",
        "sections": {
            "stored": "Table 6 at the authors' full scale (stored)",
            "ladder": "What makes the result: the ladder",
            "protocol": "Their protocol, read from their code",
        },
        "unstated": [
            ("the split's seed (their code passes seed=None: a new split on every run)",
             "five seeds, mean and interval over them"),
            ("a seed for BaselineOnly", "123, the seed of their other models"),
        ],
        "inconsistencies": [
            "Eq. 7 gives propensities n_i^((γ+1)/2); the code uses a power-law fit, n_i^α above "
            "x_min and n_i below.",
            "Section 7.1 describes two strata of equal size; the code cuts the propensity range "
            "into two bins of equal width.",
            "The code's IPS looks a propensity up by Cornac's internal item index, i.e. the "
            "propensity of another item.",
        ],
    },
    "wang2025": {
        "title": "Wang et al., WWW 2025: URE against Recall@K̄",
        "chapter": "wang2025",
        "sections": {
            "stored": "Table 1 on Yahoo! R3 with the paper's trainers (stored)",
        },
        "unstated": [
            ("the implementation, settings and seeds of MF, IPS and DR (\"under backbone MF\")",
             "AutoDebias's baselines (MF_bias.py, IPS.py, DR.py) with their Yahoo! R3 settings, "
             "in numpy; five seeds"),
            ("the candidates", "all items, as the paper's text says (\"all candidate items\")"),
            ("the users averaged over", "users with a liked random song, as URE is defined"),
        ],
        "inconsistencies": [],
    },
}

#: Each verdict rule in two sentences, keyed by the report's ``rule`` column. Every rule
#: decides against the row's margin (``margin``, with its reason in ``margin_reason``).
RULES: dict[str, str] = {
    "single run": (
        "The paper reports one run, so our interval is where one more run of ours would fall: "
        "the 95% prediction interval over our independent units (seeds, or splits where "
        "several draws share one), mean ± t·s·√(1 + 1/n). The number is reproduced when that "
        "interval lies inside the paper's value ± the row's margin, differs when it lies "
        "entirely outside (in the same direction when it lies on the same side of the row's "
        "reference as our mean), and is undetermined otherwise."),
    "mean over seeds": (
        "The paper's mean over its runs (five, as ours: it states none) is compared with our "
        "mean through the 95% interval of their difference, whose standard error counts the "
        "noise of both means (our seeds' spread standing in for the paper's). The number is "
        "reproduced when that interval lies within ± the row's margin, differs when it lies "
        "entirely outside (in the same direction when both means lie on the same side of the "
        "reference), and is undetermined otherwise."),
    "ordering": (
        "An ordering the paper shows (one model above another, from its one run) is its "
        "difference, set against our per-seed differences: their mean and 95% t interval, a "
        "tie counting as zero. It is reproduced when that interval lies inside the paper's "
        "difference ± the row's margin, differs when it lies entirely outside (in the same "
        "direction when our mean has the paper's sign), and is undetermined otherwise."),
    "tau": (
        "Kendall's τ over five recommenders depends on the pairs D_gt and the test set "
        "separate (a paired Wilcoxon test over the repetitions, α = 0.05), every other pair "
        "falling either way, so the τ values of all the orders consistent with both are what "
        "our run allows. The paper's τ is reproduced when all of them lie within its value ± "
        "half a swap and each contrast it rests on (WTD above FULL and SKEW, WTD_H above REG, "
        "graded as an ordering on the per-repetition difference of τ) is reproduced too, "
        "differs when none of them does or a contrast differs, and is undetermined otherwise."),
}

#: The report's tally before issue 43 (``report.csv`` on main at 5770413, 40 headline numbers),
#: per paper: (reproduced within our interval, differs). The old rule is gone (our mean's t
#: interval for every number, and a bootstrap band of Figure 4's τ), so this is a record, not
#: a computation: issue 43 counted 25 of 40 reproduced, 14 of them Carraro & Bridge's Figure 4
#: rows that could not fail.
TALLY_BEFORE: dict[str, tuple[int, int]] = {
    "yang2018": (0, 8),
    "carraro2022": (14, 0),
    "jadidinejad2021": (10, 2),
    "wang2025": (1, 5),
}

#: The report's tally under the rules per kind of number before verdicts were decided against
#: a margin (``report.csv`` at 024a65d, 51 headline numbers), per paper: (reproduced within our
#: interval, same direction other level, undetermined, differs). A record, not a computation:
#: the rules without a margin are gone (an interval holding the paper's value "reproduced" it,
#: however wide).
TALLY_WITHOUT_MARGIN: dict[str, tuple[int, int, int, int]] = {
    "yang2018": (0, 4, 0, 12),
    "carraro2022": (0, 0, 14, 0),
    "jadidinejad2021": (10, 1, 0, 1),
    "wang2025": (3, 0, 2, 4),
}
