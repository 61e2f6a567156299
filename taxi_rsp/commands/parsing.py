"""The argument parser of every `taxi-rsp` command: option mistakes in two lines.

argparse, left to itself, answers a misspelt option of ``taxi-rsp run`` with the *top
level's* usage and ``unrecognized arguments``, and any other mistake with a command's
whole usage (a dozen lines for `run`) before the one line that matters.
:class:`CommandParser` answers every mistake with the command's own name, a "did you
mean" when a known option or command is close, and a one-line usage::

    taxi-rsp run: error: unknown option --qeury; did you mean --query?
    usage: taxi-rsp run [INPUT] --out OUT [options]  (more: taxi-rsp run --help)

This module is not a sub-command (it defines no ``register``): :mod:`taxi_rsp.cli`
builds the top-level parser as a :class:`CommandParser` and its sub-commands' parsers
as :class:`SubcommandParser` (nested ones, ``vm build``, inherit the class).
"""

from __future__ import annotations

import argparse
import difflib
import re
from collections.abc import Iterable, Sequence
from typing import NoReturn

_INVALID_CHOICE = re.compile(r"argument (?P<arg>[^:]+): invalid choice: '?(?P<value>[^',)]*)'?")


def did_you_mean(word: str, known: Iterable[str]) -> str | None:
    """The known word closest to a misspelt ``word``, if one is close enough.

    >>> did_you_mean("--qeury", ["--query", "--q1-window", "--out"])
    '--query'
    >>> did_you_mean("rnu", ["run", "report", "verify"])
    'run'
    >>> did_you_mean("--colour", ["--query", "--out"]) is None
    True
    """
    # Compared without the leading dashes, which every option shares (with them,
    # --frobnicate would look like --force).
    by_name = {candidate.lstrip("-"): candidate for candidate in known}
    close = difflib.get_close_matches(word.lstrip("-"), list(by_name), n=1, cutoff=0.6)
    return by_name[close[0]] if close else None


def unknown_arguments_message(extras: Sequence[str], options: Iterable[str]) -> str:
    """What to say about arguments no option or positional took: the first unknown
    option with its likely intended spelling, else the stray words.

    >>> unknown_arguments_message(["--qeury", "q1"], ["--query", "--out"])
    'unknown option --qeury; did you mean --query?'
    >>> unknown_arguments_message(["--frobnicate"], ["--query", "--out"])
    'unknown option --frobnicate'
    >>> unknown_arguments_message(["extra.csv"], ["--query"])
    'unexpected argument extra.csv'
    """
    for word in extras:
        if word.startswith("-") and len(word) > 1:
            option = word.partition("=")[0]
            guess = did_you_mean(option, options)
            return f"unknown option {option}" + (f"; did you mean {guess}?" if guess else "")
    plural = "s" if len(extras) > 1 else ""
    return f"unexpected argument{plural} {' '.join(extras)}"


class CommandParser(argparse.ArgumentParser):
    """An ``ArgumentParser`` whose errors are one line naming the command (``taxi-rsp
    run: error: …``, with a "did you mean" where one fits) and a one-line usage."""

    def parse_args(self, args: Sequence[str] | None = None,  # type: ignore[override]
                   namespace: argparse.Namespace | None = None) -> argparse.Namespace:
        namespace, extras = self.parse_known_args(args, namespace)
        if extras:
            self.error(unknown_arguments_message(extras, self._option_strings()))
        return namespace

    def error(self, message: str) -> NoReturn:
        """Print ``PROG: error: MESSAGE`` and the one-line usage to stderr; exit 2."""
        self.exit(2, f"{self.prog}: error: {self._with_suggestion(message)}\n{self.short_usage()}\n")

    def short_usage(self) -> str:
        """``usage: PROG POSITIONALS REQUIRED-OPTIONS [options]`` and where the rest is."""
        words = []
        for action in self._actions:
            if isinstance(action, argparse._SubParsersAction):
                words.append(action.metavar or "COMMAND")
            elif not action.option_strings:
                name = action.metavar or action.dest.upper()
                words.append(f"[{name}]" if action.nargs in ("?", "*") else name)
            elif action.required:
                words.append(f"{action.option_strings[-1]} {action.metavar or action.dest.upper()}")
        return f"usage: {' '.join([self.prog, *words, '[options]'])}  (more: {self.prog} --help)"

    def _with_suggestion(self, message: str) -> str:
        match = _INVALID_CHOICE.search(message)
        if match is None:
            return message
        choices = self._choices_of(match["arg"])
        guess = did_you_mean(match["value"], choices)
        if guess is not None:
            if self._is_command_argument(match["arg"]):
                return f"unknown command {match['value']!r}; did you mean {guess}?"
            return f"argument {match['arg']}: invalid choice {match['value']!r}; did you mean {guess}?"
        if self._is_command_argument(match["arg"]):
            return f"unknown command {match['value']!r} (commands: {', '.join(choices)})"
        return message

    def _choices_of(self, argument: str) -> list[str]:
        for action in self._actions:
            names = {*action.option_strings, action.metavar, action.dest}
            if argument in names and action.choices is not None:
                return [str(choice) for choice in action.choices]
        return []

    def _is_command_argument(self, argument: str) -> bool:
        return any(isinstance(action, argparse._SubParsersAction) and argument in (action.metavar, action.dest)
                   for action in self._actions)

    def _option_strings(self) -> list[str]:
        return [option for action in self._actions for option in action.option_strings]


class SubcommandParser(CommandParser):
    """The parser of one sub-command (``taxi-rsp run``, ``taxi-rsp vm build``): an
    argument it does not know is its own error, said with its own usage, rather than
    handed up to the top level (argparse's way, which prints the top level's usage)."""

    def parse_known_args(self, args: Sequence[str] | None = None,
                         namespace: argparse.Namespace | None = None) -> tuple[argparse.Namespace, list[str]]:
        namespace, extras = super().parse_known_args(args, namespace)
        if extras:
            self.error(unknown_arguments_message(extras, self._option_strings()))
        return namespace, extras

