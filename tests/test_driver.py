"""The one driver through solve_ivp: t_eval, events (SciPy semantics, located to
1e-10), backward integration, step-size bounds, controllers, EPUS, failures."""
import numpy as np
import pytest
from scipy.integrate import solve_ivp as scipy_solve_ivp

import mbint
from mbint import problems


def test_t_eval_points_and_accuracy():
    te = np.linspace(0, 2, 41)
    r = mbint.solve_ivp(problems.oscillator, (0, 2), [1, 0], t_eval=te, rtol=1e-9, atol=1e-12)
    np.testing.assert_array_equal(r.t, te)
    np.testing.assert_allclose(r.y, [np.cos(te), -np.sin(te)], atol=1e-8)


def test_t_eval_backward():
    te = np.linspace(2, 0, 11)
    r = mbint.solve_ivp(problems.oscillator, (2, 0), [np.cos(2), -np.sin(2)], t_eval=te,
                        rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(r.y, [np.cos(te), -np.sin(te)], atol=1e-8)


def test_events_match_scipy_semantics():
    def up(t, y):
        return y[0]
    up.direction = 1

    def any_(t, y):
        return y[1]

    r = mbint.solve_ivp(problems.oscillator, (0, 10), [1, 0], events=[up, any_], rtol=1e-10,
                        atol=1e-12)
    s = scipy_solve_ivp(problems.oscillator, (0, 10), [1, 0], events=[up, any_], rtol=1e-10,
                        atol=1e-12)
    assert len(r.t_events) == 2
    np.testing.assert_allclose(r.t_events[0], [3 * np.pi / 2], atol=1e-10)  # 7 pi / 2 > 10
    # as in SciPy, g(t0) = 0 counts as a root at t0
    np.testing.assert_allclose(r.t_events[1], np.pi * np.arange(0, 4), atol=1e-10)
    for a, b in zip(r.t_events, s.t_events):
        np.testing.assert_allclose(a, b, atol=1e-7)
    np.testing.assert_allclose(r.y_events[0][:, 0], 0.0, atol=1e-10)
    assert r.y_events[0].shape == (1, 2) and r.y_events[1].shape == (4, 2)


def test_terminal_event_bouncing_time():
    """Free fall from 10 m: hits the ground at sqrt(2 h / g) to 1e-10 (cubic dense output)."""
    g = 9.81

    def ground(t, y):
        return y[0]
    ground.terminal = True
    ground.direction = -1
    r = mbint.solve_ivp(lambda t, y: np.array([y[1], -g]), (0, 5), [10.0, 0.0], method="rk23",
                        events=ground, rtol=1e-6, atol=1e-9)
    t_hit = np.sqrt(2 * 10 / g)
    assert r.status == 1 and r.message == "A termination event occurred."
    assert abs(r.t_events[0][0] - t_hit) < 1e-10
    assert r.t[-1] == pytest.approx(t_hit, abs=1e-10)
    assert abs(r.y[0, -1]) < 1e-9


def test_terminal_count():
    def ev(t, y):
        return y[0]
    ev.terminal = 3
    r = mbint.solve_ivp(problems.oscillator, (0, 100), [1, 0], events=ev, rtol=1e-10, atol=1e-12)
    assert r.status == 1 and len(r.t_events[0]) == 3
    assert r.t[-1] == pytest.approx(np.pi / 2 + 2 * np.pi, abs=1e-9)


def test_dense_output_stops_at_terminal_event():
    def ev(t, y):
        return y[0]
    ev.terminal = True
    r = mbint.solve_ivp(problems.oscillator, (0, 10), [1, 0], events=ev, dense_output=True,
                        rtol=1e-8, atol=1e-10)
    assert r.sol.ts[-1] == pytest.approx(np.pi / 2, abs=1e-9)
    assert np.allclose(r.sol(1.0), [np.cos(1.0), -np.sin(1.0)], atol=1e-7)


def test_args_reach_fun_and_events():
    def f(t, y, k):
        return -k * y

    def ev(t, y, k):
        return y[0] - np.exp(-k)
    r = mbint.solve_ivp(f, (0, 2), [1.0], args=(2.0,), events=ev, rtol=1e-10, atol=1e-12)
    assert r.y[0, -1] == pytest.approx(np.exp(-4.0), rel=1e-8)
    assert r.t_events[0][0] == pytest.approx(1.0, abs=1e-9)


def test_max_step_and_first_step():
    r = mbint.solve_ivp(problems.exp_decay, (0, 1), [1.0], max_step=0.01, first_step=1e-3)
    assert np.all(np.diff(r.t) <= 0.01 + 1e-15)
    assert r.h_steps[0] == pytest.approx(1e-3)


def test_fixed_step_grid():
    r = mbint.solve_ivp(problems.exp_decay, (0, 1), [1.0], method="rk4", h=0.1)
    np.testing.assert_allclose(r.t, np.linspace(0, 1, 11), atol=1e-15)
    r = mbint.solve_ivp(problems.exp_decay, (0, 1), [1.0], method="rk4", h=0.3)
    np.testing.assert_allclose(r.t, [0, 0.3, 0.6, 0.9, 1.0], atol=1e-15)


@pytest.mark.parametrize("controller", ["i", "pi"])
def test_controllers_meet_tolerance(controller):
    r = mbint.solve_ivp(problems.c_rhs("arenstorf"), (0, problems.ARENSTORF_T),
                        problems.ARENSTORF_Y0, rtol=1e-7, atol=1e-9, controller=controller)
    assert r.success
    assert np.all(r.err_steps <= 1.0)
    assert np.max(np.abs(r.y[:, -1] - problems.ARENSTORF_Y0)) < 1e-3


def test_pi_controller_smoother_than_elementary():
    """On a mildly stiff problem (step size limited by stability) the PI controller
    rejects fewer steps than the elementary one (LLM paper, discussion of eq 40)."""
    def f(t, y):
        return np.array([-500.0 * (y[0] - np.cos(t))])
    n_rej = {}
    for c in ("i", "pi"):
        r = mbint.solve_ivp(f, (0, 10), [0.0], method="dopri5", rtol=1e-4, atol=1e-6,
                            controller=c)
        n_rej[c] = r.nreject
    assert n_rej["pi"] < n_rej["i"], n_rej


def test_error_per_unit_step():
    """EPUS (LLM eq 39): the estimated error per unit time stays below tolerance."""
    r = mbint.solve_ivp(problems.oscillator, (0, 5), [1, 0], method="rk23", rtol=1e-5,
                        atol=1e-8, error_per_unit_step=True)
    assert r.success and np.all(r.err_steps <= 1.0)
    eps = mbint.solve_ivp(problems.oscillator, (0, 5), [1, 0], method="rk23", rtol=1e-5,
                          atol=1e-8)
    assert r.nsteps != eps.nsteps


def test_max_steps_keeps_trajectory():
    r = mbint.solve_ivp(problems.exp_decay, (0, 100), [1.0], rtol=1e-10, max_steps=7)
    assert r.status == -1 and not r.success
    assert "maximum number of steps" in r.message
    assert len(r.t) == 8 and r.t[-1] < 100


def test_step_too_small():
    r = mbint.solve_ivp(lambda t, y: np.array([1.0 / (1.0 - t)]), (0, 2), [0.0], rtol=1e-6)
    assert r.status == -1
    assert "step size" in r.message
    assert 0.99 < r.t[-1] < 1.0


def test_t0_equals_tf():
    # as SciPy: the initial point at both ends of the empty interval, and a constant sol
    r = mbint.solve_ivp(problems.exp_decay, (1, 1), [2.0], dense_output=True)
    assert r.success and r.t.tolist() == [1.0, 1.0] and r.y.tolist() == [[2.0, 2.0]]
    assert r.sol(1.0).tolist() == [2.0] and r.sol([1.0, 5.0]).tolist() == [[2.0, 2.0]]


def test_aliases_and_result_fields():
    r = mbint.solve_ivp(problems.exp_decay, (0, 1), [1.0], method="RK45")
    assert r.method == "dopri5"
    for f in ("t", "y", "sol", "t_events", "y_events", "nfev", "njev", "nlu", "status",
              "message", "success"):
        assert f in r
    assert r.t_events is None and r.sol is None


def test_status_module_matches_c():
    from mbint import _core, _status
    table = _core.status_table()
    assert len(table) == len(_status.MESSAGES)
    for name, code, msg in table:
        assert getattr(_status, name) == code
        assert _status.MESSAGES[code] == msg


def test_methods_table():
    ms = {m.name: m for m in mbint.methods()}
    assert {"euler", "heun", "rk4", "rk23", "dopri5", "nystrom_midpoint", "adams"} <= set(ms)
    assert ms["dopri5"].order == 5 and ms["dopri5"].error_order == 4
    assert ms["dopri5"].adaptive == "embedded" and not ms["dopri5"].implicit
    assert ms["rk4"].adaptive == "step doubling" and ms["rk4"].fixed_step
    assert ms["nystrom_midpoint"].second_order
    assert ms["adams"].adaptive == "variable order"
    assert all(m.description for m in ms.values())
