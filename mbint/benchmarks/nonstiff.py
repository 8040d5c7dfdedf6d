"""The non-stiff benchmark problems: the Arenstorf orbit and a mass-spring-damper.

Each comes with its Python right-hand side, the name of its C one
(``mbint.problems.c_rhs``) and an exact final state: the Arenstorf orbit is periodic
(y(T) = y0 after one period T), the mass-spring-damper has a closed form.  Timing as
``make bench`` does it (``tests/benchmarks/bench_nonstiff.py``):
:func:`mbint.benchmarks.interleaved_best` with ``ROUNDS``, ``ROUND_S``, ``MIN_REPS``.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import problems

ROUNDS = 7           # interleaved rounds; the best time over all of them is kept
ROUND_S = 0.03       # a solver faster than this runs more than MIN_REPS times per round [s]
MIN_REPS = 3         # runs of each solver per round, at least
MSD_T = 10.0         # the mass-spring-damper's interval [s]

__all__ = ["Problem", "benchmark_problems", "ROUNDS", "ROUND_S", "MIN_REPS", "MSD_T"]


@dataclass(frozen=True)
class Problem:
    """A benchmark problem: Python RHS, C RHS name, interval, initial and reference final state."""

    name: str
    fun: object
    c_name: str
    t_span: tuple
    y0: np.ndarray
    y_ref: np.ndarray


def benchmark_problems():
    """The two problems of the benchmark, with their reference final states.

    Returns
    -------
    list of Problem
        The Arenstorf orbit over one period (y_ref = y0) and the mass-spring-damper from
        rest over ``MSD_T`` seconds (y_ref from ``problems.mass_spring_damper_exact``).
    """
    return [
        Problem("arenstorf", problems.arenstorf, "arenstorf", (0.0, problems.ARENSTORF_T),
                problems.ARENSTORF_Y0.copy(), problems.ARENSTORF_Y0.copy()),
        Problem("mass_spring_damper", problems.mass_spring_damper, "mass_spring_damper",
                (0.0, MSD_T), np.zeros(2), problems.mass_spring_damper_exact([MSD_T])[:, 0]),
    ]
