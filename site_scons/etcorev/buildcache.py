"""Build products shared between build directories and checkouts (cache=DIR)."""

import os

import SCons.CacheDir
import SCons.Util


class BuildDirCache(SCons.CacheDir.CacheDir):
    """SCons keys a cached file by its inputs and its path from the top directory, so
    build_dir=out/a and build_dir=out/b, or two checkouts with an absolute build_dir,
    never share. This keys files inside $BUILD_DIR by their path within it (the
    variant directory and below) instead; the path stays in the key because the
    targets of one action (ELF and map) have the same inputs."""

    build_dir = None          # set by use_cache()

    def __init__(self, path):
        super().__init__(path)
        self.signatures = {}

    def cachepath(self, node):
        if not self.is_enabled():
            return None, None
        sig = self.signatures.get(node)
        if sig is None:
            path = node.get_abspath()
            if path.startswith(self.build_dir + os.sep):
                path = os.path.relpath(path, self.build_dir)
            else:
                path = node.get_internal_path()
            sigs = [child.get_cachedir_csig() for child in node.children()]
            sigs += [node.get_contents_sig(), path]
            sig = self.signatures[node] = SCons.Util.hash_collect(sigs)
        cachedir = os.path.join(self.path, sig[:self.config["prefix_len"]].upper())
        return cachedir, os.path.join(cachedir, sig)


def use_cache(env, cache_dir, build_dir):
    cache_class = type("BuildDirCache", (BuildDirCache,), {"build_dir": build_dir})
    env.CacheDir(cache_dir, cache_class)
