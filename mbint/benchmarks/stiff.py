"""Work-precision on stiff problems: Van der Pol (mu = 1000) and Robertson.

mbint's stiff methods and its CVODE adapter take the right-hand side and Jacobian in C
(LowLevelCallables); SciPy's Radau, BDF and LSODA call the same C functions through a
thin Python wrapper (:func:`mbint.benchmarks.c_wrappers`).  For each problem and
tolerance: the error at the final time against a reference (SciPy Radau at rtol 1e-13 on
the Python right-hand side), the CPU time per run as the median over interleaved rounds
(:func:`mbint.benchmarks.median_times`), nfev, njev, nlu.  ``make bench``
(``tests/benchmarks/bench_stiff.py``) adds a plain C program calling CVODE with the same
C functions (it needs the repository's C sources and a compiler) through ``extra_runs``.
"""
from __future__ import annotations

import numpy as np
from scipy.integrate import solve_ivp as scipy_solve_ivp

from .. import problems
from ..ivp import solve_ivp
from ..methods import methods
from . import c_wrappers, matched_ratio, median_times

ROUNDS, ROUND_S = 5, 0.15
OURS = ("radau_iia", "bdf", "ros4", "rodas4", "cvode_bdf")
THEIRS = ("Radau", "BDF", "LSODA")

PROBLEMS = {
    # name: (C name, Python fun, Python jac, y0, t_span, atol scale)
    "vdp1000": ("vdp1000", problems.van_der_pol, problems.van_der_pol_jac, problems.VDP_Y0,
                (0.0, 2.0), 1.0),
    "robertson": ("robertson", problems.robertson, problems.robertson_jac,
                  problems.ROBERTSON_Y0, (0.0, 1e5), 1e-6),
}


def run(rtols=(1e-3, 1e-4, 1e-5, 1e-6, 1e-7, 1e-8), quick=False, extra_runs=None,
        rounds=None, round_s=ROUND_S):
    """Every solver on both problems over the tolerances.

    Parameters
    ----------
    rtols : sequence of float
        Relative tolerances (every other one when ``quick``); atol = rtol times the
        problem's atol scale (1 for Van der Pol, 1e-6 for Robertson).
    quick : bool
        Every other tolerance and 3 timing rounds.
    extra_runs : callable, optional
        ``extra_runs(cname, rtol, atol) -> dict``: more contenders for
        :func:`mbint.benchmarks.median_times`, keyed ``(lib, method)``.
    rounds : int, optional
        Timing rounds (default 3 when ``quick``, else ``ROUNDS``).
    round_s : float
        CPU seconds per contender and round [s].

    Returns
    -------
    list of dict
        One row per run: problem, lib, method, rtol, time [s], error, nfev, njev, nlu, ok.
    """
    available = {m.name for m in methods()}
    rounds = rounds or (3 if quick else ROUNDS)
    rows = []
    for pname, (cname, pfun, pjac, y0, span, ascale) in PROBLEMS.items():
        ref = scipy_solve_ivp(pfun, span, y0, method="Radau", jac=pjac, rtol=1e-13,
                              atol=1e-13 * ascale).y[:, -1]
        cfun, cjac = problems.c_rhs(cname), problems.c_jac(cname)
        wfun, wjac = c_wrappers(cname, len(y0))
        for rtol in (rtols[::2] if quick else rtols):
            atol = rtol * ascale
            runs = {}
            for m in OURS:
                if m in available:
                    runs[("mbint", m)] = (lambda m=m: solve_ivp(
                        cfun, span, y0, method=m, jac=cjac, rtol=rtol, atol=atol))
            for m in THEIRS:
                runs[("scipy", m)] = (lambda m=m: scipy_solve_ivp(
                    wfun, span, y0, method=m, jac=wjac, rtol=rtol, atol=atol))
            if extra_runs is not None:
                runs.update(extra_runs(cname, rtol, atol))
            for (lib, m), (t, res) in median_times(runs, rounds, round_s).items():
                err = float(np.max(np.abs(res.y[:, -1] - ref) / (np.abs(ref) + ascale * 1e-3)))
                rows.append(dict(problem=pname, lib=lib, method=m, rtol=rtol, time=t,
                                 error=err, nfev=int(res.nfev), njev=int(res.njev),
                                 nlu=int(res.nlu), ok=bool(res.success)))
    return rows


def report(rows, references=(("CVODE", "the plain C CVODE program"),
                             ("cvode_bdf", "mbint's CVODE adapter (cvode_bdf)"))):
    """The runs and the time ratios at matched error as a Markdown text.

    Parameters
    ----------
    rows : list of dict
        From :func:`run`.
    references : sequence of (str, str)
        (method, description) of the solvers to take ratios against; those without runs
        in ``rows`` are left out.

    Returns
    -------
    str
    """
    present = {r["method"] for r in rows}
    anchor = ("  C CVODE: a plain C program calling CVODE with the same C functions "
              "(anchor_stiff.c)." if "CVODE" in present else "")
    lines = ["# Stiff work-precision (rhs and Jacobian in C; SciPy through a ctypes wrapper)", "",
             "error: max relative error at the final time against SciPy Radau at rtol 1e-13; "
             "time: CPU time per run, the median of interleaved rounds." + anchor, "",
             "| problem | solver | rtol | error | time [ms] | nfev | njev | nlu |",
             "|---|---|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        lines.append(f"| {r['problem']} | {r['lib']} {r['method']} | {r['rtol']:.0e} | "
                     f"{r['error']:.2e} | {r['time'] * 1e3:.3f} | {r['nfev']} | {r['njev']} | "
                     f"{r['nlu']} |")
    for against, what in references:
        if against not in present:
            continue
        lines += ["", f"## Time at matched error, relative to {what}", "",
                  "| problem | " + " | ".join(OURS + THEIRS) + " |",
                  "|---|" + "---:|" * len(OURS + THEIRS)]
        for p in PROBLEMS:
            cells = [f"{matched_ratio(rows, p, m, against):.2f}" for m in OURS + THEIRS]
            lines.append(f"| {p} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"
