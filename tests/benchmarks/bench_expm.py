"""Cost of the matrix exponential (csrc/linalg/expm.c), the kernel of every LLM step
(issue 5): mb_expm against one LU factorization of the same size times (s + 1), s the
number of squarings, and against scipy.linalg.expm, in one run.

Matrices: the LLM's Van Loan block h [[J, f_t, f], [0, 0, 1], [0, 0, 0]] of size
n = m + 2 for a random J, scaled to two 1-norms: ||A||_1 = 1 (no squaring: what an
accurate step sees) and ||A||_1 = 100 (a stiff step, s = 5).

What is timed:
- ``mb_expm``: the C kernel itself, called from a C loop (a small timing library is
  compiled from csrc/linalg/{expm,dense}.c with setup.py's flags; no Python in the
  loop);
- ``LU (LAPACK)``: LAPACK's dgetrf on a copy of the same matrix (the time of the copy
  is measured apart and subtracted), also from C;
- ``LU (mb)``: mb_lu_factor, the path the kernels use (a C loop below n = 33,
  dgetrf above);
- ``gemm``: one n x n product by mb_gemm (BLAS dgemm), for the flop model: expm does
  `products` products, one LU and one solve with n right-hand sides (about one
  product more);
- ``_core.expm`` and ``scipy.linalg.expm``: both called from Python on the same
  NumPy array (conversion and allocation included on both sides).  Run with
  OPENBLAS_NUM_THREADS=1 (test_bench_expm.py does) so that SciPy's OpenBLAS, like
  mbint's kernel, uses one thread: on a loaded machine its worker threads otherwise
  wait for a time slice and single calls take milliseconds.

Run: ``python tests/benchmarks/bench_expm.py`` (writes out/bench_expm.md) or
``make bench``."""
from __future__ import annotations

import ctypes
import pathlib
import subprocess
import tempfile
import time

import numpy as np
import scipy.linalg

from mbint import _core

ROOT = pathlib.Path(__file__).resolve().parents[2]
OUT_MD = ROOT / "out" / "bench_expm.md"
SIZES = (4, 6, 10, 20, 50)
NORMS = (1.0, 100.0)

TIMER_C = r"""
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "dense.h"
#include "expm.h"

extern void dgetrf_(const int *m, const int *n, double *a, const int *lda, int *ipiv,
                    int *info);

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* what = 0: mb_expm_ex, 1: copy + dgetrf, 2: copy + mb_lu_factor, 3: copy only,
 *        4: mb_gemm.  Best over `rounds` of the mean over `reps` calls [s]. */
double bench_kernel(int what, long n, const double *A, long reps, int rounds, int *info3)
{
    size_t nn = (size_t)(n * n), lw = mb_expm_work_size(n);
    double *work = malloc((lw + 1) * sizeof *work), *M = malloc((nn + 1) * sizeof *M);
    double *E = malloc((nn + 1) * sizeof *E);
    int *ipiv = malloc((size_t)(n + 1) * sizeof *ipiv), nn_i = (int)n, info = 0;
    mb_expm_stats st = {0, 0, 0};
    double best = 1e300;
    for (int r = 0; r < rounds; r++) {
        double t0 = now();
        for (long k = 0; k < reps; k++) {
            switch (what) {
            case 0:
                mb_expm_ex(n, A, n, E, n, work, ipiv, &st);
                break;
            case 1:
                memcpy(M, A, nn * sizeof *M);
                dgetrf_(&nn_i, &nn_i, M, &nn_i, ipiv, &info);
                break;
            case 2:
                memcpy(M, A, nn * sizeof *M);
                mb_lu_factor(n, M, n, ipiv);
                break;
            case 3:
                memcpy(M, A, nn * sizeof *M);
                break;
            default:
                mb_gemm(n, n, n, 1.0, A, n, A, n, 0.0, E, n);
            }
            /* keep the compiler from dropping the loop body */
            __asm__ volatile("" : : "r"(M), "r"(E) : "memory");
        }
        double t = (now() - t0) / (double)reps;
        best = t < best ? t : best;
    }
    if (info3) {
        info3[0] = st.m;
        info3[1] = st.s;
        info3[2] = st.products;
    }
    free(work);
    free(M);
    free(E);
    free(ipiv);
    return best;
}
"""


def build_timer():
    """Compile the timing library (setup.py's flags) in a temporary directory and load
    it (the directory is removed; the loaded library stays mapped)."""
    with tempfile.TemporaryDirectory(prefix="mbint_bench_expm_") as tmp:
        src = pathlib.Path(tmp) / "timer.c"
        src.write_text(TIMER_C)
        lib = pathlib.Path(tmp) / "libtimer.so"
        inc = [f"-I{ROOT / 'csrc' / d}" for d in ("core", "linalg")]
        srcs = [str(src), str(ROOT / "csrc/linalg/expm.c"), str(ROOT / "csrc/linalg/dense.c"),
                str(ROOT / "csrc/core/status.c")]
        cmd = ["cc", "-std=gnu11", "-O2", "-fPIC", "-shared", *inc, *srcs, "-o", str(lib),
               "-llapack", "-lblas", "-lm"]
        subprocess.run(cmd, check=True, capture_output=True, text=True)
        dll = ctypes.CDLL(str(lib))
    f = dll.bench_kernel
    f.restype = ctypes.c_double
    f.argtypes = [ctypes.c_int, ctypes.c_long, ctypes.c_void_p, ctypes.c_long, ctypes.c_int,
                  ctypes.POINTER(ctypes.c_int)]
    return f


def llm_matrix(n, nrm, seed=0):
    """h [[J, f_t, f], [0, 0, 1], [0, 0, 0]] of size n, J (n-2 x n-2) Gaussian shifted to
    a stable spectrum, scaled to 1-norm nrm (column-major)."""
    rng = np.random.default_rng(seed + n)
    m = n - 2
    J = rng.standard_normal((m, m)) / np.sqrt(m)
    J -= (np.linalg.eigvals(J).real.max() + 0.5) * np.eye(m)
    C = np.zeros((n, n))
    C[:m, :m] = J
    C[:m, m] = rng.standard_normal(m)
    C[:m, m + 1] = rng.standard_normal(m)
    C[m, m + 1] = 1.0
    C *= nrm / np.abs(C).sum(axis=0).max()
    return np.asfortranarray(C)


def time_c(f, what, A, budget=0.05, rounds=5):
    n = A.shape[0]
    info = (ctypes.c_int * 3)()
    ptr = A.ctypes.data
    t1 = f(what, n, ptr, 1, 1, info)
    reps = max(1, int(budget / max(t1, 1e-9)))
    return f(what, n, ptr, reps, rounds, info), tuple(info)


def time_py(fun, A, budget=0.1, rounds=5):
    t0 = time.process_time()
    fun(A)
    t1 = time.process_time() - t0
    reps = max(1, int(budget / max(t1, 1e-7)))
    best = np.inf
    for _ in range(rounds):
        t0 = time.process_time()
        for _ in range(reps):
            fun(A)
        best = min(best, (time.process_time() - t0) / reps)
    return best


def run(sizes=SIZES, norms=NORMS):
    f = build_timer()
    rows = []
    for nrm in norms:
        for n in sizes:
            A = llm_matrix(n, nrm)
            t_expm, (m, s, products) = time_c(f, 0, A)
            t_copy, _ = time_c(f, 3, A)
            t_lapack = max(time_c(f, 1, A)[0] - t_copy, 1e-12)
            t_mblu = max(time_c(f, 2, A)[0] - t_copy, 1e-12)
            t_gemm, _ = time_c(f, 4, A)
            t_core = time_py(_core.expm, A)
            t_scipy = time_py(scipy.linalg.expm, A)
            err = np.abs(_core.expm(A) - scipy.linalg.expm(A)).sum(0).max() / \
                np.abs(scipy.linalg.expm(A)).sum(0).max()
            rows.append(dict(
                n=n, norm=nrm, m=m, s=s, products=products, t_expm=t_expm, t_lapack=t_lapack,
                t_mblu=t_mblu, t_gemm=t_gemm, t_core=t_core, t_scipy=t_scipy, diff=err,
                ratio_lapack=t_expm / (t_lapack * (s + 1)),
                # the same ratio if time were flops: (products + 1) products of 2n^3 and
                # one LU of 2n^3/3, over (s + 1) LUs
                floor_lapack=(3 * (products + 1) + 1) / (s + 1),
                ratio_mblu=t_expm / (t_mblu * (s + 1)),
                # flop model: products + one more for the n-rhs solve, plus the LU
                ratio_model=t_expm / ((products + 1) * t_gemm + t_mblu),
                ratio_scipy_c=t_expm / t_scipy, ratio_scipy_py=t_core / t_scipy))
    return rows


def report(rows):
    us = 1e6
    lines = [
        "# Matrix exponential (csrc/linalg/expm.c) against one LU and against SciPy", "",
        "Matrices: LLM Van Loan blocks h [[J, f_t, f], [0, 0, 1], [0, 0, 0]] of size n, "
        "scaled to ||A||_1. Times in microseconds, best of 5 rounds; C-level times from a C "
        "loop (no Python), `_core.expm` and `scipy.linalg.expm` from Python on the same "
        "array. LU (LAPACK) is Debian's reference dgetrf; LU (mb) is mb_lu_factor (a C loop "
        "for n <= 32, dgetrf above); BLAS is Debian's reference BLAS (SciPy uses its own "
        "OpenBLAS). m: Pade degree, s: squarings, prod: n x n products.", "",
        "| ||A|| | n | m | s | prod | mb_expm | LU LAPACK | LU mb | gemm | "
        "expm / (LU LAPACK (s+1)) | same in flops | expm / (LU mb (s+1)) | "
        "expm / flop model | _core.expm | scipy expm | mb_expm / scipy | _core / scipy | "
        "diff vs scipy |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
        "---:|---:|"]
    for r in rows:
        lines.append(
            f"| {r['norm']:g} | {r['n']} | {r['m']} | {r['s']} | {r['products']} | "
            f"{r['t_expm'] * us:.2f} | {r['t_lapack'] * us:.3f} | {r['t_mblu'] * us:.3f} | "
            f"{r['t_gemm'] * us:.3f} | {r['ratio_lapack']:.1f} | {r['floor_lapack']:.1f} | "
            f"{r['ratio_mblu']:.1f} | {r['ratio_model']:.2f} | {r['t_core'] * us:.1f} | "
            f"{r['t_scipy'] * us:.1f} | {r['ratio_scipy_c']:.3f} | {r['ratio_scipy_py']:.2f} | "
            f"{r['diff']:.1e} |")
    lines += [
        "", "expm / flop model: mb_expm time over (products + 1) gemm + one LU (mb), the "
        "BLAS/LAPACK work the algorithm cannot avoid (the solve with n right-hand sides "
        "counted as one product): what the implementation adds on top.",
        "", "same in flops: expm / (LU (s + 1)) if time were proportional to flops. One "
        "n x n product is 2n^3 flops, one LU 2n^3/3, so a scaling and squaring Pade "
        "method with s squarings (prod = pi_m + s products) costs 3 (prod + 1) + 1 LUs: "
        "the ratio the issue asks to keep within 2 is at least 3 once flops dominate, for "
        "any s. It is below 2 only where fixed call costs, not flops, set LAPACK's LU "
        "time (small n, several squarings).", "",
        "The C-level mb_expm uses Debian's reference BLAS; SciPy's expm calls its bundled "
        "OpenBLAS (limited to one thread here, as mbint's kernel). From n = 20 on, the "
        "product speed of the BLAS decides the comparison with SciPy."]
    return "\n".join(lines) + "\n"


def main(argv=None):
    """Run, write out/bench_expm.md and print it; ``--json PATH`` also writes the rows."""
    import argparse
    import json

    ap = argparse.ArgumentParser()
    ap.add_argument("--json", default=None)
    args = ap.parse_args(argv)
    rows = run()
    text = report(rows)
    OUT_MD.parent.mkdir(parents=True, exist_ok=True)
    OUT_MD.write_text(text)
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps(rows))
    print(text)
    print(f"written to {OUT_MD}")


if __name__ == "__main__":
    main()
