"""Assertions on the 3-D rope against Exudyn and MuJoCo (``bench_3d_peers.py``); ``make
bench`` only.  Skipped when neither peer is importable (``pip install mbint[bench]``);
a test about one peer is skipped when that peer is missing.

Only what the measurements support (out/bench_3d_peers.md, 2026-11-27):

* the reference is a reference: at N = 10 mbint's dop853 (rtol 1e-11) and radau_iia
  (rtol 1e-10) agree on the tip to 1e-8 m;
* the three codes describe the same physics: MuJoCo's RK4 tip error against mbint's
  reference falls as the step halves and ends below 1e-8 m, Exudyn's trapezoidal rule
  falls as the step quarters and ends below 1e-4 m;
* at N = 10 and matched error 1e-5 m, mbint's cheapest setting (dop853, 0.14 s) is ahead
  of Exudyn's cheapest (trapezoidal h = T/1600, 0.29-0.34 s): 2.2x in two full runs.
  Nothing else is asserted about speed, because nothing else favours mbint: at N = 10 and
  1e-3 m Exudyn is even to 2x ahead (Exudyn / mbint 0.92 and 0.49), at N = 30 Exudyn is
  4-25x ahead (mbint's dense spatial index-1 f grows as N^3), and MuJoCo (RK4 in 3 N
  joint coordinates, no constraints) is ahead of both at N = 10 and 30 (9-200x against
  mbint).
"""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

_spec = importlib.util.spec_from_file_location(
    "bench_3d_peers", Path(__file__).with_name("bench_3d_peers.py"))
bench = sys.modules.setdefault("bench_3d_peers", importlib.util.module_from_spec(_spec))
if not hasattr(bench, "run_all"):
    _spec.loader.exec_module(bench)

if not (bench.have("exudyn") or bench.have("mujoco")):
    pytest.skip("neither exudyn nor mujoco is installed (pip install mbint[bench])",
                allow_module_level=True)


@pytest.fixture(scope="module")
def res():
    return bench.run()


def test_reference_agrees_with_itself(res):
    chk = res["refs"]["10"]["check"]
    assert "radau_iia" in chk["against"]
    assert chk["diff"] < 1e-8


def _mbint_ref_sizes(res):
    return [n for n in res["sizes"] if n <= bench.MBINT_MAX_N]


def test_mujoco_same_physics(res):
    if "mujoco" not in res["peers"]:
        pytest.skip("mujoco not installed")
    for n in _mbint_ref_sizes(res):
        errs = [e for _, e in res["refs"][str(n)]["mujoco_convergence"]]
        assert all(b < a for a, b in zip(errs, errs[1:])), (n, errs)
        assert errs[-1] < 1e-8, (n, errs)


def test_exudyn_same_physics(res):
    if "exudyn" not in res["peers"]:
        pytest.skip("exudyn not installed")
    for n in _mbint_ref_sizes(res):
        errs = [e for _, e in res["refs"][str(n)]["exudyn_convergence"]]
        assert errs[1] < errs[0] / 4, (n, errs)
        assert errs[-1] < 1e-4, (n, errs)


def test_mbint_ahead_of_exudyn_at_1e5_n10(res):
    if "exudyn" not in res["peers"]:
        pytest.skip("exudyn not installed")
    for e in res["matched"]:
        if e["mbint"] and e["exudyn"]:
            print(f"N={e['N']}, {e['target']:.0e} m: Exudyn / mbint {e['exudyn_over_mbint']:.2f}")
    (e,) = [e for e in res["matched"] if e["N"] == 10 and e["target"] == 1e-5]
    assert e["mbint"] and e["exudyn"], e
    assert e["exudyn_over_mbint"] > 1.0, e
