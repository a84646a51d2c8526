"""Grading a class: a time limit per notebook, every core, a summary (used by ``otterhw.py``).

**The time limit.** otter runs a submission through nbconvert's ``ExecutePreprocessor`` with
no timeout, so one cell that never ends (``while True:``, a wait for input) used to hold the
grading of the whole class. Here each notebook gets ``time_limit`` seconds for its own cells:
:func:`time_limited` gives otter a subclass of that preprocessor (nbclient's ``timeout_func``
and ``interrupt_on_timeout``) for the duration of one grading. The cell running when the
budget is spent is interrupted (a ``KeyboardInterrupt`` in it, recorded); the cells after it
still run, with one second each, and the tests then run with a budget of their own, so the
notebook is graded on what finished and the feedback names the stopped cells. A notebook that
does not even stop when interrupted is killed (with its kernel) at a hard limit and reported
as not graded.

**Every core.** :func:`run_pool` grades ``n_jobs`` notebooks at a time, each in a forked
process of its own (its own kernel), with a tqdm progress bar.
"""

from __future__ import annotations

import math
import multiprocessing
import os
import time
from collections.abc import Callable
from contextlib import contextmanager
from dataclasses import dataclass, field

from recbias_tutorial._validation import check_int, check_real

#: Seconds a submission's own cells may run, in all (``make grade TIME_LIMIT=...``).
DEFAULT_TIME_LIMIT = 180
#: Seconds the tests get after the submission's cells (the hidden tests recompute answers).
TEST_ALLOWANCE = 120
#: Metadata key marking the submission's own code cells (otter adds cells of its own).
MARK = "recbias_submission_cell"


@dataclass
class _Clock:
    """The budget of one grading: when it started, the cells stopped at the limit."""

    limit: float
    start: float = field(default_factory=time.monotonic)
    stopped: list[int] = field(default_factory=list)

    def cell_timeout(self, cell) -> int:
        if MARK not in cell.get("metadata", {}):  # otter's cells: init, checks, the tests
            return TEST_ALLOWANCE
        remaining = self.limit - (time.monotonic() - self.start)
        return max(1, math.ceil(remaining))  # once spent: a second per cell, so x = 3 still runs


@contextmanager
def time_limited(limit: float):
    """Within the block, otter's notebook runs stop each cell at the notebook's budget.

    Yields the clock, whose ``stopped`` lists the marked indices of the interrupted cells.
    Swaps ``nbconvert.preprocessors.ExecutePreprocessor`` (which otter imports when it
    grades) for a subclass and restores it on exit; meant for a grading worker process.
    ``limit`` must be a positive number of seconds (``ValueError`` otherwise, before the
    block runs).
    """
    clock = _Clock(check_real(limit, "limit", low=0.0, low_open=True))
    import nbconvert.preprocessors as pre

    base = pre.ExecutePreprocessor

    class TimeLimited(base):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            self.timeout_func = clock.cell_timeout
            self.interrupt_on_timeout = True

        async def _async_handle_timeout(self, timeout, cell=None):
            if cell is not None and MARK in cell.get("metadata", {}):
                clock.stopped.append(int(cell["metadata"][MARK]))
            return await super()._async_handle_timeout(timeout, cell)

    pre.ExecutePreprocessor = TimeLimited
    try:
        yield clock
    finally:
        pre.ExecutePreprocessor = base


def mark_cells(nb: dict) -> dict:
    """Mark each code cell of a submission with its index (the budget applies to those)."""
    for idx, cell in enumerate(nb.get("cells", [])):
        if cell.get("cell_type") == "code":
            cell.setdefault("metadata", {})[MARK] = idx
    return nb


def _kill_tree(pid: int) -> None:
    """Kill a worker and every process under it (its kernel starts a session of its own)."""
    import psutil

    try:
        parent = psutil.Process(pid)
        procs = parent.children(recursive=True) + [parent]
    except psutil.NoSuchProcess:
        return
    for proc in procs:
        try:
            proc.kill()
        except psutil.NoSuchProcess:
            pass
    psutil.wait_procs(procs, timeout=10)


def _child(conn, fn, args) -> None:
    try:
        conn.send(("ok", fn(*args)))
    except BaseException as exc:  # noqa: BLE001 - reported to the parent, never raised there
        conn.send(("error", f"{type(exc).__name__}: {exc}"))
    finally:
        conn.close()


def run_pool(tasks: list, fn: Callable, *, n_jobs: int, hard_limit: float,
             desc: str = "grading"):
    """``fn(*args)`` for each ``(key, args)`` of ``tasks``, ``n_jobs`` forked workers at a time.

    Returns ``{key: (status, value)}``: ``("ok", fn's result)``, ``("error", message)`` or
    ``("killed", seconds)`` for a worker still running after ``hard_limit`` seconds (killed with
    every process under it). Results do not depend on ``n_jobs`` or on the order of finishing.
    Raises ``ValueError`` if ``n_jobs`` is not an int >= 1, ``hard_limit`` not a positive
    number of seconds, ``fn`` not callable, or ``tasks`` not ``(key, args)`` pairs with
    distinct keys (a result per key).
    """
    from multiprocessing.connection import wait

    from tqdm.std import tqdm

    n_jobs = check_int(n_jobs, "n_jobs", low=1)
    hard_limit = check_real(hard_limit, "hard_limit", low=0.0, low_open=True)
    if not callable(fn):
        raise ValueError(f"fn must be callable, got {fn!r:.60}")
    tasks = list(tasks)
    if not all(isinstance(t, tuple) and len(t) == 2 and isinstance(t[1], (tuple, list))
               for t in tasks):
        raise ValueError("tasks must be (key, args) pairs, args a tuple of fn's arguments")
    keys = [key for key, _ in tasks]
    if len(set(keys)) != len(keys):
        raise ValueError("tasks has a key twice: each task's result is stored under its key")

    ctx = multiprocessing.get_context("fork")  # the parent's imports (otter, numpy) are reused
    pending, running, done = list(tasks), {}, {}
    with tqdm(total=len(tasks), desc=desc, unit="notebook", disable=None) as bar:
        while pending or running:
            while pending and len(running) < n_jobs:
                key, args = pending.pop(0)
                recv, send = ctx.Pipe(duplex=False)
                proc = ctx.Process(target=_child, args=(send, fn, args), daemon=False)
                proc.start()
                send.close()
                running[recv] = (key, proc, time.monotonic())
            ready = wait(list(running), timeout=1.0)
            now = time.monotonic()
            for conn in list(running):
                key, proc, started = running[conn]
                if conn in ready:
                    try:
                        done[key] = conn.recv()
                    except EOFError:  # the worker died without a word (killed, segfault)
                        done[key] = ("error", f"the grading process ended ({proc.exitcode})")
                elif now - started > hard_limit:
                    _kill_tree(proc.pid)
                    done[key] = ("killed", round(now - started))
                else:
                    continue
                conn.close()
                proc.join(timeout=10)
                del running[conn]
                bar.update(1)
    return done


def default_jobs() -> int:
    """Every core this process may use."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
