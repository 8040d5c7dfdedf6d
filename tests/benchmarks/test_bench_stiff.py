"""make bench: the stiff work-precision targets of issue 3, measured in one run.

Targets: the best mbint stiff method within 1.5x of CVODE's time at matched error;
mbint radau_iia at least 20x faster than SciPy's Radau (same C right-hand side and
Jacobian; SciPy through a ctypes wrapper)."""
import numpy as np
import pytest

import bench_stiff as bench

OURS = ("radau_iia", "bdf", "ros4", "rodas4")


@pytest.fixture(scope="module")
def rows():
    rows = bench.run()
    text = bench.report(rows)
    bench.OUT_MD.parent.mkdir(parents=True, exist_ok=True)
    bench.OUT_MD.write_text(text)
    print(text)
    return rows


@pytest.mark.parametrize("problem", list(bench.PROBLEMS))
def test_best_stiff_method_vs_cvode(rows, problem):
    ratios = {m: bench.matched_ratio(rows, problem, m) for m in OURS}
    best = min(r for r in ratios.values() if np.isfinite(r))
    print(problem, "time / CVODE at matched error:", ratios)
    assert best <= 1.5


@pytest.mark.parametrize("problem", list(bench.PROBLEMS))
def test_radau_vs_scipy_radau(rows, problem):
    ours = bench.matched_ratio(rows, problem, "radau_iia")
    theirs = bench.matched_ratio(rows, problem, "Radau")
    print(problem, f"SciPy Radau / mbint radau_iia at matched error: {theirs / ours:.0f}x")
    assert theirs / ours >= 20


def test_all_runs_succeeded(rows):
    assert all(r["ok"] for r in rows)
