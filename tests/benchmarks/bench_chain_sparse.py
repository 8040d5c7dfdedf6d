"""Cost of the index-1 formulation on a planar chain of N pendulums, sparse mode (KLU,
csrc/mbs/index1_sparse.c) against dense mode (csrc/mbs/index1.c), issue 13.

Builds ``bench_chain_sparse.c`` against the C kernels (csrc/{core,methods,linalg,mbs,
problems}, -O2, linked like setup.py) and runs it once per (N, mode): N = 10, 30, 100,
300, 1000 sparse, N <= 300 dense.  Per row: seconds per f (distinct states, no cache
hits), per Jacobian (sparse: the linsys jac that keeps C_q, C_v; dense: the analytic
n x n jac) and per "radau_iia step" of linear algebra (Jacobian, a real and a complex
factorization of a I - J, three real and three complex solves), and the relative
difference of q'' between the modes.  The exponents p of cost ~ N^p are fitted by least
squares on log-log over N = 100 ... 1000 (sparse; the issue's target is p <= 1.2).

The integrator wires the methods to p->linsys; until then this measures the kernels
and the linear algebra a radau_iia step will call, not a whole integration.

Run ``python tests/benchmarks/bench_chain_sparse.py`` (writes out/bench_chain_sparse.md)
or ``make bench`` (test_bench_chain_sparse.py).  Timings are printed, never asserted.
"""
from __future__ import annotations

import concurrent.futures
import math
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SRC = Path(__file__).resolve().parent / "bench_chain_sparse.c"
OUT_MD = ROOT / "out" / "bench_chain_sparse.md"
KERNEL_DIRS = ["core", "methods", "linalg", "mbs", "problems"]


def _kernel_libs():
    """The kernels' link libraries: the C test harness's list (one place for them)."""
    import sys
    sys.path.insert(0, str(ROOT / "tests"))
    import test_c_harness
    return test_c_harness._libs()


SIZES_SPARSE = [10, 30, 100, 300, 1000]
SIZES_DENSE = [10, 30, 100, 300]
MIN_SECONDS = 0.3


def build(outdir: Path) -> Path:
    cc = os.environ.get("CC", shutil.which("cc") or "gcc")
    inc = [f"-I{ROOT / 'csrc' / d}" for d in KERNEL_DIRS]
    flags = ["-std=c11", "-O2", "-Wall", "-Wextra", "-Wno-unused-parameter", *inc]
    srcs = [s for d in KERNEL_DIRS for s in sorted((ROOT / "csrc" / d).glob("*.c"))]

    def one(src):
        obj = outdir / f"{src.parent.name}_{src.stem}.o"
        subprocess.run([cc, *flags, "-c", str(src), "-o", str(obj)], check=True)
        return obj

    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as ex:
        objs = list(ex.map(one, srcs))
    exe = outdir / "bench_chain_sparse"
    subprocess.run([cc, *flags, str(SRC), *map(str, objs), "-o", str(exe), *_kernel_libs()],
                   check=True)
    return exe


def run_one(exe: Path, n: int, mode: str) -> dict:
    out = subprocess.run([str(exe), str(n), mode, str(MIN_SECONDS)], capture_output=True,
                         text=True, check=True).stdout.split()
    return dict(N=int(out[0]), nq=int(out[1]), mode=out[2], f=float(out[3]),
                jac=float(out[4]), step=float(out[5]),
                err=None if out[6] == "-" else float(out[6]))


def run() -> list[dict]:
    with tempfile.TemporaryDirectory() as d:
        exe = build(Path(d))
        rows = []
        # interleaved by size: sparse, then dense, for each N
        for n in sorted(set(SIZES_SPARSE) | set(SIZES_DENSE)):
            if n in SIZES_SPARSE:
                rows.append(run_one(exe, n, "sparse"))
            if n in SIZES_DENSE:
                rows.append(run_one(exe, n, "dense"))
    return rows


def exponent(rows: list[dict], mode: str, key: str, lo: int = 100, hi: int = 1000) -> float:
    pts = [(math.log(r["N"]), math.log(r[key])) for r in rows
           if r["mode"] == mode and lo <= r["N"] <= hi]
    if len(pts) < 2:
        return float("nan")
    mx = sum(p[0] for p in pts) / len(pts)
    my = sum(p[1] for p in pts) / len(pts)
    return (sum((x - mx) * (y - my) for x, y in pts) /
            sum((x - mx) ** 2 for x, _ in pts))


def report(rows: list[dict]) -> str:
    lines = ["# Planar chain of N pendulums: index-1 formulation, sparse (KLU) vs dense", "",
             "| N | nq | mode | f [ms] | jac [ms] | step [ms] | q'' rel. diff |",
             "|---|---|---|---|---|---|---|"]
    for r in rows:
        err = "-" if r["err"] is None else f"{r['err']:.1e}"
        lines.append(f"| {r['N']} | {r['nq']} | {r['mode']} | {1e3 * r['f']:.4g} | "
                     f"{1e3 * r['jac']:.4g} | {1e3 * r['step']:.4g} | {err} |")
    lines.append("")
    for key in ("f", "jac", "step"):
        lines.append(f"- fitted exponent of {key} (sparse, N = 100 ... 1000): "
                     f"{exponent(rows, 'sparse', key):.2f};  dense (N = 30 ... 300): "
                     f"{exponent(rows, 'dense', key, 30, 300):.2f}")
    lines.append("")
    lines.append("step = Jacobian + real and complex factorization of a I - J + 3 real and "
                 "3 complex solves (the linear algebra of one radau_iia Newton setup).")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    rows = run()
    text = report(rows)
    OUT_MD.parent.mkdir(parents=True, exist_ok=True)
    OUT_MD.write_text(text)
    print(text)
