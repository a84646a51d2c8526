"""The JupyterLab chart bundle: selections moved into their views (Vega-Lite 5.6 in JupyterLab).

JupyterLab 4 draws ``application/vnd.vegalite.v5+json`` with the Vega-Lite 5.6 it ships, which
fails on Altair's top-level selections whose view is a line with ``point=True``
("Duplicate signal name: ..._tuple"). ``plots.lab_bundle`` writes each such selection inside
its view instead; the JupyterLab browser test checks the charts draw there, these tests check
the rewrite itself: same chart, one definition per selection, every Vega-Lite version.
"""

from __future__ import annotations

import copy
import json
import re

import altair as alt
import numpy as np
import pandas as pd
import pytest
import vl_convert as vlc

from recbias_tutorial import plots

DF = pd.DataFrame({"model": ["a", "a", "b", "b"] * 2, "kind": ["x", "y"] * 4,
                   "v": [1, 2, 3, 4, 2, 3, 4, 5], "w": [1, 2, 3, 4, 4, 3, 2, 1]})


def _sel(**kw):
    return alt.selection_point(fields=["kind"], bind="legend", **kw)


def facet_line():  # chapters 2, 4 and 6
    sel = _sel()
    return alt.Chart(DF).mark_line(point=True).encode(
        x="v:Q", y="w:Q", color="kind:N", opacity=alt.condition(sel, alt.value(1), alt.value(.2))
    ).add_params(sel).properties(width=100, height=100).facet(column="model:N")


def layer_in_concat():  # chapter 3: a named selection on one layer of a concatenation
    sel = _sel(name="tauCoat")
    ours = alt.Chart(DF).mark_line(point=True).encode(
        x="v:Q", y="w:Q", color="kind:N", opacity=alt.condition(sel, alt.value(1), alt.value(.2))
    ).add_params(sel)
    rule = alt.Chart(DF).mark_rule().encode(y="mean(w):Q")
    return alt.hconcat(alt.layer(ours, rule), alt.Chart(DF).mark_bar().encode(x="v:Q", y="w:Q"))


def layered_facet():  # chapter 5
    sel = _sel()
    lines = alt.Chart().mark_line(point=True).encode(
        x="v:Q", y="w:Q", color="kind:N", opacity=alt.condition(sel, alt.value(1), alt.value(.2)))
    return alt.layer(lines, alt.Chart().mark_rule().encode(y="mean(w):Q"), data=DF).add_params(
        sel).properties(width=100, height=100).facet(column="model:N")


def with_variable():  # a top-level variable (no views) stays at the top level
    cut = alt.param(name="cut", value=2, bind=alt.binding_range(min=0, max=5))
    sel = _sel()
    return alt.Chart(DF).mark_line(point=True).encode(
        x="v:Q", y="w:Q", color="kind:N", opacity=alt.condition(sel, alt.value(1), alt.value(.2))
    ).add_params(sel, cut).transform_filter(alt.datum.v >= cut)


CHARTS = [facet_line, layer_in_concat, layered_facet, with_variable]


def _params_below_top(spec, out=None):
    out = [] if out is None else out
    for key in ("layer", "hconcat", "vconcat", "concat", "spec"):
        parts = spec.get(key)
        for part in parts if isinstance(parts, list) else [parts]:
            if isinstance(part, dict):
                out.extend((part.get("name"), p["name"]) for p in part.get("params", []))
                _params_below_top(part, out)
    return out


@pytest.mark.parametrize("make", CHARTS, ids=lambda f: f.__name__)
def test_selections_move_into_their_view(make):
    spec = make().to_dict()
    selections = {p["name"]: p["views"] for p in spec["params"] if "views" in p}
    bundle = plots.lab_bundle(spec, svg=False)
    lab = bundle[plots.LAB_MIMETYPE]
    assert lab["$schema"].endswith("/v5.json")
    assert not any("views" in p for p in lab.get("params", []))
    placed = _params_below_top(lab)
    for name, views in selections.items():
        assert sorted(v for v, p in placed if p == name) == sorted(views)  # once per view
    assert {p["name"] for p in lab.get("params", [])} == (
        {p["name"] for p in spec["params"]} - set(selections))
    assert spec == make().to_dict()  # the caller's spec is not modified


@pytest.mark.parametrize("version", ["5.8", "6.4"])
@pytest.mark.parametrize("make", CHARTS, ids=lambda f: f.__name__)
def test_rewritten_chart_is_the_same_chart(make, version):
    spec = make().to_dict()
    lab = {k: v for k, v in plots.lab_bundle(spec, svg=False)[plots.LAB_MIMETYPE].items()
           if k != "$schema"}
    vega = vlc.vegalite_to_vega(lab, vl_version=version)
    names = [s["name"] for s in vega.get("signals", [])]
    assert len(names) == len(set(names))
    tuples = [n for n in json.dumps(vega).split('"') if n.endswith("_tuple")]
    assert tuples  # the selection is still there ...
    assert vlc.vegalite_to_svg(lab, vl_version=version) == vlc.vegalite_to_svg(
        spec, vl_version=version)  # ... and the drawing is unchanged


def test_specs_without_view_selections_pass_through():
    spec = alt.Chart(DF).mark_point().encode(x="v:Q", y="w:Q").to_dict()
    lab = plots.lab_bundle(spec, svg=False)[plots.LAB_MIMETYPE]
    assert {k: v for k, v in lab.items() if k != "$schema"} == {
        k: v for k, v in spec.items() if k != "$schema"}


# --- chapter 2: estimate_slider -------------------------------------------------------------------

GRID = pd.DataFrame({"model": ["a"] * 3 + ["b"] * 3, "γ": [0.0, 0.5, 1.0] * 2,
                     "SNIPS γ=x.y": [0.5, 0.4, 0.3, 0.2, 0.25, 0.3],
                     "MAR truth": [0.35] * 3 + [0.3] * 3, "AOA": [0.6] * 3 + [0.2] * 3})


def _slider(**kw):
    return plots.estimate_slider(GRID, param="γ", value="SNIPS γ=x.y", y="model",
                                 references=["MAR truth", "AOA"], label="SNIPS", **kw)


def test_estimate_slider_binds_a_range_over_the_grid():
    spec = _slider(start=0.5).to_dict()
    (slider,) = spec["params"]
    assert slider["bind"] == {"input": "range", "min": 0.0, "max": 1.0, "step": 0.5, "name": "γ "}
    assert slider["value"] == 0.5 and slider["name"].isidentifier() and slider["name"].isascii()
    filters = [t["filter"] for layer in spec["layer"] for t in layer.get("transform", [])]
    assert len(filters) == 2 and all(slider["name"] in f for f in filters)
    # the JupyterLab bundle keeps the variable at the top level, and both Vega-Lites draw it
    lab = plots.lab_bundle(spec, svg=False)[plots.LAB_MIMETYPE]
    assert [p["name"] for p in lab["params"]] == [slider["name"]]
    for version in ("5.8", "6.4"):
        assert vlc.vegalite_to_svg({k: v for k, v in lab.items() if k != "$schema"},
                                   vl_version=version).startswith("<svg")


def test_estimate_slider_draws_one_legend():
    svg = vlc.vegalite_to_svg(_slider().to_dict())
    assert svg.count('class="mark-group role-legend"') == 1  # colour and shape merged


def test_estimate_slider_shows_one_grid_value_at_a_time():
    spec = _slider(start=1.0).to_dict()
    data = {name: pd.DataFrame(rows) for name, rows in spec["datasets"].items()}
    long = next(d for d in data.values() if "series" in d)
    shown = long[(long["param"] - 1.0).abs() < 0.25]
    assert len(shown) == 2 * 3  # two models, the estimate and two references each
    assert set(shown["series"]) == {"SNIPS", "MAR truth", "AOA"}
    assert shown.set_index(["row", "series"]).loc[("a", "SNIPS"), "x"] == 0.3


def test_estimate_slider_refuses_bad_grids():
    with pytest.raises(ValueError, match="evenly spaced"):
        plots.estimate_slider(GRID.replace({"γ": {1.0: 2.0}}), param="γ", value="SNIPS γ=x.y",
                              y="model")
    with pytest.raises(ValueError, match="start must be a value"):
        _slider(start=0.25)
    with pytest.raises(ValueError, match="must not vary"):
        plots.estimate_slider(GRID, param="γ", value="MAR truth", y="model",
                              references=["SNIPS γ=x.y"])
    with pytest.raises(ValueError, match="missing column"):
        plots.estimate_slider(GRID, param="gamma", value="SNIPS γ=x.y", y="model")


# --- chapters 1 and 6: charts over a precomputed grid (slider_dots, knob_lines) ---------------

KNOB_GRID = pd.DataFrame({"model": ["pop", "pop", "pers", "pers"] * 3,
                     "kind": ["AOA", "truth"] * 6,
                     "beta": [0.0] * 4 + [0.5] * 4 + [1.0] * 4,
                     "recall": [.05, .04, .10, .08, .10, .04, .09, .08, .20, .04, .07, .08]})
KNOBS = pd.DataFrame({"knob": ["pop"] * 6 + ["rating"] * 6, "v": [0, 1, 2] * 4,
                      "method": (["a"] * 3 + ["b"] * 3) * 2,
                      "rmse": [.1, .2, .3, .1, .1, .1, .2, .2, .2, .3, .2, .1]})


def _drawn_marks(spec, version="5.8"):
    """The marks Vega draws for a spec, after its filters (as JupyterLab's Vega-Lite 5 does)."""
    lab = {k: v for k, v in plots.lab_bundle(spec, svg=False)[plots.LAB_MIMETYPE].items()
           if k != "$schema"}
    return vlc.vegalite_to_svg(lab, vl_version=version)


def test_slider_dots_shows_one_grid_value():
    spec = plots.slider_dots(KNOB_GRID, param="beta", x="recall", y="model", series="kind",
                             start=0.5).to_dict()
    (slider,) = spec["params"]
    assert slider["value"] == 0.5
    assert slider["bind"] == {"input": "range", "min": 0.0, "max": 1.0, "step": 0.5,
                              "name": "beta "}
    svg = _drawn_marks(spec)
    assert svg.count("<path") >= 4  # two rows x two series at the chosen value (plus the rules)
    assert svg.count(">AOA<") == 1  # colour and shape share one legend
    # the x scale is fixed over the whole grid, so the dots move and the axis does not
    assert all(layer["encoding"]["x"]["scale"]["domain"][1] > 0.2 for layer in spec["layer"])


def test_slider_dots_refuses_bad_grids():
    with pytest.raises(ValueError, match="missing column"):
        plots.slider_dots(KNOB_GRID, param="gamma", x="recall", y="model", series="kind")
    with pytest.raises(ValueError, match="evenly spaced"):
        plots.slider_dots(KNOB_GRID.assign(beta=KNOB_GRID["beta"] ** 2 + KNOB_GRID["beta"]), param="beta",
                          x="recall", y="model", series="kind")
    with pytest.raises(ValueError, match="start must be a value"):
        plots.slider_dots(KNOB_GRID, param="beta", x="recall", y="model", series="kind", start=0.3)


KNOB_NAMES = {"pop": "popularity bias β_p", "rating": "rating bias β_r"}


def _knob_chart(**kw):
    frame = KNOBS.assign(knob=KNOBS["knob"].map(KNOB_NAMES))
    return plots.knob_lines(frame, knob="knob", value="v", y="rmse", line="method",
                            y_title="RMSE of Recall@10", **kw).to_dict()


def _choose(spec, knob):
    """The spec as the radio buttons leave it once ``knob`` is clicked (the param's value)."""
    spec = copy.deepcopy(spec)
    next(p for p in spec["params"] if isinstance(p.get("bind"), dict))["value"] = knob
    return spec


def _texts(svg):
    return re.findall(r"<text[^>]*>([^<]*)</text>", svg)


def test_knob_lines_filters_by_the_chosen_knob():
    spec = _knob_chart(start="rating bias β_r")
    radio = next(p for p in spec["params"] if isinstance(p.get("bind"), dict))
    assert radio["value"] == "rating bias β_r"
    assert radio["bind"]["options"] == ["popularity bias β_p", "rating bias β_r"]
    data_layers = [layer for layer in spec["layer"] if "encoding" in layer]
    assert data_layers and all(layer["transform"][0] == {"filter": f"datum.knob == {radio['name']}"}
                               for layer in data_layers)
    for version in ("5.8", "6.4"):
        assert "<path" in _drawn_marks(spec, version)


def test_knob_lines_titles_the_x_axis_with_the_chosen_knob():
    spec = _knob_chart()
    for layer in spec["layer"]:  # no static axis title ("knob value") anywhere
        assert layer.get("encoding", {}).get("x", {}).get("title") is None
    for knob in KNOB_NAMES.values():  # whichever button is clicked, after the chart was built
        for version in ("5.8", "6.4"):
            texts = _texts(_drawn_marks(_choose(spec, knob), version))
            assert texts.count(knob) == 1, (knob, version, texts)
            assert not set(KNOB_NAMES.values()) - {knob} & set(texts)
            assert "RMSE of Recall@10" in texts and "knob value" not in texts


def test_knob_lines_draws_on_top_last_dashed_and_distinct():
    # "a" and "b" coincide on the rating knob: "a" must stay visible over "b"
    same = KNOBS.assign(rmse=np.where(KNOBS["knob"] == "rating", 0.2, KNOBS["rmse"]))
    spec = plots.knob_lines(same, knob="knob", value="v", y="rmse", line="method",
                            order=["a", "b"], on_top="a", start="rating").to_dict()
    data_layers = [layer for layer in spec["layer"] if "encoding" in layer]
    marks = [(layer["mark"]["type"], layer["transform"][-1]["filter"]) for layer in data_layers]
    assert marks == [("line", {"field": "line", "oneOf": ["b"]}), ("point", {"field": "line", "oneOf": ["b"]}),
                     ("line", {"field": "line", "equal": "a"}), ("point", {"field": "line", "equal": "a"})]
    assert data_layers[2]["mark"].get("strokeDash") and not data_layers[0]["mark"].get("strokeDash")
    shapes = data_layers[1]["encoding"]["shape"]["scale"]
    assert shapes["domain"] == ["a", "b"] and len(set(shapes["range"])) == 2
    assert shapes["range"][0] == plots._RING  # a ring: the point under it shows through
    svg = _drawn_marks(spec)
    drawn = [p for p in re.findall(r"<path[^>]*>", svg) if "line: " in p]  # in drawing order
    lines = [p for p in drawn if 'aria-roledescription="line mark"' in p]
    assert len(lines) == 2 and "line: a;" in lines[-1]  # a's line is drawn after b's
    assert "stroke-dasharray" in lines[-1] and "stroke-dasharray" not in lines[0]
    assert all("line: a;" in p for p in drawn[-3:])  # and so are its points
    assert _texts(svg).count("a") == 1 and _texts(svg).count("b") == 1  # one legend
    # without on_top every line is solid, still with its own shape
    plain = plots.knob_lines(same, knob="knob", value="v", y="rmse", line="method").to_dict()
    assert not any(layer["mark"].get("strokeDash") for layer in plain["layer"])


def test_knob_lines_refuses_bad_input():
    with pytest.raises(ValueError, match="start must be one of"):
        plots.knob_lines(KNOBS, knob="knob", value="v", y="rmse", line="method", start="density")
    with pytest.raises(ValueError, match="at least two values"):
        plots.knob_lines(KNOBS[KNOBS["v"] == 0], knob="knob", value="v", y="rmse", line="method")
    with pytest.raises(ValueError, match="on_top must be one of the lines"):
        plots.knob_lines(KNOBS, knob="knob", value="v", y="rmse", line="method", on_top="AOA")
    with pytest.raises(ValueError, match="order must list every line.*'b'"):
        plots.knob_lines(KNOBS, knob="knob", value="v", y="rmse", line="method", order=["a"])


# --- chapter 3: rho_slider --------------------------------------------------------------------

def _rho_frames():
    rows = [{"model": m, "test_set": "FULL", "rho": 1.0, "value": v, "truth": t}
            for m, v, t in (("a", 0.3, 0.1), ("b", 0.2, 0.2))]
    rows += [{"model": m, "test_set": s, "rho": r, "value": v * r + 0.05, "truth": t}
             for m, v, t in (("a", 0.3, 0.1), ("b", 0.2, 0.2)) for s in ("REG", "SKEW")
             for r in (0.25, 0.5, 0.75, 1.0)]
    values = pd.DataFrame(rows)
    summary = values.groupby(["test_set", "rho"], as_index=False)["value"].mean()
    return values, summary


def test_rho_slider_filters_one_size_and_keeps_full_at_every_size():
    values, summary = _rho_frames()
    spec = plots.rho_slider(values, summary, value_title="Recall@10", summary_title="mean",
                            start=0.5).to_dict()
    (param,) = spec["params"]
    assert param["name"] == "rho_p" and param["value"] == 0.5
    assert param["bind"] == {"input": "range", "min": 0.25, "max": 1.0, "step": 0.25,
                             "name": "ρp (sampling share) "}
    left, right = spec["hconcat"]
    points = left["layer"][1]
    assert "rho_p" in points["transform"][0]["filter"]
    shown = spec["datasets"][points["data"]["name"]]
    full = [row["rho"] for row in shown if row["test_set"] == "FULL"]
    assert sorted(full) == [0.25, 0.25, 0.5, 0.5, 0.75, 0.75, 1.0, 1.0]  # FULL at every slider position
    assert right["layer"][2]["transform"] == [{"calculate": "rho_p", "as": "at"}]
    lab = plots.lab_bundle(spec, svg=False)[plots.LAB_MIMETYPE]
    assert lab["params"] == spec["params"]  # a top-level variable stays where it is
    for version in ("5.8", "6.4"):
        assert "<svg" in vlc.vegalite_to_svg(spec, vl_version=version)


@pytest.mark.parametrize("change, message", [
    (lambda v, s: (v.drop(columns="truth"), s), "values is missing column"),
    (lambda v, s: (v.assign(test_set=v["test_set"].replace("REG", "NOPE")), s), "not in sets"),
    (lambda v, s: (v[~np.isclose(v["rho"], 0.5)], s), "evenly spaced"),
    (lambda v, s: (v.assign(truth=np.arange(len(v)) / 100), s), "one truth per model"),
    (lambda v, s: (v[v["test_set"] == "FULL"], s), "at least two values"),
])
def test_rho_slider_refuses_bad_input(change, message):
    values, summary = change(*_rho_frames())
    with pytest.raises(ValueError, match=message):
        plots.rho_slider(values, summary, value_title="x", summary_title="y")
    with pytest.raises(ValueError, match="start must be a value of the grid"):
        plots.rho_slider(*_rho_frames(), value_title="x", summary_title="y", start=0.3)
