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
  # The sources the CLI runs from. reports/ (hundreds of MB of published raw data) is
  # not in it: `testbed run` never reads it, and the apps that regenerate reports or
  # open notebooks point TESTBED_ROOT at the caller's checkout. The checks that read
  # the published reports use rootWithReports.
  sources = [
    ../testbed
    ../analysis
    # The whole pins folder (libzmq-suite expectations too) and the library and
    # bench sources, whose hashes key the library table's builds.
    ../baselines
    ../zlink
    ../bench
    ../docs
    (lib.fileset.maybeMissing ../experiments)
    (lib.fileset.maybeMissing ../notebooks)
  ];
  root = lib.fileset.toSource {
    root = ../.;
    fileset = lib.fileset.unions sources;
  };
  rootWithReports = lib.fileset.toSource {
    root = ../.;
    fileset = lib.fileset.unions (sources ++ [ (lib.fileset.maybeMissing ../reports) ]);
  };
in
writeShellApplication {
  name = "testbed";
  runtimeInputs = [ coreutils ];
  passthru = { inherit env root rootWithReports; };
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
