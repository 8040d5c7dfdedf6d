"""Work-precision on stiff problems (issue 3): mbint's stiff methods and CVODE with
the right-hand side and Jacobian in C (LowLevelCallables), SciPy's Radau, BDF and
LSODA calling the same C functions through a thin Python wrapper (ctypes), in one run.

For each problem and tolerance: final-time error against a reference (SciPy Radau
at rtol 1e-13 on the Python right-hand side), best-of-N wall time, nfev, njev, nlu.
Time ratios against CVODE are taken at matched error: log(time) is interpolated
linearly in log(error) along each method's curve at CVODE's errors.

Run: ``python tests/benchmarks/bench_stiff.py`` (writes out/bench_stiff.md) or
``make bench``.
"""
from __future__ import annotations

import ctypes
import time
from pathlib import Path

import numpy as np
from scipy.integrate import solve_ivp as scipy_solve_ivp

import mbint
from mbint import problems

OUT_MD = Path(__file__).resolve().parents[2] / "out" / "bench_stiff.md"
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


def best_time(run, budget=0.6, min_reps=2, max_reps=50):
    best, reps, t_end = np.inf, 0, time.perf_counter() + budget
    res = None
    while reps < min_reps or (time.perf_counter() < t_end and reps < max_reps):
        t0 = time.perf_counter()
        res = run()
        best = min(best, time.perf_counter() - t0)
        reps += 1
    return best, res


def run(rtols=(1e-3, 1e-4, 1e-5, 1e-6, 1e-7, 1e-8), quick=False):
    available = {m.name for m in mbint.methods()}
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
            for (lib, m), fn in runs.items():
                t, res = best_time(fn, budget=0.2 if quick else 0.6)
                err = float(np.max(np.abs(res.y[:, -1] - ref) / (np.abs(ref) + ascale * 1e-3)))
                rows.append(dict(problem=pname, lib=lib, method=m, rtol=rtol, time=t,
                                 error=err, nfev=int(res.nfev), njev=int(res.njev),
                                 nlu=int(res.nlu), ok=bool(res.success)))
    return rows


def matched_ratio(rows, problem, method, against="cvode_bdf"):
    """Median over `against`'s points of time(method) / time(against) at equal error."""
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
             "error: max relative error at the final time against SciPy Radau at rtol 1e-13.", "",
             "| problem | solver | rtol | error | time [ms] | nfev | njev | nlu |",
             "|---|---|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        lines.append(f"| {r['problem']} | {r['lib']} {r['method']} | {r['rtol']:.0e} | "
                     f"{r['error']:.2e} | {r['time'] * 1e3:.3f} | {r['nfev']} | {r['njev']} | "
                     f"{r['nlu']} |")
    lines += ["", "## Time at matched error, relative to CVODE (cvode_bdf)", "",
              "| problem | " + " | ".join(OURS + THEIRS) + " |",
              "|---|" + "---:|" * len(OURS + THEIRS)]
    for p in PROBLEMS:
        cells = [f"{matched_ratio(rows, p, m):.2f}" for m in OURS + THEIRS]
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
