# zlink as a Nix package: the C++ library in this folder, installed as a prefix the
# testbed understands (include/zmq.h, lib/libzlink.so, testbed-lib.json). Two
# flavours like the baseline: `zlink` with CURVE on nixpkgs' libsodium (withCurve,
# the default) and `zlink-nocurve` without.
{
  lib,
  stdenv,
  cmake,
  ninja,
  python3,
  asio,
  gtest,
  libsodium,
  withCurve ? true,
  # Tests are off for the package (as in `./testbed setup`) and on in the flake check.
  doCheck ? false,
  # A libzmq prefix enables zlink's interop tests (only meaningful with doCheck).
  interopLibzmq ? null,
}:

let
  # C++ sources, build scripts and the tests' data (export lists, fuzz corpora): a
  # notebook or docs edit elsewhere never rebuilds zlink.
  src = lib.fileset.toSource {
    root = ./.;
    fileset = lib.fileset.unions [
      (lib.fileset.maybeMissing ./tests)
      (lib.fileset.fileFilter (
        file:
        file.name == "CMakeLists.txt"
        || builtins.any file.hasExt [
          "c"
          "cc"
          "cpp"
          "h"
          "hpp"
          "ipp"
          "cmake"
          "in"
          "py" # the interop test driver (tests/interop/run_interop.py)
        ]
      ) ./.)
    ];
  };
  # The version's one source, as for CMake: include/zlink.h's ZLINK_VERSION_* lines.
  header = builtins.readFile ./include/zlink.h;
  versionPart =
    part:
    let
      found = builtins.match ".*#define ZLINK_VERSION_${part} ([0-9]+).*" header;
    in
    if found == null then
      throw "zlink/include/zlink.h: no ZLINK_VERSION_${part}"
    else
      builtins.head found;
  testbedName = if withCurve then "zlink" else "zlink-nocurve";
  # The registered flavours' flags, from the file ./testbed setup reads too.
  pins = (builtins.fromTOML (builtins.readFile ../baselines/pins.toml)).zlink;
  isTestsFlag = flag: lib.hasPrefix "-DZLINK_BUILD_TESTS=" flag;
in
stdenv.mkDerivation (finalAttrs: {
  pname = testbedName;
  version = builtins.concatStringsSep "." (
    map versionPart [
      "MAJOR"
      "MINOR"
      "PATCH"
    ]
  );
  inherit src doCheck;

  # python3: with tests on (the zlink-tests check) the configure needs Python 3
  # (tests/interop/CMakeLists.txt: find_package(Python3 REQUIRED)).
  nativeBuildInputs = [
    cmake
    ninja
    python3
  ];
  buildInputs = [
    asio
  ]
  ++ lib.optionals withCurve [ libsodium ]
  ++ lib.optionals doCheck [ gtest ];

  cmakeFlags =
    builtins.filter (flag: !(isTestsFlag flag)) pins.cmake_flags
    ++ [
      (lib.cmakeBool "BUILD_TESTING" doCheck)
      (lib.cmakeBool "ZLINK_BUILD_TESTS" doCheck)
      # ON fails the configure when libsodium is missing: never a silent NULL-only build.
      (if withCurve then pins.curve_on else pins.curve_off)
    ]
    ++ lib.optionals (interopLibzmq != null) [
      (lib.cmakeFeature "ZLINK_INTEROP_LIBZMQ_PREFIX" "${interopLibzmq}")
    ];

  # The build id comes from $out, which already hashes every input of this build.
  postInstall = ''
    test -f $out/include/zmq.h && test -e $out/lib/libzlink.so && test -e $out/lib/libzmq.so.5
    build_id=$(printf '%s' "$out" | sha256sum | cut -c1-16)
    compiler=$($CXX --version | head -n1)
    cat > $out/testbed-lib.json <<JSON
    {"name": "${testbedName}", "version": "${finalAttrs.version}", "build_id": "$build_id",
     "source_hash": "nix-store:${builtins.baseNameOf src}",
     "flags": ${builtins.toJSON finalAttrs.cmakeFlags},
     "compiler": "$compiler", "curve": ${lib.boolToString withCurve}, "link_name": "zlink",
     "built_by": "nix"}
    JSON
  '';

  # As for the baseline: the flavour is proven on the built library, not assumed.
  doInstallCheck = true;
  installCheckPhase = ''
    runHook preInstallCheck
    printf '#include <zmq.h>\nint main(void){return zmq_has("curve") ? 0 : 1;}\n' > has_curve.c
    $CC has_curve.c -I$out/include -L$out/lib -lzlink -Wl,-rpath,$out/lib -o has_curve
    if ./has_curve; then curve=true; else curve=false; fi
    if [ "$curve" != "${lib.boolToString withCurve}" ]; then
      echo "${testbedName}: zmq_has(\"curve\") is $curve," \
        "but withCurve = ${lib.boolToString withCurve}" >&2
      exit 1
    fi
    runHook postInstallCheck
  '';

  passthru = {
    curve = withCurve;
    inherit testbedName;
    linkName = "zlink";
  };

  meta = {
    description = "ZMTP messaging library on standalone Asio with libzmq's zmq.h API";
    platforms = lib.platforms.linux;
  };
})
