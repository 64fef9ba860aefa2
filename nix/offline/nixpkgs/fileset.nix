# A small lib.fileset: the functions this repository uses, with real nixpkgs names
# and meanings. A file set is a predicate over (absolute path string, type); for a
# directory it answers "may hold included files", so the copy descends into it.
{ hasPrefix, hasSuffix }:
let
  under = dir: s: s == dir || hasPrefix (dir + "/") s;
  above = dir: s: hasPrefix (s + "/") dir;
  make = includes: {
    _type = "fileset";
    inherit includes;
  };
  coerce =
    x:
    if builtins.isAttrs x && x._type or null == "fileset" then
      x
    else if builtins.pathExists x then
      make (s: t: under (toString x) s || (t == "directory" && above (toString x) s))
    else
      throw "lib.fileset: path ${toString x} does not exist (lib.fileset.maybeMissing if fine)";
  empty = make (_: _: false);
in
{
  maybeMissing = p: if builtins.pathExists p then coerce p else empty;
  unions = sets: make (s: t: builtins.any (set: (coerce set).includes s t) sets);
  difference =
    a: b:
    make (s: t: (coerce a).includes s t && (t == "directory" || !(coerce b).includes s t));
  fileFilter =
    pred: dir:
    make (
      s: t:
      if t == "directory" then
        under (toString dir) s || above (toString dir) s
      else
        under (toString dir) s
        && pred rec {
          name = baseNameOf s;
          type = t;
          hasExt = ext: hasSuffix ".${ext}" name;
        }
    );
  toSource =
    { root, fileset }:
    builtins.path {
      name = "source";
      path = root;
      filter = s: t: (coerce fileset).includes s t;
    };
}
