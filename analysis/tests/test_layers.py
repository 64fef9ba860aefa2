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
import functools
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
    {"bench", "suites"},  # suites: the test-suite harnesses and `./testbed test`
    {"sweep", "results"},
    {"faults"},  # builds on the sweep's experiment.toml reader; runs its own experiments
    {"commands", "cli"},
]
RANK = {pkg: i for i, layer in enumerate(LAYERS) for pkg in layer}


def _module_name(path: Path, root: Path = TESTBED) -> str:
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
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


@functools.cache  # the tree does not change during a session; three tests read it
def package_imports(root: Path = TESTBED) -> tuple[tuple[str, str, str, int], ...]:
    """(importing package, imported package, importing module, line) for every import
    from one testbed package into another (root: the `testbed` package folder)."""
    edges = []
    for path in sorted(root.rglob("*.py")):
        module = _module_name(path, root)
        own = _package(module)
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            for target in _targets(node, module, path.name == "__init__.py"):
                other = _package(target)
                if own and other and other != own:
                    edges.append((own, other, module, node.lineno))
    return tuple(edges)


def packages_without_layer(root: Path = TESTBED) -> list[str]:
    found = {_package(_module_name(p, root)) for p in root.rglob("*.py")} - {None}
    return sorted(found - set(RANK))


def test_every_package_has_a_layer():
    missing = packages_without_layer()
    assert not missing, f"packages without a layer in LAYERS: {missing}"


def layer_violations(root: Path = TESTBED) -> list[str]:
    """One line per import against the layer order, naming the module and line."""
    bad = [f"{module}:{line} imports testbed.{other} ({own} may import only lower layers than "
           f"its own: {', '.join(sorted(p for p in RANK if RANK[p] < RANK[own]))})"
           for own, other, module, line in package_imports(root)
           if own in RANK and other in RANK and RANK[other] >= RANK[own]]
    return sorted(set(bad))


def test_imports_go_down_the_layers_only():
    bad = layer_violations()
    assert not bad, "imports against the layer order:\n" + "\n".join(bad)


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


# A synthetic testbed tree: the checker must flag every kind of import it claims to
# read (else the tests above could pass on a tree full of violations).
SYNTHETIC = {
    "__init__.py": "",
    "paths.py": "ROOT = '.'\n",
    "stats/__init__.py": "",
    "stats/mean.py": "from testbed import paths\n",  # stats and paths share the bottom layer
    "records/__init__.py": "",
    "records/io.py": "import json\nfrom testbed.stats import mean\nfrom testbed.sweep import plan\n",
    "sweep/__init__.py": "",
    "sweep/plan.py": "from testbed.records import io\n\nfrom ..results import report\n",
    "results/__init__.py": "",
    "results/report.py": ("from testbed.records import io\n\n\n"
                          "def render():\n    import testbed.commands.run\n    return 1\n"),
    "toolchain/__init__.py": "",
    "toolchain/build.py": ("import importlib\n\n"
                           "MOD = importlib.import_module('testbed.bench.runner')\n"),
    "bench/__init__.py": "",
    "bench/runner.py": "from testbed.toolchain import build\n",
    "commands/__init__.py": "",
    "commands/run.py": "from testbed.sweep import plan\nfrom testbed.results import report\n",
    "newroom/__init__.py": "",
}


def _synthetic_tree(tmp_path: Path) -> Path:
    root = tmp_path / "testbed"
    for name, text in SYNTHETIC.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


def test_checker_flags_each_kind_of_violation_with_module_and_line(tmp_path):
    root = _synthetic_tree(tmp_path)
    flagged = [line.split(" (")[0] for line in layer_violations(root)]
    assert flagged == [
        "testbed.records.io:3 imports testbed.sweep",  # upwards
        "testbed.results.report:5 imports testbed.commands",  # lazy, inside a function
        "testbed.stats.mean:1 imports testbed.paths",  # sideways within the bottom layer
        "testbed.sweep.plan:3 imports testbed.results",  # sideways, relative spelling
        "testbed.toolchain.build:3 imports testbed.bench",  # importlib.import_module string
    ]
    # The downward imports (bench -> toolchain, commands -> sweep/results, ...) pass.


def test_checker_flags_a_package_without_a_layer(tmp_path):
    assert packages_without_layer(_synthetic_tree(tmp_path)) == ["newroom"]
