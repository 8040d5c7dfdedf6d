"""Nystrom midpoint scheme (LN 7.4): one evaluation per step at the midpoint; order 2
when a(q, q') does not depend on q', order 1 when it does; stable on the undamped
oscillator for h w < 2 (its stability region includes part of the imaginary axis)."""
import numpy as np
import pytest

import mbint
from mbint import problems


def _order(fun, exact, hs, T):
    errs = []
    for h in hs:
        r = mbint.solve_ivp(fun, (0, T), [1.0, 0.0], method="nystrom_midpoint", h=h,
                            t_eval=[T])
        errs.append(np.max(np.abs(r.y[:, -1] - exact)))
    return np.polyfit(np.log(hs), np.log(errs), 1)[0]


def test_order_two_without_velocity_dependence():
    T = 2.0
    slope = _order(problems.oscillator, np.array([np.cos(T), -np.sin(T)]),
                   np.array([0.02, 0.01, 0.005]), T)
    assert abs(slope - 2) < 0.25


def test_order_one_with_damping():
    """q'' = -q - 2 beta q': the velocity is frozen at q'_n, so the error is O(h)."""
    T, beta = 2.0, 0.1
    ref = mbint.solve_ivp(problems.damped_oscillator, (0, T), [1.0, 0.0], method="dopri5",
                          rtol=1e-12, atol=1e-14).y[:, -1]
    slope = _order(problems.damped_oscillator, ref, np.array([0.02, 0.01, 0.005]), T)
    assert abs(slope - 1) < 0.25


def test_one_evaluation_per_step():
    r = mbint.solve_ivp(problems.oscillator, (0, 1), [1.0, 0.0], method="nystrom_midpoint",
                        h=0.01)
    assert r.nfev == 100


def test_undamped_oscillator_stays_bounded():
    """Stable for pure oscillation (LN 7.4) where Euler and Heun blow up."""
    h, T = 0.1, 200.0
    amp = {}
    for m in ("nystrom_midpoint", "euler", "heun"):
        r = mbint.solve_ivp(problems.oscillator, (0, T), [1.0, 0.0], method=m, h=h)
        amp[m] = np.max(np.abs(r.y[0]))
    assert amp["nystrom_midpoint"] < 1.1
    # |R(i h)|^2 = 1 + h^2 (Euler), 1 + h^4/4 (Heun): growth over 2000 steps
    assert amp["euler"] > 1e3 and amp["heun"] > 1.02
    rho = mbint.stability.amplification("nystrom_midpoint", np.array([1j * h, 1.9j, 2.1j]))
    assert np.all(np.abs(rho[:2]) <= 1 + 1e-12) and abs(rho[2]) > 1


def test_dense_output_is_the_scheme_polynomial():
    r = mbint.solve_ivp(problems.oscillator, (0, 1), [1.0, 0.0], method="nystrom_midpoint",
                        h=0.01, dense_output=True)
    tt = np.linspace(0, 1, 77)
    assert np.max(np.abs(r.sol(tt) - [np.cos(tt), -np.sin(tt)])) < 1e-3
    np.testing.assert_allclose(r.sol(r.t), r.y, atol=1e-14)


def test_needs_even_state():
    with pytest.raises(ValueError, match="nq"):
        mbint.solve_ivp(problems.exp_decay, (0, 1), [1.0], method="nystrom_midpoint", h=0.1)
