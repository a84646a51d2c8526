"""Arrows between the package's modules (issue 58): who may import whom.

Imports are read from the source (relative ones resolved), lazy imports inside functions
included: an arrow drawn late is still an arrow.
"""

from __future__ import annotations

import ast
from pathlib import Path

import recbias_tutorial

ROOT = Path(recbias_tutorial.__file__).parent
PAPERS = sorted(p.name for p in (ROOT / "replications").iterdir()
                if (p / "__init__.py").exists())


def _module_of(path: Path) -> tuple[str, bool]:
    parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
    is_package = parts[-1] == "__init__"
    return ".".join(parts[:-1] if is_package else parts), is_package


def _is_module(name: str) -> bool:
    path = ROOT.parent.joinpath(*name.split("."))
    return path.with_suffix(".py").exists() or (path / "__init__.py").exists()


def imports() -> dict[str, set[str]]:
    """``{module: the modules it imports}``; ``from X import name`` counts as importing
    ``X.name`` when that is a module, else ``X`` (the name is read from ``X``'s namespace)."""
    out = {}
    for path in ROOT.rglob("*.py"):
        module, is_package = _module_of(path)
        package = module.split(".") if is_package else module.split(".")[:-1]
        targets = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                targets.update(a.name for a in node.names)
            elif isinstance(node, ast.ImportFrom):
                base = package[:len(package) - node.level + 1] if node.level else []
                source = ".".join(base + ([node.module] if node.module else []))
                for alias in node.names:
                    sub = f"{source}.{alias.name}"
                    targets.add(sub if _is_module(sub) else source)
        out[module] = targets
    return out


GRAPH = imports()


def test_the_graph_is_read():
    assert "recbias_tutorial.models._cache" in GRAPH["recbias_tutorial._result_cache"]
    assert "recbias_tutorial.replications.yang2018._grid" in GRAPH[
        "recbias_tutorial.replications.yang2018"]
    assert len(PAPERS) >= 4


def test_only_the_caches_read_the_fit_cache():
    """Callers pass models and data to _result_cache, which derives the keys itself."""
    readers = {m for m, targets in GRAPH.items() if "recbias_tutorial.models._cache" in targets}
    assert {m for m in readers if not m.startswith("recbias_tutorial.models")
            and m != "recbias_tutorial._result_cache"} == set()


def test_no_module_of_a_paper_imports_its_own_front():
    """Within a paper, calls go one way: its front reads its modules, never the reverse."""
    back_up = []
    for paper in PAPERS:
        front = f"recbias_tutorial.replications.{paper}"
        for module, targets in GRAPH.items():
            if module.startswith(front + ".") and front in targets:
                back_up.append(module)
    assert back_up == []


def test_no_paper_imports_another_and_the_core_imports_none():
    fronts = {f"recbias_tutorial.replications.{p}" for p in PAPERS}
    crossing, core = [], []
    for module, targets in GRAPH.items():
        mine = {f for f in fronts if module == f or module.startswith(f + ".")}
        reached = {f for f in fronts for t in targets if t == f or t.startswith(f + ".")}
        if mine and reached - mine:
            crossing.append((module, sorted(reached - mine)))
        if not module.startswith("recbias_tutorial.replications") and reached:
            core.append((module, sorted(reached)))
    assert crossing == []
    assert core == []
