# The bench harness built against one library prefix. Every library gets the same
# harness source and flags; only the four BENCH_LIB_* cache variables differ
# (the contract in docs/data-formats.md and /bench/CMakeLists.txt).
{
  lib,
  stdenv,
  cmake,
  ninja,
  library,
}:

stdenv.mkDerivation {
  pname = "bench-${library.passthru.testbedName}";
  inherit (library) version;

  # Only the harness sources: an analysis edit never rebuilds the benches.
  src = lib.fileset.toSource {
    root = ./.;
    fileset = lib.fileset.fileFilter (
      file:
      file.name == "CMakeLists.txt"
      || builtins.any file.hasExt [
        "c"
        "cc"
        "cpp"
        "h"
        "hpp"
        "cmake"
        "in"
      ]
    ) ./.;
  };

  nativeBuildInputs = [
    cmake
    ninja
  ];
  buildInputs = [ library ];

  # The build id is read from the prefix at build time: it exists only after the
  # library is built, and it ties every bench result to that exact build.
  preConfigure = ''
    build_id=$(sed -n 's/.*"build_id": *"\([0-9a-f]*\)".*/\1/p' ${library}/testbed-lib.json)
    test -n "$build_id" || { echo "no build_id in ${library}/testbed-lib.json" >&2; exit 1; }
    cmakeFlagsArray+=("-DBENCH_LIB_BUILD_ID=$build_id")
  '';
  cmakeFlags = [
    "-DCMAKE_BUILD_TYPE=Release"
    (lib.cmakeFeature "BENCH_LIB_PREFIX" "${library}")
    (lib.cmakeFeature "BENCH_LIB_LINK_NAME" library.passthru.linkName)
    (lib.cmakeFeature "BENCH_LIB_NAME" library.passthru.testbedName)
  ];

  # The binaries land in the CMake binary dir (the contract); keep exactly those.
  installPhase = ''
    runHook preInstall
    mkdir -p $out/bin
    for f in bench_* ceiling_probe histogram_check; do
      if [ -f "$f" ] && [ -x "$f" ]; then cp "$f" $out/bin/; fi
    done
    ls $out/bin/bench_* > /dev/null \
      || { echo "bench build produced no bench_* binaries" >&2; exit 1; }
    runHook postInstall
  '';

  meta = {
    description = "zlink testbed bench binaries built against ${library.passthru.testbedName}";
    platforms = lib.platforms.linux;
  };
}
