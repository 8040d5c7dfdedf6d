"""Non-stiff benchmark: mbint's explicit methods against ``scipy.integrate.solve_ivp``.

Two problems from :mod:`mbint.problems`, both at ``rtol = 1e-6``, ``atol = 1e-9``:

* the Arenstorf orbit over one period (Hairer, Norsett, Wanner I, II.0); the
  reference is the initial state, since the orbit is periodic;
* the mass-spring-damper of the lecture notes (eq 7.7) from rest over
  ``[0, 10]``; the reference is its closed form.

SciPy's RK45 and DOP853 get the Python right-hand side.  Every mbint method runs
twice: with the same Python right-hand side, and with that right-hand side
compiled in C (``problems.c_rhs``, a ``scipy.LowLevelCallable``; no Python per
step, the GIL released).

Timing: best CPU time (``time.process_time``) over ``ROUNDS`` rounds.  The
rounds are interleaved: each round times every solver of the problem
``MIN_REPS`` times in a row (fast ones more often, for about ``ROUND_S``
seconds), so a change of machine load hits SciPy and mbint alike.  The speed-up is SciPy RK45's best time
over the row's best time.  The final error (max norm at the end point) is
printed next to the time, so that the comparison is made at comparable accuracy.

Run ``python tests/benchmarks/bench_nonstiff.py`` or ``make bench``; the table is
printed and written to ``out/bench_nonstiff.md``.
"""
from __future__ import annotations

import math
import platform
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import scipy
from scipy.integrate import solve_ivp as scipy_solve_ivp

import mbint
from mbint import _core, problems
from mbint.benchmarks import interleaved_best  # noqa: F401
from mbint.benchmarks.nonstiff import (MIN_REPS, MSD_T, ROUND_S, ROUNDS, Problem,  # noqa: F401
                                       benchmark_problems)

RTOL = 1e-6
ATOL = 1e-9
OUT_MD = Path(__file__).resolve().parents[2] / "out" / "bench_nonstiff.md"

MBINT_METHODS = ("dopri5", "rk23", "adams")


@dataclass
class Row:
    """One line of the table."""

    problem: str
    solver: str          # "scipy RK45", "mbint dopri5", ...
    rhs: str             # "python", or "C" (the LowLevelCallable)
    time_s: float        # best CPU time
    n_runs: int          # timed runs the best was taken over
    nfev: int
    error: float         # max |y(tf) - y_ref|
    status: int
    speedup: float = math.nan   # SciPy RK45 time / time_s


def find(rows, problem, solver, rhs):
    """The row of (problem, solver, rhs)."""
    for r in rows:
        if (r.problem, r.solver, r.rhs) == (problem, solver, rhs):
            return r
    raise KeyError((problem, solver, rhs))


def _fun_batch(fun, t, y, batch=100):
    """A callable making ``batch`` calls of ``fun(t, y)`` (to time one call of fun)."""
    def run():
        for _ in range(batch):
            fun(t, y)
    return run


def run_problem(prob):
    """Time every solver on ``prob``.

    Returns
    -------
    rows : list of Row
        SciPy RK45 first.
    t_fun : float
        Seconds per call of the Python right-hand side (timed in the same rounds).
    """
    kw = dict(rtol=RTOL, atol=ATOL)
    c_fun = problems.c_rhs(prob.c_name)
    runs = {
        ("scipy RK45", "python"):
            lambda: scipy_solve_ivp(prob.fun, prob.t_span, prob.y0, method="RK45", **kw),
        ("scipy DOP853", "python"):
            lambda: scipy_solve_ivp(prob.fun, prob.t_span, prob.y0, method="DOP853", **kw),
    }
    for m in MBINT_METHODS:
        runs[(f"mbint {m}", "python")] = (
            lambda m=m: mbint.solve_ivp(prob.fun, prob.t_span, prob.y0, method=m, **kw))
        runs[(f"mbint {m}", "C")] = (
            lambda m=m: mbint.solve_ivp(c_fun, prob.t_span, prob.y0, method=m, **kw))
    # the elementary controller makes dopri5 the same algorithm as SciPy's RK45 (identical
    # steps, nfev and error): the ratio then measures the implementation alone
    runs[("mbint dopri5 [I]", "python")] = (
        lambda: mbint.solve_ivp(prob.fun, prob.t_span, prob.y0, controller="i", **kw))
    runs[("mbint dopri5 [I]", "C")] = (
        lambda: mbint.solve_ivp(c_fun, prob.t_span, prob.y0, controller="i", **kw))
    batch = 100
    runs[("fun", "python")] = _fun_batch(prob.fun, prob.t_span[0], prob.y0.copy(), batch)
    best, n_runs = interleaved_best(runs)
    t_fun = best.pop(("fun", "python")) / batch
    rows = []
    for (solver, rhs), run in runs.items():
        if solver == "fun":
            continue
        res = run()
        err = float(np.max(np.abs(res.y[:, -1] - prob.y_ref)))
        rows.append(Row(prob.name, solver, rhs, best[(solver, rhs)], n_runs[(solver, rhs)],
                        int(res.nfev), err, int(res.status)))
    for r in rows:
        r.speedup = rows[0].time_s / r.time_s
    return rows, t_fun


def fixed_cost():
    """Per-call cost of ``mbint.solve_ivp`` and of ``_core.solve`` alone, in seconds.

    Measured on one fixed Euler step of y' = -y with the C right-hand side, so
    it is almost all argument handling and result building.
    """
    c_fun = problems.c_rhs("exp_decay")
    capsule = tuple.__getitem__(c_fun, 0)
    y0, atol = np.ones(1), np.full(1, 1e-6)
    best, _ = interleaved_best({
        "ivp": lambda: mbint.solve_ivp(c_fun, (0.0, 1e-3), y0, method="euler", h=1e-3),
        "core": lambda: _core.solve("euler", capsule, 0.0, 1e-3, y0, atol, 1e-3, h=1e-3, args=()),
    }, round_s=0.01)
    return best["ivp"], best["core"]


@dataclass
class Results:
    """Everything the report and the tests need."""

    rows: list
    t_fun: dict       # problem name -> seconds per call of its Python fun
    bound_a: dict     # problem name -> bound on ratio (a) from the cost of the fun's calls
    t_ivp: float      # fixed cost of one mbint.solve_ivp call
    t_core: float     # ... of which _core.solve


def run_all():
    """Run the whole benchmark."""
    rows, t_fun, bound_a = [], {}, {}
    for prob in benchmark_problems():
        prob_rows, t_fun[prob.name] = run_problem(prob)
        rows.extend(prob_rows)
        # the speed-up mbint dopri5 would reach if everything but its calls of fun were free
        nfev = find(prob_rows, prob.name, "mbint dopri5", "python").nfev
        bound_a[prob.name] = prob_rows[0].time_s / (nfev * t_fun[prob.name])
    t_ivp, t_core = fixed_cost()
    return Results(rows, t_fun, bound_a, t_ivp, t_core)


def format_table(rows):
    """Markdown table of ``rows``."""
    lines = [
        "| problem | solver | rhs | time [ms] | runs | nfev | final error | speed-up vs SciPy RK45 |",
        "|---|---|---|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        status = "" if r.status == 0 else f" (status {r.status})"
        lines.append(f"| {r.problem} | {r.solver}{status} | {r.rhs} | {r.time_s * 1e3:.3f} | "
                     f"{r.n_runs} | {r.nfev} | {r.error:.2e} | {r.speedup:.1f}x |")
    return "\n".join(lines)


def report(res):
    """The whole Markdown report: settings, table, the two target ratios per problem."""
    rows = res.rows
    head = (
        "# Non-stiff benchmark: mbint vs scipy.integrate.solve_ivp\n\n"
        f"rtol = {RTOL:g}, atol = {ATOL:g}. Best CPU time over {ROUNDS} interleaved rounds, "
        f"each running every solver {MIN_REPS} times (fast ones for about {ROUND_S * 1e3:g} ms), "
        "after a warm-up run; 'runs' is the number of timed runs.\n"
        "Final error: max norm of y(tf) - reference (Arenstorf: the initial state after one "
        f"period; mass-spring-damper: the closed form at t = {MSD_T:g}).\n"
        f"Python {platform.python_version()}, NumPy {np.__version__}, SciPy {scipy.__version__}, "
        f"{platform.machine()}.\n\n"
    )
    targets = ["", "## Targets (mbint dopri5 against SciPy RK45)", "",
               "| problem | (a) Python fun | target | bound on (a) from the fun's cost | "
               "one fun call [us] | (b) C fun | target |",
               "|---|---:|---:|---:|---:|---:|---:|"]
    for name in dict.fromkeys(r.problem for r in rows):
        a = find(rows, name, "mbint dopri5", "python").speedup
        b = find(rows, name, "mbint dopri5", "C").speedup
        targets.append(f"| {name} | {a:.1f}x | >= 5x | {res.bound_a[name]:.1f}x | "
                       f"{res.t_fun[name] * 1e6:.2f} | {b:.1f}x | >= 100x |")
    notes = [
        "",
        "The bound on (a) is SciPy RK45's time over (mbint dopri5's nfev) x (time of one call of "
        "the Python fun): the speed-up mbint would reach if everything but its calls of fun were "
        "free.",
        f"Fixed cost of one `mbint.solve_ivp` call (one Euler step, C fun): "
        f"{res.t_ivp * 1e6:.1f} us, of which `_core.solve` {res.t_core * 1e6:.1f} us.",
    ]
    return head + format_table(rows) + "\n" + "\n".join(targets + notes) + "\n"


def write_report(res, path=OUT_MD):
    """Write :func:`report` of ``res`` to ``path`` (creating its directory); returns the text."""
    text = report(res)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return text


if __name__ == "__main__":
    print(write_report(run_all()))
    print(f"written to {OUT_MD}")
