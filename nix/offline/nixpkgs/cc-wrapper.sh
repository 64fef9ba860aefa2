# Builder of the stub's C/C++ compiler (stdenv's cc and the `gcc` package): the host's
# gcc behind a wrapper that, like nixpkgs' cc-wrapper, searches only the compiler's own
# headers, the C library's headers and what the caller declares ($NIX_CFLAGS_COMPILE,
# which builder.sh and mkShell fill with each input's include/). The host's
# /usr/include as a whole is never searched, so an undeclared asio.hpp, gtest or
# sodium.h is not found. Runs with the host's PATH: it is stub plumbing.
# Not closed: the linker's default library folders (/usr/lib/<multiarch>, /lib/...).
set -eo pipefail
mkdir -p "$out/bin" "$out/libc"
# The C library's headers alone (glibc's and the kernel's, as nixpkgs' glibc.dev
# gives): symlinks to the files of the named Debian packages under /usr/include.
for d in $libcDebs; do
  dpkg -L "$d" > /dev/null || { echo "offline stub: the host has no Debian package $d" >&2; exit 1; }
  dpkg -L "$d" | grep '^/usr/include/' | while IFS= read -r f; do
    [ -d "$f" ] || printf '%s\n' "$f"
  done
done | xargs -d '\n' -r cp -s --parents -t "$out/libc"
libc="$out/libc/usr/include"
test -f "$libc/stdio.h" || { echo "offline stub: no stdio.h among $libcDebs" >&2; exit 1; }
multiarch="$(gcc -print-multiarch)"
gcc_include="$(gcc -print-file-name=include)"
fixed="$(gcc -print-file-name=include-fixed)"
own=(-isystem "$gcc_include")
if [ -d "$fixed" ]; then own+=(-isystem "$fixed"); fi
# libstdc++'s headers: the C++ entries of g++'s own search list (c++/N, its
# multiarch and backward folders), which hold nothing but libstdc++.
mapfile -t cxx_dirs < <(g++ -x c++ -E -v - < /dev/null 2>&1 | sed -n 's/^ \(.*\/c++\/.*\)$/\1/p')
[ ${#cxx_dirs[@]} -gt 0 ] || { echo "offline stub: no libstdc++ folders in g++ -v" >&2; exit 1; }
cxx_own=()
for dir in "${cxx_dirs[@]}"; do cxx_own+=(-isystem "$dir"); done

# wrap NAME HOST-PROGRAM FLAGS...: -nostdinc drops every default folder; the flags put
# back the compiler's own; the C library comes last (-idirafter), as in nixpkgs.
wrap() {
  local name="$1" prog="$2"; shift 2
  {
    echo '#!/bin/bash'
    echo "# offline stub: $prog searching only its own headers, the C library's and NIX_CFLAGS_COMPILE"
    # shellcheck disable=SC2016 # expanded when the wrapper runs
    printf 'exec %q -nostdinc' "$prog"
    printf ' %q' "$@"
    printf ' $NIX_CFLAGS_COMPILE "$@" -idirafter %q -idirafter %q\n' "$libc/$multiarch" "$libc"
  } > "$out/bin/$name"
  chmod +x "$out/bin/$name"
}
for n in cc gcc cpp; do wrap "$n" "$(command -v "$n")" "${own[@]}"; done
for n in c++ g++; do wrap "$n" "$(command -v "$n")" "${cxx_own[@]}" "${own[@]}"; done
