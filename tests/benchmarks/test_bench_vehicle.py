"""make bench: RN Tables 3-4 on the HMMWV (issue 10), measured in one run
(bench_vehicle.py, written to out/bench_vehicle.md).

What the paper found and the issue asks: the explicit code on the state-space ODE is
stability-bound (its cost does not follow the tolerance), rosenbrock_nystrom's cost
follows the tolerance, rosenbrock_nystrom >= 100x faster than adams at 1e-3, and no
slower than cvode_bdf at matched accuracy.  The tests assert what holds here and
print the rest (the measured figures are in the report of issue 10).  cvode_bdf on the
index-1 formulation (no projection) drifts at loose tolerances: at 1e-2 over 4 s its
saddle-point matrix turns singular at t = 3.48 s (the run fails); its successful runs
are compared at their own errors."""
import numpy as np
import pytest

import bench_vehicle as bench
from _report import measured_rows

# measured once (2 cores shared, adams' single runs vary up to 2x with the load):
# adams / rosenbrock_nystrom at 1e-3 = 130-183x for T = 1-4 s (paper 225-399x);
# rosenbrock_nystrom / cvode_bdf at cvode's error = 0.38-0.84 (the default layout,
# 98 / 80 / 18; the wishbone layout: 151-360x and 0.14-0.59)
SPEEDUP_MIN = 100.0     # the target
RN_CVODE_MAX = 1.0      # no slower than cvode_bdf at matched accuracy


@pytest.fixture(scope="module")
def rows():
    return measured_rows(bench)


def test_state_space_runs_succeeded(rows):
    assert all(r["ok"] for r in rows if r["name"] in ("adams", "rosenbrock_nystrom"))


def test_adams_is_stability_bound(rows):
    """Table 3: the explicit method's steps hardly depend on the tolerance."""
    for T in bench.SPANS:
        n = [bench.cell(rows, "adams", T, tol)["nsteps"] for tol in bench.TOLS]
        assert max(n) <= 1.5 * min(n), (T, n)


def test_rn_follows_the_tolerance(rows):
    """Table 4: rosenbrock_nystrom's steps grow as the tolerance shrinks."""
    for T in bench.SPANS:
        n = [bench.cell(rows, "rosenbrock_nystrom", T, tol)["nsteps"] for tol in bench.TOLS]
        assert n == sorted(n) and n[-1] > 3 * n[0], (T, n)


def test_rn_speedup_over_adams(rows):
    f = {T: bench.cell(rows, "adams", T, 1e-3)["time"]
         / bench.cell(rows, "rosenbrock_nystrom", T, 1e-3)["time"] for T in bench.SPANS}
    print("adams / rosenbrock_nystrom at 1e-3:", f)
    assert min(f.values()) >= SPEEDUP_MIN, f


def test_rn_vs_cvode_matched_error(rows):
    m = bench.matched(rows)
    print("(T, cvode tol, error, cvode [s], RN [s], RN / cvode):", m)
    ratios = [x[-1] for x in m if np.isfinite(x[-1])]
    assert len(ratios) >= 4 and max(ratios) <= RN_CVODE_MAX, m
