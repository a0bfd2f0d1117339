"""Every use the build makes of SCons beyond its documented interface, in one place, each
with why no public way serves. tests/test_scons_internals.py checks each assumption
against the installed SCons, so the release that changes one fails there, by name,
instead of somewhere in a build.

- signature_files(): the signature databases SCons keeps open (SConsign.sig_files,
  DB_sync_list), for writing them every few seconds during a long build: SCons writes
  them only at its end, so a killed build would lose the record of what it finished.
- cache_key_prefix(), new_cache_config(): the length of the subdirectory names a
  CacheDir uses (CacheDir.config["prefix_len"]), for a CacheDir subclass that keys
  entries itself (etcorev.scons.buildcache: its cachepath() override has no public
  counterpart), and the config SCons writes into a new cache, which the build writes
  itself first (two processes creating it at once make SCons fail).
- textfile_function(): the function of the Textfile builder's action, to give it an
  action that prints $TEXTFILECOMSTR (the tool prints "Creating '...'" whatever it says).
- compile_actions() / set_compile_action(): the object builders' actions by suffix,
  to put a launcher (ccache, distcc) before the compiler outside the signature, the way
  SCons's own compilation_db tool adds to the same builders.
- exit_now(): ending the process with a status of our choosing from an atexit handler
  (`scons run` ends with the program's exit status; SCons ends every failure with 2).
- dblite_open(), dblite_drop_pending(), dblite_pending(): SCons's dblite signature
  database, whose pending write and temporary file are private (_needs_sync,
  _tmp_name): etcorev.scons.signature_db reports a database that cannot be written (a
  full disk) in one line and removes the half-written file, where dblite would raise
  again from its __del__.
- CacheDir, node_action_contents(), node_children_signatures(), node_own_key(),
  hash_signature(), hash_collect(): the hooks a CacheDir subclass overrides (cachepath, copy_to_cache,
  copy_from_cache; SCons documents CacheDir= but not them) and the node and hashing
  functions SCons's own cachepath() uses, for etcorev.scons.buildcache's keys.
- direct_children(), alias_node(): a node's sources, dependencies and scanned
  dependencies as attributes (children() would scan it before SCons does), and the
  alias of a command-line target, for the quiet tool's count of what a build makes.
"""

import os

import SCons.CacheDir
import SCons.Defaults
import SCons.Node.Alias
import SCons.SConsign
import SCons.Util
import SCons.dblite


def signature_files():
    """(the per-directory .sconsign files, the database objects with a sync())."""
    return list(SCons.SConsign.sig_files), list(SCons.SConsign.DB_sync_list)


def cache_key_prefix(cache):
    """How many characters of a signature name a CacheDir's subdirectory."""
    return cache.config["prefix_len"]


def new_cache_config():
    """The config file SCons writes into a new cache directory (CacheDir._add_config)."""
    import SCons.CacheDir
    return {"prefix_len": SCons.CacheDir.CACHE_PREFIX_LEN}


def textfile_function(builder):
    """(function, varlist) of the Textfile builder's action."""
    return builder.action.execfunction, builder.action.varlist


# SCons's own compile actions, and the command each runs.
COMPILE_ACTIONS = {
    SCons.Defaults.CAction: "CC",
    SCons.Defaults.ShCAction: "SHCC",
    SCons.Defaults.CXXAction: "CXX",
    SCons.Defaults.ShCXXAction: "SHCXX",
    SCons.Defaults.ASPPAction: "ASPP",
}


def compile_actions(builder):
    """(suffix, command variable name) of an object builder's compile actions."""
    return [(suffix, COMPILE_ACTIONS[action]) for suffix, action in builder.cmdgen.items()
            if action in COMPILE_ACTIONS]


def set_compile_action(builder, suffix, action):
    builder.add_action(suffix, action)


def exit_now(status):
    """End the process now with status (from an atexit handler, after SCons's own)."""
    os._exit(status)


# ---------------------------------------------------------------- the signature database

def dblite_open(file, flag, mode):
    """(SCons's dblite database of file, the name of the file it writes)."""
    return SCons.dblite.open(file, flag, mode), file + SCons.dblite.DBLITE_SUFFIX


def dblite_pending(db):
    """Has the database changes it has not written?"""
    return bool(getattr(db, "_needs_sync", False))


def dblite_drop_pending(db):
    """After a write that failed: nothing left for dblite's __del__ to try again, and
    its half-written temporary file removed."""
    db._needs_sync = False
    tmp = getattr(db, "_tmp_name", None)
    if tmp and os.path.exists(tmp):
        os.remove(tmp)


# ---------------------------------------------------------------- the cache

# The class a cache that keys its entries itself derives from: it overrides cachepath()
# (node -> (directory, path) of the entry), copy_to_cache() and copy_from_cache()
# ((env, src, dst) -> dst), and keeps is_enabled() and self.path.
CacheDir = SCons.CacheDir.CacheDir


def node_action_contents(node):
    """The bytes of the command that builds node (what SCons signs its action by), or
    None for a node without one."""
    executor = node.get_executor()
    return executor.get_contents() if executor is not None else None


def node_children_signatures(node):
    """The content signatures of a node's children, as SCons's own cachepath() takes
    them for an entry's key."""
    return [child.get_cachedir_csig() for child in node.children()]


def node_own_key(node):
    """(its path inside the top directory, its action's signature): the rest of the key
    SCons's own cachepath() gives an entry."""
    return node.get_internal_path(), node.get_contents_sig()


def hash_signature(data):
    return SCons.Util.hash_signature(data)


def hash_collect(signatures):
    return SCons.Util.hash_collect(signatures)


# ---------------------------------------------------------------- the node graph

def direct_children(node):
    """A node's sources, explicit dependencies and those its scan found so far, without
    scanning it."""
    yield from node.sources or ()
    yield from node.depends or ()
    yield from node.implicit or ()


def alias_node(name):
    """The alias of that name, or None."""
    return SCons.Node.Alias.default_ans.lookup(name)
