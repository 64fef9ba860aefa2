# The bench binaries for every library, one folder per registered library name.
{
  lib,
  runCommand,
  benches,
}:

runCommand "bench-all" { } ''
  mkdir -p $out
  ${lib.concatStringsSep "\n" (
    lib.mapAttrsToList (name: bench: "ln -s ${bench}/bin $out/${lib.escapeShellArg name}") benches
  )}
''
