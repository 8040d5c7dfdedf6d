"""Failures that name their cause and keep what was computed.

A Python callback that raises mid-run propagates its own exception (type and
traceback unchanged) with the partial result attached as ``exc.result``; a callback
that returns the wrong kind of value is named with what it returned; arguments that
cannot give a run (pure relative error control on a zero component, more fixed steps
than allowed, a sparse solver the model has no kernels for) are refused up front with
a ValueError naming the argument.  Each test failed on the code before its fix (the
docstring says what the old code did)."""
import traceback

import numpy as np
import pytest

import mbint
from mbint import _core, models


class Boom(Exception):
    """The user's own exception type."""


def _frames(exc):
    return [f.name for f in traceback.extract_tb(exc.__traceback__)]


def _pendulum_with(force=None):
    m = models.pendulum_chain(1)
    if force is not None:
        m.add_force(None, force)
    return m


# ---- a callback that raises keeps the partial result ------------------------------------

def _raise_late(t):
    if t > 0.5:
        raise Boom(f"raised at t = {t}")


def _fun(t, y):
    _raise_late(t)
    return -y


def _jac(t, y):
    _raise_late(t)
    return np.array([[-1.0]])


def _event(t, y):
    _raise_late(t)
    return y[0] + 10.0


def _dfdt(t, y):
    _raise_late(t)
    return np.zeros(1)


IVP_CALLBACKS = {
    "fun dopri5": dict(fun=_fun, method="dopri5"),
    "fun cvode_bdf": dict(fun=_fun, method="cvode_bdf"),
    "jac rodas4": dict(fun=lambda t, y: -y, method="rodas4", jac=_jac),
    "event dopri5": dict(fun=lambda t, y: -y, method="dopri5", events=_event),
    "dfdt rodas4": dict(fun=lambda t, y: -y, method="rodas4", dfdt=_dfdt),
}


@pytest.mark.parametrize("case", sorted(IVP_CALLBACKS))
def test_solve_ivp_callback_exception_keeps_the_partial_result(case):
    """The exception propagated, but the trajectory up to it was lost."""
    kw = dict(IVP_CALLBACKS[case])
    fun = kw.pop("fun")
    with pytest.raises(Boom, match="raised at t") as info:
        mbint.solve_ivp(fun, (0, 1), [1.0], rtol=1e-8, atol=1e-10, **kw)
    r = info.value.result
    assert r.status == -1 and not r.success
    # stopped in the step that reached past t = 0.5 (jac and dfdt: at its start)
    assert len(r.t) >= 3 and 0.4 < r.t[-1] < 0.6 and r.y.shape == (1, len(r.t))
    np.testing.assert_allclose(r.y[0], np.exp(-r.t), rtol=1e-6)
    assert "_raise_late" in _frames(info.value)      # the callback's own traceback


def test_solve_dae_residual_exception_keeps_the_partial_result():
    def residual(t, y, yp):
        _raise_late(t)
        return yp + y

    with pytest.raises(Boom) as info:
        mbint.solve_dae(residual, (0, 1), [1.0], [-1.0], rtol=1e-8, atol=1e-10)
    r = info.value.result
    assert r.status == -1 and len(r.t) >= 3 and 0 < r.t[-1] <= 0.5
    assert r.yp.shape == r.y.shape
    assert "_raise_late" in _frames(info.value)


def test_simulate_force_and_event_exceptions_keep_the_partial_trajectory():
    def force(t, q, qd):
        _raise_late(t)
        return np.zeros(3)

    with pytest.raises(Boom) as info:
        mbint.simulate(_pendulum_with(force), (0, 1), method="dopri5")
    tr = info.value.result
    assert isinstance(tr, mbint.Trajectory) and tr.status == -1
    assert len(tr.t) >= 3 and 0 < tr.t[-1] <= 0.5 and tr.q.shape == (3, len(tr.t))
    assert "_raise_late" in _frames(info.value)

    def event(t, q, qd):
        _raise_late(t)
        return 1.0

    with pytest.raises(Boom) as info:
        mbint.simulate(_pendulum_with(), (0, 1), method="radau_iia", events=event)
    assert info.value.result.status == -1 and info.value.result.t[-1] <= 0.5


# ---- a callback that returns the wrong kind of value is named -----------------------

def _named_event(t, y):
    return "abc"


def _array_event(t, y):
    return np.array([1.0, 2.0])


@pytest.mark.parametrize("kw, match", [
    (dict(events=_named_event), r"events\[0\] \(_named_event\) returned 'abc' \(str\)"),
    (dict(events=[lambda t, y: 1.0, _array_event]),
     r"events\[1\] \(_array_event\) returned an array of shape \(2,\)"),
    (dict(fun=lambda t, y: -1j * y), r"fun\(t, y\) returned complex values"),
    (dict(fun=lambda t, y: "x"), r"fun\(t, y\) returned 'x' \(str\)"),
    (dict(method="radau_iia", jac=lambda t, y: [[1j]]), r"jac\(t, y\) returned complex values"),
    (dict(method="cvode_bdf", fun=lambda t, y: -1j * y), r"fun\(t, y\) returned complex"),
])
def test_a_callback_returning_the_wrong_kind_is_named(kw, match):
    """A bare TypeError ("must be real number, not str", "Cannot cast array data from
    dtype('complex128')...") named no callback and not what it returned."""
    kw = dict(kw)
    fun = kw.pop("fun", lambda t, y: -y)
    with pytest.raises((TypeError, ValueError), match=match) as info:
        mbint.solve_ivp(fun, (0, 1), [1.0], **kw)
    assert info.value.__cause__ is not None    # NumPy's own message is kept as the cause


def test_dae_and_model_callbacks_returning_the_wrong_kind_are_named():
    with pytest.raises(TypeError, match=r"residual\(t, y, yp\) returned complex values"):
        mbint.solve_dae(lambda t, y, yp: yp + 1j * y, (0, 1), [1.0], [-1.0])
    with pytest.raises((TypeError, ValueError), match=r"force .*: fn returned .no. \(str\)"):
        mbint.simulate(_pendulum_with(lambda t, q, qd: "no"), (0, 0.1))


# ---- arguments that cannot give a run ---------------------------------------------------

def test_fixed_step_count_that_overflows_is_a_value_error():
    """(0, 1e308) with h = 0.01: OverflowError "cannot convert float infinity to
    integer" from the step count."""
    with pytest.raises(ValueError, match=r"h: the fixed step h = 0.01 needs inf steps"):
        mbint.solve_ivp(lambda t, y: -y, (0, 1e308), [1.0], method="rk4", h=0.01)


def test_simulate_refuses_more_fixed_steps_than_max_steps_as_solve_ivp_does():
    """simulate returned status -1 and an empty trajectory where solve_ivp raised."""
    with pytest.raises(ValueError, match="h: the fixed step h = 0.001 needs 1e\\+03 steps"):
        mbint.solve_ivp(lambda t, y: -y, (0, 1), [1.0], method="rk4", h=1e-3, max_steps=10)
    with pytest.raises(ValueError, match="h: the fixed step h = 0.001 needs 1e\\+03 steps"):
        mbint.simulate(models.pendulum_chain(2), (0, 1), method="rk4", h=1e-3, max_steps=10)


def test_zero_atol_on_a_zero_component_is_refused():
    """atol = 0 with y0_i = 0: every method failed at t0 blaming the right-hand side "at
    t = -nan" (the first error weight rtol |y0_i| is 0); IDA failed in IDACalcIC."""
    with pytest.raises(ValueError, match=r"atol\[0\] = 0 where y0\[0\] = 0"):
        mbint.solve_ivp(lambda t, y: -y, (0, 1), [0.0, 1.0], atol=0)
    with pytest.raises(ValueError, match=r"atol\[0\] = 0 where y0\[0\] = 0"):
        mbint.solve_dae(lambda t, y, yp: yp + y, (0, 1), [0.0, 1.0], atol=0)
    m = models.stiff_double_pendulum()
    with pytest.raises(ValueError, match=r"atol.* = 0 where"):
        mbint.simulate(m, (0, 0.1), atol=0)
    # pure relative control on components that are not zero still runs
    r = mbint.solve_ivp(lambda t, y: -y, (0, 1), [1.0, 2.0], atol=0, rtol=1e-8)
    assert r.success and abs(r.y[0, -1] - np.exp(-1)) < 1e-7


def test_sparse_linear_algebra_without_sparse_kernels_is_a_value_error():
    """RuntimeError "mb_index1_init_ex: sparse mode unavailable" from the C side."""
    m = models.pendulum_chain(3)
    m.add_force(None, lambda t, q, qd: np.zeros(m.nq))
    with pytest.raises(ValueError, match="linear_algebra='sparse'.*Python forces"):
        mbint.simulate(m, (0, 0.1), linear_algebra="sparse")
    s = mbint.SpatialModel(name="ball")
    b = s.add_body(1.0, (0.1, 0.1, 0.1), name="b")
    s.add_spherical(s.ground, b, (0.0, 0.0, 0.0))
    assert mbint.simulate(s, (0, 0.1), linear_algebra="sparse").success  # spatial_sparse.c
    s.add_force(b, lambda t, q, qd: np.zeros(6))  # a callback force: no sparse kernels
    with pytest.raises(ValueError, match="linear_algebra='sparse'.*SpatialModel with callback"):
        mbint.simulate(s, (0, 0.1), linear_algebra="sparse")
    assert mbint.simulate(s, (0, 0.1), linear_algebra="dense").success


def test_table_errors_print_the_number():
    """PyErr_Format has no %g: the message read "i = %g must be an integer"."""
    joints = np.zeros((1, len(_core.planar_layout()["joint"])))
    joints[0, 0], joints[0, 1], joints[0, 2] = 1, 0.5, -1
    with pytest.raises(ValueError, match=r"joints row 0: i = 0.5 must be an integer in \[-1, 1\)"):
        _core.mech_planar(np.array([[1.0, 1.0]]), np.zeros(2), joints,
                          np.zeros((0, len(_core.planar_layout()["force"]))), 2, None)
    with pytest.raises(ValueError, match="min_ratio must be at least 1, got 0.5"):
        _core.sp_propose(np.eye(2), min_ratio=0.5)
