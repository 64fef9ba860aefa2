#!/usr/bin/env bash
# The second toolchain (issue 29, item 6): libzmq 4.3.5, zlink and bench built, and
# zlink's ctest run, with Debian trixie's GCC 14, CMake and Python 3.13 (the versions
# nixos-25.11 ships) instead of the host's, so compiler, CMake and Asio drift shows
# here before a Nix user meets it. It runs inside the trixie root that
# nix/offline/modern-nix.sh makes for the offline Nix check (made here if missing),
# installs what the builds need there with apt, and passes the flags of
# baselines/pins.toml, read by the root's own Python 3.13:
#   libzmq: [flavours."libzmq-4.3.5"] (CURVE on the root's libsodium, as the Nix
#           path uses its nixpkgs' libsodium); the interop peer of zlink's tests
#   zlink:  [zlink].cmake_flags with ZLINK_BUILD_TESTS swapped to ON (as the flake's
#           zlink-tests check does), curve_on, the libzmq above for the interop tests
#   bench:  bench/ against each of the two, then one short bench_pair run on each
#           (a function check: exit 0 and verified; the speed it prints is not used)
# Trees live in build/gcc14/ (a second run rebuilds only what changed).
#   bash nix/offline/gcc14.sh                  # all of it
#   GCC14_CTEST_REGEX=interop bash ...          # only the ctest tests matching (ctest -R)
# The last line is `N passed, N failed` (ctest's tests plus one per build step).
# shellcheck disable=SC2016 # the sh -c scripts below expand their own arguments
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$repo"
step() { printf '\n== [%4d s] %s\n' "$SECONDS" "$*"; }
apt_install() {
  apt-get install -y --no-install-recommends "$@" > /dev/null \
    || { apt-get update > /dev/null && apt-get install -y --no-install-recommends "$@" > /dev/null; }
}
# shellcheck source=nix/offline/modern-nix.sh
source "$repo/nix/offline/modern-nix.sh"
root="$nix_root"
work="$repo/build/gcc14"
mkdir -p "$work"

# in_root CMD...: run CMD in the trixie root, with the repository at its own path.
# The mounts live in a private mount namespace (unshare), so they vanish when CMD
# ends, however it ends: no mount is ever left behind in build/ for a later
# `rm -rf` of the root to walk into.
in_root() {
  unshare --mount --propagation private -- bash -euc '
    root="$1" repo="$2"; shift 2
    mount --bind /proc "$root/proc"
    mount --bind /dev "$root/dev"
    mkdir -p "$root$repo"
    mount --bind "$repo" "$root$repo"
    exec chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root \
      LANG=C.UTF-8 JOBS="${TESTBED_JOBS:-2}" DEBIAN_FRONTEND=noninteractive TMPDIR=/tmp bash -euc "cd \"\$0\"; \"\$@\"" "$repo" "$@"
  ' _ "$root" "$repo" "$@"
}

# --- the pinned libzmq tree (the one ./testbed setup fetched and verified)
tree="$(cd "$repo/analysis" && "$repo/.venv/bin/python" -c '
from testbed.toolchain import pins, sources
from testbed.toolchain.progress import Progress
print(sources.libzmq_source(pins.load(), Progress()))')"

# --- the toolchain inside the root (apt only when something is missing)
packages=(g++-14 cmake ninja-build pkg-config python3 libsodium-dev libgtest-dev libasio-dev)
have_all='command -v g++-14 cmake ninja pkg-config python3 > /dev/null &&
  test -e /usr/include/sodium.h -a -e /usr/include/gtest/gtest.h -a -e /usr/include/asio.hpp'
if ! in_root sh -c "$have_all"; then
  step "apt-get install in the trixie root: ${packages[*]}"
  # The root's package lists are debootstrap's; refreshed only when an install fails.
  in_root apt-get install -y -q --no-install-recommends "${packages[@]}" > "$work/apt.log" 2>&1 \
    || { in_root apt-get update && in_root apt-get install -y -q --no-install-recommends \
      "${packages[@]}"; } >> "$work/apt.log" 2>&1 || { tail -n 30 "$work/apt.log" >&2; exit 1; }
fi
versions="$(in_root sh -c 'g++-14 --version | head -n1; cmake --version | head -n1;
  python3 --version; dpkg-query -W -f "\${Package} \${Version}\n" libasio-dev libgtest-dev libsodium-dev')"
printf '%s\n' "$versions"

# --- flags from baselines/pins.toml, read by the root's Python (tomllib)
flags() {
  in_root python3 -c '
import sys, tomllib
pins = tomllib.load(open("baselines/pins.toml", "rb"))
which = sys.argv[1]
if which == "libzmq":
    print("\n".join(pins["flavours"]["libzmq-4.3.5"]["cmake_flags"]))
else:
    z = pins["zlink"]
    tests = [f for f in z["cmake_flags"] if f.startswith("-DZLINK_BUILD_TESTS=")]
    if tests != ["-DZLINK_BUILD_TESTS=OFF"]:
        sys.exit(f"pins.toml [zlink]: expected -DZLINK_BUILD_TESTS=OFF to swap, found {tests}")
    rest = [f for f in z["cmake_flags"] if f not in tests]
    print("\n".join([*rest, "-DZLINK_BUILD_TESTS=ON", z["curve_on"]]))
' "$1"
}
mapfile -t libzmq_flags < <(flags libzmq)
mapfile -t zlink_flags < <(flags zlink)
if [ ${#libzmq_flags[@]} -eq 0 ] || [ ${#zlink_flags[@]} -eq 0 ]; then
  echo "no flags from baselines/pins.toml" >&2; exit 1
fi
compilers=(-G Ninja -DCMAKE_C_COMPILER=gcc-14 -DCMAKE_CXX_COMPILER=g++-14)

passed=0 failed=0
# build NAME LOG CMD...: one counted build step; its output goes to LOG, the tail on failure.
build() {
  local name="$1" log="$2"; shift 2
  local start=$SECONDS
  if in_root "$@" > "$log" 2>&1; then
    passed=$((passed + 1)); echo "ok [$((SECONDS - start)) s]: $name (log: ${log#"$repo"/})"
  else
    failed=$((failed + 1)); echo "FAILED [$((SECONDS - start)) s]: $name (log: ${log#"$repo"/})"
    tail -n 30 "$log"; return 1
  fi
}
# zmq_has("curve") of a prefix's library, on the built result (not trusted from flags).
has_curve() {
  printf '#include <zmq.h>\nint main(void){return zmq_has("curve") ? 0 : 1;}\n' > "$work/has_curve.c"
  in_root sh -c "gcc-14 '$work/has_curve.c' -I'$1/include' -L'$1/lib' -l'$2' -Wl,-rpath,'$1/lib' \
    -o '$work/has_curve' && '$work/has_curve'"
}

step "libzmq 4.3.5 (pinned tree, flavour libzmq-4.3.5) with GCC 14"
zmq="$work/libzmq-prefix"
build "libzmq build + install" "$work/libzmq.log" sh -c 'dir="$1"; shift; cmake -S "$0" -B "$dir" "$@" &&
  cmake --build "$dir" -j "$JOBS" && cmake --install "$dir"' "$tree" "$work/libzmq" "${compilers[@]}" "${libzmq_flags[@]}" \
  "-DCMAKE_INSTALL_PREFIX=$zmq"
has_curve "$zmq" zmq || { echo "libzmq built with GCC 14 has no CURVE" >&2; exit 1; }

step "zlink with GCC 14: ${zlink_flags[*]}"
zl="$work/zlink-prefix"
build "zlink build (tests on) + install" "$work/zlink.log" sh -c 'cmake -S zlink -B "$0" "$@" &&
  cmake --build "$0" -j "$JOBS" && cmake --install "$0"' "$work/zlink" "${compilers[@]}" "${zlink_flags[@]}" \
  "-DZLINK_INTEROP_LIBZMQ_PREFIX=$zmq" "-DCMAKE_INSTALL_PREFIX=$zl"
warnings=$(grep -c 'warning:' "$work/zlink.log" || true)
echo "GCC 14 warnings in this zlink build: $warnings (a no-op rebuild compiles nothing, so shows 0)"
grep 'warning:' "$work/zlink.log" | sort | uniq -c | sort -rn | head -n 20 || true
for f in include/zmq.h lib/libzlink.so lib/libzmq.so.5 lib/pkgconfig/zlink.pc; do
  test -e "$zl/$f" || { echo "zlink install lacks $f" >&2; exit 1; }
done
has_curve "$zl" zlink || { echo "zlink built with GCC 14 has no CURVE" >&2; exit 1; }

step "zlink's ctest (GCC 14 build, Python 3.13 drivers)"
ctest_log="$work/ctest.log"
start=$SECONDS
regex=(); [ -z "${GCC14_CTEST_REGEX:-}" ] || regex=(-R "$GCC14_CTEST_REGEX")
in_root ctest --test-dir "$work/zlink" --output-on-failure -j "${TESTBED_JOBS:-2}" \
  --timeout "${TESTBED_CTEST_TIMEOUT:-120}" "${regex[@]}" > "$ctest_log" 2>&1 || true
summary="$(grep -E 'tests passed, [0-9]+ tests failed out of [0-9]+' "$ctest_log" | tail -n1 || true)"
if [ -z "$summary" ]; then
  failed=$((failed + 1)); echo "ctest ran no test ($((SECONDS - start)) s):"; tail -n 30 "$ctest_log"
else
  total="$(sed -E 's/.* out of ([0-9]+).*/\1/' <<< "$summary")"
  bad="$(sed -E 's/.* ([0-9]+) tests failed.*/\1/' <<< "$summary")"
  passed=$((passed + total - bad)); failed=$((failed + bad))
  echo "ctest [$((SECONDS - start)) s]: $summary"
  sed -n '/The following tests FAILED/,$p' "$ctest_log"
fi

step "bench/ with GCC 14 against each library, one short bench_pair run on each"
for lib in zlink:zlink:"$zl" libzmq-4.3.5:zmq:"$zmq"; do
  IFS=: read -r name link prefix <<< "$lib"
  dir="$work/bench-$name"
  build "bench against $name" "$work/bench-$name.log" sh -c 'cmake -S bench -B "$0" "$@" &&
    cmake --build "$0" -j "$JOBS"' "$dir" "${compilers[@]}" -DCMAKE_BUILD_TYPE=Release \
    "-DBENCH_LIB_PREFIX=$prefix" "-DBENCH_LIB_LINK_NAME=$link" "-DBENCH_LIB_NAME=$name" \
    -DBENCH_LIB_BUILD_ID=0000000000000000 || continue
  if in_root sh -c "'$dir/bench_pair' --transport tcp --size 64 --count 20000 --lat-count 2000 \
      2> /dev/null | python3 -c 'import json, sys; r = json.loads(sys.stdin.readline()); \
      sys.exit(0 if r[\"verify\"][\"ok\"] else 1)'"; then
    passed=$((passed + 1)); echo "ok: bench_pair on $name ran and verified"
  else
    failed=$((failed + 1)); echo "FAILED: bench_pair on $name"
  fi
done

printf '\nsecond toolchain (trixie root %s):\n%s\n' "$root" "$versions"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
