"""The inputs of mbint.Simulator beyond a planar generalized force: a planar
spring-damper's actuator, a spatial rotational spring-damper's actuator, and the joint
torques of a URDF robot, each checked against statics in closed form (or Pinocchio's
inverse dynamics) and against the model being left unchanged."""
import numpy as np
import pytest

import mbint
from robots import ROBOTS

G = 9.81


def hanging_mass():
    """1 kg hanging from the ground at (0, 0) on a spring-damper (k = 100 N/m, its free
    length the initial one, 1 m): at rest the tension is the actuator's value alone."""
    m = mbint.PlanarModel(gravity=(0.0, -G), name="hanging")
    b = m.add_body(1.0, 0.01, q=(0.0, -1.0, 0.0))
    m.add_translational(m.ground, (0.0, 0.0), b, (0.0, 0.0), axis=(0.0, 1.0))
    m.add_spring_damper(m.ground, (0.0, 0.0), b, (0.0, 0.0), k=100.0, c=1.0, actuator=0.0,
                        name="hoist")
    return m


def test_planar_spring_actuator_holds_the_mass():
    m = hanging_mass()
    sim = mbint.Simulator(m, method="dopri5", rtol=1e-10, atol=1e-12)
    assert sim.inputs == {"hoist": 0.0}
    sim.set_input("hoist", 1.0 * G)        # tension m g at the free length: equilibrium
    sim.advance(1.0)
    q, qd = sim.state
    assert abs(q[1] + 1.0) < 1e-9 and abs(qd[1]) < 1e-9
    # the model keeps its own actuator (0): it sags toward y = -1 - m g / k
    free = mbint.simulate(m, (0.0, 1.0), method="dopri5", rtol=1e-10, atol=1e-12)
    assert free.q[1, -1] < -1.05


def spatial_rod():
    """A uniform rod (1 kg, 1 m) on a revolute joint at the origin about the global y
    axis, horizontal along +x at rest, with a rotational spring-damper (k = c = 0) whose
    actuator is the input "motor"."""
    sm = mbint.SpatialModel(gravity=(0.0, 0.0, -G), name="rod")
    rod = sm.add_body(1.0, (0.001, 1 / 12, 1 / 12), r=(0.5, 0.0, 0.0))
    sm.add_revolute(sm.ground, rod, point=(0.0, 0.0, 0.0), axis=(0.0, 1.0, 0.0))
    sm.add_rotational_spring_damper(sm.ground, rod, axis=(0.0, 1.0, 0.0), k=0.0, c=0.0,
                                    name="motor")
    return sm


@pytest.mark.parametrize("formulation", ["index1", "index3"])
def test_spatial_rsda_actuator_balances_gravity(formulation):
    """Gravity's torque about +y on the rod is r x F = (0.5, 0, 0) x (0, 0, -m g) =
    +m g / 2; the RSDA's torque T = k (theta - angle0) + c theta' + actuator acts on the
    rod as -T about the axis, so actuator = m g / 2 holds it."""
    sm = spatial_rod()
    method = "dopri5" if formulation == "index1" else "radau_iia"
    sim = mbint.Simulator(sm, method=method, formulation=formulation, rtol=1e-10,
                          atol=1e-12)
    assert sim.inputs == {"motor": 0.0}
    sim.set_input("motor", 0.5 * G)
    sim.advance(0.5)
    q, qd = sim.state
    np.testing.assert_allclose(q[:3], [0.5, 0.0, 0.0], atol=1e-7)
    assert np.max(np.abs(qd)) < 1e-6
    sim.set_input("motor", 0.0)            # released: it falls from t = 0.5 on
    sim.advance(0.6)
    assert sim.state[0][2] < -0.03         # z of the centre of mass after 0.1 s
    # the model itself still has no actuator
    c = sm.compile()
    assert np.all(c.forces == spatial_rod().compile().forces)


UR5 = None if ROBOTS is None else str(ROBOTS / "ur_description/urdf/ur5_robot.urdf")


@pytest.mark.skipif(UR5 is None, reason="example-robot-data is not installed")
def test_urdf_joint_torques_hold_the_arm_by_gravity_compensation():
    """The UR5 held at a bent pose by the torques of Pinocchio's inverse dynamics
    rnea(q, 0, 0) set through set_input (joint torques, N m): it does not move; without
    them (the model's own zero torques) it falls."""
    pytest.importorskip("yourdfpy")
    pin = pytest.importorskip("pinocchio")
    x0 = np.array([0.3, -1.0, 1.2, -0.6, 0.8, 0.2])
    m = mbint.load_urdf(UR5, damping=False, q=x0)
    names = m.joint_names
    m.set_joint_torques({n: 0.0 for n in names})
    pm = pin.buildModelFromUrdf(UR5)
    data = pm.createData()
    qp = pin.neutral(pm)
    for n, x in zip(names, x0):
        qp[pm.joints[pm.getJointId(n)].idx_q] = x
    g = pin.rnea(pm, data, qp, np.zeros(pm.nv), np.zeros(pm.nv))
    tau = {n: float(g[pm.joints[pm.getJointId(n)].idx_v]) for n in names}
    assert max(abs(v) for v in tau.values()) > 1.0     # a pose that needs torque

    sim = mbint.Simulator(m, method="dopri5", rtol=1e-10, atol=1e-12, t_end=0.2)
    assert set(sim.inputs) == set(names)
    for n, v in tau.items():
        sim.set_input(n, v)
    sim.advance(0.2)
    x, xd, _ = m.joint_state(sim.state[0], sim.state[1])
    np.testing.assert_allclose(x, x0, atol=1e-7)
    assert np.max(np.abs(xd)) < 1e-6
    free = mbint.simulate(m, (0.0, 0.2), method="dopri5", rtol=1e-8, atol=1e-10)
    xf = m.joint_state(free.q[:, -1], free.qd[:, -1])[0]
    assert np.max(np.abs(xf - x0)) > 1e-2
    with pytest.raises(ValueError, match="shoulder_pan_joint"):
        sim.set_input("shoulder_pan", 1.0)          # the message lists the joint names



@pytest.mark.parametrize("method,formulation", [("dopri5", "index1"), ("cvode_bdf", "index1"),
                                                ("radau_iia", "index1_dae"),
                                                ("ida", "index1_dae")])
def test_trajectory_outputs_use_the_input_each_point_had(method, formulation):
    """Regression: q'' and lambda of the Simulator's trajectory were computed after the run
    with the inputs' last values, so points before a change reported the new force.  A rod
    (1 kg, 1 m) pinned at the origin, no gravity, torque 1 N m for t < 0.1 then 0:
    theta'' = 1 / (1/12 + 1/4) = 3 rad/s**2 then 0, and the pin force on the rod is
    m (L/2) sqrt(theta''**2 + theta'**4) (tangential and centripetal)."""
    m = mbint.PlanarModel(gravity=(0.0, 0.0), name="spun")
    rod = m.add_body(1.0, 1.0 / 12.0, q=(0.5, 0.0, 0.0))
    m.add_revolute(m.ground, (0.0, 0.0), rod, (-0.5, 0.0), name="pin")
    m.add_generalized_force(rod, "theta", 0.0, name="tau")
    sim = mbint.Simulator(m, method=method, formulation=formulation, rtol=1e-10, atol=1e-12)
    sim.set_input("tau", 1.0)
    sim.advance(0.1)
    sim.set_input("tau", 0.0)
    sim.advance(0.2)
    traj = sim.trajectory()
    before, after = traj.t < 0.1 - 1e-12, traj.t >= 0.1
    assert before.sum() >= 2 and after.sum() >= 2
    np.testing.assert_allclose(traj.qdd[2, before], 3.0, rtol=1e-7)
    np.testing.assert_allclose(traj.qdd[2, after], 0.0, atol=1e-7)
    w = np.minimum(traj.t, 0.1) * 3.0                      # theta' (rad/s)
    acc = np.where(before, 3.0, 0.0)
    F = traj.reactions("pin").on_j.force                    # N, on the rod
    np.testing.assert_allclose(np.hypot(F[0], F[1]), 0.5 * np.hypot(acc, w ** 2),
                               rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("method", ["dopri5", "cvode_bdf"])
def test_force_sensor_of_an_input_actuator(method):
    """A force sensor on a spring-damper whose actuator is a Simulator input reads the
    actuator the element had at each point: the hanging mass's tension equals
    m (y'' + g) (Newton, from the trajectory's q'') before and after the change, and m g
    while held."""
    m = hanging_mass()
    m.add_sensor("tension", "force", element="hoist")
    sim = mbint.Simulator(m, method=method, rtol=1e-10, atol=1e-12)
    sim.set_input("hoist", G)                     # held at the free length
    sim.advance(0.3)
    sim.set_input("hoist", 2.0)                   # then mostly released
    sim.advance(0.6)
    traj = sim.trajectory()
    F = traj.sensor("tension")[:, 0]
    np.testing.assert_allclose(F, 1.0 * (traj.qdd[1] + G), rtol=1e-7, atol=1e-7)
    held = traj.t < 0.3 - 1e-12
    np.testing.assert_allclose(F[held], G, rtol=1e-7)
    k = np.searchsorted(traj.t, 0.3)               # at the change: still at rest, at the
    assert F[k] == pytest.approx(2.0, rel=1e-7)    # free length: the new actuator alone
    # the model's own trajectory (no input) keeps its sensor as it is
    assert m.force_elements[-1].params["fa_c0"] == 0.0


def held_rod(kind, free_link=False):
    """A uniform rod (1 kg, 1 m) pinned at the origin, its angle held by a driver "hold"
    (horizontal at first), planar; with free_link a second rod hangs from its tip.
    ``kind="spatial"``: a 1 kg block on a vertical prismatic joint, its height held by a
    translation driver "hold" (offset 0 at first)."""
    if kind == "planar":
        m = mbint.PlanarModel(gravity=(0.0, -G), name="held")
        rod = m.add_body(1.0, 1.0 / 12.0, q=(0.5, 0.0, 0.0))
        m.add_revolute(m.ground, (0.0, 0.0), rod, (-0.5, 0.0))
        m.add_driver(rod, "theta", 0.0, relative_to=m.ground, name="hold")
        if free_link:
            link = m.add_body(1.0, 1.0 / 12.0, q=(1.5, 0.0, 0.0))
            m.add_revolute(rod, (0.5, 0.0), link, (-0.5, 0.0))
        return m
    sm = mbint.SpatialModel(gravity=(0.0, 0.0, -G), name="held")
    block = sm.add_body(1.0, (0.1, 0.1, 0.1), r=(0.0, 0.0, 1.0))
    sm.add_translational(sm.ground, block, point=(0.0, 0.0, 1.0), axis=(0.0, 0.0, 1.0))
    sm.add_driver(sm.ground, block, "translation", point=(0.0, 0.0, 1.0),
                  axis=(0.0, 0.0, 1.0), name="hold")
    return sm


@pytest.mark.parametrize("kind,method,formulation", [
    ("planar", "dopri5", "index1"), ("planar", "radau_iia", "index1_dae"),
    ("planar", "ida", "index1_dae"), ("planar", "cvode_bdf", "index1"),
    ("spatial", "radau_iia", "index1"), ("spatial", "radau_iia", "index3")])
def test_driver_target_is_an_input(kind, method, formulation):
    """set_input on a driver moves its target: the body jumps to it and stays, held by
    the driver's effort in closed form (planar rod: m g (L/2) cos(angle) about the pin;
    spatial block: m g); the trajectory's violation is measured against the target each
    point had."""
    m = held_rod(kind)
    sim = mbint.Simulator(m, method=method, formulation=formulation, rtol=1e-9, atol=1e-11,
                          t_end=0.4)
    assert sim.inputs == {"hold": 0.0}
    sim.advance(0.1)
    sim.set_input("hold", 0.5)                  # rad, or m along the driver's axis
    assert sim.inputs == {"hold": 0.5}
    sim.advance(0.4)
    q, qd = sim.state
    traj = sim.trajectory()
    k = np.searchsorted(traj.t, 0.1)             # the first point at the new target
    assert traj.t[k] == 0.1 and np.all(np.diff(traj.t) > 0)
    if kind == "planar":
        assert q[2] == pytest.approx(0.5, abs=1e-9)
        np.testing.assert_allclose(q[:2], [0.5 * np.cos(0.5), 0.5 * np.sin(0.5)], atol=1e-9)
        effort, before, after = traj.output("hold.torque"), G * 0.5, G * 0.5 * np.cos(0.5)
    else:
        np.testing.assert_allclose(q[:3], [0.0, 0.0, 1.5], atol=1e-9)
        effort, before, after = traj.output("hold.force"), G, G
    assert np.max(np.abs(qd)) < 1e-7
    assert abs(effort[-1]) == pytest.approx(after, rel=1e-6)
    assert abs(effort[k - 1]) == pytest.approx(before, rel=1e-6)
    v = traj.violation()
    assert np.max(v.position) < 1e-8 and np.max(v.velocity) < 1e-7
    # the model's own constraints (target 0) see the jump: the trajectory's own matters
    assert np.max(np.abs(m.phi(traj.t[k:], traj.q[:, k:]))) > 0.1
    assert sim.stats["nrestart"] == 1


def test_driver_target_refusals():
    m = held_rod("planar", free_link=True)
    sim = mbint.Simulator(m, method="rosenbrock_nystrom", formulation="state_space",
                          t_end=0.2)
    with pytest.raises(ValueError, match="state-space"):
        sim.set_input("hold", 0.3)
    sm = mbint.SpatialModel(gravity=(0.0, 0.0, -G))
    rod = sm.add_body(1.0, (0.001, 1 / 12, 1 / 12), r=(0.5, 0.0, 0.0))
    sm.add_revolute(sm.ground, rod, point=(0.0, 0.0, 0.0), axis=(0.0, 1.0, 0.0))
    sm.add_driver(sm.ground, rod, "rotation", point=(0.0, 0.0, 0.0), axis=(0.0, 1.0, 0.0),
                  f=0.0, name="spin")
    sim = mbint.Simulator(sm, method="radau_iia", t_end=0.2)
    with pytest.raises(ValueError, match="rotation driver"):
        sim.set_input("spin", 0.3)
