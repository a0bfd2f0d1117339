"""What a cross compiler is, asked once and remembered: its target, version, C library,
default ABI, and per ISA the multilib directory and whether a C++ library is there.

The answers are kept in the per-user cache keyed by the compiler binary's path, size and
modification time, so a build only stats the compiler (a no-op build starts no process).
"""

import json
import os
import re
import subprocess
from typing import Optional

from etcorev import locations
from etcorev.scons import usercache

_MEMO = {}


# C++11 <cmath> functions ExecuTorch's c10 headers and kernels use, which a libstdc++
# built on newlib for RV32 lacks (see pal/toolchain_compat/cmath_cxx11.h).
CXX11_MATH_PROBE = """#include <cmath>
float probe(float x) {
  return std::lgamma(x) + std::trunc(x) + std::nextafter(x, 1.0f) + std::log1p(x)
         + std::expm1(x) + std::erf(x) + std::round(x) + std::nearbyint(x);
}
"""
CMATH_COMPAT_HEADER = locations.source_dir("pal", "toolchain_compat", "cmath_cxx11.h")


def _run(argv, stdin=None):
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=60, input=stdin)
    except (OSError, subprocess.TimeoutExpired) as error:
        return None, str(error)
    return (proc.stdout.strip() if proc.returncode == 0 else None), proc.stderr.strip()


def _probe(gcc, isa_flags):
    """isa_flags: {isa: [flags]}."""
    machine, error = _run([gcc, "-dumpmachine"])
    facts = {"gcc": gcc, "machine": machine, "error": error if machine is None else None}
    if machine is None or not machine.startswith("riscv"):
        return facts
    facts["version"] = _run([gcc, "-dumpfullversion"])[0]
    facts["version_line"] = (_run([gcc, "--version"])[0] or "").split("\n")[0]
    picolibc = _run([gcc, "-print-file-name=picolibc.specs"])[0] or ""
    facts["libc"] = "picolibc" if os.path.isabs(picolibc) else "newlib"
    target_help = _run([gcc, "-Q", "--help=target"])[0] or ""
    match = re.search(r"^\s*-mabi=\s+(\S+)", target_help, re.M)
    facts["default_abi"] = match.group(1) if match else None
    facts["isas"] = {}
    for isa, flags in isa_flags.items():
        directory = _run([gcc] + flags + ["-print-multi-directory"])[0]
        libstdcxx = _run([gcc] + flags + ["-print-file-name=libstdc++.a"])[0] or ""
        facts["isas"][isa] = {"multilib": directory,
                              "libstdcxx": libstdcxx if os.path.isabs(libstdcxx) else None}
        if facts["isas"][isa]["libstdcxx"]:
            facts["isas"][isa]["cxx11_math"] = _cxx11_math(gcc, flags, facts["libc"])
    return facts


def _cxx11_math(gcc, flags, libc):
    """Does the compiler's <cmath> have the C++11 functions: "yes"; "with the compat
    header" (cmath_cxx11.h provides them); else the first error of that attempt."""
    gxx = gcc[:-len("gcc")] + "g++" if gcc.endswith("gcc") else gcc
    argv = [gxx] + flags + ["--specs=%s.specs" % ("picolibc" if libc == "picolibc" else "nano"),
                            "-std=c++17", "-fsyntax-only", "-x", "c++", "-"]
    if _run(argv, CXX11_MATH_PROBE)[0] is not None:
        return "yes"
    header = os.path.abspath(CMATH_COMPAT_HEADER)
    out, error = _run(argv[:-3] + ["-include", header] + argv[-3:], CXX11_MATH_PROBE)
    if out is not None:
        return "with the compat header"
    first = next((line for line in error.splitlines() if "error" in line), error[:200])
    return "no: " + first.strip()


def facts(gcc: str, isa_flags) -> dict:
    real = os.path.realpath(gcc)
    try:
        st = os.stat(real)
    except OSError:
        return {"gcc": gcc, "machine": None, "error": "not found"}
    # The compat header is among what a probe answers: a new one asks again.
    header = os.stat(CMATH_COMPAT_HEADER)
    key = json.dumps([real, st.st_size, st.st_mtime_ns, sorted(isa_flags.items()),
                      header.st_size, header.st_mtime_ns])
    if key in _MEMO:
        return _MEMO[key]
    _MEMO[key] = usercache.remembered_as("compilers.json", key,
                                         lambda: _probe(gcc, isa_flags))
    return _MEMO[key]


def multilib_matches(found: Optional[str], mabi: str, default_abi: Optional[str]) -> bool:
    """Whether the multilib directory GCC chose for an ABI is built for that ABI: GCC
    falls back to its default libraries ("."), silently, when it has none for it."""
    if not found:
        return False
    if found == ".":
        return default_abi == mabi
    return found.rstrip("/").split("/")[-1] == mabi
