"""Work-precision on stiff problems: mbint's stiff methods and its CVODE adapter with the
right-hand side and Jacobian in C (LowLevelCallables), SciPy's Radau, BDF and LSODA
calling the same C functions through a thin Python wrapper (ctypes), and the anchor: a
plain C program calling CVODE with the same C functions (anchor_stiff.c, built here), all
in one run.

For each problem and tolerance: final-time error against a reference (SciPy Radau at
rtol 1e-13 on the Python right-hand side), CPU time per run (``time.process_time``; the
anchor times itself with CLOCK_PROCESS_CPUTIME_ID: the machines are shared, wall time
measures the neighbours) as the median over ROUNDS interleaved rounds (in each round
every contender runs for at least ROUND_S seconds of CPU time, in an order that rotates
from round to round), nfev, njev, nlu.  Time ratios are taken at matched error: log(time)
is interpolated linearly in log(error) along each method's curve at the reference's
errors; the reference is the plain C CVODE program (``"CVODE"``) or mbint's own adapter
(``"cvode_bdf"``).

Run: ``python tests/benchmarks/bench_stiff.py`` (writes out/bench_stiff.md) or
``make bench``.
"""
from __future__ import annotations

import ctypes
import os
import shutil
import subprocess
import time
from pathlib import Path

import numpy as np
from scipy.integrate import solve_ivp as scipy_solve_ivp

import mbint
from mbint import problems

ROOT = Path(__file__).resolve().parents[2]
OUT_MD = ROOT / "out" / "bench_stiff.md"
ANCHOR_SRC = Path(__file__).resolve().parent / "anchor_stiff.c"
ANCHOR_BIN = ROOT / "out" / "anchor_stiff"
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


def _capsule_pointer(llc):
    cap = tuple.__getitem__(llc, 0)
    get = ctypes.pythonapi.PyCapsule_GetPointer
    get.restype = ctypes.c_void_p
    get.argtypes = [ctypes.py_object, ctypes.c_char_p]
    getname = ctypes.pythonapi.PyCapsule_GetName
    getname.restype = ctypes.c_char_p
    getname.argtypes = [ctypes.py_object]
    return get(cap, getname(cap))


def c_wrappers(cname, n):
    """Python callables fun(t, y), jac(t, y) that call the C functions of problem cname."""
    dp = ctypes.POINTER(ctypes.c_double)
    rhs_t = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_double, dp, dp, ctypes.c_void_p)
    jac_t = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_double, dp, dp, ctypes.c_long, ctypes.c_void_p)
    frhs = rhs_t(_capsule_pointer(problems.c_rhs(cname)))
    fjac = jac_t(_capsule_pointer(problems.c_jac(cname)))

    def fun(t, y):
        y = np.ascontiguousarray(y, dtype=float)
        out = np.empty(n)
        frhs(t, y.ctypes.data_as(dp), out.ctypes.data_as(dp), None)
        return out

    def jac(t, y):
        y = np.ascontiguousarray(y, dtype=float)
        J = np.empty((n, n), order="F")
        fjac(t, y.ctypes.data_as(dp), J.ctypes.data_as(dp), n, None)
        return J

    return fun, jac


def build_anchor(path=ANCHOR_BIN):
    """Compile anchor_stiff.c with csrc/problems (the same C f and J); its path."""
    path.parent.mkdir(parents=True, exist_ok=True)
    cc = os.environ.get("CC", shutil.which("cc") or "gcc")
    src = [str(ANCHOR_SRC)] + sorted(str(p) for p in (ROOT / "csrc" / "problems").glob("*.c"))
    libs = ["-lsundials_cvode", "-lsundials_nvecserial", "-lsundials_sunmatrixdense",
            "-lsundials_sunlinsoldense", "-lm"]
    inc = [f"-I{ROOT / 'csrc' / d}" for d in ("problems", "core")]
    subprocess.run([cc, "-std=c11", "-O2", *inc, "-o", str(path), *src, *libs], check=True)
    return path


class _Anchor:
    """The plain C CVODE program's run as a result (t, y, counts) and its own CPU time."""

    def __init__(self, exe, name, rtol, atol, round_s):
        out = subprocess.run([str(exe), name, repr(rtol), repr(atol), repr(round_s)],
                             capture_output=True, text=True, check=True).stdout.split()
        self.time = float(out[1])
        self.nsteps, self.nfev, self.njev, self.nlu = (int(v) for v in out[4:8])
        self.y = np.array([float(v) for v in out[8:]])[:, None]
        self.success = True


def cpu_time(run, round_s=ROUND_S):
    """Mean CPU seconds per call of run() over at least round_s seconds; the last result."""
    t0, k = time.process_time(), 0
    while k == 0 or time.process_time() - t0 < round_s:
        res = run()
        k += 1
    return (time.process_time() - t0) / k, res


def median_times(runs, rounds=ROUNDS, round_s=ROUND_S):
    """{key: (median CPU time per run, a result)} over interleaved rounds (the order of
    the contenders rotates from round to round)."""
    keys, times, last = list(runs), {k: [] for k in runs}, {}
    for r in range(rounds):
        for k in keys[r % len(keys):] + keys[:r % len(keys)]:
            if k[0] == "C":
                res = runs[k](round_s)
                times[k].append(res.time)
            else:
                t, res = cpu_time(runs[k], round_s)
                times[k].append(t)
            last[k] = res
    return {k: (float(np.median(times[k])), last[k]) for k in keys}


def run(rtols=(1e-3, 1e-4, 1e-5, 1e-6, 1e-7, 1e-8), quick=False):
    available = {m.name for m in mbint.methods()}
    anchor = build_anchor()
    rows = []
    for pname, (cname, pfun, pjac, y0, span, ascale) in PROBLEMS.items():
        ref = scipy_solve_ivp(pfun, span, y0, method="Radau", jac=pjac, rtol=1e-13,
                              atol=1e-13 * ascale).y[:, -1]
        n = len(y0)
        cfun, cjac = problems.c_rhs(cname), problems.c_jac(cname)
        wfun, wjac = c_wrappers(cname, n)
        for rtol in (rtols[::2] if quick else rtols):
            atol = rtol * ascale
            runs = {}
            for m in OURS:
                if m in available:
                    runs[("mbint", m)] = (lambda m=m: mbint.solve_ivp(
                        cfun, span, y0, method=m, jac=cjac, rtol=rtol, atol=atol))
            for m in THEIRS:
                runs[("scipy", m)] = (lambda m=m: scipy_solve_ivp(
                    wfun, span, y0, method=m, jac=wjac, rtol=rtol, atol=atol))
            runs[("C", "CVODE")] = (lambda rs, cname=cname, rtol=rtol, atol=atol:
                                    _Anchor(anchor, cname, rtol, atol, rs))
            timed = median_times(runs, rounds=3 if quick else ROUNDS)
            for (lib, m), (t, res) in timed.items():
                err = float(np.max(np.abs(res.y[:, -1] - ref) / (np.abs(ref) + ascale * 1e-3)))
                rows.append(dict(problem=pname, lib=lib, method=m, rtol=rtol, time=t,
                                 error=err, nfev=int(res.nfev), njev=int(res.njev),
                                 nlu=int(res.nlu), ok=bool(res.success)))
    return rows


def matched_ratio(rows, problem, method, against="CVODE"):
    """Median over `against`'s points of time(method) / time(against) at equal error
    (against: "CVODE", the plain C program, or "cvode_bdf", mbint's adapter)."""
    def curve(m):
        pts = sorted((r["error"], r["time"]) for r in rows
                     if r["problem"] == problem and r["method"] == m and r["ok"] and r["error"] > 0)
        return np.array(pts)
    a, b = curve(method), curve(against)
    if len(a) < 2 or len(b) < 1:
        return np.nan
    la, lt = np.log(a[:, 0]), np.log(a[:, 1])
    order = np.argsort(la)
    ratios = []
    for e, t in b:
        le = np.log(e)
        if la.min() <= le <= la.max():
            ratios.append(np.exp(np.interp(le, la[order], lt[order])) / t)
    return float(np.median(ratios)) if ratios else np.nan


def report(rows):
    lines = ["# Stiff work-precision (rhs and Jacobian in C; SciPy through a ctypes wrapper)", "",
             "error: max relative error at the final time against SciPy Radau at rtol 1e-13; "
             "time: CPU time per run, the median of interleaved rounds.  C CVODE: a plain C "
             "program calling CVODE with the same C functions (anchor_stiff.c).", "",
             "| problem | solver | rtol | error | time [ms] | nfev | njev | nlu |",
             "|---|---|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        lines.append(f"| {r['problem']} | {r['lib']} {r['method']} | {r['rtol']:.0e} | "
                     f"{r['error']:.2e} | {r['time'] * 1e3:.3f} | {r['nfev']} | {r['njev']} | "
                     f"{r['nlu']} |")
    for against, what in (("CVODE", "the plain C CVODE program"),
                          ("cvode_bdf", "mbint's CVODE adapter (cvode_bdf)")):
        lines += ["", f"## Time at matched error, relative to {what}", "",
                  "| problem | " + " | ".join(OURS + THEIRS) + " |",
                  "|---|" + "---:|" * len(OURS + THEIRS)]
        for p in PROBLEMS:
            cells = [f"{matched_ratio(rows, p, m, against):.2f}" for m in OURS + THEIRS]
            lines.append(f"| {p} | " + " | ".join(cells) + " |")
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
