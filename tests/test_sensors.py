"""Sensors (mbint/mbs/sensors.py, csrc/mbs/sensors.c) against mathematics: closed forms
of a pendulum and a free symmetric top, finite differences of the position sensor,
rotations by an independent quaternion routine (SciPy), the force laws recomputed from
the positions, Newton's second law from the trajectory's q'', and pint for every unit
a saved trajectory carries."""
import json

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

import mbint
from mbint import _core
from mbint.mbs.sensors import sensor_table

G = 9.81


def _pendulum(a=0.5, mass=2.0, inertia=0.3, theta0=0.4):
    """A rod of half-length a hinged at the origin at its end (centre at a from the
    pivot), released at theta0 from the x axis."""
    m = mbint.PlanarModel(gravity=(0.0, -G))
    b = m.add_body(mass=mass, inertia=inertia,
                   q=(a * np.cos(theta0), a * np.sin(theta0), theta0), name="rod")
    m.add_revolute(m.ground, (0.0, 0.0), b, (-a, 0.0))
    return m, b


def _rot2(th):
    c, s = np.cos(th), np.sin(th)
    return np.array([[c, -s], [s, c]])


def _quat_rot(q7):
    """Rotation matrices (m, 3, 3) of the Euler parameters in rows 3..6 of q (7, m), by
    SciPy (scalar last)."""
    p = np.asarray(q7[3:7]).T
    return Rotation.from_quat(np.column_stack([p[:, 1:], p[:, :1]])).as_matrix()


def test_pendulum_tip_against_closed_form():
    a, mass, inertia = 0.5, 2.0, 0.3
    m, b = _pendulum(a, mass, inertia)
    m.add_sensor("tip", "position", b, (a, 0.0))
    m.add_sensor("tip_v", "velocity", b, (a, 0.0))
    m.add_sensor("tip_a", "acceleration", b, (a, 0.0))
    m.add_sensor("omega", "angular_velocity", b)
    m.add_sensor("alpha", "angular_acceleration", b)
    m.add_sensor("pin", "relative_rate", joint=m.joint_elements[0].name)
    traj = mbint.simulate(m, (0.0, 2.0), rtol=1e-10, atol=1e-10)
    th, w = traj.q[2], traj.qd[2]
    # theta'' from the moment of gravity about the pivot (not from the trajectory)
    al = -mass * G * a * np.cos(th) / (inertia + mass * a * a)
    L = 2 * a
    e = np.array([np.cos(th), np.sin(th)]).T
    n = np.array([-np.sin(th), np.cos(th)]).T
    np.testing.assert_allclose(traj.sensor("tip"), L * e, atol=1e-8)
    np.testing.assert_allclose(traj.sensor("tip_v"), L * w[:, None] * n, atol=1e-7)
    np.testing.assert_allclose(traj.sensor("tip_a"),
                               L * (al[:, None] * n - w[:, None] ** 2 * e), atol=1e-6)
    np.testing.assert_allclose(traj.sensor("omega")[:, 0], w, atol=1e-12)
    np.testing.assert_allclose(traj.sensor("pin")[:, 0], w, atol=1e-12)
    np.testing.assert_allclose(traj.sensor("alpha")[:, 0], al, atol=1e-6)
    # shapes and units; output() is the component-major view
    assert traj.sensor("tip").shape == (len(traj.t), 2)
    assert traj.output("tip").shape == (2, len(traj.t))
    assert traj.output("omega").shape == (len(traj.t),)
    assert m.sensors["tip_a"].unit == "m/s**2" and m.output_units["omega"] == "rad/s"


def test_velocity_is_the_derivative_of_the_position():
    m, b = _pendulum()
    m.add_sensor("P", "position", b, (0.2, 0.1))
    m.add_sensor("V", "velocity", b, (0.2, 0.1))
    m.add_sensor("A", "acceleration", b, (0.2, 0.1))
    h = 1e-3
    t = np.arange(0.0, 1.0 + h / 2, h)
    traj = mbint.simulate(m, (0.0, 1.0), t_eval=t, dense_output=True, rtol=1e-11, atol=1e-11)
    P, V, A = traj.sensor("P"), traj.sensor("V"), traj.sensor("A")
    dP = (P[2:] - P[:-2]) / (2 * h)
    dV = (V[2:] - V[:-2]) / (2 * h)
    scale_v, scale_a = np.abs(V).max(), np.abs(A).max()
    assert np.abs(dP - V[1:-1]).max() < 1e-5 * scale_v
    assert np.abs(dV - A[1:-1]).max() < 1e-4 * scale_a
    # a wrong derivative (the velocity of another point) is far off: the test can fail
    m2, b2 = _pendulum()
    m2.add_sensor("V", "velocity", b2, (0.3, 0.1))
    Vw = mbint.mbs.sensors.evaluate(m2, traj.t, traj.q, traj.qd, traj.qdd)["V"]
    assert np.abs(dP - Vw[1:-1]).max() > 1e-2 * scale_v


def test_vectors_in_a_rotating_body_frame():
    m, b = _pendulum()
    m.add_sensor("A", "acceleration", b, (0.5, 0.0))
    m.add_sensor("A_body", "acceleration", b, (0.5, 0.0), frame="rod")
    m.add_sensor("P_body", "position", b, (0.5, 0.0), frame=b)
    m.add_sensor("V_body", "velocity", b, (0.5, 0.0), frame=0)
    m.add_sensor("V", "velocity", b, (0.5, 0.0))
    traj = mbint.simulate(m, (0.0, 1.0), rtol=1e-10, atol=1e-10)
    R = np.array([_rot2(th) for th in traj.q[2]])
    np.testing.assert_allclose(traj.sensor("A_body"),
                               np.einsum("kji,kj->ki", R, traj.sensor("A")), atol=1e-10)
    np.testing.assert_allclose(traj.sensor("V_body"),
                               np.einsum("kji,kj->ki", R, traj.sensor("V")), atol=1e-12)
    # a body point seen from its own body: the constant offset
    np.testing.assert_allclose(traj.sensor("P_body"), np.tile([0.5, 0.0], (len(traj.t), 1)),
                               atol=1e-12)
    # the tip of a pendulum in its own frame: v = (0, L w), a = (-L w^2, L alpha)
    w, al = traj.qd[2], traj.qdd[2]
    np.testing.assert_allclose(traj.sensor("V_body"), np.column_stack([0 * w, w]), atol=1e-7)
    np.testing.assert_allclose(traj.sensor("A_body"), np.column_stack([-w ** 2, al]),
                               atol=1e-6)


def test_spring_damper_force_and_newton():
    k, c, L0, fa = 80.0, 1.5, 0.4, 3.0
    m = mbint.PlanarModel(gravity=(0.0, 0.0))
    b1 = m.add_body(mass=1.3, inertia=0.2, q=(0.0, 0.0, 0.0), qd=(0.1, -0.2, 0.7), name="b1")
    b2 = m.add_body(mass=0.7, inertia=0.1, q=(1.0, 0.3, 0.2), qd=(-0.3, 0.4, -1.1), name="b2")
    si, sj = np.array([0.1, 0.05]), np.array([-0.2, 0.1])
    m.add_spring_damper(b1, si, b2, sj, k=k, c=c, length0=L0, actuator=fa, name="spring")
    m.add_sensor("F", "force", element="spring")
    m.add_sensor("l", "distance", b1, si, other=b2, other_point=sj)
    m.add_sensor("ld", "distance_rate", b1, si, other=b2, other_point=sj)
    traj = mbint.simulate(m, (0.0, 1.0), rtol=1e-10, atol=1e-10)
    q, qd = traj.q, traj.qd
    P, V = [], []
    for o, s in ((0, si), (3, sj)):
        R = np.array([_rot2(th) for th in q[o + 2]])
        u = R @ s
        P.append(q[o:o + 2].T + u)
        V.append(qd[o:o + 2].T + qd[o + 2][:, None] * np.column_stack([-u[:, 1], u[:, 0]]))
    d, dv = P[1] - P[0], V[1] - V[0]
    l = np.linalg.norm(d, axis=1)
    ld = np.einsum("ki,ki->k", d, dv) / l
    F = traj.sensor("F")[:, 0]
    np.testing.assert_allclose(traj.sensor("l")[:, 0], l, rtol=1e-13)
    np.testing.assert_allclose(traj.sensor("ld")[:, 0], ld, atol=1e-12)
    np.testing.assert_allclose(F, k * (l - L0) + c * ld + fa, rtol=1e-12, atol=1e-10)
    assert np.ptp(F) > 1.0  # the spring works: the force is not a constant
    # Newton: the tension pulls body 2 towards body 1, m2 r2'' = -F d / l
    np.testing.assert_allclose(0.7 * traj.qdd[3:5].T, -F[:, None] * d / l[:, None],
                               atol=1e-8 * np.abs(F).max())
    assert m.sensors["F"].unit == "N"


def test_rotational_spring_damper_and_relative_angle():
    m = mbint.PlanarModel(gravity=(0.0, 0.0))
    b1 = m.add_body(mass=1.0, inertia=0.5, q=(0, 0, 0.3), qd=(0, 0, 1.0), name="b1")
    b2 = m.add_body(mass=1.0, inertia=0.2, q=(1, 0, -0.2), qd=(0, 0, -2.0), name="b2")
    m.add_rotational_spring_damper(b1, b2, k=30.0, c=0.4, angle0=0.1, name="rs")
    m.add_sensor("T", "force", element="rs")
    m.add_sensor("rel", "relative_angle", b1, other=b2)
    m.add_sensor("rel_rate", "relative_rate", b1, other=b2)
    traj = mbint.simulate(m, (0.0, 1.0), rtol=1e-10, atol=1e-10)
    rel = traj.q[5] - traj.q[2]
    rate = traj.qd[5] - traj.qd[2]
    np.testing.assert_allclose(traj.sensor("rel")[:, 0], rel, atol=1e-14)
    np.testing.assert_allclose(traj.sensor("rel_rate")[:, 0], rate, atol=1e-14)
    T = traj.sensor("T")[:, 0]
    np.testing.assert_allclose(T, 30.0 * (rel - 0.1) + 0.4 * rate, atol=1e-12)
    # the torque on body 2 is -T: J2 theta2'' = -T
    np.testing.assert_allclose(0.2 * traj.qdd[5], -T, atol=1e-9 * np.abs(T).max())
    assert m.sensors["T"].unit == "N*m"


def test_contact_force_against_the_penalty_law():
    K, cd, e, r = 2e4, 30.0, 1.5, 0.1
    m = mbint.PlanarModel(gravity=(0.0, -G))
    ball = m.add_body(mass=0.5, inertia=1e-3, q=(0.0, 0.3, 0.0), name="ball")
    m.add_contact(ball, radius=r, K=K, damping=cd, exponent=e, name="floor")
    m.add_sensor("N", "contact", element="floor")
    traj = mbint.simulate(m, (0.0, 0.6), max_step=1e-3, rtol=1e-9, atol=1e-9)
    y, yd = traj.q[1], traj.qd[1]
    delta, rate = r - y, -yd
    law = np.where(delta > 0, K * np.clip(delta, 0, None) ** e + cd * rate, 0.0)
    law = np.clip(law, 0.0, None)
    N = traj.sensor("N")[:, 0]
    np.testing.assert_allclose(N, law, rtol=1e-12, atol=1e-9)
    assert N.max() > 10 * 0.5 * G  # the ball did hit the floor
    assert np.any(N == 0.0)  # and flew
    # Newton in the vertical: m y'' = -m g + N
    np.testing.assert_allclose(0.5 * traj.qdd[1], -0.5 * G + N, atol=1e-8 * N.max())


def _top():
    """A free axisymmetric body (J1 = J2 != J3) spinning without gravity."""
    J = np.array([0.4, 0.4, 0.9])
    m = mbint.SpatialModel(gravity=(0.0, 0.0, 0.0))
    R0 = Rotation.from_rotvec([0.3, -0.2, 0.5]).as_matrix()
    w_body0 = np.array([0.8, 0.0, 5.0])
    b = m.add_body(mass=2.0, inertia=J, r=(0, 0, 0), R=R0, omega=R0 @ w_body0, name="top")
    return m, b, J, w_body0


def test_spinning_body_angular_velocity_in_its_frame():
    m, b, J, w0 = _top()
    m.add_sensor("w_body", "angular_velocity", b, frame=b)
    m.add_sensor("w", "angular_velocity", b)
    m.add_sensor("P_body", "acceleration", b, (0.0, 0.3, 0.2), frame=b)
    m.add_sensor("P", "acceleration", b, (0.0, 0.3, 0.2))
    traj = mbint.simulate(m, (0.0, 2.0), rtol=1e-10, atol=1e-10)
    t = traj.t
    Om = (J[2] - J[0]) / J[0] * w0[2]  # Euler's equations of the symmetric top
    wb = np.column_stack([w0[0] * np.cos(Om * t), w0[0] * np.sin(Om * t), np.full_like(t, w0[2])])
    np.testing.assert_allclose(traj.sensor("w_body"), wb, atol=1e-6)
    R = _quat_rot(traj.q)
    np.testing.assert_allclose(traj.sensor("w"), np.einsum("kij,kj->ki", R, wb), atol=1e-6)
    # the angular momentum in the ground frame is constant
    Hg = np.einsum("kij,kj->ki", R, J * traj.sensor("w_body"))
    assert np.abs(Hg - Hg[0]).max() < 1e-6 * np.linalg.norm(Hg[0])
    # a vector in the body frame is the ground vector rotated back
    np.testing.assert_allclose(traj.sensor("P_body"),
                               np.einsum("kji,kj->ki", R, traj.sensor("P")), atol=1e-9)
    # centre fixed: the acceleration of the point is w x (w x s) + alpha x s, in the body
    # frame with the closed-form w' and alpha' = d w'/dt + 0 (body-frame derivative)
    s = np.array([0.0, 0.3, 0.2])
    alb = np.column_stack([-Om * w0[0] * np.sin(Om * t), Om * w0[0] * np.cos(Om * t), 0 * t])
    acc_b = np.cross(alb, s) + np.cross(wb, np.cross(wb, s))
    np.testing.assert_allclose(traj.sensor("P_body"), acc_b, atol=1e-5)


def test_spatial_revolute_angle_spring_and_tire():
    m = mbint.SpatialModel(gravity=(0.0, 0.0, -G))
    wheel = m.add_body(mass=1.0, inertia=(0.1, 0.1, 0.2), r=(0, 0, 0), omega=(0, 0, 3.0),
                       name="wheel")
    m.add_revolute(m.ground, wheel, (0, 0, 0), (0, 0, 1), name="hub")
    m.add_rotational_spring_damper(m.ground, wheel, (0, 0, 1), k=2.0, c=0.05, angle0=0.2,
                                   name="rs")
    m.add_sensor("angle", "relative_angle", "ground", other=wheel, axis=(0, 0, 1))
    m.add_sensor("rate", "relative_rate", "ground", other=wheel, axis=(0, 0, 1))
    m.add_sensor("T", "force", element="rs")
    m.add_sensor("hub_angle", "relative_angle", joint="hub")
    # a second, unconstrained body bouncing on a vertical tire
    car = m.add_body(mass=3.0, inertia=(1, 1, 1), r=(0, 2.0, 0.5), v=(0.4, 0, 0), name="car")
    m.add_tire(car, (0, 2.0, 0.5), k=900.0, c=20.0, length0=0.55, road_height=0.0, name="tire")
    m.add_sensor("Fz", "contact", element="tire")
    traj = mbint.simulate(m, (0.0, 1.5), rtol=1e-10, atol=1e-10)
    p = traj.q[3:7]
    th = 2 * np.arctan2(p[3], p[0])
    th = np.angle(np.exp(1j * th))
    np.testing.assert_allclose(traj.sensor("angle")[:, 0], th, atol=1e-8)
    np.testing.assert_allclose(traj.sensor("hub_angle")[:, 0], th, atol=1e-8)
    wz = traj.sensor("rate")[:, 0]
    R = _quat_rot(traj.q[:7])
    # omega_z from the Euler parameters: 2 (e0 e3' - e3 e0' + e1 e2' - e2 e1')
    pd = traj.qd[3:7]
    wz_ref = 2 * (p[0] * pd[3] - p[3] * pd[0] + p[1] * pd[2] - p[2] * pd[1])
    np.testing.assert_allclose(wz, wz_ref, atol=1e-9)
    assert np.ptp(th) > 1.0 and R.shape[0] == len(traj.t)
    T = traj.sensor("T")[:, 0]
    np.testing.assert_allclose(T, 2.0 * np.angle(np.exp(1j * (th - 0.2))) + 0.05 * wz,
                               atol=1e-8)
    # J3 theta'' = -T about the fixed axis
    alpha_z = 2 * (p[0] * traj.qdd[6] - p[3] * traj.qdd[3] + p[1] * traj.qdd[5]
                   - p[2] * traj.qdd[4])
    np.testing.assert_allclose(0.2 * alpha_z, -T, atol=1e-7)
    # the tire: F_z = -(k (z - L0) + c z') and m z'' = -m g + F_z
    z, zd = traj.q[9], traj.qd[9]
    Fz = traj.sensor("Fz")[:, 0]
    np.testing.assert_allclose(Fz, -(900.0 * (z - 0.55) + 20.0 * zd), atol=1e-9)
    np.testing.assert_allclose(3.0 * traj.qdd[9], -3.0 * G + Fz, atol=1e-7)
    assert np.ptp(Fz) > 1.0


def test_refusals():
    m, b = _pendulum()
    m.add_spring_damper(m.ground, (0, 0), b, (0, 0), k=1.0, name="spring")
    m.add_force(b, lambda t, q, qd: (0.0, 0.0, 0.0), name="py")
    with pytest.raises(ValueError, match="kind must be one of"):
        m.add_sensor("s", "temperature", b)
    with pytest.raises(ValueError, match="is not a body of this model"):
        m.add_sensor("s", "position", "no_such_body")
    with pytest.raises(ValueError, match="frame must be 'ground' or a body"):
        m.add_sensor("s", "velocity", b, frame="sun")
    with pytest.raises(ValueError, match="frame applies to the vector kinds"):
        m.add_sensor("s", "distance", b, other="ground", frame=b)
    with pytest.raises(ValueError, match="is not a force element"):
        m.add_sensor("s", "force", element="nothing")
    with pytest.raises(ValueError, match="needs element"):
        m.add_sensor("s", "force")
    with pytest.raises(ValueError, match="reads 'tsda' or 'rsda'"):
        m.add_sensor("s", "force", element="py")
    with pytest.raises(ValueError, match="reads 'contact_line' or 'contact_circles'"):
        m.add_sensor("s", "contact", element="spring")
    with pytest.raises(ValueError, match="must not be the ground"):
        m.add_sensor("s", "position", "ground")
    with pytest.raises(ValueError, match="point must have 2 entries"):
        m.add_sensor("s", "position", b, (1.0, 2.0, 3.0))
    with pytest.raises(ValueError, match="element does not apply"):
        m.add_sensor("s", "position", b, element="spring")
    with pytest.raises(ValueError, match="axis is used by a spatial"):
        m.add_sensor("s", "position", b, axis=(0, 0, 1))
    with pytest.raises(ValueError, match="axis is used by a spatial"):
        m.add_sensor("s", "relative_angle", "ground", other=b, axis=(0, 0, 1))
    with pytest.raises(ValueError, match="point does not apply"):
        m.add_sensor("s", "relative_angle", "ground", (0.1, 0.0), other=b)
    with pytest.raises(ValueError, match="kind must be one of"):
        m.add_sensor("s", ["position"], b)
    with pytest.raises(ValueError, match="without '/'"):
        m.add_sensor("a/b", "position", b)
    m.add_sensor("s", "position", b)
    with pytest.raises(ValueError, match="already used"):
        m.add_sensor("s", "velocity", b)
    with pytest.raises(ValueError, match="already used by a sensor"):
        m.add_output("s", lambda t, q, qd: q[0])
    traj = mbint.simulate(m, (0.0, 0.1))
    with pytest.raises(ValueError, match="unknown sensor 'nope'"):
        traj.sensor("nope")
    sm = mbint.SpatialModel()
    sb = sm.add_body(mass=1.0, inertia=(1, 1, 1), name="b")
    with pytest.raises(ValueError, match="needs axis"):
        sm.add_sensor("s", "relative_angle", "ground", other=sb)
    sm.add_spherical("ground", sb, (0, 0, 0), name="ball")
    with pytest.raises(ValueError, match="needs a 'revolute'"):
        sm.add_sensor("s", "relative_angle", joint="ball")
    with pytest.raises(ValueError, match="is not a joint of the model"):
        sm.add_sensor("s", "relative_rate", joint="nothing")
    with pytest.raises(ValueError, match="either joint or body"):
        sm.add_sensor("s", "relative_rate", "ground", joint="ball")
    with pytest.raises(ValueError, match="joint does not apply"):
        sm.add_sensor("s", "position", sb, joint="ball")
    # the C kernel refuses a row naming a body outside the model (a status, no crash)
    T = sensor_table(m)
    T[0, 2] = 5
    with pytest.raises(ValueError, match="outside the model"):
        _core.sensors_eval(T, traj.t, traj.q, traj.qd, traj.qdd)
    T[0, 0] = 99
    with pytest.raises(ValueError, match="unknown kind"):
        _core.sensors_eval(T, traj.t, traj.q, traj.qd, traj.qdd)


def _all_units(ds):
    """Every units attribute of the dataset, and the per-row unit strings."""
    units = {k: v.attrs["units"] for k, v in ds.variables.items() if "units" in v.attrs}
    rows = {}
    for k, v in ds.variables.items():
        if "units_variable" in v.attrs:
            rows[k] = [str(u) for u in ds[v.attrs["units_variable"]].values]
    return units, rows


def test_every_saved_unit_parses_with_pint(tmp_path):
    pint = pytest.importorskip("pint")
    import xarray as xr

    from mbint.models import double_pendulum_stiff_spring

    planar = double_pendulum_stiff_spring()  # outputs and a spring
    m, b = _pendulum()
    m.add_sensor("tip_a", "acceleration", b, (0.5, 0.0), frame=b)
    m.add_sensor("w", "angular_velocity", b)
    m.add_output("height", lambda t, q, qd: q[1], unit="m")
    spatial, _, _, _ = _top()
    spatial.add_sensor("w", "angular_velocity", "top", frame="top")
    system = mbint.MechanicalSystem(np.eye(2), lambda t, q, qd: -4.0 * q, q0=[1.0, 0.5],
                                    units=["m", "rad"], energy=lambda t, q, qd: (
                                        0.5 * (qd ** 2).sum(0), 2.0 * (q ** 2).sum(0)))
    runs = [mbint.simulate(planar, (0.0, 0.2), dense_output=True),
            mbint.simulate(m, (0.0, 0.2)),
            mbint.simulate(spatial, (0.0, 0.2), dense_output=True),
            mbint.simulate(system, (0.0, 0.2))]
    seen = set()
    for k, traj in enumerate(runs):
        path = traj.save(tmp_path / f"run{k}.nc")
        with xr.open_dataset(path) as ds:
            units, rows = _all_units(ds)
            for var, u in units.items():
                pint.Unit(u)  # raises on a prose unit
                seen.add(var)
            for var, us in rows.items():
                assert "units" not in ds[var].attrs or len(set(us)) == 1
                for u in us:
                    assert u, f"{var}: a row of a body model without a unit"
                    pint.Unit(u)
            # the variables that must carry units do
            for var in ("time", "kinetic_energy", "step_size"):
                assert var in units
            if k == 1:
                assert units["sensor_tip_a"] == "m/s**2" and units["sensor_w"] == "rad/s"
                assert units["output_height"] == "m"
                assert list(ds["sensor_tip_a_component"].values) == ["x", "y"]
                assert rows["q"] == ["m", "m", "rad"] and rows["lam"] == ["N", "N"]
                assert pint.Unit(rows["qdd"][2]) == pint.Unit("rad/s**2")
            if k == 2:
                assert rows["q"][3:] == ["1"] * 4 and rows["lam"] == ["J"]
            if k == 3:  # a MechanicalSystem with its units=
                assert rows["qd"] == ["m/s", "rad/s"] and "units" not in ds["q"].attrs
    assert {"time", "sensor_tip_a", "lam", "violation_velocity"} <= seen
    # a loaded trajectory keeps its sensors, and saves them again with their units
    t1 = mbint.load(tmp_path / "run1.nc")
    np.testing.assert_array_equal(t1.sensor("tip_a"), runs[1].sensor("tip_a"))
    np.testing.assert_array_equal(t1.output("w"), runs[1].output("w"))
    path = t1.save(tmp_path / "again.nc")
    with xr.open_dataset(path) as ds:
        assert ds["sensor_tip_a"].attrs["units"] == "m/s**2"
        assert ds["output_height"].attrs["units"] == "m"


def test_sensors_survive_describe_and_load(tmp_path):
    """Regression: sensors were not part of describe(), so a model rebuilt from its
    description (a model loaded from a saved file) had none.  The
    rebuilt models (planar and spatial) give the same sensor values bit for bit."""
    m = mbint.PlanarModel(gravity=(0.0, -9.81))
    rod = m.add_body(1.0, 0.1, q=(0.5, 0.0, 0.0), name="rod")
    m.add_revolute(m.ground, (0.0, 0.0), rod, (-0.5, 0.0))
    m.add_rotational_spring_damper(m.ground, rod, k=3.0, name="hinge")
    m.add_sensor("imu", "acceleration", rod, (0.5, 0.0), frame=rod)
    m.add_sensor("torque", "force", element="hinge")
    sm = mbint.SpatialModel(gravity=(0.0, 0.0, -9.81))
    b = sm.add_body(1.0, (0.01, 0.1, 0.1), r=(0.5, 0.0, 0.0), name="bar")
    sm.add_spherical(sm.ground, b, point=(0.0, 0.0, 0.0))
    sm.add_sensor("w", "angular_velocity", b, frame=b)
    for model, cls in ((m, mbint.PlanarModel), (sm, mbint.SpatialModel)):
        d = json.loads(json.dumps(model.describe()))        # plain data
        back = cls.from_description(d)
        assert list(back.sensors) == list(model.sensors)
        assert all(back.output_units[k] == model.output_units[k] for k in model.sensors)
        a = mbint.simulate(model, (0.0, 0.2), method="dopri5")
        c = mbint.simulate(back, (0.0, 0.2), method="dopri5")
        for k in model.sensors:
            np.testing.assert_array_equal(a.sensor(k), c.sensor(k))
