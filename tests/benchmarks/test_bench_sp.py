"""make bench: the singular-perturbation targets of issue 12, measured in one run of
bench_sp.py (in a subprocess with OPENBLAS_NUM_THREADS=1; the table goes to
out/bench_sp.md and is printed).

What is asserted, each a measured fact that can fail:

- Fig 7: at h = 0.005 ``rk4`` fails (h |lambda_f| = 3.5 > 2.83) and
  ``singular_perturbation`` runs to the end with an energy variation (eq 68) below
  1e-4 J;
- the paper's timing claim (the scheme at h = 0.005 takes about 0.6 of ode45's time)
  is NOT reproduced: at the energy variation of the scheme's h = 0.005 run, ``dopri5``
  (whose step is limited by stability, so that its cost hardly changes between rtol
  1e-2 and 1e-5) takes 0.8x the scheme's time in our runs (the scheme's step, with a
  Jacobian and two exponentials, costs about 6 dopri5 steps, and dopri5 needs about
  3 times as many).  Asserted: the two are within a factor 2 of each other;
- the scheme's advantage at steps no explicit method can take: at the errors of its
  h = 0.05 run it takes at most half of dopri5's time (0.2 in our runs), at those of
  h = 0.02 at most 0.8 (0.5);
- against ``llm`` at the scheme's energy variation (h = 0.005): ``llm`` takes longer
  (about 5x).

Printed, not asserted: ``radau_iia`` (1.1-1.5x the scheme at h = 0.005),
``cvode_bdf`` (its cheapest run is already more accurate: an upper bound, about 2x),
the adaptive scheme (its estimate controls the particle's local error, which neither
the energy nor the slow variables see: 2-4x the fixed-step runs), and ``rk4`` at a
stable step (h <= 0.003), the cheapest at every target (0.4x the scheme at h =
0.005): the particle carries almost no energy, and the scheme's slow-variable error
is its first-order coupling error.
"""
import json
import math
import os
import pathlib
import subprocess
import sys

import pytest

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import bench_sp as bench  # noqa: E402


@pytest.fixture(scope="module")
def rows(tmp_path_factory):
    out = tmp_path_factory.mktemp("bench_sp") / "rows.json"
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1")
    r = subprocess.run([sys.executable, str(HERE / "bench_sp.py"), "--json", str(out)],
                       capture_output=True, text=True, env=env, timeout=3600)
    assert r.returncode == 0, r.stderr
    print(r.stdout)
    return json.loads(out.read_text())["rows"]


def _run(rows, contender, setting):
    return next(r for r in rows if r["contender"] == contender
                and math.isclose(r["setting"], setting))


def test_fig7_rk4_fails_singular_perturbation_stable(rows):
    assert not _run(rows, "rk4", 0.005)["ok"]
    sp = _run(rows, "sp", 0.005)
    assert sp["ok"] and sp["energy"] < 1e-4


def test_papers_run_about_even_with_dopri5(rows):
    sp = _run(rows, "sp", 0.005)
    for metric in ("energy", "slow"):
        d5 = bench.at_error(rows, bench.PROBLEM, "dopri5", sp[metric], metric)
        assert d5 is not None
        r = sp["time"] / d5["time"]
        print(f"sp h = 0.005: {metric} {sp[metric]:.2e} in {sp['time'] * 1e3:.1f} ms; dopri5 at "
              f"that error {d5['time'] * 1e3:.1f} ms: sp / dopri5 = {r:.2f} (the paper: about 0.6)")
        assert 0.5 < r < 2.0


@pytest.mark.parametrize("h,bound", [(0.05, 0.5), (0.02, 0.8)])
@pytest.mark.parametrize("metric", ["energy", "slow"])
def test_larger_steps_faster_than_dopri5(rows, metric, h, bound):
    sp = _run(rows, "sp", h)
    rt, a, b = bench.ratio(rows, "sp", sp[metric], metric, "dopri5")
    print(f"sp h = {h} at its {metric} error {sp[metric]:.2e}: time / dopri5 = {rt:.2f}")
    assert b is not None and rt <= bound


def test_faster_than_llm_at_the_same_energy_error(rows):
    sp = _run(rows, "sp", 0.005)
    a = bench.at_error(rows, bench.PROBLEM, "llm", sp["energy"], "energy")
    assert a is not None and a["time"] > sp["time"]
