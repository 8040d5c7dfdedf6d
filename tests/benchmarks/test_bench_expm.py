"""make bench: the matrix-exponential part of issue 5's benchmark (tests/benchmarks/
bench_expm.py), run in a subprocess with OPENBLAS_NUM_THREADS=1 so that SciPy's
OpenBLAS runs on one thread like mbint's kernel.

The issue's target, "matrix-exponential cost per step within 2x of one LAPACK LU of
the same size x the number of squarings", is printed as measured (column
`expm / (LU LAPACK (s+1))`) next to its value if time were flops: a squaring is one
matrix product, three LUs' worth of flops, so the target is out of reach for any Pade
scaling and squaring method wherever flops dominate (see out/bench_expm.md).  What is
asserted is the honest version: mb_expm costs at most 2x the BLAS/LAPACK work the
algorithm has to do ((products + 1) dgemm + one LU, measured on the same matrix in
the same run), plus 2 microseconds of fixed cost for the tiny sizes."""
import json
import os
import pathlib
import subprocess
import sys

import pytest

HERE = pathlib.Path(__file__).resolve().parent


@pytest.fixture(scope="module")
def rows(tmp_path_factory):
    out = tmp_path_factory.mktemp("bench_expm") / "rows.json"
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1")
    r = subprocess.run([sys.executable, str(HERE / "bench_expm.py"), "--json", str(out)],
                       capture_output=True, text=True, env=env, timeout=900)
    assert r.returncode == 0, r.stderr
    print(r.stdout)
    return json.loads(out.read_text())


def test_timed_results_within_the_error_bound():
    """The timed matrices: mbint's exp(A) against the 256-bit exact reference of
    tests/test_expm.py, within its bound u (2n + 8 max(1, ||A||_1)).  SciPy's result is
    not judged (its last bits are no criterion: tests/test_expm.py); its relative
    distance from mbint's is in the table (column `diff vs scipy`)."""
    sys.path.insert(0, str(HERE.parent))
    import bench_expm
    import test_expm
    from mbint import _core
    for nrm in bench_expm.NORMS:
        for n in bench_expm.SIZES:
            A = bench_expm.llm_matrix(n, nrm)
            err = test_expm.reldiff(_core.expm(A), test_expm.exp_reference(A))
            assert err <= test_expm.bound(A), (n, nrm, err, test_expm.bound(A))


def test_expm_within_2x_of_its_blas_lapack_work(rows):
    for r in rows:
        work = (r["products"] + 1) * r["t_gemm"] + r["t_mblu"]
        print(f"n = {r['n']:2d}, ||A|| = {r['norm']:g}: m = {r['m']}, s = {r['s']}, "
              f"mb_expm {r['t_expm'] * 1e6:.2f} us = {r['t_expm'] / work:.2f} x "
              f"({r['products']} + 1) gemm + LU; issue ratio expm / (LU LAPACK (s+1)) = "
              f"{r['ratio_lapack']:.1f} (in flops: {r['floor_lapack']:.1f})")
        assert r["t_expm"] <= 2.0 * work + 2e-6


def test_faster_than_scipy_for_small_matrices(rows):
    """From Python, both sides converting and allocating: mbint wins where call
    overheads dominate (n <= 10); from n = 20 the BLAS decides (reference BLAS here,
    OpenBLAS in SciPy), see the table."""
    for r in rows:
        if r["n"] <= 10:
            assert r["ratio_scipy_py"] < 1.0, r
