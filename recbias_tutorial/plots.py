"""Altair chart builders shared by several chapters, and the offline chart HTML.

Importing this module has no side effect. :func:`offline_html` writes a chart as plain HTML
calling the page's own ``window.vegaEmbed`` (the built book serves that bundle from
``_static``, no CDN); :func:`recbias_tutorial.course.setup` registers and enables the
renderer that uses it.
"""

from __future__ import annotations

import copy
import hashlib
import json
import os
from collections.abc import Mapping

import altair as alt
import numpy as np
import pandas as pd

from ._optional import available
from ._schema import checked_frame

_TEMPLATE = """<div id="{id}" class="recbias-chart"></div>
<script type="text/javascript">
(function () {{
  var spec = {spec};
  var el = document.getElementById("{id}");
  function show() {{
    window.vegaEmbed(el, spec, {{"actions": false, "renderer": "svg"}}).catch(function (err) {{
      el.textContent = "Chart failed to render: " + err;
    }});
  }}
  if (window.vegaEmbed) {{ show(); }}
  else {{ el.textContent = "This interactive chart needs the Vega bundle of the built book."; }}
}})();
</script>"""


def offline_html(spec: Mapping) -> str:
    """HTML for one chart that uses the page's own Vega bundle (no network).

    The element id is derived from the spec, so rebuilding gives identical pages.

    Parameters
    ----------
    spec : mapping
        A Vega-Lite specification, e.g. ``chart.to_dict()``.

    Returns
    -------
    str
        A ``<div>`` and a ``<script>`` that embeds ``spec`` with ``window.vegaEmbed``.

    Raises
    ------
    TypeError
        If ``spec`` is not JSON-serialisable (or has keys that cannot be sorted).
    ValueError
        If ``spec`` contains a circular reference.

    See Also
    --------
    recbias_tutorial.plots.offline_renderer : the Altair renderer built on it.
    recbias_tutorial.course.setup : registers and enables that renderer.

    Examples
    --------
    >>> html = offline_html({"mark": "point", "data": {"values": [{"x": 1}]}})
    >>> "vegaEmbed" in html and "cdn" not in html
    True
    """
    text = json.dumps(spec, sort_keys=True)
    chart_id = "vega-" + hashlib.sha1(text.encode()).hexdigest()[:12]
    return _TEMPLATE.format(id=chart_id, spec=text)


def offline_renderer(spec: dict, **metadata) -> dict:
    """An Altair renderer: the MIME bundle of :func:`offline_html`.

    Parameters
    ----------
    spec : dict
        The Vega-Lite specification Altair passes to its renderers.
    **metadata
        Renderer options from Altair; ignored.

    Returns
    -------
    dict
        ``{"text/html": offline_html(spec)}``.

    Raises
    ------
    TypeError
        If ``spec`` is not JSON-serialisable (see :func:`offline_html`).
    ValueError
        If ``spec`` contains a circular reference.

    See Also
    --------
    recbias_tutorial.plots.offline_html : the HTML of the bundle.
    recbias_tutorial.course.setup : registers this renderer as ``"recbias_offline"``.

    Examples
    --------
    >>> bundle = offline_renderer({"mark": "point", "data": {"values": [{"x": 1}]}})
    >>> list(bundle), bundle["text/html"].startswith('<div id="vega-')
    (['text/html'], True)
    """
    return {"text/html": offline_html(spec)}


#: The Vega-Lite MIME type JupyterLab 4 renders itself (its bundled Vega handles v3 to v5).
LAB_MIMETYPE = "application/vnd.vegalite.v5+json"
_V5_SCHEMA = "https://vega.github.io/schema/vega-lite/v5.json"


_COMPOSITIONS = ("layer", "hconcat", "vconcat", "concat", "spec")


def _named_views(spec: dict, out: dict) -> dict:
    """Every sub-specification carrying a ``name``, by that name (depth first)."""
    if isinstance(spec.get("name"), str):
        out.setdefault(spec["name"], spec)
    for key in _COMPOSITIONS:
        parts = spec.get(key)
        for part in parts if isinstance(parts, list) else [parts]:
            if isinstance(part, dict):
                _named_views(part, out)
    return out


def _localise_params(spec: dict) -> dict:
    """Selections defined in their views instead of at the top level with ``views``.

    Altair lifts every selection to the top level and lists the views it belongs to. The
    Vega-Lite 5.6 that JupyterLab 4 ships duplicates such a selection when its view is a line
    with ``point=True`` (drawn as a line layer plus a point layer), and the chart fails with
    "Duplicate signal name: ..._tuple" (vega/vega-lite#7854). A selection written inside the
    view it belongs to, as Vega-Lite 4 and Altair 4 wrote it, draws the same chart in every
    Vega-Lite 5 and 6. Parameters without ``views`` (top-level variables) stay where they are.
    """
    params = spec.get("params")
    if not isinstance(params, list) or not any(isinstance(p, dict) and p.get("views")
                                               for p in params):
        return spec
    spec = copy.deepcopy(spec)
    views = _named_views(spec, {})
    top = []
    for param in spec["params"]:
        names = param.get("views") if isinstance(param, dict) else None
        targets = [views[n] for n in names or () if n in views]
        if not targets:  # nothing to move it into: leave it as Altair wrote it
            top.append(param)
            continue
        local = {k: v for k, v in param.items() if k != "views"}
        for view in targets:
            view.setdefault("params", []).append(copy.deepcopy(local))
    if top:
        spec["params"] = top
    else:
        del spec["params"]
    return spec


def lab_bundle(spec: Mapping, *, svg: bool = True) -> dict:
    """A MIME bundle JupyterLab shows offline: Vega-Lite v5 JSON and a static SVG fallback.

    JupyterLab renders ``application/vnd.vegalite.v5+json`` with the Vega it ships (no
    network, also in a saved notebook reopened later); Altair 6 writes Vega-Lite v6 specs,
    which the charts of this course use no v6-only feature of, so the spec is labelled v5.
    Viewers without a Vega renderer (nbviewer, GitHub, nbconvert) show the SVG, drawn by
    ``vl-convert`` from the same spec.

    Parameters
    ----------
    spec : mapping
        A Vega-Lite specification, e.g. ``chart.to_dict()``.
    svg : bool, default True
        Add the static SVG (``image/svg+xml``) when ``vl-convert`` is installed (the ``export``
        extra); without it the bundle holds the spec only, which JupyterLab draws.

    Returns
    -------
    dict
        ``{"application/vnd.vegalite.v5+json": spec, "image/svg+xml": svg, "text/plain": ...}``.

    Raises
    ------
    ValueError
        If ``spec`` is not a mapping, or ``vl-convert`` cannot draw it.

    See Also
    --------
    offline_html : the form used on the built site.
    recbias_tutorial.course.setup : enables the renderer built on this bundle.

    Examples
    --------
    >>> bundle = lab_bundle({"mark": "point", "data": {"values": [{"x": 1}]},
    ...                      "encoding": {"x": {"field": "x", "type": "quantitative"}}})
    >>> sorted(bundle), bundle[LAB_MIMETYPE]["$schema"].endswith("v5.json")
    (['application/vnd.vegalite.v5+json', 'image/svg+xml', 'text/plain'], True)
    """
    if not isinstance(spec, Mapping):
        raise ValueError(f"spec must be a mapping (a Vega-Lite spec), got {type(spec).__name__}")
    v5 = {**_localise_params(dict(spec)), "$schema": _V5_SCHEMA}
    bundle = {LAB_MIMETYPE: v5, "text/plain": "<Vega-Lite chart>"}
    if svg and available("vl_convert"):  # the `export` extra; JupyterLab draws the spec itself
        import vl_convert as vlc

        try:
            bundle["image/svg+xml"] = vlc.vegalite_to_svg(dict(spec))
        except Exception as exc:  # vl-convert reports invalid specs with its own types
            raise ValueError(f"vl-convert could not draw the chart: {exc}") from exc
    return bundle


def lab_renderer(spec: dict, **metadata) -> tuple[dict, dict]:
    """An Altair renderer: the MIME bundle of :func:`lab_bundle` (JupyterLab, offline).

    The output's metadata asks JupyterLab to draw the chart as SVG, like the site (its
    default is a canvas), so that the chart is sharp at any zoom and its legend entries are
    elements a test can click. The static SVG fallback is left out when the kernel serves a
    text notebook (``JPY_SESSION_NAME`` not ending in ``.ipynb``, e.g. a chapter ``.md``
    opened with jupytext), whose outputs are never saved.

    Parameters
    ----------
    spec : dict
        The Vega-Lite specification Altair passes to its renderers.
    **metadata
        Renderer options from Altair; ignored.

    Returns
    -------
    (bundle, metadata) : tuple of dict
        The bundle of :func:`lab_bundle` and ``{LAB_MIMETYPE: {"embed_options": ...}}``.

    Raises
    ------
    ValueError
        As :func:`lab_bundle`.

    See Also
    --------
    offline_renderer : the renderer of the built site.

    Examples
    --------
    >>> bundle, meta = lab_renderer({"mark": "point", "data": {"values": [{"x": 1}]}})
    >>> sorted(bundle), meta[LAB_MIMETYPE]["embed_options"]["renderer"]
    (['application/vnd.vegalite.v5+json', 'image/svg+xml', 'text/plain'], 'svg')
    """
    # The SVG is for viewers of saved outputs; a text notebook (a jupytext .md chapter, the
    # session name Jupyter's server gives the kernel) saves none, so it skips the 0.1-0.5 s
    # per chart that drawing it costs.
    session = os.environ.get("JPY_SESSION_NAME", "")
    svg = not session or session.endswith(".ipynb")
    return lab_bundle(spec, svg=svg), {LAB_MIMETYPE: {"embed_options": {"renderer": "svg"}}}


def long_tail(counts: Mapping[str, np.ndarray]) -> alt.Chart:
    """Long-tail curves: share of feedback covered by the most popular items.

    Parameters
    ----------
    counts : mapping of label -> 1-D array
        Per-item feedback counts of each set (e.g. from
        :func:`recbias_tutorial.propensity.item_counts`), in any order.

    Returns
    -------
    altair.Chart
        One line per label: cumulative share of feedback against the share of items.

    Raises
    ------
    ValueError
        If ``counts`` is empty.

    See Also
    --------
    recbias_tutorial.propensity.item_counts : per-item counts of a feedback frame.
    recbias_tutorial.plots.rating_distributions : the rating values of several sets.

    Examples
    --------
    >>> chart = long_tail({"MNAR": np.array([5, 3, 1, 1]), "MAR": np.array([3, 2, 3, 2])})
    >>> chart.to_dict()["mark"]["type"]
    'line'
    """
    frames = []
    for label, c in counts.items():
        c = np.sort(np.asarray(c, dtype=float))[::-1]
        frames.append(pd.DataFrame({
            "set": label,
            "item share": np.arange(1, len(c) + 1) / len(c),
            "feedback share": np.cumsum(c) / c.sum(),
        }))
    data = pd.concat(frames, ignore_index=True)
    sel = alt.selection_point(fields=["set"], bind="legend")
    return alt.Chart(data).mark_line().encode(
        x=alt.X("item share:Q", title="share of items (most popular first)",
                  axis=alt.Axis(format="%", tickCount=5)),
        y=alt.Y("feedback share:Q", title="share of feedback", axis=alt.Axis(format="%")),
        color=alt.Color("set:N", title=None),
        opacity=alt.condition(sel, alt.value(1.0), alt.value(0.15)),
        tooltip=["set:N", alt.Tooltip("item share:Q", format=".1%"),
                 alt.Tooltip("feedback share:Q", format=".1%")],
    ).add_params(sel).properties(width=360, height=260)


def rating_distributions(shares: pd.DataFrame) -> alt.Chart:
    """Grouped bars of rating-value shares.

    Parameters
    ----------
    shares : DataFrame with columns ``set``, ``rating`` and ``share``
        One row per set and rating value, e.g. stacked
        :func:`recbias_tutorial.stats.rating_distribution` results.

    Returns
    -------
    altair.Chart
        One column of bars per rating value, one bar per set.

    Raises
    ------
    ValueError
        When the chart is converted (``to_dict()`` or display), if ``shares`` has a column
        name that is not a string or a hierarchical index (Altair refuses such frames).

    See Also
    --------
    recbias_tutorial.stats.rating_distribution : the shares of one set.
    recbias_tutorial.stats.kl_divergence : one number for the distance of two sets.

    Examples
    --------
    >>> df = pd.DataFrame({"set": ["a", "a"], "rating": [1, 2], "share": [0.4, 0.6]})
    >>> rating_distributions(df).to_dict()["mark"]["type"]
    'bar'
    """
    return alt.Chart(shares).mark_bar().encode(
        x=alt.X("set:N", title=None, axis=alt.Axis(labels=False, ticks=False)),
        y=alt.Y("share:Q", axis=alt.Axis(format="%")),
        color=alt.Color("set:N", title=None),
        column=alt.Column("rating:O", title="rating"),
        tooltip=["set:N", "rating:O", alt.Tooltip("share:Q", format=".1%")],
    ).properties(width=50, height=200)


def interval_chart(frame: pd.DataFrame, *, x: str, y: str, lower: str, upper: str,
                   color: str | None = None, row: str | None = None) -> alt.Chart:
    """Point estimates with error bars (e.g. bootstrap 95% intervals).

    Parameters
    ----------
    frame : DataFrame
        One row per estimate.
    x : str
        Column of the point estimates (quantitative axis).
    y : str
        Column of the labels (one row of the chart per label).
    lower, upper : str
        Columns of the interval bounds.
    color : str, optional
        Column distinguishing several estimates per label (coloured, side by side).
    row : str, optional
        Column faceting the chart into rows.

    Returns
    -------
    altair.LayerChart or altair.FacetChart
        Rules from ``lower`` to ``upper`` and filled points at ``x`` (faceted with ``row``).

    Raises
    ------
    ValueError
        When the chart is converted (``to_dict()`` or display), if ``frame`` has a column
        name that is not a string or a hierarchical index (Altair refuses such frames).

    See Also
    --------
    recbias_tutorial.estimators.bootstrap_ci : an estimate and its interval.
    recbias_tutorial.stats.user_bootstrap : intervals of several estimators at once.

    Examples
    --------
    >>> df = pd.DataFrame({"model": ["a"], "v": [0.5], "lo": [0.4], "hi": [0.6]})
    >>> spec = interval_chart(df, x="v", y="model", lower="lo", upper="hi").to_dict()
    >>> spec["layer"][0]["mark"]["type"]
    'rule'
    """
    enc = {"y": alt.Y(f"{y}:N", title=None)}
    if color:
        enc["color"] = alt.Color(f"{color}:N")
        enc["yOffset"] = alt.YOffset(f"{color}:N")
    tooltip = [f"{y}:N", alt.Tooltip(f"{x}:Q", format=".4f"),
               alt.Tooltip(f"{lower}:Q", format=".4f"), alt.Tooltip(f"{upper}:Q", format=".4f")]
    if color:
        tooltip.insert(1, f"{color}:N")
    bars = alt.Chart(frame).mark_rule().encode(x=alt.X(f"{lower}:Q", title=x), x2=f"{upper}:Q", **enc)
    points = alt.Chart(frame).mark_point(filled=True).encode(x=f"{x}:Q", tooltip=tooltip, **enc)
    chart = alt.layer(bars, points)
    if row:
        chart = chart.facet(row=alt.Row(f"{row}:N", title=None))
    return chart


def sampling_distributions(draws: pd.DataFrame, truth: Mapping[str, float], *, value: str = "value",
                           estimator: str = "estimator", facet: str = "model",
                           width: int = 170, height: int = 240) -> alt.Chart:
    """Repeated estimates per estimator (strip + mean ± sd), one panel per facet, truth as a rule.

    Each panel has its own y scale. Clicking a legend entry highlights one estimator; the
    tooltips of the mean points give mean, sd, bias and RMSE against the truth.

    Parameters
    ----------
    draws : DataFrame
        One row per repetition, estimator and facet value, with columns ``facet``,
        ``estimator`` and ``value``.
    truth : mapping facet value -> true value
        Drawn as a dashed rule in its panel.
    value, estimator, facet : str, default "value", "estimator", "model"
        Names of the columns of ``draws`` holding the estimates, the estimator names and
        the facet values.
    width, height : int, default 170, 240
        Size of each panel in pixels.

    Returns
    -------
    altair.FacetChart
        One panel per facet value.

    Raises
    ------
    ValueError
        If ``draws`` lacks one of the three columns, or ``truth`` has no value for one of
        its facet values.

    See Also
    --------
    recbias_tutorial.data.sample_observed : fresh logs for repeated estimates.
    recbias_tutorial.plots.interval_chart : one estimate and interval per row instead.

    Examples
    --------
    >>> d = pd.DataFrame({"model": ["a"] * 4, "estimator": ["x", "x", "y", "y"],
    ...                   "value": [0.1, 0.2, 0.3, 0.5]})
    >>> spec = sampling_distributions(d, {"a": 0.2}).to_dict()
    >>> sorted(spec)[:3], len(spec["spec"]["layer"])
    (['$schema', 'config', 'data'], 4)
    """
    missing = [c for c in (facet, estimator, value) if c not in draws.columns]
    if missing:
        raise ValueError(f"draws is missing column(s) {missing}")
    unknown = set(draws[facet]) - set(truth)
    if unknown:
        raise ValueError(f"truth has no value for {sorted(map(str, unknown))}")
    pts = draws[[facet, estimator, value]].rename(columns={facet: "facet", estimator: "estimator",
                                                           value: "value"})
    pts["truth"] = pts["facet"].map(truth).astype(float)
    summ = pts.groupby(["facet", "estimator"], sort=False).agg(
        mean=("value", "mean"), sd=("value", "std"), truth=("truth", "first")).reset_index()
    summ["bias"] = summ["mean"] - summ["truth"]
    summ["rmse"] = np.sqrt(summ["bias"] ** 2 + summ["sd"].fillna(0.0) ** 2)
    summ["low"], summ["high"] = summ["mean"] - summ["sd"], summ["mean"] + summ["sd"]
    data = pd.concat([pts.assign(kind="draw"), summ.assign(kind="summary")], ignore_index=True)
    sel = alt.selection_point(fields=["estimator"], bind="legend")
    base = alt.Chart().encode(x=alt.X("estimator:N", title=None, sort=None),
                              color=alt.Color("estimator:N", sort=None, title="estimator"),
                              opacity=alt.condition(sel, alt.value(1.0), alt.value(0.15)))
    strip = base.transform_filter("datum.kind == 'draw'").mark_tick(size=10, opacity=0.35).encode(
        y=alt.Y("value:Q", title="estimate", scale=alt.Scale(zero=False)),
        tooltip=["estimator:N", alt.Tooltip("value:Q", format=".4f")],
        opacity=alt.condition(sel, alt.value(0.35), alt.value(0.05)))
    bars = base.transform_filter("datum.kind == 'summary'").mark_rule(strokeWidth=3).encode(
        y="low:Q", y2="high:Q")
    tips = ["estimator:N"] + [alt.Tooltip(f"{c}:Q", format=".4f")
                              for c in ("mean", "sd", "truth", "bias", "rmse")]
    means = base.transform_filter("datum.kind == 'summary'").mark_point(
        filled=True, size=70, stroke="black", strokeWidth=0.5).encode(y="mean:Q", tooltip=tips)
    rule = alt.Chart().transform_filter("datum.kind == 'summary'").mark_rule(
        strokeDash=[6, 3], color="black").encode(y="mean(truth):Q",
                                                 tooltip=[alt.Tooltip("mean(truth):Q", format=".4f",
                                                                      title="truth")])
    return alt.layer(strip, bars, means, rule, data=data).add_params(sel).properties(
        width=width, height=height).facet(column=alt.Column("facet:N", title=None)).resolve_scale(
        y="independent")


# --- chapter 2 (IPS and SNIPS): estimates as the popularity exponent γ moves -------------------

def estimate_slider(frame: pd.DataFrame, *, param: str, value: str, y: str,
                    references: tuple[str, ...] | list[str] = (), label: str = "estimate",
                    param_title: str | None = None, value_title: str | None = None,
                    start: float | None = None, width: int = 420,
                    height: int | None = None) -> alt.LayerChart:
    """Estimates per row at one value of a parameter, chosen with a slider, beside references.

    The parameter's grid is computed beforehand (one row of ``frame`` per label and grid
    value); the slider filters it in the browser, so the chart needs no kernel (a static
    site, JupyterLab). The first reference (e.g. the truth) is joined to the estimate by a
    rule: its length is the estimate's error at the chosen value.

    Parameters
    ----------
    frame : DataFrame
        One row per (``y``, ``param``) with the estimate in ``value`` and each reference in its
        own column (constant over ``param`` for a given ``y``).
    param : str
        Column of the parameter (an evenly spaced grid, at least two values).
    value : str
        Column of the estimates at each parameter value.
    y : str
        Column of the row labels (e.g. the model).
    references : sequence of str, optional
        Columns drawn as fixed points (e.g. ``("MAR truth", "AOA")``); rows are sorted by the
        first one, largest on top.
    label : str, default "estimate"
        Legend name of the moving estimate.
    param_title, value_title : str, optional
        Slider label and x-axis title (default: the column names).
    start : float, optional
        The slider's initial value (default: the grid's smallest value).
    width, height : int, optional
        Size in pixels (default height: 28 per row label).

    Returns
    -------
    altair.LayerChart
        Points of the references and of the estimate at the slider's value, and a rule from
        the estimate to the first reference.

    Raises
    ------
    ValueError
        If ``frame`` is not a non-empty DataFrame, a named column is missing, a number
        column holds text, NaN or an infinity (no valid JSON spec), a row has two points at
        one grid value, the grid has fewer than two values or is not evenly spaced,
        ``start`` is not on the grid, or a reference varies with the parameter.

    See Also
    --------
    recbias_tutorial.estimators.snips : the estimates this chart usually shows.

    Examples
    --------
    >>> df = pd.DataFrame({"model": ["a", "a", "b", "b"], "gamma": [1.0, 2.0] * 2,
    ...                    "snips": [0.3, 0.2, 0.5, 0.4], "truth": [0.2, 0.2, 0.45, 0.45]})
    >>> spec = estimate_slider(df, param="gamma", value="snips", y="model",
    ...                        references=["truth"]).to_dict()
    >>> [p["bind"]["input"] for p in spec["params"]], len(spec["layer"])
    (['range'], 2)
    """
    references = list(references)
    frame = checked_frame(frame, "frame", numbers=(param, value, *references), texts=(y,),
                          key=(y, param))  # one point per row and grid value
    slider, on_grid = _grid_slider(frame[param].to_numpy(), param, start=start,
                                   title=param_title)
    for ref in references:
        if (frame.groupby(y)[ref].nunique(dropna=False) > 1).any():
            raise ValueError(f"reference {ref!r} must not vary with {param!r}")
    # plain internal field names: Vega-Lite reads "." and "[" in a field name as a path
    wide = pd.DataFrame({"row": frame[y].astype(str).to_numpy(),
                         "param": frame[param].to_numpy(dtype=float),
                         "estimate": frame[value].to_numpy(dtype=float),
                         **{f"ref{i}": frame[r].to_numpy(dtype=float)
                            for i, r in enumerate(references)}})
    names = {"estimate": label, **{f"ref{i}": r for i, r in enumerate(references)}}
    long = wide.melt(id_vars=["row", "param"], value_vars=list(names), var_name="series",
                     value_name="x")
    long["series"] = long["series"].map(names)
    order = (wide.groupby("row", sort=False)["ref0"].first().sort_values(ascending=False)
             .index.tolist() if references else wide["row"].drop_duplicates().tolist())
    lo, hi = float(long["x"].min()), float(long["x"].max())
    pad = 0.05 * (hi - lo) if hi > lo else 0.05
    scale = alt.Scale(domain=[lo - pad, hi + pad])
    x_title = value_title or value
    y_enc = alt.Y("row:N", title=None, sort=order)
    points = _grid_points(long, on_grid, x=alt.X("x:Q", title=x_title, scale=scale), y=y_enc,
                          order=[label, *references], size=90,
                          titles=(y, "series", param_title or param, x_title))
    layers = [points]
    if references:
        rule = alt.Chart(wide).transform_filter(on_grid).mark_rule(
            color="gray", strokeWidth=2).encode(
            x=alt.X("estimate:Q", title=x_title, scale=scale), x2="ref0:Q", y=y_enc)
        layers.insert(0, rule)
    height = 28 * len(order) if height is None else height
    return alt.layer(*layers).add_params(slider).properties(width=width, height=height)

# --- chapters 1 and 6 (missing data; which evaluation to trust): precomputed grids -----------

def _grid_step(values: np.ndarray, name: str) -> float:
    """The step of an evenly spaced grid of at least two values (ValueError otherwise)."""
    grid = np.unique(values.astype(float))
    if grid.size < 2:
        raise ValueError(f"the grid of {name!r} needs at least two values, got {grid.tolist()}")
    steps = np.diff(grid)
    if not np.allclose(steps, steps[0], rtol=1e-6, atol=1e-9):
        raise ValueError(f"the grid of {name!r} must be evenly spaced, got {grid.tolist()}")
    return float(steps[0])


def _grid_slider(values: np.ndarray, name: str, *, start: float | None,
                 title: str | None) -> tuple[alt.Parameter, str]:
    """A range slider over an evenly spaced grid (starting at ``start``, default its smallest
    value) and the filter expression that keeps a row's ``param`` at the slider's value."""
    step = _grid_step(values, name)
    grid = np.unique(values.astype(float))
    start = float(grid[0]) if start is None else float(start)
    if not np.isclose(grid, start).any():
        raise ValueError(f"start must be a value of the grid of {name!r}, got {start}")
    key = "slider_" + "".join(ch if ch.isascii() and ch.isalnum() else "_" for ch in name)
    slider = alt.param(name=key, value=start, bind=alt.binding_range(
        min=float(grid[0]), max=float(grid[-1]), step=step, name=f"{title or name} "))
    return slider, f"abs(datum.param - {key}) < {step / 2}"


def _grid_points(data: pd.DataFrame, on_grid: str, *, x: alt.X, y: alt.Y, order: list,
                 size: int, titles: tuple[str, str, str, str]) -> alt.Chart:
    """The dots of every series at the slider's value (columns row, series, param, x)."""
    row, series, param, value = titles
    return alt.Chart(data).transform_filter(on_grid).mark_point(
        filled=True, size=size, opacity=0.9).encode(
        x=x, y=y,
        # one legend for both channels: the same field, title and domain (a sort would split it)
        color=alt.Color("series:N", title=None, scale=alt.Scale(domain=order)),
        shape=alt.Shape("series:N", title=None, scale=alt.Scale(domain=order)),
        tooltip=[alt.Tooltip("row:N", title=row), alt.Tooltip("series:N", title=series),
                 alt.Tooltip("param:Q", format=".2f", title=param),
                 alt.Tooltip("x:Q", format=".4f", title=value)])


def slider_dots(frame: pd.DataFrame, *, param: str, x: str, y: str, series: str,
                param_title: str | None = None, x_title: str | None = None,
                start: float | None = None, width: int = 420,
                height: int | None = None) -> alt.LayerChart:
    """Dots per row and series at one value of a parameter chosen with a slider.

    The parameter's grid is computed beforehand (one row of ``frame`` per row label, series
    and grid value); the slider filters it in the browser, so the chart needs no kernel (the
    static site, JupyterLab). A grey rule joins the dots of each row: its length is the gap
    between the series (e.g. an estimate and the truth) at the chosen value.

    Parameters
    ----------
    frame : DataFrame
        Long form: one row per (``y``, ``series``, ``param``) with the value in ``x``.
    param : str
        Column of the parameter (an evenly spaced grid of at least two values).
    x : str
        Column of the values drawn (quantitative axis, fixed over the whole grid).
    y : str
        Column of the row labels (e.g. the recommender).
    series : str
        Column of the series (colour and shape, e.g. "AOA on the log" and "truth").
    param_title, x_title : str, optional
        Slider label and x-axis title (default: the column names).
    start : float, optional
        The slider's initial value (default: the grid's smallest value).
    width, height : int, optional
        Size in pixels (default height: 40 per row label).

    Returns
    -------
    altair.LayerChart
        A rule per row and the dots of every series at the slider's value.

    Raises
    ------
    ValueError
        If ``frame`` is not a non-empty DataFrame, a named column is missing, ``param`` or
        ``x`` holds text, NaN or an infinity, a row and series has two points at one grid
        value, the grid has fewer than two values or is not evenly spaced, or ``start`` is
        not on the grid.

    See Also
    --------
    knob_lines : values along a grid as lines, one knob at a time.

    Examples
    --------
    >>> df = pd.DataFrame({"model": ["a"] * 4, "kind": ["AOA", "truth"] * 2,
    ...                    "beta": [0.0, 0.0, 1.0, 1.0], "recall": [0.1, 0.1, 0.3, 0.1]})
    >>> spec = slider_dots(df, param="beta", x="recall", y="model", series="kind").to_dict()
    >>> [p["bind"]["input"] for p in spec["params"]], len(spec["layer"])
    (['range'], 2)
    """
    frame = checked_frame(frame, "frame", numbers=(param, x), texts=(y, series),
                          key=(y, series, param))
    slider, on_grid = _grid_slider(frame[param].to_numpy(), param, start=start,
                                   title=param_title)
    # plain field names: Vega-Lite reads "." and "[" in a field name as a path
    dots = pd.DataFrame({"row": frame[y].astype(str).to_numpy(),
                         "series": frame[series].astype(str).to_numpy(),
                         "param": frame[param].to_numpy(dtype=float),
                         "x": frame[x].to_numpy(dtype=float)})
    gaps = dots.groupby(["row", "param"], sort=False)["x"].agg(["min", "max"]).reset_index()
    lo, hi = float(dots["x"].min()), float(dots["x"].max())
    pad = 0.05 * (hi - lo) if hi > lo else 0.05
    scale = alt.Scale(domain=[lo - pad, hi + pad])
    x_title = x_title or x
    y_enc = alt.Y("row:N", title=None, sort=dots["row"].drop_duplicates().tolist())
    rule = alt.Chart(gaps).transform_filter(on_grid).mark_rule(color="gray", strokeWidth=2).encode(
        x=alt.X("min:Q", title=x_title, scale=scale), x2="max:Q", y=y_enc)
    points = _grid_points(dots, on_grid, x=alt.X("x:Q", title=x_title, scale=scale), y=y_enc,
                          order=dots["series"].drop_duplicates().tolist(), size=110,
                          titles=(y, series, param_title or param, x_title))
    height = 40 * gaps["row"].nunique() if height is None else height
    return alt.layer(rule, points).add_params(slider).properties(width=width, height=height)


#: Point shapes of :func:`knob_lines`, one per line, so that lines that coincide stay apart.
_KNOB_SHAPES = ["circle", "square", "triangle-up", "diamond", "cross", "triangle-down",
                "triangle-right", "triangle-left", "wedge", "arrow"]
#: The ``on_top`` line's shape: a ring (an SVG path in Vega's unit square), so that the point
#: under it shows through its hole, in the chart and in the legend alike.
_RING = ("M0,-1A1,1,0,1,1,0,1A1,1,0,1,1,0,-1Z"
         "M0,-0.6A0.6,0.6,0,1,0,0,0.6A0.6,0.6,0,1,0,0,-0.6Z")


def knob_lines(frame: pd.DataFrame, *, knob: str, value: str, y: str, line: str,
               knob_title: str = "knob", y_title: str | None = None, start: str | None = None,
               order: list[str] | None = None, on_top: str | None = None, width: int = 420,
               height: int = 280) -> alt.LayerChart:
    """One line per method along a knob's grid; radio buttons choose the knob, the legend a line.

    Each knob's grid is computed beforehand (one row of ``frame`` per knob, knob value and
    line); the buttons filter it in the browser, so the chart needs no kernel. The x axis is
    titled with the chosen knob's name (a text mark that follows the buttons: a Vega-Lite axis
    title cannot change with a parameter), so name the knobs by their quantity. Each line has
    its own colour and point shape; ``on_top`` is drawn last, dashed, with rings for points, so
    that it stays visible where another line runs on it, and the line and points under it show
    through its dashes and rings. Clicking a legend entry highlights its line.

    Parameters
    ----------
    frame : DataFrame
        Long form: one row per (``knob``, ``value``, ``line``) with the measure in ``y``.
    knob : str
        Column of the knob names (one radio button each, and the x axis's title when chosen,
        e.g. "popularity bias β_p").
    value : str
        Column of the knob's values (the x axis; each knob keeps its own scale).
    y : str
        Column of the measure (e.g. the RMSE).
    line : str
        Column of the line labels (e.g. the evaluation method).
    knob_title, y_title : str, optional
        Label of the buttons and the y axis's title (default: the column name).
    start : str, optional
        The knob shown first (default: the first in ``frame``).
    order : list of str, optional
        Order of the lines in the legend, their colours and shapes (default: their order in
        ``frame``); labels absent from ``frame`` are left out.
    on_top : str, optional
        The line drawn over the others, dashed and with rings for points (default: none).
    width, height : int, default 420, 280
        Size in pixels.

    Returns
    -------
    altair.LayerChart
        Lines and points filtered by the chosen knob (``on_top``'s in their own layers, drawn
        last), then the x axis's title.

    Raises
    ------
    ValueError
        If ``frame`` is not a non-empty DataFrame, a named column is missing, ``value`` or
        ``y`` holds text, NaN or an infinity, a knob and line has two points at one value,
        ``start`` is not a knob of ``frame``, a knob has fewer than two values, ``order``
        leaves out a line of ``frame``, or ``on_top`` is not a line of ``frame``.

    See Also
    --------
    slider_dots : the values at one grid point, chosen with a slider.

    Examples
    --------
    >>> df = pd.DataFrame({"knob": ["p"] * 4 + ["r"] * 4, "v": [0, 1] * 4,
    ...                    "method": ["a", "a", "b", "b"] * 2, "rmse": [.1, .2, .1, .1] * 2})
    >>> spec = knob_lines(df, knob="knob", value="v", y="rmse", line="method",
    ...                   on_top="a").to_dict()
    >>> sorted(p["bind"] if p["bind"] == "legend" else p["bind"]["input"] for p in spec["params"])
    ['legend', 'radio']
    >>> spec["layer"][-1]["mark"]["text"]  # the x axis's title: the chosen knob
    {'expr': 'knob_knob'}
    """
    frame = checked_frame(frame, "frame", numbers=(value, y), texts=(knob, line),
                          key=(knob, line, value))
    knobs = frame[knob].astype(str).drop_duplicates().tolist()
    start = knobs[0] if start is None else start
    if start not in knobs:
        raise ValueError(f"start must be one of the knobs {knobs}, got {start!r}")
    few = [k for k, n in frame.groupby(knob)[value].nunique().items() if n < 2]
    if few:
        raise ValueError(f"knob(s) {few} need at least two values each")
    data = pd.DataFrame({"knob": frame[knob].astype(str).to_numpy(),
                         "value": frame[value].to_numpy(dtype=float),
                         "y": frame[y].to_numpy(dtype=float),
                         "line": frame[line].astype(str).to_numpy()})
    present = data["line"].drop_duplicates().tolist()
    if order is not None:
        missing = [name for name in present if name not in order]
        if missing:
            raise ValueError(f"order must list every line of frame; it leaves out {missing}")
    order = [name for name in (order or present) if name in present]
    if on_top is not None and on_top not in present:
        raise ValueError(f"on_top must be one of the lines {present}, got {on_top!r}")
    name = "knob_" + "".join(ch if ch.isascii() and ch.isalnum() else "_" for ch in knob)
    choice = alt.param(name=name, value=start, bind=alt.binding_radio(options=knobs,
                                                                      name=f"{knob_title} "))
    pick = alt.selection_point(fields=["line"], bind="legend")
    y_title = y_title or y
    # one legend for colour and shape: the same field, no title, the same domain (no sort)
    color = alt.Color("line:N", title=None, scale=alt.Scale(domain=order))
    shapes = iter(_KNOB_SHAPES * (1 + len(order) // len(_KNOB_SHAPES)))
    shape = alt.Shape("line:N", title=None, scale=alt.Scale(
        domain=order, range=[_RING if n == on_top else next(shapes) for n in order]))
    encoding = dict(
        # the axis title is the text layer below: it follows the buttons
        x=alt.X("value:Q", title=None), y=alt.Y("y:Q", title=y_title), color=color,
        opacity=alt.condition(pick, alt.value(1.0), alt.value(0.12)),
        tooltip=[alt.Tooltip("knob:N", title=knob_title), alt.Tooltip("value:Q", title="value"),
                 alt.Tooltip("line:N", title=line), alt.Tooltip("y:Q", format=".4f", title=y_title)])
    base = alt.Chart(data).transform_filter(f"datum.knob == {name}")
    rest = base if on_top is None else base.transform_filter(
        alt.FieldOneOfPredicate(field="line", oneOf=[n for n in order if n != on_top]))
    layers = [rest.mark_line(strokeWidth=2).encode(**encoding).add_params(pick),
              rest.mark_point(filled=True, size=45).encode(shape=shape, **encoding)]
    if on_top is not None:
        top = base.transform_filter(alt.FieldEqualPredicate(field="line", equal=on_top))
        layers += [top.mark_line(strokeWidth=2.5, strokeDash=[7, 4]).encode(**encoding),
                   top.mark_point(filled=True, size=150).encode(shape=shape, **encoding)]
    # the x axis's title: the chosen knob's name, centred where Vega puts an axis title
    title = alt.Chart(pd.DataFrame({"title": [0]})).mark_text(
        text=alt.expr(name), x=alt.expr("width / 2"), y=alt.expr("height + 27"),
        align="center", baseline="top", fontSize=11, fontWeight="bold", aria=False)
    layers.append(title)
    return alt.layer(*layers).add_params(choice).properties(width=width, height=height)


# --- chapter 3 (intervened test sets): each test set against the truth as ρp moves ------------

#: The test sets' colours: FULL grey (the log), REG orange, the three weighted sets apart.
_SET_COLOURS = {"FULL": "#7f7f7f", "REG": "#f58518", "SKEW": "#e45756", "WTD": "#4c78a8",
                "WTD_H": "#b279a2"}
_OTHER_COLOURS = ["#54a24b", "#eeca3b", "#9d755d", "#72b7b2", "#ff9da6"]

def rho_slider(values: pd.DataFrame, summary: pd.DataFrame, *, value_title: str,
               summary_title: str, truth_label: str = "truth",
               sets: tuple[str, ...] | list[str] = ("FULL", "REG", "SKEW", "WTD", "WTD_H"),
               start: float | None = None, width: int = 240,
               summary_width: int = 180) -> alt.HConcatChart:
    """Each model's metric on each test set at the sampling share ρp chosen with a slider.

    Two panels share one slider over ρp, whose grid is computed beforehand (the slider
    filters the rows in the browser, so the chart needs no kernel). Left: per model, a black
    tick at the truth and one point per test set at the chosen ρp. Right: one line per test
    set over the whole grid of a summary (e.g. Kendall's τ against the truth, or the mean
    error), with a vertical rule at the chosen ρp. A test set given at a single ρp (FULL, the
    whole held-out set) is drawn at every position of the slider, and as a dashed level
    on the right.

    Parameters
    ----------
    values : DataFrame
        Columns ``model``, ``test_set``, ``rho``, ``value`` (the metric on that test set) and
        ``truth`` (the model's true metric, one value per model).
    summary : DataFrame
        Columns ``test_set``, ``rho`` and ``value``: one number per test set and ρp.
    value_title, summary_title : str
        Titles of the left and the right x/y axes.
    truth_label : str, default "truth"
        What the black ticks are called in the tooltip.
    sets : sequence of str
        The test sets, in legend order (their colours follow it).
    start : float, optional
        The slider's initial value (default: the grid's smallest value).
    width, summary_width : int
        Widths of the two panels in pixels (the defaults fit a book's text column, legend
        included).

    Returns
    -------
    altair.HConcatChart
        The two panels and the slider (a top-level parameter named ``rho_p``).

    Raises
    ------
    ValueError
        If ``values`` or ``summary`` is not a non-empty DataFrame, a column is missing, a
        number column holds text, NaN or an infinity, a point appears twice (a model and
        test set at one ρp; a test set at one ρp), a test set is not in ``sets``, the grid
        of the test sets drawn at several ρp has fewer than two values or is not evenly
        spaced, ``start`` is not on it, or a model has more than one truth.

    See Also
    --------
    recbias_tutorial.sampling.intervene : draws the test sets.
    recbias_tutorial.comparison.compare_methods : metrics on such test sets against the truth.

    Examples
    --------
    >>> values = pd.DataFrame({"model": ["a"] * 5, "test_set": ["FULL", "SKEW", "SKEW", "SKEW", "SKEW"],
    ...                        "rho": [1.0, 0.25, 0.5, 0.75, 1.0], "value": [0.3, 0.1, 0.15, 0.2, 0.3],
    ...                        "truth": 0.12})
    >>> summary = values.groupby(["test_set", "rho"], as_index=False)["value"].mean()
    >>> spec = rho_slider(values, summary, value_title="Recall@10", summary_title="mean").to_dict()
    >>> [p["bind"]["input"] for p in spec["params"]], len(spec["hconcat"])
    (['range'], 2)
    """
    values = checked_frame(values, "values", numbers=("rho", "value", "truth"),
                           texts=("model", "test_set"), key=("model", "test_set", "rho"))
    summary = checked_frame(summary, "summary", numbers=("rho", "value"), texts=("test_set",),
                            key=("test_set", "rho"))
    for name, frame in (("values", values), ("summary", summary)):
        unknown = set(frame["test_set"]) - set(sets)
        if unknown:
            raise ValueError(f"{name} has test sets {sorted(unknown)} that are not in sets {list(sets)}")
    if (values.groupby("model")["truth"].nunique() > 1).any():
        raise ValueError("values must hold one truth per model")
    sizes = values.groupby("test_set")["rho"].nunique()
    moving = list(sizes.index[sizes > 1])
    grid = np.unique(values.loc[values["test_set"].isin(moving), "rho"].to_numpy(dtype=float))
    if grid.size < 2:
        raise ValueError(f"the grid of rho needs at least two values, got {grid.tolist()}")
    steps = np.diff(grid)
    if not np.allclose(steps, steps[0], rtol=1e-6, atol=1e-9):
        raise ValueError(f"the grid of rho must be evenly spaced, got {grid.tolist()}")
    start = float(grid[0]) if start is None else float(start)
    if not np.isclose(grid, start).any():
        raise ValueError(f"start must be a value of the grid of rho, got {start}")
    step = float(steps[0])
    slider = alt.param(name="rho_p", value=start, bind=alt.binding_range(
        min=float(grid[0]), max=float(grid[-1]), step=step, name="ρp (sampling share) "))
    # a test set given at one size only (FULL) is shown at every position of the slider
    fixed = values[~values["test_set"].isin(moving)]
    shown = pd.concat([values[values["test_set"].isin(moving)]]
                      + [fixed.assign(rho=r) for r in grid], ignore_index=True)
    shown = shown[["model", "test_set", "rho", "value", "truth"]].astype(
        {"model": str, "test_set": str, "rho": float, "value": float, "truth": float})
    on_grid = f"abs(datum.rho - rho_p) < {step / 2}"
    palette = [_SET_COLOURS.get(s, _OTHER_COLOURS[i % len(_OTHER_COLOURS)]) for i, s in enumerate(sets)]
    colour = alt.Color("test_set:N", title="test set", sort=list(sets),
                       scale=alt.Scale(domain=list(sets), range=palette))
    order = (values.groupby("model")["truth"].first().sort_values(ascending=False).index
             .astype(str).tolist())
    y = alt.Y("model:N", title=None, sort=order)
    lo = float(min(shown["value"].min(), shown["truth"].min()))
    hi = float(max(shown["value"].max(), shown["truth"].max()))
    pad = 0.05 * (hi - lo) if hi > lo else 0.05
    x = alt.X("value:Q", title=value_title, scale=alt.Scale(domain=[lo - pad, hi + pad]))
    truth = alt.Chart(values.groupby("model", as_index=False)["truth"].first().astype(
        {"model": str})).mark_tick(color="black", thickness=3, size=22).encode(
        x=alt.X("truth:Q", scale=alt.Scale(domain=[lo - pad, hi + pad]), title=value_title), y=y,
        tooltip=[alt.Tooltip("model:N"), alt.Tooltip("truth:Q", format=".4f", title=truth_label)])
    points = alt.Chart(shown).transform_filter(on_grid).mark_point(
        filled=True, size=80, opacity=0.85).encode(
        x=x, y=y, color=colour, shape=alt.Shape("test_set:N", sort=list(sets), title="test set",
                                                scale=alt.Scale(domain=list(sets))),
        tooltip=["model:N", "test_set:N", alt.Tooltip("rho:Q", format=".1f", title="ρp"),
                 alt.Tooltip("value:Q", format=".4f", title=value_title),
                 alt.Tooltip("truth:Q", format=".4f", title=truth_label)])
    left = alt.layer(truth, points).properties(width=width, height=max(120, 30 * len(order)))
    summ = summary[["test_set", "rho", "value"]].astype({"test_set": str, "rho": float, "value": float})
    per_size = summ.groupby("test_set")["rho"].nunique()
    lines = alt.Chart(summ[summ["test_set"].isin(per_size.index[per_size > 1])]).mark_line(
        point=True).encode(
        x=alt.X("rho:Q", title="ρp (sampling share)", scale=alt.Scale(domain=[0, 1])),
        y=alt.Y("value:Q", title=summary_title), color=colour,
        tooltip=["test_set:N", alt.Tooltip("rho:Q", format=".1f", title="ρp"),
                 alt.Tooltip("value:Q", format=".3f", title=summary_title)])
    level = alt.Chart(summ[summ["test_set"].isin(per_size.index[per_size == 1])]).mark_rule(
        strokeDash=[5, 4], color="black").encode(
        y="value:Q", tooltip=["test_set:N", alt.Tooltip("value:Q", format=".3f", title=summary_title)])
    now = alt.Chart(pd.DataFrame({"at": [0.0]})).transform_calculate(at="rho_p").mark_rule(
        color="gray").encode(x="at:Q")
    right = alt.layer(lines, level, now).properties(width=summary_width, height=max(120, 30 * len(order)))
    return alt.hconcat(left, right).add_params(slider)
