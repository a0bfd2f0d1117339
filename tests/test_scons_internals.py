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


def test_a_dblite_database_has_the_pending_write_we_drop(tmp_path):
    db, name = scons_internals.dblite_open(str(tmp_path / "sigs"), "c", 0o666)
    db["key"] = b"value"
    assert scons_internals.dblite_pending(db) and name.endswith(".dblite")
    scons_internals.dblite_drop_pending(db)
    assert not scons_internals.dblite_pending(db)


def test_a_node_gives_what_a_cache_keys_it_by(tmp_path):
    env = Environment(tools=[])
    source = tmp_path / "in.txt"
    source.write_text("x")
    node = env.Command(str(tmp_path / "out.txt"), str(source), "cp $SOURCE $TARGET")[0]
    assert scons_internals.node_action_contents(node)
    path, action = scons_internals.node_own_key(node)
    assert path.endswith("out.txt") and action
    assert len(scons_internals.node_children_signatures(node)) >= 1   # in.txt (and cp)
    assert scons_internals.hash_collect([scons_internals.hash_signature(b"a"), path])
    for hook in ("cachepath", "copy_to_cache", "copy_from_cache", "is_enabled"):
        assert callable(getattr(scons_internals.CacheDir, hook, None)), hook


def test_a_node_lists_its_direct_children_without_a_scan(tmp_path):
    env = Environment(tools=[])
    alias = env.Alias("some-alias", env.Command(str(tmp_path / "o"), [], "true"))
    assert scons_internals.alias_node("some-alias") is alias[0]
    assert [str(c) for c in scons_internals.direct_children(alias[0])] == [str(tmp_path / "o")]
