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
"""

import os

import SCons.Defaults
import SCons.SConsign


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
