"""The joint-coordinate engine (issue 23, csrc/mbs/joint_tree.c through
mbint.mbs.joint.JointTree) against Pinocchio as the oracle.

On fixed-base robots of example-robot-data at random states: the articulated-body
algorithm equals Pinocchio's ``aba``, the recursive Newton-Euler algorithm its ``rnea``,
the composite-rigid-body algorithm its ``crba`` (all to 1e-9 relative), the link frames
its forward kinematics; internally ABA = CRBA^-1 (tau - RNEA(q, q', 0)).  Expected values
come from Pinocchio or from another algorithm of the engine, never from the code path
under test.
"""
import importlib.metadata
import math
from pathlib import Path

import numpy as np
import pytest

import mbint
from mbint.mbs.joint import JointTree

yourdfpy = pytest.importorskip("yourdfpy")
pin = pytest.importorskip("pinocchio")


def _robots_dir():
    try:
        files = importlib.metadata.files("example-robot-data") or []
    except importlib.metadata.PackageNotFoundError:
        return None
    for f in files:
        if str(f).endswith(".urdf"):
            p = Path(f.locate())
            while p.name != "robots":
                p = p.parent
            return p
    return None


ROBOTS = _robots_dir()
needs_robots = pytest.mark.skipif(ROBOTS is None, reason="example-robot-data is not installed")

# fixed-base trees: arms, a pendulum with continuous joints, legged robots welded at the
# base (revolute trees with several branches), the panda's prismatic fingers
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
STATES = 10
RNG = np.random.default_rng(23)


def _urdf(rel):
    return str(ROBOTS / rel)


class Oracle:
    """Pinocchio's fixed-base model of a file, mbint's joint order mapped onto q and v."""

    def __init__(self, path, names):
        self.model = pin.buildModelFromUrdf(path)
        self.data = self.model.createData()
        assert all(self.model.existJointName(n) for n in names)
        self.ids = [self.model.getJointId(n) for n in names]
        self.joints = [self.model.joints[i] for i in self.ids]
        assert self.model.nv == len(names)
        self.iv = [jm.idx_v for jm in self.joints]

    def q(self, x):
        q = pin.neutral(self.model)
        for jm, xk in zip(self.joints, x):
            if jm.nq == 2:   # continuous: (cos, sin)
                q[jm.idx_q:jm.idx_q + 2] = math.cos(xk), math.sin(xk)
            else:
                q[jm.idx_q] = xk
        return q

    def v(self, x):
        v = np.zeros(self.model.nv)
        v[self.iv] = x
        return v

    def ours(self, v):
        return np.asarray(v)[self.iv]


def _rel(a, b):
    return np.linalg.norm(np.asarray(a) - np.asarray(b)) / np.linalg.norm(b)


def _state(n):
    return (RNG.uniform(-1.5, 1.5, n), RNG.standard_normal(n), 5 * RNG.standard_normal(n),
            RNG.standard_normal(n))


@needs_robots
@pytest.mark.parametrize("rel", CASES, ids=[Path(c).stem for c in CASES])
def test_aba_rnea_crba_equal_pinocchio(rel):
    path = _urdf(rel)
    m = mbint.load_urdf(path, damping=False)
    tree, pn = JointTree(m), Oracle(path, m.joint_names)
    n = tree.n
    assert n == len(m.joint_names) >= 2
    worst = dict(aba=0.0, rnea=0.0, crba=0.0, crba_aba=0.0)
    for _ in range(STATES):
        x, xd, tau, a = _state(n)
        q, v = pn.q(x), pn.v(xd)
        ref = pn.ours(pin.aba(pn.model, pn.data, q, v, pn.v(tau)))
        worst["aba"] = max(worst["aba"], _rel(tree.aba(x, xd, tau), ref))
        r = pn.ours(pin.rnea(pn.model, pn.data, q, v, pn.v(a)))
        worst["rnea"] = max(worst["rnea"], _rel(tree.rnea(x, xd, a), r))
        M = pin.crba(pn.model, pn.data, q)
        M = np.triu(M) + np.triu(M, 1).T  # Pinocchio fills the upper triangle
        M = M[np.ix_(pn.iv, pn.iv)]
        ours = tree.mass_matrix(x)
        assert np.array_equal(ours, ours.T)
        worst["crba"] = max(worst["crba"], np.linalg.norm(ours - M) / np.linalg.norm(M))
        # the engine's three algorithms agree with each other: ABA = M^-1 (tau - C)
        c = tree.rnea(x, xd, np.zeros(n))
        worst["crba_aba"] = max(worst["crba_aba"],
                                _rel(np.linalg.solve(ours, tau - c), tree.aba(x, xd, tau)))
    print(f"{Path(rel).stem} (n = {n}): " + ", ".join(f"{k} {v:.1e}" for k, v in worst.items()))
    assert max(worst.values()) <= 1e-9


@needs_robots
def test_rnea_without_gravity_and_zero_velocity_parts():
    """RNEA(q, 0, 0) is the gravity torque (Pinocchio's computeGeneralizedGravity);
    without gravity RNEA(q, q', 0) is Pinocchio's nonLinearEffects minus it."""
    path = _urdf("ur_description/urdf/ur5_robot.urdf")
    m = mbint.load_urdf(path, damping=False)
    tree, pn = JointTree(m), Oracle(path, m.joint_names)
    x, xd, _, _ = _state(tree.n)
    q, v = pn.q(x), pn.v(xd)
    g = pn.ours(pin.computeGeneralizedGravity(pn.model, pn.data, q))
    assert _rel(tree.rnea(x, np.zeros(tree.n), np.zeros(tree.n)), g) <= 1e-12
    nle = pn.ours(pin.nonLinearEffects(pn.model, pn.data, q, v))
    assert _rel(tree.rnea(x, xd, np.zeros(tree.n), gravity=False), nle - g) <= 1e-12


@needs_robots
def test_inputs_and_dampers_equal_pinocchio():
    """Panda with URDF damping (revolute joints and prismatic fingers) and torques from
    time functions: the tree's accelerations at t = 0.7 s are Pinocchio's ABA with
    tau(t) - damping * v."""
    path = _urdf("panda_description/urdf/panda.urdf")
    names = ["panda_joint2", "panda_joint5", "panda_finger_joint1"]
    f = {names[0]: 3.0, names[1]: (0.5, 1.0, 0.0, 2.0, 3.0, 0.1), names[2]: (0.0, -4.0)}
    m = mbint.load_urdf(path, torques=f)
    tree, pn = JointTree(m), Oracle(path, m.joint_names)
    assert np.ptp(pn.model.damping) > 0
    n, t = tree.n, 0.7
    x, xd = RNG.uniform(-1, 1, n), RNG.standard_normal(n)
    x[-2:] = RNG.uniform(0, 0.04, 2)
    tau = np.zeros(n)
    tau[m.joint_names.index(names[0])] = 3.0
    tau[m.joint_names.index(names[1])] = 0.5 + t + 2 * math.sin(3 * t + 0.1)
    tau[m.joint_names.index(names[2])] = -4 * t
    damp = pn.ours(pn.model.damping)
    ref = pn.ours(pin.aba(pn.model, pn.data, pn.q(x), pn.v(xd), pn.v(tau - damp * xd)))
    assert _rel(tree.accelerations(t, x, xd), ref) <= 1e-9
    extra = RNG.standard_normal(n)
    ref2 = pn.ours(pin.aba(pn.model, pn.data, pn.q(x), pn.v(xd),
                           pn.v(tau - damp * xd + extra)))
    assert _rel(tree.accelerations(t, x, xd, extra), ref2) <= 1e-9


@needs_robots
@pytest.mark.parametrize("rel", ["solo_description/robots/solo12.urdf",
                                 "panda_description/urdf/panda.urdf"])
def test_link_frames_equal_pinocchio_kinematics(rel):
    """Placement, velocity and classical acceleration of every link frame (the child
    frame of each joint) in the global frame: Pinocchio's forwardKinematics."""
    path = _urdf(rel)
    m = mbint.load_urdf(path)
    tree, pn = JointTree(m), Oracle(path, m.joint_names)
    x, xd, _, a = _state(tree.n)
    F = tree.link_frames(x, xd, a)
    pin.forwardKinematics(pn.model, pn.data, pn.q(x), pn.v(xd), pn.v(a))
    W = pin.ReferenceFrame.LOCAL_WORLD_ALIGNED
    for k, jid in enumerate(pn.ids):
        M = pn.data.oMi[jid]
        assert np.abs(F["A"][k] - M.rotation).max() <= 1e-12
        assert np.abs(F["o"][k] - M.translation).max() <= 1e-12
        vel = pin.getVelocity(pn.model, pn.data, jid, W)
        acc = pin.getClassicalAcceleration(pn.model, pn.data, jid, W)
        assert np.abs(F["v"][k] - vel.linear).max() <= 1e-11
        assert np.abs(F["w"][k] - vel.angular).max() <= 1e-11
        assert np.abs(F["a"][k] - acc.linear).max() <= 1e-10
        assert np.abs(F["alpha"][k] - acc.angular).max() <= 1e-10


def _pendulum_urdf(tmp_path, extra=""):
    """A uniform rod of length l = 1 m, m = 2 kg, on a revolute joint about y."""
    txt = f"""<robot name="rod">
      <link name="base"/>
      <link name="rod"><inertial><origin xyz="0 0 -0.5"/><mass value="2"/>
        <inertia ixx="0.1666666666666667" iyy="0.1666666666666667" izz="1e-6" ixy="0" ixz="0"
         iyz="0"/></inertial></link>
      <joint name="hinge" type="continuous"><parent link="base"/><child link="rod"/>
        <axis xyz="0 1 0"/>{extra}</joint>
    </robot>"""
    p = tmp_path / "rod.urdf"
    p.write_text(txt)
    return str(p)


def test_rod_pendulum_closed_form(tmp_path):
    """theta'' = (tau - m g (l/2) sin theta - c theta') / (m l^2 / 3) for a rod hanging
    from a hinge about +y (the rotation takes the rod's direction -z to (-sin theta, 0,
    -cos theta): the gravity torque about y is -m g (l/2) sin theta)."""
    m = mbint.load_urdf(_pendulum_urdf(tmp_path, '<dynamics damping="0.3"/>'),
                        torques={"hinge": 1.5})
    tree = JointTree(m)
    th, thd = 0.7, -1.2
    I_hinge = 2 * 1.0 ** 2 / 3
    ref = (1.5 - 2 * 9.81 * 0.5 * math.sin(th) - 0.3 * thd) / I_hinge
    assert abs(tree.accelerations(0.0, [th], [thd])[0] - ref) <= 1e-12 * abs(ref)
    assert abs(tree.mass_matrix([th])[0, 0] - I_hinge) <= 1e-12


def test_refusals(tmp_path):
    path = _pendulum_urdf(tmp_path)
    with pytest.raises(ValueError, match="floating base"):
        JointTree(mbint.load_urdf(path, floating_base=True))
    with pytest.raises(ValueError, match="Python functions"):
        JointTree(mbint.load_urdf(path, torques={"hinge": lambda t: t}))
    with pytest.raises(ValueError, match="not joint inputs"):
        JointTree(_with_force(path))
    with pytest.raises(TypeError, match="UrdfModel"):
        JointTree(mbint.SpatialModel())
    tree = JointTree(mbint.load_urdf(path))
    with pytest.raises(ValueError, match="q must be 1 finite"):
        tree.aba([0.0, 1.0], [0.0])
    with pytest.raises(ValueError, match="finite"):
        tree.aba([math.nan], [0.0])


def _with_force(path):
    m = mbint.load_urdf(path)
    b = m.bodies[0]
    m.add_force(b, lambda t, q, qd: np.zeros(6), point=(0, 0, 0), name="push")
    return m
