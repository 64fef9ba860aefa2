"""Which configuration of a run is the reference one: the rule the sweep's adaptive
loop (which pairs configurations), the report's comparisons and the drift-noise
measure all apply, written once here because all three must agree on it.

A configuration is its set of parameter overrides. The reference is the one whose
overrides are a subset of every other's (the 'no override' run), if exactly one such
configuration exists; otherwise there is none and no configuration is compared.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping

# Values that mean "this parameter is left at the library's default". "nan" and "None"
# are how a missing override reads after pandas or JSON has carried it.
UNSET = frozenset({"", "unset", "nan", "None"})


def is_set(value: object) -> bool:
    return str(value) not in UNSET


def overrides(pairs: Iterable[tuple[str, object]]) -> frozenset[tuple[str, str]]:
    """The overrides among (parameter, value) pairs, values as text."""
    return frozenset((p, str(v)) for p, v in pairs if is_set(v))


def reference_config(sets: Mapping[str, frozenset]) -> str | None:
    """config name -> its overrides; the reference configuration's name, or None."""
    if len(sets) < 2:
        return None
    roots = [c for c in sets if all(sets[c] <= sets[o] for o in sets)]
    roots = [c for c in roots if not any(sets[c] == sets[o] for o in sets if o != c)]
    return roots[0] if len(roots) == 1 else None


# A variable no library reads: two configurations that differ only in such variables are
# the same configuration run as two arms, an A/A pair (experiments/noise-floor/arms-config.toml).
AA_PREFIX = "TESTBED_AA_"


def aa_pair(a: frozenset, b: frozenset) -> bool:
    """Do two override sets differ, and only in TESTBED_AA_* variables?"""
    diff = a ^ b
    return bool(diff) and all(p.removeprefix("param_").startswith(AA_PREFIX) for p, _ in diff)
