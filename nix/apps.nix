# `nix run .#<app>`: one app per experiment folder (read from experiments/, never
# listed by hand), plus regenerate-reports and notebook.
{
  lib,
  callPackage,
  writeShellApplication,
  perf,
  hyperfine,
  inferno,
  toxiproxy,
  testbed,
  # names -> the TESTBED_PREBUILT file listing only those libraries (nix/prebuilt.nix)
  prebuiltFor,
  experimentsDir,
}:

let
  # An experiment is a folder holding an experiment.toml; parsing it here makes a
  # broken file fail at evaluation, before anything is built.
  hasToml = name: builtins.pathExists (experimentsDir + "/${name}/experiment.toml");
  experiments = lib.filterAttrs (name: type: type == "directory" && hasToml name) (
    if builtins.pathExists experimentsDir then builtins.readDir experimentsDir else { }
  );
  describe =
    name: builtins.fromTOML (builtins.readFile (experimentsDir + "/${name}/experiment.toml"));

  # The registered libraries an experiment uses ([libraries] use, aliases resolved):
  # its app builds those and their benches only, not every flavour.
  librariesOf =
    name:
    let
      libraries = (describe name).libraries or { };
      aliases = libraries.aliases or { };
    in
    map (entry: aliases.${entry} or entry) (libraries.use or [ ]);

  app = description: drv: {
    type = "app";
    program = lib.getExe drv;
    meta = { inherit description; };
  };

  runExperiment =
    name:
    app (describe name).experiment.question or "run the ${name} experiment" (writeShellApplication {
      name = "experiment-${name}";
      # perf records the profiles, inferno draws their flamegraphs, toxiproxy is the
      # faults experiments' proxy.
      runtimeInputs = [
        testbed
        perf
        hyperfine
        inferno
        toxiproxy
      ];
      text = ''
        export TESTBED_PREBUILT=${prebuiltFor (librariesOf name)}
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
          echo "${name}: run this from the root of a zlink testbed checkout" \
            "(no ./analysis/pyproject.toml or ./reports here)" >&2
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
  regenerate-reports =
    inCheckout "regenerate-reports" "re-render every report under reports/" testbed
      "regenerate";
  notebook =
    inCheckout "notebook" "open Jupyter Lab with the analysis kernel" notebookTestbed
      "notebook";
}
// lib.optionalAttrs (experiments ? batch-sweep) { default = runExperiment "batch-sweep"; }
