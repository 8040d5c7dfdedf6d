"""Tests of ``method="auto"`` (csrc/methods/auto_switch.c): automatic switching between
dopri5 (non-stiff phases) and rodas4 (stiff phases) behind the one driver.

Checks: on a non-stiff problem (Arenstorf) it never switches and is dopri5, step for
step; on stiff problems (Van der Pol with mu = 1000 in Hairer's scaling, Robertson,
HIRES) it switches once to rodas4, is accurate within 10x of the tolerance against
radau_iia at rtol 1e-12, and needs 5x (HIRES with finite-difference Jacobians) to
5000x (Van der Pol) fewer f evaluations than dopri5; on
problems that change character (vdp1000: slow stiff phases and fast jumps; a linear
problem whose stiffness is switched on and off in time, exact solution known) it
switches both ways, with the phases where they belong; events, t_eval and the dense
output on such runs against exact values and references; a restart at a switching
event keeps the stiff mode; a mass matrix is refused.  The C-level checks (the
stiffness estimate of one dopri5 step, the registry entry, ASan runs) are in
tests/c/test_auto.c.
"""
import numpy as np
import pytest

pytest.importorskip("mbint._core")

import mbint  # noqa: E402
from mbint import problems as P  # noqa: E402


def reference(f, jac, span, y0, t_eval, atol):
    """radau_iia at rtol 1e-12 (the tight reference of the stiff tests)."""
    r = mbint.solve_ivp(f, span, y0, method="radau_iia", rtol=1e-12, atol=atol, jac=jac,
                        t_eval=t_eval)
    assert r.status == 0, r.message
    return r


def rel_error(y, ref, rtol, atol):
    """max |y - ref| / (atol + rtol |ref|)"""
    return float(np.max(np.abs(y - ref) / (atol + rtol * np.abs(ref))))


def dopri5_steps(sol):
    """Which steps of a run of auto dopri5 took: its interpolant has degree 4, rodas4's 3
    (the theta^4 coefficients of a rodas4 step are zero)."""
    return np.any(sol.C[:, 4, :] != 0.0, axis=1)


# ---- a linear problem whose stiffness is switched on and off ----
# y' = A(t) (y - g(t)) + g'(t),  g = (sin t, cos t),  A = [[-1, 1], [0, -(1 + K s(t))]]
# with s(t) ~ 1 on STIFF_WINDOWS and ~ 0 elsewhere: y = g(t) exactly for y(0) = g(0),
# the eigenvalues are -1 and -(1 + K s(t)).
K_STIFF = 1e4
STIFF_WINDOWS = [(2.0, 4.0), (6.0, 8.0)]
WIDTH = 0.1


def window(t):
    return sum(0.5 * (np.tanh((t - a) / WIDTH) - np.tanh((t - b) / WIDTH))
               for a, b in STIFF_WINDOWS)


def onoff(t, y):
    g = np.array([np.sin(t), np.cos(t)])
    dg = np.array([np.cos(t), -np.sin(t)])
    d = y - g
    return np.array([-d[0] + d[1], -(1.0 + K_STIFF * window(t)) * d[1]]) + dg


def onoff_jac(t, y):
    return np.array([[-1.0, 1.0], [0.0, -(1.0 + K_STIFF * window(t))]])


def onoff_exact(t):
    return np.array([np.sin(t), np.cos(t)])


def vdp_reference(name, y0, t_eval):
    """radau_iia at rtol 1e-12 on Van der Pol problem name, [0, 2], with the times of
    its two jumps (y1 = 0)."""

    def zero_y1(t, y):
        return y[0]

    r = mbint.solve_ivp(P.c_rhs(name), (0.0, 2.0), y0, method="radau_iia", rtol=1e-12,
                        atol=1e-12, jac=P.c_jac(name), t_eval=t_eval, events=[zero_y1])
    assert r.status == 0 and len(r.t_events[0]) == 2
    return r, r.t_events[0]


def off_jumps(t, jumps, width=0.02):
    """Points farther than width from the jumps: inside a jump, a shift of its time by
    1e-7 changes y by ~1e-1, and a pointwise comparison measures nothing but that."""
    t = np.asarray(t)
    return np.all(np.abs(t[:, None] - np.asarray(jumps)[None, :]) > width, axis=1)


# ---- registry ----
def test_registered():
    ms = {m.name: m for m in mbint.methods()}
    info, d5 = ms["auto"], ms["dopri5"]
    assert (info.order, info.error_order) == (d5.order, d5.error_order)
    assert info.adaptive == "embedded" and info.dense_output == "own"
    assert info.needs_jacobian      # jac= reaches rodas4
    assert not info.mass_matrix


def test_mass_matrix_refused():
    with pytest.raises(ValueError, match="mass"):
        mbint.solve_ivp(P.exp_decay, (0.0, 1.0), [1.0], method="auto", mass=np.eye(1))


# ---- non-stiff: dopri5 throughout ----
@pytest.mark.parametrize("rtol", [1e-3, 1e-6, 1e-9])
def test_arenstorf_never_switches(rtol):
    """Arenstorf's orbit: no switch, no Jacobian, and the run is dopri5's, step for step
    (same kernel, same controller exponent); one period returns to y0."""
    kw = dict(rtol=rtol, atol=rtol)
    span = (0.0, P.ARENSTORF_T)
    a = mbint.solve_ivp(P.arenstorf, span, P.ARENSTORF_Y0, method="auto", **kw)
    d = mbint.solve_ivp(P.arenstorf, span, P.ARENSTORF_Y0, method="dopri5", **kw)
    assert a.status == 0 and a.nswitch == 0 and a.njev == 0 and a.nlu == 0
    assert a.nfev == d.nfev and a.nsteps == d.nsteps and a.nreject == d.nreject
    np.testing.assert_array_equal(a.t, d.t)
    np.testing.assert_array_equal(a.y, d.y)
    if rtol <= 1e-6:  # at 1e-3 the orbit is not closed by dopri5 either
        assert np.max(np.abs(a.y[:, -1] - P.ARENSTORF_Y0)) < 2e4 * rtol


# ---- stiff: one switch to rodas4 ----
def test_vdp_mu1000_scaled_switches_and_is_cheap():
    """Van der Pol, mu = 1000 (Hairer's scaled form, eps = 1/mu^2): auto goes stiff
    within the first steps and needs ~5000x fewer f evaluations than dopri5 on the slow
    phase [0, 0.5]; on [0, 2] (two jumps) it is within 10x of rtol against radau_iia
    (off the jumps) and cheaper than rodas4 alone (dopri5 takes the jumps)."""
    f, jac, y0 = P.c_rhs("vdp_scaled"), P.c_jac("vdp_scaled"), P.VDP_SCALED_Y0
    kw = dict(rtol=1e-6, atol=1e-6, jac=jac)
    a = mbint.solve_ivp(f, (0.0, 0.5), y0, method="auto", **kw)
    d = mbint.solve_ivp(f, (0.0, 0.5), y0, method="dopri5", max_steps=10**7, **kw)
    assert a.status == 0 and d.status == 0
    assert a.nswitch == 1 and a.njev > 0
    assert 10 * a.nfev < d.nfev, (a.nfev, d.nfev)
    print(f"\nvdp_scaled [0, 0.5]: auto nfev {a.nfev} njev {a.njev}; dopri5 nfev {d.nfev}")

    te = np.linspace(0.0, 2.0, 81)
    ref, jumps = vdp_reference("vdp_scaled", y0, te)
    a = mbint.solve_ivp(f, (0.0, 2.0), y0, method="auto", t_eval=te, **kw)
    r4 = mbint.solve_ivp(f, (0.0, 2.0), y0, method="rodas4", t_eval=te, **kw)
    assert a.status == 0 and a.nswitch >= 3   # stiff, and back to dopri5 around the jumps
    ok = off_jumps(te, jumps)
    assert rel_error(a.y[:, ok], ref.y[:, ok], 1e-6, 1e-6) < 10.0
    assert a.nfev < r4.nfev
    print(f"vdp_scaled [0, 2]: auto nfev {a.nfev} njev {a.njev} nswitch {a.nswitch}; "
          f"rodas4 nfev {r4.nfev} njev {r4.njev}")


@pytest.mark.parametrize("rtol", [1e-4, 1e-6])
def test_robertson(rtol):
    """Robertson to t = 1e5: one switch, error within 10x of the tolerance at t = 1, 10,
    ..., 1e5 against radau_iia; dopri5 (on [0, 40] only: it cannot go much further)
    needs more than 100x the f evaluations auto needs on that interval."""
    f, jac, y0 = P.c_rhs("robertson"), P.c_jac("robertson"), P.ROBERTSON_Y0
    te = [1.0, 10.0, 100.0, 1e3, 1e4, 1e5]
    ref = reference(f, jac, (0.0, 1e5), y0, te, 1e-16)
    a = mbint.solve_ivp(f, (0.0, 1e5), y0, method="auto", rtol=rtol, atol=1e-10, jac=jac,
                        t_eval=te)
    assert a.status == 0 and a.nswitch == 1 and a.njev > 0
    assert rel_error(a.y, ref.y, rtol, 1e-10) < 10.0
    a40 = mbint.solve_ivp(f, (0.0, 40.0), y0, method="auto", rtol=rtol, atol=1e-10, jac=jac)
    d40 = mbint.solve_ivp(f, (0.0, 40.0), y0, method="dopri5", rtol=rtol, atol=1e-10,
                          max_steps=10**7)
    assert d40.status == 0 and 100 * a40.nfev < d40.nfev, (a40.nfev, d40.nfev)


def test_hires_without_jacobian():
    """HIRES with finite-difference Jacobians (8 f evaluations each): one switch, within
    10x of rtol, more than 5x cheaper than dopri5."""
    f, y0, tf = P.c_rhs("hires"), P.HIRES_Y0, P.HIRES_T
    te = [5.0, 50.0, tf]
    ref = reference(f, P.c_jac("hires"), (0.0, tf), y0, te, 1e-14)
    a = mbint.solve_ivp(f, (0.0, tf), y0, method="auto", rtol=1e-6, atol=1e-10, t_eval=te)
    d = mbint.solve_ivp(f, (0.0, tf), y0, method="dopri5", rtol=1e-6, atol=1e-10, t_eval=te)
    assert a.status == 0 and a.nswitch >= 1 and a.njev > 0
    assert rel_error(a.y, ref.y, 1e-6, 1e-10) < 10.0
    assert 5 * a.nfev < d.nfev, (a.nfev, d.nfev)


# ---- problems that change character: switches both ways ----
def test_vdp1000_alternates():
    """vdp1000 (y2' = 1000 ((1 - y1^2) y2 - y1)) on [0, 2]: slow stiff phases and two
    fast jumps.  auto goes stiff in the first slow phase, back to dopri5 before each
    jump (rho(J) = 1000 |1 - y1^2| falls as y1 -> 1) and stiff again after it: 5
    switches; within 10x of rtol against radau_iia at rtol 1e-12 (off the jumps);
    fewer f evaluations than both dopri5 (whose step is held at its stability limit in
    the slow phases) and rodas4 (which crosses the jumps with steps of 3e-5)."""
    f, jac, y0 = P.c_rhs("vdp1000"), P.c_jac("vdp1000"), P.VDP_Y0
    te = np.linspace(0.0, 2.0, 81)
    ref, jumps = vdp_reference("vdp1000", P.VDP_Y0, te)
    kw = dict(rtol=1e-6, atol=1e-6, jac=jac, t_eval=te)
    a = mbint.solve_ivp(f, (0.0, 2.0), y0, method="auto", dense_output=True, **kw)
    d = mbint.solve_ivp(f, (0.0, 2.0), y0, method="dopri5", **kw)
    r4 = mbint.solve_ivp(f, (0.0, 2.0), y0, method="rodas4", **kw)
    assert a.status == 0 and a.nswitch == 5
    ok = off_jumps(te, jumps)
    assert rel_error(a.y[:, ok], ref.y[:, ok], 1e-6, 1e-6) < 10.0
    assert a.nfev < d.nfev and a.nfev < r4.nfev
    # the jumps are taken by dopri5, the middle of the slow phases by rodas4
    explicit = dopri5_steps(a.sol)
    mid = a.sol.t_min_step + 0.5 * a.sol.h
    for t_jump in jumps:
        near = np.abs(mid - t_jump) < 0.01
        assert near.any() and explicit[near].all()
    slow = (np.abs(mid - 0.4) < 0.3) | (np.abs(mid - 1.25) < 0.3)
    assert slow.any() and not explicit[slow].any()
    print(f"\nvdp1000 [0, 2] rtol 1e-6: auto nfev {a.nfev} njev {a.njev} nswitch {a.nswitch}; "
          f"dopri5 nfev {d.nfev}; rodas4 nfev {r4.nfev} njev {r4.njev}")


@pytest.mark.parametrize("rtol", [1e-4, 1e-6, 1e-8])
def test_stiffness_on_and_off(rtol):
    """Linear problem, stiff (eigenvalue -1e4) on [2, 4] and [6, 8] only: four switches,
    the steps well inside the windows by rodas4 and well outside by dopri5, the solution
    y = (sin t, cos t) within 10x of the tolerance, and fewer f evaluations than dopri5
    alone (30x at rtol 1e-4 and 1e-6)."""
    atol = 1e-2 * rtol
    te = np.linspace(0.0, 10.0, 101)
    r = mbint.solve_ivp(onoff, (0.0, 10.0), onoff_exact(0.0), method="auto", rtol=rtol,
                        atol=atol, jac=onoff_jac, t_eval=te, dense_output=True)
    assert r.status == 0 and r.nswitch == 4, r.nswitch
    assert rel_error(r.y, onoff_exact(te), rtol, atol) < 10.0
    explicit = dopri5_steps(r.sol)
    mid = r.sol.t_min_step + 0.5 * r.sol.h
    for a, b in [(2.3, 3.8), (6.3, 7.8)]:
        inside = (mid > a) & (mid < b)
        assert inside.any() and not explicit[inside].any()
    for a, b in [(0.0, 1.5), (4.8, 5.5), (8.8, 10.0)]:
        outside = (mid > a) & (mid < b)
        assert outside.any() and explicit[outside].all()
    # the Jacobian: one per rodas4 step, plus one per confirmation (two switches in)
    rodas4_steps = np.count_nonzero(~explicit)
    assert rodas4_steps <= r.njev <= rodas4_steps + r.nreject + 2
    # at rtol 1e-8 rodas4 (order 4) itself needs many steps in the windows: 3x there
    d = mbint.solve_ivp(onoff, (0.0, 10.0), onoff_exact(0.0), method="dopri5", rtol=rtol,
                        atol=atol)
    assert (10 if rtol >= 1e-6 else 2) * r.nfev < d.nfev, (r.nfev, d.nfev)


def test_events_and_dense_output_on_switching_run():
    """Events y1 = 1/2 (t = pi/6, 5 pi/6 + 2 k pi) and y2 = 0 (t = pi/2 + k pi), in both
    phases of the on/off problem, against their exact times; the dense output against
    the exact solution on a fine grid, in both phases."""
    rtol, atol = 1e-7, 1e-9

    def e1(t, y):
        return y[0] - 0.5

    def e2(t, y):
        return y[1]

    r = mbint.solve_ivp(onoff, (0.0, 10.0), onoff_exact(0.0), method="auto", rtol=rtol,
                        atol=atol, jac=onoff_jac, events=[e1, e2], dense_output=True)
    assert r.status == 0 and r.nswitch == 4
    # 5 pi/6 (2.62) and 13 pi/6 (6.81) lie in the stiff windows, the others outside
    np.testing.assert_allclose(r.t_events[0], [np.pi / 6, 5 * np.pi / 6, 13 * np.pi / 6,
                                               17 * np.pi / 6], atol=1e-6)
    # 5 pi/2 (7.85) in a stiff window
    np.testing.assert_allclose(r.t_events[1], np.pi * (np.arange(0, 3) + 0.5), atol=1e-6)
    tt = np.linspace(0.0, 10.0, 2001)
    err = np.abs(r.sol(tt) - onoff_exact(tt)) / (atol + rtol * np.abs(onoff_exact(tt)))
    assert err.max() < 20.0, err.max()
    explicit = dopri5_steps(r.sol)
    assert explicit.any() and (~explicit).any()


def test_vdp_events_against_reference():
    """vdp1000: the zeros of y1 (inside the jumps, taken by dopri5) and the times where
    |y1| = 1.5 (in the slow stiff phases, by rodas4) against radau_iia at rtol 1e-12;
    the dense output against the reference's at 400 points off the jumps."""
    f, jac, y0 = P.c_rhs("vdp1000"), P.c_jac("vdp1000"), P.VDP_Y0

    def zero_y1(t, y):
        return y[0]

    def y1_at_1p5(t, y):
        return abs(y[0]) - 1.5

    ev = [zero_y1, y1_at_1p5]
    ref = mbint.solve_ivp(f, (0.0, 2.0), y0, method="radau_iia", rtol=1e-12, atol=1e-12,
                          jac=jac, events=ev, dense_output=True)
    a = mbint.solve_ivp(f, (0.0, 2.0), y0, method="auto", rtol=1e-7, atol=1e-7, jac=jac,
                        events=ev, dense_output=True)
    assert a.status == 0 and a.nswitch >= 4
    for k in range(2):
        assert len(a.t_events[k]) == len(ref.t_events[k]) >= 2
        np.testing.assert_allclose(a.t_events[k], ref.t_events[k], atol=1e-5)
    tt = np.linspace(0.0, 2.0, 400)
    ok = off_jumps(tt, ref.t_events[0])
    assert rel_error(a.sol(tt[ok]), ref.sol(tt[ok]), 1e-7, 1e-7) < 10.0


def test_restart_keeps_the_stiff_mode():
    """A switching event in the middle of Robertson's stiff phase restarts the run (the
    driver re-initializes the method); auto stays with rodas4 (dopri5 at rodas4's step
    size would overflow), so there is still exactly one switch, and the run is as
    accurate as without the event."""
    f, jac, y0 = P.c_rhs("robertson"), P.c_jac("robertson"), P.ROBERTSON_Y0

    def at_100(t, y):
        return t - 100.0

    at_100.switching = True
    te = [1.0, 100.0, 1e4]
    kw = dict(rtol=1e-6, atol=1e-10, jac=jac, t_eval=te)
    plain = mbint.solve_ivp(f, (0.0, 1e4), y0, method="auto", **kw)
    r = mbint.solve_ivp(f, (0.0, 1e4), y0, method="auto", events=[at_100], **kw)
    assert r.status == 0 and r.nrestart == 1 and r.nswitch == 1
    np.testing.assert_allclose(r.t_events[0], [100.0])
    assert rel_error(r.y, plain.y, 1e-6, 1e-10) < 10.0
    assert r.nfev < 1.5 * plain.nfev


def test_other_methods_report_no_switch():
    r = mbint.solve_ivp(P.exp_decay, (0.0, 1.0), [1.0], method="rodas4")
    assert r.nswitch == 0
