"""runner_config.h: what the executor runner knows about its model at compile time. Its
memory is static, so the pools are sized from the .pte here; inputs given to the build
are compiled in as constant arrays. Only the model's own sources include it
(runner_model.cpp and, with profile=1, cycle_tracer.cpp, with profile=etdump,
etdump_tracer.cpp); the runner's other sources are compiled once per variant, with
runner_defines()."""

import math

ALIGN = 16


def profile_mode(value):
    """The profile= value as the tools see it in $PROFILE (False, True or "etdump"; a
    SConstruct of one's own may give 0, 1, "0", "1"): None, "1" or "etdump"."""
    if isinstance(value, str):
        value = value.strip().lower()
        if value == "etdump":
            return "etdump"
        return "1" if value in ("1", "yes", "true", "on") else None
    return "1" if value else None


# ETDumpGen (devtools/etdump/etdump_flatcc.cpp) takes a quarter of its buffer, at most
# 128 KiB, for flatcc's stacks and builds the ETDump in the rest; it wants more than
# 128 KiB and its builder (aligned to 64 bytes) in all.
ETDUMP_MINIMUM = 128 * 1024 + 1024
ETDUMP_BYTES_PER_EVENT = 128   # a profile event, its Event table and name string
ETDUMP_BASE = 4096             # the ETDump's root, run blocks, allocator names


def etdump_buffer_size(method, executions):
    """The static buffer of profile=etdump for `executions` runs of the method: per run
    an event for Method::execute and up to two per instruction (the instruction's, and
    the kernel's inside a kernel call), and the load phases."""
    events = 4 + executions * (1 + 2 * max(1, method.num_instructions))
    needed = ETDUMP_BASE + ETDUMP_BYTES_PER_EVENT * events
    return aligned(1024 + max(ETDUMP_MINIMUM, (needed * 4 + 2) // 3))


def executions(program, env):
    """How many times the runner executes the method: num_executions= for each of a
    bundled program's test cases."""
    runs = env["RUNNER_NUM_EXECUTIONS"]
    if program.is_bundled:
        runs *= max(1, len(program.bundle.test_suites.get(program.method.name, [])))
    return runs


def aligned(n):
    return (n + ALIGN - 1) // ALIGN * ALIGN


def method_pool_size(method):
    """The method allocator holds the method's values, tensors and instruction tables:
    a bound from the program's counts, with room for the runtime's own tables; and the
    memory of the inputs and outputs the program does not plan (the runner takes it from
    this pool)."""
    return aligned(2048 + 160 * method.num_values + 48 * method.num_instructions
                   + unplanned_io_bytes(method))


def unplanned_io_bytes(method):
    """The bytes of the method's tensor inputs and outputs whose memory the program leaves
    to the caller (MemoryPlanningPass(alloc_graph_input=False, ...)), each 16-byte
    aligned."""
    return sum(aligned(spec.nbytes) + ALIGN for spec in method.inputs + method.outputs
               if spec.kind == "tensor" and not spec.planned)


def temp_pool_size(method):
    """The temp allocator's pool when temp_pool= does not say: what ExecuTorch's Cortex-M
    operators take from it for this method (scratch buffers planned for another CMSIS-NN
    backend than the C path that runs), at least DEFAULT_TEMP_POOL."""
    from etcorev.executorch import cortex_m_forms
    return aligned(max(DEFAULT_TEMP_POOL, cortex_m_forms.temp_pool_bytes(method)))


def pool_sizes(method, env):
    """(planned, method pool, temp pool) in bytes: the runner's static memory."""
    planned = sum(aligned(size) for size in method.planned_buffer_sizes)
    return (planned, env.get("RUNNER_METHOD_POOL") or method_pool_size(method),
            env.get("RUNNER_TEMP_POOL") or temp_pool_size(method))


def check_fits(program, model_file, env, region, embedded):
    """Refuse, before anything is compiled, a model whose memory cannot fit the board's
    image region whatever the code: its planned activations, the pools, the stack (and
    the model itself when it is linked in). Names each part."""
    planned, method_pool, temp_pool = pool_sizes(program.method, env)
    parts = [("planned memory (the method's activations)", planned),
             ("method pool", method_pool), ("temp pool", temp_pool),
             ("stack", env["STACK_SIZE"])]
    if profile_mode(env.get("PROFILE")) == "etdump":
        parts.append(("the ETDump buffer", etdump_buffer_size(program.method,
                                                              executions(program, env))))
    if embedded:
        parts.append(("the model itself", program.size))
    total = sum(size for _, size in parts)
    if total <= region.length:
        return
    from etcorev.errors import BuildSetupError
    raise BuildSetupError(
        "The model '%s' does not fit $BOARD=%s: %s make %s bytes before any code, more than "
        "its %s region's %s bytes. Use a board with more memory, or a model that plans "
        "less (smaller activations)."
        % (model_file, env["BOARD"], ", ".join("%s %s" % (name, "{:,}".format(size))
                                             for name, size in parts),
           "{:,}".format(total), region.name, "{:,}".format(region.length)))


# The temp pool of a model whose kernels ask for none in particular.
DEFAULT_TEMP_POOL = 1024


def state_ranges(method):
    """The planned memory the runner zeroes before the method loads, merged: (planned
    buffer index, offset, bytes) of each run of Method.state_memory (a mutable buffer
    starts from zeros, as in ExecuTorch's runners, whose arenas are zero-initialised;
    the pool itself is .noinit, not cleared at start-up)."""
    merged = []
    for memory_id, offset, size in sorted(set(method.state_memory)):
        # allocation_info's memory id 0 is reserved: planned buffer i has id i + 1
        if merged and merged[-1][0] == memory_id - 1 and offset <= merged[-1][1] + merged[-1][2]:
            last = merged[-1]
            merged[-1] = (last[0], last[1], max(last[2], offset + size - last[1]))
        else:
            merged.append((memory_id - 1, offset, size))
    return merged


def c_string(text):
    """A C string literal of text's UTF-8 bytes (printable ASCII as itself, the rest as
    octal escapes: a method's name is any string the exporter was given)."""
    return '"%s"' % "".join(
        chr(b) if 32 <= b < 127 and chr(b) not in '"\\?' else "\\%03o" % b
        for b in text.encode("utf-8"))


def header_lines(program, model_file, env, inputs=()):
    """The header's lines. env: the build options (pools, executions, placement, ...)."""
    method = program.method
    planned = [aligned(size) for size in method.planned_buffer_sizes]
    planned_pool, method_pool, temp_pool = pool_sizes(method, env)
    lines = [
        "// Generated from %s and the build options." % model_file,
        "#pragma once",
        "#include <stddef.h>",
        "#include <stdint.h>",
        "#define RUNNER_METHOD_POOL_SIZE %d" % method_pool,
        "#define RUNNER_TEMP_POOL_SIZE %d" % temp_pool,
        "#define RUNNER_PLANNED_POOL_SIZE %d" % planned_pool,
        "#define RUNNER_MAX_PLANNED_BUFFERS %d" % len(planned),
        "#define RUNNER_METHOD_NAME %s" % c_string(method.name),
        "#define RUNNER_NUM_EXECUTIONS %d" % env["RUNNER_NUM_EXECUTIONS"],
        "#define RUNNER_NUM_OUTPUTS %d" % len(method.outputs),
        "#define RUNNER_NUM_INPUTS %d" % len(inputs),
    ]
    state = state_ranges(method)
    lines.append("#define RUNNER_NUM_STATE_RANGES %d" % len(state))
    if state:
        # {planned buffer index, offset, bytes}: zeroed before the method loads
        lines.append("#define RUNNER_STATE_RANGES %s" % ", ".join(
            "{%d, %d, %d}" % r for r in state))
    profile = profile_mode(env.get("PROFILE"))
    if profile == "1":
        # The cycle tracer's tables (cycle_tracer.h), sized for the method.
        lines += ["#define RUNNER_PROFILE_MAX_%s %d" % (name, max(1, count)) for name, count in (
            ("OPERATORS", len(method.operators)), ("DELEGATES", len(method.delegates)),
            ("CHAINS", method.num_chains), ("INSTRUCTIONS", method.num_instructions))]
    elif profile == "etdump":
        lines.append("#define RUNNER_ETDUMP_BUFFER_SIZE %d"
                     % etdump_buffer_size(method, executions(program, env)))
    if program.is_bundled:
        # The tolerances the runner checks the test cases' float outputs with.
        lines += ["#define RUNNER_RTOL %r" % float(env.get("RUN_RTOL", 1e-5)),
                  "#define RUNNER_ATOL %r" % float(env.get("RUN_ATOL", 1e-6))]
    if inputs:
        # model_io.InputArray: the bytes, and the sizes the runner resizes the tensor to
        for i, given in enumerate(inputs):
            lines.append("alignas(16) static const uint8_t runner_input_%d[] = {%s};"
                         % (i, ",".join(str(b) for b in given.data)))
            lines.append("static const int32_t runner_input_sizes_%d[] = {%s};"
                         % (i, ",".join(str(d) for d in given.sizes) or "0"))
        lines.append("#define RUNNER_INPUTS %s" % ", ".join(
            "{runner_input_%d, %d, runner_input_sizes_%d, %d}"
            % (i, len(given.data), i, len(given.sizes)) for i, given in enumerate(inputs)))
    return lines


def io_defines(method):
    """What runner_model_io.cpp is compiled with for a model: which of the features that
    need the runtime's headers its method has (one object per combination and variant,
    shared by the models that have it, where runner_config.h would make it one per
    model)."""
    return [("RUNNER_UNPLANNED_IO", int(bool(unplanned_io_bytes(method)))),
            ("RUNNER_DYNAMIC_INPUTS", int(any(spec.dynamic for spec in method.inputs)))]


def runner_defines(env):
    """What the runner's own sources are compiled with: the variant's options, the same
    for every model (the model's values are in the header, for runner_model.cpp)."""
    return [("RUNNER_MODEL_EXTERNAL", int(env["MODEL_PLACEMENT"] == "external")),
            ("RUNNER_VERIFICATION", "Program::Verification::%s"
             % ("InternalConsistency" if env["BUILD_TYPE"] == "Debug" else "Minimal")),
            ("RUNNER_PROFILE", {None: 0, "1": 1, "etdump": 2}[profile_mode(env.get("PROFILE"))])]


def clock_defines(clock_hz):
    """The PAL converts cycles to nanoseconds by a ratio: 1e9 / clock, reduced
    (400 MHz: 5/2)."""
    divisor = math.gcd(1000000000, clock_hz)
    return [("COREV_CLOCK_NS_NUMERATOR", 1000000000 // divisor),
            ("COREV_CLOCK_NS_DENOMINATOR", clock_hz // divisor)]
