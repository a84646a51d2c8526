"""Write browser/pyodide-constraints.txt: the package versions of the Pyodide the Lite kernel loads.

``python scripts/pyodide_versions.py`` reads the Pyodide version that the installed
``jupyterlite-pyodide-kernel`` loads (``constants.PYODIDE_VERSION``), fetches npm's ``pyodide``
package of that version (``npm pack``: its ``pyodide-lock.json`` lists every package Pyodide
ships, with its version) and writes one ``name==version`` line per Python package, the
constraints with which ``tests/test_browser_edition.py`` installs the core. Run it after
upgrading jupyterlite-pyodide-kernel (that test fails until the two agree).
"""

from __future__ import annotations

import json
import subprocess
import tarfile
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "browser" / "pyodide-constraints.txt"


def lock(version: str) -> dict:
    """``pyodide-lock.json`` of npm's ``pyodide@version``."""
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run(["npm", "pack", "--silent", f"pyodide@{version}"], cwd=tmp, check=True,
                       capture_output=True)
        archive = next(Path(tmp).glob("pyodide-*.tgz"))
        with tarfile.open(archive) as tar:
            return json.load(tar.extractfile("package/pyodide-lock.json"))


def constraints(version: str, data: dict) -> str:
    pins = sorted(f"{p['name'].lower().replace('_', '-')}=={p['version']}"
                  for p in data["packages"].values()
                  if p.get("package_type", "package") == "package")
    head = (f"# Pyodide {version}'s own package versions (its pyodide-lock.json; Python "
            f"{data['info']['python']}): the versions the\n"
            "# browser edition runs with. Written by scripts/pyodide_versions.py; "
            "tests/test_browser_edition.py\n"
            "# installs the core with these constraints and checks that the Lite kernel still "
            "ships this Pyodide.\n")
    return head + "\n".join(pins) + "\n"


if __name__ == "__main__":
    from jupyterlite_pyodide_kernel.constants import PYODIDE_VERSION

    OUT.write_text(constraints(PYODIDE_VERSION, lock(PYODIDE_VERSION)))
    print(f"{OUT.relative_to(ROOT)}: Pyodide {PYODIDE_VERSION}")
