"""Assertions on the paper-model benchmark (``bench_models.py``); run by ``make bench`` only.

The issue's target is f(t, y) in C at least 50x faster than the same evaluation
in NumPy.  The measured ratios are printed and written to
``out/bench_models.md``; the tests assert versions that timing noise cannot
break:

* f: NumPy (``mbint.testing.reference``, one state per call) over C (per state of a
  batch evaluated in C) >= 30x on every paper model;
* df/dy: NumPy central differences over the C analytic Jacobian >= 20x;
* a whole run: ``mbint.simulate(dopri5)`` >= 3x faster than SciPy's RK45 calling
  the C f through Python, with the PI and with the elementary controller; with
  the elementary controller (SciPy's step-size rule) mbint's final error is at
  most twice SciPy's, so the speed-up is not bought with accuracy;
* the C and NumPy values agree on the timed states (f to 1e-12, df/dy to 1e-6
  against differences), every run reaches its end, and the report lists every
  row.
"""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

_spec = importlib.util.spec_from_file_location(
    "bench_models", Path(__file__).with_name("bench_models.py"))
bench = sys.modules.setdefault("bench_models", importlib.util.module_from_spec(_spec))
if not hasattr(bench, "run_all"):
    _spec.loader.exec_module(bench)

from mbint import models  # noqa: E402

MODELS = list(models.PAPER_MODELS)

MIN_RATIO_F = 30.0
MIN_RATIO_JAC = 20.0
MIN_SPEEDUP_RUN = 3.0
MAX_ERROR_FACTOR = 2.0


@pytest.fixture(scope="module")
def results():
    """Run the benchmark once, print the report and write out/bench_models.md."""
    res = bench.run_all()
    print("\n" + bench.write_report(res))
    print(f"written to {bench.OUT_MD}")
    return res


@pytest.mark.parametrize("model", MODELS)
def test_f_in_c_against_numpy(results, model):
    r = bench.find_kernel(results, model, "f")
    print(f"\n{model}: f in C {r.ratio:.0f}x faster than NumPy per state "
          f"({r.c_batch * 1e6:.2f} us vs {r.np_call * 1e6:.1f} us; one C call from Python "
          f"{r.ratio_call:.0f}x); issue target 50x, asserted >= {MIN_RATIO_F:g}x")
    assert r.max_rel_diff <= 1e-12
    assert r.ratio >= MIN_RATIO_F


@pytest.mark.parametrize("model", MODELS)
def test_jacobian_in_c_against_numpy(results, model):
    r = bench.find_kernel(results, model, "df/dy")
    print(f"\n{model}: df/dy in C {r.ratio:.0f}x faster than NumPy central differences "
          f"(asserted >= {MIN_RATIO_JAC:g}x)")
    assert r.max_rel_diff <= 1e-6
    assert r.ratio >= MIN_RATIO_JAC


def test_every_run_reaches_the_end(results):
    bad = [(r.model, r.solver, r.status) for rr in results.runs for r in rr.rows if r.status != 0]
    assert not bad


@pytest.mark.parametrize("model", MODELS)
def test_simulate_against_scipy(results, model):
    rk45 = bench.find_run(results, model, "scipy RK45")
    for solver in ("mbint dopri5", "mbint dopri5 [I]"):
        r = bench.find_run(results, model, solver)
        print(f"\n{model}: {solver} {r.speedup:.1f}x faster than SciPy RK45 "
              f"(error {r.error:.2e} vs {rk45.error:.2e}); asserted >= {MIN_SPEEDUP_RUN:g}x")
        assert r.speedup >= MIN_SPEEDUP_RUN
    same_rule = bench.find_run(results, model, "mbint dopri5 [I]")
    assert same_rule.error <= MAX_ERROR_FACTOR * rk45.error


def test_report_lists_every_row(results):
    text = bench.OUT_MD.read_text()
    for r in results.kernels:
        assert f"| {r.model} | {r.n} | {r.what} |" in text
    for rr in results.runs:
        for r in rr.rows:
            assert f"| {r.solver} |" in text and f"| {r.model} |" in text
    assert "## Summary" in text
