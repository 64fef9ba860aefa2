# The offline stub's package set: exactly the attributes the flake uses, each named
# as in real nixpkgs (nixos-25.11), backed by the HOST's tools. Building through it
# proves the flake's wiring (names, phases, apps, checks), not hermeticity.
#
# Strict as far as PATH goes: each package exposes only its own programs (symlinks
# to the host's), and a build's PATH holds only what stdenv gives every build (the
# base tools; plus cc and binutils for stdenv.mkDerivation / runCommandCC, not for
# runCommand, as in nixpkgs) and the inputs it declares: a missing python3, cc or nm
# fails here as it would on real Nix. CMake's find_* skip /usr and /usr/local, as
# nixpkgs' patched CMake does; pkg-config reads declared inputs' .pc files only.
# The compiler (cc-wrapper.sh) searches its own headers, the C library's and the
# declared inputs' include/, never /usr/include as a whole. ../strictness.nix proves
# this on every check. Not hidden: the linker's default library folders.
{ lib, system }:
let
  host =
    if builtins.pathExists ./host.json then
      builtins.fromJSON (builtins.readFile ./host.json)
    else
      { };
  # Where the stub's package builders look for the host's programs (check.sh adds the
  # folders of cargo and of the project's cargo-installed tools in host.json).
  hostPath = builtins.concatStringsSep ":" (
    (host.extraPath or [ ])
    ++ [
      "/usr/local/bin"
      "/usr/bin"
      "/bin"
      # Debian's daemons (slurmctld, slurmd, munged) are only in /usr/sbin.
      "/usr/sbin"
    ]
  );

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
      # Debian packages whose every /usr/bin and /bin program is exposed.
      debs ? [ ],
      headers ? [ ],
      libs ? [ ],
      # pkg-config files (NAME.pc) found in the host's pkgconfig folders.
      pcs ? [ ],
      hook ? null,
    }:
    withAttrs
      (derivation {
        name = "${pname}-host";
        inherit system pname;
        builder = "/bin/bash";
        PATH = hostPath;
        args = [ ./host-package.sh ];
        bins = toString bins;
        debs = toString debs;
        headers = toString headers;
        libs = toString libs;
        pcs = toString pcs;
        hook = if hook == null then "" else hook;
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

  # stdenv's own tools: what every nixpkgs build has on PATH without declaring it
  # (stdenvNoCC's coreutils, findutils, diffutils, sed, grep, awk, tar, gzip, bzip2,
  # xz, make, patch, bash), and the C/C++ compiler with binutils (stdenv.cc).
  baseTools = hostPackage {
    pname = "stdenv-base";
    debs = [
      "coreutils"
      "findutils"
      "diffutils"
      "sed"
      "grep"
      "tar"
      "gzip"
      "bzip2"
      "xz-utils"
      "make"
      "patch"
      "bash"
    ];
    bins = [ "awk" ];
  };
  binutils = hostPackage {
    pname = "binutils";
    bins = [
      "as"
      "ld"
      "nm"
      "ar"
      "ranlib"
      "objdump"
      "objcopy"
      "readelf"
      "strip"
      "strings"
      "size"
      "c++filt"
      "addr2line"
    ];
  };
  # The host's gcc behind a wrapper (cc-wrapper.sh) that searches only the compiler's
  # own headers, the C library's (these Debian packages' files) and NIX_CFLAGS_COMPILE:
  # never the host's /usr/include as a whole. Its folder name is what strictness.nix
  # and check.sh look for (gcc-wrapper-host).
  ccTools = withAttrs (derivation {
    name = "gcc-wrapper-host";
    pname = "gcc-wrapper";
    inherit system;
    builder = "/bin/bash";
    PATH = hostPath;
    args = [ ./cc-wrapper.sh ];
    libcDebs = toString [
      "libc6-dev"
      "linux-libc-dev"
      "libcrypt-dev"
    ];
  }) {
    pname = "gcc-wrapper";
    version = "host";
    meta.mainProgram = "gcc";
  };

  mkDerivationWith =
    { withCC }:
    fnOrAttrs:
    let
      attrsFn = if builtins.isFunction fnOrAttrs then fnOrAttrs else (_: fnOrAttrs);
      final = attrsFn final;
      keep = n: v: !(builtins.isFunction v) && n != "passthru" && n != "meta";
      env = lib.filterAttrs keep final;
      name = final.name or "${final.pname}-${final.version}";
      stdenvTools = [ baseTools ] ++ lib.optionals withCC [
        ccTools
        binutils
      ];
      drv = derivation (
        env
        // {
          inherit name system;
          builder = "/bin/bash";
          args = [ ./builder.sh ];
          stubPath = builtins.concatStringsSep ":" (map (p: "${p}/bin") stdenvTools);
        }
      );
    in
    drv
    // (final.passthru or { })
    // {
      meta = final.meta or { };
      passthru = final.passthru or { };
      overrideAttrs = f: mkDerivationWith { inherit withCC; } (final // f final);
    }
    // lib.filterAttrs (n: _: n == "pname" || n == "version") final;
  mkDerivation = mkDerivationWith { withCC = true; };
  mkDerivationNoCC = mkDerivationWith { withCC = false; };

  stdenv = {
    inherit mkDerivation;
    hostPlatform = {
      inherit system;
      isLinux = true;
    };
  };

  # As in nixpkgs: runCommand has no compiler (stdenvNoCC), runCommandCC has one.
  runCommand =
    name: env: buildCommand:
    mkDerivationNoCC ({ inherit name buildCommand; } // env);
  runCommandCC =
    name: env: buildCommand:
    mkDerivation ({ inherit name buildCommand; } // env);

  writeText =
    name: text:
    mkDerivationNoCC {
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
    mkDerivationNoCC {
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
        ${shellcheckCommand} $out/bin/${name}
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
        ''
          echo "offline stub: cannot download github:${owner}/${repo}/${
            if tag != null then tag else rev
          } (hash ${hash}); seed the store with the verified tree (check.sh does)" >&2
          exit 1
        ''
      ];
      outputHashMode = "recursive";
      outputHashAlgo = "sha256";
      outputHash = hash;
    };

  # `nix develop` runs the shell derivation's builder with its own get-env.sh and
  # takes the environment from it: PATH is what this derivation declares (the
  # packages, then stdenv's tools with the compiler, as nixpkgs' mkShell has).
  mkShell =
    {
      packages ? [ ],
      shellHook ? "",
      ...
    }:
    mkDerivation {
      name = "nix-shell";
      # get-env.sh writes the environment to each of $outputs.
      outputs = [ "out" ];
      nativeBuildInputs = packages;
      # What nixpkgs' setup hooks do on entering the shell: the packages' headers for
      # the compiler wrapper, their .pc files (and no host ones) for pkg-config.
      shellHook = ''
        NIX_CFLAGS_COMPILE="" PKG_CONFIG_LIBDIR=""
        for p in $nativeBuildInputs; do
          if [ -d "$p/include" ]; then
            NIX_CFLAGS_COMPILE="$NIX_CFLAGS_COMPILE -isystem $p/include"
          fi
          for d in "$p/lib/pkgconfig" "$p/share/pkgconfig"; do
            if [ -d "$d" ]; then
              PKG_CONFIG_LIBDIR="''${PKG_CONFIG_LIBDIR:+$PKG_CONFIG_LIBDIR:}$d"
            fi
          done
        done
        export NIX_CFLAGS_COMPILE PKG_CONFIG_LIBDIR
      ''
      + shellHook;
      PATH = builtins.concatStringsSep ":" (
        map (p: "${p}/bin") (
          packages
          ++ [
            ccTools
            binutils
            baseTools
          ]
        )
      );
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
  python3 =
    hostPackage {
      pname = "python3";
      bins = [ "python3" ];
    }
    // {
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

  # Stand-ins for the formatter: real nixfmt cannot be had offline. They check a few
  # rules of nixfmt's style (nixfmt_standin.py says which) and say so on every run;
  # they cannot format. The host's python3 runs it: stub plumbing, like the symlinks.
  nixfmt =
    writeShellApplication {
      name = "nixfmt";
      text = ''
        exec /usr/bin/python3 ${./nixfmt_standin.py} "$@"
      '';
    }
    // {
      pname = "nixfmt";
      version = "offline-stand-in";
    };
  # nixfmt-tree is treefmt running nixfmt over the tree; `nix fmt -- --ci` checks.
  nixfmt-tree =
    writeShellApplication {
      name = "treefmt";
      runtimeInputs = [ baseTools ];
      text = ''
        if [ "''${1:-}" != "--ci" ]; then
          echo "treefmt (offline stand-in): cannot format; run with --ci to check" >&2
          exit 2
        fi
        find . -name '*.nix' -not -path './.git/*' -print0 \
          | xargs -0 /usr/bin/python3 ${./nixfmt_standin.py} --check
      '';
    }
    // {
      pname = "nixfmt-tree";
      version = "offline-stand-in";
    };
  shellcheck = hostPackage {
    pname = "shellcheck";
    bins = [ "shellcheck" ];
  };
  shellcheckCommand = "${shellcheck}/bin/shellcheck";

  pkgs = {
    inherit
      lib
      stdenv
      mkDerivation
      runCommand
      runCommandCC
      writeText
      writeShellApplication
      fetchFromGitHub
      mkShell
      python3
      python3Packages
      nixfmt
      nixfmt-tree
      binutils
      shellcheck
      ;
    callPackage = callPackageWith pkgs;
    # `nix develop` starts its shell with the flake's nixpkgs#bashInteractive (and
    # fails without one when the caller's PATH has no bash).
    bashInteractive = hostPackage {
      pname = "bash-interactive";
      bins = [ "bash" ];
    };
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
    # As in nixpkgs, `gcc` is the wrapped compiler: stdenv's own.
    gcc = ccTools;
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
    perf = hostPackage {
      pname = "perf";
      bins = [ "perf" ];
    };
    # inferno: installed by ./testbed setup with cargo into build/tools/bin (host.json
    # puts that folder on the stub's host path).
    inferno = hostPackage {
      pname = "inferno";
      bins = [
        "inferno-collapse-perf"
        "inferno-flamegraph"
      ];
    };
    # toxiproxy: built by ./testbed setup from its pinned Go module into build/tools/bin
    # (on the host path, as inferno).
    toxiproxy = hostPackage {
      pname = "toxiproxy";
      bins = [ "toxiproxy-server" ];
    };
    cargo = hostPackage {
      pname = "cargo";
      bins = [ "cargo" ];
    };
    iperf3 = hostPackage {
      pname = "iperf3";
      bins = [ "iperf3" ];
    };
    strace = hostPackage {
      pname = "strace";
      bins = [ "strace" ];
    };
    # ccache and a single-node Slurm: ./testbed setup requires them (bisect rebuilds;
    # the Slurm test's private cluster).
    ccache = hostPackage {
      pname = "ccache";
      bins = [ "ccache" ];
    };
    slurm = hostPackage {
      pname = "slurm";
      bins = [
        "sbatch"
        "squeue"
        "scancel"
        "sinfo"
        "slurmctld"
        "slurmd"
      ];
    };
    munge = hostPackage {
      pname = "munge";
      bins = [
        "munge"
        "munged"
      ];
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
      # Debian's libgtest-dev: GoogleTest without GoogleMock (zlink uses no gmock).
      headers = [ "gtest" ];
      libs = [
        "libgtest.a"
        "libgtest_main.a"
      ];
    };
    libsodium = hostPackage {
      pname = "libsodium";
      headers = [
        "sodium.h"
        "sodium"
      ];
      libs = [ "libsodium.so" ];
      pcs = [ "libsodium.pc" ];
    };
  };
in
pkgs
