"""The embedded error estimate of lstable_block (issue 21; block_lstable.c, "The embedded
estimate"): from the block's node values, filtered as RADAU5's, instead of step doubling.

Oracles: the estimate on y' = lambda y in closed form from the paper's B and d
(mbint.stability.block_coefficients) and weights solved here from the order conditions;
the slope of the estimate against h on a smooth nonlinear ODE; closed-form solutions of
adaptive runs (y' = cos t y, Prothero-Robinson); the position constraint of the LS
manipulator on index 3.

One step of a run over exactly (t0, t0 + h) with first_step = h, atol = 1 and a tiny
rtol is accepted (the estimate is far below atol) and reports its estimate as
err_steps[0] = |err| / (atol + rtol max(|y0|, |y1|)) (one component).
"""
import numpy as np
import pytest

import mbint
from mbint.stability import block_coefficients

RTOL_TINY = 1e-13


def embedded_weights(c, order, r):
    """gamma0 = 1/r and e on the last p^ = min(r, order - 1) nodes with
    gamma0 [q = 1] + sum_i e_i c_i^q = 0 for q = 1..p^ (solved here, independently)."""
    m = max(1, min(r, order - 1))
    g0 = 1.0 / r
    cs = np.asarray(c[r - m:], float)
    V = np.array([cs ** q for q in range(1, m + 1)])
    rhs = np.zeros(m)
    rhs[0] = -g0
    e = np.zeros(r)
    e[r - m:] = np.linalg.solve(V, rhs)
    return g0, e, m


def one_step(fun, y0, t0, h, jac=None, atol=1.0, **opts):
    s = mbint.solve_ivp(fun, (t0, t0 + h), y0, method="lstable_block", rtol=RTOL_TINY,
                        atol=atol, first_step=h, jac=jac, **opts)
    assert s.status == 0, s.message
    assert len(s.h_steps) == 1 and s.h_steps[0] == pytest.approx(h, rel=1e-14)
    return s


@pytest.mark.parametrize("r, nodes", [(4, "equidistant"), (3, "chebyshev"),
                                      (4, "legendre"), (2, "equidistant"), (6, "equidistant")])
def test_weights_satisfy_the_order_conditions_and_not_the_next(r, nodes):
    co = block_coefficients("lstable_block", r=r, nodes=nodes)
    g0, e, m = embedded_weights(co["c"], co["order"], r)
    assert m < co["order"] and m <= co["stage_order"]  # p^ < p, within the stage order
    c = np.asarray(co["c"])
    # est(t^q) = h^q (g0 [q = 1] + sum e_i c_i^q): zero for q <= p^, not for p^ + 1
    for q in range(1, m + 1):
        assert g0 * (q == 1) + e @ c ** q == pytest.approx(0.0, abs=1e-12)
    assert abs(e @ c ** (m + 1)) > 1e-3


@pytest.mark.parametrize("lam, h", [(-1.0, 0.2), (-50.0, 0.1), (3.0, 0.05), (-1e6, 0.1)])
def test_estimate_on_the_linear_test_equation_in_closed_form(lam, h):
    """err = (1 - z g0)^-1 (z g0 y0 + sum e_i Z_i), Z = ((I - z B)^-1 (e + z d) - 1) y0,
    z = h lambda; on the first step with ||err|| >= 1 RADAU5's refinement
    err = (1 - z g0)^-1 (z g0 (y0 + err) + sum e_i Z_i)."""
    r = 4
    co = block_coefficients("lstable_block", r=r)
    g0, e, _ = embedded_weights(co["c"], co["order"], r)
    B, d = np.asarray(co["B"]), np.asarray(co["d"])
    z, y0 = h * lam, 1.0
    Z = (np.linalg.solve(np.eye(r) - z * B, 1.0 + z * d) - 1.0) * y0
    err = (z * g0 * y0 + e @ Z) / (1.0 - z * g0)
    atol = 1.0
    if abs(err) >= atol:  # the stiff case: err -> -y0, refined
        atol = 1e-3
        assert abs(err) / atol >= 1.0 and err == pytest.approx(-y0, rel=1e-4)
        err = (z * g0 * (y0 + err) + e @ Z) / (1.0 - z * g0)
        assert abs(err) < 1e-5  # the refined estimate is small, not -y0
    s = one_step(lambda t, y: [lam * y[0]], [y0], 0.0, h, jac=lambda t, y: [[lam]], atol=atol)
    y1 = s.y[0, -1]
    scale = atol + RTOL_TINY * max(abs(y0), abs(y1))
    assert s.err_steps[0] * scale == pytest.approx(abs(err), rel=1e-6, abs=1e-15)


def _cos_rhs(t, y):
    return [np.cos(t) * y[0]]


def _embedded_oracle(co, g0, e, t0, y0, h):
    """The stages of the RK form solved here (Z = h d f0 + h B F(Z) is linear in Z for
    F_i = cos(t0 + c_i h) (y0 + Z_i)), the estimate (1 - h g0 J)^-1 (h g0 f0 + sum e_i
    Z_i) with J = cos(t0), and the embedded solution y_hat = y1 - (h g0 f0 + sum e_i Z_i)."""
    B, d, c = (np.asarray(co[k]) for k in ("B", "d", "c"))
    f0 = np.cos(t0) * y0
    D = np.diag(np.cos(t0 + c * h))
    Z = np.linalg.solve(np.eye(len(c)) - h * B @ D, h * d * f0 + h * B @ D @ np.full(len(c), y0))
    raw = h * g0 * f0 + e @ Z
    return raw / (1.0 - h * g0 * np.cos(t0)), y0 + Z[-1] - raw


@pytest.mark.parametrize("r, nodes", [(4, "equidistant"), (3, "equidistant"),
                                      (4, "chebyshev"), (2, "equidistant")])
def test_estimate_order_and_the_local_error_it_tracks(r, nodes):
    """On y' = cos(t) y (smooth, nonlinear): the step's estimate equals the formula on
    stages solved here; |err| ~ h^(p^+1) (log-log slope p^ + 1); and err tracks the true
    local error of the embedded solution, y(t0 + h) - y_hat, within 25 % at small h."""
    co = block_coefficients("lstable_block", r=r, nodes=nodes)
    g0, e, m = embedded_weights(co["c"], co["order"], r)
    t0, y0 = 0.3, np.exp(np.sin(0.3))
    hs = 0.2 / 2.0 ** np.arange(4)
    est = []
    for h in hs:
        s = one_step(_cos_rhs, [y0], t0, h, jac=lambda t, y: [[np.cos(t)]], r=r, nodes=nodes,
                     newton_tol=1e-13)
        est.append(s.err_steps[0] * (1.0 + RTOL_TINY * max(y0, s.y[0, -1])))
        err, y_hat = _embedded_oracle(co, g0, e, t0, y0, h)
        assert est[-1] == pytest.approx(abs(err), rel=1e-6)
    slopes = np.diff(np.log(est)) / np.diff(np.log(hs))
    assert abs(slopes[-1] - (m + 1)) < 0.4, slopes
    local = abs(np.exp(np.sin(t0 + hs[-1])) - y_hat)
    assert 0.8 < est[-1] / local < 1.25, (est[-1], local)


def test_adaptive_convergence_with_rtol():
    """y' = cos(t) y, y = exp(sin t) on [0, 10]: the error falls with rtol (at least 10x
    per 100x) and stays near the tolerance (measured 2e-6 .. 1.2e-12 for 1e-4 .. 1e-10)."""
    errs, steps = [], []
    for tol in (1e-4, 1e-6, 1e-8, 1e-10):
        s = mbint.solve_ivp(_cos_rhs, (0, 10), [1.0], method="lstable_block", rtol=tol,
                            atol=tol)
        assert s.status == 0
        errs.append(abs(s.y[0, -1] - np.exp(np.sin(10.0))))
        steps.append(len(s.t) - 1)
        assert errs[-1] < 100 * tol
    assert all(b < a / 10 for a, b in zip(errs, errs[1:])), errs
    assert all(b > a for a, b in zip(steps, steps[1:])), steps


@pytest.mark.parametrize("lam", [-1e3, -1e6, -1e9])
def test_prothero_robinson_no_order_reduction_blow_up(lam):
    """y' = lambda (y - sin t) + cos t, y = sin t: stiff runs take no more steps than the
    non-stiff one (lambda = -1) and meet the tolerance: the filtered estimate stays
    bounded on the stiff component instead of forcing h ~ 1/|lambda| (measured at rtol
    1e-6: 49 steps for lambda = -1, 17 / 7 / 6 for -1e3 / -1e6 / -1e9, max errors
    8e-7 .. 2e-9; radau_iia 2e-6 .. 2e-10)."""
    def run(lm):
        s = mbint.solve_ivp(lambda t, y: [lm * (y[0] - np.sin(t)) + np.cos(t)], (0, 10),
                            [0.0], method="lstable_block", rtol=1e-6, atol=1e-9,
                            jac=lambda t, y: [[lm]])
        assert s.status == 0
        return len(s.t) - 1, np.abs(s.y[0] - np.sin(s.t)).max()
    n_ref, e_ref = run(-1.0)
    n, err = run(lam)
    assert n <= 1.5 * n_ref + 5, (n, n_ref)
    assert e_ref < 1e-7 and err < 1e-5, (err, e_ref)


def test_index3_manipulator_adaptive_stays_on_the_constraint():
    """The LS manipulator on index 3, adaptive: the position constraint at round-off as
    with the paper's fixed steps (Newton polished, irk_newton.c), the error falling with
    the tolerance against dop853 on the index-1 ODE."""
    from mbint import models
    from mbint.demo import ls
    m = models.two_link_manipulator()
    ref = mbint.simulate(m, (0, 2), method="dop853", rtol=1e-12, atol=1e-12).q[:, -1]
    errs = []
    for tol in (1e-5, 1e-8):
        res = ls.run_row("index3", h=None, T=2.0, model=m, r=4, rtol=tol, atol=tol)
        assert res["status"] == 0, res["message"]
        assert res["position"] <= 1e-13
        errs.append(np.abs(res["traj"].q[:, -1] - ref).max())
    assert errs[1] < errs[0] / 30 and errs[1] < 1e-6, errs


def test_lstable_embedded_astable_step_doubling():
    ms = {m.name: m for m in mbint.methods()}
    assert ms["lstable_block"].adaptive == "embedded"
    assert ms["astable_block"].adaptive == "step doubling"
