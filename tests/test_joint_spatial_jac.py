"""The exact Jacobian of formulation="joint" on hand-built SpatialModel trees (issue 23;
csrc/mbs/joint_spatial_deriv.c): df/dy of y' = f(t, y), y = (z, z') the joint
coordinates and rates (a ball joint's four Euler parameters and their rates), against
central differences of the same f (an independent oracle: only f is shared), at random
states off the unit sphere of each ball's p, on a spherical pendulum, a 3-D double
pendulum, ropes of 10 and 40 rods and a chain with a TSDA, an RSDA, a slider and a Python
force; the exact Jacobian is far closer to the central differences than the forward
differences it replaced; implicit methods on the joint formulation give the motion of
the index-1 formulation.

The norm: the largest absolute error over each of the blocks df/dz and df/dz' (the
z'' rows), divided by the largest entry of the central-difference block.  The bound
1e-6: the central differences (step 1e-5 max(1, |y_j|)) carry a truncation error
~ 1e-10 |f'''| and a rounding error ~ eps |f| / h, which the ill-conditioned
articulated inertias of a long rope (a rod's small axial inertia) amplify to ~1e-8
(measured); forward differences (the former Jacobian) are off by ~1e-7 .. 1e-5 and
fail the separation test below."""
import numpy as np
import pytest

import mbint
from mbint import _core
from mbint.mbs.joint import SpatialJointTree
from test_joint_spatial import double_pendulum_3d, rope, spherical_pendulum, spring_chain

BALL = 3  # MB_JT_BALL (csrc/mbs/joint_tree.h)

MODELS = {
    "spherical_pendulum": spherical_pendulum,
    "double_pendulum_3d": double_pendulum_3d,
    "rope10": lambda: rope(10),
    "rope40": lambda: rope(40),
    "spring_chain": spring_chain,
}


def _probe(m, tree, Y, what):
    return _core.form_probe(m._linalg_handle(), "joint", np.atleast_2d(Y), what,
                            tree=tree._handle)


def _states(tree, k, seed=3):
    """k random states (z, z'): each ball's p = (1.5, 0, 0, 0) + N(0, 0.5^2) (|p| != 1,
    so the columns along p's norm are tested too), other coordinates and all rates
    N(0, 0.5^2)."""
    rng = np.random.default_rng(seed)
    Y = 0.5 * rng.standard_normal((k, 2 * tree.nz))
    o = 0
    for ty in tree._typ:
        if ty == BALL:
            Y[:, o] += 1.5
        o += 4 if ty == BALL else 1
    return Y


def _central(m, tree, Y, h=1e-5):
    """df/dy by central differences of f, step h max(1, |y_j|)."""
    n = Y.shape[1]
    J = np.empty((Y.shape[0], n, n))
    for j in range(n):
        hj = h * np.maximum(1.0, np.abs(Y[:, j]))
        Yp, Ym = Y.copy(), Y.copy()
        Yp[:, j] += hj
        Ym[:, j] -= hj
        J[:, :, j] = (_probe(m, tree, Yp, "rhs") - _probe(m, tree, Ym, "rhs")) / (2 * hj[:, None])
    return J


def _block_errors(J, Jc, m):
    """The relative errors of the blocks df/dz and df/dz' (rows m.., see the module)."""
    out = []
    for cols in (slice(0, m), slice(m, 2 * m)):
        ref = Jc[:, m:, cols]
        out.append(np.abs(J[:, m:, cols] - ref).max() / np.abs(ref).max())
    return out


@pytest.mark.parametrize("name", list(MODELS))
def test_exact_jacobian_equals_central_differences(name):
    m = MODELS[name]()
    tree = SpatialJointTree(m)
    Y = _states(tree, k=2 if name == "rope40" else 4)
    nz = tree.nz
    J, Jc = _probe(m, tree, Y, "jac"), _central(m, tree, Y)
    # the kinematic rows [0 I] exactly
    top = np.hstack([np.zeros((nz, nz)), np.eye(nz)])
    assert np.array_equal(J[:, :nz, :], np.broadcast_to(top, (len(Y), nz, 2 * nz)))
    ez, ezd = _block_errors(J, Jc, nz)
    assert ez <= 1e-6 and ezd <= 1e-6, (ez, ezd)


@pytest.mark.parametrize("name", ["spherical_pendulum", "rope10", "spring_chain"])
def test_exact_jacobian_is_closer_than_forward_differences(name):
    """Against central differences, the exact Jacobian is closer than the forward
    differences (error ~ sqrt(eps) |f_yy| h) by a factor 10 at least: what tells the
    exact columns from a difference Jacobian."""
    m = MODELS[name]()
    tree = SpatialJointTree(m)
    Y = _states(tree, k=3, seed=5)
    Jc = _central(m, tree, Y)
    e_exact = max(_block_errors(_probe(m, tree, Y, "jac"), Jc, tree.nz))
    e_fd = max(_block_errors(_probe(m, tree, Y, "jac_fd"), Jc, tree.nz))
    assert e_exact < 0.1 * e_fd, (e_exact, e_fd)


def test_ball_columns_scale_with_the_norm_of_p():
    """f depends on a ball's p through p / |p| except for the term -|p'|^2 p, so at a
    state with p' = 0 the columns satisfy df/dp . p = 0 for the rotation part: scaling
    p leaves z'' of the other joints unchanged (Euler's theorem for a function of degree
    0), an identity the exact Jacobian must meet to rounding."""
    m = rope(3)
    tree = SpatialJointTree(m)
    Y = _states(tree, k=3, seed=7)
    nz = tree.nz
    Y[:, nz:] = 0.0
    J = _probe(m, tree, Y, "jac")
    for k in range(3):
        for b in range(3):
            p = Y[k, 4 * b:4 * b + 4]
            d = J[k, nz:, 4 * b:4 * b + 4] @ p
            assert np.abs(d).max() <= 1e-10 * np.abs(J[k, nz:, :nz]).max(), (k, b, d)


@pytest.mark.parametrize("method", ["radau_iia", "bdf", "rodas4"])
def test_implicit_methods_on_joint_equal_index1(method):
    """The motion of the spring chain (TSDA, RSDA, slider, ball joint, Python force) and
    of a 5-rod rope by an implicit method on the joint formulation, which uses the
    exact Jacobian, against the index-1 formulation by dop853 at tight tolerance."""
    for build, tol in ((spring_chain, 1e-6), (lambda: rope(5), 1e-6)):
        m = build()
        ref = mbint.simulate(m, (0.0, 0.5), method="dop853", formulation="index1",
                             rtol=1e-12, atol=1e-12, t_eval=np.linspace(0, 0.5, 6))
        jt = mbint.simulate(m, (0.0, 0.5), method=method, formulation="joint",
                            rtol=1e-10, atol=1e-10, t_eval=np.linspace(0, 0.5, 6))
        rows = [r for b in range(ref.q.shape[0] // 7) for r in range(7 * b, 7 * b + 3)]
        err = np.abs(jt.q[rows] - ref.q[rows]).max()
        assert err <= tol, (method, err)
