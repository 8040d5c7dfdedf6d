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

The solvers, problems and report are ``mbint.benchmarks.stiff`` (installed with the
package: ``notebooks/06_benchmarks.ipynb`` runs them without the anchor); this script adds
the anchor.

Run: ``python tests/benchmarks/bench_stiff.py`` (writes out/bench_stiff.md) or
``make bench``.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import numpy as np

from mbint.benchmarks import c_wrappers, cpu_time, median_times  # noqa: F401
from mbint.benchmarks import matched_ratio as _matched_ratio
from mbint.benchmarks import stiff as _stiff
from mbint.benchmarks.stiff import OURS, PROBLEMS, ROUND_S, ROUNDS, THEIRS  # noqa: F401
from mbint.benchmarks.stiff import report as _report

ROOT = Path(__file__).resolve().parents[2]
OUT_MD = ROOT / "out" / "bench_stiff.md"
ANCHOR_SRC = Path(__file__).resolve().parent / "anchor_stiff.c"
ANCHOR_BIN = ROOT / "out" / "anchor_stiff"


def build_anchor(path=ANCHOR_BIN, fast_ops=False):
    """Compile anchor_stiff.c with csrc/problems (the same C f and J); its path.  With
    ``fast_ops``: -DANCHOR_FAST_OPS and csrc/methods/sundials_nvec.c, SUNDIALS' vector
    operations and dense LU compiled at -O2 (Debian's libsundials is not optimized; the
    results are the same bit for bit)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    cc = os.environ.get("CC", shutil.which("cc") or "gcc")
    src = [str(ANCHOR_SRC)] + sorted(str(p) for p in (ROOT / "csrc" / "problems").glob("*.c"))
    libs = ["-lsundials_cvode", "-lsundials_nvecserial", "-lsundials_sunmatrixdense",
            "-lsundials_sunlinsoldense", "-lm"]
    inc = [f"-I{ROOT / 'csrc' / d}" for d in ("problems", "core", "methods", "")]
    if fast_ops:
        src += [str(ROOT / "csrc" / "methods" / "sundials_nvec.c")]
        inc += ["-DANCHOR_FAST_OPS"]
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


def run(rtols=(1e-3, 1e-4, 1e-5, 1e-6, 1e-7, 1e-8), quick=False):
    """mbint.benchmarks.stiff.run with the plain C CVODE program as one more contender."""
    anchor = build_anchor()
    fast = build_anchor(ANCHOR_BIN.with_name("anchor_stiff_fastops"), fast_ops=True)

    def extra(cname, rtol, atol):
        return {("C", "CVODE"): (lambda rs: _Anchor(anchor, cname, rtol, atol, rs)),
                ("C", "CVODE-O2"): (lambda rs: _Anchor(fast, cname, rtol, atol, rs))}
    return _stiff.run(rtols, quick=quick, extra_runs=extra)


def matched_ratio(rows, problem, method, against="CVODE"):
    """Median over `against`'s points of time(method) / time(against) at equal error
    (against: "CVODE", the plain C program, or "cvode_bdf", mbint's adapter)."""
    return _matched_ratio(rows, problem, method, against)


def report(rows):
    """The tables of mbint.benchmarks.stiff.report with ratios against both builds of the
    plain program and against mbint's adapter."""
    return _report(rows, references=(
        ("CVODE", "the plain C CVODE program"),
        ("CVODE-O2", "the plain C CVODE program with SUNDIALS' vector operations and dense "
                     "LU compiled at -O2 (Debian's libsundials is not optimized)"),
        ("cvode_bdf", "mbint's CVODE adapter (cvode_bdf)")))


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
