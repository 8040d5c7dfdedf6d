"""bdf on the index-1 DAE of the LS two-link manipulator, with lambda(t0) perturbed in
its last bits: the answer must not depend on them.

The DAE is built here from the model's kernels as a mass-matrix problem,
M_p y' = f(t, y), y = (q, v, lambda), M_p = diag(I, I, 0),
    q' = v,   v' = a = M^-1 (Q - Phi_q^T lambda),   0 = Phi_q a - gamma
(the index-1 form of LS eqs 1-4, as csrc/mbs/dae.c writes it), with its exact Jacobian
(checked against central differences), so that lambda(t0) can be set to the bit.

Found: at rtol = atol = 1e-4 bdf failed for EVERY last bit of lambda(t0) (and
``simulate(..., formulation="index1_dae")`` with it), its step collapsing at t = 0.593 s;
the dense LU of csrc/mbs/dae.c only moved the collapse to tolerances where the
last bits happened to avoid it.  Steps had passed Newton's test after ONE correction of
the multipliers 2.5-6 times the tolerance, on the rate (eta ~ 1e-4) of the previous
solve with a J kept from earlier steps: the multipliers in the history drifted off the
constraint, the error estimate stopped shrinking with h, and Newton then failed at every
h.  With a mass matrix bdf now accepts a first correction only when it is itself within
the tolerance.

Bounds: q(2 s) against dop853 on the index-1 ODE at 1e-13, within 20 tol (the errors
measured are 7 tol at 1e-4 and 9 tol at 1e-6: a global error of a run of 2 s through the
links' fast phase).
"""
import numpy as np
import pytest

pytest.importorskip("mbint._core")

import mbint  # noqa: E402
from mbint import models  # noqa: E402

ARM = models.two_link_manipulator()
NQ, NC = ARM.nq, ARM.nc
MQ_INV = np.linalg.inv(ARM.mass(ARM.q0))  # a planar model: M is constant
MP = np.diag(np.r_[np.ones(2 * NQ), np.zeros(NC)])
SPAN = (0.0, 2.0)


def _accel(t, q, v, lam):
    P = ARM.constraint_jacobian(t, q)
    return MQ_INV @ (ARM.forces(t, q, v) - P.T @ lam), P


def fun(t, y):
    q, v, lam = y[:NQ], y[NQ:2 * NQ], y[2 * NQ:]
    a, P = _accel(t, q, v, lam)
    return np.concatenate([v, a, P @ a - ARM.gamma(t, q, v)])


def jac(t, y):
    q, v, lam = y[:NQ], y[NQ:2 * NQ], y[2 * NQ:]
    a, P = _accel(t, q, v, lam)
    aq = MQ_INV @ (ARM.forces_q(t, q, v) - ARM.phiqT_lam_q(t, q, lam))
    av = MQ_INV @ ARM.forces_qd(t, q, v)
    al = -MQ_INV @ P.T
    n = 2 * NQ + NC
    J = np.zeros((n, n))
    J[:NQ, NQ:2 * NQ] = np.eye(NQ)
    J[NQ:2 * NQ, :NQ], J[NQ:2 * NQ, NQ:2 * NQ], J[NQ:2 * NQ, 2 * NQ:] = aq, av, al
    J[2 * NQ:, :NQ] = ARM.phiq_x_q(t, q, a) + P @ aq - ARM.gamma_q(t, q, v)
    J[2 * NQ:, NQ:2 * NQ] = P @ av - ARM.gamma_qd(t, q, v)
    J[2 * NQ:, 2 * NQ:] = P @ al
    return J


@pytest.fixture(scope="module")
def lam0():
    # lambda(t0) of the formulation (the index-1 saddle-point system)
    return mbint.simulate(ARM, (0, 0.01), method="bdf", formulation="index1_dae").lam[:, 0]


@pytest.fixture(scope="module")
def reference():
    return mbint.simulate(ARM, SPAN, method="dop853", rtol=1e-13, atol=1e-14).q[:, -1]


def test_the_dae_and_its_jacobian(lam0):
    y = np.r_[ARM.q0, ARM.qd0 + 0.3, lam0]
    J = jac(0.2, y)
    Jn = np.empty_like(J)
    for j in range(len(y)):
        e = np.zeros(len(y))
        e[j] = 1e-6
        Jn[:, j] = (fun(0.2, y + e) - fun(0.2, y - e)) / 2e-6
    np.testing.assert_allclose(J, Jn, rtol=1e-6, atol=1e-7)
    # lambda0 satisfies the algebraic equation at t0
    assert np.abs(fun(0.0, np.r_[ARM.q0, ARM.qd0, lam0])[2 * NQ:]).max() < 1e-12


@pytest.mark.parametrize("tol", [1e-4, 1e-6])
@pytest.mark.parametrize("ulps", [-4, -2, -1, 0, 1, 2, 4])
def test_bdf_does_not_depend_on_the_last_bits_of_lambda0(lam0, reference, tol, ulps):
    lam = lam0 + ulps * np.spacing(np.abs(lam0))
    r = mbint.solve_ivp(fun, SPAN, np.r_[ARM.q0, ARM.qd0, lam], method="bdf", mass=MP,
                        jac=jac, rtol=tol, atol=tol, max_steps=20000)
    assert r.status == 0, r.message
    assert np.abs(r.y[:NQ, -1] - reference).max() <= 20 * tol


def test_simulate_index1_dae_with_bdf(reference):
    tr = mbint.simulate(ARM, SPAN, method="bdf", formulation="index1_dae", rtol=1e-4,
                        atol=1e-4)
    assert tr.status_code == 0, tr.message
    assert np.abs(tr.q[:, -1] - reference).max() <= 20 * 1e-4
