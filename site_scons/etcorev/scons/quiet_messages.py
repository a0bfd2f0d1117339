"""One-line build messages (the quiet tool) for any tool's actions:

    set_message(env, "VERILOGHEXCOMSTR", "Writing", "target")
    ->  [ 42%] Writing add/executor_runner.hex

A message only shows where the quiet tool is loaded, whichever is loaded first: the
messages asked for are kept in $QUIET_MESSAGES, and the quiet tool sets every one of
them (on loading, and here when it is loaded already). Without the quiet tool, or with
$VERBOSE, SCons prints the commands themselves."""


def set_message(env, comstr, verb, subject):
    """subject: "target" or "source", the node the message names."""
    message = "%s ${QUIET_%s}" % (verb, subject.upper())
    env.SetDefault(QUIET_MESSAGES={})
    env["QUIET_MESSAGES"][comstr] = message
    if "quiet" in env.get("TOOLS", []) and not env.get("VERBOSE"):
        env[comstr] = message
