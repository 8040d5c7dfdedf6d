"""The fixed-step implicit Runge-Kutta methods on the index-3 DAE of a mechanism
(y = (q, v, lambda), csrc/mbs/dae.c): converged with their order as h shrinks, or a
loud failure -- never status 0 with a wrong answer.

Before the fix in csrc/methods/irk_newton.c ("Newton to round-off on an index-3 DAE")
radau_iia4 on pendulum_chain(3) at the default rtol returned status 0 with errors
2.7e-2, 7.1e-2, 7.4e-3 at h = 1e-2, 5e-3, 2e-3 (radau_ia4 8.4e-2 at 5e-3): Newton kept
iterates whose positions' polishing stalled, "converged" in the h-scaled norm in which
the velocities' error may grow like 1/h.  The bounds are about 5x the errors measured
after the fix, which equal those of a run with Newton at rtol 1e-10; the orders are
those of the index-3 theory (Radau IIA 2s - 1, Lobatto IIIC 2s - 2) and, for Radau IA,
the one measured (3.8 and 3.9; its y-order on index 3 is lower than on ODEs)."""
import numpy as np
import pytest

from mbint import models, simulate

# method: (order of q at least, bound at h = 1e-2, bound at h = 5e-3), pendulum_chain(3)
# measured: radau_iia3 4.3e-6, 1.4e-7; radau_iia4 2.5e-9, 3.4e-12; radau_ia4 5.1e-8,
# 3.6e-9; lobatto_iiic4 6.8e-8, 9.2e-10
CHAIN = {
    "radau_iia3": (4.5, 2e-5, 1e-6),
    "radau_iia4": (6.5, 1.5e-8, 1e-10),
    "radau_ia4": (3.3, 3e-7, 2e-8),
    "lobatto_iiic4": (5.5, 4e-7, 5e-9),
}
# the two-link manipulator (ran correctly before the fix, and must stay so): measured
# radau_iia3 1.7e-6, 5.6e-8; radau_iia4 9.8e-10, 7.0e-12; radau_ia4 1.4e-7, 9.2e-9;
# lobatto_iiic4 8.5e-9, 9.4e-11
ARM = {
    "radau_iia3": (4.5, 1e-5, 3e-7),
    "radau_iia4": (6.5, 5e-9, 1e-10),
    "radau_ia4": (3.3, 7e-7, 5e-8),
    "lobatto_iiic4": (5.5, 5e-8, 5e-10),
}
SPAN = (0.0, 1.0)


def _reference(model):
    tr = simulate(model, SPAN, method="radau_iia", formulation="index1", rtol=1e-11,
                  atol=1e-13)
    assert tr.status == 0
    return tr.q[:, -1]


@pytest.fixture(scope="module")
def chain():
    m = models.pendulum_chain(3)
    return m, _reference(m)


@pytest.fixture(scope="module")
def arm():
    m = models.two_link_manipulator()
    return m, _reference(m)


def _errors(model, ref, method):
    errs = []
    for h in (1e-2, 5e-3):
        tr = simulate(model, SPAN, method=method, formulation="index3", h=h)
        assert tr.status == 0, (method, h, tr.message)
        errs.append(np.max(np.abs(tr.q[:, -1] - ref)))
    return errs


def _check(errs, order, b1, b2):
    assert errs[0] < b1 and errs[1] < b2, errs
    p = np.log2(errs[0] / errs[1])
    assert p > order, (errs, p)


@pytest.mark.parametrize("method", sorted(CHAIN))
def test_index3_converges_on_the_pendulum_chain(chain, method):
    model, ref = chain
    _check(_errors(model, ref, method), *CHAIN[method])


@pytest.mark.parametrize("method", sorted(ARM))
def test_index3_converges_on_the_manipulator(arm, method):
    model, ref = arm
    _check(_errors(model, ref, method), *ARM[method])


def test_index3_newton_failure_is_loud():
    # h = 0.1 is far too large at t = 0.6 on the manipulator: status -1, the message names
    # Newton, t and the residual, the trajectory so far is returned
    tr = simulate(models.two_link_manipulator(), (0, 3), method="radau_iia4",
                  formulation="index3", h=0.1)
    assert tr.status == -1
    assert "Newton did not converge at t = 0.6" in tr.message and "residual" in tr.message
    np.testing.assert_allclose(tr.t, [0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6])
    assert tr.q.shape == (6, 7) and tr.lam.shape == (4, 7)
