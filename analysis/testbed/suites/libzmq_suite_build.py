"""Compiling libzmq 4.3.5's own test programs against one registered library,
outside libzmq's CMake, as a new user of that library would.

Per library, in a keyed folder of the build cache (so a second run rebuilds nothing):
  stage/tests/     the pinned tree's tests/*.cpp|hpp (copied: their `../include/zmq.h`
                   must resolve to stage/include, not to the pinned tree's header)
  stage/include/   the library's installed zmq.h
  stage/src        -> the pinned tree's src/ (stdint.hpp, read by testutil.hpp)
  helpers.ninja    each helper object (testutil*.cpp, Unity) on its own
  tests.ninja      an archive of the helpers that compiled; one executable per test
  bin/ logs/       executables; one compiler log per helper and test
  compile.json     written last: which tests did not compile, and the first error
platform.hpp comes from a configure-only run of libzmq's CMake with the pinned flags
of the baseline flavour whose CURVE matches the library's (so a library is tested for
what it claims: zmq_has("curve") is checked against ZMQ_HAVE_CURVE by
test_capabilities), shared by every library with that CURVE setting.
"""
from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from pathlib import Path

from testbed.toolchain import baselines, buildcache, keys, sources
from testbed.toolchain.libzmq_platform import SUITE_BUILD_DIR, platform_dir, platform_key
from testbed.toolchain.progress import CommandFailed, Progress

RECIPE = 2  # bump when the way tests are staged or compiled changes
# As libzmq's tests/CMakeLists.txt compiles them in a Release build (its build.ninja).
DEFINES = ["-DUNITY_EXCLUDE_FLOAT", "-DUNITY_USE_COMMAND_LINE_ARGS", "-DZMQ_CUSTOM_PLATFORM_HPP",
           "-D_GNU_SOURCE", "-D_REENTRANT", "-D_THREAD_SAFE"]
CXXFLAGS = ["-std=c++11", "-O3", "-DNDEBUG", "-w"]
CFLAGS = ["-std=c11", "-O3", "-DNDEBUG", "-w"]
HELPERS = ["testutil", "testutil_monitoring", "testutil_security", "testutil_unity"]
MARKER = "compile.json"


@dataclass(frozen=True)
class SuiteBuild:
    """The compiled tests of one library: where they are and which did not compile."""
    root: Path
    compile_errors: dict[str, str]  # test -> first error line (or why it was not attempted)

    def binary(self, test: str) -> Path:
        return self.root / "bin" / test


def _library_identity(library) -> str:
    """What pins a library build: its build id, or (prebuilt, Nix) its info and prefix."""
    return library.info.get("build_id") or keys.build_key(info=library.info, prefix=str(library.prefix))


def suite_key(library, tests: list[str]) -> str:
    curve = bool(library.info.get("curve"))
    return keys.build_key(kind="libzmq-suite", recipe_suite=RECIPE, library=library.name,
                          library_id=_library_identity(library), platform=platform_key(curve),
                          source=baselines.pinned()["libzmq"]["nar_hash"], tests=tests,
                          flags=[CXXFLAGS, CFLAGS, DEFINES], tools=keys.toolchain_id())


def _stage(work: Path, src: Path, library) -> Path:
    stage = work / "stage"
    (stage / "tests").mkdir(parents=True)
    for pattern in ("*.cpp", "*.hpp"):
        for file in (src / "tests").glob(pattern):
            shutil.copy2(file, stage / "tests" / file.name)
    (stage / "include").mkdir()
    shutil.copy2(library.prefix / "include" / "zmq.h", stage / "include" / "zmq.h")
    (stage / "src").symlink_to(src / "src", target_is_directory=True)
    return stage


def _esc(path: Path | str) -> str:
    """A path as a ninja build-line token ($, space and colon are special there)."""
    return str(path).replace("$", "$$").replace(" ", "$ ").replace(":", "$:")


def _common_ninja(unity: Path, platform: Path) -> list[str]:
    includes = f"-I{platform} -I{unity}"
    return [f"cxx = {keys.cxx_compiler()}", f"cc = {keys.c_compiler()}",
            f"cxxflags = {' '.join(CXXFLAGS + DEFINES)} {includes}",
            f"cflags = {' '.join(CFLAGS + DEFINES)} {includes}"]


def helpers_ninja(stage: Path, unity: Path, platform: Path) -> str:
    """Step 1: the helper objects (testutil*.cpp and Unity), each on its own, so one
    helper that does not compile against a library costs only the tests that use it."""
    lines = _common_ninja(unity, platform) + [
        "rule cxx_obj\n  command = $cxx $cxxflags -c $in -o $out > $log 2>&1",
        "rule cc_obj\n  command = $cc $cflags -c $in -o $out > $log 2>&1",
        f"build helpers/unity.o: cc_obj {_esc(unity / 'unity.c')}\n  log = logs/unity.log"]
    for helper in HELPERS:
        lines.append(f"build helpers/{helper}.o: cxx_obj {_esc(stage / 'tests' / (helper + '.cpp'))}\n"
                     f"  log = logs/{helper}.log")
    return "\n".join(lines) + "\n"


def tests_ninja(stage: Path, unity: Path, platform: Path, library, objects: list[str],
                tests: list[str]) -> str:
    """Step 2: an archive of the helper objects that compiled, then one compile+link
    step per test (as libzmq links its tests against its static testutil library)."""
    lib = library.prefix / "lib"
    lines = _common_ninja(unity, platform) + [
        f"ldflags = -L{lib} -Wl,-rpath,{lib} -l{library.info.get('link_name', 'zmq')} -pthread -lrt",
        "rule archive\n  command = rm -f $out && ar crs $out $in",
        "rule test_exe\n  command = $cxx $cxxflags $in helpers/libtestutil.a $ldflags -o $out > $log 2>&1",
        f"build helpers/libtestutil.a: archive {' '.join(f'helpers/{o}.o' for o in objects)}"]
    for test in tests:
        lines.append(f"build bin/{test}: test_exe {_esc(stage / 'tests' / (test + '.cpp'))}"
                     f" | helpers/libtestutil.a\n  log = logs/{test}.log")
    return "\n".join(lines) + "\n"


def first_error(log: Path, strip: str = "") -> str:
    """The line a reader needs from a compiler log: the first error (with the staging
    folder `strip` cut from file names), else its last line."""
    try:
        text = log.read_text(errors="replace").splitlines()
    except FileNotFoundError:
        return "not attempted (see build.log)"
    found = next((line for line in text if "error" in line.lower() or "undefined reference" in line),
                 text[-1] if text else "compiler failed without output")
    return found.replace(strip, "").strip()[:300]


def _compile_errors(work: Path, tests: list[str], broken: list[str]) -> dict[str, str]:
    strip = f"{work / 'stage' / 'tests'}/"
    helper_note = "; ".join(f"helper {h} did not compile: {first_error(work / 'logs' / f'{h}.log', strip)}"
                            for h in broken)
    errors = {}
    for test in tests:
        if (work / "bin" / test).exists():
            continue
        error = first_error(work / "logs" / f"{test}.log", strip)
        errors[test] = f"{error} ({helper_note})" if broken and "undefined reference" in error else error
    return errors


def _ninja(work: Path, file: str, title: str, progress: Progress) -> None:
    """Build everything that can be built (-k 0); what failed shows in the logs."""
    try:
        progress.run(["ninja", "-f", file, "-k", "0", "-j", keys.JOBS], cwd=work, log=work / "build.log",
                     title=title)
    except CommandFailed:
        progress.say(f"    {title}: some steps failed (expected for a partial drop-in); see compile.json")


def build_tests(library, tests: list[str], progress: Progress) -> SuiteBuild:
    """Compile `tests` against `library` (a libraries.LibraryBuild), or reuse the cached build."""
    pin = baselines.pinned()
    curve = bool(library.info.get("curve"))

    def build(work: Path) -> None:
        src = sources.libzmq_source(pin, progress)
        stage, unity = _stage(work, src, library), src / "external" / "unity"
        platform = platform_dir(curve, progress)
        for folder in ("bin", "logs", "helpers"):
            (work / folder).mkdir()
        progress.step(f"libzmq suite: compiling {len(tests)} tests against {library.name}")
        (work / "helpers.ninja").write_text(helpers_ninja(stage, unity, platform))
        _ninja(work, "helpers.ninja", f"libzmq test helpers against {library.name}", progress)
        objects = [h for h in ["unity", *HELPERS] if (work / "helpers" / f"{h}.o").exists()]
        (work / "tests.ninja").write_text(tests_ninja(stage, unity, platform, library, objects, tests))
        _ninja(work, "tests.ninja", f"libzmq tests against {library.name}", progress)
        broken = [h for h in ["unity", *HELPERS] if h not in objects]
        errors = _compile_errors(work, tests, broken)
        (work / (MARKER + ".tmp")).write_text(json.dumps(errors, indent=1, sort_keys=True) + "\n")
        (work / (MARKER + ".tmp")).rename(work / MARKER)

    root = buildcache.cached(SUITE_BUILD_DIR / library.name, suite_key(library, tests), MARKER, build)
    return SuiteBuild(root, json.loads((root / MARKER).read_text()))
