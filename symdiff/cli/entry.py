"""The console script: `symdiff hook …` answers without loading click or the library (a hook
runs on every tool call of an agent); every other command goes to the click group."""

from __future__ import annotations

import sys


def main() -> None:
    """Console-script entry point."""
    args = sys.argv[1:]
    if (len(args) >= 2 and args[0] == "hook" and args[1] in ("claude-code", "event")
            and not {"-h", "--help"} & set(args)):
        from symdiff.api import hook

        sys.exit(hook(args[1:]))
    from symdiff.cli.main import main as cli

    cli()
