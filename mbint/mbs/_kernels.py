"""Kernel methods shared by :class:`mbint.PlanarModel` and
:class:`mbint.MechanicalSystem`: every one evaluates a C kernel of the model's
mech handle (``mbint._core.mech_eval``) at one point or at a batch of points.

Conventions (those of SciPy's ``f(t, y)`` and ``res.y``):

- time first: ``phi(t, q)``, ``gamma(t, q, qd)``, ``forces(t, q, qd)``; only the
  kernels that do not depend on time (``mass(q)``, ``contact_gaps(q)``) have no t;
- points along the LAST axis: one point is q of shape (nq,); m points are q of
  shape (nq, m) (a trajectory's ``traj.q``), with t a scalar or of shape (m,).
  Vector results then have shape (rows, m), matrix results (rows, cols, m).

``mbint._core.mech_eval`` itself takes and returns points along the first axis;
:meth:`Kernels._eval` transposes at this boundary.
"""
from __future__ import annotations

import math
import numbers
from typing import TYPE_CHECKING, Any

import numpy as np

from .. import _core
from .._typing import ArrayLike, FloatArray

__all__ = ["Kernels", "baumgarte_pair", "linalg_code", "LINEAR_ALGEBRA"]

#: the linear algebra of the index-1 formulation and its code in ``_core``
LINEAR_ALGEBRA = {"auto": 0, "dense": 1, "sparse": 2}


def linalg_code(mode: str, where: str = "linear_algebra") -> int:
    """The ``_core`` code of a ``linear_algebra`` setting ("auto", "dense", "sparse")."""
    if isinstance(mode, str) and mode in LINEAR_ALGEBRA:
        return LINEAR_ALGEBRA[mode]
    raise ValueError(f"{where} must be one of {sorted(LINEAR_ALGEBRA)}, got {mode!r}.")


class Kernels:
    """Kernel methods shared by PlanarModel and MechanicalSystem (through the C handle).

    Every kernel takes time first (except :meth:`mass`) and one point or m
    points: q, qd of shape (nq,) or (nq, m) (component first, points along the
    last axis, as SciPy's ``res.y`` and :attr:`Trajectory.q`), t in s a scalar or
    of shape (m,).  It returns one value or m values stacked along the last
    axis: vectors (rows,) or (rows, m), matrices (rows, cols) or (rows, cols, m).
    q and qd default to the initial state, t to 0.

    Units follow the model: lengths in m, angles in rad, masses in kg, forces in
    N (torques N m), time in s.
    """

    #: what builds the model's kernels: ``"planar"`` (:class:`PlanarModel`),
    #: ``"spatial"`` (:class:`SpatialModel`) or ``"system"`` (:class:`MechanicalSystem`);
    #: a loaded trajectory's stand-in model (``StoredModel``) has ``"stored"``.
    #: Code that depends on the kind of model asks this, not ``hasattr``.
    kind: str | None = None

    if TYPE_CHECKING:  # every model has them
        @property
        def nq(self) -> int: ...
        @property
        def nc(self) -> int: ...
        @property
        def q0(self) -> FloatArray: ...
        @property
        def qd0(self) -> FloatArray: ...
        def _mech_handle(self) -> Any: ...

    _linear_algebra = "auto"

    @property
    def linear_algebra(self) -> str:
        """Linear algebra of the index-1 formulation: ``"auto"`` (the default),
        ``"dense"`` or ``"sparse"``.

        ``"dense"`` solves the saddle-point system [M Phi_q^T; Phi_q 0] of every f by a
        dense factorization (through the Schur complement Phi_q M^-1 Phi_q^T when M is
        constant and diagonal) and gives the implicit methods a dense Jacobian: O(n^3)
        per f and per Newton matrix, the right choice for small mechanisms.
        ``"sparse"`` (planar and spatial models without callback forces) assembles the saddle-point matrix sparse and
        factors it with SuiteSparse KLU, and the implicit methods that support it
        (``MethodInfo.sparse``: radau_iia, bdf, rodas4, ros4, ros2, the SUNDIALS methods)
        solve their Newton systems through a sparse augmented system: O(n) per f and
        per step for a chain.  ``"auto"`` is sparse for those models with at least
        :data:`mbint.SPARSE_MIN_NQ` coordinates.  Applies to the kernels
        (:meth:`rhs`, :meth:`jacobian`, ...) and to :func:`mbint.simulate` (which can
        override it per run).
        """
        return self._linear_algebra

    @linear_algebra.setter
    def linear_algebra(self, mode: str) -> None:
        linalg_code(mode)
        self._linear_algebra = mode

    def _linalg_handle(self) -> Any:
        """The mech handle with this model's linear_algebra applied."""
        h = self._mech_handle()
        _core.mech_set_linalg(h, linalg_code(self._linear_algebra))
        return h

    def _q(self, q: Any) -> Any:
        return self.q0 if q is None else q

    def _qd(self, qd: Any) -> Any:
        return self.qd0 if qd is None else qd

    def _eval(self, kernel: str, t: Any, q: Any, b: Any = None, alpha: float = 0.0,
              beta: float = 0.0) -> FloatArray:
        """Evaluate ``kernel`` at the points of q (nq,) or (nq, m) (b likewise).

        mech_eval wants points along the first axis and returns them there:
        transpose at this boundary so that the points are along the last axis.
        """
        q = _points("q", q, self.nq)
        if b is not None:
            what = {"phiqT_lam_q": "lam", "phiq_x_q": "x"}.get(kernel, "qd")
            b = _points(what, b, self.nc if what == "lam" else self.nq)
        tt = np.asarray(t, dtype=float)
        batch = q.ndim == 2 or (b is not None and b.ndim == 2) or tt.ndim == 1
        if q.ndim == 2:
            q = q.T
        if b is not None and b.ndim == 2:
            b = b.T
        out = _core.mech_eval(self._linalg_handle(), kernel, tt, q, b, float(alpha), float(beta))
        if batch:  # (m, rows) -> (rows, m); (m, rows, cols) -> (rows, cols, m)
            out = np.ascontiguousarray(np.moveaxis(out, 0, -1))
        return out

    def phi(self, t: ArrayLike = 0.0, q: ArrayLike | None = None) -> FloatArray:
        """Constraint residuals Phi(t, q).

        Parameters
        ----------
        t : float or array_like, shape (m,)
            Time [s].
        q : array_like, shape (nq,) or (nq, m), optional
            Coordinates (default: the initial ones).

        Returns
        -------
        ndarray, shape (nc,) or (nc, m)
        """
        return self._eval("phi", t, self._q(q))

    def constraint_jacobian(self, t: ArrayLike = 0.0, q: ArrayLike | None = None) -> FloatArray:
        """Constraint Jacobian Phi_q(t, q).

        Parameters
        ----------
        t : float or array_like, shape (m,)
            Time [s].
        q : array_like, shape (nq,) or (nq, m), optional

        Returns
        -------
        ndarray, shape (nc, nq) or (nc, nq, m)
        """
        return self._eval("phi_q", t, self._q(q))

    phi_q = constraint_jacobian

    def phi_t(self, t: ArrayLike = 0.0, q: ArrayLike | None = None) -> FloatArray:
        """Partial time derivative Phi_t(t, q) (nonzero for drivers), per s.

        Returns
        -------
        ndarray, shape (nc,) or (nc, m)
        """
        return self._eval("phi_t", t, self._q(q))

    def gamma(self, t: ArrayLike = 0.0, q: ArrayLike | None = None,
              qd: ArrayLike | None = None) -> FloatArray:
        """gamma(t, q, qd) = -(Phi_q qd)_q qd - 2 Phi_qt qd - Phi_tt, the right-hand
        side of Phi_q q'' = gamma.

        Parameters
        ----------
        t : float or array_like, shape (m,)
            Time [s].
        q, qd : array_like, shape (nq,) or (nq, m), optional
            Coordinates and velocities (default: the initial ones).

        Returns
        -------
        ndarray, shape (nc,) or (nc, m)
        """
        return self._eval("gamma", t, self._q(q), self._qd(qd))

    def mass(self, q: ArrayLike | None = None) -> FloatArray:
        """Mass matrix M(q) (kg, kg m^2 for rotations).

        Parameters
        ----------
        q : array_like, shape (nq,) or (nq, m), optional

        Returns
        -------
        ndarray, shape (nq, nq) or (nq, nq, m)
        """
        return self._eval("mass", 0.0, self._q(q))

    def forces(self, t: ArrayLike = 0.0, q: ArrayLike | None = None,
               qd: ArrayLike | None = None) -> FloatArray:
        """Generalized forces Q(t, q, qd) (N, N m for rotations).

        Returns
        -------
        ndarray, shape (nq,) or (nq, m)
        """
        return self._eval("forces", t, self._q(q), self._qd(qd))

    def forces_q(self, t: ArrayLike = 0.0, q: ArrayLike | None = None,
                 qd: ArrayLike | None = None) -> FloatArray:
        """dQ/dq at (t, q, qd).

        Returns
        -------
        ndarray, shape (nq, nq) or (nq, nq, m)
        """
        return self._eval("forces_q", t, self._q(q), self._qd(qd))

    def forces_qd(self, t: ArrayLike = 0.0, q: ArrayLike | None = None,
                  qd: ArrayLike | None = None) -> FloatArray:
        """dQ/dqd at (t, q, qd).

        Returns
        -------
        ndarray, shape (nq, nq) or (nq, nq, m)
        """
        return self._eval("forces_qd", t, self._q(q), self._qd(qd))

    def phiq_x_q(self, t: ArrayLike = 0.0, q: ArrayLike | None = None,
                 x: ArrayLike | None = None) -> FloatArray:
        """(Phi_q x)_q for a fixed vector x.

        Parameters
        ----------
        t : float or array_like, shape (m,)
        q : array_like, shape (nq,) or (nq, m), optional
        x : array_like, shape (nq,) or (nq, m), optional
            Default: the initial velocities.

        Returns
        -------
        ndarray, shape (nc, nq) or (nc, nq, m)
        """
        return self._eval("phiq_x_q", t, self._q(q), self._qd(x))

    def phiqT_lam_q(self, t: ArrayLike = 0.0, q: ArrayLike | None = None,
                    lam: ArrayLike | None = None) -> FloatArray:
        """(Phi_q^T lam)_q for fixed multipliers lam.

        Parameters
        ----------
        t : float or array_like, shape (m,)
        q : array_like, shape (nq,) or (nq, m), optional
        lam : array_like, shape (nc,) or (nc, m)

        Returns
        -------
        ndarray, shape (nq, nq) or (nq, nq, m)
        """
        return self._eval("phiqT_lam_q", t, self._q(q), lam)

    def gamma_q(self, t: ArrayLike = 0.0, q: ArrayLike | None = None,
                qd: ArrayLike | None = None) -> FloatArray:
        """d gamma / dq at (t, q, qd).

        Returns
        -------
        ndarray, shape (nc, nq) or (nc, nq, m)
        """
        return self._eval("gamma_q", t, self._q(q), self._qd(qd))

    def gamma_qd(self, t: ArrayLike = 0.0, q: ArrayLike | None = None,
                 qd: ArrayLike | None = None) -> FloatArray:
        """d gamma / dqd at (t, q, qd).

        Returns
        -------
        ndarray, shape (nc, nq) or (nc, nq, m)
        """
        return self._eval("gamma_qd", t, self._q(q), self._qd(qd))

    def accelerations(self, t: ArrayLike = 0.0, q: ArrayLike | None = None,
                      qd: ArrayLike | None = None,
                      baumgarte: float | tuple[float, float] | None = None) -> tuple[FloatArray, FloatArray]:
        """Accelerations and multipliers of the index-1 system (LLM eq 9).

        Parameters
        ----------
        t : float or array_like, shape (m,)
            Time [s].
        q, qd : array_like, shape (nq,) or (nq, m), optional
        baumgarte : None, float or (alpha, beta)
            Baumgarte terms gamma - 2 alpha Phi' - beta^2 Phi (alpha, beta in 1/s).

        Returns
        -------
        qdd : ndarray, shape (nq,) or (nq, m)
        lam : ndarray, shape (nc,) or (nc, m)
        """
        a, b = baumgarte_pair(baumgarte)
        out = self._eval("acc", t, self._q(q), self._qd(qd), a, b)
        return out[:self.nq], out[self.nq:]

    def rhs(self, t: ArrayLike, y: ArrayLike,
            baumgarte: float | tuple[float, float] | None = None) -> FloatArray:
        """f(t, y) of the index-1 ODE, y = (q, qd).

        Parameters
        ----------
        t : float or array_like, shape (m,)
        y : array_like, shape (2 nq,) or (2 nq, m)

        Returns
        -------
        ndarray, shape (2 nq,) or (2 nq, m)
        """
        y = np.asarray(y, float)
        a, b = baumgarte_pair(baumgarte)
        return self._eval("rhs", t, y[:self.nq], y[self.nq:], a, b)

    def jacobian(self, t: ArrayLike, y: ArrayLike,
                 baumgarte: float | tuple[float, float] | None = None) -> FloatArray:
        """df/dy of the index-1 ODE (LLM eqs 10-15).

        Parameters
        ----------
        t : float or array_like, shape (m,)
        y : array_like, shape (2 nq,) or (2 nq, m)

        Returns
        -------
        ndarray, shape (2 nq, 2 nq) or (2 nq, 2 nq, m)
        """
        y = np.asarray(y, float)
        a, b = baumgarte_pair(baumgarte)
        return self._eval("jac", t, y[:self.nq], y[self.nq:], a, b)

    def violation(self, t: ArrayLike = 0.0, q: ArrayLike | None = None,
                  qd: ArrayLike | None = None) -> tuple[FloatArray, FloatArray, FloatArray]:
        """Constraint residuals at position, velocity and acceleration level.

        Parameters
        ----------
        t : float or array_like, shape (m,)
        q, qd : array_like, shape (nq,) or (nq, m), optional

        Returns
        -------
        phi : ndarray, shape (nc,) or (nc, m)
            Phi(t, q).
        vel : ndarray, shape (nc,) or (nc, m)
            Phi_q qd + Phi_t.
        acc : ndarray, shape (nc,) or (nc, m)
            Phi_q qdd - gamma, with qdd from the (unstabilized) index-1 system.
        """
        q, qd = self._q(q), self._qd(qd)
        P = self.constraint_jacobian(t, q)
        vel = np.einsum("ij...,j...->i...", P, np.asarray(qd, float)) + self.phi_t(t, q)
        qdd, _ = self.accelerations(t, q, qd)
        acc = np.einsum("ij...,j...->i...", P, qdd) - self.gamma(t, q, qd)
        return self.phi(t, q), vel, acc


def _points(what: str, v: Any, n: int) -> FloatArray:
    """v as a float array of one point (n,) or of points along the last axis (n, m)."""
    a = np.asarray(v, dtype=float)
    if a.ndim > 2 or (a.ndim == 2 and a.shape[0] != n) or (a.ndim < 2 and a.size != n):
        raise ValueError(f"{what} must have shape ({n},) or ({n}, m) (points along the last "
                         f"axis), got shape {a.shape}.")
    return a


def baumgarte_pair(b: Any) -> tuple[float, float]:
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
