"""torchgen, which ExecuTorch's codegen imports: the `torchgen/` folder of the torch wheel
of the release ExecuTorch v1.4.1 pins (the PyPI package named torchgen is another
project), without installing torch.

ensure() makes it importable: the Python environment's own, else the copy in the
per-user cache, else it takes it from the wheel now (pip download, once: a local wheel
when pip's configuration has one, else the download of a CPU wheel) into that cache.
./setup.sh calls it too.

    python -m etcorev.toolchain.torchgen      # take it now, print where it is
"""

import os
import subprocess
import sys
import tempfile
import zipfile

if __package__ in (None, ""):      # run as a script: make `etcorev` importable
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

from etcorev.scons import usercache  # noqa: E402

TORCH = "torch==2.13.0"


class TorchgenError(Exception):
    pass


def _cached_dir():
    root = usercache.cache_root()
    return None if root is None else root / ("torchgen-" + TORCH.replace("==", "-"))


def ensure():
    """The directory that holds the torchgen package, importable from now on."""
    try:
        import torchgen
        return os.path.dirname(os.path.dirname(torchgen.__file__))
    except ImportError:
        pass
    cached = _cached_dir()
    if cached is None:
        raise TorchgenError("torchgen (from the %s wheel) is not installed, and there is no "
                            "per-user cache to take it into: run ./setup.sh, or set "
                            "COREV_ET_CACHE to a directory." % TORCH)
    if not (cached / "torchgen" / "__init__.py").is_file():
        _extract_into(cached)
    if str(cached) not in sys.path:
        sys.path.append(str(cached))
    return str(cached)


def _extract_into(directory):
    sys.stderr.write("torchgen: taking it from the %s wheel into %s (once)\n"
                     % (TORCH, directory))
    with tempfile.TemporaryDirectory(prefix="corev-et-torch-") as wheels:
        proc = subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps",
                               "-d", wheels, TORCH], capture_output=True, text=True)
        found = [name for name in os.listdir(wheels) if name.endswith(".whl")]
        if proc.returncode or not found:
            raise TorchgenError("Cannot download the %s wheel for its torchgen folder: %s"
                                % (TORCH, (proc.stderr or proc.stdout).strip().splitlines()[-1:]))
        partial = str(directory) + ".partial"
        with zipfile.ZipFile(os.path.join(wheels, found[0])) as wheel:
            wheel.extractall(partial, [n for n in wheel.namelist() if n.startswith("torchgen/")])
        os.makedirs(os.path.dirname(str(directory)), exist_ok=True)
        os.replace(partial, str(directory))


if __name__ == "__main__":
    try:
        print(ensure())
    except TorchgenError as error:
        sys.exit("torchgen: %s" % error)
