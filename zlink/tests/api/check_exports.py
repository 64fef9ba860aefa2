#!/usr/bin/env python3
"""zlink's zmq.h and libzlink.so against a real libzmq 4.3.5 install, mechanically.

Three checks, each printing what differs and failing the test when anything does:

1. exports: `nm -D --defined-only` of libzmq.so, zmq_* only, equals the checked-in
   libzmq-4.3.5-exports.txt (so exports_test.cpp tests against the real list), and
   every one of them is defined in libzlink.so.
2. constants: every object-like macro libzmq's zmq.h defines (without the draft
   API) is defined by zlink's zmq.h with the same integer value.
3. signatures: every exported function has the same C++ type in both headers
   (typeid of decltype(&fn) compiled against each header; no library is linked).

Run by ctest when ZLINK_INTEROP_LIBZMQ_PREFIX is set; also usable by hand:
  check_exports.py --libzmq-prefix P --zlink-include D --zlink-library L \
                   --exports F --cxx g++ --work DIR
"""
from __future__ import annotations

import argparse
import re
import subprocess
import sys
from pathlib import Path

MACRO_LINE = re.compile(r"^#define (\w+)(\(?)(.*)$")


def nm_exports(library: Path) -> set[str]:
    out = subprocess.run(["nm", "-D", "--defined-only", str(library)], check=True,
                         capture_output=True, text=True).stdout
    return {parts[2] for parts in (line.split() for line in out.splitlines())
            if len(parts) == 3 and parts[2].startswith("zmq_")}


def listed_exports(path: Path) -> set[str]:
    return {line.strip() for line in path.read_text().splitlines()
            if line.strip() and not line.startswith("#")}


def header_macros(cxx: str, include: Path, work: Path) -> dict[str, str]:
    """Object-like ZMQ_* macros of one zmq.h (and the E* errno ones it adds)."""
    probe = work / "macros.cpp"
    probe.write_text("#include <zmq.h>\n")
    out = subprocess.run([cxx, "-dM", "-E", "-I", str(include), str(probe)], check=True,
                         capture_output=True, text=True).stdout
    macros = {}
    for line in out.splitlines():
        m = MACRO_LINE.match(line)
        if m and not m.group(2) and m.group(1).startswith("ZMQ_"):
            macros[m.group(1)] = m.group(3).strip()
    return macros


def run_probe(cxx: str, include: Path, work: Path, name: str, body: str) -> list[str]:
    """Compiles body against one header, runs it, returns its output lines."""
    src, exe = work / f"{name}.cpp", work / name
    src.write_text("#include <zmq.h>\n#include <cstdio>\n#include <typeinfo>\n"
                   f"int main() {{\n{body}  return 0;\n}}\n")
    subprocess.run([cxx, "-std=c++17", "-I", str(include), str(src), "-o", str(exe)],
                   check=True, capture_output=True, text=True)
    return subprocess.run([str(exe)], check=True, capture_output=True, text=True).stdout.splitlines()


def constants_body(macros: dict[str, str]) -> str:
    lines = []
    for name, value in sorted(macros.items()):
        if value:  # empty ones (ZMQ_HAVE_TIMERS) are checked for presence only
            lines.append(f'  std::printf("{name} %lld\\n", (long long)({name}));\n')
    return "".join(lines)


def signatures_body(functions: set[str]) -> str:
    return "".join(f'  std::printf("{f} %s\\n", typeid(decltype(&{f})).name());\n'
                   for f in sorted(functions))


def compare(kind: str, reference: list[str], candidate: list[str]) -> list[str]:
    ref, cand = dict(l.split(" ", 1) for l in reference), dict(l.split(" ", 1) for l in candidate)
    return [f"{kind} {k}: libzmq {v}, zlink {cand.get(k, 'missing')}"
            for k, v in sorted(ref.items()) if cand.get(k) != v]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--libzmq-prefix", type=Path, required=True)
    ap.add_argument("--zlink-include", type=Path, required=True)
    ap.add_argument("--zlink-library", type=Path, required=True)
    ap.add_argument("--exports", type=Path, required=True)
    ap.add_argument("--cxx", default="c++")
    ap.add_argument("--work", type=Path, required=True)
    args = ap.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    libzmq_include = args.libzmq_prefix / "include"
    libzmq_lib = args.libzmq_prefix / "lib" / "libzmq.so"

    problems = []
    real = nm_exports(libzmq_lib)
    listed = listed_exports(args.exports)
    problems += [f"exports list lacks {s} (exported by {libzmq_lib})" for s in sorted(real - listed)]
    problems += [f"exports list names {s}, which {libzmq_lib} does not export" for s in sorted(listed - real)]
    problems += [f"libzlink.so does not export {s}" for s in sorted(real - nm_exports(args.zlink_library))]

    ref_macros = header_macros(args.cxx, libzmq_include, args.work)
    zl_macros = header_macros(args.cxx, args.zlink_include, args.work)
    problems += [f"constant {m}: missing from zlink's zmq.h" for m in sorted(set(ref_macros) - set(zl_macros))]
    body = constants_body({k: v for k, v in ref_macros.items() if k in zl_macros})
    problems += compare("constant", run_probe(args.cxx, libzmq_include, args.work, "constants_libzmq", body),
                        run_probe(args.cxx, args.zlink_include, args.work, "constants_zlink", body))

    body = signatures_body(real)
    try:
        zl_sigs = run_probe(args.cxx, args.zlink_include, args.work, "signatures_zlink", body)
    except subprocess.CalledProcessError as exc:
        problems.append(f"signatures: zlink's zmq.h does not declare every function:\n{exc.stderr}")
        zl_sigs = []
    problems += compare("signature", run_probe(args.cxx, libzmq_include, args.work, "signatures_libzmq", body),
                        zl_sigs) if zl_sigs else []

    for p in problems:
        print(p)
    print(f"checked {len(real)} exports, {len(ref_macros)} constants, {len(real)} signatures: "
          f"{len(problems)} difference(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
