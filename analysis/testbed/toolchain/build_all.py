"""Build every registered library and the bench harness against each: the part of
`./testbed setup` that `./testbed test` reuses. Cached by build key, so a second run
only computes keys and finds the markers."""
from __future__ import annotations

from dataclasses import dataclass

from testbed.toolchain import bench_build, libraries
from testbed.toolchain.progress import Progress


@dataclass
class Outcome:
    name: str
    ok: bool           # False only for a real failure; "not available yet" is not a failure
    detail: str


def build_everything(progress: Progress, names: list[str] | None = None, bench: bool = True) -> list[Outcome]:
    outcomes: list[Outcome] = []
    for name in names or libraries.registered_names():
        reason = libraries.LIBRARIES[name].unavailable()
        if reason:
            progress.say(f"    skipping {name}: {reason}")
            outcomes.append(Outcome(name, True, f"skipped: {reason}"))
            continue
        try:
            built = libraries.ensure_built(name, bench=False, progress=progress)
        except libraries.LibraryUnavailable as exc:
            progress.say(f"    FAILED {exc}")
            outcomes.append(Outcome(name, False, str(exc)))
            continue
        detail = f"{built.prefix}"
        if bench:
            missing = bench_build.missing_reason()
            if missing:
                detail += f"; bench skipped ({missing})"
            else:
                try:
                    built = libraries.ensure_built(name, bench=True, progress=progress)
                    detail += f"; bench {built.bench_dir}"
                except libraries.LibraryUnavailable as exc:
                    progress.say(f"    FAILED {exc}")
                    outcomes.append(Outcome(name, False, str(exc)))
                    continue
        outcomes.append(Outcome(name, True, detail))
    if bench and not bench_build.missing_reason():
        outcomes += _arms_bench(progress, outcomes)
    return outcomes


def _arms_bench(progress: Progress, outcomes: list[Outcome]) -> list[Outcome]:
    """bench_arms_<pattern>: built once, against the reference library's zmq.h, when
    that library was built (or skipped as unavailable: then so is the arms bench)."""
    reference = bench_build.ARMS_REFERENCE
    if not any(o.name == reference and o.ok and not o.detail.startswith("skipped") for o in outcomes):
        return []
    try:
        ref = libraries.ensure_built(reference, bench=False, progress=progress)
        return [Outcome("arms bench", True, str(bench_build.ensure_arms(ref.prefix, ref.info, progress)))]
    except Exception as exc:  # reported like a library's failure, never swallowed
        progress.say(f"    FAILED the arms bench: {exc}")
        return [Outcome("arms bench", False, str(exc))]
