# `nix develop`: everything needed to work on any part of the repository. The
# ./testbed shim uses this shell's Python environment instead of creating .venv.
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
  linuxPackages,
  hyperfine,
  valgrind,
  nixfmt,
  jq,
  testbed,
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
    linuxPackages.perf
    hyperfine
    valgrind
    nixfmt
    jq
    testbed.env
  ];
  shellHook = ''
    export TESTBED_PYTHON=${testbed.env}/bin/python
    export PYTHONPATH="$PWD/analysis''${PYTHONPATH:+:$PYTHONPATH}"
  '';
}
