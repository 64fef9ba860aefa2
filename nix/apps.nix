# `nix run .#<app>`: one app per experiment folder (read from experiments/, never
# listed by hand), plus regenerate-reports and notebook.
{
  lib,
  callPackage,
  writeShellApplication,
  linuxPackages,
  hyperfine,
  testbed,
  prebuilt,
  experimentsDir,
}:

let
  # An experiment is a folder holding an experiment.toml; parsing it here makes a
  # broken file fail at evaluation, before anything is built.
  experiments = lib.filterAttrs (
    name: type: type == "directory" && builtins.pathExists (experimentsDir + "/${name}/experiment.toml")
  ) (if builtins.pathExists experimentsDir then builtins.readDir experimentsDir else { });
  describe = name: (builtins.fromTOML (builtins.readFile (experimentsDir + "/${name}/experiment.toml")));

  app = description: drv: {
    type = "app";
    program = lib.getExe drv;
    meta = { inherit description; };
  };

  runExperiment =
    name:
    app (describe name).experiment.question or "run the ${name} experiment" (writeShellApplication {
      name = "experiment-${name}";
      runtimeInputs = [
        testbed
        linuxPackages.perf
        hyperfine
      ];
      text = ''
        export TESTBED_PREBUILT=${prebuilt}
        exec testbed run ${lib.escapeShellArg name} "$@"
      '';
    });

  # These write into the caller's checkout, so they insist on being run from one.
  inCheckout =
    name: description: pkg: command:
    app description (writeShellApplication {
      inherit name;
      runtimeInputs = [ pkg ];
      text = ''
        if [ ! -f analysis/pyproject.toml ] || [ ! -d reports ]; then
          echo "${name}: run this from the root of a zlink testbed checkout (no ./analysis/pyproject.toml or ./reports here)" >&2
          exit 2
        fi
        TESTBED_ROOT="$PWD" exec testbed ${command} "$@"
      '';
    });
  notebookTestbed = callPackage ./testbed.nix {
    extras = [
      "dev"
      "notebook"
    ];
  };
in
lib.mapAttrs' (name: _: lib.nameValuePair "experiment-${name}" (runExperiment name)) experiments
// {
  regenerate-reports = inCheckout "regenerate-reports" "re-render every report under reports/" testbed "regenerate";
  notebook = inCheckout "notebook" "open Jupyter Lab with the analysis kernel" notebookTestbed "notebook";
}
// lib.optionalAttrs (experiments ? batch-sweep) { default = runExperiment "batch-sweep"; }
