"""How far a run directory travels (issue 43, item 4): two counts, before and after
records/ became the one owner of run-directory I/O.

1. crossed: render a published run's report (results.report.render_run, figures not
   drawn) under sys.setprofile and count the testbed modules whose functions are called
   with the run directory in hand: an argument that is the run directory's path, a path
   inside it, or an object whose `path` is the run directory (records.run_dir.RunDir).
   Also the number of such calls.
2. building: a static scan (tests/run_dir_scan.py, the rule test_run_dir_owner.py
   enforces) of the modules under analysis/testbed that build a path inside a run
   directory or name one of its files.

Usage: .venv/bin/python analysis/tools/run_dir_count.py [RUN_DIR]
(with PYTHONPATH naming another checkout's analysis/ first, it counts that checkout)
(default: the newest published batch-sweep run, copied to a scratch directory first so
nothing under reports/ is written).
"""
from __future__ import annotations

import shutil
import sys
import tempfile
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
ANALYSIS = HERE.parent
sys.path.insert(0, str(ANALYSIS / "tests"))
sys.path.append(str(ANALYSIS))   # after PYTHONPATH: another checkout's testbed may be named there

import run_dir_scan  # noqa: E402  (tests/run_dir_scan.py)


def _holds_run_dir(value, root: str) -> bool:
    if isinstance(value, (str, Path)):
        text = str(value)
        return text == root or text.startswith(root + "/")
    inner = getattr(value, "path", None)
    return isinstance(inner, Path) and str(inner) == root


def crossed(run_dir: Path) -> tuple[Counter, int]:
    """testbed module -> calls made with the run directory as an argument."""
    from testbed.results import report

    root = str(run_dir)
    seen: Counter = Counter()

    def profile(frame, event, _arg):
        if event != "call":
            return
        module = frame.f_globals.get("__name__", "")
        if not module.startswith("testbed."):
            return
        code = frame.f_code
        names = code.co_varnames[: code.co_argcount + code.co_kwonlyargcount]
        if any(_holds_run_dir(frame.f_locals.get(n), root) for n in names):
            seen[module] += 1

    out = Path(tempfile.mkdtemp(prefix="run-dir-count-out-"))
    sys.setprofile(profile)
    try:
        report.render_run(run_dir, out_dir=out, draw=False)
    finally:
        sys.setprofile(None)
        shutil.rmtree(out, ignore_errors=True)
    return seen, sum(seen.values())


def main(argv: list[str]) -> int:
    repo = ANALYSIS.parent
    newest = sorted((repo / "reports" / "batch-sweep").glob("*/manifest.json"))[-1].parent
    given = Path(argv[1]) if len(argv) > 1 else newest
    scratch = Path(tempfile.mkdtemp(prefix="run-dir-count-")) / given.name
    shutil.copytree(given, scratch)
    try:
        modules, calls = crossed(scratch.resolve())
    finally:
        shutil.rmtree(scratch.parent, ignore_errors=True)
    shown = given.relative_to(repo) if given.is_relative_to(repo) else given
    outside = [m for m in modules if not m.startswith("testbed.records.")]
    print(f"render_run({shown}): the run directory crosses {len(modules)} modules in {calls} calls, "
          f"{len(outside)} of them outside records/")
    for name, n in sorted(modules.items()):
        print(f"  {n:4d}  {name}")
    import testbed
    package = Path(testbed.__file__).parent
    print(f"(testbed from {package})")
    building = run_dir_scan.scan(package)
    outside = [rel for rel in building if not rel.startswith(run_dir_scan.OWNER + "/")]
    print(f"modules building run-directory paths or naming run-directory files: {len(building)}, "
          f"{len(outside)} of them outside records/")
    for rel, hits in sorted(building.items()):
        print(f"  {rel}: {', '.join(sorted(set(hits)))}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
