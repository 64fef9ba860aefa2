# The TESTBED_PREBUILT file (docs/data-formats.md §2): registered library name ->
# Nix-built prefix and the bench binaries built against it, and the arms bench's
# binaries (arms_dir). With it, the testbed builds nothing itself.
{
  writeText,
  libraries,
  benches,
  benchArms,
}:

writeText "testbed-prebuilt.json" (
  builtins.toJSON {
    libraries = builtins.mapAttrs (name: prefix: {
      prefix = "${prefix}";
      bench_dir = "${benches.${name}}/bin";
    }) libraries;
    arms_dir = "${benchArms}/bin";
  }
)
