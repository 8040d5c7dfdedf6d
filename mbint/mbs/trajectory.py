"""``mbint.Trajectory``: the result of :func:`mbint.simulate`.

Time series are component-major, as SciPy's ``res.y``: ``traj.q`` has shape
(nq, m), column k belonging to the output time ``t[k]``, so ``traj.q[2]`` is the
history of coordinate 2.  ``traj.time_major`` holds the transposed views (m, nq)
for code that wants one row per time (pandas).  Energies, constraint violations
and the mechanism's outputs are evaluated at the output points by the model's C
kernels (or, for a :class:`MechanicalSystem`, its own functions).  The pictures
(``plot``, ``plot_energy``, ``plot_violation``, ``animate``) are drawn by
:mod:`mbint.plot` and :mod:`mbint.animation`, imported on first use (they import
matplotlib, and pillow for GIFs).
"""
from __future__ import annotations

from collections import namedtuple
from typing import TYPE_CHECKING, overload

import numpy as np

if TYPE_CHECKING:  # annotations only
    from os import PathLike
    from pathlib import Path
    from typing import Any, Sequence
    import xarray
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure
    from .._typing import ArrayLike, FloatArray
    from ._model_types import Model
    from ..animation import Animation
    from .reactions import JointReaction
    from ..scene3d import View3D

from .. import _status
from ..dense import DenseOutput

__all__ = ["Trajectory", "TimeMajor", "Energy", "Violation", "Animation"]

Energy = namedtuple("Energy", "kinetic potential total")
Energy.__doc__ = "Energies in J at the output points, each of shape (m,)."
Violation = namedtuple("Violation", "position velocity acceleration")
Violation.__doc__ = ("Constraint residuals at the output points: the max-norm over the rows, "
                     "shape (m,), or with per_row=True every row, shape (nc, m): Phi, "
                     "Phi_q qd + Phi_t, Phi_q qdd - gamma.")


class TimeMajor:
    """The time series of a :class:`Trajectory` with one row per output time.

    A read-only namespace of transposed views (no copies) of the trajectory's
    arrays: ``q``, ``qd``, ``qdd`` of shape (m, nq) and ``lam`` of shape (m, nc);
    row k belongs to ``t[k]`` (``t``, shape (m,), is there too).  For code that feeds rows to pandas
    (``pandas.DataFrame(traj.time_major.q, index=traj.t)``).
    """

    __slots__ = ("_traj",)
    _traj: Trajectory

    def __init__(self, traj: Trajectory) -> None:
        object.__setattr__(self, "_traj", traj)

    def __setattr__(self, name, value):
        raise AttributeError("Trajectory.time_major is read-only; it shows the transposed "
                             "arrays of the trajectory.")

    @property
    def t(self) -> FloatArray:
        """Output times, shape (m,) [s]."""
        return self._traj.t

    @property
    def q(self) -> FloatArray:
        """Coordinates, shape (m, nq)."""
        return self._traj.q.T

    @property
    def qd(self) -> FloatArray:
        """Velocities, shape (m, nq)."""
        return self._traj.qd.T

    @property
    def qdd(self) -> FloatArray:
        """Accelerations, shape (m, nq)."""
        return self._traj.qdd.T

    @property
    def lam(self) -> FloatArray:
        """Lagrange multipliers, shape (m, nc)."""
        return self._traj.lam.T

    def __repr__(self):
        return f"<time-major view of {self._traj!r}>"


_STATUS_PUBLIC = {_status.MB_OK: 0, _status.MB_TERMINATED: 1}


class _FullStateDense:
    """Dense output of a run on the state-space formulation: the reduced y = (v, v') of the
    integrator's own dense output, mapped to y = (q, qd) of shape (2 nq,) or (2 nq, k)
    through the run's log (the partition of the step containing t, Newton from the
    step's start; csrc/mbs/statespace.c ``mb_ss_recover``).

    It holds the model, not its C handle (taken from the model when needed), so it
    pickles as the model does and can be rebuilt from a saved trajectory
    (mbint/mbs/dataset.py)."""

    _OWN = ("reduced", "_model", "_handle", "_log", "_tol", "_max_iter", "_nq")

    def __init__(self, reduced, model, log, tol, max_iter, nq, handle=None):
        self.reduced = reduced
        self._model, self._handle, self._log, self._tol, self._max_iter, self._nq = \
            model, handle, log, tol, max_iter, nq
        self.t_min, self.t_max = getattr(reduced, "t_min", None), getattr(reduced, "t_max", None)

    def __getattr__(self, name):
        # only for attributes not found on self; its own are never delegated, so that an
        # instance being unpickled (no "reduced" yet) does not recurse
        if name.startswith("__") or name in self._OWN:
            raise AttributeError(name)
        return getattr(self.reduced, name)

    def __getstate__(self):
        state = dict(self.__dict__)
        state["_handle"] = None  # a PyCapsule: the model compiles its handle again
        return state

    def __call__(self, t):
        from .. import _core

        if self._handle is None:
            if not hasattr(self._model, "_mech_handle"):
                raise ValueError(f"sol: the full state of a state-space run needs the model's "
                                 f"kernels, and {self._model!r} has none (a MechanicalSystem is "
                                 f"not stored with a trajectory); sol_reduced gives the "
                                 f"integrated (v, v').")
            self._handle = self._model._mech_handle()
        scalar = np.ndim(t) == 0
        ts = np.atleast_1d(np.asarray(t, float))
        yr = np.asarray(self.reduced(ts), float).reshape(-1, len(ts))
        yf, _, _ = _core.mech_ss_recover(self._handle, ts, np.ascontiguousarray(yr.T),
                                         tol=self._tol, max_iter=self._max_iter, **self._log)
        yf = np.asarray(yf).T
        return yf[:, 0] if scalar else yf


class Trajectory:
    """Motion of a mechanism computed by :func:`mbint.simulate`.

    Time series are component-major as SciPy's ``res.y``: one row per
    coordinate (or constraint), one column per output time.

    Attributes
    ----------
    t : ndarray, shape (m,)
        Output times in s (every accepted step, or ``t_eval``).
    q, qd, qdd : ndarray, shape (nq, m)
        Coordinates, velocities and accelerations (q'' recomputed at the output
        points from the index-1 system, with the run's Baumgarte terms; for the
        DAE formulations M^-1 (Q - Phi_q^T lambda) with the integrated lambda;
        ``formulation="joint"``: from the index-1 system without Baumgarte terms, on
        first use after :func:`mbint.simulate`);
        ``q[:, k]`` is the state at ``t[k]``, ``q[i]`` the history of
        coordinate i.
    lam : ndarray, shape (nc, m)
        Lagrange multipliers (``M q'' + Phi_q^T lam = Q``): from the index-1 system,
        or the integrated ones of a DAE formulation (``formulation="joint"``: those of
        the body coordinates' index-1 system at each output, solved with ``qdd`` on
        first use of either after :func:`mbint.simulate`).  What they mean as forces:
        :meth:`reactions` (per joint and body, N and N m) and the drivers' outputs
        ``output("<driver>.torque")`` / ``output("<driver>.force")``.
    time_major : TimeMajor
        Read-only views with one row per time: ``time_major.q`` is ``q.T``,
        shape (m, nq) (also ``qd``, ``qdd``, ``lam``).
    options : dict
        The step and tolerance options the run used: ``rtol``, ``atol``,
        ``h``, ``first_step``, ``max_step``, ``min_step``, ``max_steps`` (each
        from the caller, else from ``model.settings``, else the default; see
        :func:`mbint.simulate`).
    model : PlanarModel or MechanicalSystem
    method, formulation : str
    status : int
        -1 the integration failed (the trajectory up to the failure is kept),
        0 reached the end, 1 a terminal event.
    status_code : int
        The C status (``mbint._status``).
    message : str
    success : bool
    stats : dict
        nfev, njev, nlu, nsteps, nreject, nfail.
    t_steps, h_steps, err_steps : ndarray
        End, size and normalized error estimate of every accepted step.
    sol : DenseOutput or None
        Continuous y = (q, qd) (the DAE formulations: (q, v, lambda[, mu])) with
        ``dense_output=True``; see :meth:`state`.
        With ``formulation="state_space"`` it maps the integrator's dense output of
        (v, v') (``sol_reduced``) to the full state.
    partitions : list of (float, list of str)
        ``formulation="state_space"`` only: the time [s] each partition was adopted
        and its independent coordinates; ``stats`` then also holds
        ``nrepartition`` (partition checks that ran Gauss-Jordan again),
        ``npartition_change`` (those that changed the coordinates),
        ``newton_iterations`` and ``newton_failures``; ``y_reduced`` (2 nd, m) is
        the integrated (v, v'), ``independent`` the indices of the last partition's
        independent coordinates, ``cond_max`` the largest cond_1(Phi_u) met, and
        ``partition_log`` the run's log (the full state at every accepted step and
        the partition of each step, from which ``sol`` maps the dense output).
    t_events : list of ndarray or None
        Per event, the k times [s] where it occurred, shape (k,).
    q_events, qd_events : list of ndarray (each (nq, k)) or None
        Per event, the states at those times, one column per occurrence (unlike
        :func:`mbint.solve_ivp`, whose ``y_events`` keep SciPy's (k, n) per event).
    initial : dict
        q0, qd0 actually used (after projection) and their residuals.
    sens_q, sens_qd : ndarray, shape (nq, np, m), or None
        ``simulate(..., sensitivities=[...])``: dq/dp and dq'/dp of every coordinate to
        every parameter at every output time, in [unit of q]/[unit of p] and
        [unit of q]/s/[unit of p] (:mod:`mbint.mbs.sensitivity`); None without.
    sens_y : ndarray, shape (n, np, m), or None
        The same of the formulation's integrated state (the DAEs' lambda included; the
        joint coordinates of ``formulation="joint"``); not stored by :meth:`save`.
    parameters : list of dict or None
        The parameters of ``sens_q``: ``name``, ``value``, ``unit`` (SI).
    baumgarte : tuple (alpha, beta)
    projected : bool
    """

    # the attributes above (a loaded trajectory's model is a dataset.StoredModel)
    model: Any
    t: FloatArray
    q: FloatArray
    qd: FloatArray
    _qdd: FloatArray | None  # qdd, or None until its first use (a joint run of simulate)
    _lam: FloatArray | None  # lam, likewise
    status: int
    status_code: int
    message: str
    success: bool
    stats: dict[str, Any]
    options: dict[str, Any]
    sol: DenseOutput | _FullStateDense | None
    t_events: list[FloatArray] | None
    q_events: list[FloatArray] | None
    qd_events: list[FloatArray] | None
    t_contacts: list[FloatArray] | None  # simulate with contact switching, or loaded
    _stored_outputs: dict[str, FloatArray]  # a loaded trajectory's outputs,
    _stored_output_units: dict[str, str]  # their units,
    _stored_sensors: dict[str, FloatArray]  # its sensors (m, n_components)
    _stored_sensor_meta: dict[str, Any]  # and theirs
    x_joint: FloatArray  # formulation="joint": the integrated joint coordinates,
    xd_joint: FloatArray  # their rates,
    sol_joint: DenseOutput | None  # and the dense output over the joint state
    _sensor_offsets: dict[str, FloatArray]  # a Simulator's actuator inputs (sensors)
    sens_q: FloatArray | None  # simulate(sensitivities=...): (nq, np, m)
    sens_qd: FloatArray | None
    sens_y: FloatArray | None
    parameters: list[dict[str, Any]] | None
    _energy: Energy | None
    _violation: Violation | None
    _dissipated: FloatArray | None

    @property
    def qdd(self) -> FloatArray:
        """Accelerations, shape (nq, m) (see the class docstring)."""
        if self.__dict__.get("_qdd") is None:  # a joint run of simulate: on first use
            self._solve_outputs()
        assert self._qdd is not None
        return self._qdd

    @qdd.setter
    def qdd(self, value: FloatArray | None) -> None:
        self._qdd = value

    @property
    def lam(self) -> FloatArray:
        """Lagrange multipliers, shape (nc, m) (see the class docstring)."""
        if self.__dict__.get("_lam") is None:  # a joint run of simulate: on first use
            self._solve_outputs()
        assert self._lam is not None
        return self._lam

    @lam.setter
    def lam(self, value: FloatArray | None) -> None:
        self._lam = value

    def _solve_outputs(self) -> None:
        """q'' and the multipliers of the model's index-1 system (no Baumgarte terms) at
        each output (q, q') (NaN where the state is not finite or the system singular):
        what a joint run of :func:`mbint.simulate` leaves to the first use of ``qdd`` or
        ``lam``."""
        nq, nc, m = self.model.nq, self.model.nc, len(self.t)
        qdd, lam = np.full((nq, m), np.nan), np.full((nc, m), np.nan)
        ok = np.all(np.isfinite(self.q), axis=0) & np.all(np.isfinite(self.qd), axis=0)
        if ok.any():
            a, lm = self.model.accelerations(self.t[ok], self.q[:, ok], self.qd[:, ok])
            qdd[:, ok], lam[:, ok] = a, lm
        if self.__dict__.get("_qdd") is None:
            self._qdd = qdd
        if self.__dict__.get("_lam") is None:
            self._lam = lam

    def __init__(self, model: Model, out: dict[str, Any], *, method: str, formulation: str,
                 baumgarte: tuple[float, float], projected: bool, initial: dict[str, Any],
                 dense_output: bool, has_events: bool,
                 options: dict[str, Any] | None = None) -> None:
        nq, nc = model.nq, model.nc
        # the C result is time-major (row k at t[k]); store component-major
        self.model = model
        self.t = np.asarray(out["t"], float)
        m = len(self.t)
        # the formulation's state: (q, qd) for the ODEs, (q, v, lambda[, mu]) for the DAEs
        n_state = int(out.get("n_state", 2 * nq))
        y = np.asarray(out["y"], float).reshape(m, n_state)
        self.q = np.ascontiguousarray(y[:, :nq].T)
        self.qd = np.ascontiguousarray(y[:, nq:2 * nq].T)
        # q'' and lambda come component-major from the C core (simulate_py.c outputs)
        # None (a joint run of simulate): solved on first use (qdd, lam)
        qdd, lam = out["qdd"], out["lam"]
        self._qdd = None if qdd is None else np.asarray(qdd, float).reshape(nq, m)
        self._lam = None if lam is None else np.asarray(lam, float).reshape(nc, m)
        self.options = {} if options is None else dict(options)
        self.method = method
        self.formulation = formulation
        self.baumgarte = baumgarte
        self.projected = projected
        self.initial = initial
        self.status_code = out["status"]
        self.status = _STATUS_PUBLIC.get(self.status_code, -1)
        self.message = out["message"]
        self.success = self.status >= 0
        self.stats = {k: int(out[k]) for k in ("nfev", "njev", "nlu", "nsteps", "nreject", "nfail")}
        self.t_steps, self.h_steps, self.err_steps = out["hist_t"], out["hist_h"], out["hist_err"]
        self.sol = None
        if dense_output and len(out["dense_t"]):
            # the integrated state: (q, qd), or (v, v') on the state-space formulation
            n_int = np.shape(out["ss_y"])[-1] if "ss_y" in out else n_state
            self.sol = DenseOutput(out["dense_t"], out["dense_h"], out["hist_t"][-1],
                                   out["dense_deg"], out["dense_off"], out["dense_c"], n_int,
                                   method=method)  # which evaluates dense records (llm)
        if has_events:
            self.t_events = out["t_events"]
            ye = [np.asarray(v, float).reshape(-1, n_state) for v in out["y_events"]]
            self.q_events = [np.ascontiguousarray(v[:, :nq].T) for v in ye]
            self.qd_events = [np.ascontiguousarray(v[:, nq:2 * nq].T) for v in ye]
        else:
            self.t_events = self.q_events = self.qd_events = None
        self._energy = None
        self._violation = None
        self._dissipated = None
        self.sens_q = self.sens_qd = self.sens_y = None  # simulate(sensitivities=...)
        self.parameters = None

    # ------------------------------------------------------------- state space
    def _set_state_space(self, out, handle, tol, max_iter):
        """Attach what a run on the state-space formulation adds: the
        partitions, the statistics of the formulation, and a dense output of the
        full state (the reduced one mapped through the run's log)."""
        nq = self.model.nq
        parts = np.asarray(out["ss_parts"], dtype=int)
        names = self.model.coordinate_names
        self.partitions = [(float(t), [names[i] for i in p])
                           for t, p in zip(out["ss_part_t"], parts)]
        self.independent = parts[-1] if len(parts) else np.zeros(0, int)
        self.stats.update(nrepartition=int(out["nrepartition"]),
                          npartition_change=int(out["npartition_change"]),
                          newton_iterations=int(out["ss_newton_iter"]),
                          newton_failures=int(out["ss_newton_fail"]))
        self.cond_max = float(out["ss_cond_max"])
        self.y_reduced = np.asarray(out["ss_y"], float).T  # (2 nd, m)
        log = dict(log_t=np.asarray(out["ss_log_t"], float),
                   log_part=np.asarray(out["ss_log_part"], np.intc),
                   log_y=np.asarray(out["ss_log_y"], float).reshape(-1, 2 * nq),
                   parts=parts.astype(np.intc))
        self.partition_log = log
        if self.sol is not None:
            self.sol_reduced = self.sol
            self.sol = _FullStateDense(self.sol_reduced, self.model, log,
                                       0.0 if tol is None else float(tol),
                                       0 if max_iter is None else int(max_iter), nq,
                                       handle=handle)

    def __repr__(self):
        return (f"<Trajectory {self.model.name!r} by {self.method}: {len(self.t)} points, "
                f"t in [{self.t[0] if len(self.t) else float('nan'):g}, "
                f"{self.t[-1] if len(self.t) else float('nan'):g}], status {self.status} "
                f"({self.message})>")

    @property
    def time_major(self) -> TimeMajor:
        """The time series with one row per output time: read-only views
        ``q``, ``qd``, ``qdd`` of shape (m, nq) and ``lam`` of shape (m, nc)."""
        return TimeMajor(self)

    # ---------------------------------------------------------------- values
    def state(self, t: ArrayLike) -> tuple[FloatArray, FloatArray]:
        """(q, qd) at arbitrary times from the dense output.

        Parameters
        ----------
        t : float or array_like, shape (k,)
            Times [s] within the span of the run.

        Returns
        -------
        q, qd : ndarray, shape (nq,) for a scalar t, (nq, k) for an array
        """
        if self.sol is None:
            raise ValueError("state: run simulate(..., dense_output=True) for the continuous "
                             "solution.")
        y = self.sol(t)
        nq = self.model.nq
        return y[:nq], y[nq:2 * nq]

    def energy(self) -> Energy:
        """Kinetic, potential and total energy at the output points.

        Returns
        -------
        Energy
            Named tuple (kinetic, potential, total) of arrays of shape (m,), in J.
        """
        if self._energy is None:
            if len(self.t) == 0:
                T = V = np.zeros(0)
            else:
                T, V = self.model.kinetic_potential(self.t, self.q, self.qd)
            self._energy = Energy(np.asarray(T), np.asarray(V), np.asarray(T) + np.asarray(V))
        return self._energy

    def violation(self, per_row: bool = False) -> Violation:
        """Constraint violation at position, velocity and acceleration level.

        The acceleration level uses the trajectory's q'': for the index-1 ODE from
        the index-1 system (round-off level without Baumgarte terms, ``-2 alpha Phi' -
        beta^2 Phi`` with them), for the DAE formulations ``M^-1 (Q - Phi_q^T
        lambda)`` with the integrated multipliers, so that each level shows the error
        of the integrated solution (LS paper Tables 1-7).

        Parameters
        ----------
        per_row : bool
            Return the residual of every constraint row, shape (nc, m), instead
            of its max-norm, shape (m,).

        Returns
        -------
        Violation
            position [m or rad], velocity [per s], acceleration [per s^2].
        """
        if self._violation is None:
            m = self.model
            if m.nc == 0 or len(self.t) == 0:
                z = np.zeros((m.nc, len(self.t)))
                self._violation = Violation(z, z, z)
            else:
                P = m.constraint_jacobian(self.t, self.q)
                pos = m.phi(self.t, self.q)
                vel = np.einsum("ijk,jk->ik", P, self.qd) + m.phi_t(self.t, self.q)
                acc = np.einsum("ijk,jk->ik", P, self.qdd) - m.gamma(self.t, self.q, self.qd)
                self._violation = Violation(pos, vel, acc)
        if per_row:
            return self._violation
        return Violation(*(np.abs(v).max(axis=0) if v.shape[0] else np.zeros(v.shape[1])
                           for v in self._violation))

    def output(self, name: str) -> FloatArray:
        """A named output of the model at the output points.

        Evaluates ``model.outputs[name](t, q, qd)`` with the trajectory's
        ``t`` (m,), ``q`` and ``qd`` (nq, m); a sensor's name gives
        :meth:`sensor` transposed (a sensor of one component: shape (m,)); an output that has a
        ``from_trajectory(traj)`` method is given the trajectory instead (a driver's
        ``"<driver>.torque"`` / ``"<driver>.force"``, which takes ``traj.lam``: see
        :func:`mbint.mbs.reactions.driver_effort`).  Units are in
        ``model.output_units[name]`` where the model knows them.

        Returns
        -------
        ndarray
            Shape (m,) for a scalar output, (k, m) for a vector of k values.
        """
        if name in getattr(self.model, "sensors", {}) or name in getattr(
                self, "_stored_sensors", {}):
            v = self.sensor(name).T  # component-major, as the outputs
            return v[0] if v.shape[0] == 1 else v
        stored = getattr(self, "_stored_outputs", {})
        if name in stored and name not in self.model.outputs:
            return stored[name]  # a loaded trajectory: the values from the file
        try:
            fn = self.model.outputs[name]
        except KeyError:
            known = sorted(set(self.model.outputs) | set(stored))
            raise ValueError(f"output: unknown output {name!r}; the model has "
                             f"{known}.") from None
        hook = getattr(fn, "from_trajectory", None)
        if hook is not None:
            return np.asarray(hook(self))
        return np.asarray(fn(self.t, self.q, self.qd))

    def sensor(self, name: str) -> FloatArray:
        """A sensor of the model (:meth:`PlanarModel.add_sensor`) at the output points.

        Every sensor of the model is evaluated in C in one call on first use (from
        ``t``, ``q``, ``qd`` and the trajectory's ``qdd``) and kept; a loaded trajectory
        returns the stored values.  The unit is ``model.sensors[name].unit`` (also in
        ``model.output_units``).

        Parameters
        ----------
        name : str

        Returns
        -------
        ndarray, shape (m, n_components)
            One row per output time (``model.sensors[name].components`` names the
            columns: x, y[, z] or value).
        """
        sensors = getattr(self.model, "sensors", {}) or {}
        if name not in sensors:
            stored = getattr(self, "_stored_sensors", {})
            if name in stored:
                return stored[name]
            raise ValueError(f"sensor: unknown sensor {name!r}; the model has "
                             f"{sorted(set(sensors) | set(stored))}.")
        cache = getattr(self, "_sensor_values", None)
        if cache is None or name not in cache:
            from .sensors import evaluate

            cache = evaluate(self.model, self.t, self.q, self.qd, self.qdd)
            # a Simulator's inputs changed an actuator during the run: its force
            # sensors read the model's own constant term, plus what the input added
            for key, offset in getattr(self, "_sensor_offsets", {}).items():
                cache[key] = cache[key] + offset[:, None]
            self._sensor_values = cache
        return cache[name]

    @overload
    def reactions(self, joint: str, frame: str = ...) -> JointReaction: ...
    @overload
    def reactions(self, joint: None = ..., frame: str = ...) -> dict[str, JointReaction]: ...

    def reactions(self, joint: str | None = None,
                  frame: str = "ground") -> JointReaction | dict[str, JointReaction]:
        """Force and torque of a joint on each of its two bodies at the output points.

        From the multipliers: the rows of the joint exert ``Q_c = -Phi_q^T lam`` (its
        rows only) on the coordinates of its bodies, which is the force and the
        torque about the body's centre of mass (spatial: n' = G(p) Q_p / 2 in the
        body frame); the torque is then taken about the joint's point on that body,
        ``n_P = n - s_P x F`` (:mod:`mbint.mbs.reactions`).  A side on the ground
        is reported too, as the negative of the other side's wrench moved to the
        ground's joint point (Newton's third law; ``BodyWrench.ground`` is True).

        Parameters
        ----------
        joint : str, optional
            A joint's name; None: every joint.
        frame : {"ground", "body"}
            Force and torque in global components, or each in the frame of the body
            it acts on (the ground side stays global).

        Returns
        -------
        JointReaction or dict of str to JointReaction
            ``on_i``, ``on_j``: :class:`~mbint.mbs.reactions.BodyWrench` with
            ``force`` (2, m) [N] and ``torque`` (m,) [N m] (the z-moment about the
            joint point) for a PlanarModel, ``force`` and ``torque`` (3, m) for a
            SpatialModel; ``t`` (m,) [s]; ``units``.  For every joint (``joint=None``)
            a dict by joint name.

        Raises
        ------
        ValueError
            A model without bodies (a MechanicalSystem, a loaded trajectory's stand-in),
            an unknown joint or frame.
        """
        from .reactions import joint_reactions

        return joint_reactions(self.model, self.t, self.q, self.lam, joint=joint, frame=frame)

    def dissipated_work(self) -> FloatArray | None:
        """Work done against the velocity-dependent forces (dampers) since t[0], in J.

        The power of the velocity-dependent part of the applied forces,
        ``P = (Q(t, q, qd) - Q(t, q, 0)) . qd`` (dampers, contact damping, and
        velocity-dependent Python forces), integrated over time: by 3-point
        Gauss-Legendre on every step (and between output points inside a step)
        from the dense output when the run has one, else
        by the trapezoidal rule on the output points (second order in the
        spacing of the points).  For a model without actuators or driven joints,
        ``energy().total + dissipated_work()`` is constant: the honest check of
        a damped run.

        Returns
        -------
        ndarray, shape (m,), or None
            None when no velocity-dependent force does work (no dampers).
        """
        if getattr(self, "_dissipated", None) is not None:
            return self._dissipated
        m = self.model
        if m.kind == "stored" or len(self.t) < 2:  # a loaded model's stand-in has no forces
            return None

        def power(t, q, qd):
            Q = np.asarray(m.forces(t, q, qd)) - np.asarray(m.forces(t, q, np.zeros_like(qd)))
            return -np.einsum("ik,ik->k", Q, qd)

        P = power(self.t, self.q, self.qd)
        if not np.any(P):
            return None
        t = self.t
        dt = np.diff(t)
        if self.sol is not None:
            # Gauss-Legendre on every piece between the steps and the output points
            # (the dense output is smooth within a step, not across steps)
            lo, hi = min(t[0], t[-1]), max(t[0], t[-1])
            knots = np.unique(np.concatenate([t, np.clip(self.sol.ts, lo, hi)]))
            if t[-1] < t[0]:
                knots = knots[::-1]
            nodes = np.array([-np.sqrt(0.6), 0.0, np.sqrt(0.6)])
            weights = np.array([5.0, 8.0, 5.0]) / 18.0
            dk = np.diff(knots)
            tm = (knots[:-1] + knots[1:]) / 2
            W = np.zeros(len(dk))
            for x, w in zip(nodes, weights):
                tt = tm + x * dk / 2
                q, qd = self.state(tt)
                W += w * power(tt, q.reshape(m.nq, -1), qd.reshape(m.nq, -1))
            cum = np.concatenate([[0.0], np.cumsum(W * dk)])
            idx = np.searchsorted(knots, t) if t[-1] >= t[0] else \
                len(knots) - 1 - np.searchsorted(knots[::-1], t)
            self._dissipated = cum[idx] - cum[idx[0]]
            return self._dissipated
        else:
            if len(self.t) < len(self.t_steps) + 1:
                import warnings

                warnings.warn("dissipated_work: the output points (t_eval) are coarser than "
                              "the steps and the run has no dense output; the trapezoidal "
                              "rule on them can be far off for fast damped motion.  Run with "
                              "dense_output=True.", stacklevel=2)
            inc = 0.5 * (P[:-1] + P[1:]) * dt
        self._dissipated = np.concatenate([[0.0], np.cumsum(inc)])
        return self._dissipated

    # ---------------------------------------------------------------- storage
    def to_xarray(self, steps: bool = True, dense: bool = True,
                  events: bool = True) -> xarray.Dataset:
        """The trajectory as an ``xarray.Dataset``: dims ``time``, ``coordinate``,
        ``constraint``; variables q, qd, qdd, lam, energies, dissipated work,
        violations, outputs, step history, dense records, events, each with its
        unit; the model, method, status, statistics and options as attributes
        (layout: :mod:`mbint.mbs.dataset`).

        Parameters
        ----------
        steps, dense, events : bool
            Include the step history, the dense output's records and the events.

        Returns
        -------
        xarray.Dataset
        """
        from .dataset import to_xarray

        return to_xarray(self, steps=steps, dense=dense, events=events)

    def save(self, path: str | PathLike[str]) -> Path:
        """Write the trajectory to a NetCDF-4 file (:meth:`to_xarray`); read it back
        with :func:`mbint.load`, or with ``xarray.open_dataset`` without mbint.

        Parameters
        ----------
        path : str or path-like

        Returns
        -------
        pathlib.Path
        """
        from .dataset import save

        return save(self, path)

    @classmethod
    def from_xarray(cls, ds: xarray.Dataset) -> Trajectory:
        """A trajectory from :meth:`to_xarray`'s dataset (see :func:`mbint.load`)."""
        from .dataset import from_xarray

        return from_xarray(ds)

    def coordinate(self, body: str | int, coord: str = "theta") -> FloatArray:
        """One coordinate of a body of a PlanarModel ("x", "y" in m or "theta" in
        rad) or of a SpatialModel ("x", "y", "z" in m, "e0" ... "e3"), shape (m,)."""
        idx = self._coord_index(body, coord)
        return self.q[idx]

    def _coord_index(self, body, coord):
        from .planar import _COORDS

        if self.model.kind not in ("planar", "spatial"):
            raise ValueError("coordinate: bodies exist in a PlanarModel only; index q directly.")
        if self.model.kind == "spatial":  # x, y, z, e0..e3
            return self.model.coordinate_index(body, coord)
        b = self.model.body(body)
        if b.is_ground:
            raise ValueError("coordinate: the ground has no coordinates.")
        if coord not in _COORDS:
            raise ValueError(f"coordinate: coord must be 'x', 'y' or 'theta', got {coord!r}.")
        return 3 * b.index + _COORDS[coord]

    # ---------------------------------------------------------------- pictures
    # drawn by mbint.plot and mbint.animation (imported here lazily: they import matplotlib)
    def plot(self, quantity: str = "q", bodies: Sequence[str | int] | None = None,
             coords: Sequence[str] | None = None, ax: Axes | None = None) -> Figure:
        """Plot coordinates, velocities, multipliers or a named output against time.

        Axes carry units (time in s; lengths in m and angles in rad, from the
        model's ``coordinate_units``; multipliers in N, N m or N/m by their
        constraint row); every curve has its own colour, line style and sparse
        markers, so overlapping curves stay apart.

        Parameters
        ----------
        quantity : str
            ``"x"``, ``"y"``, ``"theta"`` (of ``bodies``; PlanarModel), ``"q"``,
            ``"qd"``, ``"qdd"`` (entries ``coords``), ``"lam"`` (rows ``coords``) or
            a name of ``model.outputs``.
        bodies : sequence of Body, names or indices, optional
            Default: every body.
        coords : sequence of int or str, optional
            Indices (or coordinate names) into q/qd/qdd, or rows of lam.
        ax : matplotlib.axes.Axes, optional

        Returns
        -------
        matplotlib.figure.Figure
        """
        from ..plot import plot_trajectory

        return plot_trajectory(self, quantity=quantity, bodies=bodies, coords=coords, ax=ax)

    def plot_energy(self, ax: Axes | None = None, relative: bool = False) -> Figure:
        """Kinetic, potential and total energy [J] against time.

        With dampers (any velocity-dependent force doing work,
        :meth:`dissipated_work`) the plot also shows the dissipated work W and
        E + W, which stays constant for a model without actuators or driven
        joints: the honest check of a damped run.  With ``relative`` it shows
        the drift E(t) - E(t0) (or of E + W with dampers).
        """
        from ..plot import plot_energy

        return plot_energy(self, ax=ax, relative=relative)

    def plot_violation(self, ax: Axes | None = None) -> Figure:
        """Constraint violation at position, velocity and acceleration level on a log
        axis.

        Points where a residual is exactly zero cannot be drawn on a log axis: they
        are left out (not clipped to a tiny number) and the legend says at how
        many points each level is exactly zero; a level that is zero everywhere
        is named in the legend without a curve.
        """
        from ..plot import plot_violation

        return plot_violation(self, ax=ax)

    def animate(self, path: str | PathLike[str] | None = None, fps: float = 25,
                max_frames: int = 250, size: tuple[float, float] = (5.0, 5.0), dpi: int = 80,
                trace: Sequence[Any] | None = None) -> list[Path] | Animation:
        """Draw the mechanism over time: inline in Jupyter, or into a GIF, an MP4 or a
        PNG image sequence.

        Parameters
        ----------
        path : str or path-like, optional
            None: return an :class:`Animation` that Jupyter shows inline (a
            JavaScript player, no ffmpeg needed; ``.save(path)`` writes it later).
            ``*.gif``: one animated GIF (pillow).  ``*.mp4``: H.264 video through
            ffmpeg (from PATH, or the binary of the ``imageio-ffmpeg`` package).
            Otherwise a PNG sequence: a directory (frames ``frame_0000.png``, ...),
            or a pattern containing ``{}`` or ``%d``-style formatting
            (``"out/dp_{:04d}.png"``).
        fps : float
            Frames per second of simulated time (frames are resampled uniformly,
            from the dense output when there is one).
        max_frames : int
            Upper bound on the number of frames.
        size : (float, float)
            Figure size in inches.
        dpi : int
        trace : Body, optional
            Draw the path of this body's centre of mass.

        Returns
        -------
        list of pathlib.Path, or Animation
            The written files; an :class:`Animation` when ``path`` is None.
        """
        from ..animation import animate

        return animate(self, path=path, fps=fps, max_frames=max_frames, size=size, dpi=dpi,
                       trace=trace)

    def view3d(self, path: str | PathLike[str] | None = None, **options: Any) -> View3D:
        """An interactive 3-D view of the motion: :func:`mbint.view3d` (see there)."""
        from ..scene3d import view3d

        return view3d(self, path, **options)


def __getattr__(name):
    """``Animation`` lives in :mod:`mbint.animation`; it is named here too (imported on
    first use, so that importing this module does not import the drawing code)."""
    if name == "Animation":
        from ..animation import Animation

        return Animation
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
