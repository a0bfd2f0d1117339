"""Loading SCons tools from tools: each tool declares the tools it uses (require_tools),
and several tools share the one Progress() callback SCons allows (add_progress)."""


def require_tools(env, *names):
    """Load the SCons tools a tool needs, each once (tools declare what they use)."""
    for name in names:
        if name not in env.get("TOOLS", []):
            env.Tool(name)


_progress_callbacks = []


def add_progress(callback):
    """SCons takes one Progress() callback per process; this lets several tools have
    one (quiet's percentages, the signature checkpoint)."""
    if not _progress_callbacks:
        import SCons.Script
        SCons.Script.Progress(lambda node: [call(node) for call in _progress_callbacks])
    _progress_callbacks.append(callback)
