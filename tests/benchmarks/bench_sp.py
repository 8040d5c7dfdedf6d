"""Benchmark of the singular-perturbation scheme (SP paper: the pendulum with a particle):
work against precision, as ``mbint.benchmarks.sp`` describes (the contenders, the
accuracy measures and the reference).  The code is ``mbint.benchmarks.sp`` (installed
with the package, for the notebooks); this file is the script."""

from __future__ import annotations

import argparse
import json
import pathlib

from mbint.benchmarks import at_error  # noqa: F401  (the same matched-error interpolation)
from mbint.benchmarks.sp import (CONTENDERS, FAST, PROBLEM, ROUNDS, SLOW, SPAN,  # noqa: F401
                                 T_EVAL, measure, paper_point, ratio, report, run, runner,
                                 sweeps, targets)

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parents[1]
OUT_MD = ROOT / "out" / "bench_sp.md"


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--json", default=None)
    args = ap.parse_args(argv)
    rows = run(quick=args.quick)
    text = report(rows)
    OUT_MD.parent.mkdir(parents=True, exist_ok=True)
    OUT_MD.write_text(text)
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps(dict(rows=rows)))
    print(text)
    print(f"written to {OUT_MD}")


if __name__ == "__main__":
    main()
