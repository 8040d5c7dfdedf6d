"""make bench: the sparse index-1 path of spatial models on a 3-D chain of N rods
(bench_spatial_chain.py): the whole simulate() call, dense (N <= DENSE_MAX) and sparse
(N = 10 ... 1000), CPU time and peak RSS.  Asserted: the fitted exponent of the
sparse CPU time between N = 100 and 1000 is at most 1.2 (issue 22), the two modes end
in the same state to the tolerance level, and the sparse run's memory growth at
N = 1000 stays within 100 MB (a dense path would need gigabytes)."""
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
