"""Stability of multistep methods (mbint.stability, LN 7.7-7.8) and R(z) of the
implicit one-step methods against closed forms.

Checks: the exact coefficients of BDF and Adams methods against the lecture notes
and the order conditions; BDF1 has backward Euler's region (outside |z - 1| < 1);
BDF2 is A-stable and BDF3-6 are not, with the A(alpha) angles of Hairer & Wanner II,
V.2 (86.03, 73.35, 51.84, 17.84 degrees) both from the boundary locus and from the
characteristic roots along rays; the AB2 real interval is (-1, 0); the boundary
locus passes through 0 and has a root of modulus 1 at every point; the spectral
radius equals the growth of the PECE recursion run step by step; Adams and BDF of
order 1-2 coincide with the one-step methods registered in C.
"""
import numpy as np
import pytest

import mbint
from mbint import stability
from mbint.stability import (amplification, bdf_stability_angle, multistep_amplification,
                             multistep_coefficients, multistep_region,
                             multistep_region_boundary)

REGISTERED = {m.name for m in mbint.methods()}
# Hairer & Wanner II, table V.2.1 (degrees)
BDF_ALPHA = {3: 86.03, 4: 73.35, 5: 51.84, 6: 17.84}
ALL = [("bdf", k) for k in range(1, 7)] + [(m, k) for m in ("adams_bashforth", "adams_moulton",
                                                               "pece") for k in range(1, 7)]


def grid(re=(-6.0, 4.0), im=(-5.0, 5.0), n=81):
    x, y = np.meshgrid(np.linspace(*re, n), np.linspace(*im, n))
    return (x + 1j * y).ravel()


# --- coefficients ---------------------------------------------------------------------

def test_coefficients_of_the_notes():
    # LN 7.8: y_{n+1} = y_n + h/12 (23 f_n - 16 f_{n-1} + 5 f_{n-2})
    alpha, beta = multistep_coefficients("adams_bashforth", 3)
    assert alpha == [0, 0, -1, 1]
    assert [12 * b for b in beta] == [5, -16, 23, 0]
    # y_{n+1} = y_n + h/12 (5 f_{n+1} + 8 f_n - f_{n-1})
    alpha, beta = multistep_coefficients("adams_moulton", 3)
    assert alpha == [0, -1, 1]
    assert [12 * b for b in beta] == [-1, 8, 5]
    # y_{n+1} = y_n + h/24 (9 f_{n+1} + 19 f_n - 5 f_{n-1} + f_{n-2})
    alpha, beta = multistep_coefficients("adams_moulton", 4)
    assert [24 * b for b in beta] == [1, -5, 19, 9]
    # LN "Finally": y_1 = -1/3 y_{-1} + 4/3 y_0 + 2/3 h f_1
    alpha, beta = multistep_coefficients("bdf", 2)
    assert [3 * a for a in alpha] == [1, -4, 3]
    assert [3 * b for b in beta] == [0, 0, 2]


@pytest.mark.parametrize("method,order", [(m, k) for m, k in ALL if m != "pece"])
def test_order_conditions(method, order):
    """sum alpha_i i^q = q sum beta_i i^(q-1) for q <= p, and not for q = p + 1."""
    alpha, beta = multistep_coefficients(method, order)
    idx = range(len(alpha))

    def defect(q):
        return sum(a * i**q for i, a in zip(idx, alpha)) - \
            q * sum(b * i ** (q - 1) for i, b in zip(idx, beta) if q > 0)

    assert sum(alpha) == 0
    assert all(defect(q) == 0 for q in range(1, order + 1))
    assert defect(order + 1) != 0


def test_bad_arguments():
    with pytest.raises(ValueError, match="order"):
        multistep_amplification("bdf", 7, 0.1)
    with pytest.raises(ValueError, match="order"):
        multistep_region_boundary("adams_bashforth", 0)
    with pytest.raises(ValueError, match="method"):
        multistep_amplification("rk4", 2, 0.1)
    with pytest.raises(ValueError, match="predictor"):
        multistep_coefficients("pece", 2)


# --- regions ----------------------------------------------------------------------------

def test_bdf1_is_backward_euler():
    z = grid()
    z = z[(np.abs(np.abs(z - 1.0) - 1.0) > 1e-6)          # off the boundary circle
          & (np.abs(z - 1.0) > 1e-3)]                      # and the pole z = 1
    rho = multistep_amplification("bdf", 1, z)
    np.testing.assert_allclose(rho, np.abs(1.0 / (1.0 - z)), rtol=1e-13)
    np.testing.assert_array_equal(rho <= 1.0, np.abs(z - 1.0) >= 1.0)
    if "backward_euler" in REGISTERED:
        np.testing.assert_allclose(rho, np.abs(amplification("backward_euler", z)), rtol=1e-13)
    # the boundary locus of BDF1 is the circle |z - 1| = 1
    b = multistep_region_boundary("bdf", 1)
    np.testing.assert_allclose(np.abs(b - 1.0), 1.0, atol=1e-14)


def test_bdf2_is_a_stable():
    y = np.concatenate([np.logspace(-4, 4, 4001), -np.logspace(-4, 4, 400)])
    assert np.max(multistep_amplification("bdf", 2, 1j * y)) <= 1.0 + 1e-12
    z = -np.logspace(-4, 4, 60)[:, None] + 1j * np.linspace(-1e3, 1e3, 81)[None, :]
    assert np.max(multistep_amplification("bdf", 2, z)) <= 1.0 + 1e-12
    assert bdf_stability_angle(1) == bdf_stability_angle(2) == 90.0


@pytest.mark.parametrize("order", [3, 4, 5, 6])
def test_bdf_above_2_is_not_a_stable(order):
    y = np.linspace(1e-3, 10.0, 20001)
    assert np.max(multistep_amplification("bdf", order, 1j * y)) > 1.0 + 1e-4


@pytest.mark.parametrize("order", [3, 4, 5, 6])
def test_bdf_stability_angle(order):
    alpha = bdf_stability_angle(order)
    assert abs(alpha - BDF_ALPHA[order]) < 0.1, alpha
    # independently of the locus: rays at angle alpha -+ 0.2 deg from the negative
    # real axis lie inside / leave the stability region
    r = np.geomspace(1e-3, 1e3, 20001)
    inside = np.radians(180.0 - (alpha - 0.2))
    outside = np.radians(180.0 - (alpha + 0.2))
    assert np.max(multistep_amplification("bdf", order, r * np.exp(1j * inside))) <= 1.0 + 1e-12
    assert np.max(multistep_amplification("bdf", order, r * np.exp(1j * outside))) > 1.0 + 1e-7


def test_ab2_real_interval():
    x = np.linspace(-0.999, -1e-3, 999)
    assert np.all(multistep_amplification("adams_bashforth", 2, x) < 1.0)
    assert multistep_amplification("adams_bashforth", 2, -1.001) > 1.0
    assert multistep_amplification("adams_bashforth", 2, 1e-3) > 1.0
    # the locus crosses the real axis at 0 (theta = 0) and -1 (theta = pi)
    b = multistep_region_boundary("adams_bashforth", 2, n=2001)
    assert abs(b[0]) < 1e-15 and abs(b[1000] + 1.0) < 1e-12


@pytest.mark.parametrize("method,order", ALL)
def test_boundary_locus(method, order):
    b = multistep_region_boundary(method, order)
    assert np.nanmin(np.abs(b)) < 1e-12                  # passes through z = 0
    b = b[np.isfinite(b) & (np.abs(b) < 1e6)]
    # at each point of the locus one characteristic root is e^{i theta}: rho >= 1
    rho = multistep_amplification(method, order, b)
    assert np.all(rho >= 1.0 - 1e-8)
    # and somewhere near the origin, left of the locus, the method is stable
    assert multistep_amplification(method, order, -1e-2) < 1.0


def test_one_step_members():
    """Order-1/2 members coincide with the one-step methods registered in C."""
    z = grid(n=41)
    z = z[(np.abs(z - 1.0) > 1e-3) & (np.abs(z - 2.0) > 1e-3)]
    pairs = [("adams_bashforth", 1, "euler"), ("adams_moulton", 1, "backward_euler"),
             ("adams_moulton", 2, "trapezoid"), ("pece", 1, "heun")]
    checked = 0
    for method, order, one_step in pairs:
        if one_step in REGISTERED:
            np.testing.assert_allclose(multistep_amplification(method, order, z),
                                       np.abs(amplification(one_step, z)), rtol=1e-12)
            checked += 1
    assert checked >= 2


@pytest.mark.parametrize("order", [2, 3, 4])
def test_pece_growth_matches_recursion(order):
    """Run the PECE pair on y' = lambda y step by step (h lambda = z): the growth per
    step tends to the spectral radius of the characteristic polynomial."""
    _, b_p = multistep_coefficients("adams_bashforth", order)
    _, b_c = multistep_coefficients("adams_moulton", order + 1)
    b_p = [float(b) for b in b_p[:order]]            # f_{n-k+1} ... f_n
    b_c = [float(b) for b in b_c]                    # f_{n-k+1} ... f_n, f_{n+1}
    rng = np.random.default_rng(order)
    for z in (-0.3 + 0.4j, -1.2 + 0.2j, 0.2 + 0.9j, -0.9 + 1.2j):
        y = list(rng.standard_normal(order) + 1j * rng.standard_normal(order))
        n = 600
        for _ in range(n):
            f = [z * v for v in y[-order:]]
            yp = y[-1] + sum(b * fv for b, fv in zip(b_p, f))
            y.append(y[-1] + sum(b * fv for b, fv in zip(b_c[:order], f)) + b_c[order] * z * yp)
        growth = (abs(y[-1]) / abs(y[n // 2])) ** (1.0 / (len(y) - 1 - n // 2))
        rho = multistep_amplification("pece", order, z)
        assert abs(growth - rho) < 5e-3 * rho, (z, growth, rho)


def test_multistep_region_grid():
    X, Y, rho = multistep_region("bdf", 3, re=(-2.0, 8.0), im=(-4.0, 4.0), n=41)
    assert X.shape == Y.shape == rho.shape == (41, 41)
    np.testing.assert_allclose(rho, multistep_amplification("bdf", 3, X + 1j * Y))
    assert rho[20, 0] < 1.0 and rho[20, 20] > 1.0      # z = -2 stable, z = 3 not


# --- one-step closed forms through the C hook ---------------------------------------------

ONE_STEP_CLOSED = {
    "backward_euler": lambda z: 1.0 / (1.0 - z),
    "trapezoid": lambda z: (1.0 + z / 2.0) / (1.0 - z / 2.0),
    # (3,2) Pade approximant of e^z
    "radau_iia": lambda z: (1.0 + 2.0 * z / 5.0 + z**2 / 20.0)
    / (1.0 - 3.0 * z / 5.0 + 3.0 * z**2 / 20.0 - z**3 / 60.0),
}


@pytest.mark.parametrize("method", list(ONE_STEP_CLOSED))
def test_one_step_closed_form(method):
    if method not in REGISTERED:
        pytest.skip(f"{method} is not registered")
    z = grid(re=(-30.0, 10.0), im=(-20.0, 20.0), n=61)
    with np.errstate(divide="ignore", invalid="ignore"):
        closed = ONE_STEP_CLOSED[method](z)
    z, closed = z[np.abs(closed) < 1e8], closed[np.abs(closed) < 1e8]   # away from poles
    np.testing.assert_allclose(amplification(method, z), closed, rtol=1e-11, atol=1e-14)
    # the closed form itself is what it says: agreement with e^z to its order near 0
    order = {"backward_euler": 1, "trapezoid": 2, "radau_iia": 5}[method]
    h = np.array([0.1, 0.05]) * (1 + 1j)
    err = np.abs(amplification(method, h) - np.exp(h))
    slope = np.log(err[0] / err[1]) / np.log(2.0)
    assert abs(slope - (order + 1)) < 0.2, slope


def test_pece_is_not_ab_or_am():
    """The PECE region differs from those of its predictor and corrector alone."""
    z = grid(re=(-2.5, 0.5), im=(-1.5, 1.5), n=61)
    pece = multistep_amplification("pece", 2, z) <= 1.0
    ab = multistep_amplification("adams_bashforth", 2, z) <= 1.0
    am = multistep_amplification("adams_moulton", 3, z) <= 1.0
    assert np.count_nonzero(pece != ab) > 50 and np.count_nonzero(pece != am) > 50
    assert stability.MULTISTEP_MAX_ORDER["bdf"] == 6
