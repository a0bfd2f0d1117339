"""Errors the build reports to users as one paragraph, without a traceback."""


class BuildSetupError(Exception):
    """Bad options or environment found while SConstruct is read (missing toolchain,
    ExecuTorch tree or model, unknown option value, ...). SConstruct prints the
    message and exits non-zero."""
