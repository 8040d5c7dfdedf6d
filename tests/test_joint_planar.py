"""formulation="joint" on PlanarModel trees (issue 23): the joint angles and slides of
a tree of revolute and translational joints, x'' by the articulated-body algorithm under
the model's own forces (mbint.mbs.joint.PlanarJointTree, csrc/mbs/form_joint.c).

Oracles: the index-1 formulation of the same model (the saddle-point system over the
body coordinates: another formulation, another linear algebra) at tight tolerance, its
accelerations at the states the joint run visits (``model.rhs``), the energy of an
undamped tree, and the order of a fixed-step Rosenbrock method (rodas4: order 4 needs
the Jacobian of the right-hand side; a Jacobian without the force or the inertia terms
drops it to 2 or below)."""
import math

import numpy as np
import pytest

import mbint
from mbint import PlanarModel, models
from mbint.mbs.joint import PlanarJointTree


def _rot(a):
    return np.array([[math.cos(a), -math.sin(a)], [math.sin(a), math.cos(a)]])


def slider_crane(rail_reversed=False, slider_reversed=False, damped=True):
    """A cart on an inclined rail (a translational joint to the ground), a bar pinned
    to the cart, a slider on the bar (a translational joint between two bodies);
    a TSDA from the ground to the cart, an RSDA between cart and bar, a TSDA along the
    slider.  ``*_reversed``: the translational joint given with the child as body_i."""
    m = PlanarModel(gravity=(0.0, -9.81), name="slider_crane")
    a, th_c, s0, v0 = 0.4, 0.4, 0.3, 0.5
    u = np.array([math.cos(a), math.sin(a)])
    cart = m.add_body(2.0, 0.1, q=(*(s0 * u), th_c), qd=(*(v0 * u), 0.0), name="cart")
    if rail_reversed:  # the ground's point (0, 0) on the cart's line, axis in the cart frame
        m.add_translational(cart, (0.0, 0.0), m.ground, (0.0, 0.0), axis=_rot(-th_c) @ u,
                            name="rail")
    else:
        m.add_translational(m.ground, (0.0, 0.0), cart, (0.0, 0.0), axis=u, name="rail")
    beta, wb, pin = -0.7, 1.5, np.array([0.1, 0.05])
    p = s0 * u + _rot(th_c) @ pin
    e = _rot(beta) @ np.array([0.5, 0.0])
    vp = v0 * u
    bar = m.add_body(1.0, 1.0 / 12, q=(*(p + e), beta),
                     qd=(*(vp + wb * np.array([-e[1], e[0]])), wb), name="bar")
    m.add_revolute(cart, pin, bar, (-0.5, 0.0), name="pin")
    d, off = 0.3, 0.2
    r = p + e + _rot(beta) @ np.array([d, 0.0])
    ds = _rot(beta) @ np.array([d, 0.0])
    slider = m.add_body(0.5, 0.01, q=(*r, beta + off),
                        qd=(*(vp + wb * np.array([-(e + ds)[1], (e + ds)[0]])), wb),
                        name="slider")
    if slider_reversed:
        m.add_translational(slider, (0.0, 0.0), bar, (0.0, 0.0),
                            axis=(math.cos(-off), math.sin(-off)), name="slide")
    else:
        m.add_translational(bar, (0.0, 0.0), slider, (0.0, 0.0), axis=(1.0, 0.0), name="slide")
    c = 1.0 if damped else 0.0
    m.add_spring_damper(m.ground, (-1.0, 0.5), cart, (0.0, 0.0), k=50.0, c=c, length0=0.8)
    m.add_rotational_spring_damper(cart, bar, k=5.0, c=0.1 * c)
    m.add_spring_damper(bar, (0.0, 0.0), slider, (0.0, 0.0), k=20.0, c=0.2 * c, length0=0.2)
    m.t_span = (0.0, 1.5)
    return m


MODELS = {
    "rn_stiff_double_pendulum": lambda: models.stiff_double_pendulum(),
    "llm_double_pendulum_stiff_spring": lambda: models.double_pendulum_stiff_spring(),
    "pendulum_chain": lambda: models.pendulum_chain(6, k=20.0, c=0.1, angle=0.3),
    "prismatic": lambda: slider_crane(),
    "prismatic_reversed": lambda: slider_crane(True, True),
}


def _runs(m, T, method="radau_iia", tol=1e-11, n=41):
    te = np.linspace(0.0, T, n)
    a = mbint.simulate(m, (0.0, T), method, formulation="index1", rtol=tol, atol=tol, t_eval=te)
    b = mbint.simulate(m, (0.0, T), method, formulation="joint", rtol=tol, atol=tol, t_eval=te)
    assert a.success and b.success
    return a, b


@pytest.mark.parametrize("name", list(MODELS))
def test_joint_motion_equals_index1(name):
    """Body coordinates, rates and accelerations of the joint run equal the index-1
    run's to ~1e-7 (both at rtol = atol = 1e-11)."""
    m = MODELS[name]()
    T = 0.5 if name.startswith("llm") else m.t_span[1]
    a, b = _runs(m, T)
    scale = max(1.0, np.abs(a.q).max())
    assert np.abs(a.q - b.q).max() <= 1e-7 * scale
    assert np.abs(a.qd - b.qd).max() <= 1e-6 * max(1.0, np.abs(a.qd).max())
    assert np.abs(a.qdd - b.qdd).max() <= 1e-5 * max(1.0, np.abs(a.qdd).max())
    # the joint state is as many numbers as joints, and the joint angles are the
    # relative body angles
    tree = PlanarJointTree(m)
    assert b.x_joint.shape == (len(m.joint_elements), len(b.t)) == (tree.n, len(b.t))
    for k, e in enumerate(m.joint_elements):
        if e.kind == "revolute":
            th = lambda i: b.q[3 * i + 2] if i >= 0 else 0.0  # noqa: E731
            assert np.allclose(b.x_joint[k], th(e.j) - th(e.i), atol=1e-12)
    # the multipliers of the body-coordinate mechanism at each output's (q, q') (no
    # multipliers are integrated): those of the index-1 run, to its accuracy
    assert np.abs(b.lam - a.lam).max() <= 1e-5 * max(1.0, np.abs(a.lam).max())


def test_reactions_of_a_joint_run_equal_index1s():
    """The joint reactions of the RN stiff double pendulum from a joint run (its
    multipliers from the saddle-point system at each output) equal an index-1 run's,
    and Newton's second law holds for body 2: m2 a2 = F_pin1 + m2 g (its other forces,
    the RSDA, are a pure torque)."""
    m = models.stiff_double_pendulum()
    a, b = _runs(m, 1.0)
    ra, rb = a.reactions(), b.reactions()
    assert set(ra) == set(rb) == {"pin0", "pin1"}
    for name in ra:
        for side in ("on_i", "on_j"):
            fa, fb = getattr(ra[name], side).force, getattr(rb[name], side).force
            assert np.abs(fa - fb).max() <= 1e-6 * max(1.0, np.abs(fa).max())
    f2 = rb["pin1"].on_j.force  # on body 2
    m2 = 0.3
    assert np.abs(m2 * b.qdd[3:5] - (f2 + m2 * np.array([[0.0], [-9.81]]))).max() <= \
        1e-6 * max(1.0, np.abs(f2).max())


@pytest.mark.parametrize("name", ["prismatic_reversed", "pendulum_chain"])
def test_accelerations_equal_the_saddle_point_system(name):
    """q'' of the joint run at each output equals the index-1 right-hand side
    (model.rhs: the saddle-point solve over the body coordinates) at the run's own
    (q, q')."""
    m = MODELS[name]()
    b = mbint.simulate(m, (0.0, 0.5), "dopri5", formulation="joint", rtol=1e-8, atol=1e-8,
                       t_eval=np.linspace(0.0, 0.5, 11))
    nq = m.nq
    for k, t in enumerate(b.t):
        f = m.rhs(t, np.concatenate([b.q[:, k], b.qd[:, k]]))
        assert np.abs(f[nq:] - b.qdd[:, k]).max() <= 1e-9 * max(1.0, np.abs(f[nq:]).max())


@pytest.mark.parametrize("name", ["pendulum_chain", "prismatic"])
def test_energy_is_conserved_undamped(name):
    m = (models.pendulum_chain(5, k=30.0, angle=0.3) if name == "pendulum_chain"
         else slider_crane(damped=False))
    tr = mbint.simulate(m, (0.0, 2.0), "radau_iia", formulation="joint", rtol=1e-11,
                        atol=1e-11, t_eval=np.linspace(0.0, 2.0, 51))
    E = tr.energy()
    swing = np.ptp(E.kinetic)
    assert swing > 1.0  # energy moves between kinetic and potential
    assert np.ptp(E.total) <= 1e-8 * swing


def _loop():
    m = PlanarModel()
    b1 = m.add_body(1.0, 0.1, q=(0.5, 0.0, 0.0))
    b2 = m.add_body(1.0, 0.1, q=(1.0, -0.5, -math.pi / 2))
    m.add_revolute(m.ground, (0.0, 0.0), b1, (-0.5, 0.0))
    m.add_revolute(b1, (0.5, 0.0), b2, (0.5, 0.0))
    m.add_revolute(m.ground, (1.0, -1.0), b2, (-0.5, 0.0), name="closing")
    return m


def _with(kind):
    m = models.pendulum_chain(2)
    if kind == "driver":
        m.add_driver(m.bodies[0], "theta", c0=0.0, name="motor")
    elif kind == "distance":
        m.add_distance(m.ground, (1.0, 0.0), m.bodies[1], (0.0, 0.0), name="rod")
    elif kind == "contact":
        m.add_contact(m.bodies[1], K=1e5, name="floor")
    elif kind == "lonely":
        m.add_body(1.0, 0.1, q=(3.0, 0.0, 0.0), name="loner")
    return m


@pytest.mark.parametrize("kind, words", [("loop", ["loop", "index1"]),
                                         ("driver", ["'motor'", "driver", "index1"]),
                                         ("distance", ["'rod'", "index1"]),
                                         ("contact", ["'floor'", "index1"]),
                                         ("lonely", ["loner", "index1"])])
def test_refusals(kind, words):
    m = _loop() if kind == "loop" else _with(kind)
    with pytest.raises(ValueError) as err:
        mbint.simulate(m, (0.0, 0.1), "rodas4", formulation="joint")
    for w in words:
        assert w in str(err.value)
    if kind == "loop":  # names a joint of the loop (which one closes it: the search order)
        assert any(f"'{e.name}'" in str(err.value) for e in m.joint_elements)


def test_refuses_other_models():
    with pytest.raises(TypeError, match="model"):
        PlanarJointTree(object())


def test_dense_output_in_body_coordinates():
    m = models.stiff_double_pendulum()
    tr = mbint.simulate(m, (0.0, 0.5), "radau_iia", formulation="joint", rtol=1e-10,
                        atol=1e-10, dense_output=True, t_eval=[0.0, 0.2, 0.5])
    y = tr.sol(0.2)
    assert np.abs(y[:m.nq] - tr.q[:, 1]).max() <= 1e-9
    assert np.abs(y[m.nq:] - tr.qd[:, 1]).max() <= 1e-8


def test_python_force_and_generalized_force_act_as_on_index1():
    """A Python force (the GIL held during the run) and a generalized time force act on
    the joint run as on the index-1 run."""
    m = models.pendulum_chain(3, angle=0.2)
    m.add_force(m.bodies[2], lambda t, q, qd: (2.0 * math.sin(3 * t), -0.5 * qd[7], 0.1),
                name="push")
    m.add_generalized_force(m.bodies[1], "theta", c0=0.3, a=0.5, w=4.0)
    a, b = _runs(m, 1.0, method="rodas4", tol=1e-10)
    assert np.abs(a.q - b.q).max() <= 1e-7


def test_simulator_inputs_reach_a_planar_joint_run():
    """Simulator.set_input between pieces acts on a planar joint run as on index1 (the
    forces are the model's, evaluated afresh; formerly refused, as for URDF trees)."""
    def run(form, value):
        m = models.pendulum_chain(2, angle=0.2)
        m.add_generalized_force(m.bodies[0], "theta", c0=0.0, name="motor")
        s = mbint.Simulator(m, method="rodas4", formulation=form, rtol=1e-10, atol=1e-10)
        s.advance(0.2)
        s.set_input("motor", value)
        s.advance(0.5)
        assert abs(s.t - 0.5) <= 1e-12
        return s.state[0]
    qa, qb, q0 = run("index1", 3.0), run("joint", 3.0), run("joint", 0.0)
    assert np.abs(qa - qb).max() <= 1e-7            # the same motion under the input
    assert np.abs(qb - q0).max() >= 1e-2            # which the input changed


def test_accelerations_and_multipliers_of_a_joint_run_are_solved_on_first_use():
    # a joint run of simulate() leaves qdd and lam to their first use (the ABA and the
    # saddle-point solve at each output cost a third of the C run of the stiff pendulum);
    # they equal those of the index-1 system at the same (q, q'), survive pickling
    # unsolved, and a Simulator run (whose inputs change between outputs) still solves
    # them in C
    import pickle
    m = models.stiff_double_pendulum()
    T = np.linspace(0.0, 1.0, 21)
    a = mbint.simulate(m, (0.0, 1.0), "bdf", rtol=1e-8, atol=1e-8, t_eval=T, formulation="joint")
    assert a.__dict__["_lam"] is None and a.__dict__["_qdd"] is None
    b = pickle.loads(pickle.dumps(a))
    a_, l_ = m.accelerations(a.t, a.q, a.qd)
    assert np.abs(a.lam - l_).max() <= 1e-12 * np.abs(l_).max()
    assert np.abs(a.qdd - a_).max() <= 1e-12 * np.abs(a_).max()
    assert a.lam.shape == (m.nc, T.size) and np.array_equal(b.lam, a.lam)
    assert np.array_equal(b.qdd, a.qdd)
    c = mbint.simulate(m, (0.0, 1.0), "bdf", rtol=1e-8, atol=1e-8, t_eval=T)
    assert np.abs(a.lam - c.lam).max() <= 1e-5 * np.abs(c.lam).max()
    assert np.abs(a.qdd - c.qdd).max() <= 1e-5 * np.abs(c.qdd).max()
    # the joint engine's own q'' (a Simulator run solves them in C, from the ABA)
    s = mbint.Simulator(m, method="bdf", formulation="joint", rtol=1e-8, atol=1e-8)
    s.advance(1.0)
    tr = s.trajectory()
    assert tr.__dict__["_lam"] is not None and tr.__dict__["_qdd"] is not None
    a2, l2 = m.accelerations(tr.t, tr.q, tr.qd)
    assert np.abs(tr.qdd - a2).max() <= 1e-9 * np.abs(a2).max()
    assert np.abs(tr.lam - l2).max() <= 1e-9 * np.abs(l2).max()
    a.q[:, 3] = np.nan  # a point whose state is not finite: NaN, the others solved
    a.lam = a.qdd = None
    assert np.isnan(a.lam[:, 3]).all() and np.isfinite(np.delete(a.lam, 3, axis=1)).all()
    assert np.isnan(a.qdd[:, 3]).all() and np.isfinite(np.delete(a.qdd, 3, axis=1)).all()


def test_a_large_tree_skips_the_rank_test_but_not_the_residuals():
    # from SPARSE_MIN_NQ coordinates the rank test of Phi_q (an envelope LDL^T) was most of
    # a short joint run's set-up; a tree's Phi_q has full row rank at every configuration,
    # so the joint formulation reports rank nc without it, and still checks Phi(q0), Phi'
    m = models.pendulum_chain(25, angle=0.3)
    assert m.nq >= mbint.SPARSE_MIN_NQ
    tr = mbint.simulate(m, (0.0, 0.01), "dop853", formulation="joint")
    assert tr.success and tr.initial["rank"] == m.nc and tr.initial["dependent"] == []
    ref = mbint.mbs.check_initial_conditions(m)
    assert ref["rank"] == m.nc and ref["dependent"] == []  # what the test would have found
    q0 = m.q0.copy()
    q0[4] += 1e-3  # body 2 off its pin
    with pytest.raises(ValueError, match="inconsistent initial conditions"):
        mbint.simulate(m, (0.0, 0.01), "dop853", formulation="joint", q0=q0)
