# Generic builder of the offline stub: the phases of nixpkgs' stdenv (unpack, patch,
# configure, build, check, install, installCheck) and its cmake/ninja conventions,
# run with the HOST's tools. It proves the flake's phases and wiring, not hermeticity.
# PATH is strict: stdenv's own tools ($stubPath: the base tools, plus cc and binutils
# unless this is a runCommand) and the declared inputs, never the host's /usr/bin.
set -eo pipefail
export PATH="$stubPath"
export NIX_BUILD_CORES=${NIX_BUILD_CORES:-2}
if command -v cc > /dev/null; then export CC=cc CXX=c++; fi
export HOME=/homeless-shelter SOURCE_DATE_EPOCH=315532800
cmakeFlagsArray=()
usesCmake=""
# pkg-config's default search path is the host's /usr/lib/*/pkgconfig and
# /usr/share/pkgconfig: without this a build that never declared libsodium still
# found the host's libsodium.pc. As in nixpkgs (pkg-config's setup hook), only the
# declared inputs' lib/pkgconfig and share/pkgconfig are searched; an empty value
# means none at all.
PKG_CONFIG_LIBDIR=""
# The stub's compiler (cc-wrapper.sh) searches no /usr/include: a declared input's
# headers reach it here, as nixpkgs' cc-wrapper setup hook adds them (strictDeps off:
# both input lists).
NIX_CFLAGS_COMPILE=""
for p in $nativeBuildInputs $buildInputs; do
  if [ -d "$p/bin" ]; then PATH="$p/bin:$PATH"; fi
  if [ -d "$p/include" ]; then NIX_CFLAGS_COMPILE="$NIX_CFLAGS_COMPILE -isystem $p/include"; fi
  for d in "$p/lib/pkgconfig" "$p/share/pkgconfig"; do
    if [ -d "$d" ]; then PKG_CONFIG_LIBDIR="${PKG_CONFIG_LIBDIR:+$PKG_CONFIG_LIBDIR:}$d"; fi
  done
  if [ -d "$p/include" ] || [ -d "$p/lib" ]; then
    CMAKE_PREFIX_PATH="${CMAKE_PREFIX_PATH:+$CMAKE_PREFIX_PATH:}$p"  # ":" in the environment
  fi
  if [ -f "$p/nix-support/setup-hook" ]; then source "$p/nix-support/setup-hook"; fi
done
export CMAKE_PREFIX_PATH PKG_CONFIG_LIBDIR NIX_CFLAGS_COMPILE

runHook() { local hook="$1"; if [ -n "${!hook:-}" ]; then eval "${!hook}"; fi; }

substituteInPlace() {
  local file="$1"; shift
  while [ $# -gt 0 ]; do
    case "$1" in
      --replace|--replace-fail)
        local text; text="$(cat "$file"; echo x)"; text="${text%x}"
        [[ "$text" == *"$2"* ]] || { echo "substituteInPlace: '$2' not in $file" >&2; return 1; }
        printf '%s' "${text//"$2"/"$3"}" > "$file"; shift 3 ;;
      *) echo "substituteInPlace: unsupported $1" >&2; return 1 ;;
    esac
  done
}

defaultUnpackPhase() {
  runHook preUnpack
  cp -r --no-preserve=mode "$src" source
  chmod -R u+w source
  cd source
  runHook postUnpack
}
defaultPatchPhase() { runHook prePatch; runHook postPatch; }
defaultConfigurePhase() {
  runHook preConfigure
  if [ -n "$usesCmake" ]; then
    local gen=(); if [ -n "$usesNinja" ]; then gen=(-G Ninja); fi
    # CMake's find_* skip the host's /usr and /usr/local (nixpkgs' CMake is patched
    # not to search them): a dependency is found through the inputs' prefixes or not.
    # shellcheck disable=SC2086 # cmakeFlags is a space-separated list, as in nixpkgs
    cmake -S . -B build "${gen[@]}" -DCMAKE_INSTALL_PREFIX="$out" -DCMAKE_BUILD_TYPE=Release \
      "-DCMAKE_SYSTEM_IGNORE_PREFIX_PATH=/usr;/usr/local;/" \
      $cmakeFlags "${cmakeFlagsArray[@]}"
    cd build
  fi
  runHook postConfigure
}
defaultBuildPhase() {
  runHook preBuild
  if [ -n "$usesCmake" ]; then cmake --build . -j "$NIX_BUILD_CORES"; fi
  runHook postBuild
}
defaultCheckPhase() {
  runHook preCheck
  if [ -n "$usesCmake" ]; then ctest --output-on-failure -j "$NIX_BUILD_CORES"; fi
  runHook postCheck
}
defaultInstallPhase() {
  runHook preInstall
  if [ -n "$usesCmake" ]; then cmake --install .; fi
  runHook postInstall
}
defaultInstallCheckPhase() { runHook preInstallCheck; runHook postInstallCheck; }

runPhase() {
  local name="$1"
  echo "@ $name" >&2
  if [ -n "${!name:-}" ]; then eval "${!name}"; else "default${name^}"; fi
}

if [ -n "${buildCommand:-}" ]; then
  eval "$buildCommand"
  exit 0
fi
if [ -n "${src:-}" ]; then runPhase unpackPhase; fi
runPhase patchPhase
runPhase configurePhase
runPhase buildPhase
if [ -n "${doCheck:-}" ]; then runPhase checkPhase; fi
runPhase installPhase
if [ -n "${doInstallCheck:-}" ]; then runPhase installCheckPhase; fi
