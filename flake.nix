{
  description = "zlink testbed: zlink against libzmq 4.3.5, built and benchmarked reproducibly";

  inputs.nixpkgs.url = "github:NixOS/nixpkgs/nixos-25.11";

  # Only wiring: every package expression lives beside what it builds or under nix/.
  outputs =
    { self, nixpkgs }:
    let
      inherit (nixpkgs) lib;
      systems = [
        "x86_64-linux"
        "aarch64-linux"
      ];
      # The libzmq pin is read from the file the non-Nix path reads too.
      pins = builtins.fromTOML (builtins.readFile ./baselines/pins.toml);

      perSystem =
        system:
        let
          pkgs = nixpkgs.legacyPackages.${system};
          # callPackage adds override functions to any attribute set it returns;
          # an attribute set of apps or checks must hold nothing else.
          callSet =
            path: args:
            removeAttrs (pkgs.callPackage path args) [
              "override"
              "overrideDerivation"
            ];
          baseline = name: pkgs.callPackage ./baselines/package.nix { inherit pins name; };
          flavours = lib.genAttrs (builtins.attrNames pins.flavours) baseline;
          # Registered library name -> prefix; the names are the testbed's own.
          libraries = flavours // {
            zlink = pkgs.callPackage ./zlink/package.nix { };
            zlink-nocurve = pkgs.callPackage ./zlink/package.nix { withCurve = false; };
          };
          benches = builtins.mapAttrs (
            _: library: pkgs.callPackage ./bench/package.nix { inherit library; }
          ) libraries;
          # The arms bench: built once, against the reference library's zmq.h.
          benchArms = pkgs.callPackage ./bench/package.nix {
            library = libraries."libzmq-4.3.5";
            arms = true;
          };
          testbed = pkgs.callPackage ./nix/testbed.nix { };
          # TESTBED_PREBUILT for the given registered names only (an experiment's apps
          # build what the experiment uses, not every flavour).
          prebuiltFor =
            names:
            pkgs.callPackage ./nix/prebuilt.nix {
              libraries = lib.filterAttrs (name: _: builtins.elem name names) libraries;
              inherit benches benchArms;
            };
          prebuilt = prebuiltFor (builtins.attrNames libraries);
          byCurve =
            curve: lib.findFirst (l: l.passthru.curve == curve) null (builtins.attrValues flavours);
        in
        {
          packages = {
            inherit (libraries) zlink;
            inherit testbed;
            libzmq-baseline = byCurve true;
            libzmq-baseline-nocurve = byCurve false;
            bench = pkgs.callPackage ./nix/bench-all.nix { inherit benches; };
            bench-arms = benchArms;
            default = testbed;
          };
          apps = callSet ./nix/apps.nix {
            inherit testbed prebuiltFor;
            experimentsDir = ./experiments;
          };
          devShells.default = pkgs.callPackage ./nix/devshell.nix { inherit testbed prebuilt; };
          checks = callSet ./nix/checks.nix {
            inherit testbed prebuilt;
            inherit (libraries) zlink;
            baseline = byCurve true;
            nixFiles = ./.;
          };
          # `nix fmt` formats the whole tree (nixfmt through treefmt; plain nixfmt would
          # read stdin under `nix fmt` on Nix >= 2.25).
          formatter = pkgs.nixfmt-tree;
        };

      each = attr: lib.genAttrs systems (system: (perSystem system).${attr});
    in
    {
      packages = each "packages";
      apps = each "apps";
      devShells = each "devShells";
      checks = each "checks";
      formatter = each "formatter";
    };
}
