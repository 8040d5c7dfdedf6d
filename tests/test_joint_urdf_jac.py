"""The exact Jacobian of formulation="joint" on URDF trees (issue 23;
csrc/mbs/joint_tree_deriv.c, O(n^2): RNEA tangents a column, M^-1 by the articulated-body
factorization), read through ``_core.form_probe`` (the formulation's own jac at given
states y = (x, x'), engine joint order), against two independent oracles:

* Pinocchio's ``computeABADerivatives`` on nine fixed-base robots of example-robot-data
  (arms, continuous joints, legged robots welded at the base, prismatic fingers) at
  random (q, q', tau), with the URDF's joint dampers and constant joint torques:
  d(q'')/dq, d(q'')/dq' (with the dampers' -M^-1 D, M^-1 from Pinocchio) to 1e-9
  relative in the Frobenius norm;
* central differences of the formulation's own f(t, y) on damped rod chains with
  time-function torques (only f is shared), including n = 450, above the old exact
  branch's 400-joint limit.
"""
from pathlib import Path

import numpy as np
import pytest

import mbint
from mbint import _core
from mbint.mbs.joint import JointTree

pin = pytest.importorskip("pinocchio")

from robots import ROBOTS, needs_robots, set_joint_coordinates  # noqa: E402
from urdf_chains import rod_chain  # noqa: E402

CASES = [
    "ur_description/urdf/ur5_robot.urdf",
    "panda_description/urdf/panda.urdf",
    "kinova_description/robots/kinova.urdf",
    "talos_data/robots/talos_left_arm.urdf",
    "double_pendulum_description/urdf/double_pendulum_continuous.urdf",
    "solo_description/robots/solo12.urdf",
    "anymal_b_simple_description/robots/anymal.urdf",
    "a1_description/urdf/a1.urdf",
    "talos_data/robots/talos_reduced.urdf",
]
RNG = np.random.default_rng(2318)


def _probe(m, tree, Y, what, t=0.0):
    return _core.form_probe(m._linalg_handle(), "joint", np.atleast_2d(Y), what, t=t,
                            tree=tree._handle)


def _frob(a, b):
    return np.linalg.norm(a - b) / np.linalg.norm(b)


class Oracle:
    """Pinocchio's fixed-base model of a file, in the engine's joint order."""

    def __init__(self, path, names):
        self.model = pin.buildModelFromUrdf(path)
        self.data = self.model.createData()
        self.joints = [self.model.joints[self.model.getJointId(nm)] for nm in names]
        assert self.model.nv == len(names)
        self.iv = [jm.idx_v for jm in self.joints]

    def q(self, x):
        return set_joint_coordinates(pin.neutral(self.model), self.joints, x)

    def v(self, x):
        v = np.zeros(self.model.nv)
        v[self.iv] = x
        return v

    def sub(self, A):
        return np.asarray(A)[np.ix_(self.iv, self.iv)]


@needs_robots
@pytest.mark.parametrize("rel", CASES, ids=[Path(c).stem for c in CASES])
def test_jacobian_equals_pinocchio_aba_derivatives(rel):
    """[0 I; A_q A_v] of the formulation = Pinocchio's ABA derivatives with the dampers."""
    path = str(ROBOTS / rel)
    m = mbint.load_urdf(path, damping=True)
    tree = JointTree(m)
    names = [m.joint_names[p] for p in tree.perm]  # the engine's order
    uj = {j.name: j for j in m.urdf_joints}
    revolute = [uj[nm].type in ("revolute", "continuous") for nm in names]
    D = np.array([uj[nm].damping for nm in names])
    pn = Oracle(path, names)
    n, worst = tree.n, 0.0
    for _ in range(3):
        x, xd = RNG.uniform(-1.5, 1.5, n), RNG.standard_normal(n)
        tau = np.where(revolute, 5 * RNG.standard_normal(n), 0.0)  # numbers: tree inputs
        m.set_joint_torques({nm: float(u) for nm, u, r in zip(names, tau, revolute) if r})
        tree = JointTree(m)
        J = _probe(m, tree, np.concatenate([x, xd]), "jac")[0]
        assert np.array_equal(J[:n, :n], np.zeros((n, n)))
        assert np.array_equal(J[:n, n:], np.eye(n))
        pin.computeABADerivatives(pn.model, pn.data, pn.q(x), pn.v(xd), pn.v(tau - D * xd))
        Minv = np.triu(pn.data.Minv) + np.triu(pn.data.Minv, 1).T
        Rq = pn.sub(pn.data.ddq_dq)
        Rv = pn.sub(pn.data.ddq_dv) - pn.sub(Minv) @ np.diag(D)
        f = _probe(m, tree, np.concatenate([x, xd]), "rhs")[0]
        ddq = np.asarray(pn.data.ddq)[pn.iv]
        worst = max(worst, _frob(J[n:, :n], Rq), _frob(J[n:, n:], Rv), _frob(f[n:], ddq))
    print(f"{Path(rel).stem} (n = {n}, dampers {D.max():g}): within {worst:.1e}")
    assert worst <= 1e-9


def _central(m, tree, y, t, h=(1e-5, 1e-4)):
    """df/dy by central differences of f at one state (steps h max(1, |y_j|))."""
    N = y.size
    Yp, Ym = np.tile(y, (N, 1)), np.tile(y, (N, 1))
    hj = np.array([h[j >= N // 2] for j in range(N)]) * np.maximum(1.0, np.abs(y))
    Yp[np.arange(N), np.arange(N)] += hj
    Ym[np.arange(N), np.arange(N)] -= hj
    return ((_probe(m, tree, Yp, "rhs", t) - _probe(m, tree, Ym, "rhs", t)) / (2 * hj[:, None])).T


@pytest.mark.parametrize("n,axes", [(1, "y"), (5, "yx"), (12, "xyz"), (450, "yx")])
def test_jacobian_equals_central_differences_on_chains(tmp_path, n, axes):
    """Damped rod chains (planar and spatial) with time-function torques at t != 0."""
    m = mbint.load_urdf(rod_chain(tmp_path, n, length=0.3, mass=0.7, axes=axes, damping=0.2),
                        damping=True)
    m.set_joint_torques({nm: (0.3, 0.5, 0.0, 1.0, 2.0, 0.4) for nm in m.joint_names})
    tree = JointTree(m)
    y = np.concatenate([RNG.uniform(-1.0, 1.0, n), RNG.standard_normal(n)])
    t = 0.7
    J = _probe(m, tree, y, "jac", t)[0]
    C = _central(m, tree, y, t)
    err = np.abs(J - C).max() / np.abs(C).max()
    print(f"chain {n} ({axes}): exact - central differences {err:.1e} of the largest entry")
    assert err <= 1e-6
    # the dampers enter dq''/dq' (-M^-1 D): without them the Jacobian differs
    m.set_joint_torques({nm: (0.3, 0.5, 0.0, 1.0, 2.0, 0.4) for nm in m.joint_names},
                        damping=False)
    J0 = _probe(m, JointTree(m), y, "jac", t)[0]
    assert np.abs(J0[n:, n:] - J[n:, n:]).max() > 1e-3 * np.abs(J[n:, n:]).max()
