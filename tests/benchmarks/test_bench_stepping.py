"""make bench: the overhead of mbint.Simulator per call over the C step
(bench_stepping.py; the numbers in out/bench_stepping.md)."""
import pytest

import bench_stepping as bench
from _report import measured_rows


@pytest.fixture(scope="module")
def rows():
    return measured_rows(bench)


def test_overhead_is_reported(rows):
    for r in rows:
        assert r["A"] > 0 and r["B"] > 0
        # a loose bound against regressions (not the 5 us: see the report)
        assert r["overhead"] < 100e-6, r
