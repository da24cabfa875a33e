"""The ``tkit`` command group (click).

Each sub-command lives in its own module, ``autograder/commands/<name>.py``, exposing a
click command named ``command``; this file only lists them and imports a module
when its command is used, so ``tkit --help`` stays fast (no torch import). ``tkit --help``
lists only the commands whose module is part of this edition (a student edition has no
``grade``, ``validate``, ``release``...); running one that is not fails with a clear
"not available in this edition" error.

The installed entry point is ``autograder.cli:entry`` (:func:`main`, then a quick exit once
torch is loaded); ``cli.py`` at the top of a checkout is a thin shim for ``python cli.py``.
"""

from __future__ import annotations

import importlib
import importlib.util
import logging
import os
import sys

import click

from autograder import __version__

# name -> (module, one-line help)
COMMANDS: dict[str, tuple[str, str]] = {
    "check": ("autograder.commands.check", "Self-check your exercises on the public tests."),
    "grade": ("autograder.commands.grade", "Grade submissions or a whole class folder."),
    "list": ("autograder.commands.list_exercises", "List the exercises and their points."),
    "validate": ("autograder.commands.validate",
                 "Prove the suites: reference 100, stubs 0, every mutant caught."),
    "release": ("autograder.commands.release", "Write the student edition of the kit."),
    "export": ("autograder.commands.export", "Export a Gradescope autograder or an nbgrader course."),
    "data": ("autograder.commands.data", "Find, check or download the datasets (MNIST)."),
    "doctor": ("autograder.commands.doctor", "Report which sandbox protections are active here."),
    "gradebook": ("autograder.commands.gradebook", "Work with gradebooks (merge shards, export CSV)."),
    "nbgrader": ("autograder.commands.nbgrader", "Grade an nbgrader course's notebooks in the sandbox."),
    "similarity": ("autograder.commands.similarity", "Report which submissions share code (copied work)."),
}


def _unavailable(name: str, module: str, error: Exception) -> click.Command:
    @click.command(name=name, context_settings={"ignore_unknown_options": True, "allow_extra_args": True},
                   add_help_option=False)
    def command():
        raise click.ClickException(
            f"'tkit {name}' is not available in this edition of the kit ({module}: {error})")

    command.help = COMMANDS[name][1] + " (not available)"
    command.hidden = True
    return command


def available(name: str) -> bool:
    """Whether the module of sub-command ``name`` is part of this edition (found, not imported)."""
    try:
        return importlib.util.find_spec(COMMANDS[name][0]) is not None
    except ModuleNotFoundError:
        return False


class LazyGroup(click.Group):
    """A group whose sub-commands are imported only when they are run."""

    def list_commands(self, ctx):
        return sorted(name for name in COMMANDS if available(name))

    def get_command(self, ctx, name):
        if name not in COMMANDS:
            return None
        module_name, short_help = COMMANDS[name]
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as exc:
            if exc.name != module_name:
                raise
            return _unavailable(name, module_name, exc)
        command = module.command
        command.short_help = command.short_help or short_help
        return command


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "--version", prog_name="tkit")
def main():
    """transformer-kit: build a Transformer and an AutoEncoder from scratch in PyTorch.

    Edit exercises/*.py, then run `tkit check`.
    """


def entry() -> None:
    """The ``tkit`` console script: run :func:`main`; when the command imported torch, :func:`leave`
    with its exit code instead of going through the interpreter's teardown, which unloads torch
    (0.24 s for a bare ``import torch`` here, more after grading: ``farm-bench`` of
    ``python -c "import torch"`` against the same with ``os._exit(0)``). A command that did not
    import torch (``tkit --help``, ``tkit gradebook``) exits the usual way; an unexpected exception
    propagates with its traceback. Either way a Ctrl-C that comes once the command is over is
    held back (:func:`_hold_interrupts`), not delivered during the exit."""
    try:
        main.main(standalone_mode=True)
        code = 0
    except SystemExit as exc:
        code = exc.code
    except KeyboardInterrupt:   # a Ctrl-C after click's own handling, as the command returned
        code = 130
    _hold_interrupts()
    if "torch" not in sys.modules:
        sys.exit(code)
    if code is None:
        code = 0
    elif not isinstance(code, int):
        print(code, file=sys.stderr)
        code = 1
    leave(code)


def _hold_interrupts() -> None:
    """Block SIGINT for the rest of the process: the command is over (its files closed, its last
    line printed), and CPython can abort ("Fatal Python error: PyThreadState_Get ... finalizing",
    exit -6) when a signal arrives during the interpreter's teardown. A blocked Ctrl-C stays
    pending and is dropped when the process exits with the command's own code."""
    import signal

    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})


def leave(code: int) -> None:
    """End the process now with exit status ``code``: stop the sandbox's zygote (what ``atexit``
    would do), shut logging down, flush stdout and stderr, then ``os._exit`` (no interpreter
    teardown). Only for the end of a command: every file the kit writes is closed before its
    command returns. Does not return."""
    zygote = sys.modules.get("autograder.sandbox.zygote_parent")
    if zygote is not None:
        zygote.shutdown()
    logging.shutdown()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)

if __name__ == "__main__":
    entry()
