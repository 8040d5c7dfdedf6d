"""Penalty contacts are never passed through, whatever the step size.

The circle-circle gap R - |P_j - P_i| of two balls changes sign twice when one
passes through the other, so a step longer than the contact showed the same sign
at both ends and no event fired: ball 1 fell through ball 2 to y = -120 m with the
energy "conserved" (the class of scipy#9228).  The step is now bounded by continuous
collision detection (the planar model's step bound, csrc/mbs/contact.c: a step that
enters a contact ends inside it), honoured by the driver and the SUNDIALS adapters,
and the driver samples the switching events inside every step as a second line of
defence.

The bound on the penetration comes from energy conservation: without damping,
1/2 K delta^2 <= E - V_min, V_min the gravitational potential of both balls resting
on the ground (heights R and 3 R), with E the largest energy the computed motion has
(the initial one for a method that conserves it; forward Euler at rtol 1e-3 gains up
to 60 %)."""
import numpy as np
import pytest

import mbint
from mbint import models
from mbint.methods import method_info

G, R, K = 9.81, 0.1, 1e5


def penetration_bound(E):
    return np.sqrt(2 * (E - G * 4 * R) / K)


def heights(tr, n_dense=801):
    """y1, y2 at the output points and on the dense output"""
    y1, y2 = tr.q[1], tr.q[4]
    if tr.sol is not None:
        Y = tr.sol(np.linspace(tr.t[0], tr.t[-1], n_dense))
        y1, y2 = np.concatenate([y1, Y[1]]), np.concatenate([y2, Y[4]])
    return y1, y2


def check_contacts(tr, factor=1.2, max_gain=2.0):
    """order kept, penetrations (ball-ball, ball-ground) within the energy bound; the
    energy at most max_gain x the initial one (None: unchecked)"""
    y1, y2 = heights(tr)
    E = tr.energy().total
    if max_gain is not None:
        assert np.max(E) <= max_gain * E[0]
    bound = penetration_bound(max(E[0], np.max(E)))
    assert np.min(y1 - y2) > 0, "the balls swapped order"
    assert np.max(2 * R - (y1 - y2)) <= factor * bound
    assert np.max(R - y2) <= factor * bound


@pytest.mark.parametrize("method", ["llm", "dopri5", "radau_iia"])
def test_reported_case_no_ball_passes_through_the_other(method):
    """The report: bouncing_balls over (0, 5) at rtol 1e-6, atol 1e-8 without max_step
    (the model's setting max_step = 0.005 overridden); ball 1 passed through ball 2
    within one step (y1 - y2 = -120 m at t = 5)."""
    tr = mbint.simulate(models.bouncing_balls(), (0, 5), method=method, rtol=1e-6, atol=1e-8,
                        max_step=np.inf, dense_output=True)
    assert tr.success and tr.t[-1] == 5.0
    check_contacts(tr)
    y1, y2 = heights(tr)
    assert np.min(y1) > -R and np.min(y2) > -R
    E = tr.energy().total
    assert np.max(np.abs(E - E[0])) <= 1e-4 * E[0]
    # every contact is closed and opened again: 8 ball-ball and 10 ball-ground contacts
    assert [len(c) for c in tr.t_contacts] == [16, 20]


def _adaptive_methods():
    return [m.name for m in mbint.methods() if m.adaptive != "none"]


def _drops(n, seed):
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        y2 = rng.uniform(0.3, 1.2)
        y1 = y2 + rng.uniform(0.25, 1.5)
        v1, v2 = rng.uniform(-4.0, 4.0, 2)
        out.append((y1, y2, v1, v2))
    return out


@pytest.mark.parametrize("method", _adaptive_methods())
def test_random_drops_every_method_default_settings(method):
    """Every method that chooses its own steps, at the default tolerances (rtol 1e-3,
    atol 1e-6: not the model's settings) and without max_step: no penetration beyond 1.2 x the energy bound at the output points and on
    the dense output, and the balls never swap.  Before the step bound all but
    euler, backward_euler and w2 passed a ball through the other in some of these
    drops (penetrations of 50-770 x the bound)."""
    n_contact = 0
    for y1, y2, v1, v2 in _drops(12, seed=20240611):
        tr = mbint.simulate(models.bouncing_balls(y1=y1, y2=y2, v1=v1, v2=v2), (0, 1.5),
                            method=method, rtol=1e-3, atol=1e-6, max_step=np.inf,
                            dense_output=True, max_steps=100000)
        assert tr.success, tr.message
        check_contacts(tr)
        n_contact += np.any(tr.q[1] - tr.q[4] < 2 * R)
    assert n_contact >= 6  # the drops do bring the balls into contact


@pytest.mark.parametrize("method,h", [("llm", 0.02), ("llm", 0.1), ("rk4", 0.01), ("rk4", 0.05)])
def test_fixed_steps_never_miss_a_contact(method, h):
    """A fixed-step run inserts steps off its grid where the bound asks for them and
    keeps every grid point.  Before, llm with h = 0.1 and rk4 with h = 0.05 passed
    ball 1 through ball 2, and rk4 with h = 0.01 saw one ball-ball contact of the
    eight."""
    tr = mbint.simulate(models.bouncing_balls(), (0, 5), method=method, h=h, rtol=1e-3,
                        atol=1e-6, dense_output=True)
    assert tr.success
    # rk4 is unstable inside the contact at these steps (h sqrt(2 K) = 4.5 > 2.8): it
    # gains energy there, up to 3 x, but never misses a contact
    check_contacts(tr, max_gain=None)
    grid = np.linspace(0, 5, int(round(5 / h)) + 1)
    assert np.all(np.min(np.abs(tr.t[None, :] - grid[:, None]), axis=1) <= 1e-12)
    assert min(len(c) for c in tr.t_contacts) >= 4  # contacts closed and opened


def test_trapezoid_step_into_a_stiff_contact_is_not_accepted_unconverged():
    """A trapezoidal step that ends 2.5 cm inside the ground contact: its simplified
    Newton (J of the free flight, no contact stiffness) accepted its first, huge
    correction on the previous solve's contraction rate and returned a non-solution
    above the ground with the velocity reversed (48.8 m/s instead of -4.7 m/s) and an
    error estimate of 0: the energy rose from 32 J to 1982 J."""
    y1, y2, v1, v2 = 1.5758391528495972, 0.9753282053670473, -0.11847220454691954, 3.845897598409909
    tr = mbint.simulate(models.bouncing_balls(y1=y1, y2=y2, v1=v1, v2=v2), (0, 1.5),
                        method="trapezoid", rtol=1e-3, atol=1e-6, max_step=np.inf,
                        dense_output=True)
    assert tr.success
    E = tr.energy().total
    assert np.max(np.abs(E - E[0])) <= 1e-3 * E[0]
    check_contacts(tr)


def test_step_bound_is_inactive_far_from_contacts():
    """Balls falling side by side, apart and never touching (relative motion zero):
    no bound, the same steps as without contacts."""
    def model(with_contact):
        m = mbint.PlanarModel(gravity=(0, -G))
        b1 = m.add_body(1.0, 0.004, q=(0.0, 5.0, 0.0))
        b2 = m.add_body(1.0, 0.004, q=(1.0, 5.0, 0.0))
        if with_contact:
            m.add_contact(b1, radius=R, other=b2, other_radius=R, K=K)
        return m
    a = mbint.simulate(model(True), (0, 0.5), method="dopri5")
    b = mbint.simulate(model(False), (0, 0.5), method="dopri5")
    assert a.stats["nsteps"] == b.stats["nsteps"]
    assert a.stats["nfev"] == b.stats["nfev"]


@pytest.mark.parametrize("method", ["dopri5", "llm", "radau_iia", "bdf", "cvode_bdf",
                                    "arkode_erk"])
def test_oblique_collision_in_free_space(method):
    """Ball 1 at 5 m/s hits ball 2 (at rest) off-centre (impact parameter R/2), no
    gravity: the free flight is exact for every method, whose steps grew until one
    jumped the whole contact (before: both balls kept their velocities).  Now the
    collision happens; momentum is conserved exactly and the kinetic energy to the
    tolerance (no damping), so for equal masses the outgoing velocities are
    perpendicular."""
    m = mbint.PlanarModel(gravity=(0, 0))
    b1 = m.add_body(1.0, 0.004, q=(-3.0, R, 0.0), qd=(5.0, 0.0, 0.0))
    b2 = m.add_body(1.0, 0.004, q=(0.0, 0.0, 0.0))
    m.add_contact(b1, radius=R, other=b2, other_radius=R, K=K)
    tr = mbint.simulate(m, (0, 2), method=method)
    assert tr.success
    v1, v2 = tr.qd[0:2, -1], tr.qd[3:5, -1]
    assert np.linalg.norm(v2) > 3.0  # ball 2 was hit
    np.testing.assert_allclose(v1 + v2, [5.0, 0.0], atol=1e-9)
    assert abs(v1 @ v1 + v2 @ v2 - 25.0) <= 0.01 * 25.0
    assert abs(v1 @ v2) <= 0.005 * 25.0
    d = np.hypot(tr.q[3] - tr.q[0], tr.q[4] - tr.q[1])
    # penetration within the bound of the relative motion's energy, mu v^2 / 2 = 6.25 J
    assert np.min(d) > 2 * R - 1.2 * np.sqrt(2 * 6.25 / K)
