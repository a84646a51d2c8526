"""Running one stage over every block: on a Dask cluster, or in this process.

On a cluster, what every block reads (a Scorer, the item side of factor matrices, the
per-item propensities, the intervention's item counts) is sent once, as the result of a task
that Dask can run again if the workers holding it die; each task gets its own
small part; at most a few tasks per worker thread are in flight, so that neither the
scheduler nor the workers hold more than those blocks' rows. A task that fails raises its
error here; a task whose worker died is run again by Dask on another worker (every task is
a pure function of its inputs and seeds, so the retry gives the same sums).
"""

from __future__ import annotations

import itertools
import os
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from .._ranking import n_threads
from . import _block


def _resolve(data: Any) -> Any:
    """A part in this process: a Delayed (dask.dataframe partition) is computed here."""
    if hasattr(data, "compute") and hasattr(data, "dask"):
        return data.compute(scheduler="sync")
    return data


def _identity(obj: Any) -> Any:
    return obj


def _scatter(client: Any, obj: Any) -> Any:
    """A future of ``obj`` that survives lost workers: made by a task whose input the
    scheduler keeps, so Dask can make it again if every worker that held it died (scattered
    data would be lost for good)."""
    return client.submit(_identity, obj, pure=False)


class Runner:
    """Runs ``_block.run`` for every block, keeping the order of the blocks."""

    def __init__(self, client: Any, blocks: list[dict], frames: list[dict], models: list):
        self.client, self.blocks, self.frames = client, blocks, frames
        if client is None:
            self.models = models
        else:  # the shared part of each model once per worker
            self.models = [(name, kind, part, None if shared is None else _scatter(client, shared))
                           for name, kind, part, shared in models]

    def _models_for(self, b: int, parts: list) -> list:
        return [(name, kind, part[b], shared) for (name, kind, _, shared), part
                in zip(self.models, parts)]

    def run(self, stage: str, shared: dict, local: list[dict], model_parts: list | None = None,
            ) -> list:
        """One result per block: ``_block.run(stage, ...)`` with ``shared`` (sent once) and
        ``local[b]`` (block b's own)."""
        n = len(self.blocks)
        parts = model_parts if model_parts is not None else [[None] * n for _ in self.models]
        if self.client is None:
            def one(b):
                frames = {k: [_resolve(d) for d in v] for k, v in self.frames[b].items()}
                return _block.run(stage, self.blocks[b], frames, self._models_for(b, parts),
                                  shared, local[b])

            workers = min(n_threads(), n) if stage == "score" else 1
            if workers <= 1:
                return [one(b) for b in range(n)]
            with ThreadPoolExecutor(workers) as pool:
                return list(pool.map(one, range(n)))
        from dask.distributed import as_completed

        client = self.client
        shared_f = _scatter(client, shared)
        threads = sum(client.nthreads().values()) or 1
        window = max(4, 2 * threads)
        results: list = [None] * n
        keep: dict = {}

        def submit(b: int):
            frames = {k: [client.compute(d) if hasattr(d, "dask") else d for d in v]
                      for k, v in self.frames[b].items()}
            future = client.submit(_block.run, stage, self.blocks[b], frames,
                                   self._models_for(b, parts), shared_f, local[b], pure=False,
                                   key=f"recbias-{stage}-{b}-{os.urandom(4).hex()}")
            keep[future.key] = (b, frames)
            return future

        queue = iter(range(n))
        pending = as_completed([submit(b) for b in itertools.islice(queue, window)])
        try:
            for future in pending:
                b, _ = keep.pop(future.key)
                results[b] = future.result()  # a task's error is raised here
                nxt = next(queue, None)
                if nxt is not None:
                    pending.add(submit(nxt))
        finally:
            keep.clear()  # on an error, the other blocks' futures are released
        return results
