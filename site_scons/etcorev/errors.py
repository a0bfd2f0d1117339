"""Errors the build reports to users as one paragraph, without a traceback."""

try:                      # SCons prints a UserError as one `scons: ***` line
    from SCons.Errors import UserError as _Reported
except ImportError:       # etcorev used without SCons (benchmarks, toolchain.py)
    _Reported = Exception


class BuildSetupError(_Reported):
    """Bad settings or environment found while the build is read (missing toolchain,
    ExecuTorch tree or model, a bad value, ...). Its message names construction
    variables ($ET_ROOT: the tools serve any SConstruct); our SConstruct prints it in
    its options' words (etcorev.scons.vocabulary) and exits non-zero, another SConstruct
    gets SCons's one-line report of a UserError."""
