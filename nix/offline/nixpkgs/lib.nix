# The part of nixpkgs' `lib` this repository's flake uses, so the flake evaluates
# without the real nixpkgs. Every name here is a real nixpkgs lib name with the
# same meaning; a name real nixpkgs lacks must never be added.
let
  nameValuePair = name: value: { inherit name value; };
  hasPrefix = pre: s: builtins.substring 0 (builtins.stringLength pre) s == pre;
  hasSuffix =
    suf: s:
    let
      ls = builtins.stringLength s;
      lf = builtins.stringLength suf;
    in
    lf <= ls && builtins.substring (ls - lf) lf s == suf;
  escapeShellArg = s: "'${builtins.replaceStrings [ "'" ] [ "'\\''" ] (toString s)}'";
  upper = builtins.genList (i: builtins.substring i 1 "ABCDEFGHIJKLMNOPQRSTUVWXYZ") 26;
  lower = builtins.genList (i: builtins.substring i 1 "abcdefghijklmnopqrstuvwxyz") 26;
in
{
  inherit nameValuePair hasPrefix hasSuffix escapeShellArg;
  inherit (builtins) concatStringsSep;
  fileset = import ./fileset.nix { inherit hasPrefix hasSuffix; };
  genAttrs = names: f: builtins.listToAttrs (map (n: nameValuePair n (f n)) names);
  filterAttrs =
    pred: set:
    builtins.listToAttrs (
      builtins.concatMap (n: if pred n set.${n} then [ (nameValuePair n set.${n}) ] else [ ]) (
        builtins.attrNames set
      )
    );
  mapAttrs' = f: set: builtins.listToAttrs (map (n: f n set.${n}) (builtins.attrNames set));
  mapAttrsToList = f: set: map (n: f n set.${n}) (builtins.attrNames set);
  findFirst =
    pred: default: list:
    let
      hits = builtins.filter pred list;
    in
    if hits == [ ] then default else builtins.head hits;
  optionals = cond: list: if cond then list else [ ];
  optional = cond: x: if cond then [ x ] else [ ];
  optionalAttrs = cond: set: if cond then set else { };
  boolToString = b: if b then "true" else "false";
  toLower = builtins.replaceStrings upper lower;
  getExe = drv: "${drv}/bin/${drv.meta.mainProgram}";
  cmakeBool = name: value: "-D${name}:BOOL=${if value then "TRUE" else "FALSE"}";
  cmakeFeature = name: value: "-D${name}:STRING=${value}";
  licenses.mpl20 = {
    spdxId = "MPL-2.0";
    shortName = "mpl20";
  };
  platforms.linux = [
    "x86_64-linux"
    "aarch64-linux"
  ];
}
