"""URDF import (issue 22): mbint.load_urdf against Pinocchio as the oracle.

At random states (q, v, tau) the joint accelerations of the loaded SpatialModel (its
own index-1 accelerations, mapped to joint accelerations) equal Pinocchio's ABA on the
same file; a simulated arm follows Pinocchio's ABA integrated by SciPy's DOP853; the
forward kinematics is consistent with the constraints; bad files give clear errors.
Expected values come from Pinocchio, SciPy or closed forms, never from mbint.
"""
import math
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import mbint
from mbint.mbs.spatial import matrix_from_quat

yourdfpy = pytest.importorskip("yourdfpy")
pin = pytest.importorskip("pinocchio")


from robots import ROBOTS, needs_robots, set_joint_coordinates  # noqa: E402


def _urdf(rel):
    return str(ROBOTS / rel)


# (file, floating base, random states): arms, a hand-free humanoid arm, a double
# pendulum with continuous joints, quadrupeds and humanoids on a floating base
CASES = [
    ("ur_description/urdf/ur5_robot.urdf", False, 20),
    ("panda_description/urdf/panda.urdf", False, 20),           # prismatic fingers
    ("kinova_description/robots/kinova.urdf", False, 20),
    ("talos_data/robots/talos_left_arm.urdf", False, 20),
    ("double_pendulum_description/urdf/double_pendulum_continuous.urdf", False, 20),
    ("solo_description/robots/solo12.urdf", True, 20),
    ("anymal_b_simple_description/robots/anymal.urdf", True, 20),
    ("a1_description/urdf/a1.urdf", True, 20),
    ("talos_data/robots/talos_reduced.urdf", True, 20),
    ("simple_humanoid_description/urdf/simple_humanoid.urdf", True, 20),
]

RNG = np.random.default_rng(20261127)


def _random_rotation(rng):
    p = rng.standard_normal(4)
    return p / np.linalg.norm(p)


class Oracle:
    """Pinocchio's model of a file with mbint's joint order mapped onto its q and v."""

    def __init__(self, path, floating, names):
        self.model = (pin.buildModelFromUrdf(path, pin.JointModelFreeFlyer()) if floating
                      else pin.buildModelFromUrdf(path))
        self.data = self.model.createData()
        self.floating = floating
        self.joints = [self.model.joints[self.model.getJointId(n)] for n in names]
        assert all(self.model.existJointName(n) for n in names)
        # every moving joint of Pinocchio's model is one of mbint's
        assert self.model.nv == len(names) + (6 if floating else 0)

    def q(self, x, base=None):
        q = pin.neutral(self.model)
        if self.floating:
            r, p = base
            q[:3], q[3:7] = r, [p[1], p[2], p[3], p[0]]  # (x, y, z, w)
        return set_joint_coordinates(q, self.joints, x)

    def v(self, x, base=None):
        v = np.zeros(self.model.nv)
        if self.floating and base is not None:
            v[:6] = base     # local linear and angular velocity of the base frame
        for jm, xk in zip(self.joints, x):
            v[jm.idx_v] = xk
        return v

    def aba(self, q, v, tau):
        a = pin.aba(self.model, self.data, q, v, tau)
        out = [a[jm.idx_v] for jm in self.joints]
        return np.concatenate([a[:6], out]) if self.floating else np.array(out)


def _rel(a, b):
    return np.linalg.norm(np.asarray(a) - np.asarray(b)) / np.linalg.norm(b)


@needs_robots
@pytest.mark.parametrize("rel,floating,states", CASES, ids=[Path(c[0]).stem for c in CASES])
def test_joint_accelerations_equal_pinocchio_aba(rel, floating, states):
    path = _urdf(rel)
    m = mbint.load_urdf(path, floating_base=floating, damping=False)
    n = len(m.joint_names)
    assert m.ndof == n + (6 if floating else 0)
    pn = Oracle(path, floating, m.joint_names)
    worst = 0.0
    for _ in range(states):
        x = RNG.uniform(-1.5, 1.5, n)
        xd = RNG.standard_normal(n)
        tau = 5 * RNG.standard_normal(n)
        kw, base, vb = {}, None, None
        if floating:
            p, r = _random_rotation(RNG), RNG.standard_normal(3)
            vl, wl = RNG.standard_normal(3), RNG.standard_normal(3)
            R = matrix_from_quat(p)
            kw = dict(base_pose=(r, p), base_velocity=(R @ vl, R @ wl))
            base, vb = (r, p), np.concatenate([vl, wl])
        a = m.joint_accelerations(x, xd, tau, **kw)
        if floating:
            # mbint: the base origin's acceleration and alpha, global; Pinocchio: the
            # derivative of the local (v, omega): R^T a - omega_l x v_l and R^T alpha
            a = np.concatenate([R.T @ a[:3] - np.cross(wl, vl), R.T @ a[3:6], a[6:]])
        ref = pn.aba(pn.q(x, base), pn.v(xd, vb), pn.v(tau, np.zeros(6) if floating else None))
        worst = max(worst, _rel(a, ref))
    print(f"{Path(rel).stem}: max relative error {worst:.2e} over {states} states")
    assert worst <= 1e-9


@needs_robots
@pytest.mark.parametrize("floating", [False, True])
def test_forward_kinematics_satisfies_the_constraints(floating):
    path = _urdf("solo_description/robots/solo12.urdf")
    m = mbint.load_urdf(path, floating_base=floating)
    n = len(m.joint_names)
    x, xd = RNG.uniform(-3, 3, n), RNG.standard_normal(n)
    kw = dict(base_pose=((0.1, 0.2, 0.3), _random_rotation(RNG)),
              base_velocity=((0.3, -0.1, 0.2), (1.0, -2.0, 0.5))) if floating else {}
    q, qd = m.body_state(x, xd, **kw)
    assert np.abs(m.phi(0.0, q)).max() <= 1e-12
    assert np.abs(m.constraint_jacobian(0.0, q) @ qd).max() <= 1e-12
    xs, xds, _ = m.joint_state(q, qd)
    assert np.abs((xs - x + np.pi) % (2 * np.pi) - np.pi).max() <= 1e-12
    assert np.abs(xds - xd).max() <= 1e-12
    # Pinocchio's placement of every link frame that carries a body
    pn = Oracle(path, floating, m.joint_names)
    base = (kw["base_pose"][0], np.asarray(kw["base_pose"][1]) / np.linalg.norm(
        kw["base_pose"][1])) if floating else None
    pin.forwardKinematics(pn.model, pn.data, pn.q(x, base))
    for g in m._groups:
        b = g.body
        if b is None or b.is_ground:
            continue
        M = pn.data.oMi[pn.model.getJointId(g.parent_joint.name)] if g.parent_joint else \
            pn.data.oMi[1]
        com = M.rotation @ pn.model.inertias[pn.model.getJointId(
            g.parent_joint.name) if g.parent_joint else 1].lever + M.translation
        assert np.abs(b.point(np.zeros(3), q) - com).max() <= 1e-12
        assert np.abs(b.rotation(q) - M.rotation).max() <= 1e-12


@needs_robots
def test_damping_and_time_dependent_inputs_equal_pinocchio():
    """Panda: URDF damping on the revolute joints (C dampers) and the prismatic fingers
    (callback forces) is Pinocchio's ABA with tau - damping * v; a torque from a Python
    function f(t) and one from a time function (c0, c1, c2, a, w, psi) at t = 0.7 s."""
    path = _urdf("panda_description/urdf/panda.urdf")
    names = ["panda_joint2", "panda_joint5", "panda_finger_joint1"]
    f = {names[0]: lambda t: 3 * math.cos(t), names[1]: (0.5, 1.0, 0.0, 2.0, 3.0, 0.1),
         names[2]: lambda t: -4 * t}
    m = mbint.load_urdf(path, torques=f)
    pn = Oracle(path, False, m.joint_names)
    assert np.ptp(pn.model.damping) > 0  # two different damping values
    n, t = len(m.joint_names), 0.7
    x, xd = RNG.uniform(-1, 1, n), RNG.standard_normal(n)
    x[-2:] = RNG.uniform(0, 0.04, 2)
    m.set_joint_state(x, xd)
    qdd = m.accelerations(t, m.q0, m.qd0)[0]
    a = m.joint_state(m.q0, m.qd0, qdd)[2]
    tau = np.zeros(n)
    tau[m.joint_names.index(names[0])] = 3 * math.cos(t)
    tau[m.joint_names.index(names[1])] = 0.5 + t + 2 * math.sin(3 * t + 0.1)
    tau[m.joint_names.index(names[2])] = -4 * t
    damp = np.array([pn.model.damping[jm.idx_v] for jm in pn.joints])
    ref = pn.aba(pn.q(x), pn.v(xd), pn.v(tau - damp * xd))
    assert _rel(a, ref) <= 1e-9
    # without damping the accelerations differ (the dampers act)
    m2 = mbint.load_urdf(path, torques=f, damping=False)
    m2.set_joint_state(x, xd)
    a2 = m2.joint_state(m2.q0, m2.qd0, m2.accelerations(t, m2.q0, m2.qd0)[0])[2]
    assert _rel(a2, pn.aba(pn.q(x), pn.v(xd), pn.v(tau))) <= 1e-9
    assert _rel(a2, a) > 1e-6


@needs_robots
def test_simulated_arm_follows_pinocchio():
    """UR5 under gravity and two sinusoidal joint torques for 1 s: joint angles, rates
    and accelerations (the trajectory's named outputs) against Pinocchio's ABA
    integrated by SciPy's DOP853 at rtol 1e-11."""
    from scipy.integrate import solve_ivp
    path = _urdf("ur_description/urdf/ur5_robot.urdf")
    x0 = np.array([0.3, -1.0, 1.2, -0.5, 0.8, 0.1])
    xd0 = np.array([0.5, -0.3, 0.2, 1.0, -0.7, 0.4])
    torques = {"shoulder_pan_joint": (0.0, 0.0, 0.0, 2.0, 3.0, 0.0),
               "elbow_joint": (0.0, 0.0, 0.0, 1.5, 2.0, np.pi / 2)}
    m = mbint.load_urdf(path, q=x0, qd=xd0, torques=torques, damping=False)
    pn = Oracle(path, False, m.joint_names)
    iv = [jm.idx_v for jm in pn.joints]
    nv = pn.model.nv

    def tau(t):
        return pn.v([2 * math.sin(3 * t), 0, 1.5 * math.cos(2 * t), 0, 0, 0])

    def f(t, y):
        return np.concatenate([y[nv:], pin.aba(pn.model, pn.data, y[:nv], y[nv:], tau(t))])

    te = np.linspace(0.0, 1.0, 11)
    ref = solve_ivp(f, (0.0, 1.0), np.concatenate([pn.q(x0), pn.v(xd0)]), method="DOP853",
                    rtol=1e-11, atol=1e-12, t_eval=te)
    tr = mbint.simulate(m, (0.0, 1.0), method="dop853", rtol=1e-8, atol=1e-10, t_eval=te)
    ang = np.array([tr.output(f"{n}.angle") for n in m.joint_names])
    rate = np.array([tr.output(f"{n}.rate") for n in m.joint_names])
    acc = np.array([tr.output(f"{n}.accel") for n in m.joint_names])
    ref_acc = np.array([f(t, y)[nv:] for t, y in zip(te, ref.y.T)]).T
    assert np.abs(ang - ref.y[iv]).max() <= 1e-6
    assert np.abs(rate - ref.y[[nv + i for i in iv]]).max() <= 1e-5
    assert np.abs(acc - ref_acc[iv]).max() <= 1e-4
    ds = tr.to_xarray()
    assert ds["output_elbow_joint.angle"].attrs["units"] == "rad"
    assert ds["output_elbow_joint.accel"].attrs["units"] == "rad/s^2"
    assert np.array_equal(ds["output_elbow_joint.rate"].values, rate[2])


@needs_robots
def test_floating_robot_falls_with_its_centre_of_mass_at_g():
    """Solo12 free in gravity with moving joints and joint torques (internal forces):
    the whole robot's centre of mass moves as c0 + v0 t + g t^2 / 2 and its linear
    momentum changes at m g (closed form)."""
    path = _urdf("solo_description/robots/solo12.urdf")
    n = 12
    x0, xd0 = RNG.uniform(-1, 1, n), RNG.standard_normal(n)
    m = mbint.load_urdf(path, floating_base=True, q=x0, qd=xd0, damping=True,
                        base_pose=((0, 0, 1), (1, 0, 0, 0)),
                        base_velocity=((0.5, 0, 2), (0.3, -0.2, 1.0)),
                        torques={"FL_KFE": (0.0, 0.0, 0.0, 0.02, 10.0, 0.0), "HR_HFE": 0.01})
    masses = np.array([b.mass for b in m.bodies])
    pos = np.arange(m.nq).reshape(-1, 7)[:, :3]

    def com(q):
        return (masses[:, None] * q[pos]).sum(axis=0) / masses.sum()

    te = np.linspace(0.0, 0.3, 4)
    tr = mbint.simulate(m, (0.0, 0.3), method="dop853", rtol=1e-9, atol=1e-11, t_eval=te)
    c0, v0 = com(m.q0), com(m.qd0)
    g = np.array([0.0, 0.0, -9.81])
    for k, t in enumerate(te):
        assert np.abs(com(tr.q[:, k]) - (c0 + v0 * t + 0.5 * g * t * t)).max() <= 1e-8
        assert np.abs(com(tr.qd[:, k]) - (v0 + g * t)).max() <= 1e-8


# ---------------------------------------------------------------- small files
LINK = """<link name="{name}"><inertial><origin xyz="{c}" rpy="{rpy}"/><mass value="{m}"/>
<inertia ixx="{i[0]}" iyy="{i[1]}" izz="{i[2]}" ixy="0" ixz="0" iyz="0"/></inertial></link>"""


def _write(tmp_path, body):
    p = tmp_path / "robot.urdf"
    p.write_text(f'<?xml version="1.0"?>\n<robot name="test">\n{textwrap.dedent(body)}\n</robot>')
    return str(p)


def _link(name, m=1.0, c="0 0 0", rpy="0 0 0", i=(0.1, 0.2, 0.3)):
    return LINK.format(name=name, m=m, c=c, rpy=rpy, i=i)


def _joint(name, parent, child, kind="revolute", xyz="0 0 0", rpy="0 0 0", axis="0 0 1"):
    lim = '<limit lower="-3" upper="3" effort="10" velocity="5"/>' if kind in (
        "revolute", "prismatic") else ""
    return (f'<joint name="{name}" type="{kind}"><parent link="{parent}"/><child link="{child}"/>'
            f'<origin xyz="{xyz}" rpy="{rpy}"/><axis xyz="{axis}"/>{lim}</joint>')


def test_pendulum_closed_form(tmp_path):
    """A physical pendulum about the y axis: the centre of mass at l below the pivot, its
    inertial frame rotated by rpy (the inertia must be rotated exactly), a fixed tip
    mass (with its own inertia) merged: theta'' = (tau - m g l_c sin theta) / J_pivot."""
    path = _write(tmp_path, _link("base") + _link("arm", 2.0, "0 0 -0.5", "0.3 0.4 0.5")
                  + _link("tip", 0.5, "0 0 0") + _joint("hinge", "base", "arm", axis="0 1 0")
                  + _joint("weld", "arm", "tip", "fixed", xyz="0 0 -1"))
    m = mbint.load_urdf(path)
    assert [b.name for b in m.bodies] == ["arm"] and m.joint_names == ["hinge"]
    # the rotated inertia's yy entry: R diag(0.1, 0.2, 0.3) R^T, R from rpy (0.3, 0.4, 0.5)
    cr, sr, cp, sp, cy, sy = (math.cos(.3), math.sin(.3), math.cos(.4), math.sin(.4),
                              math.cos(.5), math.sin(.5))
    R = np.array([[cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr],
                  [sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr],
                  [-sp, cp * sr, cp * cr]])
    Jyy = (R @ np.diag([0.1, 0.2, 0.3]) @ R.T)[1, 1]
    M, lc = 2.5, (2.0 * 0.5 + 0.5 * 1.0) / 2.5
    J = Jyy + 2.0 * 0.5 ** 2 + 0.2 + 0.5 * 1.0 ** 2   # the tip's own Jyy = 0.2
    for theta, omega, tau in [(0.4, 0.0, 0.0), (-1.2, 2.0, 3.0), (2.5, -1.0, -1.0)]:
        a = m.joint_accelerations([theta], [omega], [tau])
        # theta about +y: the arm at angle theta swings toward +x (gravity torque -m g l sin)
        assert abs(a[0] - (tau - M * 9.81 * lc * math.sin(theta)) / J) <= 1e-12 * 30


def test_joint_limits_are_one_sided_penalties(tmp_path):
    """A pendulum (J = 0.2 + 2 * 0.5^2 about the pivot) with limits -3..3 rad and the
    penalty (k, c) = (200, 5): past a limit by delta the torque -k delta - c omega,
    never pulling toward the limit; none inside; none without ``limits``."""
    path = _write(tmp_path, _link("base") + _link("arm", 2.0, "0 0 -0.5")
                  + _joint("hinge", "base", "arm", axis="0 1 0"))
    m = mbint.load_urdf(path, limits=(200.0, 5.0))
    free = mbint.load_urdf(path)
    J, mgl = 0.2 + 2.0 * 0.25, 2.0 * 9.81 * 0.5
    for theta, omega, penalty in [(3.1, 0.5, -200 * 0.1 - 5 * 0.5), (3.1, -10.0, 0.0),
                                  (-3.1, -0.5, 200 * 0.1 + 5 * 0.5), (-3.1, 10.0, 0.0),
                                  (1.0, 3.0, 0.0)]:
        expect = (penalty - mgl * math.sin(theta)) / J
        assert abs(m.joint_accelerations([theta], [omega], [0.0])[0] - expect) <= 1e-11
        assert abs(free.joint_accelerations([theta], [omega], [0.0])[0]
                   + mgl * math.sin(theta) / J) <= 1e-11
    with pytest.raises(ValueError, match="non-negative"):
        m.set_joint_limits(-1.0)


def test_prismatic_closed_form(tmp_path):
    """A slider on an inclined axis under gravity and a force: d'' = F/m - g . axis."""
    path = _write(tmp_path, _link("base") + _link("slider", 3.0, "0.1 0.2 0.3")
                  + _joint("slide", "base", "slider", "prismatic", xyz="1 2 3",
                           rpy="0.2 -0.3 0.1", axis="1 1 1"))
    m = mbint.load_urdf(path, q=[0.2], qd=[0.4])
    assert m.output_units["slide.position"] == "m"
    Rz, Ry, Rx = (np.array([[math.cos(.1), -math.sin(.1), 0], [math.sin(.1), math.cos(.1), 0],
                            [0, 0, 1]]),
                  np.array([[math.cos(-.3), 0, math.sin(-.3)], [0, 1, 0],
                            [-math.sin(-.3), 0, math.cos(-.3)]]),
                  np.array([[1, 0, 0], [0, math.cos(.2), -math.sin(.2)],
                            [0, math.sin(.2), math.cos(.2)]]))
    axis = Rz @ Ry @ Rx @ (np.ones(3) / math.sqrt(3))
    a = m.joint_accelerations([0.2], [0.4], [6.0])
    assert abs(a[0] - (6.0 / 3.0 - 9.81 * axis[2])) <= 1e-12
    x = m.joint_state(m.q0, m.qd0)
    assert abs(x[0][0] - 0.2) <= 1e-14 and abs(x[1][0] - 0.4) <= 1e-14


def test_massless_leaf_is_dropped_and_q_by_name(tmp_path):
    path = _write(tmp_path, _link("base") + _link("arm") + '<link name="sensor"/>'
                  + _joint("j1", "base", "arm") + _joint("j2", "arm", "sensor", axis="1 0 0"))
    m = mbint.load_urdf(path, q={"j1": 0.5})
    assert m.joint_names == ["j1"] and m.dropped_joints == ["j2"]
    assert abs(m.joint_state(m.q0)[0][0] - 0.5) <= 1e-15
    with pytest.raises(ValueError, match="unknown joints"):
        mbint.load_urdf(path, q={"j9": 0.5})


def test_errors(tmp_path, monkeypatch):
    with pytest.raises(FileNotFoundError, match="no URDF file"):
        mbint.load_urdf(tmp_path / "missing.urdf")
    planar = _write(tmp_path, _link("base") + _link("arm") + _joint("p", "base", "arm", "planar"))
    with pytest.raises(ValueError, match="'p' is of type 'planar'"):
        mbint.load_urdf(planar)
    (tmp_path / "robot.urdf").unlink()
    massless = _write(tmp_path, _link("base") + '<link name="mid"/>' + _link("arm")
                      + _joint("j1", "base", "mid") + _joint("j2", "mid", "arm", axis="1 0 0"))
    with pytest.raises(ValueError, match="link 'mid' at the end of the moving joint 'j1' "
                                         "has no mass"):
        mbint.load_urdf(massless)
    with pytest.raises(ValueError, match="cannot be a floating base"):
        mbint.load_urdf(_write(tmp_path, '<link name="base"/>' + _link("arm")
                               + _joint("j1", "base", "arm")), floating_base=True)
    monkeypatch.setitem(sys.modules, "yourdfpy", None)
    with pytest.raises(ImportError, match=r"pip install mbint\[urdf\]"):
        mbint.load_urdf(massless)


def test_import_mbint_does_not_import_yourdfpy():
    import subprocess
    code = "import sys, mbint; print('yourdfpy' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=Path(__file__).resolve().parent.parent)
    assert out.stdout.strip() == "False", out.stderr


def test_a_loaded_model_pickles(tmp_path):
    """For mbint.ensemble: a model with a C torque, a prismatic joint's callback force and
    the outputs pickles, and the copy has the same accelerations and joint state."""
    import pickle
    path = _write(tmp_path, _link("base") + _link("arm") + _link("slider", 0.5, "0.1 0 0")
                  + _joint("j1", "base", "arm", xyz="0 0 1", axis="1 0 0")
                  + _joint("s1", "arm", "slider", "prismatic", xyz="0 0 -0.5", axis="0 0 1"))
    m = mbint.load_urdf(path, q=[0.4, 0.1], qd=[1.0, -0.2], torques={"j1": 0.5, "s1": 2.0})
    c = pickle.loads(pickle.dumps(m))
    assert np.array_equal(c.accelerations()[0], m.accelerations()[0])
    assert np.abs(c.joint_state(c.q0, c.qd0)[1] - [1.0, -0.2]).max() <= 1e-14
    assert set(c.outputs) == {"j1.angle", "j1.rate", "j1.accel", "s1.position", "s1.velocity",
                              "s1.acceleration"}


@needs_robots
def test_ur5_on_every_dae_formulation():
    """Issue 22 item 3 on a URDF arm: the UR5 (6 bodies, 36 constraint rows) on the index-1
    ODE, the four DAE formulations and the state space, against the index-1 ODE at rtol
    1e-10: q(0.3 s), the energy (no damping, no torques) and the constraint levels."""
    robot = mbint.load_urdf(str(ROBOTS / "ur_description/urdf/ur5_robot.urdf"),
                            q=[0.3, -1.0, 1.2, -0.5, 0.8, 0.1])
    T = 0.3
    ref = mbint.simulate(robot, (0, T), method="radau_iia", rtol=1e-10, atol=1e-12)
    E0 = ref.energy().total[0]
    for form, method in [("index1_dae", "radau_iia"), ("index1_dae", "ida"),
                         ("index1_dae", "bdf"), ("index2", "radau_iia"),
                         ("index3", "radau_iia"), ("index3", "lstable_block"),
                         ("ggl", "radau_iia"), ("ggl", "ida"), ("state_space", "rodas4")]:
        tr = mbint.simulate(robot, (0, T), method=method, formulation=form, rtol=1e-6,
                            atol=1e-8)
        what = (form, method)
        assert tr.status == 0, (what, tr.message)
        assert np.abs(tr.q[:, -1] - ref.q[:, -1]).max() < 2e-5, what
        E = tr.energy().total
        assert np.abs(E - E0).max() < 5e-5 * abs(E0), what
        v = tr.violation()
        assert np.abs(v.position).max() < 1e-6 and np.abs(v.velocity).max() < 1e-3, what


@needs_robots
@pytest.mark.parametrize("linear_algebra", ["dense", "sparse"])
def test_a_singular_saddle_matrix_at_a_stage_shrinks_the_step(linear_algebra):
    """xArm7 with dop853 at rtol 1e-9: the first step the initial-step heuristic picks
    (h ~ 0.011 s) puts a stage where [M Phi_q^T; Phi_q 0] is singular.  That is a step too
    long, not a singular mechanism: the driver rejects the attempt and retries smaller, as
    after a non-finite f (before the fix the run ended there with 0 steps).  The motion is
    then the joint formulation's (one coordinate a joint, no saddle matrix)."""
    m = mbint.load_urdf(str(ROBOTS / "xarm_description" / "urdf" / "xarm7.urdf"))
    ti = mbint.simulate(m, (0, 0.05), "dop853", formulation="index1", rtol=1e-9, atol=1e-9,
                        linear_algebra=linear_algebra)
    assert ti.success, ti.message
    assert ti.stats["nsteps"] > 0
    tj = mbint.simulate(m, (0, 0.05), "dop853", formulation="joint", rtol=1e-9, atol=1e-9)
    assert np.abs(tj.q[:, -1] - ti.q[:, -1]).max() < 1e-7


def test_a_chain_longer_than_the_recursion_limit_loads(tmp_path):
    # the tree was walked recursively: a chain of 1000 links raised RecursionError
    # (found by bench_joint_peers.py at N = 1000)
    import sys
    from urdf_chains import rod_chain
    n = sys.getrecursionlimit() + 100
    m = mbint.load_urdf(rod_chain(tmp_path, n, length=0.1, mass=0.1, axes="yx"))
    assert m.nq == 7 * n and len(m.joint_names) == n
    # depth first, parents before children: rod k's centre 0.1 m below rod k - 1's
    c = m.q0.reshape(n, 7)[:, :3]
    assert np.abs(c[:, :2]).max() == 0.0
    assert np.allclose(c[:, 2], -0.05 - 0.1 * np.arange(n), rtol=0, atol=1e-9)  # sums of 0.1
