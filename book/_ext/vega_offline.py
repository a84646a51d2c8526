"""Serve Vega, Vega-Lite and Vega-Embed from the book itself, so charts work offline.

Altair's HTML output normally fetches these libraries from a CDN, which leaves charts blank
without network. This extension writes the bundle shipped by ``vl-convert-python``
(``vl_convert.javascript_bundle``) into ``_static`` once and adds it to every page. The bundle
is wrapped in a function scope because its minified top-level names clash with Sphinx's own
scripts; it only publishes ``window.vegaEmbed``, ``window.vega`` and ``window.vegaLite``.

It also sets ``RECBIAS_CHARTS=offline`` before notebooks execute; kernels inherit it, and
:mod:`recbias_tutorial.plots` then renders charts as plain HTML that calls the local bundle.
"""

from __future__ import annotations

import os
from pathlib import Path

BUNDLE_NAME = "vega-offline.js"
_EXPORTS = "window.vegaEmbed = vegaEmbed; window.vega = vega; window.vegaLite = vegaLite;"


def _write_bundle(static_dir: Path) -> None:
    import vl_convert as vlc

    stamp = f"// vl-convert {vlc.__version__}; vega {vlc.get_vega_version()}\n"
    target = static_dir / BUNDLE_NAME
    if target.exists() and target.read_text(encoding="utf-8").startswith(stamp):
        return  # written once per vl-convert version
    static_dir.mkdir(parents=True, exist_ok=True)
    code = vlc.javascript_bundle(_EXPORTS)
    tmp = target.with_suffix(".tmp")
    tmp.write_text(stamp + "(function () {\n" + code + "\n})();\n", encoding="utf-8")
    tmp.replace(target)  # atomic: never a half-written bundle


def _on_builder_inited(app) -> None:
    if app.builder.format != "html":
        return
    static_dir = Path(app.doctreedir).parent / "vega_static"
    _write_bundle(static_dir)
    app.config.html_static_path.append(str(static_dir))
    app.add_js_file(BUNDLE_NAME)


def setup(app):
    os.environ["RECBIAS_CHARTS"] = "offline"  # inherited by the kernels that execute chapters
    app.connect("builder-inited", _on_builder_inited)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
