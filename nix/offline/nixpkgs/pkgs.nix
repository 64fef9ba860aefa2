# The offline stub's package set: exactly the attributes the flake uses, each named
# as in real nixpkgs (nixos-25.11), backed by the HOST's tools. Building through it
# proves the flake's wiring (names, phases, apps, checks), not hermeticity.
{ lib, system }:
let
  host =
    if builtins.pathExists ./host.json then builtins.fromJSON (builtins.readFile ./host.json) else { };
  hostPath = "/usr/local/bin:/usr/bin:/bin";

  # A real derivation plus the attributes real packages carry.
  withAttrs =
    drv: extra:
    drv
    // {
      meta = { };
      passthru = { };
    }
    // extra;

  # A host program or library exposed as a store path (symlinks); fails clearly
  # when the host lacks it.
  hostPackage =
    {
      pname,
      bins ? [ ],
      headers ? [ ],
      libs ? [ ],
      hook ? null,
    }:
    withAttrs
      (derivation {
        name = "${pname}-host";
        inherit system;
        builder = "/bin/bash";
        PATH = hostPath;
        args = [
          "-ec"
          ''
            missing() { echo "offline stub: the host has no $1 for ${pname}; install it (./testbed setup or apt-get)" >&2; exit 1; }
            mkdir -p $out/bin $out/include $out/lib $out/nix-support
            for b in ${toString bins}; do p=$(command -v "$b") || missing "$b"; ln -s "$p" "$out/bin/$b"; done
            for h in ${toString headers}; do test -e "/usr/include/$h" || missing "/usr/include/$h"; ln -s "/usr/include/$h" "$out/include/$h"; done
            for l in ${toString libs}; do
              p=$(ls /usr/lib/*/"$l" /usr/lib/"$l" 2>/dev/null | head -n1) || true
              test -n "$p" || missing "$l"; ln -s "$p" "$out/lib/$l"
            done
            ${if hook == null then "" else "cp ${hook} $out/nix-support/setup-hook"}
          ''
        ];
      })
      {
        inherit pname;
        version = "host";
        meta.mainProgram = builtins.head (bins ++ [ pname ]);
      };

  callPackageWith =
    autoArgs: fn: args:
    let
      f = if builtins.isFunction fn then fn else import fn;
      result = f (builtins.intersectAttrs (builtins.functionArgs f) autoArgs // args);
    in
    if builtins.isAttrs result then
      result
      // {
        override = newArgs: callPackageWith autoArgs fn (args // newArgs);
        overrideDerivation = _: throw "offline stub: overrideDerivation is not provided";
      }
    else
      result;

  mkDerivation =
    fnOrAttrs:
    let
      attrsFn = if builtins.isFunction fnOrAttrs then fnOrAttrs else (_: fnOrAttrs);
      final = attrsFn final;
      env = lib.filterAttrs (n: v: !(builtins.isFunction v) && n != "passthru" && n != "meta") final;
      name = final.name or "${final.pname}-${final.version}";
      drv = derivation (
        env
        // {
          inherit name system;
          builder = "/bin/bash";
          args = [ ./builder.sh ];
        }
      );
    in
    drv
    // (final.passthru or { })
    // {
      meta = final.meta or { };
      passthru = final.passthru or { };
      overrideAttrs = f: mkDerivation (final // f final);
    }
    // lib.filterAttrs (n: _: n == "pname" || n == "version") final;

  stdenv = {
    inherit mkDerivation;
    hostPlatform = {
      inherit system;
      isLinux = true;
    };
  };

  runCommand =
    name: env: buildCommand:
    mkDerivation ({ inherit name buildCommand; } // env);

  writeText =
    name: text:
    mkDerivation {
      inherit name text;
      passAsFile = [ "text" ];
      buildCommand = ''cp "$textPath" "$out"'';
    };

  # As nixpkgs: strict bash, runtimeInputs on PATH, checked with shellcheck (when
  # the host has it, which check.sh arranges) or at least `bash -n`.
  writeShellApplication =
    {
      name,
      text,
      runtimeInputs ? [ ],
      meta ? { },
      passthru ? { },
    }:
    mkDerivation {
      inherit name;
      script = ''
        #!/bin/bash
        set -o errexit
        set -o nounset
        set -o pipefail

        export PATH="${lib.concatStringsSep ":" (map (p: "${p}/bin") runtimeInputs)}:$PATH"

        ${text}
      '';
      passAsFile = [ "script" ];
      buildCommand = ''
        mkdir -p $out/bin
        cp "$scriptPath" $out/bin/${name}
        chmod +x $out/bin/${name}
        if command -v shellcheck > /dev/null; then shellcheck $out/bin/${name}; else bash -n $out/bin/${name}; fi
      '';
      passthru = passthru;
      meta = {
        mainProgram = name;
      }
      // meta;
    };

  # No downloads offline: the output must already be in the store, put there by
  # check.sh with `nix-store --add-fixed --recursive sha256`. The hash is checked by
  # Nix itself: a wrong pin gives a different store path and this builder fails.
  fetchFromGitHub =
    {
      owner,
      repo,
      tag ? null,
      rev ? null,
      hash,
      name ? "source",
    }:
    derivation {
      inherit name system;
      builder = "/bin/bash";
      args = [
        "-c"
        "echo 'offline stub: cannot download github:${owner}/${repo}/${if tag != null then tag else rev} (hash ${hash}); seed the store with the verified tree (nix/offline/check.sh does)' >&2; exit 1"
      ];
      outputHashMode = "recursive";
      outputHashAlgo = "sha256";
      outputHash = hash;
    };

  mkShell =
    {
      packages ? [ ],
      shellHook ? "",
      ...
    }:
    mkDerivation {
      name = "nix-shell";
      nativeBuildInputs = packages;
      inherit shellHook;
      buildCommand = "echo 'This derivation is not meant to be built, aborting' >&2; exit 1";
    };

  python3Packages = lib.genAttrs [
    "ipykernel"
    "jupyterlab"
    "matplotlib"
    "nbclient"
    "nbconvert"
    "nbformat"
    "numpy"
    "pandas"
    "pyarrow"
    "pytest"
    "rich"
    "ruff"
    "scipy"
  ] (pname: { inherit pname; });

  # withPackages: the host's Python (the project's .venv, named in host.json by
  # check.sh), after checking each requested distribution is really installed there.
  python3 = hostPackage { pname = "python3"; bins = [ "python3" ]; } // {
    pkgs = python3Packages;
    withPackages =
      f:
      runCommand "python3-env" { } ''
        py=${host.python or "/usr/bin/python3"}
        for d in ${toString (map (p: p.pname) (f python3Packages))}; do
          "$py" -c "import importlib.metadata as m, sys; m.version(sys.argv[1])" "$d" \
            || { echo "offline stub: $py has no Python distribution '$d'" >&2; exit 1; }
        done
        mkdir -p $out/bin
        printf '#!/bin/sh\nexec %s "$@"\n' "$py" > $out/bin/python
        chmod +x $out/bin/python
        ln -s python $out/bin/python3
      '';
  };

  # Stand-in for the formatter: real nixfmt cannot be had offline. It checks only
  # that each file parses and has clean whitespace, and says so on every run.
  nixfmt =
    writeShellApplication {
      name = "nixfmt";
      text = ''
        echo "nixfmt (offline stand-in): checks parsing and whitespace only; real nixfmt was NOT run" >&2
        if [ "''${1:-}" != "--check" ]; then echo "the offline stand-in cannot format files" >&2; exit 2; fi
        shift
        status=0
        for f in "$@"; do
          /usr/bin/nix-instantiate --parse "$f" > /dev/null || { echo "$f: does not parse" >&2; status=1; }
          if grep -nP '\t| +$' "$f" >&2; then echo "$f: tab or trailing whitespace" >&2; status=1; fi
          if [ -n "$(tail -c1 "$f")" ]; then echo "$f: no final newline" >&2; status=1; fi
        done
        exit "$status"
      '';
    }
    // {
      pname = "nixfmt";
      version = "offline-stand-in";
    };
  pkgs = {
    inherit
      lib
      stdenv
      mkDerivation
      runCommand
      writeText
      writeShellApplication
      fetchFromGitHub
      mkShell
      python3
      python3Packages
      nixfmt
      ;
    callPackage = callPackageWith pkgs;
    cmake = hostPackage {
      pname = "cmake";
      bins = [
        "cmake"
        "ctest"
      ];
      hook = ./hooks/cmake.sh;
    };
    ninja = hostPackage {
      pname = "ninja";
      bins = [ "ninja" ];
      hook = ./hooks/ninja.sh;
    };
    pkg-config = hostPackage {
      pname = "pkg-config";
      bins = [ "pkg-config" ];
    };
    coreutils = hostPackage {
      pname = "coreutils";
      bins = [
        "cat"
        "cut"
        "dirname"
        "sha256sum"
      ];
    };
    gcc = hostPackage {
      pname = "gcc";
      bins = [
        "gcc"
        "g++"
      ];
    };
    clang = hostPackage {
      pname = "clang";
      bins = [
        "clang"
        "clang++"
      ];
    };
    valgrind = hostPackage {
      pname = "valgrind";
      bins = [ "valgrind" ];
    };
    hyperfine = hostPackage {
      pname = "hyperfine";
      bins = [ "hyperfine" ];
    };
    jq = hostPackage {
      pname = "jq";
      bins = [ "jq" ];
    };
    linuxPackages.perf = hostPackage {
      pname = "perf";
      bins = [ "perf" ];
    };
    asio = hostPackage {
      pname = "asio";
      headers = [
        "asio.hpp"
        "asio"
      ];
    };
    gtest = hostPackage {
      pname = "gtest";
      headers = [ "gtest" ];
    };
    libsodium = hostPackage {
      pname = "libsodium";
      headers = [
        "sodium.h"
        "sodium"
      ];
      libs = [ "libsodium.so" ];
    };
  };
in
pkgs
