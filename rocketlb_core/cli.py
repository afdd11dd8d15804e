"""What every command of the ``rocketlb`` tool shares (``rocketlb_core.commands``): the common
options, the ``--help`` layout and how a command ends.

Options, the same wherever they appear: ``--out DIR`` (an output folder, written atomically),
``--force``, ``--seed N``, ``--engine python|spark``, ``--master URL`` and ``--quiet`` (no
progress or report on stderr). The result is one JSON document on stdout; progress and human
reports go to stderr.

Exit status, the same for every command (stated in each ``--help``):

* 0: success;
* 2: bad input: a file, folder or argument the user gave (``InputError``: the message names the
  file, and the row and field where there is one); nothing was written;
* 1: an internal error: a bug in rocketlb. The message says so; ``ROCKETLB_TRACEBACK=1``
  prints the traceback for a report;
* 3: the command ran, and a check it was asked to make failed (``simulate``: a scenario's
  ``[expect]``; ``conformance``: a vector that does not match).

A closed pipe on stdout (``... | head``) ends the command quietly, with the status it would
have had: the output folder is written before anything is printed.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import sys
import textwrap
import traceback
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from rocketlb_core.errors import InputError, UsageError
from rocketlb_core.numbers import INT64_MAX, int_option

EXIT_OK, EXIT_INTERNAL, EXIT_INPUT, EXIT_CHECK = 0, 1, 2, 3

EXIT_HELP = ("exit status: 0 success; 2 bad input (the message names the file, row and field; "
             "nothing is written); 1 internal error (a bug: rerun with ROCKETLB_TRACEBACK=1 and "
             "report it){checks}. Output folders are replaced only when absent, empty or an "
             "earlier rocketlb output (--force for others, never /, home or the current folder "
             "or their ancestors, or an input).")


FORCE_HELP = ("replace --out even when it holds files rocketlb did not write (never /, the home "
              "folder or the current folder or their ancestors, or an input)")


def add_out(ap: argparse.ArgumentParser, *, required: bool = True,
            help: str = "output folder (absent, empty, or an earlier output: replaced)") -> None:
    """``--out DIR`` and ``--force``."""
    ap.add_argument("--out", type=Path, required=required, default=None, help=help)
    ap.add_argument("--force", action="store_true", help=FORCE_HELP)


def add_seed(ap: argparse.ArgumentParser) -> None:
    """``--seed N``: every random choice of the command derives from it."""
    ap.add_argument("--seed", type=int_option(0, INT64_MAX), default=0,
                    help="seed of every random choice (default 0)")


def check_seed(seed: int) -> int:
    if not 0 <= seed < 1 << 63:
        raise UsageError(f"--seed must be from 0 to 2^63-1, got {seed}")
    return seed


def add_engine(ap: argparse.ArgumentParser) -> None:
    """``--engine python|spark`` and ``--master``."""
    ap.add_argument("--engine", choices=("python", "spark"), default="python")
    ap.add_argument("--master", default=None,
                    help="Spark master (local[*], spark://host:7077, sc://host:15002); default "
                         "$ROCKETLB_SPARK_MASTER, else embedded local[*]")


def add_quiet(ap: argparse.ArgumentParser) -> None:
    ap.add_argument("--quiet", "-q", action="store_true",
                    help="nothing on stderr but errors (no progress, no report)")


def say(args: argparse.Namespace, text: str) -> None:
    """A human line on stderr, unless ``--quiet``."""
    if not getattr(args, "quiet", False):
        _stderr(text)


EXTRA_OF = {"numpy": "replay", "pyarrow": "replay", "pyspark": "spark", "py4j": "spark",
            "pandas": "viz", "altair": "viz", "vl_convert": "viz", "ipywidgets": "viz",
            "anywidget": "viz"}
"""A third-party module -> the smallest extra of ``pyproject.toml`` that installs it."""


def epilog(example: str, checks: str = "") -> str:
    """The end of a ``--help``: an example and the exit statuses (``checks`` describes status 3
    for a command that checks something)."""
    extra = f"; 3 {checks}" if checks else ""
    return f"example:\n  {example}\n\n" + textwrap.fill(EXIT_HELP.format(checks=extra), 79)


def parser(prog: str, description: str, example: str, *, checks: str = ""
           ) -> argparse.ArgumentParser:
    """An ``ArgumentParser`` whose ``--help`` ends with ``epilog``."""
    return argparse.ArgumentParser(prog=prog, description=description,
                                   epilog=epilog(example, checks),
                                   formatter_class=argparse.RawDescriptionHelpFormatter)


def subparser(sub: Any, name: str, summary: str, example: str,
              func: Callable[[argparse.Namespace], int], *, checks: str = "",
              description: str | None = None) -> argparse.ArgumentParser:
    """A subcommand's parser (``sub`` from ``add_subparsers``) whose ``--help`` ends with
    ``epilog``; ``func(args)`` is its body, returning the exit status."""
    p: argparse.ArgumentParser = sub.add_parser(
        name, help=summary, description=description or summary,
        epilog=epilog(example, checks), formatter_class=argparse.RawDescriptionHelpFormatter)
    p.set_defaults(func=func)
    return p


class Terminated(BaseException):
    """SIGTERM or SIGHUP arrived: raised in the main thread so that every ``finally`` runs (an
    output's temporary folder and lock are removed, as for Ctrl-C)."""


@contextlib.contextmanager
def terminate_cleanly() -> Iterator[None]:
    """While a command runs, SIGTERM and SIGHUP raise ``Terminated`` instead of ending the
    process at once (SIGKILL cannot be caught: the next run on the folder sweeps what it left,
    ``rocketlb_core.atomic``)."""
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def stop(signum: int, frame: Any) -> None:
        raise Terminated(signum)

    old = {s: signal.signal(s, stop) for s in (signal.SIGTERM, signal.SIGHUP)}
    try:
        yield
    finally:
        for s, handler in old.items():
            signal.signal(s, handler)


def _os_error_text(exc: OSError) -> str | None:
    """The one line for an ``OSError`` about a path the user gave (permission denied, a name too
    long, a read-only or full file system, a link loop), or None when it names no path."""
    if exc.filename is None:
        return None
    where = os.fsdecode(exc.filename)
    if exc.filename2 is not None:
        where += f" -> {os.fsdecode(exc.filename2)}"
    return f"{where}: {exc.strerror or exc}"


def run(body: Callable[[], int]) -> int:
    """Run a command's body and turn what it raised into an exit status (module docstring)."""
    try:
        with terminate_cleanly():
            status = body()
        sys.stdout.flush()
        return status
    except InputError as exc:
        _stderr(f"error: {exc}")
        return EXIT_INPUT
    except BrokenPipeError:
        _quiet_stdout()
        return EXIT_OK
    except OSError as exc:
        text = _os_error_text(exc)
        if text is None:
            return _internal(exc)
        _stderr(f"error: {text}; nothing was written")
        return EXIT_INPUT
    except ModuleNotFoundError as exc:
        top = (exc.name or "").split(".")[0]
        if top not in EXTRA_OF:
            raise
        _stderr(f"error: this command needs {top}, which is not installed: "
                f"pip install 'rocketlb-core[{EXTRA_OF[top]}]'")
        return EXIT_INPUT
    except KeyboardInterrupt:
        _stderr("interrupted: nothing was written")
        return 130
    except Terminated as exc:
        _stderr("terminated: nothing was written")
        return 128 + int(exc.args[0]) if exc.args else 143
    except Exception as exc:
        return _internal(exc)


def _internal(exc: BaseException) -> int:
    if os.environ.get("ROCKETLB_TRACEBACK"):
        traceback.print_exc()
    _stderr(f"internal error (a bug in rocketlb, please report it): "
            f"{type(exc).__name__}: {exc}"[:2000])
    return EXIT_INTERNAL


def _quiet_stdout() -> None:
    """After the reader of stdout went away: point stdout at /dev/null, so the interpreter's
    final flush does not complain on the way out."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass
    finally:
        os.close(devnull)


_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e"
                     "\u2066-\u2069\ud800-\udfff]")


def printable(text: str) -> str:
    r"""``text`` safe to print on a terminal as one line: control characters (escape sequences,
    the bell, new lines), bidirectional overrides and undecodable bytes of a path shown as
    ``\x1b``-style escapes, so what an input holds can neither drive the terminal nor split
    a message.

    >>> printable("broker \x1b[2J\x07a\nb")
    'broker \\x1b[2J\\x07a\\nb'
    """
    def esc(m: re.Match[str]) -> str:
        c = m[0]
        if c == "\n":
            return "\\n"
        if 0xDC80 <= ord(c) <= 0xDCFF:                 # a byte that was not UTF-8 (os.fsdecode)
            return f"\\x{ord(c) - 0xDC00:02x}"
        return f"\\x{ord(c):02x}" if ord(c) < 0x100 else f"\\u{ord(c):04x}"

    return _UNSAFE.sub(esc, text)


def _stderr(text: str) -> None:
    with contextlib.suppress(BrokenPipeError, ValueError):
        print(printable(text), file=sys.stderr)


def print_json(obj: object) -> None:
    """A command's result on stdout, as the one JSON document it prints."""
    import json

    sys.stdout.write(json.dumps(obj, indent=1, sort_keys=True) + "\n")
