"""A model's inputs and outputs as the build and `scons run` handle them.

Files of tensors (`inputs=`, `expected=`, NAME.inputs.json, NAME.expected.json) hold a
JSON list of {"dtype", "shape", "values"} (the shared manifest's format; an object with
an "inputs" or "outputs" list is accepted too), values in logical order (row-major over
the shape, whatever the tensor's dim order); an expected output may add "atol", its own
absolute tolerance (one quantization step for an int8 network's output). Inputs are
checked against the program's own input metadata at build time and laid out in the
tensor's dim order; outputs printed by the runner (`Output 0: float32[5] 2,2,2,2,2`, in
logical order) are compared with the expected ones after a run.
"""

import json
import math
import re
import struct
from dataclasses import dataclass
from typing import List, Optional

from etcorev.errors import BuildSetupError

PACK_FORMATS = {"float32": "<f", "float64": "<d", "float16": "<e", "bfloat16": "bf16",
                "int32": "<i", "int64": "<q", "int16": "<h", "int8": "<b", "uint8": "<B",
                "bool": "<?"}
OUTPUT_LINE = re.compile(r"^Output (\d+): (\w+)(?:\[([\d,]*)\])? ?(.*)$", re.M)


@dataclass
class Tensor:
    dtype: str
    shape: List[int]
    values: list
    # Expected outputs only: the absolute tolerance of this output, where it is coarser
    # than atol= (an int8 network's float output is exact to one quantization step).
    atol: Optional[float] = None


@dataclass
class InputArray:
    """An input as the runner gets it: its bytes in the tensor's dim order, and its sizes
    (for a dynamic shape, at most the bound the program plans; the runner resizes the
    tensor to them)."""
    data: bytes
    sizes: List[int]


def fits_shape(shape, spec) -> bool:
    """Whether a tensor of this shape is one the program's value (pte.ValueSpec) takes: its
    own shape, or for a dynamic shape the same rank with each size at most the bound."""
    if list(shape) == list(spec.shape):
        return True
    return (spec.dynamic and len(shape) == len(spec.shape)
            and all(0 <= size <= bound for size, bound in zip(shape, spec.shape)))


def read_tensors(path: str, key: str, variable: str) -> List[Tensor]:
    """The tensors of a JSON file (key: "inputs" or "outputs", for the object form;
    variable: the construction variable that named it, for errors)."""
    def bad(why):
        return BuildSetupError(
            "Cannot read %s from '%s' ($%s): %s. Expected a JSON list of "
            '{"dtype", "shape", "values"} objects.' % (key, path, variable, why))
    try:
        with open(path) as f:
            data = json.load(f)
    except OSError as error:
        raise bad(error.strerror or str(error))
    except ValueError as error:
        raise bad("not valid JSON (%s)" % error)
    if isinstance(data, dict) and key in data:
        data = data[key]
    if not isinstance(data, list):
        raise bad("the top level is not a list")
    tensors = []
    for i, item in enumerate(data):
        if not isinstance(item, dict) or not {"dtype", "values"} <= set(item):
            raise bad("%s %d has no dtype or no values" % (key[:-1], i))
        values = item["values"]
        if not isinstance(values, list) or not all(isinstance(v, (int, float)) for v in values):
            raise bad("%s %d: values must be a flat list of numbers" % (key[:-1], i))
        shape = item.get("shape", [len(values)])
        if not isinstance(shape, list) or not all(isinstance(d, int) and d >= 0 for d in shape):
            raise bad("%s %d: shape must be a list of sizes" % (key[:-1], i))
        if math.prod(shape) != len(values):
            raise bad("%s %d: shape %s holds %d values, the list has %d"
                      % (key[:-1], i, shape, math.prod(shape), len(values)))
        atol = item.get("atol")
        if atol is not None and (isinstance(atol, bool) or not isinstance(atol, (int, float))
                                 or not math.isfinite(atol) or atol < 0):
            raise bad("%s %d: atol must be a finite number of at least 0" % (key[:-1], i))
        tensors.append(Tensor(str(item["dtype"]), shape, values, atol))
    return tensors


def check_inputs(tensors: List[Tensor], specs, path: str, model: str) -> List[InputArray]:
    """The inputs as raw little-endian bytes with their sizes, after checking count, dtype
    and shape of each against the program's inputs (pte.ValueSpec list)."""
    expected = "; ".join("input %d: %s" % (i, s.describe()) for i, s in enumerate(specs))
    if len(tensors) != len(specs):
        raise BuildSetupError(
            "The inputs file '%s' gives %d input%s, but %s takes %d (%s)."
            % (path, len(tensors), "" if len(tensors) == 1 else "s", model, len(specs), expected))
    arrays = []
    for i, (tensor, spec) in enumerate(zip(tensors, specs)):
        if spec.kind != "tensor":
            raise BuildSetupError("Input %d of %s is a %s, not a tensor: the runner only sets "
                                  "tensor inputs." % (i, model, spec.kind))
        if tensor.dtype != spec.dtype or not fits_shape(tensor.shape, spec):
            bound = (" Its shape is dynamic, up to that one: the same number of dimensions, "
                     "each at most its size there." if spec.dynamic else "")
            raise BuildSetupError(
                "Input %d in '%s' is %s[%s], but %s expects %s (%s).%s"
                % (i, path, tensor.dtype, ",".join(map(str, tensor.shape)), model,
                   spec.describe(), expected, bound))
        fmt = PACK_FORMATS.get(tensor.dtype)
        if fmt is None:
            raise BuildSetupError("Input %d of %s is %s, which the inputs file cannot give "
                                  "(supported: %s)." % (i, model, tensor.dtype, ", ".join(PACK_FORMATS)))
        values = in_dim_order(tensor.values, tensor.shape, spec.dim_order)
        try:
            arrays.append(InputArray(b"".join(pack_value(fmt, v) for v in values),
                                     list(tensor.shape)))
        except (struct.error, OverflowError) as error:     # 1e39 for a float32: Overflow
            raise BuildSetupError("Input %d in '%s': a value does not fit %s (%s)."
                                  % (i, path, tensor.dtype, error))
    return arrays


def pack_value(fmt: str, value) -> bytes:
    """One element's bytes (PACK_FORMATS); bfloat16 is float32's upper half, rounded to
    nearest even as PyTorch converts it."""
    if fmt != "bf16":
        return struct.pack(fmt, value)
    bits = struct.unpack("<I", struct.pack("<f", value))[0]
    if math.isnan(value):
        return struct.pack("<H", 0x7fc0 | (bits >> 16 & 0x8000))
    bits += 0x7fff + (bits >> 16 & 1)
    if bits >> 16 & 0x7fff == 0x7f80 and not math.isinf(value):
        raise OverflowError("%r is beyond bfloat16's range" % value)
    return struct.pack("<H", bits >> 16 & 0xffff)


def in_dim_order(values, shape, dim_order):
    """Values given in logical order (row-major over the shape, as PyTorch's
    tensor.flatten() gives them) laid out as the tensor is in memory: dimension
    dim_order[0] outermost (channels-last: (0, 2, 3, 1)). The runner prints outputs
    back in logical order."""
    dim_order = list(dim_order)
    if not dim_order or dim_order == sorted(dim_order) or len(values) <= 1:
        return list(values)
    strides = [1] * len(shape)
    for i in range(len(shape) - 2, -1, -1):
        strides[i] = strides[i + 1] * shape[i + 1]
    out = []
    index = [0] * len(shape)
    for _ in range(len(values)):
        out.append(values[sum(index[d] * strides[d] for d in range(len(shape)))])
        for position in reversed(range(len(dim_order))):   # next index in memory order
            d = dim_order[position]
            index[d] += 1
            if index[d] < shape[d]:
                break
            index[d] = 0
    return out


def check_expected(tensors: List[Tensor], specs, path: str, model: str) -> None:
    """Expected outputs that cannot match the program's outputs (count, dtype, shape)
    are refused before anything is built, not found after building and running."""
    described = "; ".join("output %d: %s" % (i, s.describe()) for i, s in enumerate(specs))
    if len(tensors) != len(specs):
        raise BuildSetupError(
            "The expected outputs file '%s' ($MODEL_EXPECTED) gives %d output%s, but %s has %d "
            "(%s)." % (path, len(tensors), "" if len(tensors) == 1 else "s", model,
                       len(specs), described))
    for i, (tensor, spec) in enumerate(zip(tensors, specs)):
        if spec.kind == "tensor" and spec.dtype and spec.shape and (
                tensor.dtype != spec.dtype or not fits_shape(tensor.shape, spec)):
            raise BuildSetupError(
                "Output %d in '%s' ($MODEL_EXPECTED) is %s[%s], but %s gives %s (%s)."
                % (i, path, tensor.dtype, ",".join(map(str, tensor.shape)), model,
                   spec.describe(), described))


def parse_outputs(text: str):
    """{index: Tensor} of the runner's `Output i: dtype[shape] v,v,...` lines."""
    outputs = {}
    for match in OUTPUT_LINE.finditer(text):
        index, dtype, shape, values = match.groups()
        dims = [int(d) for d in (shape or "").split(",") if d]
        numbers = [parse_number(v) for v in values.split(",") if v.strip()]
        outputs[int(index)] = Tensor(dtype.strip(), dims, numbers)
    return outputs


def parse_number(text: str):
    """A printed value: an integer as int (exact: int64 values above 2**53 are no
    float's), else a float; the runner prints huge/tiny floats as 0x1.8p-70. Anything
    else (`?` for a dtype it cannot print) is NaN, which equals nothing expected."""
    text = text.strip()
    for parse in (int, float, float.fromhex):
        try:
            return parse(text)
        except ValueError:
            pass
    return math.nan


def compare(actual: dict, expected: List[Tensor], atol: float, rtol: float) -> Optional[str]:
    """None when the outputs match, else one sentence on the first difference."""
    if len(actual) != len(expected):
        return "the program printed %d output%s, %d expected" % (
            len(actual), "" if len(actual) == 1 else "s", len(expected))
    for i, want in enumerate(expected):
        got = actual.get(i)
        if got is None:
            return "output %d was not printed" % i
        if got.dtype != want.dtype or got.shape != list(want.shape):
            return "output %d is %s[%s], expected %s[%s]" % (
                i, got.dtype, ",".join(map(str, got.shape)), want.dtype,
                ",".join(map(str, want.shape)))
        if len(got.values) != len(want.values):
            return "output %d printed %d values, %d expected" % (
                i, len(got.values), len(want.values))
        exact = not want.dtype.startswith(("float", "bfloat"))
        tolerance = max(atol, want.atol or 0.0)
        for j, (g, e) in enumerate(zip(got.values, want.values)):
            if exact:
                same = g == e
            elif math.isfinite(e) and math.isfinite(g):
                # numpy.allclose's rule: |actual - expected| <= atol + rtol * |expected|
                same = abs(g - e) <= tolerance + rtol * abs(e)
            else:
                # and its infinities and NaN: the same infinity, NaN for NaN (the rule
                # above would pass anything for an expected infinity)
                same = g == e or (math.isnan(g) and math.isnan(e))
            if not same:
                return "output %d differs first at index %d: expected %r, got %r" % (i, j, e, g)
    return None
