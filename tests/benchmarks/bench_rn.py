"""Work-precision on the RN paper's stiff double pendulum (issue 9): the
Rosenbrock-Nystrom method on the state-space formulation against mbint's and
SUNDIALS' stiff methods on the index-1 formulation and against SciPy's stiff
solvers, in one run.

Contenders (``models.stiff_double_pendulum()``, t in [0, 2] s, rtol = atol):

- ``rosenbrock_nystrom`` on ``formulation="state_space"``: the partition chosen by
  Gauss-Jordan with full pivoting alone (``independent="pivoting"``, the paper's: theta1
  and y2 independent, re-chosen on the way),
  and with the body angles preferred as independent coordinates
  (``independent=["body1.theta", "body2.theta"]``: the stiff torsional spring then
  stays linear in v), and with the default partition (the coordinates the stiff force
  elements act in: the body angles here);
- ``radau_iia``, ``rodas4``, ``bdf`` and ``cvode_bdf`` on the index-1 formulation (the
  analytic Jacobian of LLM eqs 10-15, everything in C);
- SciPy's ``Radau``, ``BDF`` and ``LSODA`` on the same index-1 right-hand side and
  Jacobian (the model's C kernels, ``model.rhs`` / ``model.jacobian``, called from
  Python at every evaluation).

Error: max |q(2) - q_ref(2)| over the six coordinates [m, rad], q_ref from
``radau_iia`` at rtol = atol = 1e-13.  Time: median over ROUNDS interleaved rounds
(in every round each contender and tolerance runs for about ROUND_S, at least once;
its mean time per run is the round's value), CPU time (``time.process_time``).  Ratios at matched
error: log(time) interpolated linearly in log(error) along each contender's curve,
evaluated at the error levels ``LEVELS``.

Run ``python tests/benchmarks/bench_rn.py`` (writes out/bench_rn.md) or ``make bench``.
"""
from __future__ import annotations

import time
from pathlib import Path

import numpy as np
from scipy.integrate import solve_ivp as scipy_solve_ivp

import mbint
from mbint import models

OUT_MD = Path(__file__).resolve().parents[2] / "out" / "bench_rn.md"
SPAN = (0.0, 2.0)
ROUNDS = 7
ROUND_S = 0.03
LEVELS = (2e-5, 2e-6, 2e-7)
ANGLES = ["body1.theta", "body2.theta"]

#: name -> (label, run(model, tol) -> (q at tf, result), tolerances)
OURS_TOLS = (1e-3, 1e-4, 1e-5, 1e-6, 1e-7, 1e-8, 1e-9)
SCIPY_TOLS = (1e-3, 1e-4, 1e-5, 1e-6, 1e-7, 1e-8)


def _mbint(method, **kw):
    def run(m, tol):
        tr = mbint.simulate(m, SPAN, method=method, rtol=tol, atol=tol, **kw)
        return tr.q[:, -1], dict(ok=tr.success, nsteps=tr.stats["nsteps"], nfev=tr.stats["nfev"],
                                 njev=tr.stats["njev"], nlu=tr.stats["nlu"])
    return run


def _scipy(method):
    def run(m, tol):
        nq = m.nq
        res = scipy_solve_ivp(lambda t, y: m.rhs(t, y), SPAN, np.concatenate([m.q0, m.qd0]),
                              method=method, jac=lambda t, y: m.jacobian(t, y), rtol=tol,
                              atol=tol)
        return res.y[:nq, -1], dict(ok=bool(res.success), nsteps=len(res.t) - 1,
                                    nfev=int(res.nfev), njev=int(res.njev), nlu=int(res.nlu))
    return run


CONTENDERS = {
    "RN state space (full pivoting)": (_mbint("rosenbrock_nystrom", formulation="state_space",
                                              independent="pivoting"), OURS_TOLS),
    "RN state space (default)": (_mbint("rosenbrock_nystrom", formulation="state_space"),
                                 OURS_TOLS),
    "RN state space (angles)": (_mbint("rosenbrock_nystrom", formulation="state_space",
                                       independent=ANGLES), OURS_TOLS),
    "radau_iia index1": (_mbint("radau_iia"), OURS_TOLS),
    "rodas4 index1": (_mbint("rodas4"), OURS_TOLS),
    "bdf index1": (_mbint("bdf"), OURS_TOLS),
    "cvode_bdf index1": (_mbint("cvode_bdf"), OURS_TOLS + (1e-10, 1e-11)),
    "SciPy Radau": (_scipy("Radau"), SCIPY_TOLS),
    "SciPy BDF": (_scipy("BDF"), SCIPY_TOLS),
    "SciPy LSODA": (_scipy("LSODA"), SCIPY_TOLS),
}
SCIPY = [k for k in CONTENDERS if k.startswith("SciPy")]


def reference(m):
    return mbint.simulate(m, SPAN, method="radau_iia", rtol=1e-13, atol=1e-13).q[:, -1]


def run(rounds=ROUNDS, quick=False):
    m = models.stiff_double_pendulum()
    qref = reference(m)
    jobs = [(name, tol) for name, (_, tols) in CONTENDERS.items()
            for tol in (tols[::2] if quick else tols)]
    times = {job: [] for job in jobs}
    info = {}
    for job in jobs:  # warm-up (and the results)
        info[job] = CONTENDERS[job[0]][0](m, job[1])
    for _ in range(1 if quick else rounds):
        for job in jobs:
            # about ROUND_S of repetitions per contender and round: the mean per run
            fn, k, t0 = CONTENDERS[job[0]][0], 0, time.process_time()
            while k == 0 or time.process_time() - t0 < ROUND_S:
                fn(m, job[1])
                k += 1
            times[job].append((time.process_time() - t0) / k)
    rows = []
    for job in jobs:
        q, st = info[job]
        rows.append(dict(name=job[0], tol=job[1], time=float(np.median(times[job])),
                         error=float(np.abs(q - qref).max()), **st))
    return rows


def time_at(rows, name, error):
    """Time of contender `name` at `error`, interpolated in log-log along its curve
    (nan outside its range)."""
    pts = sorted((r["error"], r["time"]) for r in rows if r["name"] == name and r["ok"]
                 and r["error"] > 0)
    if len(pts) < 2:
        return np.nan
    le, lt = np.log([p[0] for p in pts]), np.log([p[1] for p in pts])
    x = np.log(error)
    if not le.min() <= x <= le.max():
        return np.nan
    order = np.argsort(le)
    return float(np.exp(np.interp(x, le[order], lt[order])))


def ratios(rows, name, against):
    return {e: time_at(rows, name, e) / time_at(rows, against, e) for e in LEVELS}


def scipy_best(rows, e):
    return np.nanmin([time_at(rows, s, e) for s in SCIPY] + [np.inf])


def report(rows):
    lines = ["# Work-precision on the RN stiff double pendulum (issue 9)", "",
             "error: max |q(2 s) - q_ref(2 s)| [m, rad], q_ref from radau_iia at 1e-13; "
             f"time: median of {ROUNDS} interleaved rounds.", "",
             "| contender | tol | error | time [ms] | steps | nfev | njev | nlu |",
             "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        lines.append(f"| {r['name']} | {r['tol']:.0e} | {r['error']:.2e} | {r['time'] * 1e3:.2f} "
                     f"| {r['nsteps']} | {r['nfev']} | {r['njev']} | {r['nlu']} |")
    lines += ["", "## Time at matched error", "",
              "| contender | " + " | ".join(f"t({e:.0e}) [ms]" for e in LEVELS) +
              " | " + " | ".join(f"/ cvode_bdf at {e:.0e}" for e in LEVELS) + " |",
              "|---|" + "---:|" * (2 * len(LEVELS))]
    for name in CONTENDERS:
        ts = [time_at(rows, name, e) for e in LEVELS]
        rs = [t / time_at(rows, "cvode_bdf index1", e) for t, e in zip(ts, LEVELS)]
        lines.append(f"| {name} | " + " | ".join(f"{t * 1e3:.2f}" for t in ts) + " | " +
                     " | ".join(f"{r:.2f}" for r in rs) + " |")
    lines += ["", "SciPy's best at matched error over RN:", ""]
    for name in ("RN state space (full pivoting)", "RN state space (angles)",
                 "RN state space (default)"):
        cells = [f"{scipy_best(rows, e) / time_at(rows, name, e):.0f}x at {e:.0e}" for e in LEVELS]
        lines.append(f"- {name}: " + ", ".join(cells))
    return "\n".join(lines) + "\n"


def main():
    rows = run()
    text = report(rows)
    OUT_MD.parent.mkdir(parents=True, exist_ok=True)
    OUT_MD.write_text(text)
    print(text)
    print(f"written to {OUT_MD}")
    return rows


if __name__ == "__main__":
    main()
