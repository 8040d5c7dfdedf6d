"""Scaling of issue 13: a planar chain of N pendulums (``mbint.models.pendulum_chain``),
N = 10 ... 1000, nq = 3 N coordinates, nc = 2 N constraints.

Two costs, each for the sparse index-1 formulation (SuiteSparse KLU on the
saddle-point matrix and on the Newton systems, ``linear_algebra="sparse"``) and, up
to N = DENSE_MAX, for the dense one (``linear_algebra="dense"``, the path every model
took before issue 13):

* one f: ``model.rhs(t, Y)`` on a batch of distinct states (the C loop; one Python call
  per batch), median over ROUNDS interleaved rounds, per state;
* one ``radau_iia`` step: ``mbint.simulate(model, (0, T_END), "radau_iia", rtol=atol=
  TOL)`` CPU time over the number of steps (the chain starts horizontal at rest and
  falls), median over the rounds.  The same run also checks energy: without damping
  the total energy of the run's end must equal the initial one to ENERGY_TOL
  relative to the largest kinetic energy of the run (a conservation law, not a
  comparison with another code).

The exponent between N = 100 and N = 1000 is the least-squares slope of
log(cost) over log(N) through the points N = 100, 300, 1000.  The issue's targets:
exponent <= 1.2 for f and for a radau_iia step, and the N = 1000 run in under 60 s.

Issue 21 adds the WHOLE ``mbint.simulate`` call, set-up included (validation, the
model's first compilation, the check of the initial conditions, the run, the
Trajectory), for N = WHOLE_SIZES (sparse): ``radau_iia`` over [0, WHOLE_T_END] s at
rtol = atol = TOL, where every N takes the same number of steps (4), so the exponent
measures the cost of the call, not the chain's dynamics.  Each measurement is one
fresh subprocess (``python bench_chain.py --whole N``) that builds the model, then
times the call's CPU time (``time.process_time``) and reads the process's peak RSS
(VmHWM of /proc/self/status) before and after it; WHOLE_ROUNDS rounds interleave the sizes and
the medians are reported.  The exponent is the least-squares slope of log(CPU) over
log(N) through all of WHOLE_SIZES.  Targets: exponent <= 1.1, peak RSS <= 150 MB at
N = 3000 (the whole process: interpreter, NumPy, SciPy and mbint included).

Run ``python tests/benchmarks/bench_chain.py`` (writes out/bench_chain.md and .json)
or ``make bench`` (test_bench_chain.py asserts the targets).
"""
from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

import mbint
from mbint import models

ROOT = Path(__file__).resolve().parents[2]
OUT_MD = ROOT / "out" / "bench_chain.md"
OUT_JSON = ROOT / "out" / "bench_chain.json"

SIZES = (10, 30, 100, 300, 1000)
DENSE_MAX = 100          # dense f and radau_iia above this take minutes
DENSE_F_MAX = 300
ROUNDS = 5
T_END = 0.1
TOL = 1e-6
ENERGY_TOL = 1e-4
FIT = (100, 300, 1000)
WHOLE_SIZES = (100, 300, 1000, 3000)
WHOLE_ROUNDS = 5
WHOLE_T_END = 0.02


def _states(model, m, seed=0):
    """m distinct consistent-ish states near the initial one (positions perturbed by
    1e-3 m, velocities random): f is defined everywhere, consistency is not needed."""
    rng = np.random.default_rng(seed)
    y0 = np.concatenate([model.q0, model.qd0])
    Y = y0[:, None] + 1e-3 * rng.standard_normal((y0.size, m))
    return np.zeros(m), Y


def time_f(model, mode, reps):
    model.linear_algebra = mode
    t, Y = _states(model, 16)
    model.rhs(t, Y)  # warm-up (analysis, workspace)
    t0 = time.process_time()
    for _ in range(reps):
        model.rhs(t, Y)
    return (time.process_time() - t0) / (reps * Y.shape[1])


def run_radau(model, mode):
    t0 = time.process_time()
    tr = mbint.simulate(model, (0.0, T_END), "radau_iia", rtol=TOL, atol=TOL,
                        linear_algebra=mode)
    cpu = time.process_time() - t0
    e = tr.energy()  # the chain starts at rest at height 0: E(0) = 0, scale by max T
    drift = abs(e.total[-1] - e.total[0]) / max(float(np.abs(e.kinetic).max()), 1.0)
    return cpu, tr.stats["nsteps"], drift, tr


def slope(ns, vals):
    x, y = np.log(np.asarray(ns, float)), np.log(np.asarray(vals, float))
    return float(np.polyfit(x, y, 1)[0])


def _rss_mb():
    """Peak resident set size of this process so far [MB]: VmHWM of /proc/self/status
    (Linux), the high-water mark of this process's own memory since its exec.  Not
    ru_maxrss: Linux carries into it the parent's RSS at the fork that started the
    process (the whole pytest process, for make bench).  Elsewhere ru_maxrss (KiB)."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024.0
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def whole_call(n):
    """One whole simulate() call on a fresh pendulum_chain(n) in this process: its CPU
    time [s], steps, and the peak RSS [MB] before and after it."""
    model = models.pendulum_chain(n)
    rss0 = _rss_mb()
    t0 = time.process_time()
    tr = mbint.simulate(model, (0.0, WHOLE_T_END), "radau_iia", rtol=TOL, atol=TOL,
                        linear_algebra="sparse")
    cpu = time.process_time() - t0
    assert tr.success, tr.message
    return {"cpu": cpu, "nsteps": int(tr.stats["nsteps"]), "rss_before": rss0,
            "rss_peak": _rss_mb()}


def _whole_subprocess(n):
    """:func:`whole_call` in a fresh interpreter importing the same mbint."""
    env = dict(os.environ)
    root = str(Path(mbint.__file__).resolve().parents[1])
    env["PYTHONPATH"] = root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    out = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--whole", str(n)],
                         env=env, capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def run_whole(sizes=WHOLE_SIZES, rounds=WHOLE_ROUNDS, verbose=True):
    """The whole-call rows: medians over interleaved rounds of fresh subprocesses."""
    runs = {n: [] for n in sizes}
    for r in range(rounds):
        for n in sizes:
            runs[n].append(_whole_subprocess(n))
            if verbose:
                w = runs[n][-1]
                print(f"whole round {r} N={n}: {w['cpu'] * 1e3:.1f} ms, "
                      f"{w['rss_peak']:.0f} MB", flush=True)
    rows = {}
    for n, rs in runs.items():
        rows[str(n)] = {k: float(np.median([x[k] for x in rs]))
                        for k in ("cpu", "rss_before", "rss_peak")}
        rows[str(n)]["nsteps"] = [x["nsteps"] for x in rs][0]
        rows[str(n)]["spread_cpu"] = float(np.ptp([x["cpu"] for x in rs]) / rows[str(n)]["cpu"])
    return {"sizes": list(sizes), "rows": rows, "t_end": WHOLE_T_END, "rounds": rounds,
            "exponent": (slope(sizes, [rows[str(n)]["cpu"] for n in sizes])
                         if len(sizes) > 1 else None)}


def run_all(sizes=SIZES, rounds=ROUNDS, verbose=True, whole=True):
    chains = {n: models.pendulum_chain(n) for n in sizes}
    rows = {}
    for n in sizes:
        rows[n] = {"f_sparse": [], "f_dense": [], "step_sparse": [], "step_dense": [],
                   "cpu_sparse": [], "nsteps_sparse": None, "nsteps_dense": None,
                   "drift_sparse": None, "drift_dense": None}
    for r in range(rounds):
        for n in sizes:
            m, row = chains[n], rows[n]
            reps = max(1, int(2000 / n))
            row["f_sparse"].append(time_f(m, "sparse", reps))
            if n <= DENSE_F_MAX:
                row["f_dense"].append(time_f(m, "dense", max(1, reps // 10)))
            if r < (rounds if n < 1000 else min(rounds, 3)):
                cpu, ns, drift, _ = run_radau(m, "sparse")
                row["step_sparse"].append(cpu / ns)
                row["cpu_sparse"].append(cpu)
                row["nsteps_sparse"], row["drift_sparse"] = ns, drift
            if n <= DENSE_MAX:
                cpu, ns, drift, _ = run_radau(m, "dense")
                row["step_dense"].append(cpu / ns)
                row["nsteps_dense"], row["drift_dense"] = ns, drift
            if verbose:
                print(f"round {r} N={n}: f sparse {row['f_sparse'][-1] * 1e6:.1f} us", flush=True)
    med = {}
    for n, row in rows.items():
        med[n] = {k: (float(np.median(v)) if isinstance(v, list) and v else v)
                  for k, v in row.items()}
        med[n]["spread_f_sparse"] = float(np.ptp(row["f_sparse"]) / np.median(row["f_sparse"]))
    fit = [n for n in FIT if n in med]
    res = {"sizes": list(sizes), "rows": {str(n): v for n, v in med.items()},
           "exponent_f": slope(fit, [med[n]["f_sparse"] for n in fit]) if len(fit) > 1 else None,
           "exponent_step": (slope(fit, [med[n]["step_sparse"] for n in fit])
                             if len(fit) > 1 else None),
           "t_end": T_END, "tol": TOL}
    if whole:
        res["whole"] = run_whole(verbose=verbose)
    write(res)
    return res


def write(res):
    OUT_MD.parent.mkdir(parents=True, exist_ok=True)
    OUT_JSON.write_text(json.dumps(res, indent=1))
    lines = [f"# Chain of N pendulums: cost per f and per radau_iia step "
             f"(t in [0, {res['t_end']}] s, rtol = atol = {res['tol']:g})", "",
             "| N | nq | f sparse [us] | f dense [us] | radau step sparse [ms] | "
             "radau step dense [ms] | steps | run sparse [s] | energy drift |",
             "|---|---|---|---|---|---|---|---|---|"]

    def fmt(v, scale, digits=1):
        return "-" if v is None or v == [] else f"{v * scale:.{digits}f}"
    for n in res["sizes"]:
        r = res["rows"][str(n)]
        lines.append(f"| {n} | {3 * n} | {fmt(r['f_sparse'], 1e6)} | {fmt(r['f_dense'], 1e6)} | "
                     f"{fmt(r['step_sparse'], 1e3, 2)} | {fmt(r['step_dense'], 1e3, 2)} | "
                     f"{r['nsteps_sparse']} | {fmt(r['cpu_sparse'], 1, 2)} | "
                     f"{r['drift_sparse']:.1e} |")
    lines += ["", f"Fitted exponent N = 100 ... 1000 (sparse): f {res['exponent_f']:.2f}, "
              f"radau_iia step {res['exponent_step']:.2f} (target <= 1.2)."]
    w = res.get("whole")
    if w:
        lines += ["", f"## The whole simulate() call (set-up included; radau_iia, t in [0, "
                      f"{w['t_end']}] s, sparse; fresh process, median of {w['rounds']})", "",
                  "| N | nq | CPU [ms] | steps | spread | peak RSS before [MB] | "
                  "peak RSS after [MB] |", "|---|---|---|---|---|---|---|"]
        for n in w["sizes"]:
            r = w["rows"][str(n)]
            lines.append(f"| {n} | {3 * n} | {r['cpu'] * 1e3:.1f} | {r['nsteps']} | "
                         f"{r['spread_cpu']:.2f} | {r['rss_before']:.0f} | {r['rss_peak']:.0f} |")
        lines += ["", f"Fitted exponent N = {w['sizes'][0]} ... {w['sizes'][-1]}: "
                      f"{w['exponent']:.2f} (target <= 1.1); peak RSS at N = {w['sizes'][-1]}: "
                      f"{w['rows'][str(w['sizes'][-1])]['rss_peak']:.0f} MB (target <= 150)."]
    OUT_MD.write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--whole":
        print(json.dumps(whole_call(int(sys.argv[2]))))
    else:
        out = run_all()
        print(OUT_MD.read_text())
