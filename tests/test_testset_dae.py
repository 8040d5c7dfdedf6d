"""The transistor amplifier of the IVP test set (tests/testset_dae.py: index-1 DAE of 8
equations, singular non-diagonal mass matrix) against its published reference.

Checks of the transcription against the mathematics: f's Jacobian against central
differences, the test set's y'(0) consistent with y(0) (M y'(0) = f(0, y(0)) to its
printed digits), radau_iia reaching the reference.  Then SUNDIALS IDA without a
Jacobian, the reported case: before the fix it took 131,129 residual evaluations at
rtol = atol = 1e-6, three quarters of them in IDA's own difference quotients, which IDA
re-evaluated (n residuals each) at every linear set-up, i.e. after every rejected step
(IDA's error test rejects about half of its steps on this problem, with or without a
Jacobian, in the adapter as in a plain C program).  The adapter now keeps df/dy by
differences across set-ups as CVODE keeps its J (sundials_ida.c).

The bound on residual evaluations: about 10,000 step attempts at 1e-6 (half rejected:
IDA's behaviour here, not the adapter's), a Newton iteration or two each, and a
difference df/dy (8 evaluations) after each Newton failure or 50 steps: 60,000, under
half of the 131,129 before.  Accuracy: the tolerance's digits up to the factor 10 a
global error gathers over 20 periods of the forcing, |y - ref| <= 10 rtol max |ref|.
"""
import numpy as np
import pytest

pytest.importorskip("mbint._core")

import mbint  # noqa: E402
import testset_dae as ts  # noqa: E402


def test_transamp_jacobian_against_central_differences():
    rng = np.random.default_rng(1)
    for _ in range(5):
        y = ts.TRANSAMP_Y0 + 0.05 * rng.standard_normal(8)
        J = ts.transamp_jac(0.013, y)
        Jn = np.empty((8, 8))
        for j in range(8):
            e = np.zeros(8)
            e[j] = 1e-6
            Jn[:, j] = (ts.transamp_fun(0.013, y + e) - ts.transamp_fun(0.013, y - e)) / 2e-6
        np.testing.assert_allclose(J, Jn, rtol=1e-6, atol=1e-12)


def test_transamp_initial_values_are_consistent():
    M = ts.transamp_mass()
    assert np.linalg.matrix_rank(M) == 5  # index 1: three algebraic combinations
    r = M @ ts.TRANSAMP_YP0 - ts.transamp_fun(0.0, ts.TRANSAMP_Y0)
    # y'(0) printed to 8-9 digits, times capacitances of 1e-6
    assert np.abs(r).max() <= 1e-12


def test_transamp_radau_iia_reaches_the_reference():
    r = mbint.solve_ivp(ts.transamp_fun, ts.T_SPAN, ts.TRANSAMP_Y0, method="radau_iia",
                        mass=ts.transamp_mass(), jac=ts.transamp_jac, rtol=1e-8, atol=1e-8)
    assert r.status == 0
    assert np.abs(r.y[:, -1] - ts.TRANSAMP_REF).max() <= 1e-7


def test_transamp_ida_without_a_jacobian():
    tol = 1e-6
    r = mbint.solve_ivp(ts.transamp_fun, ts.T_SPAN, ts.TRANSAMP_Y0, method="ida",
                        mass=ts.transamp_mass(), rtol=tol, atol=tol, max_steps=100000)
    assert r.status == 0, r.message
    err = np.abs(r.y[:, -1] - ts.TRANSAMP_REF).max()
    assert err <= 10 * tol * np.abs(ts.TRANSAMP_REF).max()
    assert r.nfev <= 60000, r.nfev
    # njev: the difference df/dy evaluated, not the set-ups that reused it
    assert r.njev * 20 < r.nsteps
