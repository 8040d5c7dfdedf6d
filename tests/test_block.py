"""The block implicit one-step methods of the LS paper (Li, Ding, Li 2019):
lstable_block and astable_block (csrc/methods/block_lstable.c).

B and d are computed by the kernel from eq 9 with mu fixed by Pade matching; here
they are compared with the paper's printed eqs 11, 14, 15, 16 and the Runge-Kutta
table eq 17.  Where the print is garbled, the expected value is the one derived by
hand from eq 9 (exact rational arithmetic) and the test says so."""
from math import factorial, sqrt

import numpy as np
import pytest

import mbint
from mbint.stability import block_amplification, block_coefficients

S2, S3 = sqrt(2.0), sqrt(3.0)


def test_eq11_equidistant_r3_pade23():
    # eq 10-11: r = 3, equidistant nodes, the (2, 3) Pade approximant of the text.
    co = block_coefficients("lstable_block", r=3, nodes="equidistant", pade=(2, 3))
    np.testing.assert_allclose(co["c"], [1 / 3, 2 / 3, 1], atol=1e-15)
    np.testing.assert_allclose(co["mu"], [1 / 45, 8 / 45, 1], atol=1e-12)  # as printed
    # printed: the first row of 3B and 3d
    np.testing.assert_allclose(3 * co["B"][0], [107 / 120, -37 / 120, 3 / 40], atol=1e-12)
    np.testing.assert_allclose(3 * co["d"], [41 / 120, 2 / 5, 3 / 8], atol=1e-12)
    # MISPRINT: rows 2 and 3 of 3B are printed "15/9 15/9 -15/8" and "15/8 15/8 3/8";
    # eq 9 with mu = (1/45, 8/45, 1) gives (17/15, 8/15, -1/15) and (9/8, 9/8, 3/8)
    # (derived by hand; also the only values for which R(z) is the (2, 3) Pade
    # approximant, tested below).
    np.testing.assert_allclose(3 * co["B"][1], [17 / 15, 8 / 15, -1 / 15], atol=1e-12)
    np.testing.assert_allclose(3 * co["B"][2], [9 / 8, 9 / 8, 3 / 8], atol=1e-12)


def test_eq14_chebyshev_r3():
    # eq 12-14: printed mu, B, d.  The text says "(2, 3) Pade"; the printed numbers
    # are those of the (1, 3) approximant (the default for r = 3, see
    # block_lstable.h), which is what we compare with.
    co = block_coefficients("lstable_block", r=3, nodes="chebyshev")
    assert (co["k"], co["j"]) == (1, 3)
    np.testing.assert_allclose(co["c"], [0.5 - S2 / 4, 0.5 + S2 / 4, 1], atol=1e-15)
    np.testing.assert_allclose(co["mu"], [(10 - 5 * S2) / 32, (10 + 5 * S2) / 32, 1], atol=1e-12)
    B = [[(11 - 2 * S2) / 24, (5 - 8 * S2) / 24, (7 * S2 - 1) / 48],
         [(5 + 8 * S2) / 24, (11 + 2 * S2) / 24, -(7 * S2 + 1) / 48],
         [2 / 3, 2 / 3, -1 / 6]]
    np.testing.assert_allclose(co["B"], B, atol=1e-12)
    np.testing.assert_allclose(co["d"], [(S2 - 7) / 48, -(S2 + 7) / 48, -1 / 6], atol=1e-12)


def test_eq15_legendre_r3():
    # section 3.3: printed mu, B, d (again the (1, 3) approximant, not (2, 3)).
    co = block_coefficients("lstable_block", r=3, nodes="legendre")
    np.testing.assert_allclose(co["c"], [0.5 * (1 - S3 / 3), 0.5 * (1 + S3 / 3), 1], atol=1e-15)
    np.testing.assert_allclose(co["mu"], [(3 - S3) / 12, (3 + S3) / 12, 1], atol=1e-12)
    B = [[(27 + S3) / 72, (9 - 17 * S3) / 72, (3 + 5 * S3) / 72],
         [(9 + 17 * S3) / 72, (27 - S3) / 72, (3 - 5 * S3) / 72],
         [1 / 2, 1 / 2, 0]]
    np.testing.assert_allclose(co["B"], B, atol=1e-12)
    np.testing.assert_allclose(co["d"], [-(S3 + 3) / 72, (S3 - 3) / 72, 0], atol=1e-12)


def test_eq16_astable_r4():
    # eq 16: the A-stable method, r = 4 equidistant, the diagonal (4, 4) approximant.
    co = block_coefficients("astable_block", r=4)
    assert (co["k"], co["j"]) == (4, 4)
    np.testing.assert_allclose(4 * co["d"], [1847 / 5040, 29 / 90, 179 / 560, 14 / 45],
                               atol=1e-12)  # as printed
    # MISPRINT: 4B is printed with its numerators and denominators scattered over
    # the rows ("2081/62, -109/4, 191/2, -43/5040; 45/377, ...").  Derived by hand
    # from eq 9 with mu = (11/3584, 1/32, 843/3584, 1); the printed first numerators
    # 2081, -109, 191, -43/5040 and the denominators 45, 377, 280, ... are its entries.
    B4 = [[2081 / 2520, -109 / 420, 191 / 2520, -43 / 5040],
          [62 / 45, 4 / 15, 2 / 45, -1 / 90],
          [377 / 280, 111 / 140, 167 / 280, -31 / 560],
          [64 / 45, 8 / 15, 64 / 45, 14 / 45]]
    np.testing.assert_allclose(4 * co["B"], B4, atol=1e-11)
    np.testing.assert_allclose(co["mu"], [11 / 3584, 1 / 32, 843 / 3584, 1], atol=1e-12)


def test_lstable_r4_pade24():
    # section 4: r = 4, (2, 4) Pade: derived by hand from eq 9 (not printed).
    co = block_coefficients("lstable_block", r=4)
    assert (co["k"], co["j"]) == (2, 4)
    np.testing.assert_allclose(co["mu"], [-1 / 128, 1 / 24, 31 / 128, 1], atol=1e-12)
    B4 = [[431 / 360, -49 / 60, 161 / 360, -73 / 720],
          [46 / 45, 4 / 5, -14 / 45, 7 / 90],
          [133 / 120, 23 / 20, 43 / 120, 1 / 240],
          [64 / 45, 8 / 15, 64 / 45, 14 / 45]]
    np.testing.assert_allclose(4 * co["B"], B4, atol=1e-11)
    np.testing.assert_allclose(4 * co["d"], [197 / 720, 37 / 90, 91 / 240, 14 / 45], atol=1e-11)


def test_eq17_runge_kutta_table():
    # eq 17: the (1, 3) method, r = 3 equidistant, as a 4-stage Runge-Kutta method
    # A = [0 0; d B], b = (1/8, 3/8, 3/8, 1/8).  MISPRINT: the second row is printed
    # "1/72 43/72 29/72 1/8": the third entry is -29/72 (row sums must give c = 1/3:
    # 1/72 + 43/72 - 29/72 + 1/8 = 1/3); rows 3 and 4 are scrambled in the print
    # (derived: 1/12 19/36 1/36 1/36 and 1/8 3/8 3/8 1/8).
    co = block_coefficients("lstable_block", r=3)
    A = np.column_stack([co["d"], co["B"]])
    np.testing.assert_allclose(A[0], [1 / 72, 43 / 72, -29 / 72, 1 / 8], atol=1e-12)
    np.testing.assert_allclose(A[1], [1 / 12, 19 / 36, 1 / 36, 1 / 36], atol=1e-12)
    np.testing.assert_allclose(A[2], [1 / 8, 3 / 8, 3 / 8, 1 / 8], atol=1e-12)
    np.testing.assert_allclose(A.sum(axis=1), co["c"], atol=1e-12)


def _pade(k, j, z):
    N = sum(factorial(k + j - i) * factorial(k)
            / (factorial(k + j) * factorial(i) * factorial(k - i)) * z ** i for i in range(k + 1))
    D = sum((-1) ** i * factorial(k + j - i) * factorial(j)
            / (factorial(k + j) * factorial(i) * factorial(j - i)) * z ** i for i in range(j + 1))
    return N / D


FAMILIES = ("equidistant", "chebyshev", "legendre")


@pytest.mark.parametrize("method", ["lstable_block", "astable_block"])
@pytest.mark.parametrize("nodes", FAMILIES)
@pytest.mark.parametrize("r", [2, 3, 4, 5, 6])
def test_stability_function_is_the_pade_approximant(method, nodes, r):
    co = block_coefficients(method, r=r, nodes=nodes)
    k, j = co["k"], co["j"]
    assert (k, j) == ((r - 2, r) if method == "lstable_block" else (r, r))  # the chosen rule
    z = np.array([-0.5, -3.0 + 2j, 1j, 0.7 - 0.4j, -20.0, 5j, -100 + 50j])
    R = block_amplification(z, method, r=r, nodes=nodes)
    np.testing.assert_allclose(R, _pade(k, j, z), rtol=1e-9, atol=1e-12)
    # A-stability: |R(iy)| <= 1 on the imaginary axis (and in the left half plane)
    y = np.linspace(-200, 200, 801)
    assert np.max(np.abs(block_amplification(1j * y, method, r=r, nodes=nodes))) <= 1 + 1e-9
    Rinf = abs(block_amplification(-1e9, method, r=r, nodes=nodes))
    if method == "lstable_block":  # L-stable: R(-inf) = 0 (degree k < j)
        assert Rinf < 1e-6
    else:  # diagonal Pade: |R(-inf)| = 1
        assert abs(Rinf - 1) < 1e-6


def test_pade_option_and_bad_input():
    co = block_coefficients("lstable_block", r=3, pade=(2, 3))
    assert (co["k"], co["j"]) == (2, 3)
    f = lambda t, y: -y  # noqa: E731
    for bad, msg in [(dict(r=1), "r must be an integer from 2 to 6"),
                     (dict(r=7), "r must be an integer from 2 to 6"),
                     (dict(r=2.5), "r must be an integer"),
                     (dict(nodes="gauss"),
                      "nodes must be 'equidistant', 'chebyshev' or 'legendre'"),
                     (dict(pade=(1, 1)), "pade"),
                     (dict(newton_tol=-1.0), "newton_tol")]:
        with pytest.raises(ValueError, match=msg):
            mbint.solve_ivp(f, (0, 1), [1.0], method="lstable_block", h=0.1, **bad)
    with pytest.raises(ValueError, match="r must be an integer from 2 to 6"):
        block_coefficients("astable_block", r=1)


def _pendulum(t, y):
    return [y[1], -np.sin(y[0]) + 0.3 * np.cos(t)]


@pytest.fixture(scope="module")
def pendulum_reference():
    return mbint.solve_ivp(_pendulum, (0, 2), [1.0, 0.0], method="dop853", rtol=1e-13,
                           atol=1e-14).y[:, -1]


# (method, r, nodes, expected order): the order conditions of the (r+1)-stage
# Runge-Kutta form; for a (k, j) approximant the order is at most k + j
@pytest.mark.parametrize("method,r,nodes,order", [
    ("lstable_block", 2, "equidistant", 2), ("lstable_block", 3, "equidistant", 4),
    ("lstable_block", 3, "chebyshev", 4), ("lstable_block", 3, "legendre", 4),
    ("lstable_block", 4, "equidistant", 6), ("lstable_block", 4, "legendre", 6),
    ("astable_block", 2, "equidistant", 4), ("astable_block", 4, "equidistant", 6)])
def test_order_on_a_plain_ode(pendulum_reference, method, r, nodes, order):
    errs = []
    for n in (10, 20):
        s = mbint.solve_ivp(_pendulum, (0, 2), [1.0, 0.0], method=method, h=2 / n, r=r,
                            nodes=nodes)
        assert s.status == 0 and len(s.t) == n + 1
        errs.append(np.max(np.abs(s.y[:, -1] - pendulum_reference)))
    p = np.log2(errs[0] / errs[1])
    assert abs(p - order) < 0.35, (errs, p)
    assert block_coefficients(method, r=r, nodes=nodes)["order"] == order


def test_adaptive_error_estimate(pendulum_reference):
    # beyond the paper: the embedded estimate (step doubling before issue 21) makes
    # rtol/atol work
    errs = []
    for tol in (1e-4, 1e-7):
        s = mbint.solve_ivp(_pendulum, (0, 2), [1.0, 0.0], method="lstable_block", r=3,
                            rtol=tol, atol=tol * 1e-2)
        assert s.status == 0
        errs.append(np.max(np.abs(s.y[:, -1] - pendulum_reference)))
    assert errs[1] < errs[0] / 30
    # the estimate uses the order of the run's coefficients (4 for r = 3), not the
    # method table's bound (10): with 2^10 - 1 in the step-doubling formula the error
    # was underestimated 68 times (regression)
    assert errs[1] < 2e-7


def test_stiff_problem_adaptive():
    # Van der Pol, mu = 1000: L-stable, no step-size collapse
    vdp = lambda t, y: [y[1], 1000 * (1 - y[0] ** 2) * y[1] - y[0]]  # noqa: E731
    s = mbint.solve_ivp(vdp, (0, 100), [2.0, 0.0], method="lstable_block", rtol=1e-5, atol=1e-7)
    ref = mbint.solve_ivp(vdp, (0, 100), [2.0, 0.0], method="radau_iia", rtol=1e-10, atol=1e-12)
    assert s.status == 0 and len(s.t) < 100
    assert abs(s.y[0, -1] - ref.y[0, -1]) < 1e-4


def test_newton_failure_with_fixed_h():
    # y' = y^2 blows up at t = 1: with h = 0.3 Newton fails at t = 0.6; the run
    # returns status -1, a message naming t and the residual, and the steps so far
    s = mbint.solve_ivp(lambda t, y: [y[0] ** 2], (0, 2), [1.0], method="lstable_block", h=0.3)
    assert s.status == -1
    assert "Newton did not converge at t = 0.6" in s.message and "residual" in s.message
    np.testing.assert_allclose(s.t, [0.0, 0.3, 0.6])
