"""``mbint.solve_ivp`` as a drop-in for ``scipy.integrate.solve_ivp``: the conventions
a script written for SciPy relies on, checked against exact solutions (SciPy's own
test module is run in tests/test_scipy_suite.py)."""
import math

import numpy as np
import pytest
import scipy.sparse

import mbint
from mbint.methods import ALIASES, resolve


@pytest.mark.parametrize("alias, name", [
    ("RK45", "dopri5"), ("RK23", "rk23"), ("DOP853", "dop853"), ("Radau", "radau_iia"),
    ("BDF", "bdf"), ("LSODA", "auto"), ("ode45", "dopri5"), ("ode23", "rk23"),
    ("ode113", "adams"), ("ode15s", "bdf"), ("ode23s", "ros2")])
def test_aliases(alias, name):
    assert resolve(alias) == name
    r = mbint.solve_ivp(lambda t, y: -y, (0, 1), [1.0], method=alias, rtol=1e-8, atol=1e-10)
    assert r.success and r.method == name and abs(r.y[0, -1] - math.exp(-1)) < 1e-6


def test_scipy_solver_classes_are_accepted():
    from scipy.integrate import BDF, DOP853, LSODA, RK23, RK45, Radau
    for cls in (RK23, RK45, DOP853, Radau, BDF, LSODA):
        assert resolve(cls) == ALIASES[cls.__name__.lower()]


def test_args_any_sequence_is_unpacked():
    """A list used to be passed as one argument."""
    def f(t, y, a, b):
        return a * y + b

    for args in ((-1.0, 0.0), [-1.0, 0.0], np.array([-1.0, 0.0])):
        r = mbint.solve_ivp(f, (0, 1), [1.0], args=args, rtol=1e-8, atol=1e-10)
        assert abs(r.y[0, -1] - math.exp(-1)) < 1e-7
    with pytest.raises(TypeError, match="cannot be unpacked"):
        mbint.solve_ivp(lambda t, y, a: a * y, (0, 1), [1.0], args=-1.0)


@pytest.mark.parametrize("method", ["dopri5", "radau_iia", "bdf", "cvode_bdf", "arkode_erk"])
def test_infinite_end_with_a_terminal_event(method):
    """Projectile thrown up at 10 m/s: lands at t = 2 v / g, whatever the (infinite) end."""
    g, v = 9.81, 10.0

    def land(t, y):
        return y[0]
    land.terminal, land.direction = True, -1
    r = mbint.solve_ivp(lambda t, y: [y[1], -g], (0, np.inf), [0.0, v], method=method,
                        events=land, rtol=1e-8, atol=1e-10)
    assert r.status == 1 and abs(r.t_events[0][0] - 2 * v / g) < 1e-7
    with pytest.raises(ValueError, match="terminal event"):
        mbint.solve_ivp(lambda t, y: [y[1], -g], (0, np.inf), [0.0, v], method=method)


@pytest.mark.parametrize("method", ["radau_iia", "bdf", "rodas4"])
def test_sparse_jacobians(method):
    A = np.array([[-1.0, -5.0], [1.0, 1.0]])

    def exact(t):
        return np.array([-5 * np.sin(2 * t), 2 * np.cos(2 * t) + np.sin(2 * t)])

    for jac in (scipy.sparse.csc_matrix(A), lambda t, y: scipy.sparse.csr_matrix(A)):
        r = mbint.solve_ivp(lambda t, y: A @ y, (0, 2), [0.0, 2.0], method=method, jac=jac,
                            rtol=1e-8, atol=1e-10)
        assert r.success and np.abs(r.y[:, -1] - exact(2.0)).max() < 1e-6
    # a sparse pattern for finite differences: tridiagonal heat equation
    n = 30
    T = scipy.sparse.diags([np.ones(n - 1), -2 * np.ones(n), np.ones(n - 1)], [-1, 0, 1])
    Td = T.toarray()
    r = mbint.solve_ivp(lambda t, y: Td @ y, (0, 1), np.ones(n), method=method,
                        jac_sparsity=T, rtol=1e-8, atol=1e-10)
    w, V = np.linalg.eigh(Td)
    ex = V @ (np.exp(w) * (V.T @ np.ones(n)))
    assert r.success and np.abs(r.y[:, -1] - ex).max() < 1e-6


@pytest.mark.parametrize("method", ["dopri5", "radau_iia", "cvode_bdf"])
def test_array_rtol(method):
    """Per-component rtol: y' = -y twice, rtol [1e-3, 1e-9] (atol negligible).  The
    strict component rules the weighted RMS norm: the run is as accurate as one at
    rtol 1e-9 (within the factor sqrt(2) of the RMS over two components), far more
    than one at 1e-3."""
    def err(rtol):
        r = mbint.solve_ivp(lambda t, y: -y, (0, 5), [1.0, 1.0], method=method, rtol=rtol,
                            atol=1e-14)
        assert r.success
        return np.abs(r.y[:, -1] - math.exp(-5)).max() / math.exp(-5)

    e_mixed, e_loose, e_tight = err([1e-3, 1e-9]), err(1e-3), err(1e-9)
    assert e_mixed < 3 * e_tight and e_mixed < 1e-3 * e_loose, (e_mixed, e_tight, e_loose)
    with pytest.warns(UserWarning, match="too small"):
        mbint.solve_ivp(lambda t, y: -y, (0, 1), [1.0, 1.0], method=method, rtol=[1e-3, 1e-17])


def test_empty_state_and_zero_interval():
    r = mbint.solve_ivp(lambda t, y: y, (0, 10), np.zeros(0), dense_output=True)
    assert r.success and r.y.shape == (0, 2) and r.sol([1, 2]).shape == (0, 2)
    r = mbint.solve_ivp(lambda t, y: -y, (3, 3), [2.0, 1.0], dense_output=True)
    assert r.t.tolist() == [3.0, 3.0] and r.y.tolist() == [[2.0, 2.0], [1.0, 1.0]]
    assert r.sol(7.0).tolist() == [2.0, 1.0]


def test_event_attributes_and_shapes():
    def zero(t, y):
        return y[0]
    zero.terminal = None          # as SciPy: not terminal

    def never(t, y):
        return 1.0

    r = mbint.solve_ivp(lambda t, y: [y[1], -y[0]], (0, 10), [1.0, 0.0], events=[zero, never],
                        rtol=1e-10, atol=1e-12)
    assert r.status == 0 and len(r.t_events[0]) == 3   # cos t = 0 in (0, 10)
    assert np.allclose(r.t_events[0], np.pi / 2 + np.pi * np.arange(3), atol=1e-8)
    assert r.y_events[0].shape == (3, 2) and r.y_events[1].shape == (0,)  # SciPy's shapes


def test_first_step_beyond_the_span():
    with pytest.raises(ValueError, match="first_step"):
        mbint.solve_ivp(lambda t, y: -y, (0, 1), [1.0], first_step=5.0)


@pytest.mark.parametrize("method", ["dopri5", "dop853", "bdf", "radau_iia", "rodas4"])
def test_complex_state(method):
    """y' = (-1 + 10 i) y, integrated as real pairs: the exact solution, the dense output
    and events on complex states; a complex Jacobian is turned into its real form."""
    lam = -1 + 10j

    def f(t, y):
        return lam * y

    def jac(t, y):
        return np.array([[lam]])

    def real_part_zero(t, y):
        return y[0].real

    y0 = np.array([1.0 + 0.5j])
    r = mbint.solve_ivp(f, (0, 1), y0, method=method, jac=jac, dense_output=True,
                        events=real_part_zero, rtol=1e-8, atol=1e-10)
    assert r.success and np.iscomplexobj(r.y) and r.y.shape == (1, len(r.t))
    assert np.abs(r.y[0] - y0[0] * np.exp(lam * r.t)).max() < 1e-6
    tc = np.linspace(0, 1, 7)
    assert np.abs(r.sol(tc)[0] - y0[0] * np.exp(lam * tc)).max() < 1e-5
    # zeros of Re(y) = e^-t (cos 10 t - 0.5 sin 10 t): tan(10 t) = 2
    want = (np.arctan(2.0) + np.pi * np.arange(3)) / 10   # three of them in (0, 1)
    assert np.allclose(r.t_events[0], want, atol=1e-7)
    assert np.iscomplexobj(r.y_events[0]) and np.all(np.abs(r.y_events[0][:, 0].real) < 1e-7)
