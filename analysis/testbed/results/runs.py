"""Finding what to analyse: the newest run of an experiment, a run or a published
report given by path. Used by the notebooks so they stay thin."""
from __future__ import annotations

from pathlib import Path

from testbed import paths
from testbed.records import run_status
from testbed.records.run_dir import RunDir, RunDirError

from . import compare, load


def newest_run(experiment: str, results_dir: Path | None = None) -> Path | None:
    runs = run_status.of_experiment(Path(results_dir or paths.RESULTS_DIR), experiment)
    return runs[-1] if runs else None


def pick_run(run: str | Path | None, experiment: str) -> Path:
    if run:
        try:
            return RunDir.open(run).path
        except RunDirError as exc:
            raise FileNotFoundError(str(exc)) from None
    found = newest_run(experiment)
    if found is None:
        raise FileNotFoundError(
            f"no run of {experiment!r} under {paths.RESULTS_DIR}; run `./testbed run {experiment}` "
            f"or set TESTBED_NOTEBOOK_RUN to a run directory"
        )
    return found


def published_runs(experiment: str, reports_dir: Path | None = None) -> list[Path]:
    """The experiment's published runs (reports/<experiment>/<run-id>/), oldest first."""
    return run_status.of_experiment(Path(reports_dir or paths.REPORTS_DIR), experiment)


def pick_published_run(run: str | Path | None, experiment: str) -> Path:
    """The given run directory, else the experiment's newest published run, else its
    newest run under results/."""
    if run:
        return pick_run(run, experiment)
    published = published_runs(experiment)
    if published:
        return published[-1]
    return pick_run(run, experiment)


def pick_pair(a: str | Path | None, b: str | Path | None, experiment: str) -> tuple[Path, Path]:
    """Two sides of a cross-run comparison: given, else the two newest published runs."""
    published = published_runs(experiment)
    if (not a or not b) and len(published) < 2:
        raise FileNotFoundError(f"fewer than two published runs of {experiment!r} under {paths.REPORTS_DIR}; "
                                f"give both runs")
    return Path(a) if a else published[-2], Path(b) if b else published[-1]


def pick_other(other: str | Path | None) -> Path:
    """The second side of a comparison: given, else seed 004's stored import."""
    if other:
        return Path(other)
    found = sorted((paths.REPORTS_DIR / "published" / "data").glob("004_*.csv"))
    if not found:
        raise FileNotFoundError("no published data under reports/published/data; run `./testbed regenerate`")
    return found[0]


def compare_any(path: Path):
    """Comparisons of a run directory, or of a published report's tidy CSV."""
    path = Path(path)
    if path.is_dir():
        run = RunDir.open(path)
        return compare.compare_run(load.load_run(run), run.manifest)
    df = load.read_csv(path)
    primary = [t for t in ("diff-table", "mean-std", "results-block") if t in set(df["table"])][:1]
    return compare.compare(df[df["table"].isin(primary)] if primary else df)
