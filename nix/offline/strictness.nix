# How strict the offline stub is, shown by building through it (check.sh's
# "strictness" step; each attribute is one `nix build -f`). A stub that let the host
# leak in would pass the flake's builds and hide a missing input that real nixpkgs
# would refuse, so each probe fails its build when it sees more than was declared:
# - runCommand: no cc/c++/nm/ld/python3, no folder outside the store on PATH;
# - runCommandCC with cmake and pkg-config declared: the compiler and binutils,
#   exactly those two inputs besides stdenv's own tools, and pkg-config finds no
#   package that was not declared (libsodium.pc only with libsodium declared);
# - zlink's configure with its tests (and an interop prefix, which is what pulls in
#   find_package(Python3)): passes with zlink's inputs, fails without python3.
# - checkPaths: the PATH of the analysis-tests and reports-unchanged checks (their
#   tests run cc and nm), read from nix/checks.nix without building them.
# The `leaky-*` probes put the host's /usr/bin on their own PATH: they must FAIL,
# which shows the probes can see a leak at all (check.sh asserts the reason).
{
  system ? builtins.currentSystem,
}:
let
  lib = import ./nixpkgs/lib.nix;
  pkgs = import ./nixpkgs/pkgs.nix { inherit lib system; };
  inherit (pkgs) cmake pkg-config libsodium;
  when = cond: text: if cond then text else "";
  # A case pattern matching any of the folders (never matching when there are none).
  anyOf =
    dirs: if dirs == [ ] then "/nonexistent-no-folder" else builtins.concatStringsSep "|" dirs;

  # stdenv's own tools in the stub (pkgs.nix: baseTools, ccTools, binutils).
  stdenvBin = [
    "stdenv-base-host"
    "gcc-wrapper-host"
    "binutils-host"
  ];
  probe =
    {
      declared,
      # programs that must be on PATH, and programs that must not
      present,
      absent,
      # stdenv tool folders allowed on PATH
      stdenvAllowed,
      leak ? "",
      pkgConfigSodium ? null,
    }:
    ''
      ${when (leak != "") ''PATH="$PATH:${leak}"''}
      fail() { echo "STRICTNESS FAILED: $*" >&2; exit 1; }
      IFS=: read -r -a dirs <<< "$PATH"
      for d in "''${dirs[@]}"; do
        case "$d" in
          ${anyOf (map (p: "${p}/bin") declared)}) ;;
          ${anyOf (map (n: "/nix/store/*-${n}/bin") stdenvAllowed)}) ;;
          /nix/store/*) fail "a store folder nobody declared on PATH: $d" ;;
          *) fail "a host folder on PATH: $d" ;;
        esac
      done
      for t in ${toString present}; do
        command -v "$t" > /dev/null || fail "declared or stdenv tool $t is missing"
      done
      for t in ${toString absent}; do
        if command -v "$t" > /dev/null; then
          fail "$t found ($(command -v "$t")) but not declared"
        fi
      done
      ${when (pkgConfigSodium == true) ''
        pkg-config --exists libsodium || fail "libsodium declared but pkg-config does not find it"
      ''}
      ${when (pkgConfigSodium == false) ''
        if pkg-config --exists libsodium; then
          where=$(pkg-config --variable=pcfiledir libsodium)
          fail "pkg-config finds libsodium ($where), not declared"
        fi
      ''}
      echo "strict: PATH is ''${#dirs[@]} store folders; present: ${toString present};" \
        "absent: ${toString absent}"
      touch $out
    '';

  noCC = leak: {
    declared = [ ];
    present = [
      "cat"
      "sed"
      "make"
    ];
    absent = [
      "cc"
      "c++"
      "gcc"
      "nm"
      "ld"
      "python3"
    ];
    stdenvAllowed = [ "stdenv-base-host" ];
    inherit leak;
  };
  withCC = leak: sodium: {
    declared = [
      cmake
      pkg-config
    ]
    ++ lib.optional sodium libsodium;
    present = [
      "cc"
      "c++"
      "nm"
      "ld"
      "cmake"
      "pkg-config"
    ];
    absent = [
      "python3"
      "ninja"
      "git"
      "perl"
    ];
    stdenvAllowed = stdenvBin;
    pkgConfigSodium = sodium;
    inherit leak;
  };
  ccProbe =
    name: args:
    pkgs.runCommandCC name { nativeBuildInputs = args.declared; } (probe args);

  headerProbe =
    name: inputs:
    pkgs.runCommandCC name { buildInputs = inputs; } ''
      # asio.hpp preprocessed only (compiling it costs seconds); the rest built and run.
      printf '#include <asio.hpp>\n' | c++ -x c++ -E - -o /dev/null
      printf '#include <vector>\n#include <cstdio>\n' > probe.cpp
      printf 'int main() { std::vector<int> v{1}; return v[0] - 1; }\n' >> probe.cpp
      printf '#include <stdio.h>\n#include <sodium.h>\nint main(void) { return 0; }\n' > probe.c
      c++ probe.cpp -o probe-cpp
      ./probe-cpp
      cc probe.c -o probe-c
      ./probe-c
      echo "strict: asio.hpp and sodium.h found through the declared inputs only"
      touch $out
    '';

  # A libzmq prefix for the configure only: zlink's CMake checks that include/zmq.h and
  # lib/libzmq.so exist (tests/interop/CMakeLists.txt) and builds nothing from it here.
  fakeLibzmq = pkgs.runCommand "libzmq-configure-stand-in" { } ''
    mkdir -p $out/include $out/lib
    touch $out/include/zmq.h $out/lib/libzmq.so
  '';
  # zlink with tests on (as the zlink-tests check), stopped after a successful
  # configure: the configure is what needs Python 3.
  zlinkConfigure =
    args:
    (pkgs.callPackage ../../zlink/package.nix (
      {
        doCheck = true;
        interopLibzmq = fakeLibzmq;
      }
      // args
    )).overrideAttrs
      (_: {
        postConfigure = ''
          mkdir -p $out && cp CMakeCache.txt $out/
          echo "zlink configured with tests (stopped here: only the configure is probed)"
          exit 0
        '';
      });
  # nix/checks.nix as the flake calls it, with the arguments that cannot reach a
  # build's PATH replaced: placeholder strings where the build script names them (the
  # stub's mkDerivation evaluates the script), an error where nothing reads them.
  unused = n: throw "strictness.nix: checks.nix's ${n} is not needed to read a PATH";
  checks = pkgs.callPackage ../checks.nix {
    zlink = unused "zlink";
    baseline = unused "baseline";
    testbed = {
      env = "/placeholder-env";
      rootWithReports = "/placeholder-root";
    };
    prebuilt = "/placeholder-prebuilt";
    nixFiles = ../..;
  };
in
{
  # "NAME STUBPATH" lines of the checks whose tests run cc and nm (nix eval --raw).
  checkPaths = builtins.concatStringsSep "" (
    map (c: "${c} ${checks.${c}.stubPath}\n") [
      "analysis-tests"
      "reports-unchanged"
    ]
  );
  runcommand = pkgs.runCommand "strict-runcommand" { } (probe (noCC ""));
  runcommandcc = ccProbe "strict-runcommandcc" (withCC "" false);
  runcommandcc-sodium = ccProbe "strict-runcommandcc-sodium" (withCC "" true);
  zlink-configure = zlinkConfigure { };
  zlink-configure-no-python = zlinkConfigure { python3 = null; };
  # The compiler searches the C library's and its own headers and the declared inputs'
  # include/, never the host's /usr/include as a whole: with asio and libsodium declared
  # a C++ and a C program including them build and run; without, asio.hpp is not found
  # (the host has it in /usr/include: before cc-wrapper.sh this probe built).
  headers-declared = headerProbe "strict-headers-declared" [
    pkgs.asio
    libsodium
  ];
  headers-undeclared = headerProbe "strict-headers-undeclared" [ ];
  # A leak NOT closed, probed so the check says so on every run: the linker still
  # searches its default folders, so an undeclared host library (libz) links.
  # check.sh requires this to build; if it ever fails, the leak is closed and the
  # README's "still leaking" list is out of date.
  known-leak-linker = pkgs.runCommandCC "strict-known-leak-linker" { } ''
    printf 'const char *zlibVersion(void);\nint main(void) { return !zlibVersion(); }\n' > probe.c
    cc probe.c -lz -o probe
    ./probe
    echo "leak: an undeclared -lz links (the linker's default folders)"
    touch $out
  '';
  # Must fail: they prove the probes above see a host folder on PATH.
  leaky-runcommand = pkgs.runCommand "strict-leaky-runcommand" { } (probe (noCC "/usr/bin"));
  leaky-runcommandcc = ccProbe "strict-leaky-runcommandcc" (withCC "/usr/bin" false);
}
