"""The anchor of issue 13: a plain C program calling CVODE directly on the RN
stiff double pendulum (``anchor_cvode.c``, built here with the Debian SUNDIALS
that setup.py links), against mbint and SciPy, in one run.

The program has a hand-written f and df/dy in mbint's index-1 coordinates
(y = (q, q'), q = (x1, y1, th1, x2, y2, th2); test_bench_anchor.py checks both
against ``model.rhs`` / ``model.jacobian``), CV_BDF with Newton, the dense linear
solver and the analytic Jacobian, CVODE's defaults otherwise.  Two output modes:
``CV_NORMAL`` at each output time (what a plain program does) and ``CV_ONE_STEP``
with a stop time at 2 s and the output interpolated by CVodeGetDky (what mbint's
``cvode_bdf`` does).

Contenders (t in [0, 2] s, rtol = atol = tol, output at the 201 points
``T_EVAL``): the anchor in both modes; mbint ``cvode_bdf``, ``bdf``,
``radau_iia``, ``rodas4`` (index-1 formulation, everything in C, through
``mbint.simulate(..., t_eval=T_EVAL)``), and the same four on ``formulation="joint"``
(labelled "(joint)": the two joint angles and rates, 4 states instead of 12, no
saddle-point solve; x'' by the articulated-body algorithm under the model's own
forces, the Jacobian exact (joint_planar.c); the trajectory mapped back to the body
coordinates, on which the error is measured as for every other contender); SciPy ``Radau``, ``BDF``, ``LSODA`` on
``model.rhs`` / ``model.jacobian`` (the model's C kernels called from Python: SciPy
with mbint's kernels), and on ``numpy_pendulum.py`` (f and J written in NumPy as a
SciPy user writes them: SciPy as a user has it).

The summary reports mbint's best on the program's formulation (index1) and mbint's best
over all formulations, each with the winner's name.

Error: max over the 201 points and the six coordinates of |q - q_ref| [m, rad],
q_ref from ``radau_iia`` at rtol = atol = 1e-13.  Time: median over ROUNDS
interleaved rounds; in each round every contender and tolerance runs for about
ROUND_S (at least once) and the mean per run is the round's value (the anchor
times itself inside the program, so process start-up is not counted).  Spread:
(max - min) / median over the rounds.

Matched error.  The global error of one method at one tolerance scatters by up to
an order of magnitude between neighbouring tolerances (the anchor's own error at
tol 0.5e-6 ... 2e-6 ranges over 1.5e-5 ... 4.4e-4), so piecewise interpolation
along a curve picks up that noise.  Each contender's curve is instead fitted by
least squares, log(time) = a + b log(error), over its points with error within
[LEVEL / 30, 30 LEVEL], and evaluated at the level; tolerances are spaced by a
quarter of a decade.

Per-evaluation cost: the anchor's f and J (its J includes the saddle solve it
needs, as in its CVODE callback) timed inside the program over distinct states;
mbint's f and J timed two ways: in C as the integrators call them
(``index1_evaltime.c``, built here against the kernels, the same protocol as the
anchor's: like for like), and through the batch kernels (``model.rhs(t, Y)`` with Y
of BATCH distinct states: the C loop, one Python call per batch, plus NumPy's
conversions and the transposed copy of the output, which dominate the Jacobian's).

One Jacobian of formulation="joint" on planar trees (``joint_costs``): f, the exact
Jacobian and forward differences of f (2 n + 1 calls, what the joint formulation took
before), each in C through ``_core.form_probe`` over distinct random states, on the
stiff double pendulum (n = 2) and damped chains (n = 6 ... 150), medians of interleaved
rounds.

Run ``python tests/benchmarks/bench_anchor.py`` (writes out/bench_anchor.md) or
``make bench``.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path

import numpy as np
from scipy.integrate import solve_ivp as scipy_solve_ivp

import mbint
import numpy_pendulum
from mbint import models

HERE = Path(__file__).resolve().parent
SRC = HERE / "anchor_cvode.c"
ROOT = HERE.parents[1]
OUT_MD = ROOT / "out" / "bench_anchor.md"
BIN = ROOT / "build" / "bench" / "anchor_cvode"
FAST_BIN = ROOT / "build" / "bench" / "anchor_cvode_fastops"
NVEC_SRC = ROOT / "csrc" / "methods" / "sundials_nvec.c"
EVAL_SRC = HERE / "index1_evaltime.c"
EVAL_BIN = ROOT / "build" / "bench" / "index1_evaltime"
LIBS = ["-lsundials_cvode", "-lsundials_nvecserial", "-lsundials_sunmatrixdense",
        "-lsundials_sunlinsoldense", "-lm"]
SPAN = (0.0, 2.0)
T_EVAL = np.linspace(0.0, 2.0, 201)
ROUNDS = 5
ROUND_S = 0.03
LEVELS = (2e-5, 2e-6)
BATCH = 2000
OURS_TOLS = tuple(10.0 ** (-k / 4) for k in range(12, 37))    # 1e-3 ... 1e-9
SCIPY_TOLS = tuple(10.0 ** (-k / 4) for k in range(12, 33))   # 1e-3 ... 1e-8


def build(path=BIN):
    """Compile anchor_cvode.c (when missing or older than the source); returns the path."""
    path = Path(path)
    if path.exists() and path.stat().st_mtime >= SRC.stat().st_mtime:
        return path
    path.parent.mkdir(parents=True, exist_ok=True)
    cc = os.environ.get("CC", shutil.which("cc") or "gcc")
    tmp = path.with_suffix(".tmp")
    subprocess.run([cc, "-O2", "-o", str(tmp), str(SRC)] + LIBS, check=True)
    tmp.replace(path)
    return path


def build_fast(path=FAST_BIN):
    """Compile anchor_cvode.c with -DANCHOR_FAST_OPS and ``csrc/methods/sundials_nvec.c``
    (the library's vector operations and dense LU compiled at -O2, bit for bit the same
    results) when missing or older than either source; returns the path."""
    path = Path(path)
    srcs = [SRC, NVEC_SRC]
    if path.exists() and all(path.stat().st_mtime >= p.stat().st_mtime for p in srcs):
        return path
    path.parent.mkdir(parents=True, exist_ok=True)
    cc = os.environ.get("CC", shutil.which("cc") or "gcc")
    tmp = path.with_suffix(".tmp")
    inc = [f"-I{ROOT / 'csrc' / d}" for d in ("", "core", "methods")]
    subprocess.run([cc, "-O2", "-DANCHOR_FAST_OPS", *inc, "-o", str(tmp), *map(str, srcs)]
                   + LIBS, check=True)
    tmp.replace(path)
    return path


def build_evaltime(path=EVAL_BIN):
    """Compile index1_evaltime.c with the C kernels (-O2, the sources and libraries of
    the C test harness) when missing or older than any source; returns the path."""
    import sys
    sys.path.insert(0, str(ROOT / "tests"))
    import test_c_harness as harness
    path = Path(path)
    srcs = harness._sources()
    newest = max(p.stat().st_mtime for p in srcs + [EVAL_SRC] +
                 sorted((ROOT / "csrc").glob("*/*.h")))
    if path.exists() and path.stat().st_mtime >= newest:
        return path
    path.parent.mkdir(parents=True, exist_ok=True)
    cc = os.environ.get("CC", shutil.which("cc") or "gcc")
    inc = [f"-I{ROOT / 'csrc' / d}" for d in harness.KERNEL_DIRS] + [f"-I{ROOT / 'tests' / 'c'}"]
    tmp = path.with_suffix(".tmp")
    subprocess.run([cc, "-std=c11", "-O2", *inc, "-o", str(tmp), str(EVAL_SRC),
                    *map(str, srcs), *harness._libs()], check=True)
    tmp.replace(path)
    return path


def mbint_evaltime(k=200000, exe=None):
    """Seconds per f and per J of mbint's index-1 kernels called in C."""
    exe = exe or build_evaltime()
    out = subprocess.run([str(exe), str(k)], capture_output=True, text=True,
                         check=True).stdout.split()
    return float(out[1]), float(out[3])


def anchor_eval(y, exe=None):
    """The anchor's f (12,) and df/dy (12, 12) at y."""
    exe = exe or build()
    out = subprocess.run([str(exe), "eval"], input=" ".join(repr(float(v)) for v in y),
                         capture_output=True, text=True, check=True).stdout.split()
    v = np.array([float(x) for x in out])
    return v[:12], v[12:].reshape(12, 12, order="F")


def anchor_solve(tol, mode=0, h0=0.0, maxord=0, round_s=0.0, nout=len(T_EVAL), exe=None):
    """One anchor run: (q (6, nout), stats dict, mean seconds per run)."""
    exe = exe or build()
    out = subprocess.run([str(exe), "solve", repr(tol), repr(tol), str(nout), str(mode),
                          repr(h0), str(maxord), repr(round_s)], capture_output=True, text=True,
                         check=True).stdout.splitlines()
    sec = float(out[0].split()[1])
    ns, nf, nj, nl, h = out[1].split()
    Y = np.array([[float(x) for x in line.split()] for line in out[2:]])
    st = dict(ok=True, nsteps=int(ns), nfev=int(nf), njev=int(nj), nlu=int(nl), h0=float(h))
    return Y[:, 1:].T, st, sec


def anchor_evaltime(k=200000, exe=None):
    """Seconds per f and per J of the hand-written C kernels."""
    exe = exe or build()
    out = subprocess.run([str(exe), "evaltime", str(k)], capture_output=True, text=True,
                         check=True).stdout.split()
    return float(out[1]), float(out[3])


# ---- contenders: run(model, tol) -> (q (6, 201), stats, seconds or None) ----

def _anchor(mode, fast=False):
    def run(m, tol, round_s=0.0):
        return anchor_solve(tol, mode=mode, round_s=round_s,
                            exe=build_fast() if fast else None)
    return run


def _mbint(method, formulation="index1"):
    def run(m, tol, round_s=0.0):
        tr = mbint.simulate(m, SPAN, method=method, rtol=tol, atol=tol, t_eval=T_EVAL,
                            formulation=formulation)
        st = tr.stats
        return tr.q, dict(ok=bool(tr.success), nsteps=st["nsteps"], nfev=st["nfev"],
                          njev=st["njev"], nlu=st["nlu"]), None
    return run


def _scipy(method, numpy_model=False):
    def run(m, tol, round_s=0.0):
        f, J = ((numpy_pendulum.rhs, numpy_pendulum.jac) if numpy_model else
                (lambda t, y: m.rhs(t, y), lambda t, y: m.jacobian(t, y)))
        res = scipy_solve_ivp(f, SPAN, np.concatenate([m.q0, m.qd0]), method=method, jac=J,
                              rtol=tol, atol=tol, t_eval=T_EVAL)
        return res.y[:m.nq], dict(ok=bool(res.success), nsteps=int(res.t.size), nfev=int(res.nfev),
                                  njev=int(res.njev), nlu=int(res.nlu)), None
    return run


ANCHOR = "C CVODE (CV_NORMAL)"
# the same program with SUNDIALS' vector operations and dense LU compiled at -O2 (Debian's
# libsundials is built without optimization; see anchor_cvode.c, ANCHOR_FAST_OPS)
ANCHOR_O2 = "C CVODE (CV_NORMAL, library ops at -O2)"
CONTENDERS = {
    ANCHOR: (_anchor(0), OURS_TOLS),
    "C CVODE (CV_ONE_STEP + GetDky)": (_anchor(1), OURS_TOLS),
    ANCHOR_O2: (_anchor(0, fast=True), OURS_TOLS),
    "mbint cvode_bdf": (_mbint("cvode_bdf"), OURS_TOLS),
    "mbint bdf": (_mbint("bdf"), OURS_TOLS),
    "mbint radau_iia": (_mbint("radau_iia"), OURS_TOLS),
    "mbint rodas4": (_mbint("rodas4"), OURS_TOLS),
    "mbint cvode_bdf (joint)": (_mbint("cvode_bdf", "joint"), OURS_TOLS),
    "mbint bdf (joint)": (_mbint("bdf", "joint"), OURS_TOLS),
    "mbint radau_iia (joint)": (_mbint("radau_iia", "joint"), OURS_TOLS),
    "mbint rodas4 (joint)": (_mbint("rodas4", "joint"), OURS_TOLS),
    "SciPy Radau": (_scipy("Radau"), SCIPY_TOLS),
    "SciPy BDF": (_scipy("BDF"), SCIPY_TOLS),
    "SciPy LSODA": (_scipy("LSODA"), SCIPY_TOLS),
    "SciPy Radau (NumPy model)": (_scipy("Radau", True), SCIPY_TOLS),
    "SciPy BDF (NumPy model)": (_scipy("BDF", True), SCIPY_TOLS),
    "SciPy LSODA (NumPy model)": (_scipy("LSODA", True), SCIPY_TOLS),
}
MBINT = [k for k in CONTENDERS if k.startswith("mbint")]
# on the program's own formulation (index1: y = (q, q') of the body coordinates, 12
# entries); the "(joint)" ones integrate the 2 joint angles and rates (4 entries, no
# saddle-point solve: formulation="joint"), error still measured on the body coordinates
MBINT_INDEX1 = [k for k in MBINT if not k.endswith("(joint)")]
# SciPy on mbint's C kernels (model.rhs / model.jacobian through Python): a SciPy user
# does not have these; SciPy on a NumPy model (numpy_pendulum.py): what a user has
SCIPY = [k for k in CONTENDERS if k.startswith("SciPy") and "NumPy" not in k]
SCIPY_NUMPY = [k for k in CONTENDERS if k.startswith("SciPy") and "NumPy" in k]


def reference(m):
    return mbint.simulate(m, SPAN, method="radau_iia", rtol=1e-13, atol=1e-13, t_eval=T_EVAL).q


def run(rounds=ROUNDS, quick=False):
    build()
    m = models.stiff_double_pendulum()
    qref = reference(m)
    jobs = [(name, tol) for name, (_, tols) in CONTENDERS.items()
            for tol in (tols[::4] if quick else tols)]
    times = {job: [] for job in jobs}
    info = {}
    for job in jobs:  # warm-up (and the results)
        info[job] = CONTENDERS[job[0]][0](m, job[1])
    for _ in range(1 if quick else rounds):
        for job in jobs:
            fn = CONTENDERS[job[0]][0]
            t0, k = time.process_time(), 0
            if job[0].startswith("C CVODE"):
                times[job].append(fn(m, job[1], ROUND_S)[2])
                continue
            while k == 0 or time.process_time() - t0 < ROUND_S:
                fn(m, job[1])
                k += 1
            times[job].append((time.process_time() - t0) / k)
    rows = []
    for job in jobs:
        q, st, _ = info[job]
        ts = np.array(times[job])
        med = float(np.median(ts))
        rows.append(dict(name=job[0], tol=job[1], time=med,
                         spread=float((ts.max() - ts.min()) / med),
                         error=float(np.abs(q - qref).max()), **st))
    return rows


def time_at(rows, name, error, window=30.0):
    """Time of contender `name` at `error` from the least-squares line log(time) vs
    log(error) through its points with error in [error / window, error * window]
    (nan with fewer than 3 such points or when `error` is outside their range)."""
    pts = np.array([(r["error"], r["time"]) for r in rows if r["name"] == name and r["ok"]
                    and error / window <= r["error"] <= error * window])
    if len(pts) < 3 or not pts[:, 0].min() <= error <= pts[:, 0].max():
        return np.nan
    b, a = np.polyfit(np.log(pts[:, 0]), np.log(pts[:, 1]), 1)
    return float(np.exp(a + b * np.log(error)))


def best_of(rows, names, e):
    return np.nanmin([time_at(rows, s, e) for s in names] + [np.inf])


def winner(rows, names, e):
    """(time, name) of the fastest of `names` at error `e` (nan, None: none reaches it)."""
    ts = [(time_at(rows, s, e), s) for s in names]
    ts = [x for x in ts if np.isfinite(x[0])]
    return min(ts) if ts else (np.nan, None)


def evaluation_costs(rounds=ROUNDS):
    """Seconds per f and per J: anchor f, J (af, aj), mbint's in C (cf, cj) and
    through the batch kernels (mf, mj), medians of interleaved rounds."""
    exe = build()
    exe_c = build_evaltime()
    m = models.stiff_double_pendulum()
    rng = np.random.default_rng(0)
    Y = (np.concatenate([m.q0, m.qd0])[:, None] + 0.05 * rng.standard_normal((12, BATCH)))
    tt = np.zeros(BATCH)
    m.rhs(tt, Y), m.jacobian(tt, Y)
    res = {k: [] for k in ("af", "aj", "cf", "cj", "mf", "mj")}
    for _ in range(rounds):
        af, aj = anchor_evaltime(exe=exe)
        res["af"].append(af)
        res["aj"].append(aj)
        cf, cj = mbint_evaltime(exe=exe_c)
        res["cf"].append(cf)
        res["cj"].append(cj)
        for key, fn in (("mf", m.rhs), ("mj", m.jacobian)):
            t0, k = time.process_time(), 0
            while k == 0 or time.process_time() - t0 < 0.05:
                fn(tt, Y)
                k += 1
            res[key].append((time.process_time() - t0) / (k * BATCH))
    out = {k: float(np.median(v)) for k, v in res.items()}
    out["joint"] = joint_costs(rounds=rounds)
    return out


JOINT_NS = (2, 6, 20, 60, 150)


def _probe_time(m, what, Y, min_s=0.02):
    """CPU seconds per call of _core.form_probe's `what` over the states Y."""
    from mbint import _core
    from mbint.mbs.joint import PlanarJointTree
    tree, h = PlanarJointTree(m), m._linalg_handle()
    reps = 1
    while True:
        t0 = time.process_time()
        _core.form_probe(h, "joint", Y, what, tree=tree._handle, reps=reps)
        dt = time.process_time() - t0
        if dt >= min_s:
            return dt / (reps * len(Y))
        reps *= 4


def joint_costs(ns=JOINT_NS, rounds=ROUNDS, states=20):
    """{n: {"rhs", "jac", "jac_fd"}} seconds per call on formulation="joint": the RN stiff
    double pendulum at n = 2, else a damped chain of n links (RSDAs k = 20, c = 0.3)."""
    res = {}
    for _ in range(rounds):
        for n in ns:
            m = (models.stiff_double_pendulum() if n == 2 else
                 models.pendulum_chain(n, k=20.0, c=0.3, angle=0.3))
            Y = np.random.default_rng(n).uniform(-1.0, 1.0, (states, 2 * n))
            for what in ("rhs", "jac", "jac_fd"):
                res.setdefault(n, {}).setdefault(what, []).append(_probe_time(m, what, Y))
    return {n: {w: float(np.median(v)) for w, v in d.items()} for n, d in res.items()}


def report(rows, costs=None):
    lines = ["# The anchor: plain C CVODE on the RN stiff double pendulum (issue 13)", "",
             "error: max |q - q_ref| [m, rad] over 201 points in [0, 2] s, q_ref from radau_iia "
             f"at 1e-13; time: median of {ROUNDS} interleaved rounds, spread (max - min) / "
             "median.", "",
             "| contender | tol | error | time [ms] | spread | steps | nfev | njev | nlu |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        lines.append(f"| {r['name']} | {r['tol']:.2e} | {r['error']:.2e} | "
                     f"{r['time'] * 1e3:.3f} | {r['spread']:.2f} | {r['nsteps']} | {r['nfev']} "
                     f"| {r['njev']} | {r['nlu']} |")
    lines += ["", "## Time at matched error (least-squares log-log fit, see the module "
              "docstring)", "",
              "| contender | " + " | ".join(f"t({e:.0e}) [ms]" for e in LEVELS) + " | " +
              " | ".join(f"/ anchor at {e:.0e}" for e in LEVELS) + " |",
              "|---|" + "---:|" * (2 * len(LEVELS))]
    for name in CONTENDERS:
        ts = [time_at(rows, name, e) for e in LEVELS]
        rs = [t / time_at(rows, ANCHOR, e) for t, e in zip(ts, LEVELS)]
        lines.append(f"| {name} | " + " | ".join(f"{t * 1e3:.3f}" for t in ts) + " | " +
                     " | ".join(f"{r:.2f}" for r in rs) + " |")
    lines += [""]
    for e in LEVELS:
        (m1, n1), (mb, nb) = winner(rows, MBINT_INDEX1, e), winner(rows, MBINT, e)
        sc, an = best_of(rows, SCIPY, e), time_at(rows, ANCHOR, e)
        sn, a2 = best_of(rows, SCIPY_NUMPY, e), time_at(rows, ANCHOR_O2, e)
        lines.append(f"- at {e:.0e}: mbint's best on the program's formulation (index1) / "
                     f"anchor = {m1 / an:.2f} ({n1}); mbint's best over all formulations / "
                     f"anchor = {mb / an:.2f} ({nb}); against the program with the library's "
                     f"operations at -O2: {m1 / a2:.2f} and {mb / a2:.2f}; SciPy's best / "
                     f"mbint's best = {sc / mb:.1f} on mbint's C kernels, {sn / mb:.1f} on a "
                     f"NumPy model")
    if costs:
        lines += ["", "## One evaluation (C, distinct states)", "",
                  "| | hand-written [us] | mbint in C [us] | ratio | mbint batch [us] | "
                  "ratio |", "|---|---:|---:|---:|---:|---:|",
                  f"| f | {costs['af'] * 1e6:.3f} | {costs['cf'] * 1e6:.3f} | "
                  f"{costs['cf'] / costs['af']:.2f} | {costs['mf'] * 1e6:.3f} | "
                  f"{costs['mf'] / costs['af']:.2f} |",
                  f"| J (incl. its saddle solve) | {costs['aj'] * 1e6:.3f} | "
                  f"{costs['cj'] * 1e6:.3f} | {costs['cj'] / costs['aj']:.2f} | "
                  f"{costs['mj'] * 1e6:.3f} | {costs['mj'] / costs['aj']:.2f} |"]
    if costs and costs.get("joint"):
        lines += ["", "## One Jacobian on formulation=\"joint\" (planar trees, C, distinct "
                  "states)", "", "| n | f [us] | J exact [us] | J differences [us] | exact / "
                  "differences |", "|---:|---:|---:|---:|---:|"]
        for n, c in costs["joint"].items():
            lines.append(f"| {n} | {c['rhs'] * 1e6:.2f} | {c['jac'] * 1e6:.2f} | "
                         f"{c['jac_fd'] * 1e6:.2f} | {c['jac'] / c['jac_fd']:.2f} |")
    return "\n".join(lines) + "\n"


def main():
    rows = run()
    costs = evaluation_costs()
    text = report(rows, costs)
    OUT_MD.parent.mkdir(parents=True, exist_ok=True)
    OUT_MD.write_text(text)
    print(text)
    print(f"written to {OUT_MD}")
    return rows


if __name__ == "__main__":
    main()
