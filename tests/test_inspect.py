"""`scons inspect` and site_scons/etcorev/footprint*.py: where the firmware's bytes go.

The inspector's totals are checked against the toolchain's own `size` on real
firmware: the C++ fixture app (no ExecuTorch needed; with LTO, the Release default,
and without) and the add.pte runner (needs an ExecuTorch tree). One build directory per
module fixture, so each firmware is built once.
"""

import os
import re
import shutil
import subprocess
import sys

import pytest

pytest.importorskip("elftools")

from etcorev.image import footprint, footprint_report  # noqa: E402  (conftest.py: site_scons on sys.path)
from sconsrun import REPO, scons, variant  # noqa: E402

SIZE = shutil.which("riscv64-unknown-elf-size") or shutil.which("riscv32-corev-elf-size")
pytestmark = pytest.mark.skipif(
    not SIZE or not (shutil.which("riscv64-unknown-elf-gcc")
                     or shutil.which("riscv32-corev-elf-gcc")),
    reason="no RISC-V cross toolchain (./setup.sh installs it)")

VARIANT = "qemu-release-logoff-rv32imc-"
LIBRARY_ROW = re.compile(r"^(\S.*?)\s+(-?\d+)\s+(-?\d+)\s+(-?\d+)\s+(-?\d+)\s+(-?\d+)$", re.M)


def berkeley(elf):
    """text, data, bss as the toolchain's `size` prints them."""
    out = subprocess.run([SIZE, str(elf)], capture_output=True, text=True, check=True).stdout
    text, data, bss = out.splitlines()[1].split()[:3]
    return {"text": int(text), "data": int(data), "bss": int(bss)}


def library_table(output):
    """{library: (text, rodata, data, bss, total)} of the table by library in output: from
    its header line to the blank line after it (a build prints its steps before it)."""
    header = re.search(r"^library +text +rodata +data +bss +total$", output, re.M)
    assert header, output
    table = output[header.end():].split("\n\n")[0]
    return {m.group(1).strip(): tuple(int(m.group(i)) for i in range(2, 7))
            for m in LIBRARY_ROW.finditer(table)}


def assert_reconciles(elf, fp, printed=None):
    size = berkeley(elf)
    totals = fp.totals()
    assert fp.size == size
    assert totals["text"] + totals["rodata"] == size["text"]
    assert totals["data"] == size["data"]
    assert totals["bss"] == size["bss"]
    if printed is not None:
        text, rodata, data, bss, total = library_table(printed)["total"]
        assert (text + rodata, data, bss) == (size["text"], size["data"], size["bss"])
        assert total == sum(size.values())


# ---------------------------------------------------------------------------
# Pure Python parts
# ---------------------------------------------------------------------------

def test_squarify_fills_the_box_without_overlap():
    values = [500, 300, 120, 80, 80, 40, 7, 1]
    rects = footprint_report.squarify(values, 10, 20, 400, 300)
    total_area = sum(w * h for _, _, w, h in rects)
    assert total_area == pytest.approx(400 * 300)
    for value, (x, y, w, h) in zip(values, rects):
        assert w * h == pytest.approx(value / sum(values) * 400 * 300)
        assert 10 - 1e-6 <= x and x + w <= 410 + 1e-6
        assert 20 - 1e-6 <= y and y + h <= 320 + 1e-6
    for i, a in enumerate(rects):
        for b in rects[i + 1:]:
            overlap_w = min(a[0] + a[2], b[0] + b[2]) - max(a[0], b[0])
            overlap_h = min(a[1] + a[3], b[1] + b[3]) - max(a[1], b[1])
            assert overlap_w <= 1e-6 or overlap_h <= 1e-6


@pytest.mark.parametrize("path, group", [
    ("/b/v/et/libexecutorch_core.a(method.o)", footprint.CORE),
    ("/b/v/add/runtime/kernel/operator_registry.o", footprint.CORE),
    ("/b/v/add/libkernels_portable.a(op_add.o)", "kernels_portable"),
    ("/b/v/add/libkernels_quantized.a(broadcast_util.o)", "kernels_quantized"),
    ("/b/v/add/libregistration_portable.a(RegisterCodegenUnboxedKernelsEverything.o)",
     "registration_portable"),
    ("/b/v/et/libprim_ops.a(register_prim_ops.o)", footprint.PRIM_OPS),
    ("/b/v/backend/libcorev_backend.a(CoreVBackend.o)", footprint.BACKEND),
    ("/b/v/add/runner/corev_pal.o", footprint.RUNNER),
    ("/b/v/add/startup/crt0.o", footprint.RUNNER),
    ("/c/libstdcxx/lib/rv32im/ilp32/libstdc++.a(del_op.o)", footprint.LIBSTDCXX),
    ("/usr/lib/picolibc/riscv64-unknown-elf/lib/rv32im/ilp32/libc.a(memset.S.o)",
     footprint.LIBC),
    ("/opt/corev/riscv32-corev-elf/lib/libc_nano.a(lib_a-memcpy.o)", footprint.LIBC),
    ("/usr/lib/picolibc/riscv64-unknown-elf/lib/rv32im/ilp32/libm.a(sqrtf.c.o)",
     footprint.LIBM),
    ("/usr/lib/gcc/riscv64-unknown-elf/12.2.0/rv32im/ilp32/libgcc.a(save-restore.o)",
     footprint.LIBGCC),
    ("/b/v/app-cxx_smoke/main.o", footprint.APP),
])
def test_library_groups_from_paths(path, group):
    assert footprint.classify(path) == group


def test_not_an_elf_is_one_line_from_the_command_line(tmp_path):
    (tmp_path / "fw.elf").write_text("not an ELF\n")
    result = subprocess.run([sys.executable, "-m", "etcorev.image.footprint_report", str(tmp_path / "fw.elf")],
                            capture_output=True, text=True,
                            env=dict(os.environ, PYTHONPATH=str(REPO / "site_scons")))
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr
    assert "is not an ELF file" in result.stderr


# ---------------------------------------------------------------------------
# The C++ fixture app: no ExecuTorch needed
# ---------------------------------------------------------------------------

APP = "app=tests/fixtures/cxx_smoke"


@pytest.fixture(scope="module")
def app_build(tmp_path_factory):
    """build(lto) -> (scons result, output directory): `scons inspect` of the fixture
    app, once per lto value."""
    build_dir = tmp_path_factory.mktemp("inspect-app")
    builds = {}

    def build(lto="auto"):
        if lto not in builds:
            result = scons("board=qemu", APP, "lto=%s" % lto, "inspect", build_dir=build_dir)
            assert result.returncode == 0, result.stdout
            [directory] = [p for p in build_dir.glob(VARIANT + "*")
                           if p.name.endswith("-nolto") == (lto == "0")]
            builds[lto] = result, directory / "app-cxx_smoke"
        return builds[lto]

    return build


@pytest.mark.parametrize("lto", ["auto", "0"])
def test_app_totals_equal_size(app_build, lto):
    result, out_dir = app_build(lto)
    elf = out_dir / "cxx_smoke.elf"
    fp = footprint.inspect(elf)
    assert fp.lto == (lto == "auto")
    assert_reconciles(elf, fp, result.stdout)
    if lto == "0":               # every input section names its object
        assert footprint.LTO_UNATTRIBUTED not in fp.by_group()


def test_app_tables_and_picture(app_build):
    result, out_dir = app_build()
    assert "Top 10 objects:" in result.stdout and "Top 10 symbols:" in result.stdout
    libraries = library_table(result.stdout)
    for group in ("app", "runner", "libc", "libgcc", "linker-generated"):
        assert group in libraries, result.stdout
    assert libraries["app"][4] > 0
    # The stack is the linker script's: all of it, by name.
    assert "stack (.stack: . += __stack_size)" in (out_dir / "cxx_smoke.inspect.html").read_text()
    assert (out_dir / "cxx_smoke.inspect.txt").read_text() in result.stdout


def test_errors_are_one_line(app_build, tmp_path):
    _, out_dir = app_build()
    lonely = tmp_path / "other.elf"                  # an ELF without its map
    shutil.copy(out_dir / "cxx_smoke.elf", lonely)
    build_dir = out_dir.parent.parent
    for other, message in ((lonely, "has no map file beside it"),
                           (REPO / "README.md", "is not an ELF file"),
                           (tmp_path / "missing.elf", "no such file")):
        result = scons("board=qemu", APP, "inspect", "inspect_against=%s" % other,
                       build_dir=build_dir)
        assert result.returncode != 0
        assert "Traceback" not in result.stdout
        errors = [line for line in result.stdout.splitlines() if line.startswith("scons: ***")]
        assert len(errors) == 1 and message in errors[0], result.stdout
        assert "inspect_against=" in errors[0], result.stdout     # the option to change
        assert "Top 10 objects" not in result.stdout   # fails before printing


def test_an_image_that_does_not_fit_is_not_inspected(tmp_path):
    """The size check removes an image that does not fit (nothing may publish it); the
    size message names what took the room, and inspect fails with it, cleanly."""
    result = scons("board=qemu", "app=tests/fixtures/overflow", "inspect", build_dir=tmp_path)
    assert result.returncode != 0
    assert "does not fit" in result.stdout and "Traceback" not in result.stdout
    assert not list(tmp_path.rglob("overflow.elf"))


def test_clean_removes_the_picture(tmp_path):
    assert scons("board=qemu", APP, "inspect", build_dir=tmp_path).returncode == 0
    picture = variant(tmp_path, VARIANT) / "app-cxx_smoke" / "cxx_smoke.inspect.html"
    assert picture.is_file()
    result = scons("board=qemu", APP, "-c", build_dir=tmp_path)
    assert result.returncode == 0, result.stdout
    assert not picture.exists()
    assert not list(tmp_path.glob(VARIANT + "*"))


# ---------------------------------------------------------------------------
# The add.pte runner (ExecuTorch tree needed)
# ---------------------------------------------------------------------------

ADD = REPO / "examples" / "models" / "add.pte"
MUL_ADD = REPO / "examples" / "models" / "mul_add.pte"


@pytest.fixture(scope="module")
def add_build(et_root, tmp_path_factory):
    build_dir = tmp_path_factory.mktemp("inspect-et")
    # The portable kernels: their library is kernels_portable (the CORE-V kernels'
    # would be kernels_corev).
    result = scons("board=qemu", "corev_kernels=0", "model=%s" % ADD, "inspect",
                   build_dir=build_dir)
    assert result.returncode == 0, result.stdout
    return result, build_dir, variant(build_dir, VARIANT) / "add"


def test_add_totals_equal_size(add_build):
    result, _, out_dir = add_build
    elf = out_dir / "executor_runner.elf"
    fp = footprint.inspect(elf)
    assert fp.lto
    assert_reconciles(elf, fp, result.stdout)


def test_add_libraries(add_build):
    result, _, out_dir = add_build
    libraries = library_table(result.stdout)
    for group in ("model", "runner", "libc", "ExecuTorch core", "kernels_portable",
                  "registration_portable", "backend", "libgcc"):
        assert group in libraries and libraries[group][4] > 0, result.stdout
    # The model is the embedded .pte (and its 4-byte size word), all of it read-only.
    assert libraries["model"][1] >= ADD.stat().st_size
    fp = footprint.inspect(out_dir / "executor_runner.elf")
    image = sum(fp.size.values())
    unattributed = fp.by_group().get(footprint.LTO_UNATTRIBUTED, {})
    # LTO hides the objects; symbols bring most of them back.
    assert sum(unattributed.values()) < 0.05 * image, unattributed
    owners = {s.name: s.group for s in fp.symbols}
    assert owners["main"] == "runner"
    assert owners["model_pte"] == "model"
    assert any(g == "kernels_portable" and "add_out" in n for n, g in owners.items())
    assert any(g == "ExecuTorch core" and "Method" in n for n, g in owners.items())


def test_add_picture(add_build):
    _, _, out_dir = add_build
    page = (out_dir / "executor_runner.inspect.html").read_text()
    assert page.startswith("<!DOCTYPE html>")
    for name in ("model", "runner", "libc", "ExecuTorch core", "kernels_portable",
                 "executor_runner.elf: text"):
        assert name in page
    assert "<script" not in page and "http://" not in page.replace(
        'xmlns="http://www.w3.org/2000/svg"', "")


def test_growth_from_add_to_mul_add(add_build):
    _, build_dir, add_dir = add_build
    add_elf = add_dir / "executor_runner.elf"
    result = scons("board=qemu", "corev_kernels=0", "model=%s" % MUL_ADD, "inspect",
                   "inspect_against=%s" % add_elf, build_dir=build_dir)
    assert result.returncode == 0, result.stdout
    growth_text = result.stdout.split("Growth against", 1)[1]
    rows = {m.group(1).strip(): m.groups()[1:]
            for m in re.finditer(r"^(\S[^+\-\d\n]*?)\s+([-+]?\d+)\s+([-+]?\d+)\s+([-+]?\d+)"
                                 r"\s+([-+]?\d+)\s+([-+]?\d+)$", growth_text, re.M)}
    # mul_add adds op_mul to the portable kernels and a larger model.
    assert int(rows["kernels_portable"][4]) > 0, growth_text
    assert int(rows["model"][4]) == MUL_ADD.stat().st_size - ADD.stat().st_size
    new = footprint.inspect(variant(build_dir, VARIANT) / "mul_add" / "executor_runner.elf")
    old = footprint.inspect(add_elf)
    deltas = footprint_report.growth(new, old)
    assert sum(deltas["kernels_portable"].values()) > 0
    total = sum(sum(row.values()) for row in deltas.values())
    assert total == sum(new.size.values()) - sum(old.size.values())
    assert int(rows["total"][4]) == total
