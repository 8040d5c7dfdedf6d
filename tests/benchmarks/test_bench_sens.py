"""make bench: the cost of forward sensitivities (issue 26; tests/benchmarks/bench_sens.py),
run in a subprocess.

The issue's target, CPU(run with np sensitivities) <= (1 + 0.5 np) CPU(plain run), is
printed as measured and not asserted: with a difference quotient the sensitivity
right-hand side costs 2 f a parameter (centred) in every Newton iteration of the
simultaneous corrector, so a run whose cost is its f calls (a Python right-hand side)
costs about (1 + 2 np) x the plain run's f, times the ratio of the steps (the
sensitivities are in the error test); with analytic J and df/dp it costs one f, one jac
and one dfdp call a right-hand side (see out/bench_sens.md).  What is asserted is that
this call count explains the time: the wrapper's own work (C) adds little."""
import json
import os
import pathlib
import subprocess
import sys

import pytest

HERE = pathlib.Path(__file__).resolve().parent


@pytest.fixture(scope="module")
def rows(tmp_path_factory):
    out = tmp_path_factory.mktemp("bench_sens") / "rows.json"
    # this checkout's mbint, also when another one is installed in the environment
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [str(HERE.parents[1]), *filter(None, [os.environ.get("PYTHONPATH")])]))
    r = subprocess.run([sys.executable, str(HERE / "bench_sens.py"), "--json", str(out)],
                       capture_output=True, text=True, timeout=1800, env=env)
    assert r.returncode == 0, r.stderr
    print(r.stdout)
    return json.loads(out.read_text())


def test_difference_quotient_costs_two_f_a_parameter(rows):
    """a centred DQ: 1 + 2 np f per augmented right-hand side (an initial-value
    parameter too: its s_k is not 0), plus the Jacobian's B_k differences"""
    for r in rows:
        if not r["dfdp"]:
            assert r["nfev_base"] <= (1 + 2 * r["np"]) * r["nfev_aug"], r
            assert r["nfev_base"] >= (1 + 2 * r["np"]) * r["nfev_aug"] * 0.9, r


def test_time_follows_the_calls(rows):
    """the CPU ratio within 1.5x of the ratio of the Python calls' cost (f, jac; dfdp once
    a right-hand side with the analytic rows), each call's cost measured in the run"""
    for r in rows:
        cf, cj, cd = r["cost_f"], r["cost_jac"], r["cost_dfdp"]
        plain = r["nfev_plain"] * cf + r["njev_plain"] * cj
        sens = r["nfev_base"] * cf + r["njev_base"] * cj + (r["nfev_aug"] * cd if r["dfdp"] else 0)
        print(f"{r['method']} np = {r['np']} ({'dfdp' if r['dfdp'] else 'DQ'}): CPU ratio "
              f"{r['ratio']:.2f}, calls' cost ratio {sens / plain:.2f}, target "
              f"{r['target']:.1f}")
        assert r["ratio"] <= 1.5 * sens / plain, r
