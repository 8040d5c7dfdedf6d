"""Explicit Runge-Kutta family: order of convergence, stability functions against
the lecture notes' polynomials, tableau order conditions, dense output, SciPy parity."""
import numpy as np
import pytest
from scipy.integrate import solve_ivp as scipy_solve_ivp

import mbint
from mbint import _core, problems

ORDERS = {"euler": 1, "heun": 2, "rk4": 4, "rk23": 3, "dopri5": 5}


def fitted_order(method, fun, t_span, y0, exact, hs):
    errs = []
    for h in hs:
        r = mbint.solve_ivp(fun, t_span, y0, method=method, h=h, t_eval=[t_span[1]])
        assert r.success
        errs.append(np.max(np.abs(r.y[:, -1] - exact)))
    slope = np.polyfit(np.log(hs), np.log(errs), 1)[0]
    return slope, errs


@pytest.mark.parametrize("method,p", ORDERS.items())
def test_order_mass_spring_damper(method, p):
    """Fitted slope within +-0.25 of the order on LN eq 7.7 (closed-form solution)."""
    T = 1.0
    exact = problems.mass_spring_damper_exact([T])[:, 0]
    # h w <= 0.2 (w = 10) so that the asymptotic regime is reached
    hs = np.array([0.02, 0.01, 0.005, 0.0025]) if p != 5 else np.array([0.02, 0.01, 0.005])
    slope, errs = fitted_order(method, problems.mass_spring_damper, (0, T), [0.0, 0.0], exact, hs)
    assert abs(slope - p) < 0.25, (slope, errs)


def test_order_nonautonomous():
    """y' = cos t: the c_i enter; RK4 stays 4th order."""
    slope, _ = fitted_order("rk4", lambda t, y: np.array([np.cos(t)]), (0, 3), [0.0],
                            np.array([np.sin(3.0)]), np.array([0.2, 0.1, 0.05]))
    assert abs(slope - 4) < 0.25


@pytest.mark.parametrize("method", ORDERS)
def test_tableau_conditions(method):
    """SciPy's checks: sum b = 1, A 1 = c; explicit; b^T c = 1/2 for order >= 2."""
    tab = _core.tableau(method)
    A, b, c = tab["A"], tab["b"], tab["c"]
    np.testing.assert_allclose(b.sum(), 1.0, rtol=1e-15)
    np.testing.assert_allclose(A.sum(axis=1), c, atol=1e-15)
    assert np.all(np.triu(A) == 0)
    if tab["order"] >= 2:
        np.testing.assert_allclose(b @ c, 0.5, rtol=1e-14)
    if tab["order"] >= 3:
        np.testing.assert_allclose(b @ c**2, 1 / 3, rtol=1e-14)
        np.testing.assert_allclose(b @ A @ c, 1 / 6, rtol=1e-14)
    if tab["e"] is not None:
        np.testing.assert_allclose(tab["e"].sum(), 0.0, atol=1e-15)


def test_amplification_matches_notes():
    """R(z) of LN 7.1-7.3: 1 + z, 1 + z + z^2/2, sum_{k<=4} z^k / k!."""
    z = np.array([-2.5 + 1j, 0.3 - 2j, -1.0, 2.8j, 0.1 + 0.1j])
    R = mbint.stability.amplification
    np.testing.assert_allclose(R("euler", z), 1 + z, rtol=1e-15)
    np.testing.assert_allclose(R("heun", z), 1 + z + z**2 / 2, rtol=1e-15)
    np.testing.assert_allclose(R("rk4", z), 1 + z + z**2 / 2 + z**3 / 6 + z**4 / 24, rtol=1e-14)
    # an ERK of order p with s = p stages has R = truncated exponential (rk23: 3 stages)
    np.testing.assert_allclose(R("rk23", z), 1 + z + z**2 / 2 + z**3 / 6, rtol=1e-14)


def test_amplification_c_matches_tableau():
    z = np.array([-2.5 + 1j, 0.3 - 2j, -1.0, 2.8j])
    for m in ORDERS:
        np.testing.assert_allclose(mbint.stability.amplification(m, z),
                                   mbint.stability.amplification_from_tableau(m, z), rtol=1e-14)


def test_amplification_is_what_the_kernel_does():
    """One Euler/Heun/RK4 step on y' = lambda y multiplies y by R(h lambda)."""
    lam, h = -3.0, 0.2
    for m in ("euler", "heun", "rk4"):
        r = mbint.solve_ivp(lambda t, y: lam * y, (0, h), [1.0], method=m, h=h)
        np.testing.assert_allclose(r.y[0, -1], mbint.stability.amplification(m, h * lam).real,
                                   rtol=1e-14)


def test_stability_limits():
    """RK4 is stable on the imaginary axis up to 2 sqrt 2 (LN: 'h lambda < 2.8'),
    Euler and Heun nowhere on it (|R(ib)|^2 = 1 + b^2, 1 + b^4/4: only rounding keeps
    tiny b inside); on the negative real axis the limits are 2, 2, 2.785."""
    S = mbint.stability
    assert S.imaginary_axis_limit("rk4") == pytest.approx(2 * np.sqrt(2), abs=1e-3)
    assert S.imaginary_axis_limit("euler") < 1e-4
    assert S.imaginary_axis_limit("heun") < 1e-2
    assert S.real_axis_limit("euler") == pytest.approx(2.0, abs=1e-3)
    assert S.real_axis_limit("heun") == pytest.approx(2.0, abs=1e-3)
    assert S.real_axis_limit("rk4") == pytest.approx(2.785, abs=1e-3)


@pytest.mark.parametrize("method,deg_order", [("rk23", 3), ("dopri5", 4)])
def test_dense_output_order(method, deg_order):
    """Interpolation error between steps shrinks like h^(q+1) (q = interpolant order)."""
    errs = []
    hs = [0.2, 0.1, 0.05]
    tt = np.linspace(0.0, 2.0, 301)
    for h in hs:
        r = mbint.solve_ivp(problems.oscillator, (0, 2), [1.0, 0.0], method=method, h=h,
                            dense_output=True)
        y = r.sol(tt)
        errs.append(np.max(np.abs(y - np.array([np.cos(tt), -np.sin(tt)]))))
    slope = np.polyfit(np.log(hs), np.log(errs), 1)[0]
    assert slope > deg_order - 0.3, (slope, errs)
    # and at the grid points the dense output equals the steps
    np.testing.assert_allclose(r.sol(r.t), r.y, atol=1e-14)


@pytest.mark.parametrize("method", ["euler", "heun", "rk4"])
def test_hermite_dense_output(method):
    r = mbint.solve_ivp(problems.oscillator, (0, 2), [1.0, 0.0], method=method, h=0.01,
                        dense_output=True)
    tt = np.linspace(0, 2, 97)
    ref = mbint.solve_ivp(problems.oscillator, (0, 2), [1.0, 0.0], method=method, h=0.01,
                          t_eval=tt)
    # Hermite between steps is as accurate as the method's global error
    assert np.max(np.abs(r.sol(tt) - ref.y)) < 1e-4
    np.testing.assert_allclose(r.sol(r.t), r.y, atol=1e-14)


@pytest.mark.parametrize("rtol", [1e-4, 1e-6, 1e-8])
def test_dopri5_scipy_parity(rtol):
    """Same problem and tolerance: mbint dopri5 and SciPy RK45 reach comparable errors."""
    y0, T = problems.ARENSTORF_Y0, problems.ARENSTORF_T
    atol = rtol * 1e-2
    ref = scipy_solve_ivp(problems.arenstorf, (0, T), y0, method="DOP853", rtol=1e-13, atol=1e-13)
    yref = ref.y[:, -1]
    ours = mbint.solve_ivp(problems.arenstorf, (0, T), y0, method="dopri5", rtol=rtol, atol=atol)
    theirs = scipy_solve_ivp(problems.arenstorf, (0, T), y0, method="RK45", rtol=rtol, atol=atol)
    e_ours = np.max(np.abs(ours.y[:, -1] - yref))
    e_theirs = np.max(np.abs(theirs.y[:, -1] - yref))
    assert ours.success
    assert e_ours < 10 * e_theirs and e_theirs < 10 * e_ours, (e_ours, e_theirs)
    assert ours.nfev < 2 * theirs.nfev


def test_error_decreases_with_tolerance():
    y0, T = problems.ARENSTORF_Y0, problems.ARENSTORF_T
    errs = []
    for rtol in [1e-4, 1e-6, 1e-8, 1e-10]:
        r = mbint.solve_ivp(problems.c_rhs("arenstorf"), (0, T), y0, method="dopri5", rtol=rtol,
                            atol=rtol * 1e-2)
        errs.append(np.max(np.abs(r.y[:, -1] - y0)))
    assert all(a > b for a, b in zip(errs, errs[1:])), errs
    assert errs[-1] < 1e-6


def test_rk23_error_within_tolerance():
    r = mbint.solve_ivp(problems.mass_spring_damper, (0, 2), [0.0, 0.0], method="rk23",
                        rtol=1e-6, atol=1e-9)
    err = np.max(np.abs(r.y - problems.mass_spring_damper_exact(r.t)))
    assert err < 1e-4
    # FSAL: 3 evaluations per attempted step plus f0 and the initial-step probe
    assert r.nfev == 3 * (r.nsteps + r.nreject) + 2


@pytest.mark.parametrize("method", ["euler", "heun", "rk4"])
def test_step_doubling_meets_tolerance(method):
    """Methods without an embedded estimate are adaptive by step doubling."""
    exact = problems.mass_spring_damper_exact([1.0])[:, 0]
    errs = []
    for rtol in (1e-5, 1e-7):
        r = mbint.solve_ivp(problems.mass_spring_damper, (0, 1), [0.0, 0.0], method=method,
                            rtol=rtol, atol=rtol * 1e-2)
        assert r.success
        errs.append(np.max(np.abs(r.y[:, -1] - exact)))
        assert len(np.unique(np.round(r.h_steps, 12))) > 3  # the step size actually varies
    # the local error is controlled; the global error follows the tolerance
    assert errs[0] < 1e-2 and errs[1] < errs[0] / 5, errs
