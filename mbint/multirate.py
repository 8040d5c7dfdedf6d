"""The fast/slow split of the multirate method ``singular_perturbation`` (SP paper:
Gil, Sanfelice, Nikravesh, *Numerical Integration Scheme Using Singular
Perturbation Method*, DETC2013).

The method integrates y = (x, z) with slow x and fast z; ``fast=`` names z.
:func:`propose_split` proposes it from the Jacobian at t0 (``fast="auto"`` makes the
kernel do the same, with the same C function ``mb_sp_propose``; without ``fast=`` no
variable is fast and the scheme is RK4), :func:`fast_state_indices`
turns bodies, body names, coordinate names and coordinate indices of a mechanism
into indices of its state y = (q, q') (the velocities follow their coordinates),
which is what :func:`mbint.simulate` hands to the kernel.
"""
from __future__ import annotations

from dataclasses import dataclass, field
import numbers
from typing import TYPE_CHECKING, Any, Callable

import numpy as np

from . import _core
from . import _validate as check
from ._typing import ArrayLike, FloatArray, IntArray

if TYPE_CHECKING:
    from .mbs._model_types import Model

__all__ = ["SplitProposal", "propose_split", "fast_state_indices", "MIN_RATIO"]

#: default smallest ratio of time scales (eigenvalue moduli) that makes a split
MIN_RATIO = 10.0


@dataclass(frozen=True)
class SplitProposal:
    """A proposed fast/slow split (see :func:`propose_split`).

    Attributes
    ----------
    fast, slow : ndarray of int
        Indices into y of the fast and the slow components (``fast`` is empty when
        the spectrum shows no separation of at least ``min_ratio``).
    participation : ndarray, shape (n,)
        Participation of each component in the fast modes: the diagonal of the
        spectral projector onto their invariant subspace (about 1 for a fast
        component, about 0 for a slow one); a component is fast above 1/2.
    eigenvalues : ndarray of complex, shape (n,)
        Eigenvalues of the Jacobian [1/s].
    ratio : float
        The largest ratio of consecutive eigenvalue moduli (moduli below 1e-3 of the
        largest counted as that floor, so that zero eigenvalues do not attract the
        split).
    threshold : float
        The smallest modulus counted as fast [1/s].
    names : tuple of str
        For a mechanism: the names of the fast components (``"<coordinate>"`` for
        q, ``"d/dt <coordinate>"`` for q'); empty otherwise.
    coordinates : ndarray of int
        For a mechanism: the coordinates (indices into q) whose position or velocity
        is fast; ``simulate(..., fast=proposal.coordinates)`` uses them with both.
    """

    fast: np.ndarray
    slow: np.ndarray
    participation: np.ndarray
    eigenvalues: np.ndarray
    ratio: float
    threshold: float
    names: tuple = ()
    coordinates: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.intp))

    def __repr__(self) -> str:
        what = list(self.names) if self.names else self.fast.tolist()
        return (f"SplitProposal(fast={what}, ratio={self.ratio:.3g}, "
                f"threshold={self.threshold:.3g} 1/s)")


def _fd_jacobian(fun: Callable[..., Any], t0: float, y0: Any, args: tuple[Any, ...]) -> FloatArray:
    """Forward differences of fun(t0, y) at y0 (n calls)."""
    f0 = np.asarray(fun(t0, y0, *args), dtype=float).reshape(-1)
    n = y0.size
    J = np.empty((n, n))
    for j in range(n):
        d = np.sqrt(np.finfo(float).eps) * max(1.0, abs(y0[j]))
        yp = y0.copy()
        yp[j] += d
        J[:, j] = (np.asarray(fun(t0, yp, *args), dtype=float).reshape(-1) - f0) / d
    return J


def propose_split(source: Any, t0: float = 0.0, y0: ArrayLike | None = None, *,
                  jac: ArrayLike | Callable[..., Any] | None = None, args: tuple[Any, ...] = (),
                  q0: ArrayLike | None = None, qd0: ArrayLike | None = None,
                  min_ratio: float = MIN_RATIO) -> SplitProposal:
    """Propose the fast variables of ``singular_perturbation`` from the Jacobian at t0.

    The eigenvalues of J = df/dy are sorted by modulus; the split is at the largest
    ratio of consecutive moduli (at least ``min_ratio``), and a component of y is
    fast when its participation in the fast modes (the diagonal of the spectral
    projector onto their invariant subspace, from the ordered real Schur form) is
    above 1/2.  Accept it (``fast=proposal.fast``, or ``fast="auto"``: the method
    then proposes the same split itself) or override it.

    The proposal sees time scales only through the Jacobian.  Zero eigenvalues
    (constraint and rigid-body modes) are slow, and any nonzero modes above them
    count as fast when the next smaller modulus is below 1e-3 of the largest: a
    mechanism with one time scale and constraints (a pendulum) gets a split it does
    not need, and the pendulum with a particle at its horizontal rest position (where
    the bar's own eigenvalues vanish) gets the right one.  Look at the proposal
    before accepting it.

    Parameters
    ----------
    source : ndarray (n, n), callable, PlanarModel or MechanicalSystem
        The Jacobian itself; or ``fun(t, y, *args)`` of :func:`mbint.solve_ivp`
        (with ``y0``, and ``jac`` as there: a matrix or ``jac(t, y, *args)``;
        forward differences otherwise); or a mechanism (its index-1 formulation
        y = (q, q'), analytic Jacobian).
    t0 : float
        Time [s] of the Jacobian.
    y0 : array_like, shape (n,)
        State for a callable ``source``.
    jac : array_like or callable, optional
    args : tuple
        Extra arguments of ``fun`` and ``jac``.
    q0, qd0 : array_like, shape (nq,), optional
        State of a mechanism (default: its initial state).
    min_ratio : float
        Smallest ratio of time scales that makes a split (default 10).

    Returns
    -------
    SplitProposal

    Examples
    --------
    >>> from mbint import models, multirate
    >>> multirate.propose_split(models.pendulum_particle()).names
    ('particle.x', 'particle.y', 'd/dt particle.x', 'd/dt particle.y')
    """
    min_ratio = check.positive("min_ratio", min_ratio)
    args = tuple(args) if isinstance(args, (tuple, list)) else (args,)
    names = None
    nq = None
    if getattr(source, "kind", None) in ("planar", "spatial", "system"):  # a mechanism
        model = source
        nq = model.nq
        q = model.q0 if q0 is None else np.asarray(q0, float).reshape(-1)
        qd = model.qd0 if qd0 is None else np.asarray(qd0, float).reshape(-1)
        if q.size != nq or qd.size != nq:
            raise ValueError(f"q0 and qd0 must have nq = {nq} entries.")
        J = np.asarray(_core.mech_eval(model._mech_handle(), "jac", float(t0), q, qd))
        cn = list(model.coordinate_names)
        names = cn + [f"d/dt {c}" for c in cn]
    elif callable(source):
        if y0 is None:
            raise ValueError("y0: give the state at which to propose the split.")
        y = check.float_vector("y0", y0)
        if jac is None:
            J = _fd_jacobian(source, float(t0), y, args)
        elif callable(jac):
            J = np.asarray(jac(float(t0), y, *args), dtype=float)
        else:
            J = np.asarray(jac, dtype=float)
        if J.shape != (y.size, y.size):
            raise ValueError(f"jac must have shape ({y.size}, {y.size}), got {J.shape}.")
    else:
        J = np.asarray(source, dtype=float)
        if J.ndim != 2 or J.shape[0] != J.shape[1]:
            raise ValueError(f"source: a square Jacobian, a callable or a mechanism, got an "
                             f"array of shape {J.shape}.")
    if not np.all(np.isfinite(J)):
        raise ValueError("The Jacobian at t0 is not finite.")
    r = _core.sp_propose(np.asfortranarray(J), min_ratio=float(min_ratio))
    fast = np.asarray(r["fast"], dtype=np.intp)
    slow = np.setdiff1d(np.arange(J.shape[0]), fast).astype(np.intp)
    coords = np.zeros(0, dtype=np.intp)
    if nq is not None:
        coords = np.unique(fast % nq).astype(np.intp)
    return SplitProposal(fast=fast, slow=slow, participation=np.asarray(r["participation"]),
                         eigenvalues=np.asarray(r["eigenvalues"]), ratio=float(r["ratio"]),
                         threshold=float(r["threshold"]),
                         names=tuple(names[i] for i in fast) if names else (),
                         coordinates=coords)


def fast_state_indices(model: Model, fast: Any, t0: float = 0.0, q0: ArrayLike | None = None,
                       qd0: ArrayLike | None = None) -> IntArray:
    """Indices into y = (q, q') of the fast variables of a mechanism.

    Parameters
    ----------
    model : PlanarModel, SpatialModel or MechanicalSystem
    fast : item or sequence of items
        Each item is a body of a PlanarModel or SpatialModel (a Body or its name), a
        coordinate name (an entry of ``model.coordinate_names``, e.g.
        ``"particle.x"``) or a coordinate index into q (int, 0 <= i < nq).  The
        velocity of every fast coordinate is fast too: coordinate i gives the state
        indices i and nq + i.  A body brings those of its coordinates that a force or
        a constraint acts on: whose acceleration depends on the state, a nonzero row
        of d q''/d(q, q') (:meth:`jacobian` of the index-1 ODE at (t0, q0, qd0)).  A
        coordinate that nothing acts on (the free rotation of the particle of
        ``models.pendulum_particle``, pulled by a spring at its centre) moves at
        constant velocity, has no time scale, and would make the fast block g_z
        singular: it stays slow.  Name a coordinate itself to make it fast
        regardless.
    t0, q0, qd0 : optional
        The state at which a body's coordinates are examined (default: t = 0 and the
        model's initial state).

    Returns
    -------
    ndarray of int
        Sorted state indices.

    Raises
    ------
    ValueError
        Unknown name, the ground, a body that nothing acts on, an index out of range,
        an item given twice (also a coordinate named twice, through its body and its
        name), no item, or every coordinate.
    """
    nq = model.nq
    if isinstance(fast, (str, numbers.Integral)) or hasattr(fast, "coords"):
        items = [fast]
    elif isinstance(fast, np.ndarray):
        items = fast.reshape(-1).tolist()
    else:
        try:
            items = list(fast)
        except TypeError:
            raise ValueError(f"fast: a body, a body or coordinate name, a coordinate index, or "
                             f"a sequence of them, got {fast!r}.") from None
    names = list(model.coordinate_names)
    coords = []
    acted: list[bool] = []  # per coordinate: something acts on it (computed for the first body)

    def add(c: int, item: Any) -> None:
        if c in coords:
            raise ValueError(f"fast: coordinate {names[c]!r} is given twice (by {item!r}).")
        coords.append(c)

    def add_body(body: Any, item: Any) -> None:
        if not acted:
            acted.extend(_acted_on(model, t0, q0, qd0))
        chosen = [c for c in body.coords if acted[c]]
        if not chosen:
            raise ValueError(f"fast: body {body.name!r}: no force or constraint acts on its "
                             f"coordinates (their accelerations do not depend on the state), "
                             f"so they have no time scale; it belongs to the slow variables.")
        for c in chosen:
            add(c, item)

    for item in items:
        if hasattr(item, "coords") and hasattr(item, "is_ground"):  # a Body
            if item.is_ground:
                raise ValueError("fast: the ground has no coordinates.")
            if getattr(item, "model", model) is not model:
                raise ValueError(f"fast: body {item.name!r} belongs to another model.")
            add_body(item, item)
        elif isinstance(item, str):
            if item in names:
                add(names.index(item), item)
                continue
            body = None
            if model.kind in ("planar", "spatial"):
                try:
                    body = model.body(item)  # type: ignore[union-attr]
                except (ValueError, KeyError, IndexError, TypeError):
                    body = None
            if body is not None and body.is_ground:
                raise ValueError("fast: the ground has no coordinates.")
            if body is None:
                raise ValueError(f"fast: {item!r} is neither a body nor a coordinate of "
                                 f"{getattr(model, 'name', 'the model')} (coordinates: "
                                 f"{', '.join(names)}).")
            add_body(body, item)
        elif isinstance(item, (numbers.Integral, np.integer)) and not isinstance(item, bool):
            if not 0 <= int(item) < nq:
                raise ValueError(f"fast: coordinate index {item} is out of range for nq = {nq} "
                                 f"(the velocities follow their coordinates).")
            add(int(item), item)
        else:
            raise ValueError(f"fast: a body, a body or coordinate name, or a coordinate index, "
                             f"got {item!r}.")
    if not coords:
        raise ValueError("fast: no fast variable given; the scheme needs at least one fast and "
                         "one slow variable.")
    if len(coords) >= nq:
        raise ValueError(f"fast: all {nq} coordinates are fast; at least one must be slow.")
    c = np.array(sorted(coords), dtype=np.intp)
    return np.concatenate([c, c + nq])


def _acted_on(model: Any, t0: float, q0: Any, qd0: Any) -> list[bool]:
    """Per coordinate of the mechanism: whether its acceleration depends on the state
    at (t0, q0, qd0) (a nonzero row of d q''/d(q, q'), the index-1 ODE's Jacobian)."""
    q = model.q0 if q0 is None else np.asarray(q0, float)
    qd = model.qd0 if qd0 is None else np.asarray(qd0, float)
    J = np.asarray(model.jacobian(t0, np.concatenate([q, qd])), float)
    return [bool(v) for v in np.any(J[model.nq:] != 0, axis=1)]
