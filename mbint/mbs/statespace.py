"""The state-space view of a mechanism (RN paper sections 1 and 3): ``mbint.StateSpace``.

Generalized coordinate partitioning splits the coordinates q of a constrained
mechanism into ``nd = nq - nc`` independent ones v and ``nc`` dependent ones u,
chosen by Gauss-Jordan elimination with full pivoting on Phi_q (RN eq 6) so that
Phi_u is nonsingular.  The motion then obeys the reduced second-order ODE
``M^(v) v'' = Q^(t, v, v')`` (eqs 9-10) with u from Phi(t, u, v) = 0 (Newton, eq 8)
and u' from the velocity constraint (eq 7d).  :func:`mbint.simulate` integrates it
with ``formulation="state_space"``; this class evaluates it at single points: the
partition, v'', the reduced mass matrix, the analytic integration Jacobians
J1 = dv''/dv and J2 = dv''/dv' (eqs 26-35) and the full state of any (v, v').

Everything is computed by the C formulation (csrc/mbs/statespace.c) over the
mechanism's kernel table, for a :class:`PlanarModel` and a
:class:`MechanicalSystem` alike.
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from .. import _core
from .._typing import ArrayLike, FloatArray
from ._model_types import Model

__all__ = ["StateSpace"]


class StateSpace:
    """A mechanism partitioned at a consistent state.

    Parameters
    ----------
    model : PlanarModel or MechanicalSystem
    t : float
        Time of the state [s].
    q, qd : array_like, shape (nq,), optional
        A consistent state (Phi = 0, Phi_q qd + Phi_t = 0); default the model's
        initial state.  Newton for the dependent coordinates starts from it.
    independent : sequence of int or str, or "pivoting", optional
        The independent coordinates (indices, or coordinate names of the model);
        default (or ``"pivoting"``): chosen by Gauss-Jordan elimination with full pivoting
        on Phi_q(q), the RN paper's choice.  (``simulate(formulation="state_space")``
        prefers by default the coordinates the stiff force elements act in; a run's
        partitions are ``traj.partitions``.)
    tol : float, optional
        Tolerance of Newton for the dependent positions, max ``|Phi|`` (default 1e-10).

    Attributes
    ----------
    independent, dependent : ndarray of int
        Indices into q of v (nd) and u (nc), ascending.
    names : list of str
        Coordinate names of v.
    v, vd : ndarray, shape (nd,)
        The independent coordinates and velocities of (q, qd).
    cond : float
        cond_1(Phi_u) at (q, qd).

    Raises
    ------
    ValueError
        No nonsingular Phi_u exists at q (redundant constraints or a singular
        configuration): the message names the dependent constraint rows.
    """

    def __init__(self, model: Model, t: float = 0.0, q: ArrayLike | None = None,
                 qd: ArrayLike | None = None, independent: Sequence[int | str] | str | None = None,
                 tol: float | None = None) -> None:
        if getattr(model, "kind", None) not in ("planar", "spatial", "system"):
            raise ValueError(f"model must be a PlanarModel or a MechanicalSystem, "
                             f"got {type(model).__name__}.")
        self.model = model
        self.t0 = float(t)
        self.q0 = np.array(model.q0 if q is None else q, dtype=float).reshape(-1)
        self.qd0 = np.array(model.qd0 if qd is None else qd, dtype=float).reshape(-1)
        for name, a in (("q", self.q0), ("qd", self.qd0)):
            if a.size != model.nq or not np.all(np.isfinite(a)):
                raise ValueError(f"{name} must have nq = {model.nq} finite entries.")
        from .simulate import check_initial_conditions

        chk = check_initial_conditions(model, self.q0, self.qd0, self.t0)
        if chk["dependent"]:
            raise ValueError(
                f"{model.name}: no nonsingular Phi_u exists at q: Phi_q has rank {chk['rank']} "
                f"< nc = {model.nc} (redundant constraints or a singular configuration); rows "
                f"depending on earlier rows: {', '.join(chk['dependent'])}.")
        self._handle = model._mech_handle()
        self._tol = 0.0 if tol is None else float(tol)
        self._indep = None
        if isinstance(independent, str):
            if independent != "pivoting":
                raise ValueError(f"independent: a sequence of coordinates, 'pivoting' or None, "
                                 f"got {independent!r}.")
            independent = None
        if independent is not None:
            names = list(model.coordinate_names)
            idx = [names.index(c) if isinstance(c, str) else int(c) for c in independent]
            self._indep = np.asarray(idx, dtype=np.intc)
        try:
            r = self._eval(self.t0, None, None, jac=False)
        except RuntimeError as exc:
            raise ValueError(f"independent: {exc}") from exc
        except ValueError as exc:
            rows = self._rows_in(str(exc))
            raise ValueError(f"{model.name}: {exc}" + (f" ({', '.join(rows)})" if rows else "")) \
                from None
        self.independent = np.asarray(r["indep"], dtype=int)
        self.dependent = np.asarray(r["dep"], dtype=int)
        self._indep = self.independent.astype(np.intc)
        self.names = [model.coordinate_names[i] for i in self.independent]
        self.v = self.q0[self.independent].copy()
        self.vd = self.qd0[self.independent].copy()
        self.cond = float(r["cond"])

    def _rows_in(self, msg: str) -> list[str]:
        """Names of the constraint rows listed after 'dependent rows:' in a C message."""
        if "dependent rows:" not in msg:
            return []
        tail = msg.split("dependent rows:")[1].split(".")[0]
        names = list(self.model.constraint_names)
        out = []
        for tok in tail.split(","):
            tok = tok.strip()
            if tok.isdigit() and int(tok) < len(names):
                out.append(names[int(tok)])
        return out

    def _eval(self, t: float, v: Any, vd: Any, jac: bool = True) -> dict[str, Any]:
        return _core.mech_ss_eval(self._handle, self.t0, self.q0, self.qd0, float(t),
                                  None if v is None else np.asarray(v, float),
                                  None if vd is None else np.asarray(vd, float),
                                  indep=self._indep, tol=self._tol, jac=bool(jac))

    def evaluate(self, v: ArrayLike | None = None, vd: ArrayLike | None = None,
                 t: float | None = None, jacobians: bool = True) -> dict[str, Any]:
        """The state-space ODE at (t, v, v').

        Parameters
        ----------
        v, vd : array_like, shape (nd,), optional
            Independent coordinates and velocities (default those of the base state).
        t : float, optional
            Time [s] (default the base state's).
        jacobians : bool
            Also J1, J2 and the right-hand sides M^ J1, M^ J2, M^ dv''/dt.

        Returns
        -------
        dict
            ``q``, ``qd``, ``qdd`` (nq,), ``lam`` (nc,): the full state, accelerations
            and multipliers (M q'' + Phi_q^T lam = Q); ``vdd`` (nd,); ``M_hat``
            (nd, nd), the reduced mass matrix (eq 10a); ``H`` (nc, nd) = du/dv;
            ``cond`` = cond_1(Phi_u); ``iterations`` of Newton; with ``jacobians``:
            ``J1``, ``J2`` (nd, nd), ``MJ1``, ``MJ2`` (the right-hand sides of eqs 31
            and 35) and ``Mat`` (nd,) = M^ dv''/dt (eq 46).
        """
        return self._eval(self.t0 if t is None else t, v, vd, jac=jacobians)

    def acceleration(self, v: ArrayLike, vd: ArrayLike, t: float | None = None) -> FloatArray:
        """v'' at (t, v, v'), shape (nd,) [SI units of the coordinates per s^2]."""
        return self.evaluate(v, vd, t, jacobians=False)["vdd"]

    def jacobians(self, v: ArrayLike | None = None, vd: ArrayLike | None = None,
                  t: float | None = None) -> tuple[FloatArray, FloatArray]:
        """(J1, J2) = (dv''/dv, dv''/dv'), each (nd, nd), analytic (RN eqs 31, 35)."""
        r = self.evaluate(v, vd, t)
        return r["J1"], r["J2"]

    def full(self, v: ArrayLike, vd: ArrayLike,
             t: float | None = None) -> tuple[FloatArray, FloatArray]:
        """The full coordinates and velocities (q, qd), each (nq,), of (v, v')."""
        r = self.evaluate(v, vd, t, jacobians=False)
        return r["q"], r["qd"]

    def __repr__(self) -> str:
        return (f"<StateSpace of {self.model.name!r}: independent {self.names}, "
                f"cond(Phi_u) = {self.cond:.3g}>")
