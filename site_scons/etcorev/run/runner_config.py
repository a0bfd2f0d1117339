"""runner_config.h: what the executor runner knows about its model at compile time. Its
memory is static, so the pools are sized from the .pte here; inputs given to the build
are compiled in as constant arrays. Only the model's own sources include it
(runner_model.cpp and, with profile=1, cycle_tracer.cpp); the runner's other sources
are compiled once per variant, with runner_defines()."""

import math

ALIGN = 16


def aligned(n):
    return (n + ALIGN - 1) // ALIGN * ALIGN


def method_pool_size(method):
    """The method allocator holds the method's values, tensors and instruction tables:
    a bound from the program's counts, with room for the runtime's own tables."""
    return aligned(2048 + 160 * method.num_values + 48 * method.num_instructions)


def pool_sizes(method, env):
    """(planned, method pool, temp pool) in bytes: the runner's static memory."""
    planned = sum(aligned(size) for size in method.planned_buffer_sizes)
    return (planned, env.get("RUNNER_METHOD_POOL") or method_pool_size(method),
            env.get("RUNNER_TEMP_POOL") or DEFAULT_TEMP_POOL)


def check_fits(program, model_file, env, region, embedded):
    """Refuse, before anything is compiled, a model whose memory cannot fit the board's
    image region whatever the code: its planned activations, the pools, the stack (and
    the model itself when it is linked in). Names each part."""
    planned, method_pool, temp_pool = pool_sizes(program.methods[0], env)
    parts = [("planned memory (the method's activations)", planned),
             ("method pool", method_pool), ("temp pool", temp_pool),
             ("stack", env["STACK_SIZE"])]
    if embedded:
        parts.append(("the model itself", program.size))
    total = sum(size for _, size in parts)
    if total <= region.length:
        return
    from etcorev.errors import BuildSetupError
    raise BuildSetupError(
        "The model '%s' does not fit board=%s: %s make %s bytes before any code, more than "
        "its %s region's %s bytes. Use a board with more memory, or a model that plans "
        "less (smaller activations)."
        % (model_file, env["BOARD"], ", ".join("%s %s" % (name, "{:,}".format(size))
                                             for name, size in parts),
           "{:,}".format(total), region.name, "{:,}".format(region.length)))


DEFAULT_TEMP_POOL = 1024


def header_lines(program, model_file, env, inputs=()):
    """The header's lines. env: the build options (pools, executions, placement, ...)."""
    method = program.methods[0]
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
        "#define RUNNER_NUM_EXECUTIONS %d" % env["RUNNER_NUM_EXECUTIONS"],
        "#define RUNNER_NUM_OUTPUTS %d" % len(method.outputs),
        "#define RUNNER_NUM_INPUTS %d" % len(inputs),
    ]
    if env.get("PROFILE"):
        # The cycle tracer's tables (cycle_tracer.h), sized for the method.
        lines += ["#define RUNNER_PROFILE_MAX_%s %d" % (name, max(1, count)) for name, count in (
            ("OPERATORS", len(method.operators)), ("DELEGATES", len(method.delegates)),
            ("CHAINS", method.num_chains), ("INSTRUCTIONS", method.num_instructions))]
    if inputs:
        for i, data in enumerate(inputs):
            lines.append("alignas(16) static const uint8_t runner_input_%d[] = {%s};"
                         % (i, ",".join(str(b) for b in data)))
        lines.append("#define RUNNER_INPUTS %s" % ", ".join(
            "{runner_input_%d, %d}" % (i, len(data)) for i, data in enumerate(inputs)))
    return lines


def runner_defines(env):
    """What the runner's own sources are compiled with: the variant's options, the same
    for every model (the model's values are in the header, for runner_model.cpp)."""
    return [("RUNNER_MODEL_EXTERNAL", int(env["MODEL_PLACEMENT"] == "external")),
            ("RUNNER_VERIFICATION", "Program::Verification::%s"
             % ("InternalConsistency" if env["BUILD_TYPE"] == "Debug" else "Minimal")),
            ("RUNNER_PROFILE", int(bool(env.get("PROFILE"))))]


def clock_defines(clock_hz):
    """The PAL converts cycles to nanoseconds by a ratio: 1e9 / clock, reduced
    (400 MHz: 5/2)."""
    divisor = math.gcd(1000000000, clock_hz)
    return [("COREV_CLOCK_NS_NUMERATOR", 1000000000 // divisor),
            ("COREV_CLOCK_NS_DENOMINATOR", clock_hz // divisor)]
