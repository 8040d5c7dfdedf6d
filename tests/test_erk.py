"""Explicit Runge-Kutta family: order of convergence, stability functions against
the lecture notes' polynomials, tableau order conditions, dense output, dopri5 with the
elementary controller against a textbook DOPRI5 written out below, work and accuracy
beside SciPy's RK45."""
from fractions import Fraction as F

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
    """Same problem and tolerance: mbint dopri5 and SciPy RK45 reach comparable errors
    (within 10x of each other; measured 0.28..2.5) with comparable work (nfev within 2x;
    measured 1.09..1.21).  The reference is exact: the orbit is periodic, y(T) = y0 (to
    ~1e-12 from rounding T and y0)."""
    y0, T = problems.ARENSTORF_Y0, problems.ARENSTORF_T
    atol = rtol * 1e-2
    yref = y0
    ours = mbint.solve_ivp(problems.arenstorf, (0, T), y0, method="dopri5", rtol=rtol, atol=atol)
    theirs = scipy_solve_ivp(problems.arenstorf, (0, T), y0, method="RK45", rtol=rtol, atol=atol)
    e_ours = np.max(np.abs(ours.y[:, -1] - yref))
    e_theirs = np.max(np.abs(theirs.y[:, -1] - yref))
    assert ours.success
    assert e_ours < 10 * e_theirs and e_theirs < 10 * e_ours, (e_ours, e_theirs)
    assert ours.nfev < 2 * theirs.nfev


# Dormand & Prince (1980); Hairer, Norsett & Wanner I, Table II.5.2
DP_C = [0, F(1, 5), F(3, 10), F(4, 5), F(8, 9), 1, 1]
DP_A = [[],
        [F(1, 5)],
        [F(3, 40), F(9, 40)],
        [F(44, 45), F(-56, 15), F(32, 9)],
        [F(19372, 6561), F(-25360, 2187), F(64448, 6561), F(-212, 729)],
        [F(9017, 3168), F(-355, 33), F(46732, 5247), F(49, 176), F(-5103, 18656)],
        [F(35, 384), 0, F(500, 1113), F(125, 192), F(-2187, 6784), F(11, 84)]]
DP_BHAT = [F(5179, 57600), 0, F(7571, 16695), F(393, 640), F(-92097, 339200), F(187, 2100),
           F(1, 40)]


def dopri5_textbook(f, t0, tf, y0, rtol, atol, h, safety=0.9, fac_min=0.2, fac_max=10.0):
    """DOPRI5 (FSAL) with the elementary controller of HNW I, II.4 (eq 4.13):
    h_new = h min(fac_max, max(fac_min, safety err^(-1/5))), no growth right after a
    rejection, err the RMS norm of h sum (b_i - bhat_i) k_i / (atol + rtol max(|y|, |y_new|)).
    Returns the ends of the accepted steps, their error norms, y(tf), nfev, nreject."""
    c = [float(x) for x in DP_C]
    A = [[float(x) for x in row] for row in DP_A]
    e = [float(b - bh) for b, bh in zip(DP_A[6] + [0], DP_BHAT)]
    t, y = t0, np.array(y0, dtype=float)
    k1 = np.asarray(f(t, y), dtype=float)
    nfev, nreject, ts, errs, after_reject = 1, 0, [], [], False
    while True:
        last = t + h >= tf or tf - (t + h) < 10 * np.finfo(float).eps * max(abs(t), abs(tf))
        t_new = tf if last else t + h
        h = t_new - t
        K = [k1]
        for i in range(1, 7):
            K.append(np.asarray(f(t + c[i] * h, y + h * sum(a * k for a, k in zip(A[i], K))),
                                dtype=float))
        nfev += 6
        y_new = y + h * sum(a * k for a, k in zip(A[6], K))
        err = h * sum(ei * k for ei, k in zip(e, K))
        en = float(np.sqrt(np.mean((err / (atol + rtol * np.maximum(np.abs(y), np.abs(y_new))))
                                   ** 2)))
        fac = safety * max(en, 1e-10) ** -0.2
        if en > 1.0:
            nreject += 1
            after_reject = True
            h *= min(1.0, max(fac_min, fac))
            continue
        fac = min(1.0 if after_reject else fac_max, max(fac_min, fac))
        after_reject = False
        t, y, k1 = t_new, y_new, K[6]
        ts.append(t)
        errs.append(en)
        if last:
            return np.array(ts), np.array(errs), y, nfev, nreject
        h *= fac


def _vdp5(t, y):
    return np.array([y[1], 5.0 * ((1.0 - y[0] ** 2) * y[1] - y[0])])


@pytest.mark.parametrize("name", ["oscillator", "vdp5", "arenstorf"])
def test_dopri5_elementary_controller_is_the_textbook_algorithm(name):
    """controller="i" is DOPRI5 with the elementary controller (what SciPy's RK45 also
    implements): the same accepted steps, rejections and evaluations as the textbook
    algorithm above, step ends to rounding.  The first step is given, so the starting
    step heuristic (II.4) is not part of the comparison."""
    f, span, y0, rtol, atol, h0 = {
        "oscillator": (problems.oscillator, (0.0, 10.0), [1.0, 0.0], 1e-6, 1e-9, 1e-3),
        "vdp5": (_vdp5, (0.0, 20.0), [2.0, 0.0], 1e-5, 1e-8, 1e-3),      # 100 rejections
        "arenstorf": (problems.arenstorf, (0.0, problems.ARENSTORF_T), problems.ARENSTORF_Y0,
                      1e-6, 1e-9, 1e-4),
    }[name]
    ts, errs, y, nfev, nreject = dopri5_textbook(f, *span, y0, rtol, atol, h0)
    r = mbint.solve_ivp(f, span, y0, method="dopri5", controller="i", rtol=rtol, atol=atol,
                        first_step=h0)
    assert r.success and nreject > 0
    assert (r.nsteps, r.nreject, r.nfev) == (len(ts), nreject, nfev)
    np.testing.assert_allclose(r.t_steps, ts, rtol=1e-10, atol=0)
    np.testing.assert_allclose(r.err_steps, errs, rtol=1e-6, atol=1e-12)
    np.testing.assert_allclose(r.y[:, -1], y, rtol=1e-10, atol=1e-12)


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
