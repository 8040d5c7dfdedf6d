"""The cost of mbint's SUNDIALS adapter alone (csrc/methods/sundials_*.c): the anchor's
hand-written f and J of the RN stiff double pendulum (anchor_cvode.c) run by the
anchor's own CVODE loop in CV_ONE_STEP mode (A) and by ``mb_sundials_run("cvode_bdf")``
(B), both in C, same tolerances and 201 output points (adapter_overhead.c).  With the
same f and J the two take the same steps and return the same numbers; what B costs
more is the adapter: its per-run set-up and per-step bookkeeping (step history with
the local error norm, output points, counters, the finiteness check of every f).  What
B costs less: the serial vector operations CVODE runs on, which the adapter replaces by
the same operations compiled with the kernels (sundials_nvec.c; the linked libsundials
is built without optimization), so B is below A.

Two measures:
  - instructions (valgrind --tool=callgrind, when installed): deterministic, so not
    disturbed by other load on the machine; per run = (3 runs - 1 run) / 2, which
    leaves out the one-time costs of a process (lazy binding of the shared
    libraries).  Fixed and per-step overhead from two tolerances (208 and 799 steps);
  - time: minimum over 5 interleaved rounds of the mean seconds per run, and the
    least-squares line (tB - tA) = fixed + per_step * nsteps over the tolerances.

What the Python layer adds on top (mbint.simulate: options, Trajectory, the binding)
and what the model's index-1 kernels cost against the hand-written ones are measured
by bench_anchor.py; this file isolates the adapter.

Run ``python tests/benchmarks/bench_adapter.py`` (writes out/bench_adapter.md) or
``make bench``."""
from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
SRC = HERE / "adapter_overhead.c"
BUILD = ROOT / "build" / "bench"
BIN = BUILD / "adapter_overhead"
OUT_MD = ROOT / "out" / "bench_adapter.md"
KERNEL_DIRS = ["core", "methods", "linalg", "mbs", "problems"]


def _kernel_libs():
    """The kernels' link libraries: the C test harness's list (one place for them)."""
    import sys
    sys.path.insert(0, str(ROOT / "tests"))
    import test_c_harness
    return test_c_harness._libs()


TOLS = (1e-4, 1e-5, 1e-6, 1e-7, 1e-8)
IR_TOLS = (1e-4, 1e-8)
ROUND_S = 0.5


def _sources():
    return [p for d in KERNEL_DIRS for p in sorted((ROOT / "csrc" / d).glob("*.c"))]


def build(path=BIN):
    """Compile the kernels (-O2, as setup.py) and adapter_overhead.c when missing or
    older than any source; returns the path."""
    path = Path(path)
    deps = _sources() + [SRC, HERE / "anchor_cvode.c"] + [
        p for d in KERNEL_DIRS for p in (ROOT / "csrc" / d).glob("*.h")]
    if path.exists() and path.stat().st_mtime >= max(p.stat().st_mtime for p in deps):
        return path
    cc = os.environ.get("CC", shutil.which("cc") or "gcc")
    obj = BUILD / "adapter_obj"
    obj.mkdir(parents=True, exist_ok=True)
    inc = [f"-I{ROOT / 'csrc' / d}" for d in KERNEL_DIRS] + [f"-I{HERE}"]
    flags = ["-std=c11", "-O2", "-Wall", "-Wextra", "-Wno-unused-parameter", *inc]
    objs = []
    for src in _sources():
        o = obj / f"{src.parent.name}_{src.stem}.o"
        subprocess.run([cc, *flags, "-c", str(src), "-o", str(o)], check=True)
        objs.append(str(o))
    tmp = path.with_suffix(".tmp")
    subprocess.run([cc, *flags, str(SRC), *objs, "-o", str(tmp), *_kernel_libs()], check=True)
    tmp.replace(path)
    return path


def timings(tols=TOLS, round_s=ROUND_S, exe=None):
    """One dict per tolerance: steps and counters of A and B, seconds per run, and the
    largest difference between their outputs."""
    exe = exe or build()
    out = subprocess.run([str(exe), repr(round_s), *map(repr, tols)], capture_output=True,
                         text=True, check=True).stdout.split("\n")
    rows = []
    for line in out:
        if not line.strip():
            continue
        v = line.split()
        rows.append(dict(tol=float(v[0]), A=tuple(map(int, v[1:5])), B=tuple(map(int, v[5:9])),
                         tA=float(v[9]), tB=float(v[10]), diff=float(v[11])))
    return rows


def instructions(tols=IR_TOLS, exe=None):
    """{(which, tol): (instructions per run, nsteps)} by callgrind, or None without
    valgrind."""
    vg = shutil.which("valgrind")
    if not vg:
        return None
    exe = exe or build()
    res = {}
    for which in ("A", "B"):
        for tol in tols:
            ir = []
            for reps in (1, 3):
                r = subprocess.run([vg, "--tool=callgrind", "--callgrind-out-file=/dev/null",
                                    str(exe), which, str(reps), repr(tol)],
                                   capture_output=True, text=True, check=True)
                line = next(x for x in r.stderr.splitlines() if "Collected" in x)
                ir.append(int(line.split()[-1]))
            nsteps = int(r.stdout.split()[0])
            res[(which, tol)] = ((ir[1] - ir[0]) / 2, nsteps)
    return res


def overhead_fit(rows):
    """(fixed seconds, seconds per step) of tB - tA against the steps."""
    ns = np.array([r["B"][0] for r in rows], float)
    d = np.array([r["tB"] - r["tA"] for r in rows])
    b, a = np.polyfit(ns, d, 1)
    return float(a), float(b)


def ir_fit(ir, tols=IR_TOLS):
    """(fixed, per step) instructions of B - A, and A's instructions per step."""
    (lo, hi) = tols
    d = {t: ir[("B", t)][0] - ir[("A", t)][0] for t in tols}
    n = {t: ir[("B", t)][1] for t in tols}
    per_step = (d[hi] - d[lo]) / (n[hi] - n[lo])
    fixed = d[lo] - per_step * n[lo]
    a_step = (ir[("A", hi)][0] - ir[("A", lo)][0]) / (n[hi] - n[lo])
    return fixed, per_step, a_step


def report(rows, ir=None):
    lines = ["# The SUNDIALS adapter alone: anchor CVODE loop (A) vs mb_sundials_run "
             "cvode_bdf (B), same f and J (C, no Python)", "",
             "| tol | steps A / B | nfev A / B | njev A / B | nlu A / B | t A [ms] | t B [ms] | "
             "B / A | max diff |", "|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        lines.append(f"| {r['tol']:.0e} | {r['A'][0]} / {r['B'][0]} | {r['A'][1]} / {r['B'][1]} "
                     f"| {r['A'][2]} / {r['B'][2]} | {r['A'][3]} / {r['B'][3]} | "
                     f"{r['tA'] * 1e3:.3f} | {r['tB'] * 1e3:.3f} | {r['tB'] / r['tA']:.3f} | "
                     f"{r['diff']:.1e} |")
    a, b = overhead_fit(rows)
    lines += ["", f"time: B - A = {a * 1e6:.1f} us per run + {b * 1e6:.3f} us per step "
              "(least squares over the tolerances; minimum of 5 rounds)"]
    if ir:
        fixed, per_step, a_step = ir_fit(ir)
        lines += ["", "instructions (callgrind, steady state): "
                  + ", ".join(f"{w} at {t:.0e}: {ir[(w, t)][0] / 1e6:.3f} M ({ir[(w, t)][1]} "
                              f"steps)" for (w, t) in sorted(ir)),
                  f"B - A = {fixed / 1e3:.1f} k per run + {per_step:.0f} per step "
                  f"({100 * per_step / a_step:.1f} % of A's {a_step:.0f} per step)"]
    return "\n".join(lines) + "\n"


def main():
    rows = timings()
    ir = instructions()
    text = report(rows, ir)
    OUT_MD.parent.mkdir(parents=True, exist_ok=True)
    OUT_MD.write_text(text)
    print(text)
    print(f"written to {OUT_MD}")


if __name__ == "__main__":
    main()
