"""The core without its extras: what works, and the message where an extra is needed.

A fresh interpreter (``-I -S``) sees this environment's packages through a folder of links
that leaves out every optional library (Cornac, Numba, joblib, tqdm, pooch, powerlaw,
vl-convert, with their metadata), as if they were not installed, and uses the package as the
core install does (``tests/test_browser_edition.py`` does it in a real core install).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import sysconfig
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BLOCKED = ("cornac", "numba", "joblib", "tqdm", "pooch", "powerlaw", "vl_convert", "llvmlite")

SCRIPT = textwrap.dedent("""
    import json, sys
    BLOCKED = {blocked!r}
    import numpy as np
    import recbias_tutorial as rb
    from recbias_tutorial import course, plots
    from recbias_tutorial._optional import MissingDependency, available

    out = {{"available": {{m: available(m) for m in BLOCKED}}}}
    world = rb.simulate(60, 40, seed=0, mean_ratings_per_user=6)
    out["auc"] = rb.aoa(world.propensity, world.full, metric="auc", k=None)
    out["recall"] = rb.aoa(world.propensity, world.full, k=10)
    out["mf"] = rb.debiased_mf.fit_mf(world.mnar, n_users=60, n_items=40, seed=0, epochs=2).shape
    out["renderer"] = course.setup()
    out["bundle"] = sorted(plots.lab_bundle({{"mark": "point", "data": {{"values": [{{"x": 1}}]}},
        "encoding": {{"x": {{"field": "x", "type": "quantitative"}}}}}}))

    def error(call):
        try:
            call()
        except Exception as err:
            return [type(err).__name__, str(err), isinstance(err, ModuleNotFoundError)]
        return None

    out["fit_scores"] = error(lambda: rb.fit_scores)
    out["model_zoo"] = error(lambda: rb.models.model_zoo)
    out["ranksys"] = error(lambda: rb.replications.carraro2022.ImplicitALS)
    out["split"] = error(lambda: rb.replications.carraro2022.split_feedback)
    out["powerlaw"] = error(lambda: rb.replications.jadidinejad2021.powerlaw_propensity(
        np.arange(1, 60)))
    out["coat"] = error(lambda: rb.load("coat"))
    out["cache_helpers"] = error(lambda: rb.models.clear_fit_cache)
    out["imported"] = sorted(m for m in BLOCKED if m in sys.modules)
    print(json.dumps(out))
""")


def _site_without_extras(folder: Path) -> Path:
    """A folder linking every entry of this environment's site-packages but the optional ones."""
    blocked = re.compile(rf"^({'|'.join(BLOCKED)}|vl_convert_python)([-_.].*)?$", re.I)
    folder.mkdir()
    for entry in Path(sysconfig.get_paths()["purelib"]).iterdir():
        if not blocked.match(entry.name) and entry.suffix != ".pth":
            (folder / entry.name).symlink_to(entry)
    return folder


def _run(tmp_path) -> dict:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("RECBIAS_", "PYTHON", "VIRTUAL_ENV"))}
    env.update(RECBIAS_DATA=str(tmp_path / "no-data"), RECBIAS_CACHE=str(tmp_path / "cache"),
               CI="", PYTHONPATH=f"{ROOT}{os.pathsep}{_site_without_extras(tmp_path / 'site')}")
    done = subprocess.run([sys.executable, "-S", "-c", SCRIPT.format(blocked=BLOCKED)],
                          env=env, capture_output=True, text=True, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-4000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_the_core_runs_and_each_extra_is_named_where_it_is_needed(tmp_path):
    out = _run(tmp_path)
    assert not any(out["available"].values())
    assert 0.5 < out["auc"] <= 1 and 0 < out["recall"] <= 1
    assert out["mf"] == [60, 40]  # debiased MF without joblib: computed, not cached
    assert out["renderer"] == "recbias_lab"
    assert out["bundle"] == ["application/vnd.vegalite.v5+json", "text/plain"]  # no SVG
    for name in ("fit_scores", "model_zoo", "ranksys"):
        kind, message, is_missing = out[name]
        assert kind == "MissingDependency" and is_missing, out[name]
        assert "needs cornac" in message and "pip install 'recbias_tutorial[models]'" in message
    assert out["split"] is None  # carraro2022's protocol imports without Cornac
    kind, message, _ = out["powerlaw"]
    assert kind == "MissingDependency" and "recbias_tutorial[replicate]" in message
    kind, message, _ = out["coat"]
    assert kind == "DatasetNotFoundError" and "recbias_tutorial[data]" in message, message
    assert out["cache_helpers"] is None
    assert out["imported"] == []
