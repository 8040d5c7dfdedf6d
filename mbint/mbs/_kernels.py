"""Kernel methods shared by :class:`mbint.PlanarModel` and
:class:`mbint.MechanicalSystem`: every one evaluates a C kernel of the model's
mech handle (``mbint._core.mech_eval``) at one point or at a batch of points."""
from __future__ import annotations

import math
import numbers

import numpy as np

from .. import _core

__all__ = ["Kernels", "baumgarte_pair"]


class Kernels:
    """Kernel methods shared by PlanarModel and MechanicalSystem (through the C handle).

    Every kernel takes one point (q of shape (nq,)) or m points (q of shape
    (m, nq), t scalar or (m,)) and returns one value or a stack of m values;
    matrices have shape (rows, cols) per point.  q and qd default to the
    initial state.
    """

    def _q(self, q):
        return self.q0 if q is None else q

    def _qd(self, qd):
        return self.qd0 if qd is None else qd

    def _eval(self, kernel, t, q, b=None, alpha=0.0, beta=0.0):
        return _core.mech_eval(self._mech_handle(), kernel, t, q, b, float(alpha), float(beta))

    def phi(self, q=None, t=0.0):
        """Constraint residuals Phi(q, t), shape (nc,)."""
        return self._eval("phi", t, self._q(q))

    def constraint_jacobian(self, q=None, t=0.0):
        """Constraint Jacobian Phi_q(q, t), shape (nc, nq)."""
        return self._eval("phi_q", t, self._q(q))

    phi_q = constraint_jacobian

    def phi_t(self, q=None, t=0.0):
        """Partial time derivative Phi_t(q, t), shape (nc,) (nonzero for drivers)."""
        return self._eval("phi_t", t, self._q(q))

    def gamma(self, q=None, qd=None, t=0.0):
        """gamma = -(Phi_q qd)_q qd - 2 Phi_qt qd - Phi_tt, shape (nc,)."""
        return self._eval("gamma", t, self._q(q), self._qd(qd))

    def mass(self, q=None):
        """Mass matrix M(q), shape (nq, nq)."""
        return self._eval("mass", 0.0, self._q(q))

    def forces(self, t=0.0, q=None, qd=None):
        """Generalized forces Q(t, q, qd), shape (nq,)."""
        return self._eval("forces", t, self._q(q), self._qd(qd))

    def forces_q(self, t=0.0, q=None, qd=None):
        """dQ/dq, shape (nq, nq)."""
        return self._eval("forces_q", t, self._q(q), self._qd(qd))

    def forces_qd(self, t=0.0, q=None, qd=None):
        """dQ/dqd, shape (nq, nq)."""
        return self._eval("forces_qd", t, self._q(q), self._qd(qd))

    def phiq_x_q(self, q=None, x=None, t=0.0):
        """(Phi_q x)_q for a fixed vector x of size nq, shape (nc, nq)."""
        return self._eval("phiq_x_q", t, self._q(q), self._qd(x))

    def phiqT_lam_q(self, q=None, lam=None, t=0.0):
        """(Phi_q^T lam)_q for fixed multipliers lam of size nc, shape (nq, nq)."""
        return self._eval("phiqT_lam_q", t, self._q(q), lam)

    def gamma_q(self, q=None, qd=None, t=0.0):
        """d gamma / dq, shape (nc, nq)."""
        return self._eval("gamma_q", t, self._q(q), self._qd(qd))

    def gamma_qd(self, q=None, qd=None, t=0.0):
        """d gamma / dqd, shape (nc, nq)."""
        return self._eval("gamma_qd", t, self._q(q), self._qd(qd))

    def accelerations(self, q=None, qd=None, t=0.0, baumgarte=None):
        """Accelerations and multipliers of the index-1 system (LLM eq 9).

        Returns
        -------
        qdd : ndarray, shape (nq,) or (m, nq)
        lam : ndarray, shape (nc,) or (m, nc)
        """
        a, b = baumgarte_pair(baumgarte)
        out = self._eval("acc", t, self._q(q), self._qd(qd), a, b)
        return out[..., :self.nq], out[..., self.nq:]

    def rhs(self, t, y, baumgarte=None):
        """f(t, y) of the index-1 ODE, y = (q, qd); shape (2 nq,)."""
        y = np.asarray(y, float)
        a, b = baumgarte_pair(baumgarte)
        return self._eval("rhs", t, y[..., :self.nq], y[..., self.nq:], a, b)

    def jacobian(self, t, y, baumgarte=None):
        """df/dy of the index-1 ODE (LLM eqs 10-15), shape (2 nq, 2 nq)."""
        y = np.asarray(y, float)
        a, b = baumgarte_pair(baumgarte)
        return self._eval("jac", t, y[..., :self.nq], y[..., self.nq:], a, b)

    def violation(self, q=None, qd=None, t=0.0):
        """Constraint residuals at position, velocity and acceleration level.

        Returns
        -------
        phi : ndarray, shape (nc,) or (m, nc)
            Phi(q, t).
        vel : ndarray
            Phi_q qd + Phi_t.
        acc : ndarray
            Phi_q qdd - gamma, with qdd from the (unstabilized) index-1 system.
        """
        q, qd = self._q(q), self._qd(qd)
        P = self.constraint_jacobian(q, t)
        vel = np.einsum("...ij,...j->...i", P, np.asarray(qd, float)) + self.phi_t(q, t)
        qdd, _ = self.accelerations(q, qd, t)
        acc = np.einsum("...ij,...j->...i", P, qdd) - self.gamma(q, qd, t)
        return self.phi(q, t), vel, acc


def baumgarte_pair(b):
    """(alpha, beta) from None, a number or a pair."""
    if b is None:
        return 0.0, 0.0
    if isinstance(b, numbers.Real):
        b = (b, b)
    try:
        a, c = (float(v) for v in b)
    except (TypeError, ValueError):
        raise ValueError("baumgarte must be None, a number or a pair (alpha, beta).") from None
    if not (a >= 0 and c >= 0 and math.isfinite(a) and math.isfinite(c)):
        raise ValueError(f"baumgarte: alpha and beta must be non-negative and finite, got {b}.")
    return a, c
