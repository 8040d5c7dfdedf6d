"""The joint-coordinate engine (issue 23, csrc/mbs/joint_tree.c through
mbint.mbs.joint.JointTree) against Pinocchio as the oracle.

On fixed-base robots of example-robot-data at random states: the articulated-body
algorithm equals Pinocchio's ``aba``, the recursive Newton-Euler algorithm its ``rnea``,
the composite-rigid-body algorithm its ``crba`` (all to 1e-9 relative), the link frames
its forward kinematics; internally ABA = CRBA^-1 (tau - RNEA(q, q', 0)).  Expected values
come from Pinocchio or from another algorithm of the engine, never from the code path
under test.
"""
import math
from pathlib import Path

import numpy as np
import pytest

import mbint
from mbint.mbs.joint import JointTree
from mbint.mbs.spatial import matrix_from_quat

yourdfpy = pytest.importorskip("yourdfpy")
pin = pytest.importorskip("pinocchio")


from robots import ROBOTS, needs_robots, set_joint_coordinates  # noqa: E402

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
        return set_joint_coordinates(q, self.joints, x)

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
@pytest.mark.parametrize("rel", CASES, ids=[Path(c).stem for c in CASES])
def test_aba_derivatives_equal_pinocchio(rel):
    """d(q'')/dq and d(q'')/dq' (RNEA differentiated in forward mode, M^-1 by CRBA's
    Cholesky factor) equal Pinocchio's computeABADerivatives to 1e-9 relative."""
    path = _urdf(rel)
    m = mbint.load_urdf(path, damping=False)
    tree, pn = JointTree(m), Oracle(path, m.joint_names)
    worst = 0.0
    for _ in range(3):
        x, xd, tau, _ = _state(tree.n)
        Aq, Av = tree.aba_derivatives(x, xd, tau)
        pin.computeABADerivatives(pn.model, pn.data, pn.q(x), pn.v(xd), pn.v(tau))
        Rq = pn.data.ddq_dq[np.ix_(pn.iv, pn.iv)]
        Rv = pn.data.ddq_dv[np.ix_(pn.iv, pn.iv)]
        worst = max(worst, np.linalg.norm(Aq - Rq) / np.linalg.norm(Rq),
                    np.linalg.norm(Av - Rv) / np.linalg.norm(Rv))
    print(f"{Path(rel).stem}: derivatives within {worst:.1e}")
    assert worst <= 1e-9


@needs_robots
def test_aba_derivatives_with_dampers_and_inputs_equal_differences():
    """Panda with URDF dampers and time-function torques: the exact derivatives of
    accelerations(t, q, q') equal their central differences to the differences' own
    error (h = 1e-6: truncation ~1e-12 x the third derivative, round-off ~1e-10)."""
    path = _urdf("panda_description/urdf/panda.urdf")
    m = mbint.load_urdf(path, torques={"panda_joint2": (1.0, 0.5, 0.0, 2.0, 3.0, 0.0)})
    tree = JointTree(m)
    n, t, h = tree.n, 0.4, 1e-6
    assert max(j.damping for j in m.urdf_joints) > 0
    x, xd = RNG.uniform(-1, 1, n), RNG.standard_normal(n)
    x[-2:] = 0.02
    Aq, Av = tree.aba_derivatives(x, xd, t=t)
    Fq, Fv = np.zeros((n, n)), np.zeros((n, n))
    for j in range(n):
        e = np.zeros(n)
        e[j] = h
        Fq[:, j] = (tree.accelerations(t, x + e, xd) - tree.accelerations(t, x - e, xd)) / (2 * h)
        Fv[:, j] = (tree.accelerations(t, x, xd + e) - tree.accelerations(t, x, xd - e)) / (2 * h)
    assert np.linalg.norm(Aq - Fq) <= 1e-7 * np.linalg.norm(Fq)
    assert np.linalg.norm(Av - Fv) <= 1e-7 * np.linalg.norm(Fv)


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
    heavy = tmp_path / "heavy.urdf"  # the rod on a base with mass: a floating base
    heavy.write_text(open(path).read().replace(
        '<link name="base"/>', '<link name="base"><inertial><mass value="1"/><inertia ixx="0.1" '
        'iyy="0.1" izz="0.1" ixy="0" ixz="0" iyz="0"/></inertial></link>'))
    with pytest.raises(ValueError, match="floating-base tree"):
        JointTree(mbint.load_urdf(str(heavy), floating_base=True)).aba([0.0], [0.0])
    with pytest.raises(ValueError, match="Python functions"):
        JointTree(mbint.load_urdf(path, torques={"hinge": lambda t: t}))
    with pytest.raises(ValueError, match="not joint inputs"):
        JointTree(_with_force(path))
    with pytest.raises(TypeError, match="UrdfModel"):
        JointTree(mbint.SpatialModel())
    m = mbint.load_urdf(path)  # a joint the tree does not know: a second hinge, a loop
    m.add_revolute(m.ground, m.bodies[0], (0.0, 0.0, -1.0), (0.0, 1.0, 0.0), name="loop")
    with pytest.raises(ValueError, match="loop"):
        JointTree(m)
    m = mbint.load_urdf(path)
    m.add_body(1.0, 0.01 * np.eye(3), r=(1.0, 0.0, 0.0))
    with pytest.raises(ValueError, match="bodies were added"):
        JointTree(m)
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


# ---------------------------------------------------------------- formulation="joint"
from urdf_chains import rod_chain  # noqa: E402


def _same_motion(m, t_end, rtol=1e-10, atol=1e-10, **kw):
    """The joint formulation and the body-coordinate index-1 formulation of one model, at
    the same output times (dopri5 at tight tolerances on both)."""
    tj = mbint.simulate(m, (0, t_end), "dop853", formulation="joint", rtol=rtol, atol=atol, **kw)
    ti = mbint.simulate(m, (0, t_end), "dop853", formulation="index1", rtol=rtol, atol=atol,
                        t_eval=tj.t, **kw)
    assert tj.success and ti.success
    return tj, ti


@needs_robots
def test_joint_formulation_reproduces_body_coordinates_ur5():
    """A UR5 falling under gravity from a bent pose with URDF damping and a time-function
    torque on one joint, 1 s: the body coordinates, rates, accelerations and joint angles
    of formulation="joint" are those of the index-1 body-coordinate formulation."""
    path = _urdf("ur_description/urdf/ur5_robot.urdf")
    m = mbint.load_urdf(path, q=[0.1, -1.0, 0.5, 0.3, 0.2, 0.0], qd=[0.5, 0, -0.3, 0, 1, 0],
                        torques={"elbow_joint": (1.0, 0.0, 0.0, 5.0, 4.0, 0.0)})
    tj, ti = _same_motion(m, 1.0)
    assert tj.formulation == "joint" and tj.q.shape == ti.q.shape
    assert np.abs(tj.q - ti.q).max() <= 1e-7
    assert np.abs(tj.qd - ti.qd).max() <= 1e-6
    assert np.abs(tj.qdd - ti.qdd).max() <= 1e-4 * np.abs(ti.qdd).max()
    # the multipliers of the body-coordinate mechanism at each output's (q, q')
    assert np.abs(tj.lam - ti.lam).max() <= 1e-6 * np.abs(ti.lam).max()
    for nm in m.joint_names:
        assert np.abs(tj.output(f"{nm}.angle") - ti.output(f"{nm}.angle")).max() <= 1e-7
        # the integrated joint coordinates are the joint angles of the body state
        k = m.joint_names.index(nm)
        assert np.abs(tj.x_joint[k] - tj.output(f"{nm}.angle")).max() <= 1e-9
    # Euler parameters continuous along the run (the sign of p is chosen so)
    for b in m.bodies:
        P = tj.q[7 * b.index + 3:7 * b.index + 7]
        assert np.all(np.einsum("ij,ij->j", P[:, 1:], P[:, :-1]) > 0)


def test_joint_formulation_reproduces_a_double_pendulum(tmp_path):
    """A spatial double pendulum of rods (axes y then x), 1 s: same body motion as the
    index-1 formulation, and the same positions from the dense outputs."""
    m = mbint.load_urdf(rod_chain(tmp_path, 2, axes="yx"), q=[1.0, 0.5], qd=[0.0, 2.0])
    tj, ti = _same_motion(m, 1.0, dense_output=True)
    assert np.abs(tj.q - ti.q).max() <= 1e-7
    ts = np.linspace(0.05, 0.95, 7)
    qj, qdj = tj.state(ts)
    qi, qdi = ti.state(ts)
    pos = [slice(7 * b.index, 7 * b.index + 3) for b in m.bodies]
    assert max(np.abs(qj[s] - qi[s]).max() for s in pos) <= 1e-6
    assert max(np.abs(qdj[s] - qdi[s]).max() for s in pos) <= 1e-5


@needs_robots
def test_energy_is_conserved_undamped_robot():
    """Panda without damping and without torques: kinetic + potential energy of the body
    state is constant to the tolerance (a property of the equations, not of the code)."""
    path = _urdf("panda_description/urdf/panda.urdf")
    n = 9
    m = mbint.load_urdf(path, damping=False, q=RNG.uniform(-1, 1, n) * np.r_[np.ones(7), 0, 0],
                        qd=np.r_[RNG.standard_normal(7), 0, 0])
    tr = mbint.simulate(m, (0, 1.0), "dop853", formulation="joint", rtol=1e-11, atol=1e-11)
    e = tr.energy()
    total = np.asarray(e.total, float)
    scale = np.abs(np.asarray(e.kinetic)).max()
    assert scale > 1.0
    assert np.ptp(total) <= 1e-8 * scale
    # with the URDF damping the energy only decreases
    md = mbint.load_urdf(path, q=m.joint_state(m.q0)[0], qd=m.joint_state(m.q0, m.qd0)[1])
    td = mbint.simulate(md, (0, 1.0), "dop853", formulation="joint", rtol=1e-10, atol=1e-10)
    total = np.asarray(td.energy().total, float)
    assert total[-1] < total[0] - 1e-3 and np.all(np.diff(total) <= 1e-7 * scale)


def test_every_allowed_method_runs(tmp_path):
    """Each method the table allows on "joint" runs a damped double pendulum of rods for
    0.5 s to within its accuracy of a tight reference."""
    from mbint.methods import method_info
    from mbint.mbs.formulations import formulation
    m = mbint.load_urdf(rod_chain(tmp_path, 2, axes="yx", damping=0.05), q=[0.8, -0.5])
    ref = mbint.simulate(m, (0, 0.5), "radau_iia", formulation="index1", rtol=1e-11,
                         atol=1e-12)
    names = formulation("joint").methods()
    for must in ("dopri5", "rk4", "adams", "bdf", "radau_iia", "rodas4", "cvode_bdf",
                 "cvode_adams", "rosenbrock_nystrom", "llm"):
        assert must in names
    for meth in names:
        info = method_info(meth)
        kw = dict(rtol=1e-6, atol=1e-8)
        if info.adaptive == "none" or meth == "nystrom_midpoint":
            kw = dict(h=1e-3)
        tr = mbint.simulate(m, (0, 0.5), meth, formulation="joint", **kw)
        assert tr.success, (meth, tr.message)
        err = np.abs(tr.q[:, -1] - ref.q[:, -1]).max()
        assert err <= 1e-2, (meth, err)


def test_events_see_body_coordinates(tmp_path):
    """A terminal event on the tip body's height (body coordinates) stops the joint run
    where the index-1 run stops."""
    m = mbint.load_urdf(rod_chain(tmp_path, 2), q=[1.2, 0.0])
    b = m.bodies[-1]

    def low(t, q, qd):
        return q[7 * b.index + 2] + 0.7

    low.terminal = True
    tj = mbint.simulate(m, (0, 2), "dop853", formulation="joint", events=low, rtol=1e-10,
                        atol=1e-10)
    ti = mbint.simulate(m, (0, 2), "dop853", formulation="index1", events=low, rtol=1e-10,
                        atol=1e-10)
    assert len(tj.t_events[0]) == 1 and tj.t[-1] < 2
    assert abs(tj.t_events[0][0] - ti.t_events[0][0]) <= 1e-7
    assert abs(tj.q_events[0][7 * b.index + 2, 0] + 0.7) <= 1e-9


def test_joint_formulation_refusals(tmp_path):
    from mbint import models
    # a SpatialModel that is not a tree (SpatialModel trees: tests/test_joint_spatial.py)
    with pytest.raises(ValueError, match="distance 'tie_rod_front_left' is not a joint of a "
                                         "tree.*index1"):
        mbint.simulate(models.hmmwv(), (0, 0.1), formulation="joint")
    with pytest.raises(ValueError, match="index1"):  # a planar tree with a driver
        m = models.pendulum_chain(2)
        m.add_driver(m.bodies[0], "theta", c0=0.0)
        mbint.simulate(m, (0, 0.1), formulation="joint")
    path = rod_chain(tmp_path, 2)
    with pytest.raises(ValueError, match="project"):
        mbint.simulate(mbint.load_urdf(path), (0, 0.1), formulation="joint", project=True)
    with pytest.raises(ValueError, match="Python functions"):
        mbint.simulate(mbint.load_urdf(path, torques={"j0": lambda t: 1.0}), (0, 0.1),
                       formulation="joint")


def test_joint_formulation_equals_mujoco_on_a_chain(tmp_path):
    """An independent minimal-coordinate code: MuJoCo's RK4 (h = 2.5e-4 s) on the same
    spatial chain of 6 rods (hinges about y, x, ...), 0.5 s from a bent pose: the tip of
    the last rod agrees with mbint's joint formulation (dop853 at 1e-11) to 1e-8 m."""
    mujoco = pytest.importorskip("mujoco")
    n, L, mass, h, t_end = 6, 0.1, 0.1, 2.5e-4, 0.5
    q0 = 0.3 * np.sin(np.arange(n) + 1.0)
    m = mbint.load_urdf(rod_chain(tmp_path, n, length=L, mass=mass, axes="yx"), q=q0)
    tr = mbint.simulate(m, (0, t_end), "dop853", formulation="joint", rtol=1e-11, atol=1e-11)
    F = JointTree(m).link_frames(tr.x_joint[:, -1])
    tip = F["o"][-1] + F["A"][-1] @ np.array([0.0, 0.0, -L])
    I = mass * L ** 2 / 12
    body = ""
    for k in reversed(range(n)):
        site = f'<site name="tip" pos="0 0 {-L}"/>' if k == n - 1 else ""
        body = (f'<body pos="0 0 {0 if k == 0 else -L}"><joint type="hinge" '
                f'axis="{"0 1 0" if k % 2 == 0 else "1 0 0"}"/><inertial pos="0 0 {-L / 2}" '
                f'mass="{mass}" diaginertia="{I!r} {I!r} {1e-4 * I!r}"/>{site}{body}</body>')
    mm = mujoco.MjModel.from_xml_string(
        f'<mujoco><option integrator="RK4" timestep="{h}" gravity="0 0 -9.81"><flag '
        f'contact="disable"/></option><worldbody>{body}</worldbody></mujoco>')
    d = mujoco.MjData(mm)
    d.qpos[:] = q0
    mujoco.mj_step(mm, d, nstep=int(round(t_end / h)))
    mujoco.mj_kinematics(mm, d)
    assert np.abs(d.site_xpos[0] - tip).max() <= 1e-8
    assert np.abs(d.qpos - tr.x_joint[:, -1]).max() <= 1e-7


def test_joint_trajectory_saves_and_loads(tmp_path):
    """A joint run saves and loads as any other (body coordinates); the loaded model is a
    SpatialModel without the tree, so its dense output stays over the joint state
    (``sol_joint``) and ``sol`` is None."""
    pytest.importorskip("xarray")
    m = mbint.load_urdf(rod_chain(tmp_path, 3, axes="yx"), q=[0.8, -0.5, 0.3])
    tr = mbint.simulate(m, (0, 0.3), "dopri5", formulation="joint", dense_output=True)
    tr.save(tmp_path / "run.nc")
    back = mbint.load(tmp_path / "run.nc")
    assert back.formulation == "joint" and np.array_equal(back.q, tr.q)
    assert back.sol is None
    assert np.allclose(back.sol_joint(0.2), tr.sol_joint(0.2), rtol=0, atol=1e-14)


@needs_robots
@pytest.mark.parametrize("rel", ["solo_description/robots/solo12.urdf",
                                 "ur_description/urdf/ur5_robot.urdf"],
                         ids=["solo12", "ur5"])
def test_floating_base_reproduces_body_coordinates(rel):
    """A floating base (the root a free body: its centre of mass and Euler parameters
    integrated with the joints, its acceleration from the articulated-body inertia of the
    whole tree) tumbling without gravity's support for 0.3 s from a random pose and
    twist: the same body motion as the index-1 formulation, and the energy conserved."""
    m0 = mbint.load_urdf(_urdf(rel), floating_base=True)
    n = len(m0.joint_names)
    m = mbint.load_urdf(_urdf(rel), floating_base=True, damping=False,
                        q=RNG.uniform(-1, 1, n), qd=RNG.standard_normal(n),
                        base_pose=((0.1, 0.2, 0.3), (0.9, 0.1, -0.2, 0.3)),
                        base_velocity=((0.3, -0.1, 0.2), (1.0, -2.0, 0.5)))
    tj, ti = _same_motion(m, 0.3)
    assert np.abs(tj.q - ti.q).max() <= 1e-8
    assert np.abs(tj.qd - ti.qd).max() <= 1e-7
    assert np.abs(tj.qdd - ti.qdd).max() <= 1e-6 * np.abs(ti.qdd).max()
    e = tj.energy()
    assert np.ptp(np.asarray(e.total)) <= 1e-8 * np.abs(np.asarray(e.kinetic)).max()
    for k, nm in enumerate(m.joint_names[:3]):
        assert np.abs(tj.x_joint[k] - ti.output(f"{nm}.angle")).max() <= 1e-8


@needs_robots
def test_floating_base_runs_implicit_methods():
    """The floating base with the implicit methods (Jacobian by central differences of
    the floating-base ABA), a Nyström method and CVODE: each ends near the reference."""
    path = _urdf("solo_description/robots/solo12.urdf")
    m = mbint.load_urdf(path, floating_base=True, q=RNG.uniform(-1, 1, 12),
                        base_velocity=((0.0, 0.0, 0.0), (0.5, -1.0, 0.3)))
    ref = mbint.simulate(m, (0, 0.2), "dop853", formulation="joint", rtol=1e-11, atol=1e-11)
    for meth in ("radau_iia", "bdf", "rodas4", "rosenbrock_nystrom", "cvode_bdf"):
        tr = mbint.simulate(m, (0, 0.2), meth, formulation="joint", rtol=1e-6, atol=1e-8)
        assert tr.success, (meth, tr.message)
        assert np.abs(tr.q[:, -1] - ref.q[:, -1]).max() <= 1e-3, meth


FLOATING = ["solo_description/robots/solo12.urdf",
            "anymal_b_simple_description/robots/anymal.urdf",
            "a1_description/urdf/a1.urdf",
            "talos_data/robots/talos_reduced.urdf",
            "simple_humanoid_description/urdf/simple_humanoid.urdf"]


@needs_robots
@pytest.mark.parametrize("rel", FLOATING, ids=[Path(c).stem for c in FLOATING])
def test_floating_base_aba_equals_pinocchio(rel):
    """The ABA with a free root (mb_jtree_aba_free) at random base poses, twists, joint
    states and torques: the root's acceleration (the derivative of its link-coordinate
    velocity) and the joint accelerations equal Pinocchio's free-flyer ABA."""
    path = _urdf(rel)
    m = mbint.load_urdf(path, floating_base=True, damping=False)
    tree = JointTree(m)
    pm = pin.buildModelFromUrdf(path, pin.JointModelFreeFlyer())
    pd = pm.createData()
    joints = [pm.joints[pm.getJointId(nm)] for nm in m.joint_names]
    assert pm.nv == 6 + tree.n
    worst = 0.0
    for _ in range(5):
        x, xd, tau, _ = _state(tree.n)
        e = RNG.standard_normal(4)
        e /= np.linalg.norm(e)
        R, r = matrix_from_quat(e), RNG.standard_normal(3)
        vl, wl = RNG.standard_normal(3), RNG.standard_normal(3)
        q = pin.neutral(pm)
        q[:3], q[3:7] = r, [e[1], e[2], e[3], e[0]]
        v, u = np.zeros(pm.nv), np.zeros(pm.nv)
        v[:3], v[3:6] = vl, wl
        for jm, xk, xdk, tk in zip(joints, x, xd, tau):
            if jm.nq == 2:
                q[jm.idx_q:jm.idx_q + 2] = math.cos(xk), math.sin(xk)
            else:
                q[jm.idx_q] = xk
            v[jm.idx_v], u[jm.idx_v] = xdk, tk
        ref = pin.aba(pm, pd, q, v, u)
        a0, qdd = tree.aba_floating(R, r, wl, vl, x, xd, tau)
        ours = np.concatenate([a0[3:], a0[:3]])
        ref_j = np.array([ref[jm.idx_v] for jm in joints])
        worst = max(worst, _rel(np.concatenate([ours, qdd]), np.concatenate([ref[:6], ref_j])))
    print(f"{Path(rel).stem}: floating-base ABA within {worst:.1e}")
    assert worst <= 1e-9
