"""bench_joint_peers.py at tiny sizes (``make bench`` only): the hinge chain in mbint,
MuJoCo and Exudyn's kinematic tree.  Skipped when neither peer is importable (``pip
install mbint[bench]``); a test about one peer is skipped when that peer is missing.

Asserted (no timing): the reference agrees with the second one (another formulation);
every code's error is measured against that reference, and the fourth-order fixed-step
methods (MuJoCo's RK4, Exudyn's RK44) converge to it at their order (the error falls
about 16x a halving: the three codes integrate the same chain); the matched-error table
has a row per size and target and names a setting for every code that reached it.
"""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest

_spec = importlib.util.spec_from_file_location(
    "bench_joint_peers", Path(__file__).with_name("bench_joint_peers.py"))
bench = sys.modules.setdefault("bench_joint_peers", importlib.util.module_from_spec(_spec))
if not hasattr(bench, "run"):
    _spec.loader.exec_module(bench)

if not (bench.have("exudyn") or bench.have("mujoco")):
    pytest.skip("neither exudyn nor mujoco is installed (pip install mbint[bench])",
                allow_module_level=True)

SIZES = (3, 5)


@pytest.fixture(scope="module")
def res():
    return bench.run(SIZES, rounds=1, cap=1.0, log=lambda s: None)


def _rows(res, n, code, prefix=""):
    r = next(x for x in res["results"] if x["N"] == n)
    return [x for x in r["rows"] if x["code"] == code and x["setting"].startswith(prefix)
            and x["cpu"] is not None]


def test_reference_agrees_with_second_one(res):
    for r in res["results"]:
        assert r["ref_check"]["diff"] < 1e-9, r["ref_check"]


def test_mbint_errors_follow_the_tolerance(res):
    """mbint's own runs against the reference: dop853's error falls as the tolerance
    tightens (measured, not copied: the tip at rtol 1e-4 is off by more than at 1e-10)."""
    for n in SIZES:
        errs = [x["err"] for x in _rows(res, n, "mbint", "joint dop853")]
        assert len(errs) >= 2  # the ladder stops once below 1e-9 m
        assert errs[-1] < 1e-8 and errs[0] > errs[-1], errs


@pytest.mark.parametrize("code, prefix", [("mujoco", "RK4 "), ("exudyn", "RK44 ")])
def test_fourth_order_peer_converges_to_the_reference(res, code, prefix):
    if code not in res["peers"]:
        pytest.skip(f"{code} not installed")
    for n in SIZES:
        rows = _rows(res, n, code, prefix)
        errs = np.array([x["err"] for x in rows])
        h = np.array([float(x["setting"].split("h=")[1]) for x in rows])
        assert len(errs) >= 3, errs
        # the observed order: log(error ratio) / log(step ratio) of successive rungs
        rates = np.log(errs[:-1] / errs[1:]) / np.log(h[:-1] / h[1:])
        assert np.all(rates[:2] > 3.0), (n, errs)  # order 4: a halving gains ~16x
        assert min(errs) < 1e-8, (n, errs)


def test_table_names_each_code(res):
    t = bench.table(res["results"], res["peers"])
    lines = [ln for ln in t.splitlines() if ln.startswith("| ") and ln[2].isdigit()]
    assert len(lines) == len(SIZES) * len(bench.TARGETS)
    for target in bench.TARGETS:
        for r in res["results"]:
            assert bench.matched(r["rows"], target, "mbint") is not None
            for code in res["peers"]:
                m = bench.matched(r["rows"], target, code)
                assert m is not None and m["err"] <= target
                assert m["setting"] in t
    assert "MuJoCo / mbint" in t and "Exudyn / mbint" in t
