"""Host requirements: headers are looked up where the compiler looks (a Nix dev
shell's compiler wrapper adds include dirs that are not /usr/include)."""
import shutil

import pytest

from testbed.toolchain import system


@pytest.mark.skipif(shutil.which("c++") is None, reason="no C++ compiler on this host")
def test_header_is_found_through_the_compilers_search_path(tmp_path, monkeypatch):
    (tmp_path / "only_here.hpp").write_text("// found only through CPLUS_INCLUDE_PATH\n")
    monkeypatch.delenv("CXX", raising=False)
    monkeypatch.setenv("CPLUS_INCLUDE_PATH", str(tmp_path))
    system._include_dirs.cache_clear()
    try:
        assert system._header("only_here.hpp")()
        monkeypatch.delenv("CPLUS_INCLUDE_PATH")
        system._include_dirs.cache_clear()
        assert not system._header("only_here.hpp")()
    finally:
        system._include_dirs.cache_clear()
