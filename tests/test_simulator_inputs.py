"""The inputs of mbint.Simulator beyond a planar generalized force: a planar
spring-damper's actuator, a spatial rotational spring-damper's actuator, and the joint
torques of a URDF robot, each checked against statics in closed form (or Pinocchio's
inverse dynamics) and against the model being left unchanged."""
import importlib.metadata
from pathlib import Path

import numpy as np
import pytest

import mbint

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


def _ur5():
    try:
        files = importlib.metadata.files("example-robot-data") or []
    except importlib.metadata.PackageNotFoundError:
        return None
    for f in files:
        if str(f).endswith("ur_description/urdf/ur5_robot.urdf"):
            return str(f.locate())
    return None


UR5 = _ur5()


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
