#!/usr/bin/env bash
# The offline Nix check CI runs (`bash nix/offline/check.sh`). Nothing from the real
# nixpkgs can be built here, so the flake's nixpkgs input is overridden with the
# nixpkgs-shaped stub in nix/offline/nixpkgs/, which is backed by host tools. This
# proves the flake's WIRING (names, phases, apps, checks), NOT hermeticity.
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$repo"
step() { printf '\n== %s\n' "$*"; }
ok=()
pass() { ok+=("$*"); echo "ok: $*"; }

# --- nix itself (Debian's nix-bin), shellcheck, which the stub's
#     writeShellApplication runs as real nixpkgs does, and libsodium's headers
need=()
command -v nix > /dev/null || need+=(nix-bin)
command -v shellcheck > /dev/null || need+=(shellcheck)
# The stub's libsodium (baseline CURVE flavour, zlink) is the host's.
[ -e /usr/include/sodium.h ] || need+=(libsodium-dev)
if [ ${#need[@]} -gt 0 ]; then
  step "installing ${need[*]}"
  apt-get install -y --no-install-recommends "${need[@]}" > /dev/null || { apt-get update > /dev/null && apt-get install -y --no-install-recommends "${need[@]}" > /dev/null; }
fi

work="$(mktemp -d /tmp/nix-offline-check.XXXXXX)"
trap 'rm -rf "$work"' EXIT
echo '{"flakes": [], "version": 2}' > "$work/registry.json"
export NIX_CONFIG="experimental-features = nix-command flakes
substituters =
sandbox = false
build-users-group =
flake-registry = $work/registry.json
cores = 2
max-jobs = 1"
nix --version

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
"${list[@]}" | while IFS= read -r -d '' f; do
  if [ -e "$f" ]; then cp --parents -P -t "$work/flake" "$f"; else echo "note: $f is deleted in the working tree"; fi
done
stub="$work/flake/nix/offline/nixpkgs"
# The stub's Python is the project's environment built from analysis/pyproject.toml.
if [ ! -x "$repo/.venv/bin/python" ]; then ./testbed --help > /dev/null; fi
printf '{"python": "%s"}\n' "$repo/.venv/bin/python" > "$stub/host.json"
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

step "nix flake show"
nix flake show "${over[@]}" . | tee "$work/show.txt"
grep -q 'experiment-noise-floor' "$work/show.txt"
pass "nix flake show (apps include experiment-noise-floor)"

step "nix flake check (builds every check of $(nix eval --impure --raw --expr builtins.currentSystem))"
nix flake check -L --keep-going "${over[@]}" .
pass "nix flake check"

step "nix build .#zlink"
nix build -L "${over[@]}" --out-link "$work/result-zlink" .#zlink
test -f "$work/result-zlink/include/zmq.h" && test -e "$work/result-zlink/lib/libzlink.so"
pass "nix build .#zlink -> include/zmq.h, lib/libzlink.so"

step "nix run .#experiment-noise-floor -- --profile quick"
mkdir "$work/caller" && cd "$work/caller"
nix run -L "${over[@]}" "$work/flake#experiment-noise-floor" -- --profile quick
find results -name results.jsonl | grep -q . || { echo "no results/**/results.jsonl written in the caller's directory" >&2; exit 1; }
pass "nix run .#experiment-noise-floor wrote $(find results -name results.jsonl | head -n1)"

cd "$repo"
lock_after="$(sha256sum flake.lock)"
[ "$lock_before" = "$lock_after" ] || { echo "flake.lock changed during the check" >&2; exit 1; }
pass "flake.lock unchanged ($(cut -c1-16 <<< "$lock_after"))"

printf '\nNix offline check passed (wiring, not hermeticity: see nix/offline/README.md):\n'
printf '  - %s\n' "${ok[@]}"
echo "formatting: real nixfmt is not available offline; the stand-in checks parsing and whitespace only"
