"""formulation="joint" on hand-built SpatialModel trees (revolute, translational and
spherical joints): the same motion as the body-coordinate index-1 formulation, q''
against the index-1 saddle-point solve at random states, energy, forward kinematics
against an independent Python implementation, refusals (mbint/mbs/joint.py SpatialJointTree,
csrc/mbs/joint_spatial.c)."""
import numpy as np
import pytest

import mbint
from mbint import _core
from mbint.mbs.joint import joint_tree
from mbint.mbs.joint import SpatialJointTree, _G

G = (0.0, 0.0, -9.81)


def rod_inertia(mass, L, r=0.005):
    return (mass * r * r / 2, mass * (3 * r * r + L * L) / 12, mass * (3 * r * r + L * L) / 12)


def rope(N, L=0.1, mass=0.1, w0=(0.0, 0.0, 0.0)):
    """N rods along +x on spherical joints, the first at the origin; body k spins at
    w0 about its joint (a consistent velocity only for N = 1)."""
    m = mbint.SpatialModel(gravity=G)
    prev = m.ground
    for k in range(N):
        b = m.add_body(mass, rod_inertia(mass, L), r=((k + 0.5) * L, 0, 0))
        m.add_spherical(prev, b, (k * L, 0, 0))
        prev = b
    return m


def spherical_pendulum():
    """One rod on a ball joint, tilted, spinning about an axis out of every plane."""
    m = mbint.SpatialModel(gravity=G)
    b = m.add_body(0.7, (0.02, 0.05, 0.04), r=(0.3, 0.1, -0.2))
    m.add_spherical(m.ground, b, (0.0, 0.0, 0.0))
    w = np.array([0.4, -1.1, 2.3])
    r = np.array([0.3, 0.1, -0.2])
    v = np.cross(w, r)
    p = b.p0
    qd = np.concatenate([v, 0.5 * _G(p).T @ (w @ np.eye(3))])  # body axes = global at q0
    m.set_initial(qd=qd)
    return m


def double_pendulum_3d():
    """Two bodies on revolute joints with non-parallel axes, a tilted initial pose and
    rates (a consistent velocity: each body turns about its own axis)."""
    m = mbint.SpatialModel(gravity=G)
    a = m.add_body(1.2, (0.03, 0.08, 0.07), r=(0.25, 0.0, 0.0))
    c = m.add_body(0.8, (0.01, 0.03, 0.035), r=(0.5, 0.0, -0.2))
    m.add_revolute(m.ground, a, (0.0, 0.0, 0.0), (0.0, 1.0, 0.0))
    m.add_revolute(a, c, (0.5, 0.0, 0.0), (0.6, 0.0, 0.8))
    return m


def set_joint_rates(m, xd):
    """A consistent initial velocity of m from joint rates xd (rows of joint_names)."""
    tree = SpatialJointTree(m)
    x0, _ = tree_state(tree, m)
    q, qd = tree.body_state(x0, xd)
    m.set_initial(q=q, qd=qd)


def tree_state(tree, m):
    """(x, xd) of the model's initial state by the tree's inverse map (C), via a run
    of zero length."""
    tr = mbint.simulate(m, (0.0, 1e-9), method="dop853", formulation="joint",
                        t_eval=[0.0])
    return tr.x_joint[:, 0], tr.xd_joint[:, 0]


def spring_chain():
    """A revolute link, a translational slider on it and a ball-jointed rod, with a
    TSDA to the ground, an RSDA on the revolute joint and a constant applied force."""
    m = mbint.SpatialModel(gravity=G)
    a = m.add_body(1.0, (0.02, 0.06, 0.05), r=(0.3, 0.0, 0.0))
    s = m.add_body(0.5, (0.004, 0.004, 0.004), r=(0.45, 0.0, 0.05))
    c = m.add_body(0.3, rod_inertia(0.3, 0.4), r=(0.45, 0.0, -0.15))
    m.add_revolute(m.ground, a, (0.0, 0.0, 0.0), (0.0, 0.3, 1.0))
    m.add_translational(a, s, (0.45, 0.0, 0.05), (1.0, 0.0, 0.0))
    m.add_spherical(s, c, (0.45, 0.0, 0.05))
    m.add_spring_damper(m.ground, (0.3, 0.4, 0.2), s, (0.45, 0.0, 0.05), k=40.0, c=1.5,
                        length0=0.2)
    m.add_rotational_spring_damper(m.ground, a, (0.0, 0.3, 1.0), k=5.0, c=0.3)
    # an applied force and torque (global) at the rod's end, depending on the time
    m.add_force(c, lambda t, q, qd: [0.4 * np.cos(3 * t), -0.3, 0.0, 0.0, 0.02, 0.01 * t],
                point=(0.45, 0.0, -0.35), name="push")
    return m


def aligned(jt, ref):
    """jt's (q, qd) with each body's Euler parameters (and rates) signed as ref's: p and
    -p are the same rotation, and the joint run's continuity of sign is only as good as
    its output grid (a body turning far between two outputs may come out as -p)."""
    q, qd = jt.q.copy(), jt.qd.copy()
    for b in range(q.shape[0] // 7):
        rows = slice(7 * b + 3, 7 * b + 7)
        sign = np.where(np.einsum("ij,ij->j", q[rows], ref.q[rows]) < 0, -1.0, 1.0)
        q[rows] *= sign
        qd[rows] *= sign
    return q, qd


def both(m, t_end=1.0, method="dop853", tol=1e-11, **kw):
    out = {}
    for form in ("index1", "joint"):
        out[form] = mbint.simulate(m, (0.0, t_end), method=method, formulation=form,
                                   rtol=tol, atol=tol, t_eval=np.linspace(0, t_end, 11), **kw)
    return out["index1"], out["joint"]


@pytest.mark.parametrize("build", [spherical_pendulum, double_pendulum_3d,
                                   lambda: rope(5), spring_chain])
def test_same_motion_as_index1(build):
    m = build()
    if build is double_pendulum_3d:
        set_joint_rates(m, [1.5, -2.0])
    if build is spring_chain:
        set_joint_rates(m, [0.8, 0.3, 1.0, 0.0, 0.0, 0.0])
    i1, jt = both(m)
    assert jt.status == 0 and i1.status == 0
    q, qd = aligned(jt, i1)
    assert np.max(np.abs(q - i1.q)) < 1e-7
    assert np.max(np.abs(qd - i1.qd)) < 1e-7
    # the motion is not trivial: the last body moved by more than a centimetre
    assert np.max(np.abs(jt.q[-7:-4, -1] - jt.q[-7:-4, 0])) > 1e-2


def test_rope_of_five_rods_3d_motion():
    """A rope whose rods swing out of the vertical plane: initial joint rates about
    several axes (Euler-parameter rates of the ball joints)."""
    m = rope(5)
    tree = SpatialJointTree(m)
    rng = np.random.default_rng(3)
    xd = []
    for _ in range(5):
        xd += list(0.5 * _G(np.array([1.0, 0, 0, 0])).T @ rng.normal(size=3))
    set_joint_rates(m, xd)
    i1, jt = both(m, t_end=0.6)
    assert np.max(np.abs(aligned(jt, i1)[0] - i1.q)) < 1e-7
    assert np.max(np.abs(jt.q[1::7] - i1.q[1::7])) < 1e-7  # y: out of the x-z plane
    assert np.max(np.abs(jt.q[1::7])) > 1e-2
    assert tree.nz == 20 and jt.x_joint.shape == (20, 11)


def test_qdd_against_index1_at_random_states():
    m = spring_chain()
    tree = SpatialJointTree(m)
    rng = np.random.default_rng(7)
    for _ in range(4):
        x = np.empty(tree.nz)
        xd = np.empty(tree.nz)
        x[:2], xd[:2] = rng.uniform(-1, 1, 2), rng.uniform(-2, 2, 2)
        p = rng.normal(size=4)
        p /= np.linalg.norm(p)
        x[2:], xd[2:] = p, 0.5 * _G(p).T @ rng.normal(size=3)
        q, qd = tree.body_state(x, xd)
        acc = {}
        for form in ("index1", "joint"):
            tr = mbint.simulate(m, (0.0, 1e-6), method="dop853", formulation=form, q0=q,
                                qd0=qd, t_eval=[0.0])
            acc[form] = tr.qdd[:, 0]
        scale = np.max(np.abs(acc["index1"]))
        assert np.max(np.abs(acc["joint"] - acc["index1"])) < 1e-9 * max(scale, 1.0)


def test_forward_kinematics_c_against_python():
    """traj.q (C forward kinematics) equals the tree's Python forward kinematics of
    the integrated joint state, and the joint state reproduces the initial q."""
    m = spring_chain()
    set_joint_rates(m, [0.8, 0.3, 1.0, 0.0, 0.0, 0.0])
    tr = mbint.simulate(m, (0.0, 0.5), method="dop853", formulation="joint",
                        t_eval=np.linspace(0, 0.5, 6))
    tree = joint_tree(m)
    for k in range(6):
        q, qd = tree.body_state(tr.x_joint[:, k], tr.xd_joint[:, k])
        sign = np.ones(m.nq)
        for b in range(3):  # Euler parameters: either sign
            if q[7 * b + 3:7 * b + 7] @ tr.q[7 * b + 3:7 * b + 7, k] < 0:
                sign[7 * b + 3:7 * b + 7] = -1
        assert np.max(np.abs(sign * q - tr.q[:, k])) < 1e-12
        assert np.max(np.abs(sign * qd - tr.qd[:, k])) < 1e-12
    q0 = np.concatenate([b.q0 for b in m.bodies])
    assert np.max(np.abs(tr.q[:, 0] - q0)) < 1e-12
    # the joints are 0 at the model's initial configuration, a ball's p = (1, 0, 0, 0)
    assert np.allclose(tr.x_joint[:, 0], [0, 0, 1, 0, 0, 0], atol=1e-14)
    assert tree.joint_names[2:] == [f"{m.joint_elements[2].name}.e{c}" for c in range(4)]


def test_energy_conserved_without_dampers():
    m = rope(5)
    xd = []
    for k in range(5):
        xd += list(0.5 * _G(np.array([1.0, 0, 0, 0])).T @ np.array([0.3 * k, -1.0, 0.5]))
    set_joint_rates(m, xd)
    tr = mbint.simulate(m, (0.0, 2.0), method="dop853", formulation="joint", rtol=1e-10,
                        atol=1e-10, t_eval=np.linspace(0, 2, 41))
    E = tr.energy().total
    assert np.ptp(E) < 1e-7 * max(1.0, np.max(np.abs(E)))


def test_implicit_methods_and_long_chain():
    """The forward-difference Jacobian drives radau_iia and bdf to the index-1 motion;
    a chain of 40 ball joints (the work array of a long tree) runs and matches."""
    m = rope(3)
    ref = mbint.simulate(m, (0.0, 0.5), method="dop853", formulation="index1", rtol=1e-11,
                         atol=1e-11, t_eval=[0.5])
    for method in ("radau_iia", "bdf"):
        tr = mbint.simulate(m, (0.0, 0.5), method=method, formulation="joint", rtol=1e-8,
                            atol=1e-8, t_eval=[0.5])
        assert np.max(np.abs(aligned(tr, ref)[0] - ref.q)) < 1e-5
    m = rope(40, L=0.025, mass=0.025)
    i1, jt = both(m, t_end=0.2, tol=1e-9)
    assert np.max(np.abs(aligned(jt, i1)[0] - i1.q)) < 1e-6


def test_long_rope_ill_conditioned_articulated_inertia():
    """A rope of 100 thin rods: each ball joint's D has the rods' small inertia about
    their axes next to the chain's large transverse one (condition ~1e6).  With D^-1 by
    cofactors the ABA lost D's positive definiteness at t ~ 0.03 s and every tolerance
    stopped there; with the Cholesky form I - W W^T it runs and matches index1."""
    m = rope(100)
    i1 = mbint.simulate(m, (0.0, 0.08), method="dop853", formulation="index1", rtol=1e-9,
                        atol=1e-9, t_eval=[0.08])
    jt = mbint.simulate(m, (0.0, 0.08), method="dop853", formulation="joint", rtol=1e-9,
                        atol=1e-9, t_eval=[0.08])
    assert jt.status == 0
    assert np.max(np.abs(aligned(jt, i1)[0] - i1.q)) < 1e-6


def test_refusals():
    m = mbint.SpatialModel(gravity=G)
    a = m.add_body(1.0, (0.1, 0.1, 0.1), r=(0.5, 0, 0))
    m.add_universal(m.ground, a, (0, 0, 0), (0, 0, 1), (0, 1, 0), name="hooke")
    with pytest.raises(ValueError, match="universal 'hooke'.*index1"):
        mbint.simulate(m, (0, 0.1), formulation="joint")
    m = double_pendulum_3d()
    m.add_driver(m.ground, m.bodies[0], "rotation", (0, 0, 0), (0, 1, 0), f=0.0, name="motor")
    with pytest.raises(ValueError, match="driver 'motor'"):
        SpatialJointTree(m)
    m = rope(2)
    m.add_spherical(m.ground, m.bodies[1], (0.2, 0.0, 0.0), name="loop")
    with pytest.raises(ValueError, match="closes a kinematic loop"):
        SpatialJointTree(m)
    m = rope(1)
    m.add_body(1.0, (0.1, 0.1, 0.1), r=(2, 0, 0), name="loose")
    with pytest.raises(ValueError, match=r"\['loose'\] are not reached"):
        SpatialJointTree(m)
    with pytest.raises(TypeError, match="model: a SpatialModel"):
        SpatialJointTree(object())


def test_engine_refuses_ball_joints():
    """The URDF engine's functions (ABA, RNEA, CRBA, FK) do not take ball joints, and a
    ball joint is refused in a tree that is not a SpatialModel's."""
    tree = SpatialJointTree(rope(2))
    with pytest.raises(Exception):
        _core.jtree_eval(tree._handle, "aba", np.zeros(2), np.zeros(2), None, 0.0)
    one = dict(parent=np.array([-1], np.intc), type=np.array([3], np.intc),
               frame=np.r_[np.eye(3).ravel(), 0, 0, 0][None], axis=np.array([[1.0, 0, 0]]),
               inertia=np.array([[1.0, 0, 0, 0, 1, 1, 1, 0, 0, 0]]), damping=np.zeros(1),
               input=np.zeros((1, 6)), gravity=np.zeros(3))
    with pytest.raises(ValueError, match="ball"):
        _core.jtree_new(**one)
    _core.jtree_new(**one, mech_forces=True)
