"""make bench: the per-call part of tests/benchmarks/bench_joint.py (issue 23): the C
engine's costs on chains of N = 100, 300, 1000 rods, timed in C.  Asserted: one ABA call
grows as N^<=1.1 and one Jacobian of the ABA by central differences as N^<=2.1 from
N = 100 to 1000 (the issue's targets; least-squares slope over the three sizes), and
the former exact Jacobian (formulation="joint" used it up to 400 joints; now
test_bench_joint_urdf_jac.py's) is cheaper than the
differences at N = 100."""
import math
import pathlib
import sys

import numpy as np
import pytest

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import bench_joint  # noqa: E402


@pytest.fixture(scope="module")
def rows(tmp_path_factory):
    exe = bench_joint.build(tmp_path_factory.mktemp("bench_joint"))
    r = bench_joint.per_call(exe, sizes=(100, 300, 1000), budget=0.5)
    for row in r:
        print("N = %d: ABA %.1f us, RNEA %.1f us, CRBA %.1f us, Jacobian by differences "
              "%.2f ms, exact %.2f ms" % (row[0], row[1] / 1e3, row[2] / 1e3, row[3] / 1e3,
                                           row[4] / 1e6, row[5] / 1e6))
    return r


def _slope(rows, col):
    n = np.log([r[0] for r in rows])
    c = np.log([r[col] for r in rows])
    return float(np.polyfit(n, c, 1)[0])


def test_aba_is_linear(rows):
    s = _slope(rows, 1)
    print(f"ABA exponent {s:.2f}")
    assert s <= 1.1


def test_jacobian_by_differences_is_quadratic(rows):
    s = _slope(rows, 4)
    print(f"Jacobian exponent {s:.2f}")
    assert s <= 2.1


def test_exact_jacobian_is_cheaper_at_100(rows):
    r100 = rows[0]
    assert r100[5] < r100[4]
    assert math.isfinite(r100[5])
