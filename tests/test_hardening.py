"""Regression tests of the hardening issue: inputs that used to give silent wrong
answers, an overflow, a default step limit, and Ctrl-C during long C runs.

Each test failed on the code before its fix (the message of each says what the old
code did).  The driver-level guards are also tested in C, under AddressSanitizer
(tests/c/test_core.c: test_guards, test_work_extremes)."""
import math
import os
import signal
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

import mbint
from mbint import problems


def decay(t, y):
    return -y


# ---- the minimum step follows |t| -------------------------------------------------

def robertson(t, y):
    return [-0.04 * y[0] + 1e4 * y[1] * y[2],
            0.04 * y[0] - 1e4 * y[1] * y[2] - 3e7 * y[1] ** 2,
            3e7 * y[1] ** 2]


# The Robertson problem at t = 1e11, from the Test Set for IVP Solvers (Mazzia, Magherini
# and Iavernaro, University of Bari, problem ROBER), computed there with extended precision.
ROBER_1E11 = np.array([0.2083340149701255e-07, 0.8333360770334713e-13, 0.9999999791665050])


@pytest.mark.parametrize("method", ["radau_iia", "bdf", "ros4", "rodas4"])
def test_long_horizon_from_zero(method):
    """t0 = 0, tf = 1e11: the minimum step used to be 10 eps |tf| = 2.2e-4, so every
    implicit method stopped at t = 0 ("Required step size is less than spacing
    between numbers (h = 2.5e-05 at t = 0)")."""
    atol = np.array([1e-10, 1e-16, 1e-10])
    r = mbint.solve_ivp(robertson, (0, 1e11), [1.0, 0.0, 0.0], method=method, rtol=1e-6,
                        atol=atol)
    assert r.success, r.message
    assert r.t[-1] == 1e11
    # global error within a modest multiple of the local tolerance (largest: ros4, 19x on
    # y1 and 78x on y2 ~ 8e-14, whose atol is 1e-16)
    err = np.abs(r.y[:, -1] - ROBER_1E11) / (atol + 1e-6 * ROBER_1E11)
    assert np.all(err < 100), err
    assert abs(r.y[:, -1].sum() - 1.0) < 1e-9   # the exact invariant y1 + y2 + y3 = 1


# ---- fixed steps that cannot be taken -------------------------------------------

def test_fixed_step_count_beyond_max_steps_is_refused():
    """h = 1e-20 over [0, 1]: ceil(span / h) overflowed a long in the driver and rk4
    returned success after one step (y = 0.375)."""
    with pytest.raises(ValueError, match="max_steps"):
        mbint.solve_ivp(decay, (0, 1), [1.0], method="rk4", h=1e-20)
    with pytest.raises(ValueError, match="cannot advance"):
        mbint.solve_ivp(decay, (1e20, 1e20 + 1e6), [1.0], method="rk4", h=1.0,
                        max_steps=10 ** 7)
    # a larger max_steps lets the same kind of run go on
    r = mbint.solve_ivp(decay, (0, 1), [1.0], method="euler", h=1e-6, max_steps=2 * 10 ** 6)
    assert r.success and abs(r.y[0, -1] - math.exp(-1)) < 1e-6


# ---- the binding's fast path and shapes ------------------------------------------

def test_big_endian_return_is_converted():
    """A '>f8' array from fun was copied byte for byte: y never changed ("success")."""
    r = mbint.solve_ivp(lambda t, y: (-y).astype(">f8"), (0, 1), [1.0], rtol=1e-8, atol=1e-10)
    assert r.success and abs(r.y[0, -1] - math.exp(-1)) < 1e-7


def test_misaligned_and_strided_returns_are_converted():
    buf = np.zeros(3 * 8 + 1, dtype=np.uint8)

    def f(t, y):
        a = np.frombuffer(buf.data, dtype=np.float64, count=3, offset=1)  # misaligned
        out = np.empty(6)
        out[::2] = -y
        return out[::2] if t < 0.5 else a * 0 - y   # strided, then misaligned arithmetic

    r = mbint.solve_ivp(f, (0, 1), [1.0, 2.0, 3.0], rtol=1e-8, atol=1e-10)
    assert r.success and np.allclose(r.y[:, -1], np.array([1, 2, 3]) * math.exp(-1), rtol=1e-7)


def test_flat_jacobian_is_refused():
    """A (n*n,) Jacobian was accepted and only its first entry used (rodas4: 10,589
    Jacobian evaluations on Van der Pol)."""
    def jac(t, y):
        return np.array(problems.van_der_pol_jac(t, y)).reshape(-1)

    with pytest.raises(ValueError, match=r"shape \(2, 2\)"):
        mbint.solve_ivp(problems.van_der_pol, (0, 1), problems.VDP_Y0, method="rodas4",
                        jac=jac)
    # the (n, n) matrix and a scipy.sparse matrix are accepted
    import scipy.sparse
    r1 = mbint.solve_ivp(problems.van_der_pol, (0, 1), problems.VDP_Y0, method="rodas4",
                         jac=problems.van_der_pol_jac, rtol=1e-6)
    r2 = mbint.solve_ivp(problems.van_der_pol, (0, 1), problems.VDP_Y0, method="rodas4",
                         jac=lambda t, y: scipy.sparse.csc_matrix(problems.van_der_pol_jac(t, y)),
                         rtol=1e-6)
    assert r1.success and r2.success and r1.nsteps == r2.nsteps
    assert np.array_equal(r1.y, r2.y)


# ---- argument validation --------------------------------------------------------

def test_nan_in_t_eval_is_refused():
    """NaN in t_eval gave NaN in y with success."""
    with pytest.raises(ValueError, match="t_eval must be finite"):
        mbint.solve_ivp(decay, (0, 1), [1.0], t_eval=[0, np.nan, 1])


@pytest.mark.parametrize("kw, name", [
    (dict(mass=np.array([[1 + 1j]]), method="bdf"), "mass"),
    (dict(t_eval=np.array([0.5 + 1j])), "t_eval"),
])
def test_complex_arguments_are_refused(kw, name):
    """Complex mass / t_eval were truncated to their real part with a warning only."""
    with pytest.raises(ValueError, match=name):
        mbint.solve_ivp(decay, (0, 1), [1.0], **kw)


@pytest.mark.parametrize("kw, match", [
    (dict(method="ros4", atol=0, fac_min=1e9), "fac_min"),
    (dict(fac_min=1.0), "fac_min"),
    (dict(fac_max=0.5), "fac_max"),
    (dict(safety=1.5), "safety"),
    (dict(max_steps=10 ** 30), "max_steps"),
])
def test_controller_and_limit_arguments(kw, match):
    """fac_min = 1e9 with ros4 and atol = 0 rejected steps forever; max_steps = 10**30
    raised OverflowError."""
    with pytest.raises(ValueError, match=match):
        mbint.solve_ivp(decay, (0, 1), [1.0], **kw)


def test_huge_terminal_count():
    """terminal = 10**30 raised OverflowError."""
    def ev(t, y):
        return y[0] - 0.5
    ev.terminal = 10 ** 30
    with pytest.raises(ValueError, match="terminal"):
        mbint.solve_ivp(decay, (0, 1), [1.0], events=ev)


@pytest.mark.parametrize("method", ["dopri5", "radau_iia", "cvode_bdf"])
def test_nan_event_is_an_error(method):
    """An event that always returns NaN was silently never triggered (success)."""
    def ev(t, y):
        return np.nan
    r = mbint.solve_ivp(decay, (0, 1), [1.0], method=method, events=ev)
    assert r.status == -1 and "finite" in r.message, r.message


def test_nan_event_during_root_location_is_an_error():
    def ev(t, y):
        return y[0] - 0.5 if y[0] > 0.45 else np.nan   # NaN past the root
    r = mbint.solve_ivp(decay, (0, 2), [1.0], events=ev, max_step=0.5)
    assert r.status == -1 and "finite" in r.message, r.message


# ---- Ctrl-C ----------------------------------------------------------------------

CHILD = textwrap.dedent("""
    import sys, time
    import numpy as np
    import mbint
    from mbint import problems, models
    case = sys.argv[1]
    vdp, jac = problems.c_rhs("vdp1000"), problems.c_jac("vdp1000")
    kw = dict(rtol=1e-10, atol=1e-10, max_steps=10 ** 9)
    runs = {
        "radau_iia": lambda: mbint.solve_ivp(vdp, (0, 1e9), problems.VDP_Y0,
                                             method="radau_iia", jac=jac, **kw),
        "dopri5": lambda: mbint.solve_ivp(vdp, (0, 1e9), problems.VDP_Y0, method="dopri5", **kw),
        "cvode_bdf": lambda: mbint.solve_ivp(vdp, (0, 1e9), problems.VDP_Y0,
                                             method="cvode_bdf", jac=jac, **kw),
        "arkode_erk": lambda: mbint.solve_ivp(vdp, (0, 1e9), problems.VDP_Y0,
                                              method="arkode_erk", **kw),
        "ida": lambda: mbint.solve_ivp(vdp, (0, 1e9), problems.VDP_Y0, method="ida", **kw),
        "solve_dae": lambda: mbint.solve_dae(
            lambda t, y, yp: yp - np.array([y[1], 1000 * (1 - y[0] ** 2) * y[1] - y[0]]),
            (0, 1e9), problems.VDP_Y0, **kw),
        "python": lambda: mbint.solve_ivp(problems.van_der_pol, (0, 1e9), problems.VDP_Y0,
                                          method="rodas4", **kw),
        "simulate": lambda: mbint.simulate(models.double_pendulum_stiff_spring(), (0, 1e6),
                                           method="dopri5", rtol=1e-10, atol=1e-10,
                                           max_steps=10 ** 9),
    }
    print("START", flush=True)
    try:
        runs[case]()
        print("FINISHED", flush=True)
    except mbint.IntegrationInterrupted as exc:
        r = exc.result
        print("INTERRUPTED", repr(time.monotonic()), len(r.t), r.status, r.t[-1] > 0,
              flush=True)
""")

CTRL_C_CASES = ["radau_iia", "dopri5", "cvode_bdf", "arkode_erk", "ida", "solve_dae", "python",
                "simulate"]


def interrupt_child(case, tmp_path, delay=0.5):
    """Run CHILD's case, send SIGINT after `delay` s; returns (stdout, latency in s)."""
    script = tmp_path / "child.py"
    script.write_text(CHILD)
    p = subprocess.Popen([sys.executable, str(script), case], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    try:
        assert p.stdout.readline().strip() == "START"
        time.sleep(delay)
        t_sig = time.monotonic()
        p.send_signal(signal.SIGINT)
        out, err = p.communicate(timeout=60)   # a guard against a hang, not a measurement
    finally:
        if p.poll() is None:
            p.kill()
    words = out.split()
    latency = float(words[1]) - t_sig if words and words[0] == "INTERRUPTED" else math.inf
    return out, err, latency


@pytest.mark.parametrize("case", CTRL_C_CASES)
def test_ctrl_c_stops_a_run_and_keeps_the_partial_result(case, tmp_path):
    """Ctrl-C could not stop a run with a C right-hand side (radau_iia and cvode_bdf
    still running 15 s after SIGINT): no signal check anywhere in csrc/.  Each of these
    runs would take far longer than a minute; it must stop, raise
    IntegrationInterrupted (a KeyboardInterrupt) and hand over the trajectory so far.
    (The latency, measured by tests/benchmarks/test_bench_interrupt.py, is milliseconds.)"""
    out, err, latency = interrupt_child(case, tmp_path)
    words = out.split()
    assert words and words[0] == "INTERRUPTED", out + err
    n_points, status, advanced = int(words[2]), int(words[3]), words[4] == "True"
    assert n_points >= 2 and status == -1 and advanced, out


def test_interrupted_is_a_keyboard_interrupt():
    assert issubclass(mbint.IntegrationInterrupted, KeyboardInterrupt)


# ---- options of one method ---------------------------------------------------------

def test_unknown_keywords_name_the_method_and_its_options():
    """Keywords beyond the common ones are the chosen method's own options (SciPy's
    **options); a misspelt argument is refused, naming the method."""
    with pytest.raises(ValueError, match="method 'dopri5'.*takes no options"):
        mbint.solve_ivp(decay, (0, 1), [1.0], rtoll=1e-6)
    with pytest.raises(ValueError, match="method 'radau_iia'"):
        mbint.simulate(mbint.models.stiff_double_pendulum(), (0, 0.1), method="radau_iia",
                       nodes="chebyshev")
    assert all(isinstance(m.options, tuple) for m in mbint.methods())
