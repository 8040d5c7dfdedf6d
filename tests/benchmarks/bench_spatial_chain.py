"""Scaling of the sparse index-1 path of spatial models (issue 22, item 4): a 3-D chain
of N rods (``mbint.testing.spatial_chain``: spherical joints and revolute joints with
alternating axes, rotational and translational spring-dampers), nq = 7 N coordinates,
N = SIZES.

The cost measured is the WHOLE ``mbint.simulate`` call, set-up included (validation,
the model's compilation, the check of the initial conditions, the run, the
Trajectory): ``radau_iia`` over [0, T_END] s at rtol = atol = TOL, where every N
takes about the same number of steps, so that the exponent measures the cost of the
call, not the chain's dynamics.  Each measurement is one fresh subprocess
(``python bench_spatial_chain.py --whole MODE N``) that builds the model, then times
the call's CPU time (``time.process_time``) and reads the process's peak RSS (VmHWM of
/proc/self/status) before and after it; ROUNDS rounds interleave the sizes and the
modes, and the medians are reported.  ``linear_algebra="dense"`` (the only path of
spatial models before) runs up to N = DENSE_MAX: its memory is O(nq^2) and its time
O(nq^3) per factorization.

The DAE formulation index3 (issue 22 item 4: sparse on every formulation) runs in the
same way as the modes ``dae-sparse`` and ``dae-dense`` (``bdf``, the method that takes the
sparse DAE mode: csrc/mbs/dae_sparse.c; radau_iia does not yet), dense up to N =
DAE_DENSE_MAX; its exponent and final-state difference are reported separately
(``summary_dae``).

The exponent is the least-squares slope of log(CPU) over log(N) through N = FIT
(sparse).  Target: <= 1.2.  The final states of the two modes are compared at the
tolerance level where both ran.

Run ``python tests/benchmarks/bench_spatial_chain.py`` (writes
out/bench_spatial_chain.md and .json) or ``make bench`` (test_bench_spatial_chain.py
asserts the target).
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

import mbint

ROOT = Path(__file__).resolve().parents[2]
OUT_MD = ROOT / "out" / "bench_spatial_chain.md"
OUT_JSON = ROOT / "out" / "bench_spatial_chain.json"

SIZES = (10, 30, 100, 300, 1000)
DENSE_MAX = 100     # dense N = 300 takes minutes per call (O(nq^3) factorizations)
ROUNDS = 3
FIT = (100, 300, 1000)
T_END = 0.02
TOL = 1e-6
DAE_DENSE_MAX = 100  # dense index3 at N = 100: ~13 s a call (O(n^3), n = 18 N)
#: the DAE modes: (method, formulation, linear_algebra)
DAE_MODES = {"dae-sparse": ("bdf", "index3", "sparse"), "dae-dense": ("bdf", "index3", "dense")}


def _rss_mb():
    """Peak resident set size of this process so far [MB] (VmHWM; bench_chain.py)."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024.0
    return float("nan")


def whole_call(mode, n):
    """One whole simulate() call on a fresh spatial_chain(n) in this process: its CPU
    time [s], steps, peak RSS [MB] before and after it, and the final state."""
    from mbint.testing.spatial_chain import spatial_chain
    model = spatial_chain(n)
    rss0 = _rss_mb()
    t0 = time.process_time()
    method, form, la = DAE_MODES.get(mode, ("radau_iia", "index1", mode))
    tr = mbint.simulate(model, (0.0, T_END), method, formulation=form, rtol=TOL, atol=TOL,
                        linear_algebra=la)
    cpu = time.process_time() - t0
    assert tr.success, tr.message
    return {"cpu": cpu, "nsteps": int(tr.stats["nsteps"]), "rss_before": rss0,
            "rss_peak": _rss_mb(), "q_end": tr.q[:, -1].tolist()}


def _subprocess(mode, n):
    env = dict(os.environ)
    root = str(Path(mbint.__file__).resolve().parents[1])
    env["PYTHONPATH"] = root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    out = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--whole", mode,
                          str(n)], env=env, capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def slope(ns, vals):
    x, y = np.log(np.asarray(ns, float)), np.log(np.asarray(vals, float))
    return float(np.polyfit(x, y, 1)[0])


def run(sizes=SIZES, rounds=ROUNDS, dense_max=DENSE_MAX, verbose=True,
        modes=("sparse", "dense", "dae-sparse", "dae-dense")):
    """The rows (N, mode): medians over interleaved rounds of fresh subprocesses."""
    limit = {"dense": dense_max, "dae-dense": DAE_DENSE_MAX}
    cases = [(m, n) for n in sizes for m in modes if n <= limit.get(m, n)]
    runs = {c: [] for c in cases}
    for r in range(rounds):
        for c in cases:
            runs[c].append(_subprocess(*c))
            if verbose:
                w = runs[c][-1]
                print(f"round {r} {c[0]} N={c[1]}: {w['cpu']:.3f} s, {w['rss_peak']:.0f} MB",
                      flush=True)
    rows = []
    for (mode, n), rs in runs.items():
        row = {k: float(np.median([x[k] for x in rs])) for k in ("cpu", "rss_before", "rss_peak")}
        row.update(N=n, mode=mode, nsteps=rs[0]["nsteps"], q_end=rs[0]["q_end"],
                   spread_cpu=float(np.ptp([x["cpu"] for x in rs]) / row["cpu"]))
        rows.append(row)
    return rows


def summary(rows):
    """The exponent (sparse, N = FIT) and the largest difference of the final states
    of the two modes."""
    sp = {r["N"]: r for r in rows if r["mode"] == "sparse"}
    fit = [n for n in FIT if n in sp]
    diff = [float(np.abs(np.subtract(r["q_end"], sp[r["N"]]["q_end"])).max())
            for r in rows if r["mode"] == "dense"]
    return {"exponent": slope(fit, [sp[n]["cpu"] for n in fit]) if len(fit) > 1 else None,
            "max_diff": max(diff) if diff else None}


def summary_dae(rows):
    """summary() of the DAE modes (dae-sparse against dae-dense)."""
    ren = {"dae-sparse": "sparse", "dae-dense": "dense"}
    return summary([{**r, "mode": ren[r["mode"]]} for r in rows if r["mode"] in ren])


def _dae_lines(rows):
    by = {(r["mode"], r["N"]): r for r in rows}
    ns = sorted(n for (m, n) in by if m == "dae-sparse")
    if not ns:
        return []
    s = summary_dae(rows)
    lines = ["", f"## The same chain on formulation='index3' (bdf; y = (q, v, lambda), n = 18 N)",
             "", "| N | steps | dense CPU [s] | sparse CPU [s] | dense peak RSS [MB] | "
             "sparse peak RSS [MB] | sparse RSS growth [MB] |", "|---|---|---|---|---|---|---|"]
    for n in ns:
        sp, de = by[("dae-sparse", n)], by.get(("dae-dense", n))
        dc = "-" if de is None else f"{de['cpu']:.3f}"
        dr = "-" if de is None else f"{de['rss_peak']:.0f}"
        lines.append(f"| {n} | {sp['nsteps']} | {dc} | {sp['cpu']:.3f} | {dr} | "
                     f"{sp['rss_peak']:.0f} | {sp['rss_peak'] - sp['rss_before']:.1f} |")
    ex = "-" if s["exponent"] is None else f"{s['exponent']:.2f}"
    md = "-" if s["max_diff"] is None else f"{s['max_diff']:.1e}"
    return lines + ["", f"Fitted exponent (index3, sparse), N = {FIT[0]} ... {FIT[-1]}: {ex}.  "
                    f"Largest difference of the final q, dense against sparse: {md}."]


def report(rows):
    s = summary(rows)
    OUT_JSON.parent.mkdir(parents=True, exist_ok=True)
    OUT_JSON.write_text(json.dumps({"rows": rows, **s, "dae": summary_dae(rows)}, indent=1))
    by = {(r["mode"], r["N"]): r for r in rows}
    lines = [f"# 3-D chain of N rods: the whole simulate() call (radau_iia, t in [0, {T_END}] "
             f"s, rtol = atol = {TOL:g}; fresh process, median of {ROUNDS})", "",
             "| N | nq | steps | dense CPU [s] | sparse CPU [s] | dense peak RSS [MB] | "
             "sparse peak RSS [MB] | sparse RSS growth [MB] |", "|---|---|---|---|---|---|---|---|"]
    def fmt(row, key, spec):
        return "-" if row is None else format(row[key], spec)
    for n in sorted({r["N"] for r in rows if r["mode"] == "sparse"}):
        sp, de = by[("sparse", n)], by.get(("dense", n))
        lines.append(f"| {n} | {7 * n} | {sp['nsteps']} | {fmt(de, 'cpu', '.3f')} | "
                     f"{sp['cpu']:.3f} | {fmt(de, 'rss_peak', '.0f')} | {sp['rss_peak']:.0f} | "
                     f"{sp['rss_peak'] - sp['rss_before']:.1f} |")
    ex = "-" if s["exponent"] is None else f"{s['exponent']:.2f}"
    md = "-" if s["max_diff"] is None else f"{s['max_diff']:.1e}"
    lines += ["", f"Fitted exponent of the sparse CPU time, N = {FIT[0]} ... {FIT[-1]}: "
              f"{ex} (target <= 1.2).  Largest difference of the final q, dense "
              f"against sparse: {md}."]
    return "\n".join(lines + _dae_lines(rows)) + "\n"


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "--whole":
        print(json.dumps(whole_call(sys.argv[2], int(sys.argv[3]))))
    else:
        text = report(run())
        OUT_MD.parent.mkdir(parents=True, exist_ok=True)
        OUT_MD.write_text(text)
        print(text)
