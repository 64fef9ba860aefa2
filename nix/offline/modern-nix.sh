# Sourced by check.sh: a modern Nix (Debian trixie's nix-bin, 2.26) on this bookworm
# host, without touching the host's libc. A minimal trixie root is made once with
# debootstrap and cached in build/nix-trixie/ (a second run reuses it); nix-bin is
# installed inside it with apt; the nix binary then runs on the host through the
# root's own dynamic loader and libraries (--library-path, so the builders it starts
# are ordinary host processes with the host's libraries).
# Defines: nix, nix-store, nix-instantiate (shell functions) and $nix_root.

nix_root="${NIX_TRIXIE_ROOT:-$repo/build/nix-trixie}"

nix_root_ready() { [ -x "$nix_root/usr/bin/nix" ] && [ -f "$nix_root/.testbed-ready" ]; }

if ! nix_root_ready; then
  step "a trixie root with nix-bin in $nix_root (debootstrap, once; cached)"
  command -v debootstrap > /dev/null || apt_install debootstrap
  # The Debian mirror this host's apt already uses (never written down here).
  mirror="$(awk '/^URIs:/ {print $2; exit}' /etc/apt/sources.list.d/*.sources 2> /dev/null || true)"
  [ -n "$mirror" ] || mirror="$(awk '/^deb / {print $2; exit}' /etc/apt/sources.list 2> /dev/null || true)"
  [ -n "$mirror" ] || { echo "no Debian mirror found in the host's apt sources" >&2; exit 1; }
  rm -rf "$nix_root"
  mkdir -p "$(dirname "$nix_root")"
  debootstrap --variant=minbase trixie "$nix_root" "$mirror" > "$nix_root.log" 2>&1 \
    || { tail -n 20 "$nix_root.log" >&2; exit 1; }
  cp /etc/resolv.conf "$nix_root/etc/resolv.conf"
  mount --bind /proc "$nix_root/proc"
  chroot "$nix_root" apt-get install -y --no-install-recommends nix-bin >> "$nix_root.log" 2>&1
  code=$?
  umount "$nix_root/proc"
  [ "$code" -eq 0 ] || { tail -n 20 "$nix_root.log" >&2; exit 1; }
  touch "$nix_root/.testbed-ready"
else
  echo "using the trixie root made at $(date -u -r "$nix_root/.testbed-ready" '+%F %T UTC'): $nix_root"
fi

nix_loader="$nix_root/lib64/ld-linux-x86-64.so.2"
nix_libs="$nix_root/usr/lib/x86_64-linux-gnu:$nix_root/lib/x86_64-linux-gnu"
[ "$(uname -m)" = x86_64 ] || { echo "modern-nix.sh: x86_64 only (loader path)" >&2; exit 1; }
run_nix() { local name="$1"; shift; "$nix_loader" --library-path "$nix_libs" --argv0 "$name" "$nix_root/usr/bin/$name" "$@"; }
nix() { run_nix nix "$@"; }
nix-store() { run_nix nix-store "$@"; }
nix-instantiate() { run_nix nix-instantiate "$@"; }

# Nix >= 2.18 is what nixpkgs 25.11 requires; refuse to go on with less.
nix_version="$(nix --version | awk '{print $NF}')"
printf '%s\n2.18\n' "$nix_version" | sort -V -C -r \
  || { echo "nix $nix_version is older than 2.18" >&2; exit 1; }
