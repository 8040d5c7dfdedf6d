"""The exact Jacobian of formulation="joint" on PlanarModel trees (issue 23;
csrc/mbs/joint_planar.c): df/dy of y' = f(t, y), y = (z, z') the joint coordinates and
rates, against central differences of the same f (an independent oracle: only f is
shared), at random states, on the paper models, a damped chain with TSDA and RSDA
elements, a branched tree with a prismatic joint, a cart and slider with prismatic
joints, a single body (n = 1) and a long chain (the work-array formula at its
extremes); with Python forces the difference Jacobian stays (the same numbers as
forward differences of f, bit for bit); rodas4 keeps its order on a tree with
prismatic joints, and the motion equals the index-1 formulation's."""
import math

import numpy as np
import pytest

import mbint
from mbint import PlanarModel, _core, models
from mbint.mbs.joint import PlanarJointTree
from test_joint_planar import slider_crane


def _probe(m, Y, what):
    tree = PlanarJointTree(m)
    return _core.form_probe(m._linalg_handle(), "joint", np.atleast_2d(Y), what,
                            tree=tree._handle)


def _central(m, Y, h=(1e-5, 1e-3)):
    """df/dy by central differences of f, step h[0] max(1, |y_j|) in z and h[1] max(1,
    |y_j|) in z' (f is quadratic in z' for these force elements, linear dampers: the
    central difference has no truncation error there, and a larger step keeps the
    rounding of a stiff f (|f| ~ 1e6 on the LLM pendulum) small)."""
    Y = np.atleast_2d(np.asarray(Y, float))
    n = Y.shape[1]
    J = np.empty((Y.shape[0], n, n))
    for j in range(n):
        hj = h[j >= n // 2] * np.maximum(1.0, np.abs(Y[:, j]))
        Yp, Ym = Y.copy(), Y.copy()
        Yp[:, j] += hj
        Ym[:, j] -= hj
        J[:, :, j] = (_probe(m, Yp, "rhs") - _probe(m, Ym, "rhs")) / (2 * hj[:, None])
    return J


def damped_chain(n=6):
    """A chain of n links with RSDAs between neighbours, a TSDA from the ground to the
    tip and a damped TSDA between links 1 and n - 2 (a force across the tree)."""
    m = models.pendulum_chain(n, k=20.0, c=0.3, angle=0.3)
    b = m.bodies
    m.add_spring_damper(m.ground, (1.0, -1.0), b[-1], (0.25, 0.0), k=40.0, c=0.5, length0=0.5)
    m.add_spring_damper(b[1], (0.0, 0.0), b[n - 2], (0.0, 0.0), k=15.0, c=0.2, length0=0.3)
    return m


def branched():
    """A tree, not a chain: a body with two children, one of which carries a slider
    along it (revolute, revolute, revolute, translational), springs between branches."""
    m = PlanarModel(gravity=(0.0, -9.81), name="branched")
    a = m.add_body(2.0, 0.2, q=(0.5, 0.0, 0.0))
    m.add_revolute(m.ground, (0.0, 0.0), a, (-0.5, 0.0))
    b = m.add_body(1.0, 0.1, q=(1.0, -0.5, -math.pi / 2))
    m.add_revolute(a, (0.5, 0.0), b, (-0.5, 0.0))
    c = m.add_body(1.5, 0.15, q=(0.5, 0.5, math.pi / 2))
    m.add_revolute(a, (0.0, 0.0), c, (-0.5, 0.0))
    d = m.add_body(0.5, 0.02, q=(0.5, 0.7, math.pi / 2))
    m.add_translational(c, (0.0, 0.0), d, (0.0, 0.0), axis=(1.0, 0.0))
    m.add_spring_damper(b, (0.0, 0.0), d, (0.0, 0.0), k=30.0, c=0.4, length0=1.0)
    m.add_spring_damper(c, (0.0, 0.3), d, (0.0, 0.0), k=50.0, c=0.3, length0=0.2)
    m.add_rotational_spring_damper(a, c, k=8.0, c=0.2)
    return m


def single(kind):
    """n = 1: a pendulum, or a cart on a rail with a spring."""
    m = PlanarModel(gravity=(0.0, -9.81))
    if kind == "pendulum":
        b = m.add_body(1.0, 0.1, q=(0.5, 0.0, 0.0))
        m.add_revolute(m.ground, (0.0, 0.0), b, (-0.5, 0.0))
        m.add_rotational_spring_damper(m.ground, b, k=3.0, c=0.1)
    else:
        b = m.add_body(1.0, 0.1, q=(0.3, 0.3, 0.2))
        m.add_translational(m.ground, (0.0, 0.0), b, (0.0, 0.0), axis=(1.0, 1.0))
        m.add_spring_damper(m.ground, (1.0, 0.0), b, (0.0, 0.0), k=25.0, c=0.5, length0=0.4)
    return m


MODELS = {
    "rn_stiff_double_pendulum": models.stiff_double_pendulum,
    "llm_double_pendulum_stiff_spring": models.double_pendulum_stiff_spring,
    "damped_chain_6": damped_chain,
    "cart_slider": slider_crane,
    "cart_slider_reversed": lambda: slider_crane(True, True),
    "branched": branched,
    "single_pendulum": lambda: single("pendulum"),
    "single_cart": lambda: single("cart"),
    "long_chain_40": lambda: damped_chain(40),
}


def _states(m, k=4, seed=0):
    n = PlanarJointTree(m).n
    rng = np.random.default_rng(seed)
    return np.hstack([rng.uniform(-1.0, 1.0, (k, n)), rng.uniform(-2.0, 2.0, (k, n))])


def _block_errors(J, Jc, n):
    """max relative error of the blocks df/dz and df/dz' (rows n:), each against its
    own scale"""
    out = []
    for cols in (slice(0, n), slice(n, 2 * n)):
        ref = Jc[:, n:, cols]
        out.append(np.abs(J[:, n:, cols] - ref).max() / np.abs(ref).max())
    return out


@pytest.mark.parametrize("name", list(MODELS))
def test_exact_jacobian_equals_central_differences(name):
    m = MODELS[name]()
    Y = _states(m, k=2 if name.startswith("long") else 4)
    n = Y.shape[1] // 2
    J, Jc = _probe(m, Y, "jac"), _central(m, Y)
    # the kinematic rows [0 I] exactly
    assert np.array_equal(J[:, :n, :], np.broadcast_to(np.hstack([np.zeros((n, n)),
                                                                  np.eye(n)]), (len(Y), n, 2 * n)))
    ez, ezd = _block_errors(J, Jc, n)
    assert ez <= 1e-6 and ezd <= 1e-6, (ez, ezd)


def test_exact_jacobian_is_more_accurate_than_forward_differences():
    """Against central differences, the exact Jacobian is closer than the forward
    differences it replaces (their error ~ sqrt(eps) |f_yy| h)."""
    m = damped_chain(6)
    Y = _states(m)
    n = Y.shape[1] // 2
    Jc = _central(m, Y)
    e_exact = max(_block_errors(_probe(m, Y, "jac"), Jc, n))
    e_fd = max(_block_errors(_probe(m, Y, "jac_fd"), Jc, n))
    assert e_exact < 0.1 * e_fd, (e_exact, e_fd)


def test_python_forces_keep_the_difference_jacobian():
    """With a Python force the joint formulation differences f as a whole: its Jacobian
    is forward differences of f, bit for bit (and still near the central ones)."""
    m = models.pendulum_chain(3, angle=0.2, k=5.0, c=0.1)
    m.add_force(m.bodies[2], lambda t, q, qd: (0.5 * math.sin(3 * t), -0.5 * qd[7], 0.1),
                name="push")
    Y = _states(m, k=2)
    J, Jfd = _probe(m, Y, "jac"), _probe(m, Y, "jac_fd")
    assert np.array_equal(J, Jfd)
    assert max(_block_errors(J, _central(m, Y), 3)) <= 1e-5
    # without the Python force the exact Jacobian is taken instead
    m2 = models.pendulum_chain(3, angle=0.2, k=5.0, c=0.1)
    assert not np.array_equal(_probe(m2, Y, "jac"), _probe(m2, Y, "jac_fd"))


@pytest.mark.parametrize("make, T", [
    (lambda: models.pendulum_chain(3, k=40.0, c=0.5, angle=0.3), 0.5),
    (slider_crane, 0.4)], ids=["chain", "cart_slider"])
def test_jacobian_gives_rodas4_its_order(make, T):
    """rodas4 at fixed steps converges with order >= 3.5 only with the right Jacobian of
    the joint right-hand side (its order conditions use J: a wrong derivative, of a
    prismatic joint say, drops it; a broken Jacobian once gave 0.8)."""
    m = make()
    ref = mbint.simulate(m, (0.0, T), "radau_iia", formulation="index1", rtol=1e-13,
                         atol=1e-13, t_eval=[T]).q[:, -1]
    errs = []
    for k in (10, 20, 40):
        tr = mbint.simulate(m, (0.0, T), "rodas4", formulation="joint", h=T / k, t_eval=[T])
        errs.append(np.abs(tr.q[:, -1] - ref).max())
    orders = np.log2(np.array(errs[:-1]) / np.array(errs[1:]))
    assert orders.min() >= 3.5, (errs, orders)


@pytest.mark.parametrize("method", ["radau_iia", "bdf", "rodas4", "rosenbrock_nystrom"])
def test_implicit_methods_on_joint_equal_index1(method):
    """The branched tree on "joint" with each method that uses the Jacobian follows the
    index-1 run (both tight) to 1e-7."""
    m = branched()
    T, te = 0.5, np.linspace(0.0, 0.5, 11)
    a = mbint.simulate(m, (0.0, T), "radau_iia", formulation="index1", rtol=1e-12,
                       atol=1e-12, t_eval=te)
    b = mbint.simulate(m, (0.0, T), method, formulation="joint", rtol=1e-11, atol=1e-11,
                       t_eval=te)
    assert a.success and b.success
    assert np.abs(a.q - b.q).max() <= 1e-7 * max(1.0, np.abs(a.q).max())


def test_probe_refuses_bad_input():
    m = models.stiff_double_pendulum()
    tree = PlanarJointTree(m)
    h = m._linalg_handle()
    with pytest.raises(ValueError, match="what"):
        _core.form_probe(h, "joint", np.zeros((1, 4)), "hess", tree=tree._handle)
    with pytest.raises(ValueError, match="y must have shape"):
        _core.form_probe(h, "joint", np.zeros((1, 5)), "jac", tree=tree._handle)
    with pytest.raises(ValueError, match="formulation"):
        _core.form_probe(h, "nonsense", np.zeros((1, 4)), "jac", tree=tree._handle)
