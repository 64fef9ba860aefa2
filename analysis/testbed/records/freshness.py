"""Is a run still an answer to its experiment as declared today? A run predates its
experiment toml when anything it was asked to do has changed since: the index and the
README answers say "stale" and what changed, rather than hide it (issue 43).

Compared: the run's own copy of its toml against the current file, both parsed, leaving
out [answer] (how the result is read, not what was measured) and the profiles the run
did not use. A run without a copy falls back on the sha256 its manifest recorded.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from testbed.records import answer_spec, run_toml
from testbed.records.manifest import DEFAULT_HWM, RunManifest
from testbed.records.run_dir import RunDir

SHOWN = 6   # changed keys named before "and N more"


@dataclass(frozen=True)
class Freshness:
    stale: bool
    reason: str = ""   # what makes it stale, one clause

    def text(self) -> str:
        """One sentence ("" when fresh)."""
        return f"**Stale**: {self.reason}." if self.stale else ""


def _measured(doc: dict, profile: str) -> dict:
    out = {k: v for k, v in doc.items() if k != "answer"}
    if isinstance(out.get("profiles"), dict):
        out["profiles"] = {k: v for k, v in out["profiles"].items() if k == profile}
    return out


def changed_keys(old, new, prefix: str = "") -> list[str]:
    """Dotted keys whose values differ between two parsed tomls (added and removed too)."""
    if not (isinstance(old, dict) and isinstance(new, dict)):
        return [] if old == new else [prefix or "(the whole file)"]
    out = []
    for key in sorted(set(old) | set(new)):
        path = f"{prefix}.{key}" if prefix else key
        if key not in old:
            out.append(f"{path} (added)")
        elif key not in new:
            out.append(f"{path} (removed)")
        else:
            out += changed_keys(old[key], new[key], path)
    return out


def hwm_mismatch(doc: dict, settings: dict) -> str:
    """The HWM the records show against the one the toml asks for today (absent: the
    libraries' default): the bench's own default changed under unchanged tomls once
    (HWM 0 until 2026-11-26), so the toml alone does not tell."""
    want = (doc.get("workload") or {}).get("hwm", DEFAULT_HWM)
    seen = sorted({v for entry in (settings.get("libraries") or {}).values()
                   for key in ("sndhwm", "rcvhwm") for v in entry.get(key, [])}, key=str)
    if not seen or seen == [want]:
        return ""
    asked = f"{want} (the libraries' default)" if want == DEFAULT_HWM else str(want)
    return f"its records show HWM {'/'.join(map(str, seen))} where the toml now asks for {asked}"


def judge(run: Path | RunDir, manifest: RunManifest | None, experiments_dir: Path,
          settings: dict | None = None) -> Freshness:
    """Whether `run` (its manifest: the run's own unless given) is stale against the
    tomls under experiments_dir; `settings`: what its records show
    (results/run_settings.py), for the HWM check."""
    run = RunDir.open(run)
    manifest = manifest or run.manifest
    toml = answer_spec.experiment_tomls(experiments_dir).get(manifest.experiment_name)
    if toml is None:
        return Freshness(True, f"no toml under experiments/ declares `{manifest.experiment_name}` now")
    rel = toml.relative_to(Path(experiments_dir).parent).as_posix()
    now = answer_spec.read(toml)[0]
    reasons = [hwm_mismatch(now, settings or {})]
    ran = run.experiment_toml()
    if ran is None:
        if manifest.experiment_toml_sha256 != run_toml.sha256(toml):
            reasons.append(f"`{rel}` is not the file this run ran (its sha256 differs, and the run kept no "
                           "copy to say what changed)")
    elif keys := changed_keys(_measured(ran, manifest.profile), _measured(now, manifest.profile)):
        more = f" and {len(keys) - SHOWN} more" if len(keys) > SHOWN else ""
        reasons.append(f"`{rel}` changed since this run ({', '.join(f'`{k}`' for k in keys[:SHOWN])}{more})")
    reasons = [r for r in reasons if r]
    return Freshness(True, "; ".join(reasons) + ": re-run it for a current answer") if reasons \
        else Freshness(False)
