"""Work-precision of the L-stable block method (issue 11, LS paper) on the two-link
manipulator's DAEs, in one run.

Contenders (``models.two_link_manipulator()``, t in [0, 2] s: the links swing through
their fast phase near 0.6 s):

- ``lstable_block`` (r = 4, equidistant nodes) adaptive (rtol = atol = tol, the
  embedded error estimate of issue 21; step doubling before) and with the paper's fixed
  steps h, on ``formulation="index3"`` and ``"index1_dae"``; adaptive also with
  ``newton="full"`` (the r n x r n Newton system instead of the split one: the same
  steps, the cost before the split of issue 21);
- ``radau_iia`` (RADAU5, index-dependent error scaling) on the same two formulations;
- SUNDIALS ``ida`` on ``"index1_dae"`` and ``"ggl"`` (it does not solve index 3).

Error: max |q(2) - q_ref(2)| over the six coordinates [m, rad], q_ref from dop853 on
the index-1 ODE at rtol = atol = 1e-13.  Time: median over ROUNDS interleaved rounds
(in every round each contender and tolerance runs for about ROUND_S, at least once;
its mean time per run is the round's value), CPU time (``time.process_time``).  Ratios at matched error:
log(time) interpolated linearly in log(error) along each contender's curve, at the
error levels ``LEVELS``.

Run ``python tests/benchmarks/bench_ls.py`` (writes out/bench_ls.md) or ``make bench``.
"""
from __future__ import annotations

import time
from pathlib import Path

import numpy as np

import mbint
from mbint import models

OUT_MD = Path(__file__).resolve().parents[2] / "out" / "bench_ls.md"
SPAN = (0.0, 2.0)
ROUNDS = 5
ROUND_S = 0.03
LEVELS = (1e-4, 1e-6, 1e-8)
TOLS = (1e-3, 1e-4, 1e-5, 1e-6, 1e-7, 1e-8, 1e-9, 1e-10)
HS = (0.02, 0.01, 0.005, 0.0025, 0.00125)


def _adaptive(method, formulation, **kw):
    def run(m, tol):
        tr = mbint.simulate(m, SPAN, method=method, formulation=formulation, rtol=tol,
                            atol=tol, **kw)
        return tr.q[:, -1], dict(ok=tr.success, nsteps=tr.stats["nsteps"],
                                 nfev=tr.stats["nfev"], nlu=tr.stats["nlu"])
    return run


def _fixed(formulation):
    def run(m, h):
        tr = mbint.simulate(m, SPAN, method="lstable_block", formulation=formulation, h=h, r=4)
        return tr.q[:, -1], dict(ok=tr.success, nsteps=tr.stats["nsteps"],
                                 nfev=tr.stats["nfev"], nlu=tr.stats["nlu"])
    return run


#: name -> (run(model, parameter) -> (q at tf, stats), parameters)
CONTENDERS = {
    "lstable_block index3": (_adaptive("lstable_block", "index3", r=4), TOLS),
    "lstable_block index3 full Newton": (_adaptive("lstable_block", "index3", r=4,
                                                   newton="full"), TOLS),
    "lstable_block index3 fixed h": (_fixed("index3"), HS),
    "radau_iia index3": (_adaptive("radau_iia", "index3"), TOLS),
    "lstable_block index1_dae": (_adaptive("lstable_block", "index1_dae", r=4), TOLS),
    "lstable_block index1_dae full Newton": (_adaptive("lstable_block", "index1_dae", r=4,
                                                       newton="full"), TOLS),
    "lstable_block index1_dae fixed h": (_fixed("index1_dae"), HS),
    "radau_iia index1_dae": (_adaptive("radau_iia", "index1_dae"), TOLS),
    "ida index1_dae": (_adaptive("ida", "index1_dae"), TOLS),
    "ida ggl": (_adaptive("ida", "ggl"), TOLS),
}
#: (contender, against) pairs whose time ratio at matched error is reported
PAIRS = [("lstable_block index3", "radau_iia index3"),
         ("lstable_block index3 full Newton", "radau_iia index3"),
         ("lstable_block index3", "lstable_block index3 full Newton"),
         ("lstable_block index3 fixed h", "radau_iia index3"),
         ("lstable_block index1_dae", "radau_iia index1_dae"),
         ("lstable_block index1_dae full Newton", "radau_iia index1_dae"),
         ("lstable_block index1_dae", "lstable_block index1_dae full Newton"),
         ("lstable_block index1_dae", "ida index1_dae"),
         ("lstable_block index1_dae fixed h", "ida index1_dae"),
         ("lstable_block index3", "ida ggl")]


def reference(m):
    return mbint.simulate(m, SPAN, method="dop853", rtol=1e-13, atol=1e-13).q[:, -1]


def run(rounds=ROUNDS, quick=False):
    m = models.two_link_manipulator()
    qref = reference(m)
    jobs = [(name, p) for name, (_, ps) in CONTENDERS.items() for p in (ps[::2] if quick else ps)]
    times = {job: [] for job in jobs}
    info = {}
    for job in jobs:  # warm-up (and the results)
        info[job] = CONTENDERS[job[0]][0](m, job[1])
    for _ in range(1 if quick else rounds):
        for job in jobs:
            fn, k, t0 = CONTENDERS[job[0]][0], 0, time.process_time()
            while k == 0 or time.process_time() - t0 < ROUND_S:
                fn(m, job[1])
                k += 1
            times[job].append((time.process_time() - t0) / k)
    rows = []
    for job in jobs:
        q, st = info[job]
        rows.append(dict(name=job[0], param=job[1], time=float(np.median(times[job])),
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


def report(rows):
    lines = ["# Work-precision of lstable_block on the LS two-link manipulator (issue 11)", "",
             "error: max |q(2 s) - q_ref(2 s)| [m, rad], q_ref from dop853 at 1e-13; time: "
             f"median of {ROUNDS} interleaved rounds; param: rtol = atol, or h [s].", "",
             "| contender | param | error | time [ms] | steps | nfev | nlu |",
             "|---|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        lines.append(f"| {r['name']} | {r['param']:.0e} | {r['error']:.2e} | "
                     f"{r['time'] * 1e3:.2f} | {r['nsteps']} | {r['nfev']} | {r['nlu']} |")
    lines += ["", "## Time ratios at matched error (< 1: the first is faster)", "",
              "| contender / against | " + " | ".join(f"at {e:.0e}" for e in LEVELS) + " |",
              "|---|" + "---:|" * len(LEVELS)]
    for a, b in PAIRS:
        r = ratios(rows, a, b)
        lines.append(f"| {a} / {b} | " + " | ".join(f"{r[e]:.2f}" for e in LEVELS) + " |")
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
