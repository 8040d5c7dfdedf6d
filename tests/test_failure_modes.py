"""Failures that name their cause.

A callback that returns the wrong kind of value is named with what it returned.
Each test failed on the code before its fix (the docstring says what the old code
did)."""
import numpy as np
import pytest

import mbint
from mbint import _core, models


def _pendulum_with(force=None):
    m = models.pendulum_chain(1)
    if force is not None:
        m.add_force(None, force)
    return m


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



# ---- messages of the binding ----------------------------------------------------------

def test_table_errors_print_the_number():
    """PyErr_Format has no %g: the message read "i = %g must be an integer"."""
    joints = np.zeros((1, len(_core.planar_layout()["joint"])))
    joints[0, 0], joints[0, 1], joints[0, 2] = 1, 0.5, -1
    with pytest.raises(ValueError, match=r"joints row 0: i = 0.5 must be an integer in \[-1, 1\)"):
        _core.mech_planar(np.array([[1.0, 1.0]]), np.zeros(2), joints,
                          np.zeros((0, len(_core.planar_layout()["force"]))), 2, None)
    with pytest.raises(ValueError, match="min_ratio must be at least 1, got 0.5"):
        _core.sp_propose(np.eye(2), min_ratio=0.5)
