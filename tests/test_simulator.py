"""mbint.Simulator: a run of simulate in pieces (step, advance, set_input).

The references are independent of the stepping code: one simulate call (t_eval), a
chain of simulate calls over the intervals of a zero-order hold (each with its own
constant generalized force), and the closed form of a free fall."""
import math

import numpy as np
import pytest

import mbint

ADAPTIVE = ["dopri5", "dop853", "rk23", "radau_iia", "bdf", "adams", "rodas4", "ros2"]
SUNDIALS = ["cvode_bdf", "cvode_adams", "arkode_erk", "arkode_dirk", "ida"]


def pendulum(tau0=0.0):
    """A uniform rod (1 kg, 1 m) pinned at the origin, horizontal at rest; the input
    "tau" is a torque on its angle (N m)."""
    m = mbint.PlanarModel(gravity=(0.0, -9.81), name="pendulum")
    rod = m.add_body(1.0, 1.0 / 12.0, q=(0.5, 0.0, 0.0))
    m.add_revolute(m.ground, (0.0, 0.0), rod, (-0.5, 0.0))
    m.add_generalized_force(rod, "theta", tau0, name="tau")
    return m


def state_of(traj):
    return np.vstack([traj.q, traj.qd]).T


# ---------------------------------------------------------------- one run, in pieces
@pytest.mark.parametrize("method", ADAPTIVE + SUNDIALS)
def test_advance_loop_is_simulate_with_t_eval_bit_for_bit(method):
    """advance(t_k) takes the steps simulate takes over the same span and interpolates
    with the same dense output as simulate's t_eval points: the same numbers."""
    m = pendulum()
    tk = 0.01 * np.arange(101)
    ref = mbint.simulate(m, (0.0, 1.0), method=method, rtol=1e-6, atol=1e-9, t_eval=tk)
    sim = mbint.Simulator(m, method=method, t_end=1.0, rtol=1e-6, atol=1e-9)
    got = []
    for t in tk:
        assert sim.advance(t) == t
        q, qd = sim.state
        got.append(np.concatenate([q, qd]))
    np.testing.assert_array_equal(np.array(got), state_of(ref))
    assert sim.stats["nsteps"] == ref.stats["nsteps"]
    assert sim.stats["nfev"] == ref.stats["nfev"]
    assert sim.finished


def test_advance_loop_without_t_end_matches_to_tolerance():
    """With no end (t_end = inf) the first step is chosen without the span and the last
    is not cut: the same solution to the tolerance."""
    m = pendulum()
    tk = 0.01 * np.arange(1, 101)
    ref = mbint.simulate(m, (0.0, 1.0), method="dopri5", rtol=1e-10, atol=1e-12, t_eval=tk)
    sim = mbint.Simulator(m, method="dopri5", rtol=1e-10, atol=1e-12)
    got = np.array([np.concatenate(sim.state) for t in tk if sim.advance(t) is not None])
    np.testing.assert_allclose(got, state_of(ref), atol=1e-8)


@pytest.mark.parametrize("method", ["radau_iia", "cvode_bdf", "arkode_erk"])
def test_step_until_the_end_is_simulate(method):
    m = pendulum()
    ref = mbint.simulate(m, (0.0, 0.7), method=method, rtol=1e-6, atol=1e-9)
    sim = mbint.Simulator(m, method=method, t_end=0.7, rtol=1e-6, atol=1e-9)
    ts, n = [0.0], 0
    while not sim.finished:
        ts.append(sim.step())
        n += 1
        assert ts[-1] > ts[-2]  # t strictly increasing
        assert sim.t == ts[-1]
    assert n == sim.stats["nsteps"] == ref.stats["nsteps"]
    np.testing.assert_array_equal(ts, ref.t)
    traj = sim.trajectory()
    np.testing.assert_array_equal(traj.q, ref.q)
    np.testing.assert_array_equal(traj.qd, ref.qd)
    assert traj.status == 0
    with pytest.raises(RuntimeError, match="ended"):
        sim.step()


def test_fixed_step_advance_on_and_off_the_grid():
    """rk4 with h: advance on grid points gives simulate's grid values; between them,
    the Hermite interpolant of the grid step."""
    m = pendulum()
    ref = mbint.simulate(m, (0.0, 0.2), method="rk4", h=0.01)
    sim = mbint.Simulator(m, method="rk4", h=0.01, t_end=0.2)
    for k in range(1, 21):
        sim.advance(ref.t[k])
        np.testing.assert_array_equal(np.concatenate(sim.state), state_of(ref)[k])
    with pytest.raises(ValueError, match="finite t_end"):
        mbint.Simulator(m, method="rk4", h=0.01)


@pytest.mark.parametrize("method", ["dopri5", "radau_iia", "cvode_bdf", "ida"])
def test_free_fall_closed_form(method):
    """A free body under gravity: y(t) = -g t^2 / 2 at every advance, and in the dense
    output of the trajectory so far (across a restart of the method at t = 1)."""
    m = mbint.PlanarModel(gravity=(0.0, -9.81))
    m.add_body(2.0, 0.1)
    m.add_generalized_force(0, "x", 0.0, name="push")
    sim = mbint.Simulator(m, method=method, rtol=1e-10, atol=1e-12)
    for t in np.linspace(0.05, 2.0, 40):
        if t > 1.0:
            sim.set_input("push", 0.0 if t < 1.5 else 1e-30)   # restarts, no force
        sim.advance(t)
        q, qd = sim.state
        assert q[1] == pytest.approx(-0.5 * 9.81 * t * t, rel=1e-8, abs=1e-12)
        assert qd[1] == pytest.approx(-9.81 * t, rel=1e-8)
    assert sim.stats["nrestart"] == 1
    traj = sim.trajectory()
    ts = np.linspace(0.0, 2.0, 57)
    np.testing.assert_allclose(traj.sol(ts)[1], -0.5 * 9.81 * ts ** 2, rtol=1e-7, atol=1e-10)


@pytest.mark.parametrize("method", ["dopri5", "radau_iia", "cvode_bdf", "arkode_erk", "ida"])
def test_terminal_event_ends_the_run_at_its_root(method):
    """A free fall from rest reaches y = -1 m at t* = sqrt(2 / g): advance past it stops
    there (finished), with the event in the trajectory; a non-terminal event before it
    (y = -0.5 m) is recorded and the run goes on."""
    m = mbint.PlanarModel(gravity=(0.0, -9.81))
    m.add_body(2.0, 0.1)

    def half(t, q, qd):
        return q[1] + 0.5

    def floor(t, q, qd):
        return q[1] + 1.0
    floor.terminal = True
    sim = mbint.Simulator(m, method=method, rtol=1e-10, atol=1e-12, t_end=2.0,
                          events=[half, floor])
    t_hit = sim.advance(2.0)
    assert t_hit == pytest.approx(math.sqrt(2.0 / 9.81), rel=1e-8)
    assert sim.finished and sim.t == t_hit
    assert sim.state[0][1] == pytest.approx(-1.0, abs=1e-8)
    traj = sim.trajectory()
    assert traj.t_events[0][0] == pytest.approx(math.sqrt(1.0 / 9.81), rel=1e-8)
    assert traj.t_events[1][0] == pytest.approx(t_hit, rel=1e-12)


# ---------------------------------------------------------------- inputs
KP, KD, REF, RATE = 40.0, 4.0, -0.6, 1000


def pd(q, qd):
    return -KP * (q[2] - REF) - KD * qd[2]


def zoh_reference(t_final, method):
    """The controller as a force of the model: on each interval [t_k, t_k+1] a
    simulate call with the generalized force held at the controller's value at t_k."""
    m = pendulum()
    force = m.force_elements[-1]
    q, qd = m.q0, m.qd0
    n = int(round(t_final * RATE))
    out = [np.concatenate([q, qd])]
    for k in range(n):
        force.params["fa_c0"] = pd(q, qd)
        m._compiled = None  # the table changed
        tr = mbint.simulate(m, (k / RATE, (k + 1) / RATE), method=method, q0=q, qd0=qd,
                            rtol=1e-10, atol=1e-12, consistent="ignore")
        q, qd = tr.q[:, -1], tr.qd[:, -1]
        out.append(np.concatenate([q, qd]))
    return np.array(out)


@pytest.mark.parametrize("method,formulation", [("dopri5", "index1"), ("bdf", "index1"),
                                                ("rodas4", "index1"),
                                                ("radau_iia", "index1_dae"),
                                                ("cvode_bdf", "index1"),
                                                ("arkode_dirk", "index1"),
                                                ("ida", "index1_dae")])
def test_pd_controller_at_1khz_equals_the_zoh_force(method, formulation):
    t_final = 0.3
    ref = zoh_reference(t_final, method if method in ADAPTIVE and formulation == "index1"
                        else "dopri5")
    m = pendulum()
    sim = mbint.Simulator(m, method=method, formulation=formulation, rtol=1e-10, atol=1e-12)
    got = [np.concatenate(sim.state)]
    for k in range(1, int(round(t_final * RATE)) + 1):
        q, qd = sim.state
        sim.set_input("tau", pd(q, qd))
        sim.advance(k / RATE)
        got.append(np.concatenate(sim.state))
    got = np.array(got)
    np.testing.assert_allclose(got, ref, atol=1e-7)
    assert sim.stats["nrestart"] >= int(t_final * RATE) - 1  # one restart per change
    traj = sim.trajectory()      # the parts of steps past each change were dropped
    assert np.all(np.diff(traj.t) > 0) and traj.t[-1] >= t_final
    # the controller did something: the angle moved towards REF
    assert abs(got[-1, 2] - REF) < abs(got[0, 2] - REF)
    # the model itself still has its own force: simulate is unchanged by the Simulator
    assert m.force_elements[-1].params["fa_c0"] == 0.0
    assert sim.inputs["tau"] == pytest.approx(pd(*sim.state), abs=100)


def test_set_input_same_value_costs_nothing_and_step_after_change():
    m = pendulum()
    sim = mbint.Simulator(m, method="dopri5")
    sim.advance(0.05)
    sim.set_input("tau", 0.0)  # unchanged
    assert sim.stats["nrestart"] == 0
    sim.set_input("tau", 2.0)
    assert sim.stats["nrestart"] == 1
    t = sim.t
    assert sim.step() > t
    traj = sim.trajectory()
    assert np.all(np.diff(traj.t) > 0)
    assert 0.05 in traj.t  # the run restarted at the change


def test_constant_torque_balances_gravity():
    """tau = m g l/2 holds the horizontal rod still: the input reaches the dynamics."""
    m = pendulum()
    sim = mbint.Simulator(m, method="dopri5", rtol=1e-10, atol=1e-12)
    sim.set_input("tau", 9.81 * 0.5)
    sim.advance(1.0)
    q, qd = sim.state
    assert abs(q[2]) < 1e-8 and abs(qd[2]) < 1e-8


# ---------------------------------------------------------------- reset, errors, failure
def test_reset():
    m = pendulum()
    sim = mbint.Simulator(m, method="dopri5", rtol=1e-8, atol=1e-10)
    sim.advance(0.3)
    first = np.concatenate(sim.state)
    sim.reset()
    assert sim.t == 0.0 and sim.stats["nsteps"] == 0
    np.testing.assert_array_equal(np.concatenate(sim.state), np.concatenate([m.q0, m.qd0]))
    sim.advance(0.3)
    np.testing.assert_array_equal(np.concatenate(sim.state), first)
    q = np.array([0.0, -0.5, -math.pi / 2])  # hanging straight down: rest
    sim.reset(t0=1.0, q=q, qd=np.zeros(3))
    sim.advance(1.5)
    np.testing.assert_allclose(sim.state[0], q, atol=1e-9)
    assert len(sim.trajectory().t) >= 2 and sim.trajectory().t[0] == 1.0


def test_errors():
    m = pendulum()
    sim = mbint.Simulator(m, method="dopri5", t_end=1.0)
    sim.advance(0.5)
    with pytest.raises(ValueError, match="before the current time"):
        sim.advance(0.4)
    with pytest.raises(ValueError, match="past t_end"):
        sim.advance(1.5)
    with pytest.raises(ValueError, match="unknown input 'force'.*tau"):
        sim.set_input("force", 1.0)
    with pytest.raises(ValueError, match="finite"):
        sim.set_input("tau", math.nan)
    with pytest.raises(ValueError, match="t_eval"):
        mbint.Simulator(m, t_eval=[0.1])
    with pytest.raises(ValueError, match="state_space"):
        mbint.Simulator(m, method="dopri5", formulation="state_space").set_input("tau", 1.0)


def test_failure_returns_the_trajectory_so_far():
    m = pendulum()
    sim = mbint.Simulator(m, method="dopri5", rtol=1e-10, atol=1e-12, max_steps=20)
    with pytest.raises(mbint.SimulationFailed, match="maximum number of steps") as e:
        sim.advance(1.0)
    traj = e.value.result
    assert traj.status < 0
    assert len(traj.t) == 21 and 0 < traj.t[-1] < 1.0  # every accepted step kept
    assert sim.t < 1.0


def test_a_raising_python_force_propagates_with_the_result():
    class Boom(Exception):
        pass

    m = pendulum()
    rod = m.bodies[1] if len(m.bodies) > 1 else m.bodies[0]

    def force(t, q, qd):
        if t > 0.05:
            raise Boom("at t > 0.05")
        return np.zeros(3)

    m.add_force(rod, force)
    sim = mbint.Simulator(m, method="dopri5")
    with pytest.raises(Boom) as e:
        sim.advance(1.0)
    assert e.value.result.t[-1] <= 0.06


def test_ctrl_c_keeps_the_trajectory():
    """A KeyboardInterrupt during a piece (here raised by a Python force, as Python's
    signal handler raises it inside the run) is IntegrationInterrupted with the result."""
    m = pendulum()

    armed = []

    def force(t, q, qd):
        if armed and t > 0.2:
            raise KeyboardInterrupt
        return np.zeros(3)

    m.add_force(m.bodies[-1], force)
    sim = mbint.Simulator(m, method="dopri5")
    sim.advance(0.1)
    armed.append(True)
    with pytest.raises(mbint.IntegrationInterrupted) as e:
        sim.advance(1.0)
    traj = e.value.result
    assert traj.status == -1 and 0.1 <= traj.t[-1] <= 0.2


def test_spatial_model_without_inputs():
    """Models without generalized forces run too (no inputs): a spherical pendulum."""
    sm = mbint.SpatialModel()
    rod = sm.add_body(1.0, (0.1, 0.1, 0.01), r=(0.3, 0, -0.4))
    sm.add_spherical(sm.ground, rod, point=(0, 0, 0))
    ref = mbint.simulate(sm, (0.0, 0.2), method="dopri5", t_eval=[0.1, 0.2])
    sim = mbint.Simulator(sm, method="dopri5", t_end=0.2)
    assert sim.inputs == {}
    for k, t in enumerate([0.1, 0.2]):
        sim.advance(t)
        np.testing.assert_array_equal(sim.state[0], ref.q[:, k])
    with pytest.raises(ValueError, match="unknown input"):
        sim.set_input("tau", 1.0)


# ---------------------------------------------------------------- OdeSimulator
@pytest.mark.parametrize("method", ["dopri5", "radau_iia", "bdf", "cvode_bdf", "arkode_erk",
                                    "ida"])
def test_ode_advance_loop_is_solve_ivp_with_t_eval(method):
    from mbint import problems
    tk = np.linspace(0.0, 2.0, 41)
    ref = mbint.solve_ivp(problems.van_der_pol, (0.0, 2.0), problems.VDP_Y0, method=method,
                          rtol=1e-6, atol=1e-8, t_eval=tk)
    sim = mbint.OdeSimulator(problems.van_der_pol, 0.0, problems.VDP_Y0, method=method,
                             t_end=2.0, rtol=1e-6, atol=1e-8)
    got = [sim.y for t in tk if sim.advance(t) is not None]
    np.testing.assert_array_equal(np.array(got).T, ref.y)
    assert sim.stats["nsteps"] == ref.nsteps and sim.finished
    res = sim.trajectory()
    assert res.success and res.t[-1] == 2.0 and len(res.t) == ref.nsteps + 1


def test_ode_c_rhs_steps_without_the_gil():
    from mbint import problems
    f = problems.c_rhs("vdp1000")
    ref = mbint.solve_ivp(f, (0.0, 1.0), problems.VDP_Y0, method="radau_iia",
                          jac=problems.c_jac("vdp1000"), rtol=1e-6, atol=1e-6)
    sim = mbint.OdeSimulator(f, 0.0, problems.VDP_Y0, method="radau_iia", t_end=1.0,
                             jac=problems.c_jac("vdp1000"), rtol=1e-6, atol=1e-6)
    ts = [0.0]
    while not sim.finished:
        ts.append(sim.step())
    np.testing.assert_array_equal(ts, ref.t)
    np.testing.assert_array_equal(sim.y, ref.y[:, -1])


@pytest.mark.parametrize("method", ["bdf", "cvode_bdf", "cvode_adams", "arkode_dirk", "ida"])
def test_ode_restart_after_a_parameter_change(method):
    """y' = -y + u, u from 0 to 1 at t = 0.5: y = e^-t, then 1 + (e^-0.5 - 1) e^-(t-0.5)."""
    u = [0.0]
    sim = mbint.OdeSimulator(lambda t, y: -y + u[0], 0.0, [1.0], method=method, rtol=1e-10,
                             atol=1e-12)
    sim.advance(0.5)
    u[0] = 1.0
    sim.restart()
    assert sim.stats["nrestart"] == 1
    for t in (0.7, 1.0, 2.0):
        sim.advance(t)
        assert sim.y[0] == pytest.approx(1 + (math.exp(-0.5) - 1) * math.exp(-(t - 0.5)),
                                         abs=1e-8)
    with pytest.raises(ValueError, match="before the current time"):
        sim.advance(1.0)
    sim.reset()
    assert sim.t == 0.0 and sim.y[0] == 1.0 and sim.stats["nsteps"] == 0


def test_ode_failure_keeps_the_result():
    sim = mbint.OdeSimulator(lambda t, y: -y, 0.0, [1.0], rtol=1e-12, atol=1e-14, max_steps=7)
    with pytest.raises(mbint.SimulationFailed) as e:
        sim.advance(100.0)
    assert e.value.result.status == -1 and len(e.value.result.t) == 8
