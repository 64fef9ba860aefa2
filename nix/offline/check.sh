#!/usr/bin/env bash
# The offline Nix check CI runs (`bash nix/offline/check.sh`). Nothing from the real
# nixpkgs can be built here, so the flake's nixpkgs input is overridden with the
# nixpkgs-shaped stub in nix/offline/nixpkgs/, which is backed by host tools. This
# proves the flake's WIRING (names, phases, apps, checks), NOT hermeticity.
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$repo"
# Each line says how many seconds the check has run, so a CI log shows where the time went.
step() { printf '\n== [%4d s] %s\n' "$SECONDS" "$*"; }
ok=()
skipped=()  # checks evaluated but not built (set with the build step; none when it is skipped)
pass() { ok+=("$*"); echo "ok [$SECONDS s]: $*"; }

# --- shellcheck (the stub's writeShellApplication runs it, as nixpkgs does),
#     libsodium's headers (the stub's libsodium is the host's), then a modern Nix
apt_install() {
  apt-get install -y --no-install-recommends "$@" > /dev/null \
    || { apt-get update > /dev/null && apt-get install -y --no-install-recommends "$@" > /dev/null; }
}
need=()
command -v shellcheck > /dev/null || need+=(shellcheck)
[ -e /usr/include/sodium.h ] || need+=(libsodium-dev)
if [ ${#need[@]} -gt 0 ]; then
  step "installing ${need[*]}"
  apt_install "${need[@]}"
fi
# shellcheck source=nix/offline/modern-nix.sh
source "$repo/nix/offline/modern-nix.sh"
# --prepare: only the tools and the trixie root above (.ci/run starts this in the
# background while the tests run; the check itself then finds the root ready).
if [ "${1:-}" = --prepare ]; then
  pass "nix $nix_version (>= 2.18) ready in $nix_root"
  exit 0
fi

work="$(mktemp -d /tmp/nix-offline-check.XXXXXX)"
trap 'rm -rf "$work"' EXIT
echo '{"flakes": [], "version": 2}' > "$work/registry.json"
# build-hook empty: the hook would re-run this nix binary by /proc/self/exe, which
# is the trixie loader here; there are no remote builders to hand builds to anyway.
export NIX_CONFIG="experimental-features = nix-command flakes
substituters =
sandbox = false
build-users-group =
build-hook =
flake-registry = $work/registry.json
cores = 2
max-jobs = 1"
nix --version
pass "nix $nix_version (>= 2.18) from $nix_root"

lock_before="$(sha256sum flake.lock)"

# --- 1. every .nix file parses; formatting
step "parse every tracked .nix file"
mapfile -t nixfiles < <(git ls-files '*.nix')
for f in "${nixfiles[@]}"; do nix-instantiate --parse "$f" > /dev/null; done
pass "${#nixfiles[@]} .nix files parse (nix-instantiate --parse)"

# --- the flake, as committed plus working-tree edits of tracked files, copied out
#     so the real flake.lock is never touched
step "copy the tracked files to $work/flake"
mkdir "$work/flake"
# NIX_CHECK_UNTRACKED=1 also takes untracked (not ignored) files: for developing
# before a commit. Without it the check sees what a git flake would see.
list=(git ls-files -z); if [ "${NIX_CHECK_UNTRACKED:-}" = 1 ]; then list+=(-c -o --exclude-standard); fi
# One cp for all files (one per file took ~20 s for the ~2200 files, 370 MB).
"${list[@]}" | while IFS= read -r -d '' f; do
  if [ -e "$f" ] || [ -L "$f" ]; then printf '%s\0' "$f"; else echo "note: $f is deleted in the working tree" >&2; fi
done | xargs -0 -r cp --parents -P -t "$work/flake"
stub="$work/flake/nix/offline/nixpkgs"
# The stub's Python is the project's environment built from analysis/pyproject.toml.
if [ ! -x "$repo/.venv/bin/python" ]; then ./testbed --help > /dev/null; fi
# extraPath: where the stub finds host programs outside /usr/bin (cargo from rustup,
# inferno installed by ./testbed setup into build/tools/bin).
cargo_dir="$(dirname "$(command -v cargo || echo /nonexistent/cargo)")"
printf '{"python": "%s", "extraPath": ["%s", "%s"]}\n' "$repo/.venv/bin/python" \
  "$repo/build/tools/bin" "$cargo_dir" > "$stub/host.json"
cd "$work/flake"
over=(--override-input nixpkgs "path:$stub" --no-write-lock-file)

# --- 2. the pinned libzmq source: seed the store with the tree the non-Nix path
#     fetched and verified; Nix then accepts it only if pins.toml's hash is right
step "seed the store with the pinned libzmq tree"
tree="$(cd "$repo/analysis" && "$repo/.venv/bin/python" -c '
from testbed.toolchain import pins, sources
from testbed.toolchain.progress import Progress
print(sources.libzmq_source(pins.load(), Progress()))')"
mkdir "$work/seed" && cp -a "$tree" "$work/seed/source"
nix-store --add-fixed --recursive sha256 "$work/seed/source"
pass "libzmq tree added to the store under the NAR hash it really has"

system="$(nix eval --impure --raw --expr builtins.currentSystem)"

# NIX_CHECK_DEVELOP=1 (without NIX_CHECK_FULL): only the dev shell end to end (the
# last step); the strictness probes, the evaluation and the builds are skipped.
ci_steps=1
if [ "${NIX_CHECK_DEVELOP:-}" = 1 ] && [ "${NIX_CHECK_FULL:-}" != 1 ]; then ci_steps=0; fi
if [ "$ci_steps" = 1 ]; then
# --- 3. how strict the stub is: the probes in nix/offline/strictness.nix, some of
#     which must fail, and fail for the reason named here (a probe failing for any
#     other reason, e.g. a typo, must not count as a proof). One `nix build` for the
#     probes that must pass and one (--keep-going) for those that must fail: one
#     evaluation each instead of one per probe. With -L every log line starts with
#     its derivation's name, which is how a reason is tied to its probe.
step "strictness of the stub (nix/offline/strictness.nix)"
probes_build() {
  local log="$1"; shift
  nix build -L --keep-going --no-link -f nix/offline/strictness.nix --argstr system "$system" "$@" \
    > "$log" 2>&1
}
# known-leak-linker: a leak NOT closed, kept visible; it must still build (if it
# fails, the leak is closed and nix/offline/README.md is out of date).
passing=(runcommand runcommandcc runcommandcc-sodium headers-declared zlink-configure known-leak-linker)
probes_build "$work/strict-pass.log" "${passing[@]}" || {
  tail -n 40 "$work/strict-pass.log" >&2
  echo "a strictness probe that must pass failed: ${passing[*]} (see above; if it is" \
    "known-leak-linker, the linker leak is closed: update nix/offline/README.md)" >&2
  exit 1
}
grep -h -e 'strict: ' -e 'zlink configured with tests' -e 'leak: ' "$work/strict-pass.log" \
  | sed 's/^/  /' || echo "  (all already in the store: built and passed before from the same inputs)"
echo "  known-leak-linker: STILL LEAKS: an undeclared host library (-lz) links (linker default folders)"
# probe -> "log prefix|reason" (zlink-configure-no-python's derivation is named zlink).
declare -A must_fail=(
  [zlink-configure-no-python]="zlink|Could NOT find Python3"
  [headers-undeclared]="strict-headers-undeclared|fatal error: asio.hpp: No such file or directory"
  [leaky-runcommand]="strict-leaky-runcommand|STRICTNESS FAILED: a host folder on PATH: /usr/bin"
  [leaky-runcommandcc]="strict-leaky-runcommandcc|STRICTNESS FAILED: a host folder on PATH: /usr/bin"
)
if probes_build "$work/strict-fail.log" "${!must_fail[@]}"; then
  echo "strictness probes ${!must_fail[*]} all built, but each must fail" >&2; exit 1
fi
for p in "${!must_fail[@]}"; do
  prefix="${must_fail[$p]%%|*}" reason="${must_fail[$p]#*|}"
  line="$(grep -F "$prefix> " "$work/strict-fail.log" | grep -m1 -F "$reason" || true)"
  grep -q -E "builder for '/nix/store/[a-z0-9]+-$prefix(-[0-9.]+)?\.drv' failed" "$work/strict-fail.log" \
    && [ -n "$line" ] || {
    tail -n 40 "$work/strict-fail.log" >&2
    echo "strictness probe $p did not fail with: $reason" >&2; exit 1
  }
  echo "  $p: failed as it must: ${line#*> }"
done
pass "stub strictness: runCommand has no cc/nm/ld/python3 and only store folders on PATH;" \
  "runCommandCC has exactly its inputs and stdenv's tools, pkg-config only declared .pc files;" \
  "the compiler finds asio.hpp/sodium.h only when declared (no host /usr/include);" \
  "zlink's configure with tests passes, and fails at find_package(Python3) without python3"
# Every check, package, app and dev shell of both systems is evaluated (so a wrong
# attribute name, a missing input or a broken experiment.toml fails here).
step "nix flake check --no-build (evaluates every output of both systems)"
nix flake check --no-build --all-systems "${over[@]}" .
pass "nix flake check --no-build --all-systems"

# The analysis tests run `cc` (libzmq-suite) and `nm` (zlink flavours): their checks
# must be runCommandCC builds. CI does not build them (below), so their attributes
# are evaluated instead: under the stub, stdenv's compiler and binutils folders are on a
# build's PATH (stubPath) exactly when it is a runCommandCC/mkDerivation build, which
# the strictness step above proves gives cc and nm and nothing undeclared.
step "analysis-tests and reports-unchanged have stdenv's compiler and binutils (evaluated)"
# strictness.nix reads checks.nix without the flake: a `nix eval` of the flake costs
# ~15 s here (hashing the copied tree), `nix derivation show` ~29 s (it copies the
# reports into the store), this ~1 s.
nix eval --raw -f nix/offline/strictness.nix --argstr system "$system" checkPaths > "$work/check-paths"
[ "$(wc -l < "$work/check-paths")" = 2 ] || { cat "$work/check-paths" >&2; exit 1; }
while read -r c stub_path; do
  for tool in gcc-wrapper-host binutils-host; do
    [[ "$stub_path" == *"-$tool/bin"* ]] \
      || { echo "checks.$c has no $tool on its PATH (a runCommand, not runCommandCC?): $stub_path" >&2; exit 1; }
  done
done < "$work/check-paths"
pass "checks analysis-tests and reports-unchanged are built with cc and binutils on PATH"

# Which checks are built and run. CI (the default) builds the formatting check and
# the wiring that no other CI step covers; the checks whose test RUNS `./testbed test`
# already does on this host (zlink's ctest, the analysis pytest suite, the notebooks,
# the report regeneration) are evaluated above but not built, to keep CI in budget.
# NIX_CHECK_FULL=1 builds and runs every check.
all_checks=(zlink-tests analysis-tests notebooks reports-unchanged formatting)
if [ "${NIX_CHECK_FULL:-}" = 1 ]; then
  checks=("${all_checks[@]}")
else
  checks=(formatting)
fi
for c in "${all_checks[@]}"; do [[ " ${checks[*]} " == *" $c "* ]] || skipped+=("$c"); done
# zlink, the checks and the libzmq flavour the app below uses (libzmq-baseline is
# that flavour, libzmq-4.3.5) in one `nix build`: one evaluation (each costs ~5-15 s,
# most of it hashing the copied tree), and two builds at a time so one's serial
# configure and link steps overlap the other's compiling (not with NIX_CHECK_FULL:
# its test suites measure timings, which a parallel build would disturb). The first
# installable's out-link is result-zlink.
step "nix build .#zlink .#libzmq-baseline and the checks: ${checks[*]}${skipped:+ (not built: ${skipped[*]})}"
jobs=2; if [ "${NIX_CHECK_FULL:-}" = 1 ]; then jobs=1; fi
nix build -L --max-jobs "$jobs" "${over[@]}" --out-link "$work/result-zlink" .#zlink .#libzmq-baseline \
  "${checks[@]/#/.#checks.$system.}"
pass "checks built and passed: ${checks[*]}"
test -f "$work/result-zlink/include/zmq.h" && test -e "$work/result-zlink/lib/libzlink.so"
test -e "$work/result-zlink/lib/libzmq.so.5"
grep -q "^libdir=/nix/store/" "$work/result-zlink/lib/pkgconfig/zlink.pc"
pass "nix build .#zlink -> include/zmq.h, lib/libzlink.so, lib/libzmq.so.5, zlink.pc"

# The app's wiring (its runtime inputs, TESTBED_PREBUILT with the Nix-built libzmq and
# its bench, the testbed package) is proven by one configuration compared A/A (the
# quick profile's first shard of four: 10 bench runs instead of 40) without the
# report: rendering runs the same Python on the same host environment as the
# `test` step's report tests, so here it would only repeat them.
# .ci/run starts this check under SCHED_IDLE beside its TSan step and creates the file
# NIX_CHECK_BENCH_AFTER names when that step ends: the builds above share the CPU the
# TSan tests leave idle, but the bench run below (two processes whose progress times
# out within seconds) waits, so it never runs starved beside them.
if [ -n "${NIX_CHECK_BENCH_AFTER:-}" ]; then
  step "waiting for $NIX_CHECK_BENCH_AFTER (the caller's go) before the bench run"
  while [ ! -e "$NIX_CHECK_BENCH_AFTER" ]; do sleep 1; done
fi
step "nix run .#experiment-noise-floor -- --profile quick --shard 1/4 --no-report"
mkdir "$work/caller" && cd "$work/caller"
nix run -L "${over[@]}" "$work/flake#experiment-noise-floor" -- --profile quick --shard 1/4 --no-report
# A run this small (10 records) stays below store.COMPACT_MIN_BYTES, so its records
# are still the journal, results.jsonl, which grep can read.
jsonl="$(find results -name results.jsonl | head -n1)"
[ -n "$jsonl" ] || { echo "no results/**/results.jsonl written in the caller's directory" >&2; exit 1; }
grep -q '"libzmq-A"' "$jsonl" && grep -q '"libzmq-B"' "$jsonl" \
  || { echo "$jsonl has no libzmq-A and libzmq-B records" >&2; exit 1; }
pass "nix run .#experiment-noise-floor wrote $jsonl ($(wc -l < "$jsonl") records, libzmq-A and -B)"
fi

# --- the dev shell end to end (NIX_CHECK_FULL=1 or NIX_CHECK_DEVELOP=1): entering it
#     builds all four library flavours and their benches (TESTBED_PREBUILT), so CI
#     only evaluates it. Inside it, in a checkout of the flake, `./testbed setup` must
#     build nothing and `./testbed run batch-sweep --profile quick` must complete.
#     The caller's environment is emptied and its PATH holds only `nix` (`nix develop`
#     appends the caller's PATH to the shell's): every other tool setup and the run use
#     must come from the shell, not from the host's /usr/bin.
if [ "${NIX_CHECK_FULL:-}" = 1 ] || [ "${NIX_CHECK_DEVELOP:-}" = 1 ]; then
  step "nix develop (caller's PATH: nix only): ./testbed setup, ./testbed run batch-sweep --profile quick"
  mkdir -p "$work/user-bin" "$work/home"
  printf '#!/bin/sh\nexec %q --library-path %q --argv0 nix %q "$@"\n' "$nix_loader" "$nix_libs" \
    "$nix_root/usr/bin/nix" > "$work/user-bin/nix"
  chmod +x "$work/user-bin/nix"
  cd "$work/flake"
  # shellcheck disable=SC2016 # the script expands inside the dev shell
  env -i PATH="$work/user-bin" HOME="$work/home" NIX_CONFIG="$NIX_CONFIG" TERM=dumb \
    "$work/user-bin/nix" develop -L "${over[@]}" . --command bash -euc '
    echo "in the dev shell: CC=$CC CXX=$CXX TESTBED_PREBUILT=$TESTBED_PREBUILT"
    for tool in gcc g++ cmake python3 perf inferno-flamegraph; do
      printf "  %s: %s\n" "$tool" "$(command -v "$tool" || echo MISSING)"
    done
    [ "$CC" = gcc ] && [ "$CXX" = g++ ] && [ -n "$TESTBED_PREBUILT" ]
    fail() { echo "dev shell: $*" >&2; exit 1; }
    # The compiler searches no host /usr/include: asio.hpp comes from the shell s asio.
    dirs=$($CXX -x c++ -E -v - < /dev/null 2>&1 | sed -n "/#include <...>/,/End of/p")
    if grep -qx " /usr/include" <<< "$dirs"; then fail "$CXX searches /usr/include"; fi
    # -fno-canonical-system-headers: gcc would print the symlinks resolved (/usr/include).
    asio=$(printf "#include <asio.hpp>\n" | $CXX -x c++ -M -fno-canonical-system-headers - \
      | tr " " "\n" | grep -m1 "/asio.hpp$")
    case "$asio" in /nix/store/*-asio-host/*) ;; *) fail "asio.hpp found at $asio";; esac
    # pkg-config reads the shell s packages only: libsodium.pc from the store, and no
    # .pc file of the host (the first one found that no shell package provides).
    sodium_pc=$(pkg-config --variable=pcfiledir libsodium)
    case "$sodium_pc" in /nix/store/*) ;; *) fail "libsodium.pc read from $sodium_pc";; esac
    host_pc=""
    for f in /usr/lib/*/pkgconfig/*.pc /usr/share/pkgconfig/*.pc; do
      n=${f##*/}; n=${n%.pc}
      case "$n" in libsodium | gtest* | "*") continue ;; esac
      if [ -e "$f" ]; then host_pc=$n; break; fi
    done
    if [ -z "$host_pc" ]; then
      host_pc_note="the host has no other .pc file to try"
    elif pkg-config --exists "$host_pc"; then
      fail "pkg-config finds the host s $host_pc.pc ($(pkg-config --variable=pcfiledir "$host_pc"))"
    else
      host_pc_note="the host s $host_pc.pc not found"
    fi
    echo "  headers: no /usr/include in $CXX -v; asio.hpp from $asio"
    echo "  pkg-config: libsodium.pc from $sodium_pc; $host_pc_note"
    ./testbed setup
    # With TESTBED_PREBUILT setup uses the Nix-built prefixes: no library build of its own.
    if [ -d build/libs ]; then echo "setup built libraries in build/libs despite TESTBED_PREBUILT" >&2; exit 1; fi
    ./testbed run batch-sweep --profile quick
    find results -name "results.*" | grep -q .'
  pass "nix develop: no host /usr/include or host .pc files;" \
    "./testbed setup built nothing; run batch-sweep --profile quick wrote results"
fi

cd "$repo"
lock_after="$(sha256sum flake.lock)"
[ "$lock_before" = "$lock_after" ] || { echo "flake.lock changed during the check" >&2; exit 1; }
pass "flake.lock unchanged ($(cut -c1-16 <<< "$lock_after"))"

printf '\nNix offline check passed (wiring, not hermeticity: see nix/offline/README.md):\n'
printf '  - %s\n' "${ok[@]}"
if [ ${#skipped[@]} -gt 0 ]; then
  echo "NOT built or run here (evaluated only): ${skipped[*]}; \`./testbed test\` runs the same"
  echo "  tests with the host toolchain; NIX_CHECK_FULL=1 bash nix/offline/check.sh runs them too"
fi
echo "formatting: real nixfmt is not available offline; the stand-in checks whitespace,"
echo "  width <= 100 and one-line lists (nix/offline/nixpkgs/nixfmt_standin.py)"
