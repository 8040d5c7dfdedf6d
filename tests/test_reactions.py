"""Joint reactions and driver efforts (issue 24, item 1): ``traj.reactions`` and the
outputs ``"<driver>.torque"`` / ``"<driver>.force"``, against closed forms (Newton's law
for the centre of mass, the pendulum's pin force, energy balances of driven mechanisms,
a driven arm's torque), never against the code under test."""
import math
import pickle

import numpy as np
import pytest

import mbint
from mbint import PlanarModel
from mbint.mbs.spatial import SpatialModel, matrix_from_quat

G = 9.81
DAE_FORMS = ["index1_dae", "index2", "index3", "ggl"]
#: relative tolerance of the closed-form checks per formulation: the integrated
#: multipliers of the index-3 DAE are the least accurate (radau_iia's order reduction
#: on the algebraic components of index 3; measured 7e-5 of m g at rtol 1e-10)
REL = {"index3": 3e-4}


# ---------------------------------------------------------------- planar pendulum
def _rod_pendulum(theta0=0.8, L=0.5, mass=2.0):
    """A uniform rod of length 2 L hanging from a pin at the origin at its end; theta
    from the downward vertical, the centre of mass at L (sin theta, -cos theta)."""
    m = PlanarModel(gravity=(0, -G))
    inertia = mass * (2 * L) ** 2 / 12
    rod = m.add_body(mass, inertia, q=(L * math.sin(theta0), -L * math.cos(theta0), theta0),
                     name="rod")
    m.add_revolute(m.ground, (0, 0), rod, (0, L), name="pin")
    return m, L, mass, inertia


PENDULUM_RUNS = [("index1", "dopri5"), ("state_space", "dopri5")] + \
    [(f, "radau_iia") for f in DAE_FORMS]


@pytest.mark.parametrize("formulation,method", PENDULUM_RUNS)
def test_pendulum_pin_force_closed_form(formulation, method):
    m, L, mass, inertia = _rod_pendulum()
    traj = mbint.simulate(m, (0, 2), method=method, formulation=formulation, rtol=1e-10,
                          atol=1e-10)
    r = traj.reactions("pin")
    assert r.on_j.body == "rod" and r.on_i.body == "ground" and r.on_i.ground
    th, thd = traj.q[2], traj.qd[2]
    F = r.on_j.force
    assert F.shape == (2, len(traj.t)) and r.on_j.torque.shape == (len(traj.t),)
    u = np.array([-np.sin(th), np.cos(th)])      # from the centre of mass to the pin
    tang = np.array([np.cos(th), np.sin(th)])    # d(centre of mass)/d(theta) / L
    scale = mass * G * REL.get(formulation, 1e-6) / 1e-6
    # along the rod: m (g cos(theta) + L theta'^2), pulling the rod towards the pin
    along = np.einsum("im,im->m", F, u)
    assert np.abs(along - mass * (G * np.cos(th) + L * thd ** 2)).max() < 1e-6 * scale
    # across: m L theta'' + m g sin(theta), with theta'' = -m g L sin(theta) / (I + m L^2)
    across = np.einsum("im,im->m", F, tang)
    expected = mass * G * np.sin(th) * inertia / (inertia + mass * L ** 2)
    assert np.abs(across - expected).max() < 1e-6 * scale
    # Newton for the centre of mass at every output time: F + m g = m a_cm
    newton = F + mass * np.array([[0.0], [-G]]) - mass * traj.qdd[:2]
    assert np.abs(newton).max() < 1e-6 * scale
    # a pin transmits no moment about its point; the ground's side is the opposite force
    assert np.abs(r.on_j.torque).max() < 1e-6 * scale * L
    assert np.abs(r.on_i.force + F).max() == 0.0
    assert np.abs(r.on_i.torque).max() < 1e-6 * scale * L


def test_pendulum_body_frame():
    m, L, mass, _ = _rod_pendulum()
    traj = mbint.simulate(m, (0, 1), rtol=1e-9, atol=1e-9)
    g, b = traj.reactions("pin"), traj.reactions("pin", frame="body")
    th = traj.q[2]
    c, s = np.cos(th), np.sin(th)
    Fg = g.on_j.force
    assert np.allclose(b.on_j.force[0], c * Fg[0] + s * Fg[1], rtol=0, atol=1e-12)
    assert np.allclose(b.on_j.force[1], -s * Fg[0] + c * Fg[1], rtol=0, atol=1e-12)
    # in the rod's frame the pin at s' = (0, L) pulls along +y' by m (g cos + L theta'^2)
    assert np.allclose(b.on_j.force[1], mass * (G * c + L * traj.qd[2] ** 2), atol=1e-6)
    assert np.array_equal(b.on_i.force, g.on_i.force)  # the ground side stays global
    assert b.frame == "body" and b.units == {"t": "s", "force": "N", "torque": "N m",
                                             "point": "m"}
    assert np.array_equal(b.on_j.point, [0.0, L])


def test_rod_at_rest_hanging():
    """A rod hanging straight down from a pin: m g up at the pin, no moment about it; a
    second rod welded below adds its weight to the pin's force, and the weld holds the
    lower rod's weight with no moment about the weld point (it hangs straight)."""
    m = PlanarModel(gravity=(0, -G))
    a = m.add_body(3.0, 0.25, q=(0, -0.5, 0), name="a")
    b = m.add_body(1.5, 0.1, q=(0, -1.3, 0), name="b")
    m.add_revolute(m.ground, (0, 0), a, (0, 0.5), name="pin")
    m.add_fixed(a, (0, -0.5), b, (0, 0.3), name="weld")
    traj = mbint.simulate(m, (0, 0.5), t_eval=np.linspace(0, 0.5, 6), rtol=1e-10, atol=1e-12)
    R = traj.reactions()
    assert set(R) == {"pin", "weld"}
    pin, weld = R["pin"], R["weld"]
    assert np.allclose(pin.on_j.force, [[0.0], [4.5 * G]], rtol=0, atol=1e-9)
    assert np.abs(pin.on_j.torque).max() < 1e-9
    assert np.allclose(weld.on_j.force, [[0.0], [1.5 * G]], rtol=0, atol=1e-9)
    assert np.abs(weld.on_j.torque).max() < 1e-9
    # Newton's third law between two moving bodies: a's side is the opposite
    assert np.allclose(weld.on_i.force, -weld.on_j.force, rtol=0, atol=1e-9)
    assert np.abs(weld.on_i.torque).max() < 1e-9
    assert weld.on("a") is weld.on_i and weld.on(b) is weld.on_j
    with pytest.raises(ValueError, match="not on 'ground'"):
        weld.on("ground")


# ---------------------------------------------------------------- slider-crank
def slider_crank(omega=6.0, theta0=0.4, r=0.2, l=0.6, load=-40.0):
    """A crank (length r, pinned to the ground at the origin) driven at constant speed
    ``omega`` by the driver ``"motor"``, a connecting rod (length l) and a slider on the
    x axis pushed by a constant force ``load`` (N); gravity along -y."""
    m = PlanarModel(gravity=(0, -G), name="slider_crank")
    A = np.array([r * math.cos(theta0), r * math.sin(theta0)])
    xB = A[0] + math.sqrt(l * l - A[1] ** 2)
    phi = math.atan2(-A[1], xB - A[0])
    crank = m.add_body(1.0, 1.0 * r * r / 12, q=(A[0] / 2, A[1] / 2, theta0), name="crank")
    rod = m.add_body(2.0, 2.0 * l * l / 12, q=((A[0] + xB) / 2, A[1] / 2, phi), name="rod")
    slider = m.add_body(3.0, 0.01, q=(xB, 0, 0), name="slider")
    m.add_revolute(m.ground, (0, 0), crank, (-r / 2, 0), name="O")
    m.add_revolute(crank, (r / 2, 0), rod, (-l / 2, 0), name="A")
    m.add_revolute(rod, (l / 2, 0), slider, (0, 0), name="B")
    m.add_translational(m.ground, (0, 0), slider, (0, 0), axis=(1, 0), name="guide")
    if omega is not None:  # None: a free slider-crank (test_formulation_auto.py)
        m.add_driver(crank, "theta", c1=omega, name="motor")
    if load:
        m.add_generalized_force(slider, "x", load, name="load")
    # consistent velocities: Phi_q qd = -Phi_t (least squares on the model's Jacobian)
    qd = np.linalg.lstsq(m.constraint_jacobian(0.0), -m.phi_t(0.0), rcond=None)[0]
    m.set_initial(qd=qd)
    return m


def _power_balance(traj, load):
    """motor power and d(T + V)/dt - P_load at the output points: T = qd^T M qd / 2 with
    the constant diagonal M of a planar model, V = -sum m g . r."""
    m = traj.model
    M = m.mass()
    dT = np.einsum("im,ij,jm->m", traj.qd, M, traj.qdd)
    masses = np.array([b.mass for b in m.bodies])
    dV = G * np.einsum("k,km->m", masses, traj.qd[1::3])
    P_load = load * traj.qd[6]
    return traj.output("motor.torque") * traj.qd[2], dT + dV - P_load


#: no state_space: a crank driven at constant speed has no degree of freedom left
CRANK_RUNS = [("index1", "dopri5"), ("index1", "radau_iia")] + \
    [(f, "radau_iia") for f in DAE_FORMS]


@pytest.mark.parametrize("formulation,method", CRANK_RUNS)
def test_slider_crank_energy_balance(formulation, method):
    """The motor's torque times the crank speed is the rate of change of T + V minus
    the power of the load, at every output time."""
    load = -40.0
    m = slider_crank(load=load)
    traj = mbint.simulate(m, (0, 1.5), method=method, formulation=formulation, rtol=1e-9,
                          atol=1e-9)
    assert traj.success
    P_motor, P_needed = _power_balance(traj, load)
    scale = np.abs(P_needed).max() * REL.get(formulation, 1e-6) / 1e-6
    assert scale > 10.0
    assert np.abs(P_motor - P_needed).max() < 1e-6 * scale
    # the motor is the row "motor" (not "motor[0]") and its effort is -lam of that row
    k = m.constraint_names.index("motor")
    assert "motor[0]" not in m.constraint_names
    assert np.allclose(traj.output("motor.torque"), -traj.lam[k], rtol=0, atol=1e-12)
    assert m.output_units["motor.torque"] == "N m"


def test_slider_crank_reactions_newton():
    """Every body: the sum of its joint reactions plus its applied forces is m a_cm,
    and the moments about the centre of mass balance I theta''."""
    load = -40.0
    m = slider_crank(load=load)
    traj = mbint.simulate(m, (0, 1.0), method="radau_iia", rtol=1e-9, atol=1e-9)
    R = traj.reactions()
    assert set(R) == {"O", "A", "B", "guide", "motor"}
    for b in m.bodies:
        F = np.zeros((2, len(traj.t)))
        Mz = np.zeros(len(traj.t))
        th = traj.q[3 * b.index + 2]
        for r in R.values():
            for w in (r.on_i, r.on_j):
                if w.body != b.name:
                    continue
                F += w.force
                s = np.array([np.cos(th) * w.point[0] - np.sin(th) * w.point[1],
                              np.sin(th) * w.point[0] + np.cos(th) * w.point[1]])
                Mz += w.torque + s[0] * w.force[1] - s[1] * w.force[0]  # about the CM
        F[1] -= b.mass * G
        if b.name == "slider":
            F[0] += load
        acc = traj.qdd[3 * b.index:3 * b.index + 3]
        assert np.abs(F - b.mass * acc[:2]).max() < 1e-6 * b.mass * G
        assert np.abs(Mz - b.inertia * acc[2]).max() < 1e-6 * b.mass * G


@pytest.mark.parametrize("formulation,method", PENDULUM_RUNS)
def test_relative_driver_energy_balance(formulation, method):
    """A double pendulum whose second link is driven relative to the first: the torque
    on the second link times the relative rate is the power the motor puts in."""
    m = PlanarModel(gravity=(0, -G))
    a = m.add_body(1.0, 0.08, q=(0.5, 0, 0), name="a")
    b = m.add_body(0.7, 0.05, q=(1.4, 0, 0), name="b")
    m.add_revolute(m.ground, (0, 0), a, (-0.5, 0))
    m.add_revolute(a, (0.5, 0), b, (-0.4, 0))
    m.add_driver(b, "theta", relative_to=a, c1=0.5, a=0.8, w=3.0, name="elbow")
    qd = np.linalg.lstsq(m.constraint_jacobian(0.0), -m.phi_t(0.0), rcond=None)[0]
    m.set_initial(qd=qd)
    traj = mbint.simulate(m, (0, 2), method=method, formulation=formulation, rtol=1e-10,
                          atol=1e-10)
    tau = traj.output("elbow.torque")
    P_motor = tau * (traj.qd[5] - traj.qd[2])
    M = m.mass()
    dE = np.einsum("im,ij,jm->m", traj.qd, M, traj.qdd) + G * (1.0 * traj.qd[1] +
                                                                0.7 * traj.qd[4])
    assert np.abs(P_motor - dE).max() < REL.get(formulation, 1e-6) * np.abs(dE).max()
    # the driven body gets +tau, the other -tau (a pure torque)
    r = traj.reactions("elbow")
    assert np.array_equal(r.on_j.torque, tau) and np.allclose(r.on_i.torque, -tau, atol=1e-12)
    assert np.abs(r.on_j.force).max() < 1e-12
    # at one state the output evaluates the index-1 multipliers itself
    fn = m.outputs["elbow.torque"]
    k = len(traj.t) // 2
    assert fn(traj.t[k], traj.q[:, k], traj.qd[:, k]) == pytest.approx(
        tau[k], rel=REL.get(formulation, 1e-6))


def test_translational_driver_force():
    """A block on a vertical guide lifted by a driver of y: the force is m (g + y'')."""
    m = PlanarModel(gravity=(0, -G))
    blk = m.add_body(4.0, 0.1, q=(0, 0, 0), name="block")
    m.add_driver(blk, "y", c2=0.75, a=0.1, w=4.0, name="lift")  # y = 0.75 t^2 + 0.1 sin 4t
    m.add_driver(blk, "x", 0.0, name="hold_x")
    m.add_driver(blk, "theta", 0.0, name="hold_theta")
    m.set_initial(qd=(0, 0.4, 0))
    traj = mbint.simulate(m, (0, 1), rtol=1e-10, atol=1e-10)
    t = traj.t
    ydd = 1.5 - 1.6 * np.sin(4 * t)
    assert np.allclose(traj.output("lift.force"), 4.0 * (G + ydd), rtol=0, atol=1e-8)
    assert np.allclose(traj.output("hold_x.force"), 0.0, atol=1e-9)
    assert m.output_units["lift.force"] == "N" and m.output_units["hold_theta.torque"] == "N m"


# ---------------------------------------------------------------- spatial
def _spherical_pendulum():
    """A heavy rod on a ball joint at the origin, its centre of mass 0.6 m away, thrown
    sideways so that it swings in 3-D and spins about itself."""
    m = SpatialModel(gravity=(0, 0, -G))
    arm = np.array([0.3, 0.2, -0.9])
    arm *= 0.6 / np.linalg.norm(arm)
    w = np.array([0.7, -1.1, 2.0])   # rad/s; rigid motion about the fixed point
    rod = m.add_body(1.7, (0.05, 0.06, 0.01), r=arm, axis_angle=((1, -0.5, 0.3), 0.6),
                     v=np.cross(w, arm), omega=w, name="rod")
    m.add_spherical(m.ground, rod, point=(0, 0, 0), name="ball")
    return m, rod


SPATIAL_RUNS = [("index1", "dopri5"), ("state_space", "dopri5"), ("index1_dae", "radau_iia"),
                ("ggl", "radau_iia")]


@pytest.mark.parametrize("formulation,method", SPATIAL_RUNS)
def test_spherical_pendulum_newton(formulation, method):
    m, rod = _spherical_pendulum()
    traj = mbint.simulate(m, (0, 1.5), method=method, formulation=formulation, rtol=1e-10,
                          atol=1e-10)
    assert traj.success
    r = traj.reactions("ball")
    F = r.on_j.force
    a_cm = traj.qdd[:3]
    scale = rod.mass * G * REL.get(formulation, 1e-6) / 1e-6
    # the support force is m (a_cm - g) at every output time
    assert np.abs(F - rod.mass * (a_cm - np.array([[0.0], [0.0], [-G]]))).max() < 1e-6 * scale
    # a ball joint transmits no moment about its centre (this checks n' = G Q_p / 2)
    assert np.abs(r.on_j.torque).max() < 1e-6 * scale * 0.6
    assert np.abs(r.on_i.force + F).max() == 0.0
    # in the rod's frame: R^T of the ground result
    b = traj.reactions("ball", frame="body")
    A = matrix_from_quat(traj.q[3:7])
    assert np.allclose(b.on_j.force, np.einsum("jim,jm->im", A, F), rtol=0, atol=1e-12)
    assert np.allclose(b.on_j.torque, np.einsum("jim,jm->im", A, r.on_j.torque), rtol=0,
                       atol=1e-12)


def test_spherical_pendulum_moving():
    """The pendulum does move in 3-D (the test above is not trivially at rest)."""
    m, rod = _spherical_pendulum()
    traj = mbint.simulate(m, (0, 1.5), rtol=1e-8, atol=1e-8)
    assert np.ptp(traj.q[0]) > 0.1 and np.ptp(traj.q[1]) > 0.1 and np.ptp(traj.q[2]) > 0.05


@pytest.mark.parametrize("formulation", ["index1"] + DAE_FORMS)
def test_spatial_driven_arm_closed_form(formulation):
    """An arm turned about the horizontal y axis by a rotation driver on a revolute
    joint: the motor torque is I_O theta'' - m g d cos(theta) (theta the driven angle,
    I_O = J_yy + m d^2; the centre of mass d from the axis and 0.2 m along it), and the
    revolute carries no moment about the axis."""
    mass, d, Jyy = 2.0, 0.5, 0.04
    m = SpatialModel(gravity=(0, 0, -G))
    f = dict(c1=1.5, c2=0.4, a=0.3, w=5.0)
    w0 = np.array([0, f["c1"] + f["a"] * f["w"], 0])   # theta'(0)
    arm = m.add_body(mass, (0.01, Jyy, 0.03), r=(d, 0.2, 0), v=np.cross(w0, [d, 0.2, 0]),
                     omega=w0, name="arm")
    m.add_revolute(m.ground, arm, (0, 0, 0), (0, 1, 0), name="hinge")
    m.add_driver(m.ground, arm, "rotation", (0, 0, 0), (0, 1, 0), name="motor", **f)
    traj = mbint.simulate(m, (0, 1.5), method="radau_iia", formulation=formulation,
                          rtol=1e-10, atol=1e-10)
    t = traj.t
    theta = f["c1"] * t + f["c2"] * t ** 2 + f["a"] * np.sin(f["w"] * t)
    thdd = 2 * f["c2"] - f["a"] * f["w"] ** 2 * np.sin(f["w"] * t)
    expected = (Jyy + mass * d * d) * thdd - mass * G * d * np.cos(theta)
    tau = traj.output("motor.torque")
    tol = REL.get(formulation, 1e-6) * mass * G * d
    assert np.abs(tau - expected).max() < tol
    assert m.output_units["motor.torque"] == "N m"
    # the hinge's torque about its point has no component along the axis
    h = traj.reactions("hinge").on_j.torque
    assert np.abs(h[1]).max() < tol
    assert np.abs(h).max() > 1.0  # but it does hold the arm's moments about x and z


# ---------------------------------------------------------------- API
def test_names_units_and_errors():
    m = slider_crank()
    assert "motor.torque" in m.outputs and m.output_units["motor.torque"] == "N m"
    traj = mbint.simulate(m, (0, 0.1))
    with pytest.raises(ValueError, match="no joint 'nope'"):
        traj.reactions("nope")
    with pytest.raises(ValueError, match="frame must be"):
        traj.reactions("O", frame="local")
    r = traj.reactions("O")
    assert "JointReaction 'O'" in repr(r) and "BodyWrench" in repr(r.on_j)
    # a rebuilt model (a saved trajectory's) names the same outputs with the same units
    m2 = PlanarModel.from_description(m.describe())
    assert m2.output_units == m.output_units
    m3 = pickle.loads(pickle.dumps(m))
    assert m3.outputs["motor.torque"].model is m3
    # no output points: empty arrays of the right shapes
    from mbint.mbs.reactions import joint_reactions
    e = joint_reactions(m, np.zeros(0), np.zeros((m.nq, 0)), np.zeros((m.nc, 0)), "B")
    assert e.on_j.force.shape == (2, 0) and e.on_j.torque.shape == (0,)


def test_mechanical_system_has_no_reactions():
    ms = mbint.MechanicalSystem(mass=np.eye(1), forces=lambda t, q, qd: -q, q0=[1.0],
                                qd0=[0.0]) if hasattr(mbint, "MechanicalSystem") else None
    if ms is None:
        pytest.skip("no MechanicalSystem")
    traj = mbint.simulate(ms, (0, 0.1))
    with pytest.raises(ValueError, match="PlanarModel or a SpatialModel"):
        traj.reactions()


def test_urdf_pendulum_support(tmp_path):
    """A URDF model is a SpatialModel: the hinge of a physical pendulum (centre of mass
    0.5 m below a y-axis hinge, driven by a constant joint torque) holds m (a_cm - g)
    and no moment about its axis (the torque is the actuator's, not the joint's)."""
    pytest.importorskip("yourdfpy")
    urdf = tmp_path / "pendulum.urdf"
    urdf.write_text("""<?xml version="1.0"?>
<robot name="pendulum">
<link name="base"><inertial><mass value="1"/>
<inertia ixx="0.1" iyy="0.1" izz="0.1" ixy="0" ixz="0" iyz="0"/></inertial></link>
<link name="arm"><inertial><origin xyz="0 0 -0.5"/><mass value="2"/>
<inertia ixx="0.1" iyy="0.2" izz="0.3" ixy="0" ixz="0" iyz="0"/></inertial></link>
<joint name="hinge" type="revolute"><parent link="base"/><child link="arm"/>
<axis xyz="0 1 0"/><limit lower="-3" upper="3" effort="10" velocity="5"/></joint>
</robot>""")
    m = mbint.load_urdf(str(urdf), q=[0.7], qd=[0.5], torques={"hinge": 1.5})
    traj = mbint.simulate(m, (0, 1.0), rtol=1e-10, atol=1e-10)
    r = traj.reactions("hinge")
    F = r.on_j.force
    assert np.abs(F - 2.0 * (traj.qdd[:3] - np.array([[0.0], [0.0], [-G]]))).max() < 1e-6 * 2 * G
    assert np.abs(r.on_j.torque[1]).max() < 1e-6 * 2 * G * 0.5
    assert r.on_j.body == m.bodies[0].name and r.on_i.ground


def test_saved_trajectory_keeps_driver_outputs(tmp_path):
    """A trajectory written to NetCDF carries the motor torque with its unit, and the
    loaded one (its model rebuilt from the description) gives the same reactions."""
    pytest.importorskip("xarray")
    m = slider_crank()
    traj = mbint.simulate(m, (0, 0.3), method="radau_iia", rtol=1e-8, atol=1e-8)
    ds = traj.to_xarray()
    assert ds["output_motor.torque"].attrs["units"] == "N m"
    assert np.array_equal(ds["output_motor.torque"].values, traj.output("motor.torque"))
    back = mbint.load(traj.save(tmp_path / "crank.nc"))
    assert np.allclose(back.output("motor.torque"), traj.output("motor.torque"), rtol=0,
                       atol=1e-12)
    assert np.allclose(back.reactions("B").on_j.force, traj.reactions("B").on_j.force,
                       rtol=0, atol=1e-12)


def test_spatial_wrench_does_the_virtual_work():
    """For every joint kind between two bodies in general orientations and arbitrary
    multipliers, the reported force and torque do the virtual work of
    Q_c = -Phi_q^T lam on any virtual rigid motion (dr, dpi) of each body:
    F . dr + (n_P + s_P x F) . dpi = Q_c . dq with dp = E(p)^T dpi / 2."""
    from mbint.mbs.reactions import joint_reactions
    from mbint.mbs.spatial import _E

    rng = np.random.default_rng(24)
    for kind in ("spherical", "revolute", "universal", "cylindrical", "translational",
                 "fixed", "distance", "driver"):
        m = SpatialModel()
        a = m.add_body(2.0, (0.3, 0.4, 0.5), r=(0.1, 0.2, 0.3), axis_angle=((1, 2, 3), 0.7),
                       name="a")
        b = m.add_body(1.5, (0.2, 0.25, 0.3), r=(0.6, -0.1, 0.5),
                       axis_angle=((-2, 1, 0.5), 1.1), name="b")
        P, ax = (0.35, 0.05, 0.4), (0.3, -0.5, 0.8)
        {"spherical": lambda: m.add_spherical(a, b, P, name="J"),
         "revolute": lambda: m.add_revolute(a, b, P, ax, name="J"),
         "universal": lambda: m.add_universal(a, b, P, (1, 0, 0), (0, 1, 0), name="J"),
         "cylindrical": lambda: m.add_cylindrical(a, b, P, ax, name="J"),
         "translational": lambda: m.add_translational(a, b, P, ax, name="J"),
         "fixed": lambda: m.add_fixed(a, b, name="J"),
         "distance": lambda: m.add_distance(a, (0.1, 0.2, 0), b, (0.5, 0, 0.3), name="J"),
         "driver": lambda: m.add_driver(a, b, "rotation", P, ax, c1=0.5, name="J")}[kind]()
        q = m.q0
        lam = rng.normal(size=m.nc)
        lam[:2] = 0.0  # the normalization rows are no joint's
        Qc = -m.constraint_jacobian(0.0, q).T @ lam
        r = joint_reactions(m, [0.0], q[:, None], lam[:, None], "J")
        for body, w in ((a, r.on_i), (b, r.on_j)):
            o = 7 * body.index
            p = q[o + 3:o + 7]
            sP = matrix_from_quat(p) @ w.point
            F, nP = w.force[:, 0], w.torque[:, 0]
            for _ in range(3):
                dr, dpi = rng.normal(size=3), rng.normal(size=3)
                dq = np.concatenate([dr, 0.5 * _E(p).T @ dpi])
                work = F @ dr + (nP + np.cross(sP, F)) @ dpi
                assert work == pytest.approx(Qc[o:o + 7] @ dq, rel=1e-12, abs=1e-12), kind
