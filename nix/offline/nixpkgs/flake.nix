# Offline stand-in for the nixpkgs flake (see ../README.md): `lib` and
# `legacyPackages.<system>` with real nixpkgs attribute names, backed by host tools.
{
  outputs =
    { self }:
    let
      lib = import ./lib.nix;
    in
    {
      inherit lib;
      legacyPackages = lib.genAttrs [
        "x86_64-linux"
        "aarch64-linux"
      ] (
        system: import ./pkgs.nix { inherit lib system; }
      );
    };
}
