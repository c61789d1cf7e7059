"""The `edgecc` command line: one module per verb, each with `add_parser(sub)` and `run(args)`.

Owns: the verbs in their help order (VERBS), `build_parser`, and `main`: every EdgeccError (and
an unusable path) becomes one line on stderr with exit status 2, any other exception (a bug) exit
3, never a traceback; a closed stdout (`edgecc ... --json | head -c1`) ends quietly with 141, as
a shell reports a command killed by SIGPIPE. What the verbs share (flag helpers, the one CompileOptions of a command
line) is common.py; what each verb prints is its own module.
"""
from __future__ import annotations

import argparse
import contextlib
import os
import signal
import sys
import warnings

import numpy as np

from edgecc import diagnostics
from edgecc.cli import budget, common, compile, inspect, ops, plan, report, verify
from edgecc.cli.common import Parser, error_line
from edgecc.diagnostics import EXIT_BAD_INPUT, EXIT_INTERNAL, internal_message
from edgecc.errors import EdgeccError
from edgecc.version import __version__

EXIT_BROKEN_PIPE = 141  # 128 + SIGPIPE: what `git log | head -1` and friends exit with
VERBS = (compile, verify, budget, inspect, report, ops, plan)  # the order `edgecc --help` lists


def build_parser() -> argparse.ArgumentParser:
    p = Parser(prog="edgecc", description="Compile quantized neural networks to plain C.")
    p.add_argument("--version", action="version", version=f"edgecc {__version__}")
    sub = p.add_subparsers(dest="cmd", required=True, parser_class=Parser)
    for verb in VERBS:
        verb.add_parser(sub)
    return p


@contextlib.contextmanager
def _terminate_as_interrupt():
    """SIGTERM (a CI job cancelled) unwinds like SIGINT, so the output layer removes its staging
    folder and leaves the old output (edgecc/fileio.py); only where SIGTERM was not handled."""
    def handler(signum, frame):
        raise KeyboardInterrupt
    try:
        old = signal.signal(signal.SIGTERM, handler) \
            if signal.getsignal(signal.SIGTERM) == signal.SIG_DFL else None
    except ValueError:  # not the main thread
        old = None
    try:
        yield
    finally:
        if old is not None:
            signal.signal(signal.SIGTERM, old)


def _stdout_closed() -> int:
    """The reader of stdout went away: nothing more can be said there, and nothing is said on
    stderr either (the user closed the pipe on purpose). stdout is pointed at /dev/null so the
    interpreter's final flush of what is still buffered cannot fail again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):  # stdout without a file descriptor (a test's capture)
        pass
    return EXIT_BROKEN_PIPE


def main(argv: list[str] | None = None) -> int:
    try:
        status = _main(argv)
        sys.stdout.flush()  # inside the try: a closed pipe shows here, not at interpreter exit
    except BrokenPipeError:
        return _stdout_closed()
    return status


def _main(argv: list[str] | None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    common.JSON_ERRORS = "--json" in argv  # argument errors as JSON too
    args = build_parser().parse_args(argv)
    try:
        with warnings.catch_warnings(), np.errstate(all="ignore"), _terminate_as_interrupt():
            warnings.simplefilter("ignore")  # stderr carries the one result line, nothing else
            return args.fn(args)
    except BrokenPipeError:
        raise
    except EdgeccError as e:
        error_line(str(e), args)
        return EXIT_BAD_INPUT
    except OSError as e:  # the user's paths: unwritable -o folder, unreadable board file, ...
        where = f"{e.filename}: " if e.filename else ""
        error_line(f"{where}{e.strerror or e}", args)
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        return 130
    except (Exception, RecursionError) as e:  # anything else is a bug in edgecc: exit 3
        diagnostics.report("internal error", internal_message(e),
                           bool(getattr(args, "json", False)))
        return EXIT_INTERNAL
