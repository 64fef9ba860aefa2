# zlink as a Nix package: the C++ library in this folder, installed as a prefix the
# testbed understands (include/zmq.h, lib/libzlink.so, testbed-lib.json).
{
  lib,
  stdenv,
  cmake,
  ninja,
  asio,
  gtest,
  # Tests are off for the package (as in `./testbed setup`) and on in the flake check.
  doCheck ? false,
  # A libzmq prefix enables zlink's interop tests (only meaningful with doCheck).
  interopLibzmq ? null,
}:

let
  # Only C++ sources and build scripts: a notebook or docs edit never rebuilds zlink.
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
        "ipp"
        "cmake"
        "in"
        "py" # the interop test driver (tests/interop/run_interop.py)
      ]
    ) ./.;
  };
  cmakeVersion = builtins.match ".*project\\(zlink VERSION ([0-9.]+).*" (
    builtins.readFile ./CMakeLists.txt
  );
in
stdenv.mkDerivation (finalAttrs: {
  pname = "zlink";
  version = if cmakeVersion == null then "unknown" else builtins.head cmakeVersion;
  inherit src doCheck;

  nativeBuildInputs = [
    cmake
    ninja
  ];
  buildInputs = [ asio ] ++ lib.optionals doCheck [ gtest ];

  cmakeFlags = [
    "-DCMAKE_BUILD_TYPE=Release"
    "-DCMAKE_INSTALL_LIBDIR=lib"
    (lib.cmakeBool "BUILD_TESTING" doCheck)
    (lib.cmakeBool "ZLINK_BUILD_TESTS" doCheck)
  ]
  ++ lib.optionals (interopLibzmq != null) [
    (lib.cmakeFeature "ZLINK_INTEROP_LIBZMQ_PREFIX" "${interopLibzmq}")
  ];

  # The build id comes from $out, which already hashes every input of this build.
  postInstall = ''
    test -f $out/include/zmq.h && test -e $out/lib/libzlink.so
    build_id=$(printf '%s' "$out" | sha256sum | cut -c1-16)
    compiler=$($CXX --version | head -n1)
    cat > $out/testbed-lib.json <<JSON
    {"name": "zlink", "version": "${finalAttrs.version}", "build_id": "$build_id",
     "source_hash": "nix-store:${builtins.baseNameOf src}", "flags": ${builtins.toJSON finalAttrs.cmakeFlags},
     "compiler": "$compiler", "curve": false, "link_name": "zlink", "built_by": "nix"}
    JSON
  '';

  passthru = {
    curve = false;
    testbedName = "zlink";
    linkName = "zlink";
  };

  meta = {
    description = "ZMTP messaging library on standalone Asio with libzmq's zmq.h API";
    platforms = lib.platforms.linux;
  };
})
