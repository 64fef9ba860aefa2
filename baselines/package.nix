# One libzmq baseline flavour, built from the source and CMake flags in pins.toml
# (the same file `./testbed setup` reads), so both paths build the identical tree
# with identical flags. Shape follows nixpkgs' own zeromq package.
{
  lib,
  stdenv,
  fetchFromGitHub,
  cmake,
  ninja,
  pkg-config,
  libsodium,
  pins,
  name,
}:

let
  pin = pins.libzmq;
  flavour = pins.flavours.${name};
  # CMake >= 4 (nixos-25.11) refuses libzmq 4.3.5's cmake_minimum_required(2.8.12).
  # This only selects CMake policies; it does not change what is compiled.
  nixOnlyFlags = [ "-DCMAKE_POLICY_VERSION_MINIMUM=3.5" ];
in
stdenv.mkDerivation (finalAttrs: {
  pname = if flavour.curve then "libzmq" else "libzmq-nocurve";
  inherit (pin) version;

  src = fetchFromGitHub {
    inherit (pin.upstream) owner repo tag;
    hash = pin.nar_hash;
  };

  nativeBuildInputs = [
    cmake
    ninja
    pkg-config
  ];
  buildInputs = lib.optionals flavour.curve [ libsodium ];

  cmakeFlags = flavour.cmake_flags ++ nixOnlyFlags;

  # testbed-lib.json is the prefix's description (docs/data-formats.md §2). The build
  # id is derived from $out, which already hashes every input of this build.
  postInstall = ''
    build_id=$(printf '%s' "$out" | sha256sum | cut -c1-16)
    compiler=$($CXX --version | head -n1)
    cat > $out/testbed-lib.json <<JSON
    {"name": "${name}", "version": "${pin.version}", "build_id": "$build_id",
     "source_hash": "${pin.nar_hash}", "flags": ${builtins.toJSON finalAttrs.cmakeFlags},
     "compiler": "$compiler", "curve": ${lib.boolToString flavour.curve}, "link_name": "zmq",
     "built_by": "nix"}
    JSON
  '';

  # libzmq's CMake silently drops CURVE when libsodium is missing: prove the flavour
  # is what its name says before anything is measured with it.
  doInstallCheck = true;
  installCheckPhase = ''
    runHook preInstallCheck
    printf '#include <zmq.h>\nint main(void){return zmq_has("curve") ? 0 : 1;}\n' > has_curve.c
    $CC has_curve.c -I$out/include -L$out/lib -lzmq -Wl,-rpath,$out/lib -o has_curve
    if ./has_curve; then curve=true; else curve=false; fi
    if [ "$curve" != "${lib.boolToString flavour.curve}" ]; then
      echo "${name}: zmq_has(\"curve\") is $curve," \
        "pins.toml says ${lib.boolToString flavour.curve}" >&2
      exit 1
    fi
    runHook postInstallCheck
  '';

  passthru = {
    inherit (flavour) curve;
    testbedName = name;
    linkName = "zmq";
  };

  meta = {
    description = "libzmq ${pin.version} baseline (${name}) for the zlink testbed";
    homepage = "https://zeromq.org";
    license = lib.licenses.mpl20;
    platforms = lib.platforms.linux;
    pkgConfigModules = [ "libzmq" ];
  };
})
