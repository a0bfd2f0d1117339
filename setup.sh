#!/usr/bin/env bash
# Sets up a Debian 12 machine for this build, idempotently (a second run costs seconds):
#   - Debian packages: the RISC-V cross compiler, picolibc, QEMU, GCC sources, flatbuffers,
#     Verilator (for the CV32E40P testbench), and the tools of a firmware developer's day
#     (gdb-multiarch, ccache, distcc, icecc)
#   - .venv with the Python packages pinned in pyproject.toml, and torchgen (ExecuTorch's
#     codegen needs it) taken from the pinned torch wheel without installing torch
#   - libstdc++ for Debian's cross compiler, built once into ~/.cache/corev-et
# Options:
#   --executorch PATH   record the ExecuTorch source tree in the user settings file
#   --cmsis-nn PATH     record the CMSIS-NN source tree (for int8 models of ExecuTorch's
#                       Cortex-M operators) in the user settings file
#   --corev-gcc         also build CORE-V GCC (riscv32-corev-elf, newlib, libstdc++) from
#                       Debian's sources into ~/.cache/corev-et (about 25 min the first time)
#   --export            also install the model-export extra (torch + executorch wheels)
set -euo pipefail
cd "$(dirname "$0")"

executorch=""
cmsis_nn=""
extras="test"
corev_gcc=""
while [ $# -gt 0 ]; do
  case "$1" in
    --executorch) executorch="$2"; shift 2 ;;
    --cmsis-nn) cmsis_nn="$2"; shift 2 ;;
    --corev-gcc) corev_gcc=1; shift ;;
    --export) extras="test,export"; shift ;;
    -h|--help) sed -n '2,15p' "$0"; exit 0 ;;
    *) echo "setup.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
done

APT_PACKAGES="gcc-riscv64-unknown-elf picolibc-riscv64-unknown-elf qemu-system-misc gdb-multiarch
  gcc-12-source flatbuffers-compiler libflatbuffers-dev python3-venv xz-utils make xxd zstd
  ccache distcc icecc verilator"
if [ -n "$corev_gcc" ]; then
  # CORE-V GCC's sources and what building a cross GCC needs on the host.
  APT_PACKAGES="$APT_PACKAGES binutils-source newlib-source libgmp-dev libmpfr-dev
    libmpc-dev flex bison texinfo patch"
fi
missing=""
for package in $APT_PACKAGES; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" \
    || missing="$missing $package"
done
if [ -n "$missing" ]; then
  echo "setup: installing Debian packages:$missing"
  sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -q
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q $missing
fi

if [ ! -x .venv/bin/python ]; then
  echo "setup: creating .venv"
  python3 -m venv .venv
fi
# The dependencies pinned in pyproject.toml (and an optional extra), without packaging
# this repository itself.
requirements=$(python3 - "$extras" <<'PY'
import sys, tomllib
project = tomllib.load(open("pyproject.toml", "rb"))["project"]
deps = list(project["dependencies"])
for extra in filter(None, sys.argv[1].split(",")):
    deps += project["optional-dependencies"][extra]
print("\n".join(deps))
PY
)
if ! .venv/bin/python - "$requirements" <<'PY' 2>/dev/null
import sys
from importlib.metadata import version
from packaging.requirements import Requirement
for line in sys.argv[1].split("\n"):
    req = Requirement(line)
    if not req.specifier.contains(version(req.name), prereleases=True):
        sys.exit(1)
PY
then
  echo "setup: installing Python packages"
  echo "$requirements" | xargs .venv/bin/pip install -q
fi

# torchgen (ExecuTorch's codegen imports it): the folder of that name in the torch wheel
# ExecuTorch pins, nothing else, into the per-user cache (etcorev/toolchain/torchgen.py;
# the build takes it the same way by itself when it is missing).
.venv/bin/python site_scons/etcorev/toolchain/torchgen.py >/dev/null

record() {    # record NAME PATH WHAT: a tree in the user settings file
  .venv/bin/python -c "import sys; sys.path.insert(0, 'site_scons')
from etcorev.scons import settings
print('setup: %s recorded in' % sys.argv[3], settings.write(**{sys.argv[1]: sys.argv[2]}))" \
    "$1" "$(cd "$2" && pwd)" "$3"
}
if [ -n "$executorch" ]; then record executorch "$executorch" "ExecuTorch tree"; fi
if [ -n "$cmsis_nn" ]; then record cmsis_nn "$cmsis_nn" "CMSIS-NN tree"; fi

.venv/bin/python site_scons/etcorev/toolchain/libstdcxx.py >/dev/null
if [ -n "$corev_gcc" ]; then
  .venv/bin/python site_scons/etcorev/toolchain/corev_gcc.py >/dev/null
fi
echo "setup: ready (activate with: . .venv/bin/activate)"
