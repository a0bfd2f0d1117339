"""The installed SCons still has what etcorev.scons.scons_internals relies on, beyond
SCons's documented interface: a release that changes one of them fails here, by name."""

import pytest
import SCons.CacheDir
import SCons.SConsign
from SCons.Environment import Environment

from etcorev.scons import scons_internals

pytestmark = pytest.mark.quick


def test_signature_databases_are_listed():
    files, databases = scons_internals.signature_files()
    assert isinstance(files, list) and isinstance(databases, list)
    assert callable(getattr(SCons.SConsign, "write", None))


def test_a_cache_dir_keys_by_prefix_and_path(tmp_path):
    cache = SCons.CacheDir.CacheDir(str(tmp_path / "cache"))
    assert scons_internals.cache_key_prefix(cache) >= 1
    assert callable(getattr(cache, "cachepath", None))
    assert scons_internals.new_cache_config() == cache.config
    for method in ("copy_to_cache", "copy_from_cache"):
        assert callable(getattr(SCons.CacheDir.CacheDir, method, None)), method


def test_the_textfile_action_has_a_function_and_varlist():
    env = Environment(tools=["textfile"])
    function, varlist = scons_internals.textfile_function(env["BUILDERS"]["Textfile"])
    assert callable(function) and "LINESEPARATOR" in varlist


def test_object_builders_map_suffixes_to_compile_actions():
    env = Environment(tools=["cc", "c++", "gas"])
    actions = dict(scons_internals.compile_actions(env["BUILDERS"]["StaticObject"]))
    assert actions[".c"] == "CC" and actions[".cpp"] == "CXX" and actions[".S"] == "ASPP"
