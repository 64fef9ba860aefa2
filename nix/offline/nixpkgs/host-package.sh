# Builder of the stub's host packages: expose the named host programs, headers and
# libraries (and the programs of whole Debian packages) as symlinks under $out, and
# fail clearly when the host lacks one. Runs with the host's PATH: it is the stub's
# plumbing, not a build the flake declares.
set -eo pipefail
missing() {
  echo "offline stub: the host has no $1 for $pname; install it (./testbed setup or apt-get)" >&2
  exit 1
}
mkdir -p "$out/bin" "$out/include" "$out/lib" "$out/nix-support"
for b in $bins; do
  p=$(command -v "$b") || missing "$b"
  ln -s "$p" "$out/bin/$b"
done
for d in $debs; do
  files=$(dpkg -L "$d") || missing "the Debian package $d"
  for p in $(grep -E '^(/usr)?/s?bin/[^/]+$' <<< "$files"); do
    test -e "$out/bin/${p##*/}" || ln -s "$p" "$out/bin/${p##*/}"
  done
done
for h in $headers; do
  test -e "/usr/include/$h" || missing "/usr/include/$h"
  ln -s "/usr/include/$h" "$out/include/$h"
done
for l in $libs; do
  p=$(ls /usr/lib/*/"$l" /usr/lib/"$l" 2> /dev/null | head -n1) || true
  test -n "$p" || missing "$l"
  ln -s "$p" "$out/lib/$l"
done
# pkg-config files, so a build that declares the package finds it through pkg-config
# (builder.sh searches only declared inputs' lib/pkgconfig).
for pc in $pcs; do
  p=$(ls /usr/lib/*/pkgconfig/"$pc" /usr/share/pkgconfig/"$pc" 2> /dev/null | head -n1) || true
  test -n "$p" || missing "$pc"
  mkdir -p "$out/lib/pkgconfig"
  ln -s "$p" "$out/lib/pkgconfig/$pc"
done
if [ -n "$hook" ]; then cp "$hook" "$out/nix-support/setup-hook"; fi
