# The testbed CLI as a package: the Python sources plus what it reads at run time
# (experiments, reports, notebooks, pins), run by the ./testbed shim with a Nix-built
# Python environment instead of the project's .venv.
{
  lib,
  callPackage,
  writeShellApplication,
  coreutils,
  extras ? [ "dev" ],
}:

let
  env = callPackage ./python-env.nix { inherit extras; };
  root = lib.fileset.toSource {
    root = ../.;
    fileset = lib.fileset.unions [
      ../testbed
      ../analysis
      # The whole pins folder (libzmq-suite expectations too) and the library and
      # bench sources, whose hashes key the library table's builds.
      ../baselines
      ../zlink
      ../bench
      ../docs
      (lib.fileset.maybeMissing ../experiments)
      (lib.fileset.maybeMissing ../reports)
      (lib.fileset.maybeMissing ../notebooks)
    ];
  };
in
writeShellApplication {
  name = "testbed";
  runtimeInputs = [ coreutils ];
  passthru = { inherit env root; };
  # TESTBED_ROOT may point at a checkout (the apps that write reports do that);
  # results and build folders go to the caller's working directory by default.
  text = ''
    export TESTBED_PYTHON=${env}/bin/python
    export PYTHONPATH=${root}/analysis''${PYTHONPATH:+:$PYTHONPATH}
    export TESTBED_ROOT="''${TESTBED_ROOT:-${root}}"
    export TESTBED_RESULTS_DIR="''${TESTBED_RESULTS_DIR:-$PWD/results}"
    export TESTBED_BUILD_DIR="''${TESTBED_BUILD_DIR:-$PWD/build}"
    exec ${root}/testbed "$@"
  '';
}
