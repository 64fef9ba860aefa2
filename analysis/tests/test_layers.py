"""The testbed's packages depend on each other one way only (issue 30; zlink's
layering ctest does the same for core/, sockets/ and transport/).

Every import in analysis/testbed is read with `ast`: module-level ones, the lazy ones
inside functions, and string literals handed to importlib.import_module (a lazy import
is still a dependency: it only hides it until the code runs). A package may import
from its own layer's package or from a lower layer, never upwards, and the two
packages of one layer (sweep writes runs, results reads them) never import each other:
what both need lives in records/. A violation names the importing module and line.
"""
from __future__ import annotations

import ast
from pathlib import Path

TESTBED = Path(__file__).resolve().parents[1] / "testbed"

# Lowest first. A package imports only from packages of a lower layer (or itself).
# stats is pure math and paths the repository's layout: neither imports anything
# else from testbed. records holds what the writer (sweep) and the reader (results)
# of a run directory share. The command layer (cli.py and commands/) may import
# anything: `./testbed run` runs a sweep and then renders its report.
LAYERS: list[set[str]] = [
    {"stats", "paths"},
    {"records"},
    {"toolchain"},
    {"bench"},
    {"sweep", "results"},
    {"faults"},  # builds on the sweep's experiment.toml reader; runs its own experiments
    {"commands", "cli"},
]
RANK = {pkg: i for i, layer in enumerate(LAYERS) for pkg in layer}


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(TESTBED.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _package(module: str) -> str | None:
    """testbed.sweep.loop -> sweep; testbed.cli -> cli; testbed -> None."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[0] == "testbed" else None


def _targets(node: ast.AST, module: str, is_init: bool) -> list[str]:
    """The testbed modules (or packages) one node imports."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if isinstance(node, ast.ImportFrom):
        if node.level:
            base = module.split(".") if is_init else module.split(".")[:-1]
            base = base[:len(base) - (node.level - 1)]
            name = ".".join(base + ([node.module] if node.module else []))
        else:
            name = node.module or ""
        # `from testbed import paths` imports testbed.paths: name each imported symbol too.
        return [name] + [f"{name}.{alias.name}" for alias in node.names]
    if isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant):
        func = node.func
        called = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
        if called in ("import_module", "__import__") and isinstance(node.args[0].value, str):
            return [node.args[0].value]
    return []


def package_imports() -> list[tuple[str, str, str, int]]:
    """(importing package, imported package, importing module, line) for every import
    from one testbed package into another."""
    edges = []
    for path in sorted(TESTBED.rglob("*.py")):
        module = _module_name(path)
        own = _package(module)
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            for target in _targets(node, module, path.name == "__init__.py"):
                other = _package(target)
                if own and other and other != own:
                    edges.append((own, other, module, node.lineno))
    return edges


def test_every_package_has_a_layer():
    found = {_package(_module_name(p)) for p in TESTBED.rglob("*.py")} - {None}
    assert found <= set(RANK), f"packages without a layer in LAYERS: {sorted(found - set(RANK))}"


def test_imports_go_down_the_layers_only():
    bad = [f"{module}:{line} imports testbed.{other} ({own} may import only lower layers than "
           f"its own: {', '.join(sorted(p for p in RANK if RANK[p] < RANK[own]))})"
           for own, other, module, line in package_imports()
           if own in RANK and other in RANK and RANK[other] >= RANK[own]]
    assert not bad, "imports against the layer order:\n" + "\n".join(sorted(set(bad)))


def test_no_import_cycle_between_packages():
    graph: dict[str, set[str]] = {}
    for own, other, _module, _line in package_imports():
        graph.setdefault(own, set()).add(other)
    cycles = set()

    def visit(pkg: str, trail: list[str]) -> None:
        for nxt in sorted(graph.get(pkg, ())):
            if nxt in trail:
                cycle = trail[trail.index(nxt):]
                start = cycle.index(min(cycle))  # one spelling per cycle
                cycles.add(" -> ".join(cycle[start:] + cycle[:start] + [min(cycle)]))
            else:
                visit(nxt, trail + [nxt])

    for pkg in sorted(graph):
        visit(pkg, [pkg])
    witnesses = [f"{module}:{line} ({own} -> {other})" for own, other, module, line in package_imports()
                 if any(f"{own} -> {other}" in c for c in cycles)]
    assert not cycles, ("import cycles between packages:\n" + "\n".join(sorted(cycles))
                        + "\nimports in them:\n" + "\n".join(sorted(set(witnesses))))
