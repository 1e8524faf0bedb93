"""The `portagpu` command. Each subcommand lives in its own module here and
exposes `register(subparsers)`; the modules stay light at import time and
import heavy libraries only inside their handlers."""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from portagpu._version import __version__
from portagpu.errors import PortagpuError

# module names under portagpu.cli, in the order --help lists them
SUBCOMMAND_MODULES = ("info", "lint", "rules", "hipify", "check_kernels")

EXIT_OK, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2
EXIT_INTERRUPTED = 130  # 128 + SIGINT, as shells report Ctrl-C


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="portagpu",
        description="Cross-vendor GPU portability: detect devices, lint CUDA-isms, translate to HIP.",
    )
    parser.add_argument("--version", action="version", version=f"portagpu {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in SUBCOMMAND_MODULES:
        try:
            module = importlib.import_module(f"portagpu.cli.{name}")
        except ModuleNotFoundError as exc:
            if exc.name == f"portagpu.cli.{name}":
                continue  # subcommand not built yet
            raise
        module.register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return EXIT_ERROR
    try:
        return int(args.func(args) or 0)
    except PortagpuError as exc:
        print(f"portagpu: error: {exc}", file=sys.stderr)
        return EXIT_ERROR
    except KeyboardInterrupt:
        print("portagpu: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        return EXIT_OK


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
