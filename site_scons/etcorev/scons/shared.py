"""Nodes a build makes once and every environment cloned from one shares: the startup
objects and linker script of a variant, ExecuTorch's runtime libraries, one kernel
object per dtype selection, the CORE-V backend. env.Clone() copies dicts and lists, so
the store is a plain object in $SHARED_NODES, which the firmware tool puts there and
the clones keep pointing at."""


class SharedNodes:
    def __init__(self):
        self.made = {}


def made_once(env, key, make):
    """make() the first time key is asked for in this build, its result every time."""
    made = env["SHARED_NODES"].made
    if key not in made:
        made[key] = make()
    return made[key]
