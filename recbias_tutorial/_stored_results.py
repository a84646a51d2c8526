"""The stored full-scale results: package data, read and checked against their provenance.

``make replicate`` writes ``recbias_tutorial/results/<paper>/`` (one gzipped CSV file per
dataset, ``.csv`` from older runs, further tables of a dataset listed under the provenance's
``tables``, and a ``provenance.json``). The folder ships inside the package (wheel and editable install
alike), so a chapter notebook finds it wherever the package is installed: in this
repository, on a JupyterHub, in Colab. :func:`read_stored_results` refuses a folder whose
provenance does not hold (missing or unreadable files, data checksums that are not the
registry's, a results file whose sha256 is not the one recorded when it was written), and
its message says what to do in the reader's situation: in a checkout of the repository,
restore the file or run ``make replicate``; in an installed package, reinstall it.
"""

from __future__ import annotations

import json
import os
from importlib import resources
from pathlib import Path
from typing import Any

from .data._files import sha256sum

#: The package folder (inside ``recbias_tutorial``) that holds one sub-folder per paper.
RESULTS_FOLDER = "results"


def results_root() -> Path:
    """The folder of the stored results inside the installed package."""
    return Path(str(resources.files("recbias_tutorial").joinpath(RESULTS_FOLDER)))


def stored_papers() -> list[str]:
    """The papers whose results the installed package stores (sorted)."""
    root = results_root()
    return sorted(p.name for p in root.iterdir() if (p / "provenance.json").is_file()) \
        if root.is_dir() else []


def _gunzipped_sha256(path: Path) -> str:
    """The sha256 of what a gzipped results file holds (recorded as ``csv_sha256`` when a
    stored CSV was compressed after its run)."""
    import gzip
    import hashlib

    with gzip.open(path, "rb") as stream:
        return hashlib.file_digest(stream, "sha256").hexdigest()


def _checkout_root() -> Path | None:
    """The repository root when the package is imported from a checkout (not an install)."""
    root = Path(__file__).resolve().parents[1]
    return root if (root / "scripts" / "replicate.py").is_file() else None


def _advice(paper: str) -> str:
    """What the reader can do about missing or damaged results, where they are."""
    root = _checkout_root()
    if root is not None:
        return (f"restore the committed files (`git checkout -- recbias_tutorial/{RESULTS_FOLDER}"
                f"/{paper}`) or recompute them (`make replicate` in {root})")
    return ("this installation of recbias_tutorial is incomplete: reinstall it (`pip install "
            "--force-reinstall recbias_tutorial`, or ask whoever set up your JupyterHub / "
            "Colab session to do so); the stored results ship with the package")


def _folder(results: str | os.PathLike) -> tuple[Path, str]:
    """(folder, paper) for a paper name or an explicit folder."""
    if isinstance(results, os.PathLike) or (isinstance(results, str) and
                                            ("/" in results or os.sep in results)):
        folder = Path(results)
        return folder, folder.name
    if not isinstance(results, str) or not results:
        raise ValueError("results must be a paper's name (e.g. 'yang2018') or a folder, got "
                         f"{results!r}")
    papers = stored_papers()
    if results not in papers:
        known = ", ".join(papers) or "none"
        if (results_root() / results).is_dir():  # the folder exists but lost its provenance
            raise ValueError(f"the stored results of {results} have no provenance.json: "
                             f"{_advice(results)}")
        raise ValueError(f"results: no stored results for {results!r} (stored: {known})"
                         + ("" if papers else f"; {_advice(results)}"))
    return results_root() / results, results


def read_stored_results(results: str | os.PathLike) -> tuple[dict, dict]:
    """Read one paper's stored results and provenance, refusing what does not hold.

    See :func:`recbias_tutorial.course.stored_results` (the public front).
    """
    folder, paper = _folder(results)
    try:
        provenance = json.loads((folder / "provenance.json").read_text())
    except FileNotFoundError:
        raise ValueError(f"folder {folder} has no provenance.json: {_advice(paper)}") from None
    except (OSError, ValueError) as err:
        raise ValueError(f"{folder}/provenance.json is unreadable ({err}): "
                         f"{_advice(paper)}") from None
    datasets = provenance.get("datasets") if isinstance(provenance, dict) else None
    if not isinstance(datasets, dict) or not all(isinstance(r, dict) for r in datasets.values()):
        raise ValueError(f"{folder}/provenance.json is not a provenance record of `make "
                         "replicate` (a mapping whose 'datasets' maps each dataset to a record "
                         f"of its file): {_advice(paper)}")
    # a further file of a dataset may sit among the datasets, naming its dataset (yang2018's
    # "yahoo_r3_grid" of "yahoo_r3"); newer runs list such files under "tables"
    if not datasets:  # a further table belongs to a dataset: none without one
        raise ValueError(f"{folder}/provenance.json lists no dataset: {_advice(paper)}")
    tables = {name: _read_table(folder, paper, name, record.get("dataset", name), record)
              for name, record in datasets.items()}
    extra = provenance.get("tables", {})
    if not isinstance(extra, dict) or not all(isinstance(r, dict) for r in extra.values()):
        raise ValueError(f"{folder}/provenance.json: 'tables' must map each further table to "
                         f"a record of its file: {_advice(paper)}")
    for label, record in extra.items():
        if label in tables:
            raise ValueError(f"{folder}/provenance.json lists {label!r} both as a dataset and "
                             f"as a further table: {_advice(paper)}")
        tables[label] = _read_table(folder, paper, label, record.get("dataset"), record)
    if not tables:
        raise ValueError(f"{folder}/provenance.json lists no dataset: {_advice(paper)}")
    return tables, provenance


def _read_table(folder: Path, paper: str, label: str, dataset: Any, record: dict):
    """One recorded results file, refused unless its data checksums are the registry's for
    ``dataset`` and its sha256 (and the CSV's, for a gzipped file) the recorded ones."""
    import pandas as pd

    from .data import _registry

    if not isinstance(dataset, str) or dataset not in _registry.SHA256:
        raise ValueError(f"{folder}: provenance.json lists results on {dataset!r}, a dataset "
                         f"the registry does not know ({', '.join(_registry.SHA256)}): its "
                         "data cannot be checked")
    expected = {f: h for f, h in _registry.SHA256[dataset].items() if h}
    if record.get("data_sha256") != expected:
        raise ValueError(f"{folder}: the {label} results were computed on other data than "
                         "the registry's (data_sha256 differs): run `make replicate` again")
    if not isinstance(record.get("file"), str) or Path(record["file"]).name != record["file"] \
            or record["file"] in ("", ".", ".."):
        raise ValueError(f"{folder}: provenance.json names no results file of the folder for "
                         f"{label} (got {record.get('file')!r}): {_advice(paper)}")
    path = folder / record["file"]
    if not path.is_file():
        raise ValueError(f"{folder}: {path.name} is listed in provenance.json but missing: "
                         f"{_advice(paper)}")
    recorded = record.get("sha256")
    if not isinstance(recorded, str):
        raise ValueError(f"{folder}: provenance.json records no sha256 for {path.name}, so "
                         "it cannot be checked: run `make replicate` again")
    if sha256sum(path) != recorded:
        raise ValueError(f"{folder}: {path.name} is not the file `make replicate` wrote "
                         f"(its sha256 differs from provenance.json's): it was edited or "
                         f"damaged; {_advice(paper)}")
    if "csv_sha256" in record and (not path.name.endswith(".gz")
                                   or _gunzipped_sha256(path) != record["csv_sha256"]):
        raise ValueError(f"{folder}: {path.name} does not hold the CSV `make replicate` wrote "
                         f"(provenance.json's csv_sha256 differs): {_advice(paper)}")
    return typed_table(pd.read_csv(path, keep_default_na=False, na_values={"value": [""]}),
                       paper, label, folder)


def typed_table(frame, paper: str, label: str, folder: Path | str = ""):
    """A stored table typed by its declared schema (:mod:`._stored_schemas`): numbers as
    numbers, missing as NaN; a text entry in a numeric column, an infinity or a duplicated
    key (a run stored twice) raises, naming the file's table."""
    from ._stored_schemas import FALLBACK, schema_of

    schema = schema_of(paper, label) or FALLBACK
    try:
        return schema.check(frame, f"{label}")
    except ValueError as err:
        raise ValueError(f"{folder}: the stored table {err}: {_advice(paper)}") from None
