"""make bench: the per-call part of tests/benchmarks/bench_joint_urdf_jac.py (issue 23):
one exact Jacobian of a fixed-base tree's forward dynamics (joint_tree_deriv.c, what
formulation="joint" uses at every n) on chains of N = 100, 300, 1000 rods, timed in C.
Asserted: it grows as N^<=2.1 (the issue's target; least-squares slope over the three
sizes), it is cheaper than central differences of the ABA at N = 100 and 1000, and it
agrees with them (max difference / max entry <= 1e-6)."""
import pathlib
import sys

import numpy as np
import pytest

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import bench_joint_urdf_jac  # noqa: E402


@pytest.fixture(scope="module")
def rows(tmp_path_factory):
    exe = bench_joint_urdf_jac.build(tmp_path_factory.mktemp("bench_jac"))
    r = bench_joint_urdf_jac.per_call(exe, sizes=(100, 300, 1000), budget=0.3)
    for n, ex, fd, ch, err in r:
        print(f"N = {n}: exact {ex / 1e6:.2f} ms, differences {fd / 1e6:.2f} ms, "
              f"Cholesky {ch / 1e6:.2f} ms, agreement {err:.1e}")
    return r


def test_exact_jacobian_is_quadratic(rows):
    s = float(np.polyfit(np.log([r[0] for r in rows]), np.log([r[1] for r in rows]), 1)[0])
    print(f"exact Jacobian exponent {s:.2f}")
    assert s <= 2.1


@pytest.mark.parametrize("n", [100, 1000])
def test_exact_cheaper_than_differences(rows, n):
    row = next(r for r in rows if r[0] == n)
    assert row[1] < row[2]
    assert row[4] <= 1e-6
