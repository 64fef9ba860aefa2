# The TESTBED_PREBUILT file (docs/data-formats.md §2): registered library name ->
# Nix-built prefix and the bench binaries built against it. With it, the testbed
# builds nothing itself.
{
  writeText,
  libraries,
  benches,
}:

writeText "testbed-prebuilt.json" (
  builtins.toJSON {
    libraries = builtins.mapAttrs (name: prefix: {
      prefix = "${prefix}";
      bench_dir = "${benches.${name}}/bin";
    }) libraries;
  }
)
