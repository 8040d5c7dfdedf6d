"""Finite-difference Jacobians (csrc/core/jacobian.c): with a sparsity pattern the
structurally independent columns are perturbed together (Curtis-Powell-Reid), so a
tridiagonal Jacobian costs 3 evaluations of f instead of n, with the same result."""
import numpy as np
import pytest

import mbint

N = 50


def diffusion(t, y):
    """Nonlinear 1-D reaction-diffusion, u_t = u_xx - u^3, Dirichlet 0 at both ends."""
    dx2 = 1.0 / (N + 1) ** 2
    up = np.concatenate(([0.0], y, [0.0]))
    return (up[2:] - 2.0 * up[1:-1] + up[:-2]) / dx2 - y ** 3


def pattern():
    return (np.abs(np.subtract.outer(np.arange(N), np.arange(N))) <= 1).astype(np.uint8)


def analytic_jac(t, y):
    dx2 = 1.0 / (N + 1) ** 2
    J = (np.diag(np.full(N - 1, 1.0), -1) + np.diag(np.full(N - 1, 1.0), 1)
         - 2.0 * np.eye(N)) / dx2
    return J - np.diag(3.0 * y ** 2)


Y0 = np.sin(np.pi * np.linspace(0, 1, N + 2)[1:-1])


@pytest.mark.parametrize("method", ["bdf", "radau_iia", "rodas4"])
def test_sparsity_grouping(method):
    kw = dict(method=method, rtol=1e-6, atol=1e-9)
    dense = mbint.solve_ivp(diffusion, (0, 0.1), Y0, **kw)
    sparse = mbint.solve_ivp(diffusion, (0, 0.1), Y0, jac_sparsity=pattern(), **kw)
    exact = mbint.solve_ivp(diffusion, (0, 0.1), Y0, jac=analytic_jac, **kw)
    assert dense.success and sparse.success and exact.success
    np.testing.assert_allclose(sparse.y[:, -1], exact.y[:, -1], rtol=1e-5, atol=1e-8)
    np.testing.assert_allclose(dense.y[:, -1], exact.y[:, -1], rtol=1e-5, atol=1e-8)
    # same steps and Jacobian count in all three runs (the FD Jacobians agree to
    # rounding), so the extra evaluations are exactly the finite differences:
    # N per Jacobian without the pattern, 3 (the number of column groups) with it
    assert dense.nsteps == sparse.nsteps == exact.nsteps
    assert dense.njev == sparse.njev == exact.njev
    assert dense.nfev - exact.nfev == N * dense.njev
    assert sparse.nfev - exact.nfev == 3 * sparse.njev


def test_sparsity_shape_checked():
    with pytest.raises(ValueError, match="jac_sparsity"):
        mbint.solve_ivp(diffusion, (0, 0.1), Y0, method="bdf", jac_sparsity=np.ones((3, 3)))
