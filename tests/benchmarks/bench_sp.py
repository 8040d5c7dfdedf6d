"""Benchmark of the singular-perturbation scheme (issue 12; SP paper: Gil, Sanfelice,
Nikravesh, DETC2013): work against precision on the paper's pendulum with a particle
(``models.pendulum_particle()``: m1 = 100, J1 = 100, L = 1, m2 = 1e-5, k = 5; fast
mode sqrt(k / m2) = 707 rad/s), t in (0, 5).

Contenders (``mbint.simulate``, index-1 formulation, analytic Jacobian in C):

- ``singular_perturbation`` with a fixed step h (the paper's run: h = 0.005) and
  adaptive (rtol sweep, atol = rtol / 100), fast = (r2, r2') (SP eq 65);
- ``dopri5`` (ode45 in the paper), ``llm`` fixed h and adaptive, ``radau_iia``,
  ``cvode_bdf`` (atol = rtol / 100), ``rk4`` with fixed h (stable below
  h = 2.83 / 707 = 0.004 only).

Accuracy of a run, on the output grid t = 0, 0.025, ..., 5 (t_eval, 201 points):

- energy: max_k |E(t_k) - E(0)| with E of SP eq 68 (``model.reference_energy``) [J];
- slow: max_k max_i |x_i(t_k) - x_ref,i(t_k)| over the slow variables x = (r1, theta,
  r1', theta') of SP eq 65 (m, rad, m/s, rad/s), against ``dop853`` at rtol = atol =
  1e-13.

The code is ``mbint.benchmarks.sp`` (installed with the package, for the
notebooks); this file is the script.

Matched accuracy: each contender's runs form a work-precision curve, whose lower
envelope is interpolated in log-log (``mbint.benchmarks.at_error``; ``*``: the cheapest
run is already more accurate than the target).  Targets: the errors of the fixed-step
``singular_perturbation`` runs (the paper's h = 0.005 first).

Timing: the median of ``ROUNDS`` CPU times per run, the rounds interleaved (every
run once per round), so that load on a shared machine is spread over all
contenders alike.

Run: ``python tests/benchmarks/bench_sp.py [--quick] [--json PATH]`` (writes
out/bench_sp.md) or ``make bench`` (test_bench_sp.py runs it in a subprocess with
OPENBLAS_NUM_THREADS=1).
"""

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
