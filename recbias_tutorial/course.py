"""Page plumbing for the chapters only: chart renderer, warnings, glued values, notices.

Nothing here computes a result. A chapter starts with one call::

    import recbias_tutorial as rb
    from recbias_tutorial import course
    course.setup()

and then uses :func:`glue_values` (or :func:`glue`) to publish the numbers its prose quotes,
:func:`table` to format the tables it shows, and :func:`standin_notice` to show, as a warning
box, that a page runs on a simulated stand-in.

Prose quotes a published value with an inline expression, ``{eval}`ch1_gap``` or
``{eval}`f"{ch1_gap:.3f}"```: on the built site the book's ``eval_glue`` extension resolves
it from the glued values (execution stays cached); in JupyterLab ``jupyterlab-myst``
evaluates it in the kernel, where the published names are variables.
"""

from __future__ import annotations

import html
import importlib.util
import os
import warnings
from collections.abc import Mapping
from typing import Any

import numpy as np

from ._findings import (FindingFailed, _non_finite, _plain, check_finding, confirm_takeaway,
                        state_takeaways, unconfirmed_takeaways)
from ._params import Interval, declare
from ._public_checks import public_checks
from ._validation import check_identifier
from .data import FeedbackData, StandinWarning

__all__ = ["LAB_RENDERER", "RENDERER", "FindingFailed", "all_takeaways_confirmed", "confirm",
           "finding", "glue", "glue_values", "public_checks", "setup", "standin_notice",
           "stored_results", "table", "takeaways"]

#: Name under which :func:`setup` registers the renderer of the built site.
RENDERER = "recbias_offline"
#: Name under which :func:`setup` registers the renderer for JupyterLab and other front ends.
LAB_RENDERER = "recbias_lab"


def setup() -> str:
    """Prepare a chapter's kernel: chart renderer and warning filters. Returns the renderer.

    * Charts: ``RECBIAS_CHARTS=offline`` (set by the book build, whose pages carry the Vega
      bundle) selects a renderer writing plain HTML that calls the page's own
      ``vegaEmbed`` (:func:`recbias_tutorial.plots.offline_html`); elsewhere (JupyterLab,
      a notebook run by a student) a renderer writing Vega-Lite v5, which JupyterLab draws
      with the Vega it ships, plus a static SVG (:func:`recbias_tutorial.plots.lab_bundle`):
      no chart needs the network.
    * Warnings: tqdm's notice that ipywidgets is missing (Cornac imports ``tqdm.auto``; the
      chapters switch progress bars off) is silenced, and so is
      :class:`~recbias_tutorial.data.StandinWarning`, which :func:`standin_notice` shows as
      a warning box instead of a second, plain-text copy.

    Returns
    -------
    str
        The name of the enabled Altair renderer.

    Raises
    ------
    ImportError
        If Altair is not installed (it is a dependency of the package).

    See Also
    --------
    recbias_tutorial.plots.offline_html : the chart HTML of the built site.
    recbias_tutorial.plots.lab_bundle : the chart bundle for JupyterLab.

    Examples
    --------
    >>> setup() in (LAB_RENDERER, RENDERER)
    True
    """
    import altair as alt

    from .plots import lab_renderer, offline_renderer

    if importlib.util.find_spec("tqdm") is not None:  # tqdm comes with the `models` extra
        from tqdm import TqdmWarning

        warnings.filterwarnings("ignore", category=TqdmWarning)
    warnings.filterwarnings("ignore", category=StandinWarning)
    for name, renderer in ((RENDERER, offline_renderer), (LAB_RENDERER, lab_renderer)):
        if name not in alt.renderers.names():
            alt.renderers.register(name, renderer)
    name = RENDERER if _building_site() else LAB_RENDERER
    alt.renderers.enable(name)
    return name


def glue_values(prefix: str, values: Mapping[str, Any]) -> None:
    """Publish every value under ``f"{prefix}_{key}"`` without displaying anything.

    Each value is glued (the built site reads it from the executed notebook) and set as a
    variable of that name in the kernel (JupyterLab's ``{eval}`` expressions read it there).
    Returns None, so that a call ending a cell adds no output to the page.

    Parameters
    ----------
    prefix : str
        Key prefix, e.g. ``"ch2"``.
    values : mapping str -> value
        Numbers (numpy scalars become Python ints and floats) or strings.

    Returns
    -------
    None
        The values are published (inside a kernel) under ``f"{prefix}_{key}"``.

    Raises
    ------
    ValueError
        If ``prefix`` is empty or ``values`` is not a mapping with string keys that make
        Python identifiers.

    See Also
    --------
    glue : publish one value under a full name.

    Examples
    --------
    >>> glue_values("ch0", {"n": np.int64(3)})  # outside a notebook: nothing to glue into
    >>> _plain(np.int64(3)), type(_plain(np.float32(0.5)))
    (3, <class 'float'>)
    """
    if not isinstance(prefix, str) or not prefix:
        raise ValueError(f"prefix must be a non-empty string, got {prefix!r}")
    if not isinstance(values, Mapping) or not all(isinstance(k, str) for k in values):
        raise ValueError("values must be a mapping with string keys")
    for key, value in values.items():
        glue(f"{prefix}_{key}", value)


def glue(name: str, value: Any, display: bool = False) -> None:
    """Publish one value under ``name``: glued for the site, a kernel variable for JupyterLab.

    A drop-in for ``myst_nb.glue(name, value, display=False)``.

    Parameters
    ----------
    name : str
        A Python identifier, e.g. ``"ch2_gap"``; prose quotes it as ``{eval}`ch2_gap```.
    value : number or str
        A finite number (numpy scalars become Python ints and floats), a bool or a string:
        what the prose quotes.
    display : bool
        Must be False (published values never show where they are computed).

    Returns
    -------
    None

    Raises
    ------
    ValueError
        If ``name`` is not an identifier (or is a Python keyword), ``value`` is not a finite
        number, a bool or a string (NaN, an array, a frame), or ``display`` is true.

    See Also
    --------
    glue_values : publish several values under one prefix.

    Examples
    --------
    >>> glue("ch0_n", np.int64(3))  # outside a notebook: nothing to publish into
    """
    check_identifier(name, "name")
    if display:
        raise ValueError("display must be False: published values are quoted by the prose")
    value = _plain(value)
    # a NaN or an array would reach the prose as "nan" or as a repr: never a silent number
    if not isinstance(value, (str, bool, int, float)):
        raise ValueError(f"value of {name!r} must be a number or a string, got "
                         f"{type(value).__name__}")
    if _non_finite(value) is not None:
        raise ValueError(f"value of {name!r} must be finite, got {value}")
    shell = _kernel()
    if shell is not None:
        if _building_site() or importlib.util.find_spec("myst_nb") is not None:
            from myst_nb import glue as myst_glue  # the site's {eval} reads the glued value

            myst_glue(name, value, display=False)
        # else: a notebook where only the package is installed (a hub, Colab): the kernel
        # variable below is what JupyterLab's {eval} reads
        shell.user_ns[name] = value


def finding(name: str, text: str, *, holds: str, **numbers: Any) -> str:
    """State a finding: check it against its numbers, then publish its words and numbers.

    The page quotes the words with ``{eval}`name``` inside prose written around them, so
    only the verdict words and the numbers come from the check. A finding whose condition
    is false raises :class:`FindingFailed`, which fails the book build, naming the finding,
    its condition and its numbers: a run that changes the evidence cannot leave a sentence
    behind that no longer holds.

    Parameters
    ----------
    name : str
        A Python identifier, e.g. ``"ch2_f_snips_worse"``. The words are published under
        it and each number under ``f"{name}_{key}"`` (as :func:`glue` does).
    text : str
        The words shown, a format string over the numbers, e.g.
        ``"raises the MAE for {n_worse} of the four models"``.
    holds : str
        The condition that makes the finding true: a Python expression over the numbers
        (comparisons, arithmetic, ``abs``, ``min``, ``max``, ``all``, ``any``, ``len``,
        ``sum``, ``round``, ``set``, ``sorted``), e.g. ``"n_worse >= 3"``.
    **numbers
        The numbers (or short strings) the finding rests on.

    Returns
    -------
    str
        The words, ``text`` formatted with the numbers.

    Raises
    ------
    FindingFailed
        If the condition is false for these numbers.
    ValueError
        If ``name`` is not an identifier (or is a Python keyword), or another finding was
        stated under it in this kernel (a cell run again may restate its own findings);
        ``text`` names a field it was not given or cannot be formatted with the numbers; the
        condition is not an expression over the numbers or fails on them (a division by
        zero, a string compared with a number: the message names the finding and its
        numbers); or a number is NaN or infinite, or holds one (in a list, tuple or array).

    Examples
    --------
    >>> finding("ch0_f_cut", "cuts the error by {cut:.0%}", holds="cut > 0.3", cut=0.42)
    'cuts the error by 42%'
    >>> finding("ch0_f_cut", "cuts the error by {cut:.0%}", holds="cut > 0.3", cut=0.12)
    ... # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    recbias_tutorial._findings.FindingFailed: finding 'ch0_f_cut' no longer holds: `cut > 0.3` is false for cut = 0.12...
    """
    words = check_finding(name, text, holds=holds, **numbers)
    glue(name, words)
    for key, value in numbers.items():
        if isinstance(_plain(value), (int, float, str)):
            glue(f"{name}_{key}", value)
    return words


def takeaways(texts: Mapping[str, str]) -> None:
    """State a lesson's takeaways before its first section; each is confirmed further down.

    A lesson opens with the conclusions a student should leave with. They are shown before
    the numbers behind them are computed, so each is stated here in words only, published
    under its name (the takeaway box quotes it with ``{eval}`name```), and confirmed later by
    :func:`confirm` with the condition and numbers it rests on. The page's last cell calls
    :func:`all_takeaways_confirmed`, so a takeaway left unchecked, or one whose check fails,
    fails the book build.

    Parameters
    ----------
    texts : mapping str -> str
        Name (a Python identifier) -> the words shown, a plain sentence without numbers.

    Returns
    -------
    None

    Raises
    ------
    ValueError
        If ``texts`` is empty, a name is not an identifier, words are empty or hold a
        format field, or a name was already stated with other words.

    See Also
    --------
    confirm : check one takeaway against its numbers.
    all_takeaways_confirmed : the last check of a page.

    Examples
    --------
    >>> takeaways({"ch0_t_snips": "SNIPS removes most of AOA's error."})
    >>> confirm("ch0_t_snips", holds="cut > 0.5", cut=0.7)
    "SNIPS removes most of AOA's error."
    >>> all_takeaways_confirmed()
    """
    for name, text in state_takeaways(texts).items():
        glue(name, text)


def confirm(name: str, *, holds: str, **numbers: Any) -> str:
    """Confirm a stated takeaway: check its condition on the numbers it rests on.

    Parameters
    ----------
    name : str
        A name stated by :func:`takeaways`.
    holds : str
        The condition that makes the takeaway true, a Python expression over the numbers
        (as in :func:`finding`).
    **numbers
        The numbers it rests on; each is published under ``f"{name}_{key}"``.

    Returns
    -------
    str
        The takeaway's words.

    Raises
    ------
    FindingFailed
        If the condition is false for these numbers.
    ValueError
        If ``name`` was not stated, or the condition or the numbers are malformed (as in
        :func:`finding`).

    Examples
    --------
    >>> takeaways({"ch0_t_gap": "AOA favours popular items."})
    >>> confirm("ch0_t_gap", holds="gap > 0", gap=0.1)
    'AOA favours popular items.'
    """
    words = confirm_takeaway(name, holds=holds, **numbers)
    for key, value in numbers.items():
        if isinstance(_plain(value), (int, float, str)):
            glue(f"{name}_{key}", value)
    return words


def all_takeaways_confirmed() -> None:
    """Raise :class:`FindingFailed` if a stated takeaway was not confirmed (a page's last cell).

    Returns
    -------
    None

    Raises
    ------
    FindingFailed
        Naming every takeaway stated by :func:`takeaways` and not confirmed since.

    Examples
    --------
    >>> takeaways({"ch0_t_open": "An unchecked takeaway."})
    >>> all_takeaways_confirmed()  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    recbias_tutorial._findings.FindingFailed: takeaways stated but never confirmed: ch0_t_open...
    >>> confirm("ch0_t_open", holds="n > 0", n=1)
    'An unchecked takeaway.'
    """
    missing = unconfirmed_takeaways()
    if missing:
        raise FindingFailed(f"takeaways stated but never confirmed: {', '.join(missing)}. "
                            "Each takeaway needs a `course.confirm(name, holds=...)` with the "
                            "numbers it rests on, before the page's last cell.")


def _building_site() -> bool:
    """True in the book build's kernels (``RECBIAS_CHARTS=offline``), which must glue."""
    return os.environ.get("RECBIAS_CHARTS") == "offline"


@declare(digits=Interval(int, 0))
def table(frame: "pd.DataFrame", *, digits: int = 3, missing: str = "—") -> "pd.DataFrame":
    """A DataFrame as the chapters show it: counts as ints, other floats rounded, gaps named.

    Parameters
    ----------
    frame : DataFrame
        The table to show.
    digits : int
        Decimal places of the non-integral float columns.
    missing : str
        The word shown in place of a missing value (say what the gap means, e.g.
        ``"empty stratum"``).

    Returns
    -------
    DataFrame
        A copy: float columns whose values are all whole numbers become integers,
        other float columns are rounded to ``digits``, and missing values read ``missing``.

    Raises
    ------
    ValueError
        If ``frame`` is not a DataFrame, ``digits`` is not a non-negative int or
        ``missing`` is not a string.

    See Also
    --------
    glue_values : publish the numbers the prose quotes.

    Examples
    --------
    >>> import pandas as pd
    >>> table(pd.DataFrame({"n": [923.0, 12.0], "w": [0.909091, None]}), missing="none")
         n      w
    0  923  0.909
    1   12   none
    >>> table(pd.DataFrame({"w": [0.055, None]}), digits=4, missing="none")
            w
    0  0.0550
    1    none
    """
    import pandas as pd

    if not isinstance(frame, pd.DataFrame):
        raise ValueError(f"frame must be a DataFrame, got {type(frame).__name__}")
    if not isinstance(missing, str):
        raise ValueError(f"missing must be a string, got {missing!r}")
    out = frame.copy()
    rounded = []
    for col in out.columns:
        values = out[col]
        if not pd.api.types.is_float_dtype(values):
            continue
        finite = values.dropna()
        if len(finite) and np.isfinite(finite).all() and (finite == np.round(finite)).all():
            out[col] = values.astype("Int64")
        else:
            out[col] = values.round(digits)
            rounded.append(col)
    if out.isna().to_numpy().any():
        # An object column prints each float by repr (0.055, not 0.0550): keep every digit.
        out = out.astype(object)
        for col in rounded:
            out[col] = [v if pd.isna(v) else f"{v:.{digits}f}" for v in out[col]]
        out = out.where(frame.notna(), missing)
    return out


def standin_notice(data: FeedbackData) -> bool:
    """Show a warning box when ``data`` is a simulated stand-in; return whether it is.

    Parameters
    ----------
    data : FeedbackData
        As returned by :func:`recbias_tutorial.load_or_standin`.

    Returns
    -------
    bool
        ``data.is_standin``.

    Raises
    ------
    ValueError
        If ``data`` is not a :class:`~recbias_tutorial.FeedbackData`.

    See Also
    --------
    recbias_tutorial.load_or_standin : returns the stand-in and emits the warning this shows.

    Examples
    --------
    >>> import recbias_tutorial as rb
    >>> standin_notice(rb.simulate(30, 20, seed=0, mean_ratings_per_user=5))
    False
    """
    if not isinstance(data, FeedbackData):
        raise ValueError(f"data must be a FeedbackData, got {type(data).__name__}")
    if not data.is_standin:
        return False
    message = data.info.get("notice", f"{data.name} is a simulated stand-in.")
    if _in_kernel():
        from IPython.display import HTML, display

        display(HTML('<div class="admonition warning"><p class="admonition-title">Simulated '
                     f'stand-in</p><p>{html.escape(message)}</p></div>'))
    else:
        print(f"Simulated stand-in: {message}")
    return True


def stored_results(results: str | os.PathLike) -> tuple[dict, dict]:
    """The full-scale results ``make replicate`` stored for one paper, and their provenance.

    The results ship with the package (``recbias_tutorial/results/<paper>/``), so a chapter
    notebook finds them wherever the package is installed. Reads ``provenance.json``, the
    CSV file of each dataset it lists and of each further table it records under ``tables``
    (e.g. wang2025's ``yahoo_r3_ips_stability``; strings kept as strings, empty text not read
    as missing), and refuses results whose provenance does not hold: a missing or unreadable
    file, data checksums that are not the package's registry
    (``recbias_tutorial.data._registry.SHA256``), or a results file whose sha256 is not the
    one ``make replicate`` recorded when it wrote it (a value edited by hand). The message
    says what to do where the reader is: in a checkout of the repository, restore the files
    or run ``make replicate``; in an installed package, reinstall it.

    Parameters
    ----------
    results : str or path
        A paper's name, e.g. ``"jadidinejad2021"`` (the package's stored results), or a
        folder holding such results (e.g. a copy under test).

    Returns
    -------
    (tables, provenance) : tuple of dict
        ``{dataset or further table: DataFrame}`` and the parsed ``provenance.json`` (its
        ``datasets`` and ``tables`` say which is which).

    Raises
    ------
    ValueError
        If the paper has no stored results, ``provenance.json`` or a listed file is missing
        or unreadable, a file's sha256 differs from its record, or a dataset's checksums
        differ from the registry's.

    See Also
    --------
    recbias_tutorial.replications.jadidinejad2021.protocol_taus : reads such a table.

    Examples
    --------
    >>> tables, provenance = stored_results("wang2025")
    >>> sorted(provenance["datasets"]), provenance["paper"], sorted(tables) == sorted(
    ...     [*provenance["datasets"], *provenance.get("tables", {})])
    (['yahoo_r3'], 'wang2025', True)
    >>> stored_results("no_such_paper")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: results: no stored results for 'no_such_paper' (stored: carraro2022, ...)
    """
    from ._stored_results import read_stored_results

    return read_stored_results(results)


def _kernel() -> Any:
    """The running IPython shell, or None outside one."""
    try:
        from IPython import get_ipython
    except ImportError:
        return None
    return get_ipython()


def _in_kernel() -> bool:
    return _kernel() is not None
