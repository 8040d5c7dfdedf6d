"""Forward sensitivities of solve_ivp (issue 26; csrc/core/sens.c, mbint/_ivp_sens.py).

Oracles: the closed form of a mass-spring-damper's dx/dk, dx/dc, dx/dx0; central
differences of two tight runs (a stiff problem); the convergence order of a fixed step;
the plain run (errcon=False takes exactly its steps)."""
import math
import warnings

import numpy as np
import pytest

import mbint
from mbint import _ivp_sens

K, C, X0, V0 = 4.0, 0.5, 1.0, 0.3
TE = np.linspace(0.3, 6.0, 20)


def msd(t, y, p):
    k, c = p
    return [y[1], -k * y[0] - c * y[1]]


def msd_dfdp(t, y, p):
    return np.array([[0.0, 0.0], [-y[0], -y[1]]])


def exact(t, k=K, c=C, x0=X0, v0=V0):
    """x and (dx/dk, dx/dc, dx/dx0) of x'' + c x' + k x = 0 (underdamped)."""
    al = 0.5 * c
    om = math.sqrt(k - al * al)
    E, Co, S = np.exp(-al * t), np.cos(om * t), np.sin(om * t)
    B = (v0 + al * x0) / om
    x = E * (x0 * Co + B * S)
    dom = E * (-x0 * t * S + B * t * Co - B / om * S)
    dal = -t * x + E * S * x0 / om
    return x, np.array([dom / (2 * om), 0.5 * dal - al / (2 * om) * dom, E * (Co + al / om * S)])


def errors(r):
    """relative errors of x and of each sensitivity of x (to their peaks)"""
    x, s = exact(r.t)
    ey = np.max(np.abs(r.y[0] - x)) / np.max(np.abs(x))
    es = np.max(np.abs(r.sens[0] - s), axis=1) / np.max(np.abs(s), axis=1)
    return ey, es


def run(method, rtol, **kw):
    p = np.array([K, C])
    kw.setdefault("sensitivities", {"initial": [0]})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # rtol floors
        r = mbint.solve_ivp(msd, (0.0, 6.0), [X0, V0], method=method, args=(p,), rtol=rtol,
                            atol=rtol * 1e-2, t_eval=TE, **kw)
    assert r.status == 0, r.message
    assert p.tolist() == [K, C]  # the perturbed parameters are restored exactly
    return r


# every method of the family that runs it to <= 1e-7 at a tight tolerance
TIGHT = ["dopri5", "dop853", "rk4", "rk23", "adams", "radau_iia", "bdf", "ros4", "rodas4",
         "rosenbrock_nystrom", "llm", "auto", "singular_perturbation", "lstable_block",
         "cvode_bdf", "cvode_adams", "arkode_erk", "arkode_dirk"]
# low order (or low accuracy): the sensitivities as accurate as the solution itself
LOOSE = ["euler", "heun", "nystrom_midpoint", "backward_euler", "trapezoid", "ros2", "w2",
         "w_nystrom", "astable_block"]
REFUSED = ["ida"]


def _info(name):
    return next(m for m in mbint.methods() if m.name == name)


FIXED = [m.name for m in mbint.methods() if m.adaptive == "none"]


def test_every_method_is_classified():
    names = {m.name for m in mbint.methods()}
    assert names == set(TIGHT) | set(LOOSE) | set(REFUSED) | set(FIXED)


@pytest.mark.parametrize("method", TIGHT)
def test_closed_form_tight(method):
    r = run(method, 1e-11)
    ey, es = errors(r)
    assert es.max() <= 1e-7, (ey, es)
    assert r.sens.shape == (2, 3, TE.size)
    # dv/dx0 too: d/dt of dx/dx0
    al, om = 0.5 * C, math.sqrt(K - 0.25 * C * C)
    dv = np.exp(-al * TE) * -(al * al / om + om) * np.sin(om * TE)
    assert np.max(np.abs(r.sens[1, 2] - dv)) <= 1e-7 * np.max(np.abs(dv))


@pytest.mark.parametrize("method", LOOSE)
def test_closed_form_loose(method):
    r = run(method, 1e-6)
    ey, es = errors(r)
    assert ey < 1e-2
    assert es.max() <= 10 * ey + 1e-9, (ey, es)


@pytest.mark.parametrize("method", FIXED)
def test_closed_form_fixed_step(method):
    r = run(method, 1e-6, h=6.0 / 1200)
    ey, es = errors(r)
    assert ey < 1e-3
    assert es.max() <= 10 * ey + 1e-9, (ey, es)


@pytest.mark.parametrize("method,order_min", [("rk4", 4), ("heun", 2), ("radau_iia2", 3),
                                              ("lobatto_iiic2", 2)])
def test_convergence_order_of_s(method, order_min):
    """s integrated with the method's own steps converges with the method's order"""
    order = _info(method).order
    assert order >= order_min
    es = []
    for N in (60, 120, 240):
        r = run(method, 1e-6, h=6.0 / N)
        es.append(errors(r)[1].max())
    slopes = np.log2(np.array(es[:-1]) / np.array(es[1:]))
    assert np.all(np.abs(slopes - order) < 0.35), (slopes, order)


def test_dfdp_analytic_same_result():
    calls = []

    def dfdp(t, y, p):
        calls.append(t)
        return msd_dfdp(t, y, p)
    for method in ("dopri5", "bdf", "rodas4"):
        r = run(method, 1e-11, sensitivities={"initial": [0], "dfdp": dfdp})
        assert errors(r)[1].max() <= 1e-7
    assert calls


@pytest.mark.parametrize("products", [False, True])
def test_jac_products_same_result(products):
    """J s_k by the user's jac (one call a right-hand side) or by the directional
    difference: both the closed form"""
    def jac(t, y, p):
        return [[0.0, 1.0], [-p[0], -p[1]]]
    r = run("bdf", 1e-11, jac=jac, sensitivities={"initial": [0], "jac_products": products})
    assert errors(r)[1].max() <= 1e-7
    assert (r.njev_base > r.nfev / 2) == products  # a jac a right-hand side


def test_forward_dq_converges():
    r = run("radau_iia", 1e-9, sensitivities={"initial": [0], "dq": "forward"})
    assert errors(r)[1].max() <= 1e-5


def test_errcon_off_takes_the_plain_steps():
    p = np.array([K, C])
    plain = mbint.solve_ivp(msd, (0, 6), [X0, V0], args=(p,), rtol=1e-8, atol=1e-10)
    off = mbint.solve_ivp(msd, (0, 6), [X0, V0], args=(p,), rtol=1e-8, atol=1e-10,
                          sensitivities={"initial": [0], "errcon": False})
    on = mbint.solve_ivp(msd, (0, 6), [X0, V0], args=(p,), rtol=1e-8, atol=1e-10,
                         sensitivities={"initial": [0]})
    np.testing.assert_array_equal(off.t, plain.t)
    np.testing.assert_array_equal(off.y, plain.y)
    assert on.nsteps >= off.nsteps
    for r in (off, on):
        x, s = exact(r.t)
        es = np.max(np.abs(r.sens[0] - s), axis=1) / np.max(np.abs(s), axis=1)
        assert es.max() < 1e-5


def test_dense_output_and_counts():
    r = run("radau_iia", 1e-10, dense_output=True)
    assert r.sol(1.0).shape == (2,)
    S = r.sens_sol(TE)
    assert S.shape == (2, 3, TE.size)
    np.testing.assert_allclose(S, r.sens, atol=1e-7)
    assert r.sens_sol(1.0).shape == (2, 3)
    assert r.nfev_base > r.nfev > 0


def test_sens_index_matches_c():
    """the layouts of sens.h (second-order for an even n: nq = n // 2) as C returns them"""
    p = np.array([K, C])
    out = mbint._core.solve("dopri5", msd, 0.0, 1.0, np.zeros(6), np.full(6, 1e-8), 1e-6,
                            args=(p,), nq=1, sens=(p, 2, np.array([0, 1]), np.ones(2), 0, 0,
                                                   None, np.full(2, 1e-8), 0))
    np.testing.assert_array_equal(out["sens_index"], _ivp_sens.sens_index(2, 1, 2))
    np.testing.assert_array_equal(_ivp_sens.sens_index(3, 0, 1), [[0, 1, 2], [3, 4, 5]])
    np.testing.assert_array_equal(_ivp_sens.sens_index(2, 1, 2), [[0, 3], [1, 4], [2, 5]])


def robertson(t, y, p):
    k1, k2, k3 = p
    return [-k1 * y[0] + k3 * y[1] * y[2], k1 * y[0] - k3 * y[1] * y[2] - k2 * y[1] ** 2,
            k2 * y[1] ** 2]


def robertson_jac(t, y, p):
    k1, k2, k3 = p
    return [[-k1, k3 * y[2], k3 * y[1]],
            [k1, -k3 * y[2] - 2 * k2 * y[1], -k3 * y[1]],
            [0.0, 2 * k2 * y[1], 0.0]]


def robertson_dfdp(t, y, p):
    return np.array([[-y[0], 0.0, y[1] * y[2]], [y[0], -y[1] ** 2, -y[1] * y[2]],
                     [0.0, y[1] ** 2, 0.0]])


def robertson_fd(P, y0, atol):
    """central differences (relative step 1e-4) of two tight runs: (3, 3) dy(40)/dk_j"""
    cols = []
    for j in range(3):
        d = 1e-4 * P[j]
        ys = []
        for sg in (1, -1):
            q = P.copy()
            q[j] += sg * d
            ys.append(mbint.solve_ivp(robertson, (0, 40), y0, method="radau_iia", args=(q,),
                                      rtol=1e-12, atol=atol * 1e-2, jac=robertson_jac,
                                      t_eval=[40.0]).y[:, -1])
        cols.append((ys[0] - ys[1]) / (2 * d))
    return np.array(cols).T


ROB_P = np.array([0.04, 3e7, 1e4])  # k1, k2 (y2^2), k3 (y2 y3)
ROB_ATOL = np.array([1e-12, 1e-16, 1e-12])


@pytest.fixture(scope="module")
def rob_fd():
    return robertson_fd(ROB_P, [1.0, 0.0, 0.0], ROB_ATOL)


@pytest.mark.parametrize("method", ["bdf", "radau_iia", "rodas4", "cvode_bdf"])
@pytest.mark.parametrize("how", ["dfdp", "dq"])
def test_stiff_against_central_differences(method, how, rob_fd):
    """Robertson's dy/dk_j (CVODES' cvsRoberts_FSA example) at t = 40 against central
    differences of two tight runs: with analytic df/dp at rtol 1e-9; with the difference
    quotient at rtol 1e-6 (a tighter run of a Newton method needs dfdp: its corrector's
    convergence test asks s for ~sqrt(rtol) rtol, below the quotient's round-off)"""
    p = ROB_P.copy()
    sens = {"dfdp": robertson_dfdp} if how == "dfdp" else True
    rtol, atol, tol = (1e-9, ROB_ATOL, 1e-7) if how == "dfdp" else (1e-6, ROB_ATOL * 1e4, 2e-5)
    r = mbint.solve_ivp(robertson, (0, 40), [1.0, 0.0, 0.0], method=method, args=(p,), rtol=rtol,
                        atol=atol, jac=robertson_jac, t_eval=[40.0], sensitivities=sens)
    assert r.status == 0, r.message
    for j in range(3):
        s, fd = r.sens[:, j, -1], rob_fd[:, j]
        assert np.max(np.abs(s - fd)) <= tol * np.max(np.abs(fd)), (j, s, fd)


def test_list_parameter_is_converted():
    p = [K, C]
    r = mbint.solve_ivp(msd, (0, 6), [X0, V0], args=(p,), rtol=1e-10, atol=1e-12, t_eval=TE,
                        sensitivities=[1])
    assert p == [K, C] and r.sens.shape == (2, 1, TE.size)
    assert np.max(np.abs(r.sens[0, 0] - exact(TE)[1][1])) <= 1e-7 * 5


def test_dy0dp_of_a_parameter():
    """y0 = (k / 4, v0): dy0/dk = (1/4, 0) enters s_k(0); dx/dk = dx/dk|x0 + dx/dx0 / 4"""
    p = np.array([K, C])
    r = mbint.solve_ivp(msd, (0, 6), [K / 4, V0], args=(p,), rtol=1e-11, atol=1e-13, t_eval=TE,
                        sensitivities={"params": [0], "dy0dp": [[0.25], [0.0]]})
    s = exact(TE)[1]
    ref = s[0] + 0.25 * s[2]
    assert np.max(np.abs(r.sens[0, 0] - ref)) <= 1e-7 * np.max(np.abs(ref))


@pytest.mark.parametrize("kw,exc,match", [
    (dict(method="ida"), ValueError, "ida"),
    (dict(events=lambda t, y, p: y[0]), ValueError, "events"),
    (dict(sensitivities={"params": [2]}), ValueError, "out of range"),
    (dict(sensitivities={"params": [0, 0]}), ValueError, "repeated"),
    (dict(sensitivities={"dq": "backward"}), ValueError, "dq"),
    (dict(sensitivities={"bogus": 1}), ValueError, "unknown keys"),
    (dict(sensitivities={"dy0dp": np.zeros((3, 2))}), ValueError, "dy0dp"),
    (dict(sensitivities={"pbar": [1.0, -1.0]}), ValueError, "pbar"),
    (dict(sensitivities="yes"), TypeError, "sensitivities"),
    (dict(sensitivities={"params": [0.5]}), TypeError, "integers"),
    (dict(sensitivities={"jac_products": True}), ValueError, "jac_products"),
])
def test_refusals(kw, exc, match):
    p = np.array([K, C])
    kw.setdefault("sensitivities", True)
    with pytest.raises(exc, match=match):
        mbint.solve_ivp(msd, (0, 1), [X0, V0], args=(p,), **kw)


def test_refusals_without_p_and_complex():
    with pytest.raises(ValueError, match="args"):
        mbint.solve_ivp(lambda t, y: -y, (0, 1), [1.0], sensitivities=True)
    with pytest.raises(ValueError, match="complex"):
        mbint.solve_ivp(lambda t, y: -y, (0, 1), [1.0 + 1j], sensitivities={"initial": [0]})
    # initial conditions alone need no p
    r = mbint.solve_ivp(lambda t, y: -y, (0, 1), [2.0], rtol=1e-10, atol=1e-12,
                        sensitivities={"initial": [0]})
    assert abs(r.sens[0, 0, -1] - math.exp(-1.0)) < 1e-8


@pytest.mark.parametrize("method", ["radau_iia", "bdf", "rodas4"])
def test_mass_matrix(method):
    """M y' = f with M = diag(1, 3), f = (v, 3 (-k x - c v)): the same sensitivities (the
    augmented mass is block-diagonal; the driver then uses the dense augmented Jacobian)"""
    def f(t, y, p):
        return [y[1], 3.0 * (-p[0] * y[0] - p[1] * y[1])]
    p = np.array([K, C])
    r = mbint.solve_ivp(f, (0, 6), [X0, V0], method=method, args=(p,), rtol=1e-11, atol=1e-13,
                        mass=np.diag([1.0, 3.0]), t_eval=TE, sensitivities={"initial": [0]})
    assert r.status == 0, r.message
    assert errors(r)[1].max() <= 1e-7
