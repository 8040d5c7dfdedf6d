"""make bench: the stiff work-precision targets, measured in one run in CPU time.

Asserted, each with margin below what was measured (out/bench_stiff.md): the best mbint
stiff method takes at most the time of a plain C program calling CVODE with the same C
right-hand side and Jacobian, at matched error (measured 0.08-0.35); mbint's own CVODE
adapter at most 2x that program; mbint radau_iia at least 20x faster than SciPy's Radau
(same C functions; SciPy through a ctypes wrapper)."""
import numpy as np
import pytest

import bench_stiff as bench
from _report import measured_rows

OURS = ("radau_iia", "bdf", "ros4", "rodas4")


@pytest.fixture(scope="module")
def rows():
    return measured_rows(bench)


@pytest.mark.parametrize("problem", list(bench.PROBLEMS))
def test_best_stiff_method_vs_cvode(rows, problem):
    ratios = {m: bench.matched_ratio(rows, problem, m) for m in OURS}
    best = min(r for r in ratios.values() if np.isfinite(r))
    print(problem, "time / plain C CVODE at matched error:", ratios)
    assert best <= 1.0


@pytest.mark.parametrize("problem", list(bench.PROBLEMS))
def test_cvode_adapter_vs_plain_cvode(rows, problem):
    # the same CVODE calls through mbint's adapter: same steps, a cost of its own
    ours = [r for r in rows if r["problem"] == problem and r["method"] == "cvode_bdf"]
    plain = [r for r in rows if r["problem"] == problem and r["method"] == "CVODE"]
    ratios = [a["time"] / b["time"] for a, b in zip(ours, plain) if a["rtol"] == b["rtol"]]
    print(problem, "cvode_bdf / plain C CVODE at equal tolerance:", np.round(ratios, 2))
    assert np.median(ratios) <= 2.0


@pytest.mark.parametrize("problem", list(bench.PROBLEMS))
def test_radau_vs_scipy_radau(rows, problem):
    ours = bench.matched_ratio(rows, problem, "radau_iia")
    theirs = bench.matched_ratio(rows, problem, "Radau")
    print(problem, f"SciPy Radau / mbint radau_iia at matched error: {theirs / ours:.0f}x")
    assert theirs / ours >= 20


@pytest.mark.parametrize("problem", list(bench.PROBLEMS))
def test_optimized_library_ops_give_the_same_run(rows, problem):
    """The plain program with SUNDIALS' vector operations and dense LU at -O2 takes the
    same steps to the same error (only its time differs); the best mbint method against
    it is printed (the assertion above is against the program as Debian's library runs)."""
    a = [r for r in rows if r["problem"] == problem and r["method"] == "CVODE"]
    b = [r for r in rows if r["problem"] == problem and r["method"] == "CVODE-O2"]
    assert len(a) == len(b) > 0
    for x, y in zip(a, b):
        assert (x["rtol"], x["nfev"], x["njev"], x["nlu"], x["error"]) == \
            (y["rtol"], y["nfev"], y["njev"], y["nlu"], y["error"])
    ratios = {m: bench.matched_ratio(rows, problem, m, against="CVODE-O2") for m in OURS}
    print(problem, "time / plain C CVODE with -O2 library operations:", ratios)


def test_all_runs_succeeded(rows):
    assert all(r["ok"] for r in rows)
