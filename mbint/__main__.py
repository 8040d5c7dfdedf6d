"""Command line of mbint: ``python -m mbint demo [--out DIR] [--quick]``."""
from __future__ import annotations

import argparse
import sys

__all__ = ["main"]


def main(argv=None):
    """Entry point of ``python -m mbint``.

    Parameters
    ----------
    argv : list of str, optional
        Arguments (default ``sys.argv[1:]``).

    Returns
    -------
    int
        Exit status.
    """
    parser = argparse.ArgumentParser(prog="python -m mbint",
                                     description="mbint: integrators for multibody dynamics.")
    sub = parser.add_subparsers(dest="command", metavar="command", required=True)
    p_demo = sub.add_parser("demo", help="reproduce the lecture notes' examples into --out",
                            description="Reproduce the lecture notes' examples: figures, "
                                        "summary.md and summary.csv.")
    p_demo.add_argument("--out", default="out", help="output directory (default: out)")
    p_demo.add_argument("--quick", action="store_true",
                        help="smaller settings, a few seconds (used by the tests)")
    args = parser.parse_args(argv)
    if args.command == "demo":
        from .demo import demo

        demo(args.out, quick=args.quick)
    return 0




if __name__ == "__main__":
    sys.exit(main())
