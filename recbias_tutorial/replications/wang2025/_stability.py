r"""How close AutoDebias's IPS runs to divergence on Yahoo! R3 (private module).

Re-exported by :mod:`recbias_tutorial.replications.wang2025`. AutoDebias's IPS baseline
trains with plain SGD at ``lr = 1e-5`` on blocks of 6,000 users x 500 items; its inverse
propensities weigh the rare positive ratings by about 1/P(O=1 | y=+1), large enough that a
slightly larger step, or another cut of the users into blocks, makes the weights overflow.
:func:`ips_stability` fits IPS over a grid of learning rates and block partitions for every
seed and says, per run, whether it diverged (:class:`TrainingDiverged`), when, and what the
run stopped just before that epoch gives; :func:`ips_stability_table` summarises each cell.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from ..._params import Interval, declare
from ..._validation import check_seeds, check_sequence
from ...data import FeedbackData
from ._ladder import USERS, convention_ladder
from ._trainers import AUTODEBIAS_YAHOO, TrainingDiverged, autodebias_split, fit_autodebias

#: The learning rates of the stability grid: AutoDebias's IPS step (1e-5) and one 5% larger.
IPS_STABILITY_LRS: tuple[float, ...] = (1e-5, 1.05e-5)
#: The block partitions of the grid (users, items per SGD step): AutoDebias's 6,000 users
#: (Yahoo! R3's 15,400 users in blocks of 6,000, 6,000 and 3,400) and three equal blocks of
#: 5,134 users.
IPS_STABILITY_BLOCKS: tuple[tuple[int, int], ...] = ((6000, 500), (5134, 500))
#: The two numbers of Table 1 a run gives (metric, cut-off, candidates), over the users with a
#: liked random song.
_TABLE1 = {"Recall@5̄": ("Recall@K̄", 5, "random items"),
           "URE Recall@5": ("URE Recall@K", 5, "all items")}
_COLUMNS = ["seed", "lr", "block_users", "block_items", "status", "diverged_epoch",
            "best_epoch", "epochs", "validation_auc", "Recall@5̄", "URE Recall@5"]


def _table1(scores: np.ndarray, test: pd.DataFrame, train: pd.DataFrame, threshold: float) -> dict:
    ladder = convention_ladder({"IPS": scores}, test, train=train, k=5, k_bars=(5,),
                               threshold=threshold)
    ladder = ladder[ladder["users"] == USERS[0]].set_index(["metric", "cutoff", "candidates"])
    return {name: float(ladder.loc[key, "value"]) for name, key in _TABLE1.items()}


@declare(epochs=Interval(int, 1), patience=Interval(int, 1))
def ips_stability(data: FeedbackData, *, seeds: Sequence[int],
                  lrs: Sequence[float] = IPS_STABILITY_LRS,
                  blocks: Sequence[tuple[int, int]] = IPS_STABILITY_BLOCKS,
                  epochs: int = 500, patience: int = 60) -> pd.DataFrame:
    """AutoDebias's IPS on a grid of learning rates and block partitions, every seed.

    Each seed draws AutoDebias's 5% / 5% / 90% split of the random data
    (:func:`autodebias_split`) and fits :func:`fit_autodebias` ``("IPS", ...)`` with that
    seed, once per (``lr``, block). A run either converges (stopped by its early stopping,
    or at the epoch cap) or diverges: :class:`TrainingDiverged` names the epoch, and the run
    is then fitted again with that many epochs, which follows the same steps (same seed)
    and stops just before the overflow, keeping its best epoch: what a run that was
    stopped in time gives. Each run's Table 1 numbers (Recall@5̄ and URE Recall@5 over the
    users with a liked random song, on the 90% test part) are computed from its kept epoch.

    Parameters
    ----------
    data : FeedbackData
        Yahoo! R3 (MNAR log, MAR random ratings, threshold).
    seeds : sequence of int
        Distinct seeds (split and training).
    lrs : sequence of float, default :data:`IPS_STABILITY_LRS`
        SGD steps (AutoDebias's: 1e-5).
    blocks : sequence of (int, int), default :data:`IPS_STABILITY_BLOCKS`
        Users x items per SGD step.
    epochs, patience : int, default 500, 60
        AutoDebias's epoch cap and early-stopping patience.

    Returns
    -------
    pandas.DataFrame
        One row per (seed, lr, block): ``seed, lr, block_users, block_items, status``
        (``"converged"``, ``"epoch cap"``, ``"diverged"``), ``diverged_epoch`` (NaN unless
        diverged), ``best_epoch``, ``epochs`` (run, or run before the overflow),
        ``validation_auc``, ``Recall@5̄`` and ``URE Recall@5`` (NaN when a run diverged in
        its first epoch: nothing to keep).

    Raises
    ------
    ValueError
        If ``data`` is not a FeedbackData with MAR ratings, ``seeds`` not distinct
        non-negative ints, ``lrs`` not positive numbers, ``blocks`` not pairs of positive
        ints, ``epochs`` or ``patience`` not a positive int, or on an argument
        :func:`fit_autodebias` refuses.

    Examples
    --------
    >>> from recbias_tutorial import simulate
    >>> out = ips_stability(simulate(60, 30, seed=0), seeds=[0], lrs=[0.01, 1e6],
    ...                     blocks=[(20, 10)], epochs=3, patience=2)
    >>> out["status"].tolist()
    ['epoch cap', 'diverged']
    """
    if not isinstance(data, FeedbackData) or data.mar is None or len(data.mar) == 0:
        raise ValueError("data must be a FeedbackData with MAR (random) ratings")
    seeds = check_seeds(seeds)
    lrs = check_sequence(lrs, "lrs", "positive learning rates")
    if not lrs or any(isinstance(v, bool) or not isinstance(v, (int, float)) or not v > 0
                      or not np.isfinite(v) for v in lrs):
        raise ValueError(f"lrs must be positive learning rates, got {lrs!r}")
    blocks = check_sequence(blocks, "blocks", "(users, items) pairs")
    if not blocks or any(not isinstance(b, (tuple, list)) or len(b) != 2 or any(
            isinstance(x, bool) or not isinstance(x, (int, np.integer)) or x < 1 for x in b)
            for b in blocks):
        raise ValueError(f"blocks must be (users, items) pairs of positive ints, got {blocks!r}")
    rows = []
    for seed in seeds:
        uniform, validation, test = autodebias_split(data.mar, seed=seed)
        for lr in lrs:
            for block in blocks:
                fit_args = dict(uniform=uniform, validation=validation, n_users=data.n_users,
                                n_items=data.n_items, threshold=data.threshold, seed=seed,
                                lr=float(lr), block=tuple(int(x) for x in block),
                                patience=patience)
                row = {"seed": seed, "lr": float(lr), "block_users": int(block[0]),
                       "block_items": int(block[1]), "diverged_epoch": np.nan}
                try:
                    fit = fit_autodebias("IPS", data.mnar, epochs=epochs, **fit_args)
                    row["status"] = "epoch cap" if fit.epochs == epochs else "converged"
                except TrainingDiverged as err:
                    row.update(status="diverged", diverged_epoch=err.epoch)
                    fit = (fit_autodebias("IPS", data.mnar, epochs=err.epoch, **fit_args)
                           if err.epoch else None)
                if fit is None:
                    row.update(best_epoch=np.nan, epochs=0, validation_auc=np.nan,
                               **{name: np.nan for name in _TABLE1})
                else:
                    row.update(best_epoch=fit.best_epoch, epochs=fit.epochs,
                               validation_auc=fit.validation_auc,
                               **_table1(fit.scores, test, data.mnar, data.threshold))
                rows.append(row)
    return pd.DataFrame(rows, columns=_COLUMNS)


def ips_stability_table(runs: pd.DataFrame) -> pd.DataFrame:
    """Per (lr, block) of :func:`ips_stability`: how many runs diverged, and what they give.

    Parameters
    ----------
    runs : pandas.DataFrame
        :func:`ips_stability`'s rows (e.g. the stored ``yahoo_r3_ips_stability`` table).

    Returns
    -------
    pandas.DataFrame
        Indexed by ``lr, block_users``: ``seeds``, ``diverged`` (how many), ``first
        divergence`` (the earliest diverging epoch), ``epochs run`` (mean), ``Recall@5̄`` and
        ``URE Recall@5`` (mean and sd over the seeds, each run at its kept epoch) and
        ``AutoDebias's`` (True for lr 1e-5, 6,000 users).

    Raises
    ------
    ValueError
        If ``runs`` lacks a column of :func:`ips_stability`'s table.

    Examples
    --------
    >>> runs = pd.DataFrame({"seed": [0, 1], "lr": 1e-5, "block_users": 6000, "block_items": 500,
    ...                      "status": ["converged", "diverged"], "diverged_epoch": [np.nan, 40],
    ...                      "best_epoch": [200, 30], "epochs": [260, 40],
    ...                      "validation_auc": [0.75, 0.7], "Recall@5̄": [0.72, 0.66],
    ...                      "URE Recall@5": [0.013, 0.007]})
    >>> ips_stability_table(runs)[["seeds", "diverged", "first divergence"]].to_numpy().tolist()
    [[2.0, 1.0, 40.0]]
    """
    from ..._validation import check_frame

    check_frame(runs, "runs", _COLUMNS)
    grouped = runs.groupby(["lr", "block_users"])
    out = pd.DataFrame({
        "seeds": grouped["seed"].nunique(),
        "diverged": grouped["status"].apply(lambda s: int((s == "diverged").sum())),
        "first divergence": grouped["diverged_epoch"].min(),
        "epochs run": grouped["epochs"].mean()})
    for name in _TABLE1:
        out[f"{name} mean"] = grouped[name].mean()
        out[f"{name} sd"] = grouped[name].std(ddof=1)
    lr, block = AUTODEBIAS_YAHOO["IPS"]["lr"], 6000
    out["AutoDebias's"] = [(np.isclose(a, lr) and b == block) for a, b in out.index]
    return out.astype({"seeds": float, "diverged": float})
