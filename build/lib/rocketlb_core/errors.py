"""The one base class of every error that is the input's fault, not rocketlb's.

Commands map it to exit status 2 and print its message, which names the file (and, where there
is one, the row and the field) and says how to proceed; anything else that escapes a command is a
bug and ends with status 1 (``rocketlb_core.cli``). Subclasses: ``TraceError`` (trace files),
``ScenarioError`` (scenario files), ``ConformanceFileError`` (vector files), ``OutputError`` (an
output folder rocketlb may not write) and ``UsageError`` (arguments that parse but make no sense).
"""

from __future__ import annotations


class InputError(ValueError):
    """Bad input: a file, a folder or an argument the user gave. Exit status 2."""


class UsageError(InputError):
    """Arguments that parse but cannot be run (an unknown strategy, a group not in the trace)."""
