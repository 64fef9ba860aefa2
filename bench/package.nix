# The bench harness built against one library prefix. Every library gets the same
# harness source and flags; only the four BENCH_LIB_* cache variables differ
# (the contract in docs/data-formats.md and /bench/CMakeLists.txt).
#
# With `arms = true`: the arms bench (bench_arms_<pattern>), built once, against the
# reference library's zmq.h only (no library linked; it loads libraries at run time).
# valgrind's headers, where present, compile in the callgrind client requests.
{
  lib,
  stdenv,
  cmake,
  ninja,
  library,
  arms ? false,
  valgrind ? null,
}:

let
  callgrindHeaders = lib.optional (arms && valgrind != null) (valgrind.dev or valgrind);
  binaries = if arms then "bench_arms_*" else "bench_*";
in
stdenv.mkDerivation {
  pname = if arms then "bench-arms" else "bench-${library.passthru.testbedName}";
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
  buildInputs = [ library ] ++ callgrindHeaders;

  # The build id is read from the prefix at build time: it exists only after the
  # library is built, and it ties every bench result to that exact build.
  preConfigure =
    if arms then
      ""
    else
      ''
        build_id=$(sed -n 's/.*"build_id": *"\([0-9a-f]*\)".*/\1/p' ${library}/testbed-lib.json)
        test -n "$build_id" || { echo "no build_id in ${library}/testbed-lib.json" >&2; exit 1; }
        cmakeFlagsArray+=("-DBENCH_LIB_BUILD_ID=$build_id")
      '';
  cmakeFlags =
    [
      "-DCMAKE_BUILD_TYPE=Release"
      (lib.cmakeFeature "BENCH_LIB_PREFIX" "${library}")
    ]
    ++ (
      if arms then
        [ (lib.cmakeFeature "BENCH_BUILD" "arms") ]
      else
        [
          (lib.cmakeFeature "BENCH_LIB_LINK_NAME" library.passthru.linkName)
          (lib.cmakeFeature "BENCH_LIB_NAME" library.passthru.testbedName)
        ]
    );

  # The binaries land in the CMake binary dir (the contract); keep exactly those.
  installPhase = ''
    runHook preInstall
    mkdir -p $out/bin
    for f in bench_* ceiling_probe histogram_check; do
      if [ -f "$f" ] && [ -x "$f" ]; then cp "$f" $out/bin/; fi
    done
    ls $out/bin/${binaries} > /dev/null \
      || { echo "bench build produced no ${binaries} binaries" >&2; exit 1; }
    runHook postInstall
  '';

  meta = {
    description =
      if arms then
        "zlink testbed arms bench, against ${library.passthru.testbedName}'s zmq.h"
      else
        "zlink testbed bench binaries built against ${library.passthru.testbedName}";
    platforms = lib.platforms.linux;
  };
}
