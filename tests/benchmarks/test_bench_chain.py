"""Assertions on the chain-scaling benchmark (``bench_chain.py``); ``make bench`` only.

Issue 13's targets, as measured: cost per f and per radau_iia step of the sparse
index-1 formulation grows no faster than N^1.2 between N = 100 and 1000 (fitted
exponent), and N = 1000 simulated for 0.1 s with radau_iia at rtol 1e-6 in under a
minute.  Every run conserves energy to 1e-4 relative (no damping), and at N <= 100
the sparse and the dense runs take the same number of steps within 10 %.

Issue 21's targets for the whole simulate() call, set-up included (fresh process per
call, medians of interleaved rounds): CPU time grows no faster than N^1.1 over
N = 100 ... 3000 (fitted exponent), and the process's peak RSS at N = 3000 stays
within 150 MB (it was 530 MB with the dense Phi_q of the initial check).
"""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

_spec = importlib.util.spec_from_file_location(
    "bench_chain", Path(__file__).with_name("bench_chain.py"))
bench = sys.modules.setdefault("bench_chain", importlib.util.module_from_spec(_spec))
if not hasattr(bench, "run_all"):
    _spec.loader.exec_module(bench)


@pytest.fixture(scope="module")
def res():
    return bench.run_all(rounds=3)


def test_exponents(res):
    print(f"exponents: f {res['exponent_f']:.2f}, radau_iia step {res['exponent_step']:.2f}")
    assert res["exponent_f"] <= 1.2
    assert res["exponent_step"] <= 1.2


def test_thousand_bodies_in_a_minute(res):
    assert res["rows"]["1000"]["cpu_sparse"] < 60.0


def test_energy_and_steps(res):
    for n, r in res["rows"].items():
        assert r["drift_sparse"] < bench.ENERGY_TOL, n
        if r["nsteps_dense"]:
            assert r["drift_dense"] < bench.ENERGY_TOL, n
            assert abs(r["nsteps_sparse"] - r["nsteps_dense"]) <= 0.1 * r["nsteps_dense"] + 1, n


def test_whole_call_linear_in_n(res):
    w = res["whole"]
    print(f"whole call: exponent {w['exponent']:.2f}, peak RSS at N = {w['sizes'][-1]}: "
          f"{w['rows'][str(w['sizes'][-1])]['rss_peak']:.0f} MB")
    steps = {r["nsteps"] for r in w["rows"].values()}
    assert len(steps) == 1, steps  # the same run for every N: the cost of the call alone
    assert w["exponent"] <= 1.1
    assert w["rows"]["3000"]["rss_peak"] <= 150.0
