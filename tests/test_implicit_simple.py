"""Backward Euler and the trapezoidal rule (csrc/methods/implicit_simple.c).

Checks: fixed-step empirical orders 1 and 2 on a nonlinear non-autonomous problem;
R(z) through the C hook against 1/(1-z) and (1+z/2)/(1-z/2); L-stability of backward
Euler, A- but not L-stability of the trapezoid; stability on the stiff problem
y' = -1e6 (y - cos t) at h = 0.1 where forward Euler blows up, with one Jacobian and
one LU for the whole fixed-step run; adaptive runs (embedded estimates) whose error
falls with the tolerance; recovery from Newton failures on Van der Pol (mu = 1000).
"""
import numpy as np
import pytest

import mbint
from mbint import problems as P
from mbint.stability import amplification

METHODS = [("backward_euler", 1), ("trapezoid", 2)]


def phi(t):
    return np.sin(t) + 0.5 * np.cos(2.0 * t)


def dphi(t):
    return np.cos(t) - np.sin(2.0 * t)


def f_nl(t, y):
    """y' = -(y^2 - phi^2) + phi', exact solution y = phi."""
    return -(y ** 2 - phi(t) ** 2) + dphi(t)


def jac_nl(t, y):
    return np.array([[-2.0 * y[0]]])


@pytest.mark.parametrize("method,order", METHODS)
def test_fixed_step_order(method, order):
    hs = 0.1 / 2.0 ** np.arange(4)
    errs = []
    for h in hs:
        r = mbint.solve_ivp(f_nl, (0.0, 2.0), [phi(0.0)], method=method, h=h, rtol=1e-13,
                            atol=1e-13, jac=jac_nl)
        assert r.status == 0
        assert r.nsteps == round(2.0 / h)
        errs.append(abs(r.y[0, -1] - phi(2.0)))
    slope = np.polyfit(np.log(hs), np.log(errs), 1)[0]
    assert abs(slope - order) < 0.25, (slope, errs)


def test_amplification_closed_form():
    rng = np.random.default_rng(3)
    z = rng.uniform(-20, 5, 200) + 1j * rng.uniform(-20, 20, 200)
    z = z[np.abs(z - 2.0) > 0.1]            # away from the trapezoid's pole z = 2
    z = z[np.abs(z - 1.0) > 0.1]            # and backward Euler's z = 1
    R_be = amplification("backward_euler", z)
    R_tr = amplification("trapezoid", z)
    np.testing.assert_allclose(R_be, 1.0 / (1.0 - z), rtol=1e-14)
    np.testing.assert_allclose(R_tr, (1.0 + z / 2.0) / (1.0 - z / 2.0), rtol=1e-14)


def test_stability_properties():
    # backward Euler is L-stable, the trapezoid A-stable with |R(-inf)| = 1
    assert abs(amplification("backward_euler", -1e8)) < 1e-7
    assert abs(amplification("trapezoid", -1e8)) > 0.99
    x = -np.logspace(-3, 6, 50)
    y = np.linspace(-1e3, 1e3, 41)
    z = (x[:, None] + 1j * y[None, :]).ravel()
    for m in ("backward_euler", "trapezoid"):
        assert np.all(np.abs(amplification(m, z)) <= 1.0 + 1e-15)
    # the trapezoid is exactly energy preserving on the imaginary axis
    np.testing.assert_allclose(np.abs(amplification("trapezoid", 1j * y)), 1.0, rtol=1e-14)


def stiff(t, y):
    return -1e6 * (y - np.cos(t))


def test_stiff_linear_fixed_step():
    """y' = -1e6 (y - cos t), h = 0.1: |h lambda| = 1e5."""
    blown = mbint.solve_ivp(stiff, (0.0, 2.0), [1.0], method="euler", h=0.1)
    assert blown.status != 0 or np.max(np.abs(blown.y)) > 1e10
    for m, _ in METHODS:
        r = mbint.solve_ivp(stiff, (0.0, 2.0), [1.0], method=m, h=0.1, rtol=1e-8, atol=1e-10,
                            jac=lambda t, y: np.array([[-1e6]]))
        assert r.status == 0
        # the solution stays within 1e-5 of the slow manifold y = cos t
        assert np.max(np.abs(r.y[0] - np.cos(r.t))) < 1e-5
        # linear problem, constant step: one Jacobian and one LU for the whole run
        assert r.njev == 1 and r.nlu == 1


@pytest.mark.parametrize("method,order", METHODS)
def test_adaptive_embedded(method, order):
    errs, steps = [], []
    for tol in (1e-3, 1e-5, 1e-7):
        r = mbint.solve_ivp(f_nl, (0.0, 2.0), [phi(0.0)], method=method, rtol=tol, atol=tol,
                            jac=jac_nl, dense_output=True)
        assert r.status == 0
        errs.append(abs(r.y[0, -1] - phi(2.0)))
        steps.append(r.nsteps)
        # Hermite dense output between the steps: as accurate as the steps themselves
        tm = 0.5 * (r.t[:-1] + r.t[1:])
        e_steps = np.max(np.abs(r.y[0] - phi(r.t)))
        assert np.max(np.abs(r.sol(tm)[0] - phi(tm))) < 2 * e_steps + tol
    assert errs[0] > errs[1] > errs[2]
    assert steps[0] < steps[1] < steps[2]
    # step counts grow like tol^(-1/(p+1)): 100x tighter -> about 10x (BE), 4.6x (TR)
    ratio = steps[2] / steps[1]
    expect = 100.0 ** (1.0 / (order + 1))
    assert 0.5 * expect < ratio < 2.0 * expect, (steps, expect)


@pytest.mark.parametrize("method,order", METHODS)
def test_adaptive_stiff(method, order):
    """The embedded estimates are filtered by the iteration matrix: on the stiff
    linear problem the steps grow far beyond the explicit stability limit 2e-6."""
    for tol in (1e-3, 1e-6):
        r = mbint.solve_ivp(stiff, (0.0, 2.0), [1.0], method=method, rtol=tol, atol=tol,
                            jac=lambda t, y: np.array([[-1e6]]))
        assert r.status == 0
        assert r.nsteps < 50
        assert np.max(np.abs(r.y[0] - np.cos(r.t))) < 10 * tol


@pytest.mark.parametrize("method", ["backward_euler", "trapezoid"])
def test_newton_failures_recover_vdp(method):
    """Van der Pol mu = 1000 at a loose tolerance, starting with a step far too large
    for Newton: steps are retried with h / 2 (h_fail_factor) and the run completes on
    the limit cycle."""
    r = mbint.solve_ivp(P.c_rhs("vdp1000"), (0.0, 2.0), P.VDP_Y0, method=method, rtol=1e-2,
                        atol=1e-2, jac=P.c_jac("vdp1000"), first_step=0.3)
    assert r.status == 0
    assert r.nfail > 0
    # J is kept across steps: re-evaluated only when Newton fails with an old J
    assert r.njev < r.nsteps / 3
    # y1 at t = 2 is on the slow branch near 1.763 (reference 1.76323)
    assert abs(r.y[0, -1] - 1.7632) < 0.3
