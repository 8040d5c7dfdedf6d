"""make bench: the LLM targets of issue 5, measured in one run of bench_llm.py (in a
subprocess with OPENBLAS_NUM_THREADS=1, so that SciPy's OpenBLAS runs on one thread
like mbint's kernels; the table goes to out/bench_llm.md and is printed).

What is asserted, each a measured fact that can fail:

- the paper's claim (section 2, Fig 2): the fixed-step LLM at h = 0.02 on the
  stiff-spring double pendulum takes at least 40% less time than dopri5 (ode45)
  run to the same final-time error, and to the same energy error;
- the paper's Fig 2 ranking against ode15s: at the LLM's energy error ``bdf`` takes
  longer than the LLM (4-8x in our runs).  Against ode23s the paper's ranking is
  printed, not asserted: ``ros2`` at the LLM's energy error took 1-3x the LLM's
  time in our runs, a margin within the timing noise of a shared machine; at the
  LLM's final-time error ``ros2`` (rtol 1e-3) is about as fast as the LLM.
  (``radau_iia``, which the paper did not run, is faster than the LLM there: at
  rtol 1e-3 it damps the 1.5e3 rad/s vibration, which carries little energy and
  whose amplitude is within the target error.)
- the bouncing balls (section 3, Fig 5): every LLM run conserves the energy to
  rounding (relative error below 1e-12) and no other contender's run comes within
  10x of the LLM's worst energy error;
- the matrix exponential on the LLM's own block matrices costs at most 2x the
  BLAS/LAPACK work of its algorithm ((products + 1) gemm + one LU) plus 2 us.  The
  issue's wording, "within 2x of one LAPACK LU of the same size x the number of
  squarings", is printed as measured: it cannot hold where flops decide (a
  squaring is one matrix product, three LUs' worth of flops; see
  test_bench_expm.py) and it does not (3-6x here);
- every run succeeded.
"""
import json
import math
import os
import pathlib
import subprocess
import sys

import numpy as np
import pytest

HERE = pathlib.Path(__file__).resolve().parent
PEND = "double_pendulum_stiff_spring"
BALLS = "bouncing_balls"

sys.path.insert(0, str(HERE))
import bench_llm as bench  # noqa: E402


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    out = tmp_path_factory.mktemp("bench_llm") / "rows.json"
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1")
    r = subprocess.run([sys.executable, str(HERE / "bench_llm.py"), "--json", str(out)],
                       capture_output=True, text=True, env=env, timeout=1800)
    assert r.returncode == 0, r.stderr
    print(r.stdout)
    return json.loads(out.read_text())


@pytest.fixture(scope="module")
def rows(data):
    return data["rows"]


def _paper_run(rows):
    r = bench.find(rows, PEND, "llm", 0.02)
    assert r is not None and r["ok"]
    return r


@pytest.mark.parametrize("metric", ["error", "energy"])
def test_llm_40_percent_faster_than_dopri5_at_the_papers_point(rows, metric):
    r = _paper_run(rows)
    ratio = bench.ratio_to_dopri5(rows, PEND, "llm", r[metric], metric)
    d5 = bench.at_error(rows, PEND, "dopri5", r[metric], metric)
    assert d5 is not None, "dopri5 does not reach the LLM's error within its sweep"
    print(f"llm h = 0.02: {metric} {r[metric]:.2e} in {r['time'] * 1e3:.2f} ms; dopri5 at the "
          f"same {metric}: {d5['time'] * 1e3:.2f} ms; ratio {ratio:.2f} "
          f"(the paper: about 0.6)")
    assert d5 is not None      # dopri5 reaches the LLM's error within its sweep
    assert ratio <= 0.6


def test_llm_faster_than_bdf_at_its_energy_error(rows):
    r = _paper_run(rows)
    ratios = {c: float(bench.ratio_to_dopri5(rows, PEND, c, r["energy"], "energy"))
              for c in bench.CONTENDERS}
    print("time / dopri5 at the energy error of llm h = 0.02:",
          {c: round(v, 3) for c, v in ratios.items()})
    print(f"ros2 / llm at that energy error: {ratios['ros2'] / ratios['llm']:.2f} "
          f"(the paper: ode23s slower than the LLM; not asserted)")
    assert ratios["llm"] < ratios["bdf"], ratios


def test_bouncing_balls_energy_exact_with_llm_only(rows):
    llm = [r for r in rows if r["problem"] == BALLS and r["contender"].startswith("llm")]
    others = [r for r in rows if r["problem"] == BALLS and not r["contender"].startswith("llm")]
    assert llm and others
    worst = max(r["energy"] for r in llm)
    best_other = min(others, key=lambda r: r["energy"])
    print(f"bouncing balls: llm energy error <= {worst:.2e} J (E0 = {llm[0]['E0']:.2f} J); "
          f"best other run {best_other['contender']} at {best_other['setting']:g}: "
          f"{best_other['energy']:.2e} J")
    assert worst <= 1e-12 * abs(llm[0]["E0"])
    assert best_other["energy"] > 10 * worst


def test_expm_within_2x_of_its_blas_lapack_work(data):
    shares = data["shares"]
    assert shares
    for s in shares:
        work = (s["products"] + 1) * s["t_gemm"] + s["t_mblu"]
        print(f"{s['problem']}, {s['variant']} {s['setting']:g}: N = {s['n']}, Pade {s['m']}, "
              f"s = {s['s']:.1f}; expm {s['t_expm'] * 1e6:.1f} us of a {s['t_step'] * 1e6:.1f} "
              f"us step (share {100 * s['share']:.0f}% with the estimate's); "
              f"issue ratio expm / (LU x (s+1)) = {s['ratio_issue']:.1f} (target 2: "
              f"{'met' if s['ratio_issue'] <= 2 else 'NOT met'}); expm / flop model = "
              f"{s['ratio_model']:.2f}")
        assert s["t_expm"] <= 2.0 * work + 2e-6
        assert math.isfinite(s["share"]) and 0 < s["share"] < 1.5


def test_all_runs_succeeded(rows):
    """Every run reaches the end.

    Found by this benchmark: with contact restarts, dopri5 at rtol 1e-9, atol 1e-11,
    max_step 0.005 on bouncing_balls stops just before the first ball-ball contact,
    t = 0.527436858749494, "Required step size is less than spacing between numbers
    (h = 6.01e-15)".  In csrc/core/driver.c a step containing a switch is retried to
    end just before it, h_try = d - 16 ulp(t) (d: distance to the switch), unless
    d <= 64 ulp(t), when it crosses the switch instead (phase 2); but the floor
    min_h = 10 eps max(|t|, |tf|) is set by tf.  With t = 0.53 and tf = 3, a switch
    at d = 7.9e-15 (just above 64 ulp(t) = 7.5e-15) gives h_try = 6.0e-15 < min_h =
    6.7e-15.  (bdf at rtol 1e-10 meets the same window.)  A driver bug, not the LLM's:
    the phase-2 test should also catch d - 16 ulp < min_h."""
    bad = [(r["problem"], r["contender"], r["setting"], r.get("t_end"), r.get("message"))
           for r in rows if not r["ok"]]
    assert not bad
    assert all(np.isfinite(r["error"]) and np.isfinite(r["energy"]) for r in rows)
