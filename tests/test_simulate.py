"""``mbint.simulate`` and ``mbint.Trajectory`` (mbint/mbs/simulate.py, mbint/mbs/trajectory.py,
csrc/python/simulate_py.c mech_simulate).

Checks: the fields of a Trajectory and their shapes; q'' and lambda at the output
points solve the saddle-point system (and come from the C core in the Trajectory's
layout, without a copy); dense output between the steps; t_eval;
events g(t, q, qd) (contact instants, terminal events) through simulate; options
passed to the driver as in solve_ivp (fixed step, max_step, second-order and
SUNDIALS methods); argument errors; runs from several threads at once (the GIL
is released for C models); plots, and the animation written as a GIF and as a
PNG sequence.
"""
import math
import threading

import matplotlib
import numpy as np
import pytest

import mbint
from mbint import models, simulate

matplotlib.use("Agg")

NAMES = {m.name for m in mbint.methods()}


@pytest.fixture(scope="module")
def pendulum():
    return models.two_link_manipulator()


@pytest.fixture(scope="module")
def traj(pendulum):
    return simulate(pendulum, (0.0, 2.0), rtol=1e-8, atol=1e-10, dense_output=True)


def test_trajectory_fields(traj, pendulum):
    m = len(traj.t)
    nq, nc = pendulum.nq, pendulum.nc
    assert traj.success and traj.status == 0 and "successfully" in traj.message
    assert traj.t[0] == 0.0 and traj.t[-1] == 2.0 and np.all(np.diff(traj.t) > 0)
    # component-major as SciPy's res.y: one row per coordinate, one column per time
    for name, shape in (("q", (nq, m)), ("qd", (nq, m)), ("qdd", (nq, m)), ("lam", (nc, m))):
        assert getattr(traj, name).shape == shape, name
        # the time-major view is the transpose, without a copy, and read-only
        tm = getattr(traj.time_major, name)
        assert tm.shape == shape[::-1] and np.shares_memory(tm, getattr(traj, name))
        assert np.array_equal(tm, getattr(traj, name).T)
    with pytest.raises(AttributeError, match="read-only"):
        traj.time_major.q = None
    assert np.array_equal(traj.q[:, 0], pendulum.q0)
    assert np.array_equal(traj.qd[:, 0], pendulum.qd0)
    assert set(traj.stats) == {"nfev", "njev", "nlu", "nsteps", "nreject", "nfail"}
    assert traj.stats["nsteps"] == m - 1 == len(traj.t_steps)
    assert traj.method == "dopri5" and traj.formulation == "index1"
    assert traj.initial["consistent"] and traj.initial["rank"] == nc
    assert "Trajectory" in repr(traj)
    E = traj.energy()
    assert E._fields == ("kinetic", "potential", "total")
    assert all(v.shape == (m,) for v in E)
    assert np.allclose(E.total, E.kinetic + E.potential)
    V = traj.violation()
    assert V._fields == ("position", "velocity", "acceleration") and V.position.shape == (m,)
    # q'' and lambda at every output point solve M q'' + Phi_q^T lam = Q, Phi_q q'' = gamma
    k = m // 2
    q, qd, t = traj.q[:, k], traj.qd[:, k], traj.t[k]
    P = pendulum.constraint_jacobian(t, q)
    assert np.allclose(pendulum.mass(q) @ traj.qdd[:, k] + P.T @ traj.lam[:, k],
                       pendulum.forces(t, q, qd), atol=1e-10)
    assert np.allclose(P @ traj.qdd[:, k], pendulum.gamma(t, q, qd), atol=1e-10)
    # the same at every point at once, with the batch kernels on the trajectory's arrays
    P = pendulum.constraint_jacobian(traj.t, traj.q)
    res = np.einsum("ijk,jk->ik", pendulum.mass(traj.q), traj.qdd) \
        + np.einsum("jik,jk->ik", P, traj.lam) - pendulum.forces(traj.t, traj.q, traj.qd)
    assert np.abs(res).max() < 1e-10
    # outputs and coordinates
    assert np.array_equal(traj.coordinate("link2", "theta"), traj.q[5])
    assert np.array_equal(traj.output("theta1"), traj.q[2])
    # body points along a trajectory: (2, m), column k the point at q[:, k]; the end of
    # link 2 (sqrt(3) m long) is the paper's tip
    link2 = pendulum.body("link2")
    tip = link2.point((math.sqrt(3.0) / 2, 0.0), traj.q)
    assert tip.shape == (2, m) and np.allclose(tip[:, k], link2.point((math.sqrt(3.0) / 2, 0.0),
                                                                        traj.q[:, k]))
    assert np.allclose(tip, [traj.output("tip_x"), traj.output("tip_y")], rtol=0, atol=1e-14)
    assert np.array_equal(pendulum.ground.point((1.0, 2.0), traj.q),
                          np.tile([[1.0], [2.0]], (1, m)))
    with pytest.raises(ValueError, match="unknown output 'nope'"):
        traj.output("nope")


def test_dense_output(traj, pendulum):
    ts = np.linspace(0.05, 1.95, 17)
    q, qd = traj.state(ts)
    assert q.shape == (pendulum.nq, 17) and qd.shape == (pendulum.nq, 17)
    fine = simulate(pendulum, (0.0, 2.0), rtol=1e-11, atol=1e-13, t_eval=ts)
    assert np.abs(q - fine.q).max() < 1e-6 and np.abs(qd - fine.qd).max() < 1e-5
    q1, qd1 = traj.state(traj.t[7])
    assert q1.shape == (pendulum.nq,) and qd1.shape == (pendulum.nq,)
    assert np.allclose(q1, traj.q[:, 7], atol=1e-12)
    assert np.allclose(qd1, traj.qd[:, 7], atol=1e-10)
    plain = simulate(pendulum, (0.0, 0.5))
    assert plain.sol is None
    with pytest.raises(ValueError, match="dense_output=True"):
        plain.state(0.1)


def test_t_eval(pendulum):
    te = np.linspace(0.0, 1.0, 11)
    tr = simulate(pendulum, (0.0, 1.0), t_eval=te, rtol=1e-8, atol=1e-10)
    assert np.array_equal(tr.t, te)
    assert tr.q.shape == (6, 11) and tr.lam.shape == (4, 11) and tr.energy().total.shape == (11,)
    with pytest.raises(ValueError, match="t_eval values must lie within t_span"):
        simulate(pendulum, (0.0, 1.0), t_eval=[0.5, 2.0])
    back = simulate(pendulum, (1.0, 0.0), t_eval=te[::-1], rtol=1e-8, atol=1e-10)
    assert back.t[0] == 1.0 and back.t[-1] == 0.0


def test_events_through_simulate():
    """Contact instants of the bouncing balls as events g(t, q, qd), against the
    paper's ODE with solve_ivp."""
    m = models.bouncing_balls()
    tr = simulate(m, (0.0, 1.5), rtol=1e-10, atol=1e-12, max_step=0.005,
                  events=m.contact_events())
    f = models.bouncing_balls_ode()
    ref = mbint.solve_ivp(f.fun, (0.0, 1.5), f.y0, rtol=1e-10, atol=1e-12, max_step=0.005,
                          events=f.events)
    assert len(tr.t_events) == 2 and len(tr.t_events[1]) >= 2
    for k in range(2):
        assert len(tr.t_events[k]) == len(ref.t_events[k])
        assert np.abs(tr.t_events[k] - ref.t_events[k]).max() < 1e-6
        # at each event the gap is zero; the states are columns (nq, k) as traj.q
        gaps = m.contact_gaps(tr.q_events[k])
        assert gaps.shape == (2, len(tr.t_events[k]))
        assert np.abs(gaps[k]).max() < 1e-8
    assert tr.qd_events[1].shape == (6, len(tr.t_events[1]))
    # solve_ivp keeps SciPy's layout for its own events: (k, n) per event
    assert ref.y_events[1].shape == (len(ref.t_events[1]), 4)

    # a terminal event: the lower ball first touches the ground (gap rising through 0)
    def touch(t, q, qd):
        return m.contact_gaps(q)[1]

    touch.terminal = True
    touch.direction = 1
    hit = simulate(m, (0.0, 3.0), max_step=0.01, events=touch, rtol=1e-8, atol=1e-10)
    assert hit.status == 1 and "termination event" in hit.message
    assert hit.t[-1] == pytest.approx(math.sqrt(2 * 0.9 / 9.81), abs=1e-6)

    def bad(t, q, qd):
        raise RuntimeError("event bug")

    with pytest.raises(RuntimeError, match="event bug"):
        simulate(m, (0.0, 0.1), events=[bad])


def test_methods_and_options(pendulum):
    te = np.linspace(0, 1, 5)
    ref = simulate(pendulum, (0.0, 1.0), rtol=1e-10, atol=1e-12, t_eval=te)
    fixed = simulate(pendulum, (0.0, 1.0), method="rk4", h=0.01, t_eval=te)
    assert fixed.stats["nsteps"] == 100 and np.abs(fixed.q - ref.q).max() < 1e-4
    capped = simulate(pendulum, (0.0, 1.0), max_step=0.05)
    assert np.diff(capped.t).max() <= 0.05 + 1e-12
    # the second-order view q'' = a(t, q, q') (a depends on q' through gamma: order 1)
    errs = [np.abs(simulate(pendulum, (0.0, 1.0), method="nystrom_midpoint", h=h,
                            t_eval=te).q - ref.q).max() for h in (2e-3, 1e-3)]
    assert errs[1] < 0.05 and 1.6 < errs[0] / errs[1] < 2.5
    ad = simulate(pendulum, (0.0, 1.0), method="ode113", rtol=1e-8, atol=1e-10, t_eval=te)
    assert ad.method == "adams" and np.abs(ad.q - ref.q).max() < 1e-5
    for name in ("cvode_bdf", "ida", "arkode_dirk"):
        if name in NAMES:
            tr = simulate(pendulum, (0.0, 1.0), method=name, rtol=1e-8, atol=1e-10, t_eval=te)
            assert tr.success, (name, tr.message)
            assert np.abs(tr.q - ref.q).max() < 1e-4, name
            with pytest.raises(ValueError, match="SUNDIALS method .* no projection"):
                simulate(pendulum, (0.0, 1.0), method=name, project=True)
    fail = simulate(pendulum, (0.0, 1.0), max_steps=5)
    assert fail.status == -1 and not fail.success and len(fail.t) >= 1


def test_simulate_applies_the_model_settings():
    """Options left at None take the model's recommended settings, else the defaults of
    solve_ivp; an explicit argument always wins; the options used are recorded."""
    m = models.bouncing_balls()
    assert m.settings == dict(rtol=1e-6, atol=1e-8)
    m.settings = dict(rtol=1e-6, atol=1e-8, max_step=0.005)
    tr = simulate(m, (0.0, 0.6))
    assert tr.options == dict(rtol=1e-6, atol=1e-8, first_step=None, max_step=0.005,
                              min_step=0.0, max_steps=None, h=None, linear_algebra="dense")
    assert np.diff(tr.t).max() <= 0.005 * (1 + 1e-12)  # the step bound was applied
    by_hand = simulate(m, (0.0, 0.6), rtol=1e-6, atol=1e-8, max_step=0.005)
    assert np.array_equal(tr.t, by_hand.t) and np.array_equal(tr.q, by_hand.q)
    # explicit arguments win, each on its own
    loose = simulate(m, (0.0, 0.6), rtol=1e-3)
    assert (loose.options["rtol"], loose.options["atol"], loose.options["max_step"]) == \
        (1e-3, 1e-8, 0.005)
    free = simulate(m, (0.0, 0.6), max_step=np.inf)
    assert free.options["max_step"] == np.inf
    assert np.diff(free.t).max() > 0.02      # free flight: dopri5 integrates parabolas exactly
    # a model without settings runs with the defaults of solve_ivp
    arm = models.two_link_manipulator()
    arm.settings = {}
    plain = simulate(arm, (0.0, 1.0))
    assert (plain.options["rtol"], plain.options["atol"], plain.options["max_step"]) == \
        (1e-3, 1e-6, np.inf)
    assert np.array_equal(plain.q, simulate(arm, (0.0, 1.0), rtol=1e-3, atol=1e-6).q)
    # a fixed step is not cut by the model's max_step (a bound of step selection)
    arm.settings = dict(max_step=0.005, rtol=1e-6)
    fixed = simulate(arm, (0.0, 1.0), method="rk4", h=0.01)
    assert fixed.stats["nsteps"] == 100 and np.allclose(np.diff(fixed.t), 0.01)
    assert fixed.options["h"] == 0.01 and fixed.options["max_step"] == np.inf
    assert fixed.options["rtol"] == 1e-6
    # a setting simulate cannot apply is an error, not silently ignored
    arm.settings = dict(method="radau_iia")
    with pytest.raises(ValueError, match=r"settings has \['method'\].*rtol"):
        simulate(arm, (0.0, 1.0))
    # a MechanicalSystem carries settings too
    from test_model import cartesian_pendulum

    ms = cartesian_pendulum()
    assert ms.settings == {} and simulate(ms, (0.0, 0.2)).options["rtol"] == 1e-3
    ms.settings = dict(max_step=0.01, rtol=1e-7)
    tr = simulate(ms, (0.0, 0.2))
    assert tr.options["max_step"] == 0.01 and tr.options["rtol"] == 1e-7
    assert np.diff(tr.t).max() <= 0.01 * (1 + 1e-12)


def test_argument_errors(pendulum):
    with pytest.raises(ValueError, match="unknown method"):
        simulate(pendulum, (0, 1), method="nope")
    with pytest.raises(ValueError, match="formulation: 'index4' is not available"):
        simulate(pendulum, (0, 1), formulation="index4")
    with pytest.raises(ValueError, match="method 'dopri5' does not solve it.*radau_iia"):
        simulate(pendulum, (0, 1), formulation="index3")  # an explicit method: index 1 only
    with pytest.raises(ValueError, match="consistent must be"):
        simulate(pendulum, (0, 1), consistent="maybe")
    with pytest.raises(ValueError, match="q0 must have nq = 6 entries"):
        simulate(pendulum, (0, 1), q0=[0, 0])
    with pytest.raises(ValueError, match="rtol must be positive"):
        simulate(pendulum, (0, 1), rtol=-1.0)
    with pytest.raises(ValueError, match="atol must be a scalar or have 2 nq = 12"):
        simulate(pendulum, (0, 1), atol=[1e-6] * 3)
    with pytest.raises(ValueError, match="baumgarte"):
        simulate(pendulum, (0, 1), baumgarte=(-1.0, 2.0))
    with pytest.raises(ValueError, match="every event must be callable"):
        simulate(pendulum, (0, 1), events=[3])
    with pytest.raises(ValueError, match="PlanarModel or a MechanicalSystem"):
        simulate(lambda t, y: y, (0, 1))


def test_threads_release_the_gil():
    """C models run concurrently from threads (no Python per step) with the same results."""
    m = models.double_pendulum_stiff_spring()
    ref = simulate(m, (0.0, 0.5), rtol=1e-8, atol=1e-10)
    out = [None] * 4

    def work(k):
        out[k] = simulate(m, (0.0, 0.5), rtol=1e-8, atol=1e-10)

    ths = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for th in ths:
        th.start()
    for th in ths:
        th.join()
    for tr in out:
        assert np.array_equal(tr.q, ref.q)
    assert not mbint._core.mech_info(m.compile().handle)["python"]


def test_plots(traj):
    import matplotlib.pyplot as plt

    figs = [traj.plot("theta"), traj.plot("theta", bodies=["link1"]),
            traj.plot("q", coords=[0, "link2.y"]), traj.plot("lam"), traj.plot("tip_y"),
            traj.plot_energy(), traj.plot_energy(relative=True), traj.plot_violation()]
    assert all(f.axes for f in figs)
    assert len(figs[1].axes[0].lines) == 1 and len(figs[2].axes[0].lines) == 2
    for f in figs:
        plt.close(f)


def test_animation_writes_files(tmp_path, traj):
    gif = traj.animate(tmp_path / "arm.gif", fps=5, trace="link2")
    assert gif == [tmp_path / "arm.gif"] and gif[0].stat().st_size > 1000
    from PIL import Image

    with Image.open(gif[0]) as im:
        assert im.n_frames == 11
    pngs = traj.animate(tmp_path / "frames", fps=2)
    assert len(pngs) == 5 and all(p.suffix == ".png" and p.exists() for p in pngs)
    pattern = traj.animate(str(tmp_path / "seq" / "f_{:03d}.png"), fps=2, max_frames=3)
    assert [p.name for p in pattern] == ["f_000.png", "f_001.png", "f_002.png"]
    # a MechanicalSystem draws its own geometry
    from test_model import two_link_relative

    ms = two_link_relative()
    tr = simulate(ms, (0.0, 0.4))
    assert tr.animate(tmp_path / "ms.gif", fps=10)[0].exists()
    bare = mbint.MechanicalSystem(mass=np.eye(1), forces=lambda t, q, qd: -q, q0=[1.0])
    with pytest.raises(ValueError, match="no geometry"):
        simulate(bare, (0, 0.1)).animate(tmp_path / "x.gif")


def test_demo_models_writes_figures(tmp_path):
    from mbint.demo import models as demo_models

    rows = demo_models.run(tmp_path, quick=True)
    names = {r["model"] for r in rows}
    assert names == set(models.PAPER_MODELS)
    assert all(r["status"] == 0 for r in rows)
    out = tmp_path / "models"
    for name in models.PAPER_MODELS:
        assert (out / f"{name}_motion.png").exists() and (out / f"{name}_energy.png").exists()
    assert (out / "two_link_manipulator_violation.png").exists()
    assert "two_link_manipulator" in (out / "models.md").read_text()
    proj = [r for r in rows if r["method"] == "dopri5 + projection"][0]
    assert proj["violation_position"] < 1e-10


@pytest.mark.parametrize("method", sorted(NAMES))
def test_every_method_runs_planar_model_and_mechanical_system(method):
    """Every registered method on the index-1 formulation of a PlanarModel and of a
    MechanicalSystem (the Cartesian pendulum, gamma by differences)."""
    from test_model import cartesian_pendulum

    info = mbint.methods()[[m.name for m in mbint.methods()].index(method)]
    kw = dict(rtol=1e-6, atol=1e-8)
    if info.adaptive in ("none", "step doubling"):
        kw = dict(h=1e-3, rtol=1e-8, atol=1e-10)
    te = np.linspace(0.0, 0.5, 3)
    for model in (models.two_link_manipulator(), cartesian_pendulum(gamma=False)):
        ref = simulate(model, (0.0, 0.5), rtol=1e-10, atol=1e-12, t_eval=te)
        tr = simulate(model, (0.0, 0.5), method=method, t_eval=te, **kw)
        assert tr.success, (method, model.name, tr.message)
        assert np.abs(tr.q - ref.q).max() < 1e-2, (method, model.name)


def test_no_memory_growth():
    import gc
    import tracemalloc

    from test_model import cartesian_pendulum

    pm, ms = models.two_link_manipulator(), cartesian_pendulum(gamma=False)

    def work():
        simulate(pm, (0, 0.1), dense_output=True, events=[lambda t, q, qd: q[0] - 0.2])
        simulate(ms, (0, 0.1))
        pm.jacobian(0.0, np.r_[pm.q0, pm.qd0])
        pm.accelerations(0.0, np.tile(pm.q0[:, None], (1, 3)), np.tile(pm.qd0[:, None], (1, 3)))
        with pytest.raises(ValueError):
            mbint._core.mech_eval(pm.compile().handle, "nope", 0.0, pm.q0)
        mbint._core.mech_project(pm.compile().handle, 0.0, pm.q0 + 0.01, pm.qd0)

    for _ in range(5):
        work()
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    for _ in range(100):
        work()
    gc.collect()
    grown = tracemalloc.get_traced_memory()[0] - before
    tracemalloc.stop()
    assert grown < 50_000, grown


def test_outputs_come_component_major_without_a_copy():
    # issue 21: q'' and lambda leave the C core in Trajectory's layout (nq, m), (nc, m),
    # and the Trajectory holds those arrays (before: (m, nq), (m, nc), transposed by a copy)
    m = models.stiff_double_pendulum()
    seen = {}
    core = mbint._core
    orig = core.mech_simulate

    def spy(*a, **k):
        seen["out"] = out = orig(*a, **k)
        seen["qdd"], seen["lam"] = out["qdd"], out["lam"]
        return out
    core.mech_simulate = spy
    try:
        tr = simulate(m, (0.0, 0.2), "radau_iia", t_eval=np.linspace(0.0, 0.2, 7))
    finally:
        core.mech_simulate = orig
    assert seen["qdd"].shape == (m.nq, 7) and seen["lam"].shape == (m.nc, 7)
    assert np.shares_memory(tr.qdd, seen["qdd"]) and np.shares_memory(tr.lam, seen["lam"])
    assert tr.qdd.flags.c_contiguous and tr.lam.flags.c_contiguous
    qdd, lam = m.accelerations(tr.t, tr.q, tr.qd)   # the index-1 system at those points
    assert np.allclose(tr.qdd, qdd, rtol=1e-10, atol=1e-10 * np.abs(qdd).max())
    assert np.allclose(tr.lam, lam, rtol=1e-10, atol=1e-10 * np.abs(lam).max())
