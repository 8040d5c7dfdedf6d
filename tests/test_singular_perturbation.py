"""The singular-perturbation multirate scheme (SP paper: Gil, Sanfelice, Nikravesh,
DETC2013), csrc/methods/singular_perturbation.c, its stability analysis
(mbint.stability.sp_*), the proposal of the split (mbint.multirate) and the pendulum
with a particle (models.pendulum_particle).

The test system of SP eq 50 is complex (lambda_s = -1 + i); solve_ivp integrates a
complex state as real pairs, on which the scheme is the complex scheme (every block
is the real form of a complex number).
"""
import numpy as np
import pytest
from scipy.linalg import expm

import mbint
from mbint import models, multirate, stability

LS = -1.0 + 1.0j  # lambda_s of SP eq 62
FAST = ["particle.x", "particle.y"]  # SP eq 65: z = (r2, r2'), the velocities follow


def system(alpha, beta):
    """A of SP eq 50 for alpha = lambda_f / lambda_s, beta = delta / lambda_f = mu / lambda_s."""
    lf = alpha * LS
    return np.array([[LS, beta * LS], [beta * lf, lf]])


def one_step(A, y0, h):
    r = mbint.solve_ivp(lambda t, y: A @ y, (0.0, h), np.asarray(y0, complex),
                        method="singular_perturbation", fast=[1], h=h, jac=lambda t, y: A)
    assert r.success and r.nsteps == 1
    return r.y[:, -1]


def rk4_matrix(Z):
    return np.eye(2) + Z + Z @ Z / 2 + Z @ Z @ Z / 6 + Z @ Z @ Z @ Z / 24


def printed_M12(xi, alpha, beta):
    """M12 as printed in SP eq 55."""
    e = np.exp(alpha * xi)
    return beta * (e - 1) - beta ** 3 / alpha ** 2 * (alpha * xi - e + 1)


# ---------------------------------------------------------------- the step on eq 50

@pytest.mark.parametrize("alpha,beta,h", [(10, 0.3, 0.1), (100, 0.5, 0.05), (5, 0.0, 0.2),
                                          (3, 0.8, 0.3), (1000, 0.1, 0.02), (50, 0.9, 1.0)])
def test_step_matrix_is_the_implemented_step(alpha, beta, h):
    """M of eqs 55-57 (stability.sp_step_matrix) against one step of the C kernel from
    (1, 0) and (0, 1), to rounding.  The printed M12 (beta (e^{alpha xi} - 1) ...) does
    not match the step; beta / alpha in its first term does (derivation in
    sp_step_matrix's docstring): the printed value is a misprint."""
    A = system(alpha, beta)
    M_step = np.column_stack([one_step(A, e, h) for e in np.eye(2)])
    xi = h * LS
    M = stability.sp_step_matrix(xi, alpha, beta)
    assert np.allclose(M, M_step, rtol=1e-11, atol=1e-13)
    if beta != 0:
        assert abs(printed_M12(xi, alpha, beta) - M_step[0, 1]) > 1e-3 * abs(M_step[0, 1])


def test_eq47_block_matrix_column_order():
    """Eq 47 prints D = [[A, B, C], [0, 0, 1], [0, 0, 0]] with B the constant and C the
    slope of y' = A y + B + C t; by Van Loan's theorem the top-right block of e^{hD}
    is then int_0^h e^{A(h-s)} (C + B s) ds, the slope and constant swapped.  Built in
    NumPy on eq 50 from x_n = 1, z_n = 0 (with x_{n+1} of eq 55), z_{n+1} of eq 56
    comes out with the constant in the last column, not as printed."""
    alpha, beta, h = 10.0, 0.5, 0.2
    lf, xi = alpha * LS, h * LS
    M = stability.sp_step_matrix(xi, alpha, beta)
    x0, z0, x1 = 1.0, 0.0, M[0, 0]
    sigma = z0 + beta * x0                       # g_z^-1 g = (delta x + lambda_f z) / lambda_f
    A = lf + beta * beta * LS                    # g_z + g_z^-1 g_x f_z
    fH = lambda x: (1 - beta ** 2) * LS * x      # f(x, H(x)), H = -beta x
    const = A * sigma + beta * fH(x0)            # B of eq 47
    slope = beta * (fH(x1) - fH(x0)) / h         # C of eq 47

    def phi(col1, col2):
        D = np.array([[A, col1, col2], [0, 0, 1], [0, 0, 0]], dtype=complex)
        return expm(h * D)[0, 2]

    z_right = -beta * x1 + sigma + phi(slope, const)
    z_printed = -beta * x1 + sigma + phi(const, slope)
    assert abs(z_right - M[1, 0]) < 1e-12
    assert abs(z_printed - M[1, 0]) > 1e-2


def test_decoupled_step_is_rk4_and_exact():
    """beta = 0: x by RK4 (R(xi)), z exactly (e^{lambda_f h}) however stiff."""
    for alpha, h in [(10.0, 0.1), (1e4, 0.5)]:
        A = system(alpha, 0.0)
        x1, z1 = one_step(A, [1.0, 1.0], h)
        xi = h * LS
        assert abs(x1 - (1 + xi + xi ** 2 / 2 + xi ** 3 / 6 + xi ** 4 / 24)) < 1e-14
        assert abs(z1 - np.exp(alpha * xi)) < 1e-13


# ---------------------------------------------------------------- stability (Figs 2, 3)

def test_beta_zero_region_is_rk4_and_left_half_plane():
    """Eq 59: with beta = 0 the region is RK4's intersected with Re xi <= 0 (alpha > 0)."""
    X, Y, rho = stability.sp_region(100.0, 0.0, re=(-4, 1), im=(0, 4), n=201)
    Z = X + 1j * Y
    rk4 = np.abs(stability.amplification("rk4", Z)) <= 1
    # points within 1e-9 of the boundary of either set are left out
    sp = rho <= 1
    near = (np.abs(np.abs(stability.amplification("rk4", Z)) - 1) < 1e-9) | (np.abs(X) < 1e-12)
    assert np.array_equal(sp[~near], (rk4 & (X <= 0))[~near])
    for alpha in (10.0, 1000.0):
        assert stability.sp_real_axis_limit(alpha, 0.0) == pytest.approx(2.7853, abs=2e-4)


def test_regions_of_figs_2_and_3():
    """Figs 2-3: the region hardly depends on alpha (the fast eigenvalue), and grows with
    beta on the negative real axis (the slow RK4 sees (1 - beta^2) xi); nothing of the
    right half plane is stable."""
    lim = {a: stability.sp_real_axis_limit(a, 0.1) for a in (10.0, 100.0, 1000.0)}
    assert max(lim.values()) - min(lim.values()) < 0.01
    lim_b = [stability.sp_real_axis_limit(100.0, b) for b in (0.0, 0.1, 0.3, 0.5)]
    assert np.all(np.diff(lim_b) > 0)
    assert lim_b[0] == pytest.approx(2.785, abs=1e-3)
    assert lim_b[-1] == pytest.approx(3.708, abs=1e-3)
    for a, b in [(100.0, 0.3), (1000.0, 0.5)]:
        X, Y, rho = stability.sp_region(a, b, re=(0.01, 1.0), im=(0.0, 4.0), n=41)
        assert np.all(rho > 1)
    # far out on the imaginary axis of the fast eigenvalue: RK4 is unstable, SP is not
    xi = 0.005 * 1j  # h lambda_s with lambda_f = alpha lambda_s = 5e5 i for alpha = 1e8
    assert stability.sp_spectral_radius(xi, 1e8 * (1 + 1e-9j), 0.0) <= 1


# ---------------------------------------------------------------- accuracy (Figs 4, 5)

def local_errors(alpha, beta, hs):
    A = system(alpha, beta)
    out = []
    for h in hs:
        y = one_step(A, [1.0, 1.0], h)
        out.append(np.abs(y - expm(A * h) @ [1.0, 1.0]))
    return np.array(out)


def slope(hs, e):
    return np.polyfit(np.log(hs), np.log(e), 1)[0]


def test_local_error_order():
    """Figs 4-5 (lambda_s = -1 + i, x(0) = z(0) = 1): the local error is O(h^2) while
    h |lambda_f| << 1 (a first-order method) and O(h) for h |lambda_f| >> 1, the slope
    1 the paper reports."""
    hs = np.logspace(-4, -3, 4)
    e = local_errors(10.0, 0.1, hs)
    assert slope(hs, e[:, 0]) == pytest.approx(2.0, abs=0.05)
    assert slope(hs, e[:, 1]) == pytest.approx(2.0, abs=0.05)
    hs = np.logspace(-2.5, -1.5, 4)  # h |lambda_f| = 4.5 ... 45
    e = local_errors(1000.0, 0.1, hs)
    assert slope(hs, e[:, 0]) == pytest.approx(1.0, abs=0.1)
    assert slope(hs, e[:, 1]) == pytest.approx(1.0, abs=0.1)


def test_local_error_against_rk4_as_alpha_grows():
    """At h = 1e-3 RK4's local error grows like alpha^4 (1e-13 at alpha = 10, 4e-6 at
    alpha = 1000); the scheme's stays about 1e-7."""
    h = 1e-3
    sp, rk = [], []
    for alpha in (10.0, 100.0, 1000.0):
        A = system(alpha, 0.1)
        sp.append(local_errors(alpha, 0.1, [h])[0, 0])
        rk.append(abs((rk4_matrix(A * h) @ [1, 1] - expm(A * h) @ [1, 1])[0]))
    assert max(sp) / min(sp) < 3 and 5e-8 < min(sp) and max(sp) < 2e-7
    assert rk[2] / rk[0] > 1e6 and rk[2] > 10 * sp[2]


def test_global_order_one():
    A = system(100.0, 0.3)
    y0 = np.array([1.0, 1.0], complex)
    ye = expm(A) @ y0
    hs = np.array([0.05, 0.025, 0.0125, 0.00625])
    err = [np.abs(mbint.solve_ivp(lambda t, y: A @ y, (0, 1), y0, method="singular_perturbation",
                                  fast=[1], h=h).y[:, -1] - ye).max() for h in hs]
    assert slope(hs, err) == pytest.approx(1.0, abs=0.3)


# ---------------------------------------------------------------- error estimate, rtol/atol

@pytest.mark.parametrize("alpha,beta", [(10.0, 0.1), (100.0, 0.3), (1000.0, 0.5)])
def test_error_estimate_tracks_the_local_error(alpha, beta):
    """One adaptive step (atol = 1, rtol ~ 0: err_steps is the RMS of the estimate)
    against the exact local error: within a factor 1.5 for h |lambda_f| from 0.01 to
    140."""
    A = system(alpha, beta)
    y0 = np.array([1.0, 1.0], complex)
    for h in (1e-3, 1e-2, 1e-1):
        r = mbint.solve_ivp(lambda t, y: A @ y, (0, h), y0, method="singular_perturbation",
                            fast=[1], first_step=h, rtol=1e-13, atol=1.0, jac=lambda t, y: A)
        assert r.nsteps == 1
        d = r.y[:, -1] - expm(A * h) @ y0
        true = np.sqrt(np.mean(np.concatenate([d.real, d.imag]) ** 2))
        assert 1 / 1.5 < r.err_steps[0] / true < 1.5, (h, r.err_steps[0], true)


@pytest.fixture(scope="module")
def pendulum():
    return models.pendulum_particle()


@pytest.fixture(scope="module")
def reference(pendulum):
    return mbint.simulate(pendulum, (0, 5), method="dop853", rtol=1e-12, atol=1e-14,
                          dense_output=True)


def test_error_estimate_on_the_pendulum(pendulum, reference):
    """The nonlinear case: one step from the reference state; the estimate (dominated by
    the LLM estimate of the particle's linearization) within 20 % of the true local
    error."""
    nq = pendulum.nq
    for t in (0.3, 1.0):
        y = reference.sol(t)
        for h in (1e-3, 5e-3, 2e-2):
            kw = dict(q0=y[:nq], qd0=y[nq:], consistent="ignore")
            tr = mbint.simulate(pendulum, (t, t + h), method="singular_perturbation",
                                fast=FAST, first_step=h, rtol=1e-13, atol=1.0, **kw)
            ex = mbint.simulate(pendulum, (t, t + h), method="dop853", rtol=1e-13,
                                atol=1e-15, **kw)
            d = np.concatenate([tr.q[:, -1] - ex.q[:, -1], tr.qd[:, -1] - ex.qd[:, -1]])
            assert tr.stats["nsteps"] == 1
            assert tr.err_steps[0] / np.sqrt(np.mean(d ** 2)) == pytest.approx(1.0, abs=0.2)


def test_tolerances_work():
    """Adaptive runs on eq 50: the error falls with the tolerance, and stays within a
    small multiple of it (a first-order method sums its local errors)."""
    A = system(100.0, 0.3)
    y0 = np.array([1.0, 1.0], complex)
    ye = expm(A) @ y0
    errs, steps = [], []
    for tol in (1e-3, 1e-5, 1e-7):
        r = mbint.solve_ivp(lambda t, y: A @ y, (0, 1), y0, method="singular_perturbation",
                            fast=[1], rtol=tol, atol=1e-3 * tol)
        assert r.success
        errs.append(np.abs(r.y[:, -1] - ye).max())
        steps.append(r.nsteps)
    assert errs[0] > errs[1] > errs[2] and errs[2] < 30 * 1e-7
    assert steps[0] < steps[1] < steps[2]


# ---------------------------------------------------------------- time-dependent g

def test_time_dependent_fast_part():
    """z' = -500 (z - sin t) + x, x' = -x + 0.1 z: g_t enters H and gamma (not in the
    paper); the scheme converges (at least at order 1: here the coupling error, the
    first-order term, is small and the observed order is 2)."""
    def f(t, y):
        return np.array([-y[0] + 0.1 * y[1], -500.0 * (y[1] - np.sin(t)) + y[0]])
    ref = mbint.solve_ivp(f, (0, 2), [1.0, 0.0], method="radau_iia", rtol=1e-12, atol=1e-14)
    err = [np.abs(mbint.solve_ivp(f, (0, 2), [1.0, 0.0], method="singular_perturbation",
                                  fast=[1], h=h).y[:, -1] - ref.y[:, -1]).max()
           for h in (0.02, 0.01, 0.005)]
    assert err[0] < 2e-4
    assert slope(np.array([0.02, 0.01, 0.005]), err) > 0.9


# ---------------------------------------------------------------- the driver's services

def test_dense_output_t_eval_and_events(pendulum, reference):
    """Dense record: y_new at the step ends, the exact fast solution inside a step of the
    decoupled linear system; on the pendulum t_eval and the instant theta = 0 agree
    with the reference (the first zero of theta at ~1.1 s)."""
    A = system(1e3, 0.0)
    r = mbint.solve_ivp(lambda t, y: A @ y, (0, 0.5), np.array([1.0, 1.0], complex),
                        method="singular_perturbation", fast=[1], h=0.1, dense_output=True)
    assert np.array_equal(r.sol(r.t), r.y)
    tt = np.linspace(0.0, 0.5, 37)
    assert np.allclose(r.sol(tt)[1], np.exp(1e3 * LS * tt), atol=1e-13)

    def theta_zero(t, q, qd):
        return q[2]
    te = np.linspace(0, 5, 11)
    tr = mbint.simulate(pendulum, (0, 5), method="singular_perturbation", h=0.005, t_eval=te,
                        events=theta_zero, dense_output=True, fast=FAST)
    assert tr.success and np.array_equal(tr.t, te)
    assert np.abs(tr.q[2] - reference.sol(te)[2]).max() < 1e-6
    ref_ev = mbint.simulate(pendulum, (0, 5), method="dop853", rtol=1e-12, atol=1e-14,
                            events=theta_zero)
    assert len(tr.t_events[0]) == len(ref_ev.t_events[0]) >= 2
    assert np.abs(tr.t_events[0] - ref_ev.t_events[0]).max() < 1e-6
    assert np.abs(tr.sol(2.3)[2] - reference.sol(2.3)[2]) < 1e-6


# ---------------------------------------------------------------- the pendulum (Figs 7, 8)

def test_pendulum_parameters_are_the_papers(pendulum):
    b = {x.name: x for x in pendulum.bodies}
    assert (b["bar"].mass, b["bar"].inertia, b["particle"].mass) == (100.0, 100.0, 1e-5)
    spring = [f for f in pendulum.force_elements if f.name == "spring"][0]
    assert spring.params["k"] == 5.0


def test_pendulum_rk4_blows_up_singular_perturbation_stable(pendulum, reference):
    """Fig 7: at h = 0.005 RK4 is unstable (h sqrt(k/m2) = 3.5 > 2.83), the scheme stays
    stable: eq 68's energy varies by < 1e-4 J over 5 s, theta within 1e-6 rad of the
    reference."""
    rk = mbint.simulate(pendulum, (0, 5), method="rk4", h=0.005)
    E = pendulum.reference_energy(rk.q, rk.qd)
    assert not rk.success or not np.all(np.abs(E - E[0]) < 1.0)
    sp = mbint.simulate(pendulum, (0, 5), method="singular_perturbation", h=0.005,
                        fast="particle.x particle.y".split())
    assert sp.success and sp.stats["nsteps"] == 1000
    E = pendulum.reference_energy(sp.q, sp.qd)
    assert np.abs(E - E[0]).max() < 1e-4
    assert np.abs(sp.q[2] - reference.sol(sp.t)[2]).max() < 1e-6


def test_pendulum_constraints_in_the_slow_part(pendulum):
    """The pin is a constraint on the bar (slow): with projection its violation stays at
    the projection tolerance; without, the index-1 drift stays small."""
    for project in (False, True):
        tr = mbint.simulate(pendulum, (0, 5), method="singular_perturbation", h=0.01,
                            project=project, fast=FAST)
        assert tr.success
        assert np.abs(pendulum.phi(tr.t, tr.q)).max() < (1e-10 if project else 1e-6)


# ---------------------------------------------------------------- the split

def test_proposal_pendulum_is_the_papers_split(pendulum):
    """Eq 65: z = (r2, r2'); the proposal finds it from the Jacobian at t0, and
    fast='auto' runs with the same split (the kernel's C proposal)."""
    p = multirate.propose_split(pendulum)
    assert p.names == ("particle.x", "particle.y", "d/dt particle.x", "d/dt particle.y")
    assert p.fast.tolist() == [3, 4, 9, 10] and p.coordinates.tolist() == [3, 4]
    assert p.threshold == pytest.approx(np.sqrt(5 / 1e-5), rel=1e-6) and p.ratio >= 999
    assert np.all(np.abs(p.participation[p.fast] - 1) < 1e-6)
    assert np.all(np.abs(p.participation[p.slow]) < 1e-6)
    a = mbint.simulate(pendulum, (0, 1), method="singular_perturbation", h=0.01, fast="auto")
    b = mbint.simulate(pendulum, (0, 1), method="singular_perturbation", h=0.01,
                       fast=p.coordinates)
    assert np.array_equal(a.q, b.q)


def test_proposal_participation_is_the_spectral_projector():
    """J = V D V^-1: P_ii = sum over the fast modes of V_ij (V^-1)_ji, to rounding; no
    split without a gap of min_ratio."""
    rng = np.random.default_rng(3)
    V = np.eye(5) + 0.3 * rng.standard_normal((5, 5))
    d = np.array([-2000.0, -1500.0, -1.0, -0.3, 0.0])
    J = V @ np.diag(d) @ np.linalg.inv(V)
    p = multirate.propose_split(J)
    W = np.linalg.inv(V)
    ref = (V[:, :2] * W[:2, :].T).sum(1)
    assert np.allclose(p.participation, ref, atol=1e-9)
    assert p.fast.tolist() == np.nonzero(ref > 0.5)[0].tolist()
    # moduli 2000, 1500 | 1, 0.3, 0; the floor is 1e-3 * 2000 = 2: the gap is 1500 / 2
    assert p.threshold == pytest.approx(1500.0) and p.ratio == pytest.approx(750.0)
    assert multirate.propose_split(np.diag([-1.0, -2.0, -3.0])).fast.size == 0
    assert multirate.propose_split(np.zeros((3, 3))).fast.size == 0
    # from a callable (forward differences) and from its Jacobian: the same split
    A = system(100.0, 0.3).real
    q1 = multirate.propose_split(lambda t, y: A @ y, y0=[1.0, 1.0])
    q2 = multirate.propose_split(lambda t, y: A @ y, y0=[1.0, 1.0], jac=A)
    assert q1.fast.tolist() == q2.fast.tolist() == [1]


def test_no_fast_variable_runs_as_rk4():
    """Without fast=, or with fast='auto' and no gap in the spectrum, no variable is
    fast: the scheme is RK4 with its embedded error estimate (the degenerate case of
    eq 45)."""
    def f(t, y):
        return np.array([y[1], -y[0]])
    b = mbint.solve_ivp(f, (0, 1), [1.0, 0.0], method="rk4", h=0.1)
    for kw in ({}, {"fast": "auto"}):
        a = mbint.solve_ivp(f, (0, 1), [1.0, 0.0], method="singular_perturbation", h=0.1, **kw)
        assert np.allclose(a.y, b.y, rtol=0, atol=1e-15)
        c = mbint.solve_ivp(f, (0, 10), [1.0, 0.0], method="singular_perturbation", rtol=1e-8,
                            atol=1e-10, **kw)
        assert c.success and abs(c.y[0, -1] - np.cos(10)) < 1e-6


# ---------------------------------------------------------------- bad input

def lin(t, y):
    return np.array([-y[0] + y[1], -100.0 * y[1]])


@pytest.mark.parametrize("fast,msg", [([], "no fast variable"), ([0, 1], "at least one variable"),
                                      ([2], "out of range"), ([-1], "out of range"),
                                      ([1, 1], "given twice"), ([True], "integer index"),
                                      ("x", "'auto', an index")])
def test_bad_fast_solve_ivp(fast, msg):
    with pytest.raises(ValueError, match=msg):
        mbint.solve_ivp(lin, (0, 1), [1.0, 1.0], method="singular_perturbation", fast=fast)
    if fast not in ("x",):
        with pytest.raises(ValueError, match=msg.split()[0]):  # the complex path checks too
            mbint.solve_ivp(lin, (0, 1), [1.0 + 0j, 1.0], method="singular_perturbation",
                            fast=fast)


@pytest.mark.parametrize("fast,msg", [([], "no fast variable"),
                                      (list(range(6)), "at least one must"),
                                      ([6], "out of range"), (["particle", "particle.x"], "twice"),
                                      ("ground", "ground"), ("bar.z", "neither a body"),
                                      (1.5, "a body")])
def test_bad_fast_simulate(pendulum, fast, msg):
    with pytest.raises(ValueError, match=msg):
        mbint.simulate(pendulum, (0, 1), method="singular_perturbation", h=0.01, fast=fast)


def test_auto_split_on_the_test_system():
    """fast='auto' on eq 50 (complex, integrated as real pairs) proposes z: the same
    steps as fast=[1]."""
    A = system(100.0, 0.3)
    kw = dict(method="singular_perturbation", h=0.01)
    a = mbint.solve_ivp(lambda t, y: A @ y, (0, 0.1), np.array([1.0, 1.0], complex),
                        fast="auto", **kw)
    b = mbint.solve_ivp(lambda t, y: A @ y, (0, 0.1), np.array([1.0, 1.0], complex),
                        fast=[1], **kw)
    assert np.array_equal(a.y, b.y)


def test_fast_is_only_an_option_of_singular_perturbation():
    info = {m.name: m for m in mbint.methods()}["singular_perturbation"]
    assert info.options == ("fast",) and info.order == 1 and info.adaptive == "embedded"
    with pytest.raises(ValueError, match="fast"):
        mbint.solve_ivp(lin, (0, 1), [1.0, 1.0], method="dopri5", fast=[1])


def sing(t, y):
    return np.array([-y[0] + y[1], -100.0 * (1.0 - t) * y[1] + y[0]])  # g_z = 0 at t = 1


def test_singular_gz_fixed_step_fails_with_the_trajectory_so_far():
    r = mbint.solve_ivp(sing, (0, 2), [1.0, 0.5], method="singular_perturbation", fast=[1],
                        h=0.125)
    assert r.status == -1 and not r.success
    assert "singular at t = 1" in r.message and "g_z" in r.message
    assert r.t[-1] == 1.0 and np.allclose(r.t, np.arange(9) * 0.125)


def test_singular_gz_adaptive_is_a_recoverable_failure():
    """A singular g_z is recoverable (the driver retries with smaller steps); at the
    start of a step no smaller step changes the linearization point, so the run ends
    there, with the message and without evaluating the Jacobian again."""
    r = mbint.solve_ivp(sing, (1, 2), [1.0, 0.5], method="singular_perturbation", fast=[1])
    assert r.status == -1 and "singular at t = 1" in r.message and r.nfail > 1
    assert r.njev == 1 and r.t.tolist() == [1.0]


def test_a_body_brings_the_coordinates_something_acts_on(pendulum):
    """fast='particle' (a body's name, as documented) brought the particle's angle, on
    which no force or constraint acts: g_z was singular and the run stopped at t = 0.
    A body now brings the coordinates whose acceleration depends on the state (a
    nonzero row of the Jacobian at t0): the paper's z = (r2, r2'), bit for bit."""
    assert multirate.fast_state_indices(pendulum, "particle").tolist() == [3, 4, 9, 10]
    by_body = mbint.simulate(pendulum, (0, 1), method="singular_perturbation", h=0.01,
                             fast=["particle"])
    by_name = mbint.simulate(pendulum, (0, 1), method="singular_perturbation", h=0.01,
                             fast=FAST)
    assert by_body.success and np.array_equal(by_body.q, by_name.q)
    assert by_body.stats == by_name.stats
    # naming the free angle itself keeps it fast: the run then says g_z is singular
    tr = mbint.simulate(pendulum, (0, 1), method="singular_perturbation", h=0.01,
                        fast=FAST + ["particle.theta"])
    assert tr.status == -1 and "singular at t = 0" in tr.message and tr.t.tolist() == [0.0]


def test_a_body_nothing_acts_on_is_refused():
    m = mbint.PlanarModel(name="free")
    a = m.add_body(1.0, 1.0, name="a")
    m.add_body(1.0, 1.0, name="drifter", qd=(1.0, 0.0, 0.5))
    m.add_spring_damper(m.ground, (0.0, 0.0), a, (0.0, 0.0), k=10.0, length0=0.0)
    with pytest.raises(ValueError, match="fast: body 'drifter': no force or constraint acts"):
        mbint.simulate(m, (0, 1), method="singular_perturbation", h=0.01, fast="drifter")
