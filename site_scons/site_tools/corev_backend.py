"""SCons tool: the CORE-V delegate backend (backends/corev/runtime), a library of its own.

    env.Tool("corev_backend")
    backend = env.CoreVBackend()        # [libcorev_backend.a], once per variant

Its registration is a static initializer that nothing references: link it whole
(Firmware(..., whole_archive=backend)). Reads $VARIANT_DIR; loads the firmware tool.
"""

import os

from etcorev import locations
from etcorev.scons.shared import made_once
from etcorev.scons.tools import require_tools

SOURCE_DIR = locations.source_dir("backends", "corev", "runtime")


def CoreVBackend(env):
    def make():
        backend_env = env.Clone()
        backend_env.Append(CPPPATH=[SOURCE_DIR])
        build_dir = os.path.join(env["VARIANT_DIR"], "backend")
        objects = backend_env.ObjectsIn(build_dir, [os.path.join(SOURCE_DIR, "CoreVBackend.cpp")])
        return backend_env.StaticLibrary(os.path.join(build_dir, "corev_backend"), objects)
    return made_once(env, ("corev backend", env["VARIANT_DIR"]), make)


def generate(env):
    require_tools(env, "firmware")
    env.SetDefault(VARIANT_DIR="build")
    env.AddMethod(CoreVBackend)


def exists(env):
    return True
