"""make bench: the anchor of issue 13 (bench_anchor.py) -- a plain C program calling
CVODE on the RN stiff double pendulum with a hand-written f and Jacobian -- against
mbint and SciPy at matched error over the whole trajectory.

Issue targets (at error <= 2e-5): mbint's best <= 1.0x the anchor, SciPy's best >=
30x mbint's best; one f <= 1.2x the hand-written one, its Jacobian <= 1.5x.  The
tests assert what holds today (measured floors, with margin: mbint's best <= 1.5x,
over all formulations (index1, the program's, and joint: 4 joint states, no saddle
solve, its error on the body coordinates mapped back),
SciPy's best >= 3x, f and J in C <= 4x, through the batch kernels f <= 8x, J <= 15x)
and print the rest;
out/bench_anchor.md has the tables.

The cvode_bdf accuracy question of the issue ("17x larger error at tol 1e-6 with
the same step counts"): not a defect.  mbint's cvode_bdf steps with CV_ONE_STEP and
a stop time at tf, and CVODE's initial-step estimate scales with the distance to the
first requested output time: 1.45e-12 s towards tf = 2 s (mbint, and the anchor in
CV_ONE_STEP mode) against 2.12e-13 s towards the first of 201 CV_NORMAL output times
(0.01 s).  The two runs then take different step sequences (390 and 384 steps at
tol 1e-6), and at a single tolerance the global error of either scatters by an
order of magnitude (the anchor's own at tol 0.5e-6 ... 2e-6: 1.5e-5 ... 4.4e-4):
1e-6 happens to be a lucky tolerance for CV_NORMAL (1.5e-5) and an unlucky one for
CV_ONE_STEP (2.5e-4).  test_cvode_bdf_is_the_anchor_in_one_step_mode shows mbint's
cvode_bdf reproduces the anchor driven the same way, step for step."""
import numpy as np
import pytest

import bench_anchor as bench
from _report import write_report
from mbint import models


@pytest.fixture(scope="module")
def rows():
    rows = bench.run()
    costs = bench.evaluation_costs()
    write_report(bench, bench.report(rows, costs))
    rows.append(dict(name="costs", **costs))
    return rows


def test_all_runs_succeeded(rows):
    assert all(r["ok"] for r in rows if r["name"] != "costs")


def test_cvode_bdf_is_the_anchor_in_one_step_mode(rows):
    """Same steps, evaluations and error as the anchor in CV_ONE_STEP mode at every
    tolerance: the adapter adds cost, not error."""
    m = models.stiff_double_pendulum()
    for tol in (1e-4, 1e-6, 1e-8):
        a = next(r for r in rows if r["name"] == "C CVODE (CV_ONE_STEP + GetDky)"
                 and abs(r["tol"] - tol) < 1e-3 * tol)
        b = next(r for r in rows if r["name"] == "mbint cvode_bdf"
                 and abs(r["tol"] - tol) < 1e-3 * tol)
        assert (a["nsteps"], a["nfev"], a["njev"]) == (b["nsteps"], b["nfev"], b["njev"])
        assert abs(a["error"] - b["error"]) <= 0.01 * a["error"]
    # and CV_NORMAL towards tf alone (two output times) starts with the same step
    _, one, _ = bench.anchor_solve(1e-6, mode=1, nout=2)
    _, normal_tf, _ = bench.anchor_solve(1e-6, mode=0, nout=2)
    _, normal_201, _ = bench.anchor_solve(1e-6, mode=0)
    print("initial steps: ONE_STEP", one["h0"], "NORMAL to tf", normal_tf["h0"],
          "NORMAL at 201 points", normal_201["h0"])
    assert one["h0"] == normal_tf["h0"] != normal_201["h0"]
    assert one["nsteps"] == normal_tf["nsteps"]


def test_anchor_with_optimized_library_ops_is_the_same_run(rows):
    """The anchor built with SUNDIALS' vector operations and dense LU compiled at -O2
    (ANCHOR_FAST_OPS) takes the same steps to the same error at every tolerance: only
    its time may differ (Debian's libsundials is built without optimization)."""
    for a in (r for r in rows if r["name"] == bench.ANCHOR):
        b = next(r for r in rows if r["name"] == bench.ANCHOR_O2 and r["tol"] == a["tol"])
        assert (a["nsteps"], a["nfev"], a["njev"], a["nlu"]) == \
            (b["nsteps"], b["nfev"], b["njev"], b["nlu"])
        assert a["error"] == b["error"]


def test_best_vs_anchor(rows):
    r = [r for r in rows if r["name"] != "costs"]
    for e in bench.LEVELS:
        an = bench.time_at(r, bench.ANCHOR, e)
        t1, n1 = bench.winner(r, bench.MBINT_INDEX1, e)
        tb, nb = bench.winner(r, bench.MBINT, e)
        a2 = bench.time_at(r, bench.ANCHOR_O2, e)
        print(f"at {e:.0e}: mbint's best on index1 / anchor = {t1 / an:.2f} ({n1}), over all "
              f"formulations {tb / an:.2f} ({nb}) (issue 21 target <= 0.5); against the "
              f"anchor with the library's operations at -O2: {t1 / a2:.2f}, {tb / a2:.2f}")
    an = bench.time_at(r, bench.ANCHOR, 2e-5)
    ratio = bench.best_of(r, bench.MBINT_INDEX1, 2e-5) / an
    # measured 0.85-0.99 with the Schur path of index1.c (1.12-1.76 before; README)
    assert ratio <= 1.5
    # over all formulations: 0.50 (radau_iia on "joint", 4 states, no saddle solve)
    assert bench.best_of(r, bench.MBINT, 2e-5) / an <= 1.0


def test_joint_runs_converge_in_body_coordinates(rows):
    """The joint contenders integrate 4 joint states; their error is measured on the 6
    body coordinates mapped back by forward kinematics and falls with the tolerance to
    the level of the index-1 runs."""
    for name in (k for k in bench.MBINT if k.endswith("(joint)")):
        errs = {r["tol"]: r["error"] for r in rows if r["name"] == name}
        tight = min(errs)
        assert errs[tight] <= 1e-6, (name, errs[tight])
        assert errs[tight] <= 1e-2 * errs[max(errs)], name


def test_scipy_vs_mbint(rows):
    r = [r for r in rows if r["name"] != "costs"]
    f = bench.best_of(r, bench.SCIPY, 2e-5) / bench.best_of(r, bench.MBINT, 2e-5)
    fn = bench.best_of(r, bench.SCIPY_NUMPY, 2e-5) / bench.best_of(r, bench.MBINT, 2e-5)
    print(f"SciPy's best / mbint's best at 2e-5: {f:.1f} on mbint's C kernels, {fn:.1f} on a "
          "NumPy model (issue target >= 30)")
    assert f >= 3.0   # measured 6.6-7.7 (LSODA); the issue's 30x is not reached
    assert fn >= f    # a NumPy f is slower than mbint's C f called from Python


def test_numpy_model_is_the_same_model():
    import numpy_pendulum as npp
    m = bench.models.stiff_double_pendulum()
    rng = bench.np.random.default_rng(3)
    for _ in range(5):
        y = bench.np.concatenate([m.q0, m.qd0]) + 0.05 * rng.standard_normal(12)
        f, J = m.rhs(0.0, y), m.jacobian(0.0, y)
        assert bench.np.abs(npp.rhs(0.0, y) - f).max() <= 1e-12 * bench.np.abs(f).max()
        assert bench.np.abs(npp.jac(0.0, y) - J).max() <= 1e-12 * bench.np.abs(J).max()


def test_evaluation_cost(rows):
    c = next(r for r in rows if r["name"] == "costs")
    print(f"in C: f: mbint / hand-written = {c['cf'] / c['af']:.2f} (target <= 1.2), "
          f"J: {c['cj'] / c['aj']:.2f} (target <= 1.5); through the batch kernels: "
          f"f {c['mf'] / c['af']:.2f}, J {c['mj'] / c['aj']:.2f}")
    # in C, medians of interleaved rounds: 1.5-2.2 (f) and 1.8-1.9 (J) since the fused
    # kernels (before them 3.9 and 5.0); the issue's 1.2 and 1.5 are not reached.
    # The batch path adds NumPy's conversions and transposed copies: 2.7-3.1, 4.5-4.8.
    assert c["cf"] / c["af"] <= 4 and c["cj"] / c["aj"] <= 4
    assert c["mf"] / c["af"] <= 8 and c["mj"] / c["aj"] <= 15


def test_exact_joint_jacobian_costs_no_more_than_differences(rows):
    """One exact Jacobian of a planar tree on formulation="joint" (joint_planar.c,
    O(n^2)) against the forward differences it replaced (2 n + 1 calls of f): measured
    0.9-1.1x at n = 2, 0.5-0.9x from n = 6 to 300; asserted with margin."""
    jc = next(r for r in rows if r["name"] == "costs")["joint"]
    for n, c in jc.items():
        print(f"n = {n}: f {c['rhs'] * 1e6:.2f} us, J exact {c['jac'] * 1e6:.2f} us, "
              f"differences {c['jac_fd'] * 1e6:.2f} us, ratio {c['jac'] / c['jac_fd']:.2f}")
    assert jc[2]["jac"] <= 1.6 * jc[2]["jac_fd"]
    assert all(c["jac"] <= 1.0 * c["jac_fd"] for n, c in jc.items() if n >= 20)
