"""One-line build messages (the quiet tool) for any tool's actions:

    set_message(env, "VERILOGHEXCOMSTR", "Writing", "target")
    ->  [ 42%] Writing add/executor_runner.hex

With $VERBOSE nothing is set, and SCons prints the commands themselves."""

from etcorev.scons.tools import require_tools


def set_message(env, comstr, verb, subject):
    """subject: "target" or "source", the node the message names."""
    if env.get("VERBOSE"):
        return
    require_tools(env, "quiet")
    env[comstr] = "%s ${QUIET_%s}" % (verb, subject.upper())
