"""simulate(..., sensitivities=...) on the RN paper's stiff double pendulum against central
differences of tight-tolerance runs (issue 26: <= 1e-5 relative on every formulation that
takes sensitivities).

The oracle: radau_iia at rtol 1e-11 on models rebuilt with k2, c2 of the stiff spring
changed (rn.stiff_double_pendulum(k2=..., c2=...)) and with theta1(0) moved and projected
(consistent="project", as the sensitivity of q0[i] is defined), centred differences with
relative steps 1e-3 and 2e-3 combined by Richardson extrapolation (error O(h^4))."""
import numpy as np
import pytest

import mbint
from mbint.models import rn

T_END = 0.3
T = np.linspace(0.0, T_END, 7)
NAMES = ["rsda2.k", "rsda2.c", "q0[body1.theta]"]
K2, C2 = 3e5, 5e4


def _run(k2=K2, c2=C2, dth=0.0):
    m = rn.stiff_double_pendulum(k2=k2, c2=c2)
    q0 = m.q0.copy()
    q0[2] += dth
    tr = mbint.simulate(m, (0.0, T_END), "radau_iia", t_eval=T, rtol=1e-11, atol=1e-13, q0=q0,
                        consistent="project", proj_tol=1e-14)
    assert tr.success, tr.message
    return np.vstack([tr.q, tr.qd])


def _central(h):
    return np.stack([(_run(k2=K2 * (1 + h)) - _run(k2=K2 * (1 - h))) / (2 * h * K2),
                     (_run(c2=C2 * (1 + h)) - _run(c2=C2 * (1 - h))) / (2 * h * C2),
                     (_run(dth=h) - _run(dth=-h)) / (2 * h)], axis=1)


@pytest.fixture(scope="module")
def reference():
    d1, d2 = _central(1e-3), _central(2e-3)
    return (4 * d1 - d2) / 3, np.max(np.abs(d1 - d2), axis=(0, 2))


CASES = [("index1", "radau_iia"), ("index1", "bdf"), ("index1", "dop853"),
         ("index1", "rodas4"), ("index3", "bdf"), ("index3", "radau_iia"),
         ("index2", "bdf"), ("index2", "radau_iia"), ("index1_dae", "radau_iia"),
         ("ggl", "bdf"), ("ggl", "radau_iia"),
         ("joint", "radau_iia"), ("joint", "bdf"), ("joint", "dop853")]


@pytest.mark.parametrize("form,method", CASES)
def test_stiff_double_pendulum_against_differences(reference, form, method):
    ref, spread = reference
    tr = mbint.simulate(rn.stiff_double_pendulum(), (0.0, T_END), method, formulation=form,
                        t_eval=T, rtol=1e-8, atol=1e-6, sensitivities=NAMES)
    assert tr.success, tr.message
    S = np.concatenate([tr.sens_q, tr.sens_qd], axis=0)
    for k, name in enumerate(NAMES):
        scale = np.max(np.abs(ref[:, k]))
        assert spread[k] < 1e-4 * scale  # the oracle's own steps agree
        err = np.max(np.abs(S[:, k] - ref[:, k])) / scale
        assert err <= 1e-5, (form, method, name, err)


@pytest.mark.parametrize("method", ["bdf"])
def test_index1_dae_double_pendulum(reference, method):
    """Regression: the default atol of the multipliers' sensitivities was the run's atol /
    |p| (2e-11 for rsda2.c), below the round-off of d lambda / dp (~1e-12 where it crosses
    0; lambda ~ 4e5 N): bdf's Newton failed on those rows until max_steps at t ~ 5e-4 s.
    It is now at least 1e-10 max|lambda0| / |p| (sens_mech.c sens_atol)."""
    ref, _ = reference
    tr = mbint.simulate(rn.stiff_double_pendulum(), (0.0, T_END), method,
                        formulation="index1_dae", t_eval=T, rtol=1e-8, atol=1e-6,
                        sensitivities=NAMES, max_steps=3000)
    assert tr.success, tr.message
    S = np.concatenate([tr.sens_q, tr.sens_qd], axis=0)
    assert np.max(np.abs(S - ref)) <= 1e-5 * np.max(np.abs(ref))


@pytest.mark.parametrize("method,rtol,atol", [("bdf", 1e-7, 1e-9), ("radau_iia", 1e-9, 1e-11)])
def test_tight_tolerances(reference, method, rtol, atol):
    """Regression: with J s by differences of f the sensitivities' round-off (~eps^(2/3) of
    f's terms) stopped bdf at rtol 1e-7, atol 1e-9 and radau_iia at rtol 1e-9, atol 1e-11
    (Newton failures up to max_steps); J s now takes the formulation's Jacobian (sens.h
    jac_rhs) and df/dp is exact for the spring's k and c."""
    ref, _ = reference
    tr = mbint.simulate(rn.stiff_double_pendulum(), (0.0, T_END), method, t_eval=T, rtol=rtol,
                        atol=atol, sensitivities=NAMES, max_steps=3000)
    assert tr.success, tr.message
    S = np.concatenate([tr.sens_q, tr.sens_qd], axis=0)
    for k in range(len(NAMES)):
        assert np.max(np.abs(S[:, k] - ref[:, k])) <= 1e-5 * np.max(np.abs(ref[:, k]))


def test_atol_of_the_sensitivities(reference):
    """A mapping gives the atol of each parameter's sensitivities; math.inf leaves them out
    of the error test (the run then chooses the plain run's steps)."""
    ref, _ = reference
    m = rn.stiff_double_pendulum()
    plain = mbint.simulate(m, (0.0, T_END), "bdf", t_eval=T, rtol=1e-7, atol=1e-9)
    for atol_s in (1e-12, float("inf")):
        tr = mbint.simulate(m, (0.0, T_END), "bdf", t_eval=T, rtol=1e-7, atol=1e-9,
                            sensitivities={"rsda2.k": atol_s}, max_steps=2000)
        assert tr.success, tr.message
        S = np.concatenate([tr.sens_q, tr.sens_qd], axis=0)[:, 0]
        assert np.max(np.abs(S - ref[:, 0])) <= 1e-5 * np.max(np.abs(ref[:, 0]))
    assert tr.stats["nsteps"] <= 1.2 * plain.stats["nsteps"]
    with pytest.raises(ValueError, match="must be positive"):
        mbint.simulate(m, (0.0, T_END), "bdf", sensitivities={"rsda2.k": 0.0})


@pytest.mark.parametrize("method", ["bdf", "rodas4"])
def test_zero_initial_components_under_a_tight_atol(method):
    """Regression: with the difference steps scaled by atol alone, theta1 = 0 and body 1 at
    rest under atol 1e-8 made e |s| ~ 1e-13 and the difference of J along s rounding
    noise; bdf and rodas4 stopped at t ~ 1e-7 (max_steps)."""
    m = rn.stiff_double_pendulum()
    plain = mbint.simulate(m, (0.0, 0.05), method, rtol=1e-6, atol=1e-8)
    tr = mbint.simulate(m, (0.0, 0.05), method, rtol=1e-6, atol=1e-8,
                        sensitivities=["q0[body1.theta]"], max_steps=2000)
    assert tr.success, tr.message
    assert tr.stats["nsteps"] < 3 * plain.stats["nsteps"]
