"""Pickling and saving: models, trajectories, solve_ivp results and dense outputs.

A pickled model carries its description, never a C pointer: the unpickled model
compiles its tables again and must then give the very same run (bit for bit).  A
saved trajectory (NetCDF-4) reloads with every array equal to the bit, its dense
output callable again (also the LLM's dense records, evaluated in C), and is
readable by xarray alone with units on every variable.
"""
import ctypes
import math
import pickle
import shutil
import subprocess

import cloudpickle
import numpy as np
import pytest
import xarray as xr

import mbint
from mbint import models, problems
from mbint.mbs.dataset import StoredModel

FIELDS = ("t", "q", "qd", "qdd", "lam", "t_steps", "h_steps", "err_steps")


def same_run(a, b):
    for k in FIELDS:
        assert np.array_equal(getattr(a, k), getattr(b, k)), k
    assert a.stats == b.stats and a.message == b.message


@pytest.mark.parametrize("name", sorted(models.PAPER_MODELS))
def test_paper_model_pickles_without_its_handle_and_runs_the_same(name):
    m = models.PAPER_MODELS[name]()
    m.compile()                                   # holds a PyCapsule now
    data = pickle.dumps(m)
    m2 = pickle.loads(data)
    assert m2._compiled is None                   # rebuilt from the description on first use
    assert m2.outputs.keys() == m.outputs.keys()
    q, qd = m.q0, m.qd0
    assert m2.reference_energy(q, qd) == m.reference_energy(q, qd)
    kw = dict(method="rodas4", dense_output=True)
    a = mbint.simulate(m, (0, 0.2), **kw)
    b = mbint.simulate(m2, (0, 0.2), **kw)
    same_run(a, b)
    for o in m.outputs:
        assert np.array_equal(a.output(o), b.output(o))


def test_trajectory_pickles_with_dense_output_events_and_contacts():
    m = models.bouncing_balls()
    ev = m.contact_events()
    traj = mbint.simulate(m, (0, 0.8), method="llm", dense_output=True, events=ev)
    assert sum(len(t) for t in traj.t_contacts) > 0          # a contact happened
    back = pickle.loads(pickle.dumps(traj))
    same_run(traj, back)
    ts = np.linspace(0, 0.8, 41)
    assert np.array_equal(back.sol(ts), traj.sol(ts))        # LLM records, evaluated in C
    for a, b in zip(traj.t_contacts + traj.t_events, back.t_contacts + back.t_events):
        assert np.array_equal(a, b)
    assert back.energy().total.tolist() == traj.energy().total.tolist()


def test_solve_ivp_results_and_dense_outputs_pickle():
    res = mbint.solve_ivp(problems.arenstorf, (0, 1), problems.ARENSTORF_Y0, method="dop853",
                          dense_output=True, rtol=1e-8, atol=1e-10)
    back = pickle.loads(pickle.dumps(res))
    assert np.array_equal(back.y, res.y) and back.nfev == res.nfev
    ts = np.linspace(0, 1, 17)
    assert np.array_equal(back.sol(ts), res.sol(ts))
    sol = pickle.loads(pickle.dumps(res.sol))
    assert np.array_equal(sol(ts), res.sol(ts))


def test_complex_dense_output_unpickles():
    """Regression: the complex dense output delegated every attribute, also those
    pickle looks up on an empty instance, and unpickling recursed without end."""
    res = mbint.solve_ivp(lambda t, y: -1j * y, (0, 1), [1 + 0j], dense_output=True)
    back = pickle.loads(pickle.dumps(res))
    assert np.array_equal(back.sol(0.5), res.sol(0.5))
    assert abs(back.sol(0.5)[0] - np.exp(-0.5j)) < 1e-3


# ---------------------------------------------------------------- MechanicalSystem
def _pendulum_mass(q):
    return np.eye(2)


def _pendulum_forces(t, q, qd):
    return np.array([0.0, -9.81])


def _pendulum_phi(t, q):
    return np.array([q[0] ** 2 + q[1] ** 2 - 1.0])


def _pendulum_phi_q(t, q):
    return np.array([[2 * q[0], 2 * q[1]]])


def _pendulum_energy(t, q, qd):
    return 0.5 * qd @ qd + 9.81 * q[1]


def test_mechanical_system_with_python_kernels_pickles():
    ms = mbint.MechanicalSystem(_pendulum_mass, _pendulum_forces, _pendulum_phi, _pendulum_phi_q,
                                q0=[1.0, 0.0], energy=_pendulum_energy, units=["m", "m"])
    back = pickle.loads(pickle.dumps(ms))
    same_run(mbint.simulate(ms, (0, 1), method="rodas4"), mbint.simulate(back, (0, 1),
                                                                         method="rodas4"))
    assert back.coordinate_units == ["m", "m"]


def test_lambda_kernels_need_cloudpickle():
    """pickle stores functions by name, and a lambda has none; cloudpickle stores it by
    value (what mbint.ensemble and Dask use)."""
    ms = mbint.MechanicalSystem(np.eye(1), lambda t, q, qd: -4.0 * q, q0=[1.0])
    with pytest.raises((pickle.PicklingError, AttributeError), match="lambda"):
        pickle.dumps(ms)
    back = pickle.loads(cloudpickle.dumps(ms))
    traj = mbint.simulate(back, (0, 1), method="dop853", rtol=1e-10, atol=1e-12)
    assert abs(traj.q[0, -1] - math.cos(2.0)) < 1e-8          # x'' = -4 x


C_FORCES = r"""
int spring(void *ud, double t, const double *q, const double *qd, double *Q)
{ (void)ud; (void)t; (void)qd; Q[0] = -4.0 * q[0]; return 0; }
"""


@pytest.fixture(scope="module")
def spring_library(tmp_path_factory):
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        pytest.skip("no C compiler")
    d = tmp_path_factory.mktemp("ckernel")
    (d / "spring.c").write_text(C_FORCES)
    lib = d / "libspring.so"
    subprocess.run([cc, "-shared", "-fPIC", "-O2", str(d / "spring.c"), "-o", str(lib)],
                   check=True)
    return str(lib)


def test_c_kernel_of_a_shared_library_pickles_by_name(spring_library):
    from scipy import LowLevelCallable

    fn = ctypes.CDLL(spring_library).spring
    fn.restype = ctypes.c_int
    dp = ctypes.POINTER(ctypes.c_double)
    fn.argtypes = [ctypes.c_void_p, ctypes.c_double, dp, dp, dp]
    for kernel in (fn, LowLevelCallable(fn)):
        ms = mbint.MechanicalSystem(np.eye(1), kernel, q0=[1.0])
        data = pickle.dumps(ms)
        assert spring_library.encode() in data               # the library by path, no pointer
        back = pickle.loads(data)
        kw = dict(method="dop853", rtol=1e-10, atol=1e-12)
        a, b = mbint.simulate(ms, (0, 1), **kw), mbint.simulate(back, (0, 1), **kw)
        same_run(a, b)
        assert abs(b.q[0, -1] - math.cos(2.0)) < 1e-8


def test_c_callbacks_and_user_data_cannot_be_pickled_and_say_why():
    from scipy import LowLevelCallable

    dp = ctypes.POINTER(ctypes.c_double)
    proto = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_double, dp, dp, dp)

    @proto
    def spring(ud, t, q, qd, Q):
        Q[0] = -4.0 * q[0]
        return 0

    ms = mbint.MechanicalSystem(np.eye(1), spring, q0=[1.0])
    with pytest.raises(pickle.PicklingError, match="ctypes callback.*Python function itself"):
        pickle.dumps(ms)
    w = ctypes.c_double(2.0)
    llc = LowLevelCallable(spring, ctypes.cast(ctypes.pointer(w), ctypes.c_void_p))
    ms = mbint.MechanicalSystem(np.eye(1), llc, q0=[1.0])
    with pytest.raises(pickle.PicklingError, match="user_data"):
        pickle.dumps(ms)


# ---------------------------------------------------------------- save / load
@pytest.mark.parametrize("name,method", [("stiff_double_pendulum", "llm"),
                                         ("bouncing_balls", "rodas4"),
                                         ("mass_spring_damper", "radau_iia")])
def test_save_load_round_trip_is_bit_exact(tmp_path, name, method):
    m = models.PAPER_MODELS[name]()
    traj = mbint.simulate(m, (0, 0.5), method=method, dense_output=True,
                          events=m.contact_events() if m.contacts else None)
    path = traj.save(tmp_path / "run.nc")
    back = mbint.load(path)
    same_run(traj, back)
    ts = np.linspace(0, 0.5, 23)
    assert np.array_equal(back.sol(ts), traj.sol(ts))
    for a, b in zip(traj.energy(), back.energy()):
        assert np.array_equal(a, b)
    for a, b in zip(traj.violation(per_row=True), back.violation(per_row=True)):
        assert np.array_equal(a, b)
    for o in m.outputs:
        assert np.array_equal(traj.output(o), back.output(o))
    if traj.t_events is not None:
        for a, b in zip(traj.t_events + traj.t_contacts, back.t_events + back.t_contacts):
            assert np.array_equal(a, b)
    assert back.method == method and back.options == traj.options
    assert np.array_equal(back.model.compile().joints, m.compile().joints)


def test_saved_file_reads_without_mbint_and_states_units(tmp_path):
    traj = mbint.simulate(models.stiff_double_pendulum(), (0, 0.2), method="rodas4")
    traj.save(tmp_path / "r.nc")
    with xr.open_dataset(tmp_path / "r.nc") as ds:
        assert ds["time"].attrs["units"] == "s"
        assert list(ds["coordinate_unit"].values) == ["m", "m", "rad"] * 2
        assert ds["total_energy"].attrs["units"] == "J"
        assert ds["dissipated_work"].attrs["units"] == "J"
        assert ds.attrs["method"] == "rodas4" and ds.attrs["model_name"] == traj.model.name
        assert ds["q"].shape == (6, len(traj.t))
        assert ds["violation_position"].dims == ("constraint", "time")


def test_mechanical_system_trajectory_saves_and_loads(tmp_path):
    ms = mbint.MechanicalSystem(_pendulum_mass, _pendulum_forces, _pendulum_phi, _pendulum_phi_q,
                                q0=[1.0, 0.0], energy=_pendulum_energy, names=["x", "y"],
                                units=["m", "m"])
    traj = mbint.simulate(ms, (0, 0.5), method="rodas4")
    back = mbint.load(traj.save(tmp_path / "ms.nc"))
    same_run(traj, back)
    assert isinstance(back.model, StoredModel) and back.model.coordinate_names == ["x", "y"]
    assert np.array_equal(back.energy().total, traj.energy().total)
    with pytest.raises(ValueError, match="no such file"):
        mbint.load(tmp_path / "missing.nc")


def test_dissipated_work_closes_the_energy_balance():
    """Mass-spring-damper: E(t) + W_d(t) = E(0), to the integrator's accuracy; the
    undamped double pendulum has no velocity-dependent force (None)."""
    traj = mbint.simulate(models.mass_spring_damper(x0=0.1), (0, 5), method="radau_iia",
                          rtol=1e-10, atol=1e-12, dense_output=True)
    E, W = traj.energy().total, traj.dissipated_work()
    assert W[0] == 0 and np.all(np.diff(W) >= -1e-15) and W[-1] > 0.01 * abs(E[0] - E[-1])
    assert np.max(np.abs(E + W - E[0])) < 1e-8 * max(1.0, abs(E[0]))
    assert mbint.simulate(models.two_link_manipulator(), (0, 0.1)).dissipated_work() is None


def test_dissipated_work_on_a_coarse_grid_warns_and_is_not_saved(tmp_path):
    """On t_eval points coarser than the steps (no dense output) the trapezoidal rule
    misses the fast damped motion: a warning, and the saved file leaves W out."""
    m = models.stiff_double_pendulum()
    coarse = mbint.simulate(m, (0, 1), method="radau_iia", t_eval=np.linspace(0, 1, 11))
    with pytest.warns(UserWarning, match="dense_output=True"):
        coarse.dissipated_work()
    coarse._dissipated = None
    assert "dissipated_work" not in coarse.to_xarray().data_vars
    fine = mbint.simulate(m, (0, 1), method="radau_iia", t_eval=np.linspace(0, 1, 11),
                          dense_output=True)
    E, W = fine.energy().total, fine.dissipated_work()
    assert np.max(np.abs(E + W - E[0])) < 1e-3 * abs(E[0])     # Gauss on the dense output


# ---------------------------------------------------------------- the state space
@pytest.fixture(scope="module")
def ss_traj():
    return mbint.simulate(models.stiff_double_pendulum(), (0, 0.2), method="rosenbrock_nystrom",
                          formulation="state_space", dense_output=True)


def test_state_space_dense_trajectory_pickles_and_runs_in_a_process_pool(ss_traj):
    """Its full-state dense output held the model's C handle: "cannot pickle
    'PyCapsule' object", and a process-pool ensemble of such runs returned only
    MemberErrors."""
    ts = np.linspace(0, 0.2, 17)
    back = pickle.loads(pickle.dumps(ss_traj))
    same_run(ss_traj, back)
    assert back.sol(0.1).shape == (12,) and np.array_equal(back.sol(ts), ss_traj.sol(ts))
    task = mbint.SimulationTask(models.stiff_double_pendulum, (0, 0.2),
                                method="rosenbrock_nystrom", formulation="state_space",
                                dense_output=True)
    res = mbint.ensemble(task, [{"k2": 3e5}, {"k2": 1e5}], n_workers=2, progress=False)
    assert res.failed == [] and np.array_equal(res[0].sol(ts), ss_traj.sol(ts))


def test_state_space_dense_output_is_the_full_state_after_loading(ss_traj, tmp_path):
    """After save/load, sol returned the 4 reduced coordinates (v, v') instead of the
    12 of (q, qd)."""
    back = mbint.load(ss_traj.save(tmp_path / "ss.nc"))
    same_run(ss_traj, back)
    ts = np.linspace(0, 0.2, 17)
    assert back.sol(0.1).shape == (12,)
    assert np.array_equal(back.sol(ts), ss_traj.sol(ts))
    assert np.array_equal(back.sol_reduced(ts), ss_traj.sol_reduced(ts))


# ---------------------------------------------------------------- crafted descriptions
def _crafted(traj, edit):
    import json

    ds = traj.to_xarray()
    d = json.loads(ds.attrs["model_json"])
    edit(d)
    ds.attrs["model_json"] = json.dumps(d)
    return ds


def test_a_model_description_missing_a_parameter_is_refused():
    """A joint parameter left out of the stored description loaded as 0, silently (a
    different mechanism)."""
    from mbint.mbs.dataset import from_xarray

    traj = mbint.simulate(models.stiff_double_pendulum(), (0, 0.1), method="rodas4")
    ds = _crafted(traj, lambda d: d["joints"][0]["params"].pop("sj_x"))
    with pytest.raises(ValueError, match=r"revolute 'pin0'.*missing sj_x"):
        from_xarray(ds)
    ds = _crafted(traj, lambda d: d["forces"][0]["params"].pop("k"))
    with pytest.raises(ValueError, match=r"missing k"):
        from_xarray(ds)
    ds = _crafted(traj, lambda d: d["joints"][0]["params"].update(typo=1.0))
    with pytest.raises(ValueError, match=r"unknown typo"):
        from_xarray(ds)


def test_a_spatial_description_missing_a_vector_is_refused():
    s = mbint.SpatialModel(name="ball")
    b = s.add_body(1.0, (0.1, 0.1, 0.1), name="b")
    s.add_spherical(s.ground, b, (0.0, 0.0, 0.0))
    traj = mbint.simulate(s, (0, 0.1))
    from mbint.mbs.dataset import from_xarray

    ds = _crafted(traj, lambda d: d["joints"][0]["prims"][0].pop("sj"))
    with pytest.raises(ValueError, match=r"missing sj"):
        from_xarray(ds)


def test_the_description_tables_are_what_the_builders_give():
    """mbint/mbs/_description.py lists the parameters of every element kind; every
    kind built through the add_* methods has exactly those (required ones present,
    nothing else), and its description loads back."""
    from mbint.mbs._description import PLANAR_PARAMS, SPATIAL_PRIMS

    m = mbint.PlanarModel()
    a = m.add_body(1.0, 0.1, q=(1.0, 0.0, 0.0), name="a")
    b = m.add_body(1.0, 0.1, q=(2.0, 0.0, 0.0), name="b")
    g = m.ground
    m.add_revolute(g, (0, 0), a, (-1, 0))
    m.add_translational(a, (0, 0), b, (0, 0))
    m.add_distance(a, (0, 0), b, (0, 0))
    m.add_fixed(a, None, b)
    m.add_driver(b, "theta", relative_to=a, c1=1.0)
    m.add_driver(a, "x", 1.0)
    m.add_spring_damper(a, (0, 0), b, (0, 0), k=1.0)
    m.add_rotational_spring_damper(a, b, k=1.0)
    m.add_generalized_force(a, "y", 1.0)
    m.add_contact(a, K=1e3)
    m.add_contact(a, other=b, radius=0.1, other_radius=0.1, K=1e3)
    kinds = {e.kind: set(e.params) for e in m.joint_elements + m.force_elements}
    assert set(kinds) == set(PLANAR_PARAMS)
    for kind, keys in kinds.items():
        assert keys == set(PLANAR_PARAMS[kind]), kind
    assert mbint.PlanarModel.from_description(m.describe()).describe() == m.describe()

    s = mbint.SpatialModel()
    b1 = s.add_body(1.0, (0.1, 0.1, 0.1), r=(1, 0, 0), name="b1")
    b2 = s.add_body(1.0, (0.1, 0.1, 0.1), r=(2, 0, 0), name="b2")
    z = (0, 0, 1)
    s.add_dot1(b1, z, b2, z, value=0.5)
    s.add_dot2(b1, z, (1, 0, 0), b2, (2, 0, 0))
    s.add_point(b1, (1, 0, 0), b2, (1, 0, 0))
    s.add_distance(b1, (1, 0, 0), b2, (2, 0, 0))
    s.add_revolute(s.ground, b1, (0, 0, 0), z)
    s.add_universal(b1, b2, (1, 0, 0), z, (0, 1, 0))
    s.add_cylindrical(b1, b2, (1, 0, 0), (1, 0, 0))
    s.add_translational(b1, b2, (1, 0, 0), (1, 0, 0))
    s.add_fixed(b1, b2)
    s.add_driver(b1, b2, "rotation", (1, 0, 0), z, c1=1.0)
    s.add_driver(b1, b2, "translation", (1, 0, 0), (1, 0, 0))
    s.add_spring_damper(b1, (1, 0, 0), b2, (2, 0, 0), k=1.0)
    s.add_rotational_spring_damper(b1, b2, z, k=1.0)
    s.add_bushing(b1, b2, (1.5, 0, 0), k=1.0)
    s.add_tire(b1, (1, 0, 0), k=1.0)
    seen = set()
    for e in s.joint_elements + s.force_elements:
        for pr in e.prims:
            required, optional = SPATIAL_PRIMS[pr["type"]]
            keys = set(pr) - {"type"}
            assert set(required) <= keys <= set(required) | set(optional), pr["type"]
            seen.add(pr["type"])
    assert seen == set(SPATIAL_PRIMS)
    assert mbint.SpatialModel.from_description(s.describe()).describe() == s.describe()
