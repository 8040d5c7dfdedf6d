"""Progress of a run: the C driver's monitor calls progress(t) (at most every 0.1 s of
wall time), with the GIL released or held; an exception raised there stops the run,
Ctrl-C noticed there gives the partial result."""
import signal
import time

import numpy as np
import pytest

import mbint
from mbint import models, problems


def slow_rhs(t, y):
    time.sleep(0.001)          # a run of ~0.6 s: several progress reports
    return [y[1], -y[0]]


def test_progress_callback_reports_the_time_of_the_run():
    seen = []
    res = mbint.solve_ivp(slow_rhs, (0, 3), [1.0, 0.0], method="rk4", h=0.01,
                          progress=seen.append)
    assert res.status == 0
    assert len(seen) >= 2                          # ~0.6 s of wall time, one call per 0.1 s
    assert np.all(np.diff(seen) > 0) and 0 < seen[0] and seen[-1] < 3
    assert abs(res.y[0, -1] - np.cos(3.0)) < 1e-8


def test_progress_with_the_gil_released_and_a_stop_from_the_callback():
    """simulate of a PlanarModel runs in C with the GIL released; the callback raising
    KeyboardInterrupt stops it with what was computed."""
    calls = []

    def stop_late(t):
        calls.append(t)
        if len(calls) == 2:
            raise KeyboardInterrupt

    with pytest.raises(mbint.IntegrationInterrupted) as info:
        mbint.simulate(models.stiff_double_pendulum(), (0, 1e4), method="dopri5",
                       progress=stop_late)
    traj = info.value.result
    assert traj.status == -1 and len(calls) == 2
    assert 0 < traj.t[-1] <= calls[-1] and traj.t[-1] < 1e4
    assert np.all(np.isfinite(traj.q))


def test_ctrl_c_is_noticed_in_the_progress_path():
    """A SIGINT delivered while the C right-hand side runs (the GIL released)."""
    state = {}

    def press_ctrl_c(t):
        if not state:
            state["t"] = t
            signal.raise_signal(signal.SIGINT)   # as a user's Ctrl-C

    with pytest.raises(mbint.IntegrationInterrupted) as info:
        mbint.solve_ivp(problems.c_rhs("vdp1000"), (0, 1e5), problems.VDP_Y0, method="dopri5",
                        progress=press_ctrl_c)
    res = info.value.result
    assert res.status == -1 and state["t"] <= res.t[-1] < 1e5


def test_other_exceptions_of_the_callback_propagate():
    def broken(t):
        raise RuntimeError("progress display failed")

    with pytest.raises(RuntimeError, match="progress display failed") as info:
        mbint.solve_ivp(slow_rhs, (0, 3), [1.0, 0.0], method="rk4", h=0.01, progress=broken)
    res = info.value.result   # what was computed, as for any callback that raises
    assert res.status == -1 and res.status_code == mbint._status.MB_ERR_CALLBACK
    assert res.message == mbint._status.MESSAGES[mbint._status.MB_ERR_CALLBACK]


def test_progress_bar_and_validation():
    res = mbint.solve_ivp(problems.pendulum, (0, 1), [1.0, 0.0], progress=True)   # < 1 s: no bar
    assert res.status == 0
    with pytest.raises(ValueError, match="progress must be"):
        mbint.solve_ivp(problems.pendulum, (0, 1), [1.0, 0.0], progress="yes")
    dae = mbint.solve_dae(lambda t, y, yp: yp + y, (0, 1), [1.0], [-1.0], progress=True)
    assert dae.status == 0
