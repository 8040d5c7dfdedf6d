"""A right-hand side that is not finite at a trial point (issue 20, section 4).

An explicit stage or a Newton iterate of a step far too long can leave the region where
the problem is defined (an exponential diode law overflows, a square root of a negative
number): that attempt is rejected and retried smaller, as SciPy and SUNDIALS do, and the
run fails only when the step cannot shrink further, with the message of the non-finite
value.  A non-finite value at the solution itself still fails the run."""
import numpy as np
import pytest

import mbint


def _log_decay(t, y):
    # y' = -y, exact y0 exp(-t), defined only for y > 0 (a log in the model):
    # an explicit stage of a long step overshoots below 0 and the value is NaN
    with np.errstate(invalid="ignore"):
        return -y + 0.0 * np.log(y)


@pytest.mark.parametrize("method", ["dopri5", "rk23", "rodas4", "ros4", "radau_iia", "bdf",
                                    "llm", "adams"])
def test_a_non_finite_trial_point_rejects_the_attempt(method):
    r = mbint.solve_ivp(_log_decay, (0, 5), [1.0], method=method, first_step=3.0, rtol=1e-6,
                        atol=1e-9)
    assert r.status == 0, r.message
    assert abs(r.y[0, -1] - np.exp(-5.0)) < 1e-4


def _diode(t, y):
    # C v' = (V - v) / R - Is (exp(v / Vt) - 1), v(0) = 0.6 V, near the steady state:
    # a long explicit probe step from there overflows the exponential
    V, R, C, Is, Vt = 2.0, 1e3, 1e-9, 1e-14, 0.025
    with np.errstate(over="ignore"):
        return [((V - y[0]) / R - Is * np.expm1(y[0] / Vt)) / C]


@pytest.mark.parametrize("method", ["radau_iia", "rodas4", "ros4", "bdf"])
def test_the_first_step_shrinks_where_the_probe_overflows(method):
    # the automatic first step's probe (an explicit Euler step) overflows exp: the
    # first step shrinks instead of failing at t = 0
    r = mbint.solve_ivp(_diode, (0, 1e-3), [0.6], method=method, rtol=1e-6, atol=1e-9)
    assert r.status == 0, r.message
    # the steady state (V - v)/R = Is (exp(v/Vt) - 1), by Newton
    v = 0.6
    for _ in range(60):
        g = (2.0 - v) / 1e3 - 1e-14 * np.expm1(v / 0.025)
        dg = -1e-3 - 1e-14 / 0.025 * np.exp(v / 0.025)
        v -= g / dg
    assert abs(r.y[0, -1] - v) < 1e-6


def test_non_finite_everywhere_ahead_fails_with_the_message():
    def f(t, y):
        return [np.nan] if t > 0 else [-y[0]]
    r = mbint.solve_ivp(f, (0, 1), [1.0], method="dopri5")
    assert r.status == -1
    assert "non-finite" in r.message and "t = 0" in r.message


def test_a_fixed_step_still_fails_at_once():
    r = mbint.solve_ivp(_log_decay, (0, 5), [1.0], method="rk4", h=3.0)
    assert r.status == -1 and "non-finite" in r.message
