"""make bench: the sparse index-1 path of spatial models on a 3-D chain of N rods
(bench_spatial_chain.py): the whole simulate() call, dense (N <= DENSE_MAX) and sparse
(N = 10 ... 1000), CPU time and peak RSS.  Asserted: the fitted exponent of the
sparse CPU time between N = 100 and 1000 is at most 1.2 (issue 22), the two modes end
in the same state to the tolerance level, and the sparse run's memory growth at
N = 1000 stays within 100 MB (a dense path would need gigabytes).

The formulation x method matrix (bench_spatial_chain.py --matrix) on every pair with a
sparse mode (state_space with its explicit method dop853; its implicit methods keep a
dense Jacobian in v, O(N^2) by differences, and are left out): the whole call grows as
N^<=1.2 from N = 100 to 1000 (medians of 3 interleaved rounds) and its memory growth
O(N) (at most 10^1.2 times that of N = 100)."""
import pytest

import bench_spatial_chain as bench
from _report import measured_rows


@pytest.fixture(scope="module")
def rows():
    return measured_rows(bench)


def test_exponent(rows):
    assert bench.summary(rows)["exponent"] <= 1.2


def test_modes_agree(rows):
    assert bench.summary(rows)["max_diff"] <= 100 * bench.TOL


def test_memory(rows):
    big = [r for r in rows if r["mode"] == "sparse" and r["N"] == max(bench.SIZES)][0]
    assert big["rss_peak"] - big["rss_before"] <= 100.0


@pytest.fixture(scope="module")
def matrix():
    pairs = tuple(p for p in bench.MATRIX if p[0] != "state_space" or p[1] == "dop853")
    return bench.run_matrix(pairs=pairs, sizes=(100, 1000), rounds=3, verbose=False)


def test_matrix_exponents(matrix):
    for pair, rows in matrix.items():
        assert all(r.get("la") == "sparse" for r in rows.values()), (pair, rows)
        assert bench.matrix_exponent(rows) <= 1.2, (pair, rows)


def test_matrix_memory(matrix):
    for pair, rows in matrix.items():
        small, big = (rows[n]["rss_peak"] - rows[n]["rss_before"] for n in (100, 1000))
        assert big <= 10 ** 1.2 * max(small, 1.0), (pair, small, big)
