"""Statics, linearization and vibration modes of a mechanism (issue 24, item 2).

- :func:`equilibrium`: the static equilibrium Q(t, q, 0) - Phi_q^T lam = 0, Phi(t, q) = 0
  by Newton on the saddle-point system with a backtracking line search, and damped
  dynamic relaxation as the fallback;
- :func:`linearize`: (A, B, C, D) of the motion in the independent coordinates of the
  state-space formulation (RN eqs 4-10): x = (v, v'), A = [0 I; J1 J2] with the analytic
  J1 = dv''/dv and J2 = dv''/dv' of RN eqs 26-35 (:class:`mbint.StateSpace`), or central
  differences of v'';
- :func:`modes`: eigenvalues of A at an equilibrium as natural frequencies [Hz], damping
  ratios and mode shapes in the independent and in all coordinates.

Everything is Python over the model's kernels (:mod:`mbint.mbs._kernels`) and the C
state-space evaluation; it works for a :class:`PlanarModel`, a :class:`SpatialModel` and a
:class:`MechanicalSystem` alike.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Sequence

import numpy as np

from .statespace import StateSpace
from .._typing import ArrayLike, ComplexArray, FloatArray
from ._model_types import Model

if TYPE_CHECKING:
    from matplotlib.axes import Axes

__all__ = ["equilibrium", "linearize", "modes", "Equilibrium", "Linearization",
           "ModalAnalysis"]

#: relative central-difference step of the difference Jacobians (eps^(1/3))
DIFF_STEP = float(np.finfo(float).eps) ** (1.0 / 3.0)


def _check_model(model, where):
    if getattr(model, "kind", None) not in ("planar", "spatial", "system"):
        raise ValueError(f"{where}: model must be a PlanarModel, SpatialModel or "
                         f"MechanicalSystem, got {type(model).__name__}.")


def _vector(model: Any, what: str, v: Any, where: str, default: Any) -> FloatArray:
    """v as a finite float vector of nq entries (default when None)."""
    a = np.array(default if v is None else v, dtype=float).reshape(-1)
    if a.size != model.nq:
        raise ValueError(f"{where}: {what} must have nq = {model.nq} entries, got {a.size}.")
    if not np.all(np.isfinite(a)):
        raise ValueError(f"{where}: {what} must be finite.")
    return a


def _coordinate_index(model, c, where, what="coordinate"):
    names = list(model.coordinate_names)
    if isinstance(c, str):
        if c not in names:
            raise ValueError(f"{where}: {what} {c!r} is not a coordinate of the model "
                             f"(coordinates: {names}).")
        return names.index(c)
    k = int(c)
    if not 0 <= k < model.nq:
        raise ValueError(f"{where}: {what} index {k} is outside 0..{model.nq - 1}.")
    return k


def _units(model):
    return list(getattr(model, "coordinate_units", [""] * model.nq))


def _force_unit(u):
    return {"m": "N", "rad": "N m", "": ""}.get(u, f"N m/{u}" if u else "")


# ------------------------------------------------------------------ equilibrium
@dataclass
class Equilibrium:
    """A static equilibrium found by :func:`equilibrium`.

    Attributes
    ----------
    q : ndarray, shape (nq,)
        The equilibrium configuration (m, rad; Euler parameters for spatial bodies).
    lam : ndarray, shape (nc,)
        The multipliers of the model's constraints (unit J per unit of the row: N, N m).
    reactions : ndarray, shape (len(fixed),)
        The multipliers of the rows q_i - q0_i = 0 of the ``fixed`` coordinates: the applied
        generalized force on each at the equilibrium (N or N m); the support holding it
        exerts minus this.
    force_residual : float
        max |Q(t, q, 0) - Phi_q^T lam| (N or N m).
    constraint_residual : float
        max |Phi(t, q)| (m, rad, m^2 by row).
    iterations : int
        Newton iterations (of the last Newton run after a relaxation).
    method : str
        ``"newton"`` or ``"relaxation"`` (dynamic relaxation polished by Newton).
    fixed : list of str
        The coordinates held at their value in q0.
    stable : bool or None
        With ``stability=True``: whether no eigenvalue of the linearization has a positive
        real part (an undamped equilibrium counts as stable; None when not checked).
    modes : ModalAnalysis or None
        With ``stability=True``: the modes at q.
    """

    q: np.ndarray
    lam: np.ndarray
    reactions: np.ndarray
    force_residual: float
    constraint_residual: float
    iterations: int
    method: str
    fixed: list = field(default_factory=list)
    stable: object = None
    modes: object = None


class _Statics:
    """The residual R(z) = [Q - Phi_q^T lam; Phi] of z = (q, lam) and its Jacobian, with the
    fixed coordinates as extra rows q_i - q0_i = 0."""

    def __init__(self, model, t, q0, fixed):
        self.model, self.t, self.q0, self.fixed = model, float(t), q0, list(fixed)
        self.nq, self.nc = model.nq, model.nc
        self.nl = self.nc + len(self.fixed)
        self.zero = np.zeros(self.nq)
        self.E = np.zeros((len(self.fixed), self.nq))
        self.E[np.arange(len(self.fixed)), self.fixed] = 1.0
        Q0 = model.forces(self.t, q0, self.zero)
        self.F = float(np.max(np.abs(Q0))) if np.any(Q0) else 1.0  # force scale
        self.L = max(1.0, float(np.max(np.abs(q0))))  # length scale of Phi

    def phi_q(self, q):
        P = self.model.constraint_jacobian(self.t, q) if self.nc else np.zeros((0, self.nq))
        return np.vstack([P, self.E])

    def phi(self, q):
        p = self.model.phi(self.t, q) if self.nc else np.zeros(0)
        return np.concatenate([p, q[self.fixed] - self.q0[self.fixed]])

    def residual(self, z):
        q, lam = z[:self.nq], z[self.nq:]
        f = self.model.forces(self.t, q, self.zero) - self.phi_q(q).T @ lam
        return f, self.phi(q)

    def merit(self, f, p):
        """The scaled residual max(|f| / F, |Phi| / L)."""
        return max(np.max(np.abs(f), initial=0.0) / self.F, np.max(np.abs(p), initial=0.0) / self.L)

    def jacobian(self, z):
        q, lam = z[:self.nq], z[self.nq:]
        m, t = self.model, self.t
        try:
            K = m.forces_q(t, q, self.zero)
        except ValueError:  # a MechanicalSystem without forces_q
            K = _central(lambda x: m.forces(t, x, self.zero), q)
        if self.nc:
            lc = lam[:self.nc]
            try:
                K = K - m.phiqT_lam_q(t, q, lc)
            except ValueError:  # a MechanicalSystem without phiqT_lam_q
                K = K - _central(lambda x: m.constraint_jacobian(t, x).T @ lc, q)
        P = self.phi_q(q)
        return np.block([[K, -P.T], [P, np.zeros((self.nl, self.nl))]])

    def multipliers(self, q):
        """Least-squares multipliers Phi_q^T lam = Q at q."""
        P = self.phi_q(q)
        if not self.nl:
            return np.zeros(0)
        return np.linalg.lstsq(P.T, self.model.forces(self.t, q, self.zero), rcond=None)[0]


def _central(fn, x):
    """d fn / dx by central differences with the step DIFF_STEP max(1, |x_j|)."""
    cols = []
    for j in range(x.size):
        h = DIFF_STEP * max(1.0, abs(x[j]))
        e = np.zeros(x.size)
        e[j] = h
        cols.append((np.asarray(fn(x + e)) - np.asarray(fn(x - e))) / (2 * h))
    return np.array(cols).T.reshape(-1, x.size)


def _newton(st, q, tol, max_iter):
    """Newton with backtracking on the scaled residual; (z, merit, iterations, converged)."""
    z = np.concatenate([q, st.multipliers(q)])
    f, p = st.residual(z)
    mu = st.merit(f, p)
    polished = False
    for it in range(1, max_iter + 1):
        if mu <= tol and (polished or mu == 0.0):
            return z, mu, it - 1, True
        polished = mu <= tol  # one more step below tol: the quadratic convergence's digits
        J = st.jacobian(z)
        rhs = -np.concatenate([f, p])
        try:
            dz = np.linalg.solve(J, rhs)
        except np.linalg.LinAlgError:
            dz = np.linalg.lstsq(J, rhs, rcond=None)[0]
        if not np.all(np.isfinite(dz)):
            return z, mu, it, False
        alpha, ok = 1.0, False
        while alpha >= 2.0 ** -12:
            zt = z + alpha * dz
            ft, pt = st.residual(zt)
            mt = st.merit(ft, pt)
            if np.isfinite(mt) and mt < (1.0 - 1e-4 * alpha) * mu:
                ok = True
                break
            alpha *= 0.5
        if not ok:
            return z, mu, it, polished
        z, f, p, mu = zt, ft, pt, mt
    return z, mu, max_iter, mu <= tol


def _reduced_frequencies(st, q):
    """Squared frequencies [1/s^2] of the constrained linearization at q (any q)."""
    from scipy.linalg import eig, null_space

    z = np.concatenate([q, st.multipliers(q)])
    K = -st.jacobian(z)[:st.nq, :st.nq]
    N = null_space(st.phi_q(q)) if st.nl else np.eye(st.nq)
    if N.shape[1] == 0:
        return np.zeros(0)
    M = st.model.mass(q)
    w2 = eig(N.T @ K @ N, N.T @ M @ N, right=False)
    return np.real(w2[np.isfinite(w2)])


def _damped_system(st, c):
    """The model frozen at time t with mass-proportional damping -c M q' [N, N m]: a
    MechanicalSystem over the model's kernels (the fixed coordinates as constraints)."""
    from .mechanical import MechanicalSystem

    model, t = st.model, st.t

    def forces(_t, q, qd):
        return model.forces(t, q, qd) - c * (model.mass(q) @ qd)

    kw = {}
    if st.nl:
        def gamma(_t, q, qd):  # of the constraints frozen at t: -(Phi_q qd)_q qd
            if not st.nc:
                g = np.zeros(0)
            else:
                try:
                    g = -model.phiq_x_q(t, q, qd) @ qd
                except ValueError:  # a MechanicalSystem without phiq_x_q
                    g = -_central(lambda x: model.constraint_jacobian(t, x) @ qd, q) @ qd
            return np.concatenate([g, np.zeros(len(st.fixed))])
        kw = dict(constraints=lambda _t, q: st.phi(q),
                  constraint_jacobian=lambda _t, q: st.phi_q(q),
                  gamma=gamma, constraint_t=0)
    return MechanicalSystem(lambda q: model.mass(q), forces, nq=st.nq, q0=st.q0,
                            name=f"{getattr(model, 'name', 'model')}_relaxation", **kw)


def _relax(st, q, tol, max_iter, chunks=8):
    """Dynamic relaxation: simulate with added damping -c M q' and polish by Newton after
    each chunk of 20/c s; c = 2 sqrt(smallest positive squared frequency at q) (critical
    for the slowest mode).  Returns (z, merit, iterations, converged, message)."""
    from .simulate import simulate

    w2 = _reduced_frequencies(st, q)
    pos = w2[w2 > 1e-12 * max(1.0, np.max(np.abs(w2), initial=0.0))]
    c = 2.0 * math.sqrt(np.min(pos)) if pos.size else 2.0
    sys = _damped_system(st, c)
    z, mu, it = None, math.inf, 0
    qd = np.zeros(st.nq)
    for _ in range(chunks):
        sys.set_initial(q=q, qd=qd)
        try:
            traj = simulate(sys, (0.0, 20.0 / c), method="radau_iia", rtol=1e-8, atol=1e-10,
                            project=st.nl > 0, consistent="project")
        except (RuntimeError, ValueError) as exc:
            return z, mu, it, False, f"the damped simulation failed ({exc})"
        if not traj.success:
            return z, mu, it, False, f"the damped simulation failed ({traj.message})"
        q, qd = traj.q[:, -1].copy(), traj.qd[:, -1].copy()
        z, mu, it, ok = _newton(st, q, tol, max_iter)
        if ok:
            return z, mu, it, True, ""
    return z, mu, it, False, (f"{chunks} damped runs of {20.0 / c:.3g} s each (damping "
                              f"{c:.3g} 1/s) did not come to rest")


def equilibrium(model: Model, q0: ArrayLike | None = None, *, t: float = 0.0, tol: float = 1e-10,
                max_iter: int = 50, fixed: Sequence[int] | Sequence[str] | None = None,
                stability: bool = False, relaxation: bool = True) -> Equilibrium:
    """The static equilibrium of a mechanism under gravity, springs and constant forces.

    Solves Q(t, q, 0) - Phi_q(t, q)^T lam = 0, Phi(t, q) = 0 for (q, lam) by Newton on the
    saddle-point system, Jacobian [Q_q - (Phi_q^T lam)_q, -Phi_q^T; Phi_q, 0] from the model's
    derivative kernels (``forces_q``, ``phiqT_lam_q``, ``constraint_jacobian``; central
    differences in C where a kernel is missing), with a backtracking line search on the
    scaled residual max(``|Q - Phi_q^T lam|`` / F, ``|Phi|`` / L) (F = max ``|Q(t, q0, 0)|`` or 1 N,
    L = max(1, max ``|q0|``)).  When Newton fails, damped dynamic relaxation: the mechanism is
    simulated from q0 at rest with added mass-proportional damping -c M q' (c critical for
    the slowest mode of the linearization at q0, ``radau_iia``) and Newton is restarted from
    where it comes to rest.

    Parameters
    ----------
    model : PlanarModel, SpatialModel or MechanicalSystem
    q0 : array_like, shape (nq,), optional
        Starting configuration (default the model's initial q); it need not satisfy the
        constraints.  Newton finds the equilibrium nearest in its basin: an unstable one
        too (check with ``stability=True``).
    t : float
        Time [s] at which time-dependent forces and drivers are frozen.
    tol : float
        Tolerance on the scaled residual (dimensionless).
    max_iter : int
        Newton iterations per attempt.
    fixed : sequence of int or str, optional
        Coordinates held at their value in q0 (indices or coordinate names); their
        holding forces are ``reactions``.
    stability : bool
        Also compute the modes at the equilibrium (:func:`modes`) and ``stable``.
    relaxation : bool
        Try dynamic relaxation when Newton fails (default True).

    Returns
    -------
    Equilibrium
        q, lam, reactions, the residuals, iterations, the method that converged.

    Raises
    ------
    ValueError
        q0 of the wrong size or not finite, an unknown fixed coordinate.
    RuntimeError
        Neither Newton nor the relaxation converged; the message gives both residuals.
    """
    where = "equilibrium"
    _check_model(model, where)
    q0 = _vector(model, "q0", q0, where, model.q0)
    fixed = sorted({_coordinate_index(model, c, where, "fixed") for c in (fixed or ())})
    if not (tol > 0 and int(max_iter) >= 1):
        raise ValueError(f"{where}: tol must be positive and max_iter at least 1.")
    if stability and fixed:
        raise ValueError(f"{where}: stability=True checks the free mechanism; it cannot be "
                         f"combined with fixed coordinates.")
    st = _Statics(model, t, q0, fixed)
    z, mu, it, ok = _newton(st, q0, tol, int(max_iter))
    method, why = "newton", ""
    if not ok and relaxation:
        z1, mu1, it1, ok, why = _relax(st, q0, tol, int(max_iter))
        method = "relaxation"
        if z1 is not None and (ok or mu1 < mu):
            z, mu, it = z1, mu1, it1
    f, p = st.residual(z)
    fr, cr = float(np.max(np.abs(f), initial=0.0)), float(np.max(np.abs(p), initial=0.0))
    if not ok:
        raise RuntimeError(
            f"{where}: no equilibrium found for {getattr(model, 'name', 'the model')!r}: Newton "
            f"({max_iter} iterations with line search) and "
            + (f"dynamic relaxation ({why})" if relaxation else "no relaxation (relaxation=False)")
            + f" did not converge; best force residual max|Q - Phi_q^T lam| = {fr:.3g} (N, N m), "
            f"constraint residual max|Phi| = {cr:.3g}, scaled residual {mu:.3g} > tol = {tol:g}.")
    names = list(model.coordinate_names)
    eq = Equilibrium(q=z[:st.nq].copy(), lam=z[st.nq:st.nq + st.nc].copy(),
                     reactions=z[st.nq + st.nc:].copy(), force_residual=fr,
                     constraint_residual=cr, iterations=it, method=method,
                     fixed=[names[i] for i in fixed])
    if stability:
        eq.modes = modes(model, eq.q, t=t)
        eq.stable = eq.modes.stable
    return eq


# ------------------------------------------------------------------ linearization
@dataclass
class Linearization:
    """x' = A x + B u, y = C x + D u about (q, qd), x = (v - v0, v' - v0') in the independent
    coordinates v of the state-space formulation.

    Attributes
    ----------
    A : ndarray, shape (2 nd, 2 nd)
        [0 I; J1 J2], J1 = dv''/dv [1/s^2], J2 = dv''/dv' [1/s].
    B : ndarray, shape (2 nd, ni)
        [0; M^^-1 E^T b_k] for input k acting as the generalized force b_k u_k.
    C, D : ndarray, shape (ny, 2 nd), (ny, ni)
    state_names, state_units : list of str
        ``"<coordinate>"`` and ``"<coordinate>'"`` (units ``"m"``, ``"m/s"``, ...).
    input_names, input_units, output_names, output_units : list of str
    independent, dependent : ndarray of int
        Indices into q of v and of the dependent coordinates u.
    E : ndarray, shape (nq, nd)
        dq/dv: identity on v, H = du/dv = -Phi_u^-1 Phi_v on u (the constraint Jacobian's
        null space in the partition's basis).
    M_hat : ndarray, shape (nd, nd)
        The reduced mass matrix E^T M E (RN eq 10a).
    q, qd : ndarray, shape (nq,)
        The point of the linearization (t: ``t``, in s).
    jacobian : str
        ``"analytic"`` (RN eqs 31, 35 from the kernels) or ``"differences"`` (central
        differences of v'' with relative step :data:`DIFF_STEP`).
    """

    A: np.ndarray
    B: np.ndarray
    C: np.ndarray
    D: np.ndarray
    state_names: list
    state_units: list
    input_names: list
    input_units: list
    output_names: list
    output_units: list
    independent: np.ndarray
    dependent: np.ndarray
    E: np.ndarray
    M_hat: np.ndarray
    q: np.ndarray
    qd: np.ndarray
    t: float
    jacobian: str

    def to_scipy(self) -> Any:
        """The system as a :class:`scipy.signal.StateSpace` (continuous time)."""
        from scipy.signal import StateSpace as _SciPySS

        return _SciPySS(self.A, self.B, self.C, self.D)

    def eigenvalues(self) -> ComplexArray:
        """Eigenvalues of A [1/s], complex, in the order of :func:`numpy.linalg.eigvals`."""
        return np.linalg.eigvals(self.A)


def _input_column(model, name, q, t, where):
    """The generalized force (nq,) of a unit input and its unit: a force element with an
    actuator (planar ``add_generalized_force`` and ``add_spring_damper``, spatial
    spring-dampers, a URDF joint's torque), or a coordinate name (a generalized force on
    that coordinate)."""
    el = next((e for e in getattr(model, "force_elements", ()) if e.name == name), None)
    sign, label = 1.0, name
    if el is None and name in getattr(model, "joint_names", ()):  # a URDF joint's torque
        el = next((e for e in model.force_elements if e.name == f"{name}.drive"), None)
        if el is None or el.kind != "rsda":
            raise ValueError(f"{where}: input {name!r}: the joint has no C drive; give it one "
                             f"with model.set_joint_torques({{{name!r}: 0.0}}) first.")
        sign = -1.0  # the drive is an RSDA whose actuator is minus the joint torque
    if el is not None:
        b, unit = _actuator_column(model, el, q, t, where, label)
        return sign * b, unit
    k = _coordinate_index(model, name, where, "input")
    b = np.zeros(model.nq)
    b[k] = 1.0
    return b, _force_unit(_units(model)[k])


def _actuator_column(model, el, q, t, where, label):
    """Q(t, q, 0) of a copy of the model with the element's actuator raised by one, minus
    the model's: exact, since Q is linear in an actuator (N for a spring-damper, the
    coordinate's force unit for a generalized force, N m for a rotational one)."""
    import pickle

    rows = getattr(el, "prims", None) or [el.params]
    if not any("fa_c0" in r for r in rows):
        raise ValueError(f"{where}: input {label!r} is a {el.kind} element without an "
                         f"actuator; inputs are coordinates and actuated force elements.")
    try:
        copy = pickle.loads(pickle.dumps(model))
    except Exception as exc:  # Python force functions that do not pickle
        raise ValueError(f"{where}: input {label!r}: the model cannot be copied to evaluate "
                         f"the actuator ({exc}).") from exc
    e2 = next(e for e in copy.force_elements if e.name == el.name)
    for r in getattr(e2, "prims", None) or [e2.params]:
        if "fa_c0" in r:
            r["fa_c0"] = r["fa_c0"] + 1.0
    copy._compiled = None
    zero = np.zeros(model.nq)
    b = copy.forces(t, q, zero) - model.forces(t, q, zero)
    if el.kind == "generalized":
        unit = _force_unit(_units(model)[int(el.params["coord"])])
    else:
        unit = {"tsda": "N", "rsda": "N m"}.get(el.kind, "")
    return b, unit


def _difference_jacobians(ss, v, vd, t):
    """(J1, J2) by central differences of v''(v, v') with step DIFF_STEP max(1, |x_j|)."""
    nd = v.size
    J = np.zeros((nd, 2 * nd))
    x = np.concatenate([v, vd])
    for j in range(2 * nd):
        h = DIFF_STEP * max(1.0, abs(x[j]))
        xp, xm = x.copy(), x.copy()
        xp[j] += h
        xm[j] -= h
        J[:, j] = (ss.acceleration(xp[:nd], xp[nd:], t) - ss.acceleration(xm[:nd], xm[nd:], t)) \
            / (2 * h)
    return J[:, :nd], J[:, nd:]


def _output_rows(model, ss, lin_E, outputs, v, vd, t, where):
    """C's rows, names and units: coordinates (``"c"``: dq_c/dv; ``"c'"``: its velocity)
    through E, named model outputs by central differences through the full state."""
    nd = v.size
    units = _units(model)
    rows, names, out_units = [], [], []
    for name in outputs:
        name = str(name)
        base = name[:-1] if name.endswith("'") else name
        if base in model.coordinate_names:
            k = model.coordinate_names.index(base)
            row = np.zeros(2 * nd)
            if name.endswith("'"):
                row[nd:] = lin_E[k]
                row[:nd] = _velocity_row(ss, k, v, vd, t)
                out_units.append(f"{units[k]}/s" if units[k] else "")
            else:
                row[:nd] = lin_E[k]
                out_units.append(units[k])
        elif name in getattr(model, "outputs", {}):
            row = _named_output_row(model, ss, model.outputs[name], v, vd, t)
            out_units.append(dict(getattr(model, "output_units", {}) or {}).get(name, ""))
        else:
            raise ValueError(f"{where}: output {name!r} is neither a coordinate (or "
                             f"\"<coordinate>'\") nor a named output of the model (outputs: "
                             f"{sorted(getattr(model, 'outputs', {}))}).")
        rows.append(row)
        names.append(name)
    return np.array(rows).reshape(len(rows), 2 * nd), names, out_units


def _velocity_row(ss, k, v, vd, t):
    """d qd_k / dv at (v, v') (zero at rest), central differences."""
    nd = v.size
    row = np.zeros(nd)
    if not np.any(vd):
        return row
    for j in range(nd):
        h = DIFF_STEP * max(1.0, abs(v[j]))
        e = np.zeros(nd)
        e[j] = h
        row[j] = (ss.full(v + e, vd, t)[1][k] - ss.full(v - e, vd, t)[1][k]) / (2 * h)
    return row


def _named_output_row(model, ss, fn, v, vd, t):
    """d fn(t, q, qd) / d(v, v') by central differences through the full state."""
    nd = v.size
    x = np.concatenate([v, vd])
    row = np.zeros(2 * nd)

    def out(xx):
        q, qd = ss.full(xx[:nd], xx[nd:], t)
        return float(np.asarray(fn(np.array([t]), q[:, None], qd[:, None])).reshape(-1)[0])

    for j in range(2 * nd):
        h = DIFF_STEP * max(1.0, abs(x[j]))
        xp, xm = x.copy(), x.copy()
        xp[j] += h
        xm[j] -= h
        row[j] = (out(xp) - out(xm)) / (2 * h)
    return row


def linearize(model: Model, q: ArrayLike | None = None, qd: ArrayLike | None = None, *,
              t: float = 0.0, inputs: Sequence[str] | None = None,
              outputs: Sequence[str] | None = None,
              independent: Sequence[int | str] | str | None = None,
              jacobian: str = "analytic") -> Linearization:
    """The linearized motion (A, B, C, D) in the independent coordinates at (t, q, qd).

    The state-space formulation's partition (RN eqs 4-10; :class:`mbint.StateSpace`) splits
    q into independent v and dependent u; the motion is M^(v) v'' = Q^(t, v, v') and
    x = (v, v') - (v0, v0'), x' = A x + B u, y = C x + D u with

    - A = [0 I; J1 J2], J1 = dv''/dv, J2 = dv''/dv', analytic (RN eqs 26-35 from the
      model's derivative kernels, central differences in C only where a kernel is missing),
      or with ``jacobian="differences"`` central differences of v'' with the relative step
      :data:`DIFF_STEP` = eps^(1/3) times max(1, ``|x_j|``);
    - B = [0; M^^-1 E^T b_k] for input k entering as the generalized force b_k u_k
      (E = dq/dv).  An input is the name of a force element with an actuator (planar
      ``add_generalized_force``, planar and spatial ``add_spring_damper``: its tension
      [N] pulling the points together, spatial ``add_rotational_spring_damper``: its
      torque [N m] in the sense of the spring's), a URDF joint's name (its torque [N m],
      after ``set_joint_torques`` gave it a C drive), or a coordinate name (a generalized
      force on that coordinate: N on "m", N m on "rad"; a MechanicalSystem has no
      actuator elements, so its inputs are these);
    - C: a row per output: a coordinate (its position), ``"<coordinate>'"`` (its velocity)
      or a named output of the model (central differences through the full state);
      default C = I (y = x).  D = 0 (no output depends on the forces directly).

    Parameters
    ----------
    model : PlanarModel, SpatialModel or MechanicalSystem
    q, qd : array_like, shape (nq,), optional
        A consistent state (Phi = 0, Phi_q qd + Phi_t = 0), e.g. ``equilibrium(model).q``
        and zeros; default the model's initial state.
    t : float
        Time [s].
    inputs, outputs : sequence of str, optional
    independent : sequence of int or str, or "pivoting", optional
        The independent coordinates (default: Gauss-Jordan with full pivoting on Phi_q).
    jacobian : {"analytic", "differences"}

    Returns
    -------
    Linearization

    Raises
    ------
    ValueError
        q or qd of the wrong size, an inconsistent state, unknown inputs or outputs.
    """
    where = "linearize"
    _check_model(model, where)
    qd_default = model.qd0 if q is None else np.zeros(model.nq)
    q = _vector(model, "q", q, where, model.q0)
    qd = _vector(model, "qd", qd, where, qd_default)
    if jacobian not in ("analytic", "differences"):
        raise ValueError(f"{where}: jacobian must be 'analytic' or 'differences', "
                         f"got {jacobian!r}.")
    _check_consistent(model, t, q, qd, where)
    ss = StateSpace(model, t, q, qd, independent=independent)
    r = ss.evaluate(jacobians=True)
    nd, nq = ss.independent.size, model.nq
    E = np.zeros((nq, nd))
    E[ss.independent, np.arange(nd)] = 1.0
    E[ss.dependent] = r["H"]
    v, vd = ss.v, ss.vd
    J1, J2 = (r["J1"], r["J2"]) if jacobian == "analytic" else \
        _difference_jacobians(ss, v, vd, t)
    A = np.block([[np.zeros((nd, nd)), np.eye(nd)], [J1, J2]])
    cols, in_units = [], []
    for name in (inputs or ()):
        b, u = _input_column(model, name, q, t, where)
        cols.append(np.linalg.solve(r["M_hat"], E.T @ b))
        in_units.append(u)
    B = np.vstack([np.zeros((nd, len(cols))), np.array(cols).reshape(len(cols), nd).T])
    units = _units(model)
    s_names = list(ss.names) + [f"{n}'" for n in ss.names]
    s_units = [units[i] for i in ss.independent] + \
        [f"{units[i]}/s" if units[i] else "" for i in ss.independent]
    if outputs is None:
        C, o_names, o_units = np.eye(2 * nd), list(s_names), list(s_units)
    else:
        C, o_names, o_units = _output_rows(model, ss, E, list(outputs), v, vd, t, where)
    return Linearization(A=A, B=B, C=C, D=np.zeros((C.shape[0], B.shape[1])),
                         state_names=s_names, state_units=s_units,
                         input_names=[str(n) for n in (inputs or ())], input_units=in_units,
                         output_names=o_names, output_units=o_units,
                         independent=ss.independent.copy(), dependent=ss.dependent.copy(),
                         E=E, M_hat=np.array(r["M_hat"]), q=q, qd=qd, t=float(t),
                         jacobian=jacobian)


def _check_consistent(model, t, q, qd, where, tol=1e-6):
    """A clear error for a state off the constraints (StateSpace would Newton it there)."""
    if not model.nc:
        return
    phi = np.max(np.abs(model.phi(t, q)))
    scale = max(1.0, float(np.max(np.abs(q))))
    if phi > tol * scale:
        raise ValueError(f"{where}: q does not satisfy the constraints (max |Phi| = {phi:.3g}); "
                         f"use equilibrium(model).q or a consistent state.")


# ------------------------------------------------------------------ modes
@dataclass
class ModalAnalysis:
    """Eigen-analysis of the linearization at an equilibrium (:func:`modes`).

    Each vibrating mode is one eigenvalue s = -zeta w_n +- i w_d of A (one of a complex
    pair; a real eigenvalue is a mode of its own: overdamped, zeta = 1, or unstable,
    zeta = -1), sorted by undamped frequency.  Eigenvalues with |s| <= zero_tol max(1, max
    |s|) [1/s] are rigid-body modes, reported apart.

    Attributes
    ----------
    eigenvalues : ndarray, complex, shape (k,)
        The modes' s [1/s].
    frequencies : ndarray, shape (k,)
        Undamped natural frequencies |s| / (2 pi) [Hz].
    damped_frequencies : ndarray, shape (k,)
        |Im s| / (2 pi) [Hz] (0 for a real eigenvalue).
    damping_ratios : ndarray, shape (k,)
        -Re s / |s| (dimensionless; negative: unstable).
    shapes : ndarray, complex, shape (nd, k)
        Mode shapes in the independent coordinates, scaled so that the largest entry is 1.
    full_shapes : ndarray, complex, shape (nq, k)
        The same in all coordinates: dq = E dv, E = dq/dv from the partition.
    rigid_eigenvalues : ndarray, complex
        The rigid-body (zero) eigenvalues.
    rigid_shapes, rigid_full_shapes : ndarray, shape (nd, r), (nq, r)
        An orthonormal basis of the rigid-body displacements (the null space of J1).
    stable : bool
        No eigenvalue with a positive real part (beyond zero_tol).
    q : ndarray, shape (nq,)
    names, units : list of str
        The independent coordinates and their units.
    model : the model
    linearization : Linearization
    """

    eigenvalues: np.ndarray
    frequencies: np.ndarray
    damped_frequencies: np.ndarray
    damping_ratios: np.ndarray
    shapes: np.ndarray
    full_shapes: np.ndarray
    rigid_eigenvalues: np.ndarray
    rigid_shapes: np.ndarray
    rigid_full_shapes: np.ndarray
    stable: bool
    q: np.ndarray
    names: list
    units: list
    model: Any
    linearization: object

    def __len__(self):
        return self.frequencies.size

    def plot(self, k: int = 0, scale: float | None = None, ax: Axes | None = None) -> Axes:
        """Draw mode k's shape.

        A planar model is drawn at q (grey) and at q +- scale Re(dq_k) (coloured); any
        other model as a bar chart of Re(dq_k) per coordinate with its unit.

        Parameters
        ----------
        k : int
            Mode index (0: the lowest frequency).
        scale : float, optional
            Amplitude factor of the drawn shape (default: the largest displacement is 10 %
            of the drawing's size, or 0.3 rad for pure rotations).
        ax : matplotlib Axes, optional

        Returns
        -------
        matplotlib Axes
        """
        from ..plot import _axes

        if not 0 <= int(k) < len(self):
            raise IndexError(f"mode {k} does not exist ({len(self)} modes).")
        k = int(k)
        _, ax = _axes(ax)
        title = (f"mode {k}: f = {self.frequencies[k]:.4g} Hz, "
                 f"zeta = {self.damping_ratios[k]:.3g}")
        dq = np.real(self.full_shapes[:, k])
        if getattr(self.model, "kind", None) == "planar":
            _plot_planar(self, dq, scale, ax)
        else:
            units = _units(self.model)
            labels = [f"{n} [{u}]" if u else n for n, u in
                      zip(self.model.coordinate_names, units)]
            ax.bar(np.arange(dq.size), dq)
            ax.set_xticks(np.arange(dq.size))
            ax.set_xticklabels(labels, rotation=45, ha="right")
            ax.set_ylabel("relative amplitude (unit of each coordinate)")
        ax.set_title(title)
        return ax


def _plot_planar(res, dq, scale, ax):
    """The planar model at q and at q +- scale dq (animation's shapes)."""
    from ..animation import _shapes

    m, q = res.model, res.q
    polys0 = _shapes(m, q)[0]
    P = np.vstack([p for p in polys0 if len(p)] + [np.zeros((1, 2))])
    size = max(float(np.ptp(P[:, 0])), float(np.ptp(P[:, 1])), 1e-9)
    if scale is None:
        units = np.array(_units(m))
        lin = np.max(np.abs(dq[units == "m"]), initial=0.0)
        rot = np.max(np.abs(dq[units == "rad"]), initial=0.0)
        scale = 0.1 * size / lin if lin > 0.1 * size * rot else 0.3 / max(rot, 1e-300)
    for sign, color in ((0.0, "0.6"), (1.0, "C0"), (-1.0, "C3")):
        for p in _shapes(m, q + sign * scale * dq)[0]:
            ax.plot(p[:, 0], p[:, 1], "o-", color=color, ms=3,
                    lw=2 if sign else 1)
    ax.set_aspect("equal")
    ax.set_xlabel("x [m]")
    ax.set_ylabel("y [m]")
    ax.text(0.01, 0.01, f"shape x {scale:.3g}: +blue, -red", transform=ax.transAxes,
            fontsize=8)


def _warn_off_equilibrium(model, q, t, tol=1e-6):
    """A RuntimeWarning when q is not a static equilibrium (scaled residual > tol)."""
    import warnings

    if model.nc and np.max(np.abs(model.phi(t, q))) > tol * max(1.0, np.max(np.abs(q))):
        return  # linearize raises its own error
    st = _Statics(model, t, q, [])
    f, p = st.residual(np.concatenate([q, st.multipliers(q)]))
    F = max(float(np.max(np.abs(model.forces(t, q, np.zeros(model.nq))))), 1e-300)
    r = float(np.max(np.abs(f), initial=0.0))
    if r > tol * F:
        warnings.warn(f"modes: q is not a static equilibrium (max |Q - Phi_q^T lam| = {r:.3g}, "
                      f"{r / F:.3g} of max |Q|): the result is the spectrum of the "
                      f"linearization at q, not vibration modes.", RuntimeWarning, stacklevel=3)


def modes(model: Model, q: ArrayLike | None = None, *, t: float = 0.0,
          independent: Sequence[int | str] | str | None = None,
          zero_tol: float = 1e-6) -> ModalAnalysis:
    """Vibration modes of a mechanism at an equilibrium.

    The eigenvalues s of A of :func:`linearize` at (q, 0): undamped natural frequencies
    ``|s|`` / 2 pi [Hz], damped ``|Im s|`` / 2 pi [Hz], damping ratios -Re s / ``|s|``, mode shapes in
    the independent coordinates and in all coordinates (dq = E dv through the partition,
    E = dq/dv), sorted by frequency; rigid-body (zero) modes apart.

    Parameters
    ----------
    model : PlanarModel, SpatialModel or MechanicalSystem
    q : array_like, shape (nq,), optional
        The equilibrium (default: ``equilibrium(model, t=t).q``).  At a configuration that
        is not an equilibrium the result is the spectrum of the linearization there, not
        modes.
    t : float
        Time [s].
    independent : optional
        The independent coordinates (see :func:`linearize`).
    zero_tol : float
        Eigenvalues with ``|s|`` <= zero_tol max(1, max ``|s|``) [1/s] are rigid-body modes.

    Returns
    -------
    ModalAnalysis
    """
    _check_model(model, "modes")
    if q is None:
        q = equilibrium(model, t=t).q
    else:
        _warn_off_equilibrium(model, _vector(model, "q", q, "modes", None), t)
    lin = linearize(model, q, np.zeros(model.nq), t=t, independent=independent)
    nd = lin.independent.size
    s, X = np.linalg.eig(lin.A)
    big = max(1.0, float(np.max(np.abs(s), initial=0.0)))
    rigid = np.abs(s) <= zero_tol * big
    keep = ~rigid & ((np.abs(s.imag) <= 1e-12 * big) | (s.imag > 0))
    idx = np.flatnonzero(keep)
    idx = idx[np.argsort(np.abs(s[idx]), kind="stable")]
    ev = s[idx]
    shapes = X[:nd, idx].astype(complex)
    for j in range(shapes.shape[1]):
        i = int(np.argmax(np.abs(shapes[:, j])))
        if abs(shapes[i, j]) > 0:
            shapes[:, j] /= shapes[i, j]
    mag = np.abs(ev)
    from scipy.linalg import null_space

    rshape = null_space(lin.A[nd:, :nd]) if np.any(rigid) else np.zeros((nd, 0))
    units = _units(model)
    return ModalAnalysis(
        eigenvalues=ev, frequencies=mag / (2 * math.pi),
        damped_frequencies=np.abs(ev.imag) / (2 * math.pi),
        damping_ratios=-ev.real / np.where(mag > 0, mag, 1.0),
        shapes=shapes, full_shapes=lin.E @ shapes, rigid_eigenvalues=s[rigid],
        rigid_shapes=rshape, rigid_full_shapes=lin.E @ rshape,
        stable=bool(np.all(s.real <= zero_tol * big)), q=np.array(q, float),
        names=[lin.state_names[i] for i in range(nd)],
        units=[units[i] for i in lin.independent], model=model, linearization=lin)
