"""Build products shared between build directories and checkouts (cache=DIR)."""

import json
import os
import re
import tempfile

import SCons.Script

from etcorev.scons import builddir, scons_internals
from etcorev.errors import BuildSetupError

# Stands for the build directory in the linker maps kept in the cache.
BUILD_DIR_PLACEHOLDER = b"@COREV_ET_BUILD_DIR@"
# Stand for the variant directory and the ExecuTorch tree in the actions that key the cache.
VARIANT_PLACEHOLDER = b"@COREV_ET_VARIANT@"
EXECUTORCH_PLACEHOLDER = b"@COREV_ET_EXECUTORCH@"


class BuildDirCache(scons_internals.CacheDir):
    """SCons keys a cached file by its inputs, its action and its path from the top
    directory, so build_dir=out/a and build_dir=out/b, or two checkouts with an absolute
    build_dir, never share, and neither do two variants whose commands differ only in
    the variant directory they name (-I<variant>/et/gen). This keys a file inside
    $BUILD_DIR by its path within its variant directory, and its action with the
    variant directory replaced by a placeholder: a core object compiled the same way
    for board=qemu and board=cv32e40p, or for corev_kernels=0 and 1, is compiled once.
    What the action reads from the variant directory (generated headers) is among the
    inputs, by content. The path stays in the key because the targets of one action
    (ELF and map) have the same inputs. The ExecuTorch tree's place is replaced too
    (its sources are inputs by content, and -ffile-prefix-map keeps the place out of
    objects): trees with the same contents anywhere (a clone per CI job, a submodule of
    each checkout) share the cache.

    A linker map names the objects it linked by their paths, absolute when the build
    directory is outside the checkout: a map linked in out/a and retrieved into out/b
    would name out/a's objects. Maps go into the cache with the build directory
    replaced by a placeholder, and come out with this build's directory in its place.
    (Objects and images name no build directory: -ffile-prefix-map maps it.)"""

    build_dir = None          # set by use_cache(), with the checkout's directory
    top = None
    places = ()               # and (pattern, placeholder) for the ExecuTorch tree

    def __init__(self, path):
        super().__init__(path)
        self.signatures = {}

    def cachepath(self, node):
        if not self.is_enabled():
            return None, None
        sig = self.signatures.get(node)
        if sig is None:
            path = node.get_abspath()
            contents = (scons_internals.node_action_contents(node)
                        if path.startswith(self.build_dir + os.sep) else None)
            if contents is not None:
                variant, _, path = os.path.relpath(path, self.build_dir).partition(os.sep)
                for form in builddir.spellings(os.path.join(self.build_dir, variant), self.top):
                    contents = contents.replace(form.encode(), VARIANT_PLACEHOLDER)
                for pattern, placeholder in self.places:
                    contents = pattern.sub(placeholder, contents)
                action = scons_internals.hash_signature(contents)
            else:
                path, action = scons_internals.node_own_key(node)
            sigs = scons_internals.node_children_signatures(node) + [action, path]
            sig = self.signatures[node] = scons_internals.hash_collect(sigs)
        cachedir = os.path.join(self.path,
                                sig[:scons_internals.cache_key_prefix(self)].upper())
        return cachedir, os.path.join(cachedir, sig)

    def _is_map(self, path):
        path = os.path.abspath(path)
        return path.endswith(".map") and path.startswith(self.build_dir + os.sep)

    def _copy_replacing(self, src, dst, old, new):
        with open(src, "rb") as f:
            data = f.read()
        with open(dst, "wb") as f:
            f.write(data.replace(old, new))
        return dst

    def copy_to_cache(self, env, src, dst):
        if not self._is_map(src):
            return super().copy_to_cache(env, src, dst)
        here = (self.build_dir + os.sep).encode()
        return self._copy_replacing(src, dst, here, BUILD_DIR_PLACEHOLDER + os.sep.encode())

    def copy_from_cache(self, env, src, dst):
        if not self._is_map(dst):
            return super().copy_from_cache(env, src, dst)
        here = (self.build_dir + os.sep).encode()
        return self._copy_replacing(src, dst, BUILD_DIR_PLACEHOLDER + os.sep.encode(), here)


def tree_places(root, top):
    """(pattern, placeholder) pairs for the ExecuTorch tree at root in a command: the
    tree, and the directory that holds it where it is an include path (-I<parent>:
    sources include <executorch/...>), each absolute or relative to the checkout."""
    places = []
    for form in builddir.spellings(root, top):
        places.append((re.compile(re.escape(form.encode()) + rb"(?=[/\s=\"']|$)"),
                       EXECUTORCH_PLACEHOLDER))
    for form in builddir.spellings(os.path.dirname(root), top):
        places.append((re.compile(rb"-I" + re.escape(form.encode()) + rb"(?=[\s\"']|$)"),
                       b"-I" + EXECUTORCH_PLACEHOLDER + b"/.."))
    return tuple(places)


def _write_config(cache_dir):
    """A new cache's config, written whole and at once: two scons processes that start
    together on a new cache both create it in SCons's own code, and the second fails
    with FileExistsError (SCons 4.11)."""
    config = os.path.join(cache_dir, "config")
    if os.path.exists(config):
        return
    fd, tmp = tempfile.mkstemp(dir=cache_dir, prefix=".config-")
    with os.fdopen(fd, "w") as f:
        json.dump(scons_internals.new_cache_config(), f)
    try:
        os.link(tmp, config)          # never over another's: the same content anyway
    except FileExistsError:
        pass
    finally:
        os.remove(tmp)


def use_cache(env, cache_dir, build_dir, executorch=None):
    """Builds in build_dir share cache_dir; executorch: the ExecuTorch tree's absolute
    path, if the build has one."""
    try:                    # SCons would make it too, with a traceback when it cannot
        os.makedirs(cache_dir, exist_ok=True)
    except OSError as error:
        raise BuildSetupError("Cannot make the cache directory %s (cache=): %s."
                              % (cache_dir, error.strerror))
    if not SCons.Script.GetOption("cache_readonly"):
        try:                # SCons writes its config and entries there: a stack trace
            probe = tempfile.NamedTemporaryFile(dir=cache_dir, prefix=".probe-")
            probe.close()
            _write_config(cache_dir)
        except OSError as error:
            raise BuildSetupError(
                "Cannot write in the cache directory %s (cache=): %s. Give one you can "
                "write to, cache=off, or --cache-readonly to only take from it."
                % (cache_dir, error.strerror))
    top = SCons.Script.Dir("#").abspath
    cache_class = type("BuildDirCache", (BuildDirCache,), {
        "build_dir": build_dir, "top": top,
        "places": tree_places(executorch, top) if executorch else ()})
    env.CacheDir(cache_dir, cache_class)
