# The testbed's Python environment, from analysis/pyproject.toml: the one Python
# dependency list, which the ./testbed shim (uv) reads too.
{
  lib,
  python3,
  # Which [project.optional-dependencies] groups to add to [project].dependencies.
  extras ? [ ],
}:

let
  project = (builtins.fromTOML (builtins.readFile ../analysis/pyproject.toml)).project;
  requirements =
    project.dependencies ++ builtins.concatMap (e: project.optional-dependencies.${e}) extras;

  # PyPI name -> python3Packages attribute, only where the two differ. Version
  # bounds are not enforced here: the pinned nixpkgs decides the versions.
  attrFor = {
  };

  # "pandas>=2.0" -> "pandas"; PyPI names compare case- and separator-insensitively.
  pypiName =
    req:
    lib.toLower (
      builtins.replaceStrings
        [
          "_"
          "."
        ]
        [
          "-"
          "-"
        ]
        (
        builtins.head (builtins.match "[[:space:]]*([A-Za-z0-9._-]+).*" req)
      )
    );
  attrName = name: attrFor.${name} or name;

  # Left out of the Nix environment: the pinned clang-format wheel serves `./testbed
  # test`'s clang-format suite, which no Nix check runs (nixpkgs has no such Python
  # package, and its clang-format is another version that would format differently).
  notInNix = [ "clang-format" ];
  wanted = builtins.filter (req: !(builtins.elem (pypiName req) notInNix)) requirements;
in
python3.withPackages (ps: map (req: ps.${attrName (pypiName req)}) wanted)
