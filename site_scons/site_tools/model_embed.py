"""Embedding a .pte model into the firmware, three ways, all giving the symbols
`model_pte` (aligned, in $MODEL_SECTION) and `model_pte_size`:

- incbin (default): a generated assembler file `.incbin`s the model; big models never
  pass through the C++ compiler as text.
- xxd: the application note's route: the model as `0x..,` text (`xxd -i`'s body,
  written by our own Python) included into an aligned const array.
- embed: C23 `#embed`, where the compiler has it.

The model is validated first (site_scons/etcorev/pte/). Alignment and section name are
in the generated text, so changing them rebuilds.

    objects = env.EmbedModel("build/v/add/model", "add.pte", method="incbin")
"""

import os
import struct
import subprocess
import zlib

from SCons.Action import Action
from SCons.Builder import Builder

from etcorev import boards
from etcorev.scons.tools import require_tools
from etcorev import image
from etcorev.image import elfout

XXD_BYTES_PER_LINE = 12


def _xxd_text(data):
    """The body `xxd -i` prints for data: 12 bytes a line, two-space indent."""
    lines = []
    for start in range(0, len(data), XXD_BYTES_PER_LINE):
        chunk = data[start:start + XXD_BYTES_PER_LINE]
        lines.append("  " + ", ".join("0x%02x" % b for b in chunk))
    return ",\n".join(lines) + "\n"


def _write_xxd(target, source, env):
    with open(source[0].abspath, "rb") as f:
        data = f.read()
    with open(target[0].abspath, "w") as f:
        f.write(_xxd_text(data))


def _incbin_source(env, pte):
    # The assembler runs in the top directory: a model inside the checkout is named
    # relative to it, so the generated source (and the object, cached) is the same in
    # every checkout.
    path, top = pte.abspath, env.Dir("#").abspath
    if path.startswith(top + os.sep):
        path = os.path.relpath(path, top)
    path = path.replace("\\", "\\\\").replace('"', '\\"')
    return "\n".join([
        "/* Generated: the model, linked in as data. */",
        '    .section %s, "a", @progbits' % env["MODEL_SECTION"],
        "    .balign %d" % env["MODEL_ALIGN"],
        "    .globl model_pte",
        "    .type model_pte, @object",
        "model_pte:",
        '    .incbin "%s"' % path,
        "model_pte_end:",
        "    .size model_pte, model_pte_end - model_pte",
        "    .section .rodata.model_pte_size, \"a\", @progbits",
        "    .balign 4",
        "    .globl model_pte_size",
        "    .type model_pte_size, @object",
        "    .size model_pte_size, 4",
        "model_pte_size:",
        "    .word model_pte_end - model_pte",
        "",
    ])


def _c_source(env, include_line):
    return "\n".join([
        "// Generated: the model as an aligned const array.",
        "#include <stdint.h>",
        '__attribute__((aligned(%d), section("%s")))' % (env["MODEL_ALIGN"], env["MODEL_SECTION"]),
        "const uint8_t model_pte[] = {",
        include_line,
        "};",
        "const uint32_t model_pte_size = sizeof(model_pte);",
        "",
    ])


def _compiler_has_embed(env):
    """C23 #embed arrived in GCC 15."""
    out = subprocess.run([env.subst("$CC"), "-dumpversion"], capture_output=True, text=True).stdout
    try:
        return int(out.split(".")[0]) >= 15
    except ValueError:
        return False


# ---- external placement: the model goes to the board's model region by itself

# The model region's layout (the runner's model_check.cpp reads it):
#   0  "PTE1"                      magic
#   4  u32 size of the .pte
#   8  u32 CRC-32 (zlib's) of everything from offset 16 to the end of the operator table
#  12  u32 offset of the operator table from the region's start
#  16  the .pte, then zeros to a multiple of 4
#      the operator table: u32 count, then each operator's name ("aten::add.out"), NUL-ended
# A model programmed separately from the firmware may be another one, or damaged: the
# runner checks the sum, and that the firmware registered every operator the model
# names, before Program::load, which would otherwise run it with wrong weights or fail
# later with OperatorMissing.
MODEL_HEADER_MAGIC = b"PTE1"
MODEL_HEADER_SIZE = 16


def model_image(data, operators):
    pte = data + bytes(-len(data) % 4)
    names = b"".join(op.encode() + b"\0" for op in operators)
    body = pte + struct.pack("<I", len(operators)) + names
    return MODEL_HEADER_MAGIC + struct.pack("<III", len(data), zlib.crc32(body),
                                            MODEL_HEADER_SIZE + len(pte)) + body


def _write_model_image(target, source, env):
    from etcorev import pte
    with open(source[0].abspath, "rb") as f:
        data = f.read()
    image = model_image(data, pte.read_pte(data).operators)
    region = next(r for r in env["MEMORY_REGIONS"] if r["name"] == "model")
    if len(image) > region["length"]:
        from SCons.Errors import BuildError
        raise BuildError(node=target[0], errstr="the model (%d bytes) does not fit the board's "
                         "model region (%d bytes at 0x%08x)" % (len(image), region["length"],
                                                                 region["origin"]))
    with open(target[0].abspath, "wb") as f:
        f.write(elfout.verilog_hex_block(region["origin"], image))
    with open(target[1].abspath, "wb") as f:
        f.write(image)


def _by_content(env):
    """The build decides other sources by timestamp (content-timestamp: a no-op build
    reads no source); a model is decided by its content, because copying one model over
    another keeps the modification time (cp -p, touch -r, a checkout) and the old one
    would stay embedded."""
    env = env.Clone()
    env.Decider("content")
    return env


def ModelImage(env, target_base, pte):
    """The model region's contents: a Verilog hex (testbench) and a raw binary (QEMU's
    loader device), both at the region's address."""
    return _by_content(env).Command(
        [target_base + ".hex", target_base + ".bin"], pte,
        Action(_write_model_image, "$GENCOMSTR", varlist=["MEMORY_REGIONS"]),
        MEMORY_REGIONS=[r.as_dict() for r in boards.regions_of(env)])


def EmbedModel(env, target_base, pte, method="incbin"):
    """Objects that define model_pte/model_pte_size for the .pte file."""
    env = _by_content(env)
    pte = env.File(pte)
    if method == "incbin":
        source = env.Textfile(target_base + ".S", [_incbin_source(env, pte)], LINESEPARATOR="\n")
        objects = env.Object(target_base + ".o", source)
        env.Depends(objects, pte)  # .incbin is not scanned
        return objects
    if method == "xxd":
        inc = env.ModelXxd(target_base + ".pte.inc", pte)
        source = env.Textfile(target_base + ".c", [_c_source(env, '#include "%s"' % inc[0].name)],
                              LINESEPARATOR="\n")
        objects = env.Object(target_base + ".o", source)
        env.Depends(objects, inc)
        return objects
    if method == "embed":
        if not _compiler_has_embed(env):
            from etcorev.errors import BuildSetupError
            raise BuildSetupError(
                "$MODEL_EMBED=embed needs a compiler with C23 #embed (GCC 15 or newer); %s is older. "
                "Use $MODEL_EMBED=incbin (the default) or $MODEL_EMBED=xxd." % env.subst("$CC"))
        path = os.path.abspath(str(pte)).replace('"', '\\"')
        source = env.Textfile(target_base + ".c", [_c_source(env, '#embed "%s"' % path)],
                              LINESEPARATOR="\n")
        objects = env.Object(target_base + ".o", source, CFLAGS=["-std=c2x"])
        env.Depends(objects, pte)
        return objects
    raise ValueError("unknown embedding method %r" % method)


def generate(env):
    require_tools(env, "riscv_toolchain", "board", "textfile")
    env.SetDefault(MODEL_ALIGN=16, MODEL_SECTION=image.MODEL_SECTION)
    env["BUILDERS"]["ModelXxd"] = Builder(action=Action(_write_xxd, "$GENCOMSTR"))
    env.AddMethod(EmbedModel)
    env.AddMethod(ModelImage)


def exists(env):
    return True
