"""Read by SCons before SConstruct. Python's byte code of this build's own modules goes
to the per-user cache instead of __pycache__ folders in the checkout: a build leaves
nothing in the source tree (`scons -c` then leaves it as it was)."""

import sys

sys.dont_write_bytecode, _saved = True, sys.dont_write_bytecode
from etcorev.scons import usercache  # noqa: E402  (compiled without writing byte code)

_root = usercache.cache_root()
if _root is not None:
    sys.pycache_prefix = str(_root / "pycache")
sys.dont_write_bytecode = _saved or _root is None
