"""RN paper Tables 3-4 on the 14-body HMMWV (issue 10): the explicit ``adams`` on the
state-space ODE against ``rosenbrock_nystrom`` on the same formulation, for 1-4 s of
simulation at tolerances 1e-2 ... 1e-5, plus ``cvode_bdf`` on the index-1
formulation, next to the paper's numbers.

Model: ``models.hmmwv()`` (10 mph over the 0.1 m bump; front wheels reach it at
0.5 s, rear wheels at 1.2 s).  rtol = atol = tol, as in the paper ("absolute and
relative errors at position and velocity levels").

Time: CPU time of one run.  ``adams`` runs once per cell (its runs take tens of
seconds, far above timer noise, and it is stability-bound: its cost hardly depends
on tol); ``rosenbrock_nystrom`` and ``cvode_bdf`` take the median of ROUNDS
interleaved rounds.  Error: max |q(T) - q_ref(T)| over all 98 coordinates
(m and dimensionless Euler parameters), q_ref from ``radau_iia`` (index 1) at
rtol = atol = 1e-9 (agrees with 1e-10 to 6e-10).  Matched-error comparison of
rosenbrock_nystrom and cvode_bdf: log(time) interpolated linearly in log(error)
along rosenbrock_nystrom's curve at the error of each cvode_bdf run.

The paper's times (SGI Onyx, R10000) are in seconds; only the ratios compare.

Run ``python tests/benchmarks/bench_vehicle.py`` (writes out/bench_vehicle.md) or
``make bench``.
"""
from __future__ import annotations

import json
import time
from pathlib import Path

import numpy as np

import mbint
from mbint import models

OUT_MD = Path(__file__).resolve().parents[2] / "out" / "bench_vehicle.md"
SPANS = (1.0, 2.0, 3.0, 4.0)
TOLS = (1e-2, 1e-3, 1e-4, 1e-5)
ROUNDS = 5

#: RN paper Table 3 (explicit, Algorithm 2) and Table 4 (Rosenbrock-Nystrom), s
PAPER_T3 = {1.0: (3618, 3641, 3667, 3663), 2.0: (7276, 7348, 7287, 7276),
            3.0: (10865, 11122, 10949, 10965), 4.0: (14480, 14771, 14630, 14592)}
PAPER_T4 = {1.0: (5.6, 13.2, 40.7, 172), 2.0: (12.6, 32.6, 95, 405),
            3.0: (13, 36.3, 105, 422), 4.0: (13.3, 37, 106, 428)}

CONTENDERS = {
    # the paper's partition (Gauss-Jordan with full pivoting), as in its Tables 3-4
    "adams": dict(method="adams", formulation="state_space", independent="pivoting"),
    "rosenbrock_nystrom": dict(method="rosenbrock_nystrom", formulation="state_space",
                               independent="pivoting"),
    "cvode_bdf": dict(method="cvode_bdf", formulation="index1"),
}
REPEATED = ("rosenbrock_nystrom", "cvode_bdf")


def _run(m, name, T, tol):
    t0 = time.process_time()
    tr = mbint.simulate(m, (0.0, T), rtol=tol, atol=tol, **CONTENDERS[name])
    dt = time.process_time() - t0
    return dt, tr


def reference(m):
    tr = mbint.simulate(m, (0.0, max(SPANS)), method="radau_iia", rtol=1e-9, atol=1e-9,
                        t_eval=list(SPANS))
    return {T: tr.q[:, k] for k, T in enumerate(SPANS)}


def run(rounds=ROUNDS, contenders=tuple(CONTENDERS), spans=SPANS, tols=TOLS):
    m = models.hmmwv()
    qref = reference(m)
    rows = {}
    for name in contenders:
        for T in spans:
            for tol in tols:
                dt, tr = _run(m, name, T, tol)
                rows[name, T, tol] = dict(
                    name=name, T=T, tol=tol, times=[dt], ok=bool(tr.success),
                    error=float(np.abs(tr.q[:, -1] - qref[T]).max()),
                    nsteps=tr.stats["nsteps"], nfev=tr.stats["nfev"])
    for _ in range(rounds - 1):
        for name in (c for c in REPEATED if c in contenders):
            for T in spans:
                for tol in tols:
                    rows[name, T, tol]["times"].append(_run(m, name, T, tol)[0])
    out = []
    for r in rows.values():
        r["time"] = float(np.median(r["times"]))
        out.append(r)
    return out


def cell(rows, name, T, tol):
    for r in rows:
        if r["name"] == name and r["T"] == T and r["tol"] == tol:
            return r
    return None


def time_at(rows, name, error, T=4.0):
    """Time of `name` at `error` for the T-second run, interpolated in log-log."""
    pts = sorted((r["error"], r["time"]) for r in rows
                 if r["name"] == name and r["T"] == T and r["ok"] and r["error"] > 0)
    if len(pts) < 2:
        return np.nan
    le, lt = np.log([p[0] for p in pts]), np.log([p[1] for p in pts])
    x = np.log(error)
    if not le.min() <= x <= le.max():
        return np.nan
    return float(np.exp(np.interp(x, le, lt)))


def matched(rows):
    """(T, cvode tol, cvode error, cvode time, RN time at that error, RN / cvode) for
    every successful cvode_bdf run."""
    out = []
    for r in rows:
        if r["name"] == "cvode_bdf" and r["ok"]:
            tr = time_at(rows, "rosenbrock_nystrom", r["error"], r["T"])
            out.append((r["T"], r["tol"], r["error"], r["time"], tr, tr / r["time"]))
    return sorted(out)


def report(rows):
    spans = sorted({r["T"] for r in rows})
    tols = sorted({r["tol"] for r in rows}, reverse=True)
    hdr = "| T | " + " | ".join(f"{t:.0e}" for t in tols) + " |"
    sep = "|---|" + "---:|" * len(tols)
    L = ["# RN Tables 3-4 on the HMMWV (issue 10)", "",
         "Times in s (ours: CPU time on this machine; paper: SGI Onyx R10000). "
         "Each cell: ours / paper.  Error: max |q(T) - q_ref(T)| over the 98 coordinates.", ""]

    def table(name, paper, title):
        L.extend([f"## {title}", "", hdr, sep])
        for T in spans:
            cs = []
            for k, tol in enumerate(tols):
                r = cell(rows, name, T, tol)
                p = paper[T][TOLS.index(tol)] if paper else None
                if r is None:
                    cs.append("-")
                else:
                    cs.append(f"{r['time']:.3g}" + (f" / {p:g}" if p is not None else ""))
            L.append(f"| {T:g} s | " + " | ".join(cs) + " |")
        L.extend(["", "steps, error:", "", hdr, sep])
        for T in spans:
            cs = []
            for tol in tols:
                r = cell(rows, name, T, tol)
                cs.append("-" if r is None else
                          f"{r['nsteps']}, {r['error']:.1e}" + ("" if r["ok"] else " FAILED"))
            L.append(f"| {T:g} s | " + " | ".join(cs) + " |")
        L.append("")

    table("adams", PAPER_T3, "Table 3: adams on the state-space ODE")
    table("rosenbrock_nystrom", PAPER_T4, "Table 4: rosenbrock_nystrom on the state-space ODE")
    table("cvode_bdf", None, "cvode_bdf on the index-1 formulation (not in the paper)")
    L.extend(["## Speed-up of rosenbrock_nystrom over adams (ours / paper)", "", hdr, sep])
    for T in spans:
        cs = []
        for tol in tols:
            a, r = cell(rows, "adams", T, tol), cell(rows, "rosenbrock_nystrom", T, tol)
            p = PAPER_T3[T][TOLS.index(tol)] / PAPER_T4[T][TOLS.index(tol)]
            cs.append("-" if a is None or r is None else f"{a['time'] / r['time']:.0f}x / {p:.0f}x")
        L.append(f"| {T:g} s | " + " | ".join(cs) + " |")
    L.extend(["", "## rosenbrock_nystrom against cvode_bdf at matched error", "",
              "At the error of each successful cvode_bdf run, the time of rosenbrock_nystrom "
              "interpolated along its curve for the same T (log-log; '-' outside its range).",
              "", "| T | cvode tol | error | cvode_bdf [s] | rosenbrock_nystrom [s] | ratio |",
              "|---|---:|---:|---:|---:|---:|"])
    for T, tol, e, tc, tr, ratio in matched(rows):
        L.append(f"| {T:g} s | {tol:.0e} | {e:.1e} | {tc:.3g} | "
                 + ("-" if not np.isfinite(tr) else f"{tr:.3g}") + " | "
                 + ("-" if not np.isfinite(ratio) else f"{ratio:.2f}") + " |")
    return "\n".join(L) + "\n"


def main():
    rows = run()
    text = report(rows)
    OUT_MD.parent.mkdir(parents=True, exist_ok=True)
    OUT_MD.write_text(text)
    OUT_MD.with_suffix(".json").write_text(json.dumps(rows, indent=1))
    print(text)
    print(f"written to {OUT_MD}")
    return rows


if __name__ == "__main__":
    main()
