"""simulate(..., sensitivities=...): forward parameter sensitivities of a mechanism
(issue 26; mbint/mbs/sensitivity.py, csrc/python/sens_mech.c over csrc/core/sens.c).

Oracles: the closed form of a mass-spring-damper (differentiated by complex steps), the
right-hand side of a model rebuilt with the changed parameter (the parameters' addresses),
the constraints (consistent initial sensitivities), and central differences of
tight-tolerance runs (tests/test_sens_mech_fd.py, the stiff double pendulum)."""
import cmath

import numpy as np
import pytest

import mbint
from mbint import _core
from mbint.mbs import sensitivity
from mbint.mbs.planar import PlanarModel
from mbint.models import rn

M, K, C, L0, X0, V0 = 2.0, 50.0, 3.0, 1.0, 1.2, 0.3
T = np.linspace(0.0, 2.0, 21)


def msd(mass=M, k=K, c=C, x0=X0, v0=V0):
    """One body on a translational joint along x with a TSDA to the ground at the origin."""
    m = PlanarModel(gravity=(0.0, 0.0), name="msd")
    b = m.add_body(mass, 1.0, q=(x0, 0.0, 0.0), qd=(v0, 0.0, 0.0), name="cart")
    m.add_translational(m.ground, (0.0, 0.0), b, (0.0, 0.0), (1.0, 0.0), name="slider")
    m.add_spring_damper(m.ground, (0.0, 0.0), b, (0.0, 0.0), k=k, c=c, length0=L0,
                        name="spring")
    return m


def x_closed(t, mass, k, c, x0, v0):
    """x(t) of M x'' + c x' + k (x - L0) = 0 (underdamped), complex arguments allowed."""
    a = c / (2 * mass)
    wd = cmath.sqrt(k / mass - a * a)
    u0 = x0 - L0
    return [L0 + cmath.exp(-a * ti) * (u0 * cmath.cos(wd * ti) + (v0 + a * u0) / wd *
                                       cmath.sin(wd * ti)) for ti in t]


def closed_sens(which):
    """d x(t) / d p by a complex step (exact to rounding for this analytic closed form)."""
    args = dict(mass=M, k=K, c=C, x0=X0, v0=V0)
    h = 1e-30
    args[which] = args[which] + 1j * h
    return np.array([v.imag / h for v in x_closed(T, **args)])


CASES = [("index1", "dop853"), ("index1", "bdf"), ("index1", "radau_iia"), ("index1", "rodas4"),
         ("index3", "bdf"), ("index3", "radau_iia"), ("index2", "bdf"), ("index2", "radau_iia"),
         ("index1_dae", "bdf"), ("index1_dae", "radau_iia"), ("ggl", "bdf"),
         ("ggl", "radau_iia"), ("joint", "dop853"), ("joint", "radau_iia")]
NAMES = {"spring.k": "k", "spring.c": "c", "q0[cart.x]": "x0", "qd0[0]": "v0",
         "cart.mass": "mass"}


@pytest.mark.parametrize("form,method", CASES)
def test_mass_spring_damper_closed_form(form, method):
    names = [n for n in NAMES if not (form == "joint" and n == "cart.mass")]
    tr = mbint.simulate(msd(), (0.0, 2.0), method, formulation=form, t_eval=T, rtol=1e-10,
                        atol=1e-12, sensitivities=names)
    assert tr.success, tr.message
    assert tr.sens_q.shape == (3, len(names), len(T))
    for k, name in enumerate(names):
        ref = closed_sens(NAMES[name])
        err = np.max(np.abs(tr.sens_q[0, k] - ref)) / np.max(np.abs(ref))
        assert err <= 1e-7, (form, method, name, err)
        # y and theta are held by the joint: their sensitivities vanish
        assert np.max(np.abs(tr.sens_q[1:, k])) <= 1e-9 * np.max(np.abs(ref))
    # velocity sensitivities: the time derivative of the closed form's (centred, fine grid)
    tt = T[1:-1]
    k = names.index("spring.k")
    dt = 1e-5
    ref_v = (np.array([v.imag for v in x_closed(tt + dt, M, K + 1e-30j, C, X0, V0)]) -
             np.array([v.imag for v in x_closed(tt - dt, M, K + 1e-30j, C, X0, V0)])) / (2 * dt * 1e-30)
    err = np.max(np.abs(tr.sens_qd[0, k, 1:-1] - ref_v)) / np.max(np.abs(ref_v))
    assert err <= 1e-7, err
    assert [p["name"] for p in tr.parameters] == names
    units = {p["name"]: p["unit"] for p in tr.parameters}
    assert units["spring.k"] == "N/m" and units["spring.c"] == "N*s/m"
    assert units["q0[cart.x]"] == "m" and units["qd0[0]"] == "m/s"


def test_sensitivities_leave_the_run_unchanged():
    plain = mbint.simulate(msd(), (0.0, 2.0), "bdf", t_eval=T, rtol=1e-8, atol=1e-10)
    sens = mbint.simulate(msd(), (0.0, 2.0), "bdf", t_eval=T, rtol=1e-8, atol=1e-10,
                          sensitivities=["spring.k"])
    assert plain.sens_q is None and plain.parameters is None
    # the same trajectory to the tolerance (the steps differ: s is in the error test)
    assert np.max(np.abs(plain.q - sens.q)) < 1e-6
    assert sens.stats["sens_nf_base"] > 0


# ---------------------------------------------------------------- parameter addresses

def _rebuilt(model, name, value):
    """A model built anew from the description with the parameter changed."""
    m2 = PlanarModel.from_description(model.describe())
    el, col = name.rsplit(".", 1)
    for b in m2.bodies:
        if b.name == el:
            setattr(b, col, value)
            break
    else:
        e = next(e for e in m2.joint_elements + m2.force_elements if e.name == el)
        e.params[{"length0": "L0", "angle0": "L0"}.get(col, col)] = value
    m2._compiled = None
    return m2.compile().handle


@pytest.mark.parametrize("name", ["body1.mass", "body2.inertia", "rsda2.k", "rsda2.c",
                                  "rsda1.L0", "pin1.si_x", "pin1.sj_y", "rsda1.angle0"])
def test_parameter_address_is_the_table_entry(name):
    model = rn.stiff_double_pendulum()
    own = sensitivity.own_handle(model, model.compile().handle)
    p = sensitivity.parameter(model, own, name, model.q0, model.qd0)
    new = p.value * 1.01 + 0.013
    assert _core.mech_param(own, p.table, p.row, p.column, new) == p.value
    ref = _rebuilt(model, name, new)
    rng = np.random.default_rng(1)
    for _ in range(3):
        q = model.q0 + 0.05 * rng.standard_normal(model.nq)
        qd = model.qd0 + 0.5 * rng.standard_normal(model.nq)
        f = _core.mech_eval(own, "rhs", 0.1, q, qd)
        g = _core.mech_eval(ref, "rhs", 0.1, q, qd)
        f0 = _core.mech_eval(model.compile().handle, "rhs", 0.1, q, qd)
        assert np.max(np.abs(f - f0)) > 1e-9 * np.max(np.abs(f0))  # it moved the rhs
        assert np.allclose(f, g, rtol=1e-13, atol=1e-13 * np.max(np.abs(g)))


def test_own_handle_leaves_the_model_alone():
    model = msd()
    h = model.compile().handle
    tr = mbint.simulate(model, (0.0, 0.5), "bdf", rtol=1e-8, atol=1e-10,
                        sensitivities=["spring.k", "cart.mass"])
    assert tr.success
    assert _core.mech_param(h, 2, 0, "k") == K and _core.mech_param(h, 0, 0, "mass") == M


# ---------------------------------------------------------------- initial conditions

def test_initial_sensitivities_are_consistent():
    model = rn.stiff_double_pendulum()
    names = ["q0[body1.theta]", "qd0[body2.theta]", "pin1.si_x", "rsda2.k"]
    tr = mbint.simulate(model, (0.0, 0.01), "bdf", rtol=1e-8, atol=1e-10,
                        sensitivities=names)
    h = model.compile().handle
    P = _core.mech_eval(h, "phi_q", 0.0, tr.q[:, 0])
    s_q, s_qd = tr.sens_q[:, :, 0], tr.sens_qd[:, :, 0]
    # Phi_q s = -Phi_p (0 but for the joint's location) and the velocity level likewise
    for k in (0, 1, 3):
        assert np.max(np.abs(P @ s_q[:, k])) < 1e-10
    assert np.max(np.abs(s_q[:, 3])) == 0 and np.max(np.abs(s_qd[:, 3])) == 0
    # q0[theta1]: the projection of e_theta1 (minimum-norm), as consistent="project"
    e = np.zeros(model.nq)
    e[2] = 1.0
    assert s_q[2, 0] > 0.1 and np.allclose(s_q[:, 0], e - np.linalg.pinv(P) @ (P @ e))
    # pin1.si_x: d/dp of the projected initial state of a rebuilt model (differences)
    dq = []
    for sgn in (1, -1):
        m2 = PlanarModel.from_description(model.describe())
        m2.joint_elements[1].params["si_x"] += sgn * 1e-6
        m2._compiled = None
        t2 = mbint.simulate(m2, (0.0, 1e-9), "rk4", q0=model.q0, qd0=model.qd0,
                            consistent="project", h=1e-9, proj_tol=1e-14)
        dq.append(np.concatenate([t2.q[:, 0], t2.qd[:, 0]]))
    ref = (dq[0] - dq[1]) / 2e-6
    got = np.concatenate([s_q[:, 2], s_qd[:, 2]])
    assert np.max(np.abs(got - ref)) < 1e-5 * np.max(np.abs(ref))


# ---------------------------------------------------------------- what is refused

@pytest.mark.parametrize("kw,match", [
    (dict(formulation="state_space"), "state-space formulation"),
    (dict(project=True), "project=True"),
    (dict(method="cvode_bdf"), "SUNDIALS"),
    (dict(linear_algebra="sparse"), "sparse"),
    (dict(events=lambda t, q, qd: q[0] - 1.1), "events"),
    (dict(dense_output=True), "dense_output"),
    (dict(sensitivities=["nope.k"]), "no body, joint or force element 'nope'"),
    (dict(sensitivities=["spring.type"]), "no such real-valued column"),
    (dict(sensitivities=["q0[7]"]), "out of range"),
    (dict(sensitivities=["q0[cart.z]"]), "unknown coordinate"),
    (dict(sensitivities=["spring.k", "spring.k"]), "named twice"),
    (dict(sensitivities=[]), "at least one"),
    (dict(sensitivities=[3]), "named by a string"),
    (dict(formulation="joint", sensitivities=["cart.mass"]), "builds its inertias"),
    (dict(formulation="joint", sensitivities=["slider.si_x"]), "builds its inertias"),
])
def test_refusals(kw, match):
    args = dict(method="bdf", sensitivities=["spring.k"])
    args.update(kw)
    method = args.pop("method")
    exc = TypeError if match == "named by a string" else ValueError
    with pytest.raises(exc, match=match):
        mbint.simulate(msd(), (0.0, 0.1), method, **args)


def test_mechanical_system_takes_initial_conditions_only():
    """A MechanicalSystem's kernels are its own: only q0, qd0 are parameters; x'' = -x - x'
    from x0 = 1: dx/dx0 is the solution from (1, 0) itself (linear)."""
    ms = mbint.MechanicalSystem(mass=lambda q: np.eye(1), forces=lambda t, q, qd: -q - qd,
                                q0=[1.0], qd0=[0.0])
    with pytest.raises(ValueError, match="PlanarModel or SpatialModel"):
        mbint.simulate(ms, (0.0, 0.1), "bdf", sensitivities=["mass.k"])
    tr = mbint.simulate(ms, (0.0, 1.0), "dop853", rtol=1e-10, atol=1e-12,
                        sensitivities=["q0[0]", "qd0[0]"])
    assert np.allclose(tr.sens_q[0, 0], tr.q[0], rtol=1e-8, atol=1e-10)
    t = tr.t  # x(t) from (0, 1): e^{-t/2} sin(w t) / w, w = sqrt(3)/2
    w = np.sqrt(3) / 2
    assert np.allclose(tr.sens_q[0, 1], np.exp(-t / 2) * np.sin(w * t) / w, rtol=1e-7,
                       atol=1e-10)


# ---------------------------------------------------------------- the result, saved

def test_netcdf_and_xarray_keep_the_sensitivities(tmp_path):
    pytest.importorskip("xarray")
    pytest.importorskip("netCDF4")
    tr = mbint.simulate(msd(), (0.0, 1.0), "bdf", t_eval=T[:11], rtol=1e-8, atol=1e-10,
                        sensitivities=["spring.k", "q0[cart.x]"])
    ds = tr.to_xarray()
    assert ds["sens_q"].dims == ("coordinate", "parameter", "time")
    assert list(ds["parameter"].values) == ["spring.k", "q0[cart.x]"]
    assert list(ds["parameter_unit"].values) == ["N/m", "m"]
    assert str(ds["sens_q_unit"].values[0, 0]) == "m/(N/m)"
    assert str(ds["sens_q_unit"].values[2, 1]) == "rad/(m)"
    back = mbint.load(tr.save(tmp_path / "sens.nc"))
    assert np.array_equal(back.sens_q, tr.sens_q) and np.array_equal(back.sens_qd, tr.sens_qd)
    assert back.parameters == tr.parameters
