# `nix develop`: everything needed to work on any part of the repository. The
# ./testbed shim uses this shell's Python environment instead of creating .venv, and
# the Nix-built libraries and benches (TESTBED_PREBUILT) instead of building its own.
{
  mkShell,
  cmake,
  ninja,
  pkg-config,
  gcc,
  clang,
  asio,
  libsodium,
  gtest,
  cargo,
  perf,
  hyperfine,
  inferno,
  iperf3,
  toxiproxy,
  strace,
  ccache,
  slurm,
  munge,
  valgrind,
  nixfmt,
  jq,
  testbed,
  prebuilt,
}:

mkShell {
  packages = [
    cmake
    ninja
    pkg-config
    gcc
    clang
    asio
    libsodium
    gtest
    cargo
    perf
    hyperfine
    inferno
    iperf3
    # the faults experiments' proxy (nixpkgs' version; ./testbed setup builds the
    # pinned v2.5.0 elsewhere: baselines/toxiproxy/pin.toml)
    toxiproxy
    strace
    ccache
    slurm
    munge
    valgrind
    nixfmt
    jq
    testbed.env
  ];
  # gcc is the compiler of both paths (clang is here for the fuzz targets only); without
  # these, whichever of gcc and clang comes last in `packages` would set CC and CXX.
  shellHook = ''
    export CC=gcc CXX=g++
    export TESTBED_PYTHON=${testbed.env}/bin/python
    export TESTBED_PREBUILT=${prebuilt}
    export PYTHONPATH="$PWD/analysis''${PYTHONPATH:+:$PYTHONPATH}"
  '';
}
