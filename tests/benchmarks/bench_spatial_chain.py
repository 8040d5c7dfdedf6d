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

Every formulation x method (issue 22: "on every formulation that supports the
method"): ``python bench_spatial_chain.py --matrix [ROUNDS]`` runs the pairs of MATRIX
(index1 with radau_iia, bdf, cvode_bdf, dop853; index3, index2, index1_dae, ggl with
bdf, radau_iia and ida where it solves them; state_space with radau_iia, bdf, dop853)
in the sparse mode where the pair has one (``matrix_la``; state_space: v'' sparse, the
implicit methods' Jacobian in v dense), at N = MATRIX_SIZES, each
point a fresh process as above, the rounds interleaved, and prints (and writes to
out/bench_spatial_chain_matrix.md/.json) the table of CPU time, steps, peak RSS and
growth, and the fitted exponent.  A point predicted to take more than MATRIX_CAP_S
(from the pair's measured points, exponent max(measured, 2)) is skipped and the table
says why.

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


#: the pairs (formulation, method) of the --matrix table
MATRIX = (("index1", "radau_iia"), ("index1", "bdf"), ("index1", "cvode_bdf"),
          ("index1", "dop853"),
          ("index3", "bdf"), ("index3", "radau_iia"), ("index2", "bdf"), ("index2", "radau_iia"),
          ("index1_dae", "bdf"), ("index1_dae", "radau_iia"), ("index1_dae", "ida"),
          ("ggl", "bdf"), ("ggl", "radau_iia"), ("ggl", "ida"),
          ("state_space", "radau_iia"), ("state_space", "bdf"), ("state_space", "dop853"))
MATRIX_SIZES = (100, 300, 1000)
MATRIX_CAP_S = 120.0  # skip a point predicted to take longer [s CPU]
OUT_MATRIX_MD = ROOT / "out" / "bench_spatial_chain_matrix.md"
OUT_MATRIX_JSON = ROOT / "out" / "bench_spatial_chain_matrix.json"


def matrix_la(form, method):
    """The linear algebra of a pair: "sparse" where it has a sparse mode (index1 and
    state_space: every method; the DAEs: the methods flagged MB_LINSYS_MASS), else
    "dense".  state_space's sparse mode (statespace_sparse.c) makes v'' O(N); the
    implicit methods' J1, J2 stay dense in v (central differences of v'', O(N^2) a
    Jacobian and an O(nd^3) LU)."""
    if form in ("index1", "state_space"):
        return "sparse"
    flags = next(d["flags"] for d in mbint._core.methods() if d["name"] == method)
    return "sparse" if flags & mbint._core.MB_LINSYS_MASS else "dense"


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


def point_call(form, method, n):
    """whole_call() of one pair of MATRIX in this process."""
    from mbint.testing.spatial_chain import spatial_chain
    model = spatial_chain(n)
    rss0 = _rss_mb()
    t0 = time.process_time()
    tr = mbint.simulate(model, (0.0, T_END), method, formulation=form, rtol=TOL, atol=TOL,
                        linear_algebra=matrix_la(form, method))
    cpu = time.process_time() - t0
    assert tr.success, tr.message
    return {"cpu": cpu, "nsteps": int(tr.stats["nsteps"]), "rss_before": rss0,
            "rss_peak": _rss_mb(), "la": tr.options["linear_algebra"]}


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


def _point_subprocess(form, method, n, timeout):
    env = dict(os.environ)
    root = str(Path(mbint.__file__).resolve().parents[1])
    env["PYTHONPATH"] = root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    try:
        out = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--point", form,
                              method, str(n)], env=env, capture_output=True, text=True,
                             timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"skip": f"over {timeout:.0f} s wall: stopped"}
    if out.returncode != 0:
        return {"skip": "failed: " + (out.stderr.strip().splitlines() or ["?"])[-1][:80]}
    return json.loads(out.stdout.strip().splitlines()[-1])


def _predicted(done, n):
    """CPU [s] predicted at n from a pair's measured points {N: cpu} (exponent max(e, 2))"""
    ns = sorted(done)
    e = max(slope(ns, [done[k] for k in ns]), 2.0) if len(ns) > 1 else 2.0
    return done[ns[-1]] * (n / ns[-1]) ** e


def run_matrix(pairs=MATRIX, sizes=MATRIX_SIZES, rounds=1, cap=MATRIX_CAP_S, verbose=True):
    """{(form, method): {N: row}}: medians over interleaved rounds, rows with "skip"
    where a point was predicted to exceed cap (or failed)."""
    runs = {(p, n): [] for p in pairs for n in sizes}
    skip = {}
    for r in range(rounds):
        for n in sizes:
            for p in pairs:
                if (p, n) in skip:
                    continue
                done = {k: float(np.median([x["cpu"] for x in runs[(p, k)]]))
                        for k in sizes if k < n and runs[(p, k)]}
                if any((p, k) in skip for k in sizes if k < n) or (
                        done and _predicted(done, n) > cap):
                    why = "skipped: a smaller N was" if not done or any(
                        (p, k) in skip for k in sizes if k < n) else (
                        f"skipped: predicted {_predicted(done, n):.0f} s > {cap:.0f} s")
                    skip[(p, n)] = why
                    continue
                w = _point_subprocess(*p, n, timeout=4 * cap)
                if "skip" in w:
                    skip[(p, n)] = w["skip"]
                    continue
                runs[(p, n)].append(w)
                if verbose:
                    print(f"round {r} {p[0]}/{p[1]} N={n}: {w['cpu']:.3f} s, "
                          f"{w['rss_peak']:.0f} MB", flush=True)
    table = {}
    for (p, n), rs in runs.items():
        if (p, n) in skip:
            table.setdefault(p, {})[n] = {"skip": skip[(p, n)]}
        elif rs:
            row = {k: float(np.median([x[k] for x in rs]))
                   for k in ("cpu", "rss_before", "rss_peak")}
            row.update(nsteps=rs[0]["nsteps"], la=rs[0]["la"])
            table.setdefault(p, {})[n] = row
    return table


def matrix_exponent(rows):
    """the fitted exponent of a pair's {N: row} over its measured N (None below 2)"""
    ns = sorted(n for n, r in rows.items() if "cpu" in r)
    return slope(ns, [rows[n]["cpu"] for n in ns]) if len(ns) > 1 else None


def report_matrix(table, sizes=MATRIX_SIZES):
    head = " | ".join(f"N={n}: CPU [s] / steps / peak RSS [MB]" for n in sizes)
    lines = [f"# 3-D chain, whole simulate() per formulation x method (t in [0, {T_END}] s, "
             f"rtol = atol = {TOL:g}; a fresh process per point)", "",
             f"| formulation | method | linear algebra | {head} | exponent | RSS growth "
             f"N={sizes[-1]} [MB] |", "|---" * (5 + len(sizes)) + "|"]
    for (form, method), rows in table.items():
        cells, la = [], "-"
        for n in sizes:
            r = rows.get(n, {"skip": "-"})
            if "skip" in r:
                cells.append(r["skip"])
            else:
                la = r["la"]
                cells.append(f"{r['cpu']:.3f} / {r['nsteps']} / {r['rss_peak']:.0f}")
        e = matrix_exponent(rows)
        big = rows.get(sizes[-1], {})
        growth = f"{big['rss_peak'] - big['rss_before']:.1f}" if "cpu" in big else "-"
        lines.append(f"| {form} | {method} | {la} | " + " | ".join(cells)
                     + f" | {'-' if e is None else f'{e:.2f}'} | {growth} |")
    lines += ["", "state_space in its sparse mode (statespace_sparse.c): the partition by a "
              "sparse LU of Phi_q^T, KLU of Phi_u, v'' from the sparse saddle-point system, "
              "O(N) an evaluation; the implicit methods' Jacobian in v stays dense (central "
              "differences of v'', O(N^2), and a dense LU of the iteration matrix).  A point "
              "is skipped when its predicted CPU time exceeds the cap, or stopped after 4 caps "
              "of wall time."]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "--whole":
        print(json.dumps(whole_call(sys.argv[2], int(sys.argv[3]))))
    elif len(sys.argv) == 5 and sys.argv[1] == "--point":
        print(json.dumps(point_call(sys.argv[2], sys.argv[3], int(sys.argv[4]))))
    elif len(sys.argv) in (2, 3) and sys.argv[1] == "--matrix":
        tab = run_matrix(rounds=int(sys.argv[2]) if len(sys.argv) == 3 else 1)
        text = report_matrix(tab)
        OUT_MATRIX_MD.parent.mkdir(parents=True, exist_ok=True)
        OUT_MATRIX_MD.write_text(text)
        OUT_MATRIX_JSON.write_text(json.dumps(
            [{"formulation": f, "method": m, "exponent": matrix_exponent(rows),
              "rows": {str(n): r for n, r in rows.items()}} for (f, m), rows in tab.items()],
            indent=1))
        print(text)
    else:
        text = report(run())
        OUT_MD.parent.mkdir(parents=True, exist_ok=True)
        OUT_MD.write_text(text)
        print(text)
