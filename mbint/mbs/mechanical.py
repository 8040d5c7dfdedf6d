"""A mechanism you derived yourself: ``mbint.MechanicalSystem``.

The equations

    M(q) q'' + Phi_q(t, q)^T lambda = Q(t, q, q'),      Phi(t, q) = 0

in any coordinates (relative angles, for example), given as Python callables or
as C functions (``scipy.LowLevelCallable`` / ctypes).  Every kernel that depends
on time takes it first, as SciPy's ``f(t, y)``: ``constraints(t, q)``,
``gamma(t, q, qd)``, ``forces(t, q, qd)``; ``mass(q)`` and ``geometry(q)`` have
no t.  The system becomes the
same C kernel table (``mb_mech``, csrc/mbs/mech.h) as a :class:`PlanarModel`, so
:func:`mbint.simulate` runs it with every method; derivatives you do not give
are taken by central differences in C.
"""
from __future__ import annotations

import numbers
from typing import Any, Callable, Sequence

import numpy as np

from .. import _core
from ._kernels import Kernels
from .._typing import ArrayLike, FloatArray, FloatOrArray, OutputFun
from .._pickling import CFunctionRef, c_function_ref
from .._validate import as_capsule

__all__ = ["MechanicalSystem"]


def _columns(v: Any, n: int) -> FloatArray:
    """v as (n, m): one point (n,) becomes one column."""
    a = np.asarray(v, float)
    if a.ndim == 1:
        a = a[:, None]
    if a.ndim != 2 or a.shape[0] != n:
        raise ValueError(f"q and qd must have shape ({n},) or ({n}, m), got {np.shape(v)}.")
    return a

#: C signatures of the LowLevelCallable form of each kernel: the argument lists of
#: csrc/mbs/mech.h, with the callable's user_data first (the binding passes it there).
C_SIGNATURES = {
    "mass": "int (void *, const double *q, double *M, long ld)",
    "forces": "int (void *, double t, const double *q, const double *qd, double *Q)",
    "constraints": "int (void *, double t, const double *q, double *phi)",
    "constraint_jacobian": "int (void *, double t, const double *q, double *Pq, long ld)",
    "constraint_t": "int (void *, double t, const double *q, double *phi_t)",
    "gamma": "int (void *, double t, const double *q, const double *qd, double *gamma)",
    "forces_q": "int (void *, double t, const double *q, const double *qd, double *out, long ld)",
    "forces_qd": "int (void *, double t, const double *q, const double *qd, double *out, long ld)",
    "gamma_q": "int (void *, double t, const double *q, const double *qd, double *out, long ld)",
    "gamma_qd": "int (void *, double t, const double *q, const double *qd, double *out, long ld)",
    "phiq_x_q": "int (void *, double t, const double *q, const double *x, double *out, long ld)",
    "phiqT_lam_q":
        "int (void *, double t, const double *q, const double *lam, double *out, long ld)",
}


def _convert_kernels(given, where):
    """The kernels as mech_system takes them: capsules, callables, arrays, False."""
    kernels = {}
    for k, v in given.items():
        if v is None:
            kernels[k] = None
            continue
        if k == "constraint_t" and (v is False or (isinstance(v, numbers.Number) and v == 0)):
            kernels[k] = False
            continue
        cap = as_capsule(v)
        if cap is not None:
            kernels[k] = cap
        elif callable(v):
            kernels[k] = v
        elif k == "mass":
            kernels[k] = np.asarray(v, dtype=float)
        else:
            raise ValueError(f"{where}: {k} must be callable or a LowLevelCallable, got {v!r}.")
    return kernels


class MechanicalSystem(Kernels):
    """Constrained mechanical system from user kernels.

    Every kernel that depends on time takes it first, as SciPy's ``f(t, y)``;
    t is a float in s and q, qd, x, lam are 1-D float arrays of one state (the
    kernels are called once per point, never with a batch).

    Parameters
    ----------
    mass : callable, array_like or LowLevelCallable
        ``mass(q) -> (nq, nq)``, or a constant (nq, nq) matrix (kg, kg m^2).
    forces : callable or LowLevelCallable
        ``forces(t, q, qd) -> (nq,)``: every applied force (gravity included),
        in N (N m for rotational coordinates).
    constraints : callable or LowLevelCallable, optional
        ``constraints(t, q) -> (nc,)``, Phi; None for an unconstrained system.
    constraint_jacobian : callable or LowLevelCallable, optional
        ``constraint_jacobian(t, q) -> (nc, nq)``, Phi_q.
    gamma : callable or LowLevelCallable, optional
        ``gamma(t, q, qd) -> (nc,)``, the right-hand side of Phi_q q'' = gamma;
        None: central differences of Phi_q along (t + s, q + s qd).
    nq : int, optional
        Number of coordinates (default: from q0 or a constant mass).
    q0, qd0 : array_like, shape (nq,), optional
        Initial state (default zeros).
    energy : callable, optional
        ``energy(t, q, qd)`` returning the total energy in J or a pair
        (kinetic, potential); with a total only, kinetic = qd^T M qd / 2.  Used
        by :meth:`energy` and :meth:`Trajectory.energy`.
    constraint_t : callable, LowLevelCallable, 0 or None
        ``constraint_t(t, q) -> (nc,)``, Phi_t; 0 (or False): the constraints
        do not depend on t; None: central differences in t.
    forces_q, forces_qd : callable or LowLevelCallable, optional
        ``(t, q, qd) -> (nq, nq)``.
    gamma_q, gamma_qd : callable or LowLevelCallable, optional
        ``(t, q, qd) -> (nc, nq)``.
    phiq_x_q : callable or LowLevelCallable, optional
        ``(t, q, x) -> (nc, nq)``, (Phi_q x)_q for a vector x of size nq.
    phiqT_lam_q : callable or LowLevelCallable, optional
        ``(t, q, lam) -> (nq, nq)``, (Phi_q^T lam)_q for multipliers lam of size nc.
    nc : int, optional
        Number of constraints (required only when they are C functions).
    names : sequence of str, optional
        Names of the coordinates (plots).
    units : sequence of str, optional
        Unit of each coordinate (``"m"``, ``"rad"``, ...), for plot labels and
        :meth:`Trajectory.to_xarray`; default unknown (``""``).
    geometry : callable, optional
        ``geometry(q) -> list of (k, 2) arrays``: polylines (x, y in m) to draw
        for :meth:`Trajectory.animate`; q of shape (nq,).
    name : str

    Attributes
    ----------
    outputs : dict
        Named outputs ``fn(t, q, qd)`` (see :meth:`add_output`).
    settings : dict
        Recommended step and tolerance options of :func:`mbint.simulate`, as
        ``PlanarModel.settings`` (empty: simulate's defaults).
    description : str

    Notes
    -----
    C kernels have the signatures of :data:`C_SIGNATURES` (the mb_mech slots,
    ``ptrdiff_t`` as ``long``; matrices column-major with leading dimension
    ``ld``), time first as the Python kernels; they return 0 on success.  With
    only C kernels a run releases the GIL.
    """

    outputs: dict[str, OutputFun]
    settings: dict[str, Any]

    _SLOTS = ("mass", "forces", "constraints", "constraint_jacobian", "constraint_t", "gamma",
              "forces_q", "forces_qd", "gamma_q", "gamma_qd", "phiq_x_q", "phiqT_lam_q")

    kind = "system"

    def __init__(self, mass: ArrayLike | Callable[..., Any], forces: Callable[..., Any],
                 constraints: Callable[..., Any] | None = None,
                 constraint_jacobian: Callable[..., Any] | None = None,
                 gamma: Callable[..., Any] | None = None, *, nq: int | None = None,
                 q0: ArrayLike | None = None, qd0: ArrayLike | None = None,
                 energy: Callable[..., Any] | None = None,
                 constraint_t: Callable[..., Any] | None = None,
                 forces_q: Callable[..., Any] | None = None,
                 forces_qd: Callable[..., Any] | None = None,
                 gamma_q: Callable[..., Any] | None = None,
                 gamma_qd: Callable[..., Any] | None = None,
                 phiq_x_q: Callable[..., Any] | None = None,
                 phiqT_lam_q: Callable[..., Any] | None = None, nc: int | None = None,
                 names: Sequence[str] | None = None, units: Sequence[str] | None = None,
                 geometry: Callable[..., Any] | None = None, name: str = "system") -> None:
        self.name = str(name)
        where = f"MechanicalSystem {self.name!r}"
        given = dict(mass=mass, forces=forces, constraints=constraints,
                     constraint_jacobian=constraint_jacobian, constraint_t=constraint_t,
                     gamma=gamma, forces_q=forces_q, forces_qd=forces_qd, gamma_q=gamma_q,
                     gamma_qd=gamma_qd, phiq_x_q=phiq_x_q, phiqT_lam_q=phiqT_lam_q)
        kernels = _convert_kernels(given, where)
        if kernels["forces"] is None:
            raise ValueError(f"{where}: forces is required.")

        # sizes
        if nq is None:
            if q0 is not None:
                nq = np.size(q0)
            elif isinstance(kernels["mass"], np.ndarray):
                nq = kernels["mass"].shape[0]
            else:
                raise ValueError(f"{where}: give nq or q0.")
        nq = int(nq)
        if nq < 1:
            raise ValueError(f"{where}: nq must be positive, got {nq}.")
        self._nq = nq
        self._q0 = self._state(where, "q0", q0)
        self._qd0 = self._state(where, "qd0", qd0)
        if isinstance(kernels["mass"], np.ndarray):
            M = kernels["mass"]
            if M.shape != (nq, nq) or not np.all(np.isfinite(M)):
                raise ValueError(f"{where}: mass must be callable or a finite ({nq}, {nq}) array.")
        if (kernels["constraints"] is None) != (kernels["constraint_jacobian"] is None):
            raise ValueError(f"{where}: give both constraints and constraint_jacobian, or neither.")
        if kernels["constraints"] is None:
            nc = 0
        elif nc is None:
            if not callable(kernels["constraints"]):
                raise ValueError(f"{where}: nc is required when the constraints are a C function.")
            nc = np.size(kernels["constraints"](0.0, self._q0.copy()))
        self._nc = int(nc)
        if energy is not None and not callable(energy):
            raise ValueError(f"{where}: energy must be callable energy(t, q, qd).")
        if geometry is not None and not callable(geometry):
            raise ValueError(f"{where}: geometry must be callable geometry(q).")
        self._energy = energy
        self.geometry_fn = geometry
        self.names = [f"q[{k}]" for k in range(nq)] if names is None else [str(s) for s in names]
        if len(self.names) != nq:
            raise ValueError(f"{where}: names must have {nq} entries.")
        self.units = [""] * nq if units is None else [str(u) for u in units]
        if len(self.units) != nq:
            raise ValueError(f"{where}: units must have {nq} entries, got {len(self.units)}.")
        self.outputs = {}
        self.description = ""
        self.settings = {}
        self._given = given
        self._kernels = kernels
        self._build_handle()
        self._check_shapes(where)

    def _build_handle(self) -> Any:
        kernels = self._kernels
        self._handle = _core.mech_system(
            self._nq, self._nc, kernels["mass"], kernels["forces"], kernels["constraints"],
            kernels["constraint_jacobian"], kernels["constraint_t"], kernels["gamma"],
            kernels["forces_q"], kernels["forces_qd"], kernels["gamma_q"], kernels["gamma_qd"],
            kernels["phiq_x_q"], kernels["phiqT_lam_q"])

    # ---------------------------------------------------------------- pickling
    def __getstate__(self) -> dict[str, Any]:
        """The kernels as given (C functions of a shared library by name, see
        :mod:`mbint._pickling`), never the C handle."""
        state = {k: v for k, v in self.__dict__.items() if k not in ("_handle", "_kernels")}
        given = {}
        for k, v in self._given.items():
            if as_capsule(v) is not None:
                v = c_function_ref(v, f"MechanicalSystem {self.name!r}: kernel {k}")
            given[k] = v
        state["_given"] = given
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        given = {k: (v.load() if isinstance(v, CFunctionRef) else v)
                 for k, v in state["_given"].items()}
        self.__dict__.update(state)
        self._given = given
        self._kernels = _convert_kernels(given, f"MechanicalSystem {self.name!r}")
        self._build_handle()

    def _state(self, where: str, what: str, v: Any) -> FloatArray:
        if v is None:
            return np.zeros(self._nq)
        a = np.array(v, dtype=float).reshape(-1)
        if a.size != self._nq or not np.all(np.isfinite(a)):
            raise ValueError(f"{where}: {what} must be {self._nq} finite numbers.")
        return a

    def _check_shapes(self, where: str) -> None:
        """Evaluate every Python kernel once at (q0, qd0, t = 0): a wrong shape is
        reported here, naming the kernel, rather than in the middle of a run."""
        q, qd, lam = self._q0, self._qd0, np.zeros(self._nc)
        calls = {
            "mass": ("mass", 0.0, q, None), "forces": ("forces", 0.0, q, qd),
            "constraints": ("phi", 0.0, q, None), "constraint_jacobian": ("phi_q", 0.0, q, None),
            "constraint_t": ("phi_t", 0.0, q, None), "gamma": ("gamma", 0.0, q, qd),
            "forces_q": ("forces_q", 0.0, q, qd), "forces_qd": ("forces_qd", 0.0, q, qd),
            "gamma_q": ("gamma_q", 0.0, q, qd), "gamma_qd": ("gamma_qd", 0.0, q, qd),
            "phiq_x_q": ("phiq_x_q", 0.0, q, qd), "phiqT_lam_q": ("phiqT_lam_q", 0.0, q, lam),
        }
        for slot, (kernel, t, a, b) in calls.items():
            if not callable(self._kernels[slot]):
                continue
            if self._nc == 0 and slot not in ("mass", "forces", "forces_q", "forces_qd"):
                continue
            try:
                self._eval(kernel, t, a, b)
            except (ValueError, TypeError, RuntimeError) as exc:
                raise ValueError(f"{where}: {slot} at (q0, qd0, t = 0): {exc}") from exc

    # ---------------------------------------------------------------- sizes
    @property
    def nq(self) -> int:
        return self._nq

    @property
    def nc(self) -> int:
        return self._nc

    @property
    def q0(self) -> FloatArray:
        return self._q0.copy()

    @property
    def qd0(self) -> FloatArray:
        return self._qd0.copy()

    @property
    def coordinate_names(self) -> list[str]:
        return list(self.names)

    @property
    def constraint_names(self) -> list[str]:
        return [f"constraint[{k}]" for k in range(self._nc)]

    @property
    def coordinate_units(self) -> list[str]:
        """Unit of every coordinate (``units=``; ``""`` when not given)."""
        return list(getattr(self, "units", [""] * self._nq))

    @property
    def constraint_units(self) -> list[str]:
        """Unit of every constraint row: unknown (``""``) for a MechanicalSystem."""
        return [""] * self._nc

    def set_initial(self, q: ArrayLike | None = None, qd: ArrayLike | None = None) -> None:
        """Replace the initial coordinates and/or velocities."""
        where = f"MechanicalSystem {self.name!r}"
        if q is not None:
            self._q0 = self._state(where, "q", q)
        if qd is not None:
            self._qd0 = self._state(where, "qd", qd)

    def add_output(self, name: str, fn: OutputFun) -> None:
        """A named output ``fn(t, q, qd)``, evaluated by :meth:`Trajectory.output`.

        Parameters
        ----------
        name : str
        fn : callable
            ``fn(t, q, qd)`` with t of shape (m,) in s and q, qd of shape
            (nq, m) (a trajectory: coordinates first, points along the last
            axis); returns an array whose last axis has length m, e.g.
            ``lambda t, q, qd: q[0]``.
        """
        if not callable(fn):
            raise ValueError(f"add_output {name!r}: fn must be callable fn(t, q, qd).")
        self.outputs[str(name)] = fn

    def _mech_handle(self) -> Any:
        return self._handle

    def kinetic_potential(self, t: ArrayLike, q: ArrayLike,
                          qd: ArrayLike) -> tuple[FloatArray, FloatArray]:
        """(kinetic, potential) energy in J at m points from the user's energy function.

        Parameters
        ----------
        t : float or array_like, shape (m,)
            Time [s].
        q, qd : array_like, shape (nq,) or (nq, m)

        Returns
        -------
        kinetic, potential : ndarray, shape (m,) (m = 1 for one point)

        Raises
        ------
        ValueError
            When the system was made without ``energy``.
        """
        if self._energy is None:
            raise ValueError(f"MechanicalSystem {self.name!r} has no energy function; "
                             "pass energy=energy(t, q, qd).")
        q, qd = _columns(q, self._nq), _columns(qd, self._nq)
        m = max(q.shape[1], qd.shape[1], np.size(t))
        q = np.broadcast_to(q, (self._nq, m))
        qd = np.broadcast_to(qd, (self._nq, m))
        t = np.broadcast_to(np.asarray(t, float), (m,))
        T = np.empty(m)
        V = np.empty(m)
        for k in range(m):
            qk, qdk = q[:, k].copy(), qd[:, k].copy()
            e = self._energy(float(t[k]), qk, qdk)
            if np.ndim(e) == 0:
                M = np.asarray(self.mass(qk))
                T[k] = 0.5 * qdk @ M @ qdk
                V[k] = float(e) - T[k]
            else:
                T[k], V[k] = (float(v) for v in e)
        return T, V

    def energy(self, t: ArrayLike = 0.0, q: ArrayLike | None = None,
               qd: ArrayLike | None = None) -> tuple[FloatOrArray, FloatOrArray]:
        """Kinetic and potential energy in J from the user's energy function.

        Parameters
        ----------
        t : float or array_like, shape (m,)
            Time [s].
        q, qd : array_like, shape (nq,) or (nq, m), optional
            Default: the initial state.

        Returns
        -------
        kinetic, potential : float, or ndarray of shape (m,) for m points
        """
        q, qd = self._q(q), self._qd(qd)
        T, V = self.kinetic_potential(t, q, qd)
        if np.ndim(q) == 1 and np.ndim(qd) == 1 and np.ndim(t) == 0:
            return float(T[0]), float(V[0])
        return T, V

    def __repr__(self) -> str:
        return f"<MechanicalSystem {self.name!r}: nq = {self._nq}, nc = {self._nc}>"
