"""Variable-order BDF/NDF (csrc/methods/bdf.c) on stiff problems.

References are computed once per module by SciPy's Radau at rtol 1e-12 (a different
family).  Checks: Van der Pol (mu = 1000), Robertson to t = 1e5 and HIRES at rtol
1e-3 ... 1e-8 end within 10x of the tolerance (the driver's weighted RMS norm of the
error at the final time); the work is compared with SciPy's BDF at the same
tolerances (printed with -s; asserted: no more than 2x SciPy's nfev); the order rises
above 2 (degree of the dense polynomials); dense output between steps; Robertson as
an index-1 DAE with M = diag(1, 1, 0); Jacobian and LU reuse; events (restart after
a terminal event) and backward integration.
"""
import numpy as np
import pytest
from scipy.integrate import solve_ivp as scipy_solve_ivp

import mbint
from mbint import problems as P
from mbint.methods import method_info

RTOLS = [1e-3, 1e-4, 1e-5, 1e-6, 1e-7, 1e-8]

# name: (Python f, Python jac, t_span, y0, atol(rtol))
PROBLEMS = {
    # t = 2 lies on a slow branch (after two fast transitions)
    "vdp1000": (P.van_der_pol, P.van_der_pol_jac, (0.0, 2.0), P.VDP_Y0,
                lambda rt: np.full(2, rt)),
    "robertson": (P.robertson, P.robertson_jac, (0.0, 1e5), P.ROBERTSON_Y0,
                  lambda rt: np.array([1e-2 * rt, 1e-10, 1e-2 * rt])),
    "hires": (P.hires, None, (0.0, P.HIRES_T), P.HIRES_Y0, lambda rt: np.full(8, 1e-4 * rt)),
}
REF_ATOL = {"vdp1000": 1e-12, "robertson": [1e-14, 1e-16, 1e-14], "hires": 1e-14}


@pytest.fixture(scope="module")
def refs():
    out = {}
    for name, (f, jac, span, y0, _) in PROBLEMS.items():
        r = scipy_solve_ivp(f, span, y0, method="Radau", rtol=1e-12, atol=REF_ATOL[name],
                            jac=jac, dense_output=name != "vdp1000")
        assert r.status == 0
        out[name] = r
    return out


def wrms(e, y, rtol, atol):
    return np.sqrt(np.mean((e / (atol + rtol * np.abs(y))) ** 2))


def degrees(sol):
    """degree of each segment's polynomial (highest nonzero coefficient row)"""
    C = sol.C
    nz = np.any(C != 0.0, axis=2)
    return np.array([np.flatnonzero(row).max() for row in nz])


@pytest.mark.parametrize("name", list(PROBLEMS))
def test_stiff_accuracy_and_work(name, refs):
    f, jac, span, y0, atolf = PROBLEMS[name]
    yref = refs[name].y[:, -1]
    rows = []
    for rtol in RTOLS:
        atol = atolf(rtol)
        r = mbint.solve_ivp(P.c_rhs(name), span, y0, method="bdf", rtol=rtol, atol=atol,
                            jac=P.c_jac(name))
        assert r.status == 0, r.message
        err = wrms(r.y[:, -1] - yref, yref, rtol, atol)
        s = scipy_solve_ivp(f, span, y0, method="BDF", rtol=rtol, atol=atol, jac=jac)
        err_s = wrms(s.y[:, -1] - yref, yref, rtol, atol)
        rows.append((rtol, err, r.nsteps, r.nfev, r.njev, r.nlu, err_s, len(s.t) - 1, s.nfev,
                     s.njev, s.nlu))
    print(f"\n{name}: rtol | mbint bdf err/tol steps nfev njev nlu | SciPy BDF err/tol steps "
          f"nfev njev nlu")
    for row in rows:
        print("  %.0e | %6.2f %5d %5d %4d %4d | %6.2f %5d %5d %4d %4d" % row)
    for rtol, err, _, nfev, *_rest in rows:
        assert err < 10.0, (name, rtol, err)
        nfev_s = _rest[-3]
        assert nfev <= 2 * nfev_s, (name, rtol, nfev, nfev_s)


def test_order_rises(refs):
    """At tight tolerance most steps run at order >= 3 (the degree of the dense
    polynomial is the order of the step)."""
    f, jac, span, y0, atolf = PROBLEMS["hires"]
    for rtol, min_top in ((1e-4, 3), (1e-8, 5)):
        r = mbint.solve_ivp(P.c_rhs("hires"), span, y0, method="bdf", rtol=rtol,
                            atol=atolf(rtol), jac=P.c_jac("hires"), dense_output=True)
        deg = degrees(r.sol)
        assert deg.max() >= min_top
        assert np.mean(deg >= 3) > 0.5, np.bincount(deg)
        # the run starts at order 1
        assert deg[0] == 1


def test_dense_output(refs):
    f, jac, span, y0, atolf = PROBLEMS["hires"]
    rtol = 1e-6
    atol = atolf(rtol)
    r = mbint.solve_ivp(P.c_rhs("hires"), span, y0, method="bdf", rtol=rtol, atol=atol,
                        jac=P.c_jac("hires"), dense_output=True)
    # the polynomial of each step passes through y_n and y_{n+1}
    np.testing.assert_allclose(r.sol(r.t), r.y, rtol=1e-12, atol=1e-15)
    # between steps as accurate as at the steps
    tm = 0.5 * (r.t[:-1] + r.t[1:])
    ym, yr = r.sol(tm), refs["hires"].sol(tm)
    e = np.sqrt(np.mean(((ym - yr) / (atol[:, None] + rtol * np.abs(yr))) ** 2, axis=0))
    assert e.max() < 10.0


def rob_dae(t, y):
    """Robertson with the third equation replaced by y1 + y2 + y3 - 1 = 0."""
    f = P.robertson(t, y)
    f[2] = y[0] + y[1] + y[2] - 1.0
    return f


def rob_dae_jac(t, y):
    J = P.robertson_jac(t, y)
    J[2] = 1.0
    return J


@pytest.mark.parametrize("with_jac", [True, False])
def test_robertson_index1_dae(refs, with_jac):
    M = np.diag([1.0, 1.0, 0.0])
    ref = refs["robertson"]
    for rtol in (1e-4, 1e-7):
        atol = np.array([1e-2 * rtol, 1e-10, 1e-2 * rtol])
        r = mbint.solve_ivp(rob_dae, (0.0, 1e5), P.ROBERTSON_Y0, method="bdf", rtol=rtol,
                            atol=atol, jac=rob_dae_jac if with_jac else None, mass=M)
        assert r.status == 0, r.message
        assert np.max(np.abs(r.y.sum(axis=0) - 1.0)) < 1e-12
        yr = ref.sol(r.t)
        e = np.sqrt(np.mean(((r.y - yr) / (atol[:, None] + rtol * np.abs(yr))) ** 2, axis=0))
        assert e.max() < 10.0, (rtol, e.max())


def test_jacobian_and_lu_reuse(refs):
    f, jac, span, y0, atolf = PROBLEMS["robertson"]
    r = mbint.solve_ivp(P.c_rhs("robertson"), span, y0, method="bdf", rtol=1e-6,
                        atol=atolf(1e-6), jac=P.c_jac("robertson"))
    assert r.njev < r.nsteps / 10
    assert r.nlu < r.nsteps / 2
    # finite-difference Jacobian: same solution, its f evaluations are counted
    r2 = mbint.solve_ivp(P.c_rhs("robertson"), span, y0, method="bdf", rtol=1e-6,
                         atol=atolf(1e-6))
    assert r2.status == 0
    assert r2.nfev >= r.nfev
    yref = refs["robertson"].y[:, -1]
    assert wrms(r2.y[:, -1] - yref, yref, 1e-6, atolf(1e-6)) < 10.0


def test_events_restart_and_backward():
    def half(t, y):
        return y[0] - 0.5
    half.terminal = True
    r = mbint.solve_ivp(lambda t, y: -y, (0.0, 5.0), [1.0], method="bdf", rtol=1e-9,
                        atol=1e-12, events=half)
    assert r.status == 1
    assert abs(r.t_events[0][0] - np.log(2.0)) < 1e-7
    # non-terminal events: the run goes on through them
    events = [lambda t, y, c=c: y[0] - c for c in np.exp(-np.array([1.0, 2.0, 3.0]))]
    r = mbint.solve_ivp(lambda t, y: -y, (0.0, 5.0), [1.0], method="bdf", rtol=1e-9,
                        atol=1e-12, events=events)
    assert r.status == 0
    for k, ev in enumerate(r.t_events):
        assert abs(ev[0] - (k + 1.0)) < 1e-6
    # backward in time
    r = mbint.solve_ivp(lambda t, y: -y, (2.0, 0.0), [np.exp(-2.0)], method="bdf", rtol=1e-8,
                        atol=1e-12)
    assert r.status == 0
    assert abs(r.y[0, -1] - 1.0) < 1e-6


def test_method_info():
    info = method_info("bdf")
    assert info.implicit and info.mass_matrix and info.needs_jacobian
    assert info.adaptive == "variable order" and info.order == 5
    with pytest.raises(ValueError):
        mbint.solve_ivp(lambda t, y: -y, (0, 1), [1.0], method="bdf", h=0.1)
