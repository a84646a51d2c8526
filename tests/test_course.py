"""course.py: the chapters' plumbing."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from recbias_tutorial import course


def test_glue_values_glues_plain_python_numbers(monkeypatch):
    import myst_nb

    glued, namespace = {}, {}
    monkeypatch.setattr(course, "_kernel", lambda: SimpleNamespace(user_ns=namespace))
    monkeypatch.setattr(myst_nb, "glue", lambda k, v, display: glued.update({k: (v, display)}))
    out = course.glue_values("ch9", {"n": np.int64(3), "x": np.float32(0.5), "s": "MF", "b": True})
    assert out is None  # a call ending a cell shows nothing
    assert glued == {"ch9_n": (3, False), "ch9_x": (0.5, False), "ch9_s": ("MF", False),
                     "ch9_b": (True, False)}
    assert type(glued["ch9_n"][0]) is int and type(glued["ch9_x"][0]) is float
    # the same values are kernel variables, for JupyterLab's {eval} expressions
    assert namespace == {k: v for k, (v, _) in glued.items()}


def test_glue_rejects_non_identifiers_and_display():
    with pytest.raises(ValueError, match="name"):
        course.glue("ch9 gap", 1.0)
    with pytest.raises(ValueError, match="display"):
        course.glue("ch9_gap", 1.0, display=True)


def test_table_prints_counts_as_ints_rounds_and_names_gaps():
    frame = pd.DataFrame({"n": [923.0, 12.0, np.nan], "w": [0.909091, 1.5, 2.0],
                          "label": ["a", "b", "c"]})
    out = course.table(frame, digits=2, missing="empty stratum")
    assert out["n"].tolist() == [923, 12, "empty stratum"]
    # beside a gap, floats are printed with every digit (as a paper prints 0.0550)
    assert out["w"].tolist() == ["0.91", "1.50", "2.00"]
    assert "923.0" not in out.to_string() and "NaN" not in out.to_string()
    assert frame["n"].isna().sum() == 1  # the input is not modified


@pytest.mark.parametrize("kwargs", [{"frame": [1]}, {"digits": -1}, {"digits": 1.5}, {"missing": 0}])
def test_table_rejects_bad_input(kwargs):
    args = {"frame": pd.DataFrame({"x": [1.0]}), **kwargs}
    with pytest.raises(ValueError, match=next(iter(kwargs))):
        course.table(args.pop("frame"), **args)


@pytest.mark.parametrize("prefix, values", [("", {"a": 1}), ("p", [1]), ("p", {1: 2})])
def test_glue_values_rejects_bad_input(prefix, values):
    with pytest.raises(ValueError, match="prefix|values"):
        course.glue_values(prefix, values)


def test_setup_picks_the_offline_renderer_in_the_book(monkeypatch):
    import altair as alt

    monkeypatch.setenv("RECBIAS_CHARTS", "offline")
    assert course.setup() == course.RENDERER
    assert alt.renderers.active == course.RENDERER
    monkeypatch.delenv("RECBIAS_CHARTS")
    assert course.setup() == course.LAB_RENDERER
    chart = alt.Chart(alt.Data(values=[{"x": 1, "y": 2}])).mark_point().encode(x="x:Q", y="y:Q")
    bundle, metadata = alt.renderers.get()(chart.to_dict())
    assert bundle["application/vnd.vegalite.v5+json"]["$schema"].endswith("/v5.json")
    assert metadata["application/vnd.vegalite.v5+json"]["embed_options"]["renderer"] == "svg"
    assert bundle["image/svg+xml"].lstrip().startswith("<svg")


def test_standin_notice_rejects_non_data():
    with pytest.raises(ValueError, match="data"):
        course.standin_notice("coat")


CHAPTER_FILES = sorted((Path(__file__).resolve().parents[1] / "book").glob("*.md"))


@pytest.mark.parametrize("path", CHAPTER_FILES, ids=lambda p: p.stem)
def test_jupytext_round_trip_leaves_each_page_byte_identical(path):
    """JupyterLab (jupytext) opens and saves a chapter without rewriting it (no unsaved tab)."""
    import jupytext

    text = path.read_text(encoding="utf-8")
    assert f"jupytext_version: {jupytext.__version__}" in text
    assert jupytext.writes(jupytext.reads(text, fmt="md:myst"), fmt="md:myst") == text


@pytest.mark.parametrize("path", CHAPTER_FILES, ids=lambda p: p.stem)
def test_plumbing_is_folded_in_jupyterlab_as_on_the_site(path):
    """A cell the site hides (plotting code, numbers for the prose) is folded in JupyterLab too:
    ``source_hidden`` set, and its first line, the only one a student sees, a comment saying
    what the cell does."""
    import jupytext

    nb = jupytext.reads(path.read_text(encoding="utf-8"), fmt="md:myst")
    hidden = {"hide-input", "remove-input", "remove-cell"}
    for cell in nb.cells:
        if cell.cell_type == "code" and hidden & set(cell.metadata.get("tags", [])):
            first = cell.source.splitlines()[0]
            assert cell.metadata.get("jupyter", {}).get("source_hidden") is True, first
            assert first.startswith("# ") and len(first) > 12, first


@pytest.mark.parametrize("session, svg", [("ch05_ure.md", False), ("book/ch05_ure.ipynb", True),
                                          (None, True)])
def test_lab_renderer_draws_the_svg_only_where_outputs_are_saved(monkeypatch, session, svg):
    """A jupytext .md chapter saves no output: no static SVG (it costs time on every run)."""
    from recbias_tutorial import plots

    if session is None:
        monkeypatch.delenv("JPY_SESSION_NAME", raising=False)
    else:
        monkeypatch.setenv("JPY_SESSION_NAME", session)
    bundle, _ = plots.lab_renderer({"mark": "point", "data": {"values": [{"x": 1}]}})
    assert ("image/svg+xml" in bundle) is svg
    assert plots.LAB_MIMETYPE in bundle
