"""The df/dt options of solve_ivp: a user dfdt and autonomous=True (df/dt = 0 without
evaluating f) for the methods that use df/dt (Rosenbrock, llm)."""
import numpy as np
import pytest

import mbint


def f(t, y):
    return np.array([-2.0 * y[0] + 3.0 * t + 1.0])


def ft(t, y):
    return np.array([3.0])


@pytest.mark.parametrize("method", ["llm", "ros4", "rodas4"])
def test_user_dfdt_exact_or_accurate(method):
    """y' = -2 y + 3 t + 1 is linear with b linear in t: llm is exact for any h with the
    exact df/dt; the Rosenbrock methods reach their tolerance."""
    t1 = 2.0
    exact = 1.5 * t1 - 0.25 + (1.0 + 0.25) * np.exp(-2.0 * t1)  # y(0) = 1
    r = mbint.solve_ivp(f, (0, t1), [1.0], method=method, dfdt=ft, rtol=1e-8, atol=1e-10)
    assert r.success
    tol = 1e-13 if method == "llm" else 1e-6
    assert abs(r.y[0, -1] - exact) < tol * max(1.0, abs(exact))


def test_llm_exact_with_large_fixed_step():
    exact = 1.5 * 3.0 - 0.25 + 1.25 * np.exp(-6.0)
    r = mbint.solve_ivp(f, (0, 3), [1.0], method="llm", h=1.5, dfdt=ft)
    assert abs(r.y[0, -1] - exact) < 1e-13


def test_autonomous_saves_evaluations():
    def g(t, y):
        return np.array([y[1], -np.sin(y[0])])
    a = mbint.solve_ivp(g, (0, 5), [1.0, 0.0], method="rodas4", rtol=1e-6, atol=1e-8)
    b = mbint.solve_ivp(g, (0, 5), [1.0, 0.0], method="rodas4", rtol=1e-6, atol=1e-8,
                        autonomous=True)
    assert a.nsteps == b.nsteps
    # the forward difference of f in t costs one evaluation per Jacobian
    assert a.nfev - b.nfev == a.njev
    np.testing.assert_allclose(a.y[:, -1], b.y[:, -1], rtol=1e-6)


def test_dfdt_errors():
    with pytest.raises(ValueError, match="dfdt"):
        mbint.solve_ivp(f, (0, 1), [1.0], method="ros4", dfdt=ft, autonomous=True)
    with pytest.raises(ValueError, match="dfdt"):
        mbint.solve_ivp(f, (0, 1), [1.0], method="ros4", dfdt=3.0)

    def bad(t, y):
        return np.array([1.0, 2.0])
    with pytest.raises(ValueError, match="dfdt"):
        mbint.solve_ivp(f, (0, 1), [1.0], method="ros4", dfdt=bad)
