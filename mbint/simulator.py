"""``mbint.Simulator``: a mechanism's run taken step by step, for controllers and
co-simulation.

:func:`mbint.simulate` runs from t0 to tf in one call.  A :class:`Simulator` runs the
same run in pieces: :meth:`Simulator.step` takes one step of the method,
:meth:`Simulator.advance` integrates up to a time, :meth:`Simulator.set_input` changes
an input of the model between two pieces.  It is the one driver of mbint (csrc/core,
driver.h "Piecewise runs"; for a SUNDIALS method its adapter, sundials.h "Piecewise
runs"): the steps are those that :func:`mbint.simulate` takes over the same span
``(t0, t_end)``; the state at ``advance(t)`` comes from the last step's dense output
(SUNDIALS: the integrator's interpolant) exactly as a ``t_eval`` point of
:func:`mbint.simulate` does, so a loop of
``advance(t_k)`` reproduces ``simulate(..., t_eval=t_k)`` bit for bit (as long as no
input changes).  Nothing is re-validated per call: a piece is one C call, the GIL
released while the method steps (Python forces and kernels keep it), Ctrl-C
interrupting it.

Inputs are force elements whose time function f(t) = c0 + c1 t + ... the model
declares; ``set_input(name, value)`` sets c0 in the Simulator's own copy of the model's
C tables (the model itself is left unchanged):

* a :class:`~mbint.PlanarModel`'s generalized forces
  (:meth:`~mbint.PlanarModel.add_generalized_force`: N for x, y; N m for theta) and the
  actuators of its spring-dampers (``add_spring_damper(..., actuator=)``: tension, N);
* a :class:`~mbint.SpatialModel`'s spring-damper actuators (``add_spring_damper``: N,
  ``add_rotational_spring_damper``: N m, in the element's own sign convention);
* a :class:`~mbint.UrdfModel`'s revolute joints driven by a constant or a time function
  (:meth:`~mbint.UrdfModel.set_joint_torques`; ``load_urdf(..., torques=...)``), by
  joint name: the joint torque [N m] on the child link about the joint axis;
* the targets of drivers (planar ``add_driver``, spatial ``add_driver(kind=
  "translation")``), by element name: the constant term of the prescribed coordinate,
  angle or offset f(t) [m or rad].  A new
  target moves the driven coordinate at once (a zero-order hold on a position): the
  state at t is projected onto the new constraints (minimum-norm corrections of q and
  q'), the formulation's state (the DAEs' multipliers too) rebuilt from it, and the
  trajectory's point at t holds the new state (not on ``"state_space"``).

:meth:`Simulator.trajectory` evaluates q'', the multipliers, the constraint violation and
the force sensors of every point with the inputs that point had.
"""
from __future__ import annotations

import copy
import dataclasses
import importlib
import math
from typing import TYPE_CHECKING, Any, Sequence

import numpy as np

from . import _core
from .mbs._kernels import linalg_code
from .mbs.trajectory import Violation
from ._typing import ArrayLike, Events, FloatArray, RhsFun
from .mbs._model_types import Model

if TYPE_CHECKING:
    from .ivp import OdeResult
    from .mbs.trajectory import Trajectory

# the module mbint.mbs.simulate (the package exports its function under the same name)
_sim = importlib.import_module(".mbs.simulate", __package__)

__all__ = ["Simulator", "OdeSimulator", "SimulationFailed"]


class SimulationFailed(RuntimeError):
    """A step of a :class:`Simulator` failed (step size too small, max_steps reached, a
    Newton iteration that does not converge...).  Nothing computed is lost:

    Attributes
    ----------
    result : Trajectory
        Every accepted step up to the failure (``result.status`` < 0, its
        ``message`` saying why).
    """

    def __init__(self, message: str, result: Any) -> None:
        super().__init__(message)
        self.result = result


class _Pieces:
    """What a run in pieces does whatever it integrates: :meth:`step`, :meth:`advance`,
    the time and the statistics.  A subclass opens ``self._c`` (a ``_core`` stepper)
    and keeps the state handed out (``_take(y)``)."""

    _c: _core.MechStepper | _core.OdeStepper
    _t: float
    _t_end: float
    _finished: bool

    if TYPE_CHECKING:  # what each subclass provides
        def _take(self, y: Any) -> None: ...
        def trajectory(self) -> Any: ...

    @property
    def t(self) -> float:
        """The current time [s]."""
        return self._t

    @property
    def t_end(self) -> float:
        """The end of the span [s] (inf: none)."""
        return self._t_end

    @property
    def finished(self) -> bool:
        """The run reached t_end or a terminal event."""
        return self._finished

    @property
    def stats(self) -> dict[str, Any]:
        """Counts of the run so far: nsteps, nfev, njev, nlu, nreject, nfail, nrestart."""
        s = self._c.stats()
        s.pop("t")
        return s

    def _stopped(self, status: int, t: float, y: Any, what: str) -> float:
        """Take the outcome of a piece: the time and state, or the failure."""
        if status < 0:
            res = self.trajectory()  # raises the user's exception / Ctrl-C, result attached
            raise SimulationFailed(f"{type(self).__name__}.{what}: {res.message}", res)
        self._t = t
        self._take(y)
        if status == 1:
            self._finished = True
        return t

    def _check_open(self, what: str) -> None:
        if self._finished:
            raise RuntimeError(f"{type(self).__name__}.{what}: the run ended at t = {self._t!r} "
                               f"(t_end or a terminal event); reset() starts a new one.")

    def step(self) -> float:
        """Take one step of the method (with the attempts it needs).

        Returns
        -------
        float
            The time reached [s], the end of the step (t_end for the last one; a
            terminal event's time).

        Raises
        ------
        SimulationFailed
            The step failed; ``exc.result`` holds the trajectory so far.
        RuntimeError
            The run has ended (:attr:`finished`).
        """
        self._check_open("step")
        status, t, y = self._c.step()
        return self._stopped(status, t, y, "step")

    def advance(self, t: float) -> float:
        """Integrate up to exactly ``t``.

        The method steps as in one run of the whole span until a step ends at or past
        t; the state at t is that step's dense output there (the method's interpolant,
        or cubic Hermite for methods without one), as a ``t_eval`` point: no step is
        shortened to end on t, the step-size sequence is unchanged.

        Parameters
        ----------
        t : float
            The time to reach [s], t >= :attr:`t` and t <= t_end.

        Returns
        -------
        float
            t, or the time of a terminal event before it (then :attr:`finished`).

        Raises
        ------
        ValueError
            t before :attr:`t` (no integration backwards) or past t_end.
        SimulationFailed
            A step failed; ``exc.result`` holds the trajectory so far.
        """
        t = float(t)
        name = type(self).__name__
        if not t >= self._t:
            raise ValueError(f"{name}.advance: t = {t!r} is before the current time "
                             f"{self._t!r}; it integrates forwards only (reset() starts "
                             f"again).")
        if t > self._t_end:
            raise ValueError(f"{name}.advance: t = {t!r} is past t_end = {self._t_end!r}.")
        if t == self._t:
            return t
        status, tr, y = self._c.advance(t)
        return self._stopped(status, tr, y, "advance")


def _span(where: str, t0: float, t_end: float, h: float | None) -> tuple[float, float]:
    """(t0, t_end) as floats, forwards; a fixed step needs a finite end."""
    t0, t_end = float(t0), float(t_end)
    if not math.isfinite(t0) or not t_end > t0:
        raise ValueError(f"{where}: t0 must be finite and t_end > t0, got t0 = {t0}, "
                         f"t_end = {t_end}.")
    if h is not None and not math.isfinite(t_end):
        raise ValueError(f"{where}: a fixed step h needs a finite t_end (its grid t0 + k h "
                         f"ends there).")
    return t0, t_end


class Simulator(_Pieces):
    """A run of a mechanism in pieces: :meth:`step`, :meth:`advance`, :meth:`set_input`.

    Parameters
    ----------
    model : PlanarModel, SpatialModel or MechanicalSystem
    method : str
        Any method of :func:`mbint.methods`, adaptive or fixed-step (``h=``), as
        :func:`mbint.simulate` takes it.  A SUNDIALS method (``cvode_*``, ``ida``,
        ``arkode_*``) steps one internal step of its integrator per :meth:`step`; an
        input change starts the integrator anew at t (``CVodeReInit`` and its
        counterparts: order 1 and its own first step; IDA's y' made consistent by
        ``IDACalcIC``).
    formulation : str
        As in :func:`mbint.simulate`.  Inputs can be changed on ``"index1"`` and the
        DAE formulations, not on ``"state_space"``.
    t0 : float
        Initial time [s].
    t_end : float
        The end of the span [s] (default: none, +inf; a fixed step ``h`` needs a finite
        one).  The steps are those of ``simulate(model, (t0, t_end), ...)``: the first
        step size is chosen over the span, and the last step ends on t_end.
    q0, qd0 : array_like, shape (nq,), optional
        Initial state [m, rad; m/s, rad/s] (default: the model's).
    **options
        Every other keyword of :func:`mbint.simulate` (``rtol``, ``atol``, ``h``,
        ``max_steps``, ``events``, ``project``, ``consistent``, ...; the method's own
        options) except ``t_eval``, ``dense_output`` and ``progress``.

    Attributes
    ----------
    t : float
        The current time [s]: where the last :meth:`step` or :meth:`advance` stopped.
    state : tuple of ndarray
        (q, qd) at :attr:`t` [m, rad; m/s, rad/s], copies of shape (nq,).
    inputs : dict
        The inputs and their current values {name: value [N or N m]} (the module's
        docstring lists them for each model kind).
    stats : dict
        Counts so far: ``nsteps``, ``nfev``, ``njev``, ``nlu``, ``nreject``, ``nfail``,
        ``nrestart`` (every input change restarts the method: see :meth:`set_input`).
    finished : bool
        The run reached t_end or a terminal event: no step can follow (:meth:`reset`).

    Notes
    -----
    The solver runs ahead of :attr:`t`: ``advance(t)`` steps until a step ends at or
    past t and interpolates there; its next call goes on from the solver's own point.
    :meth:`trajectory` holds every accepted step so far (up to the solver's point).

    Examples
    --------
    >>> import mbint
    >>> m = mbint.PlanarModel(gravity=(0, -9.81))
    >>> rod = m.add_body(1.0, 1 / 12, q=(0.5, 0.0, 0.0))
    >>> _ = m.add_revolute(m.ground, (0, 0), rod, (-0.5, 0))
    >>> _ = m.add_generalized_force(rod, "theta", 0.0, name="tau")
    >>> sim = mbint.Simulator(m, method="dopri5", rtol=1e-8, atol=1e-10)
    >>> for k in range(1, 101):                 # a PD controller at 1 kHz
    ...     q, qd = sim.state
    ...     sim.set_input("tau", -20.0 * q[2] - 2.0 * qd[2])
    ...     _ = sim.advance(0.001 * k)
    >>> round(sim.t, 6)
    0.1
    """

    _settings: dict[str, Any]
    _inputs: dict[str, _Input]
    _history: list[tuple[float, str, float]]
    _c0_start: dict[str, float]

    def __init__(self, model: Model, method: str | type = "dopri5", formulation: str = "index1",
                 *, t0: float = 0.0, t_end: float = math.inf, q0: ArrayLike | None = None,
                 qd0: ArrayLike | None = None, project: bool = False,
                 baumgarte: float | tuple[float, float] | None = None, consistent: str = "check",
                 events: Events = None, rtol: float | None = None, atol: ArrayLike | None = None,
                 h: float | None = None, first_step: float | None = None,
                 max_step: float | None = None, min_step: float | None = None,
                 max_steps: int | None = None, controller: str | None = None,
                 error_per_unit_step: bool = False, safety: float | None = None,
                 fac_min: float | None = None, fac_max: float | None = None,
                 tol: float | None = None, proj_tol: float | None = None,
                 proj_max_iter: int | None = None, contact_switching: bool = True,
                 independent: Sequence[int | str] | None = None,
                 linear_algebra: str | None = None, **method_options: Any) -> None:
        for bad in ("t_eval", "dense_output", "progress"):
            if bad in method_options:
                raise ValueError(f"Simulator: {bad} is not an option of the Simulator "
                                 f"(advance(t) gives the state at t).")
        run = _sim._validate(model, method, formulation, baumgarte, project, independent,
                             linear_algebra, consistent)
        t0, t_end = _span("Simulator", t0, t_end, h)
        self._run, self._inputs = _own_handle(run)
        self.model = model
        self.method = run.mname
        self.formulation = run.form.name
        self._t0, self._t_end = t0, t_end
        self._settings = dict(
            consistent=consistent, tol=tol, proj_tol=proj_tol, proj_max_iter=proj_max_iter,
            project=project, h=h, events=events, contact_switching=contact_switching,
            given=dict(rtol=rtol, atol=atol, first_step=first_step, max_step=max_step,
                       min_step=min_step, max_steps=max_steps),
            control=(controller, error_per_unit_step, safety, fac_min, fac_max),
            method_options=method_options)
        self._open(t0, q0, qd0)

    # ------------------------------------------------------------------ set-up
    def _open(self, t0: float, q0: Any, qd0: Any) -> None:
        """A new run from (t0, q0, qd0): simulate's phases up to the C core's set-up."""
        run, st = self._run, self._settings
        q0, qd0, initial = _sim._initial_state(run, t0, q0, qd0, st["consistent"], st["tol"],
                                               st["proj_tol"], st["proj_max_iter"])
        opts = _sim._resolve_options(run.model, st["given"], fixed_step=st["h"] is not None)
        control = _sim.check.step_control(run.info, run.mname, st["h"], *st["control"])
        control["method_options"] = dict(st["method_options"])
        args, kwargs, meta = _sim._core_args(run, t0, self._t_end, q0, qd0, opts, control,
                                             None, True, st["events"], st["project"],
                                             st["proj_tol"], st["proj_max_iter"],
                                             st["contact_switching"])
        self._c = _core.MechStepper(*args, **kwargs)
        # the inputs' changes in this run (t, element, c0 in the table) and their values
        # at its start: for the force sensors of trajectory()
        self._history = []
        self._c0_start = {inp.element: inp.sign * inp.value for inp in self._inputs.values()}
        self._meta, self._opts, self._initial = meta, opts, initial
        self._t = t0
        self._q, self._qd = q0.copy(), qd0.copy()
        self._finished = False

    def _take(self, y: Any) -> None:
        nq = self.model.nq
        self._q, self._qd = y[:nq].copy(), y[nq:2 * nq].copy()

    # ------------------------------------------------------------------ state
    @property
    def state(self) -> tuple[FloatArray, FloatArray]:
        """(q, qd) at :attr:`t`: copies of shape (nq,) [m, rad; m/s, rad/s]."""
        return self._q.copy(), self._qd.copy()

    @property
    def inputs(self) -> dict[str, float]:
        """{name: value}: the model's inputs and their current values [N or N m]
        (:meth:`set_input`)."""
        return {name: inp.value for name, inp in self._inputs.items()}

    def set_input(self, name: str, value: float) -> None:
        """Set an input of the model: the constant term of a force element's time
        function (the module's docstring lists the inputs of each model kind).

        Parameters
        ----------
        name : str
            The name of an input (:attr:`inputs` lists them): a generalized force or a
            spring-damper's actuator by element name, a URDF robot's driven joint by
            joint name.
        value : float
            Its new constant term c0 [N or N m; for a URDF joint, the joint torque; for a
            driver, its target, m or rad]; the element's other coefficients (c1 t,
            a sin(w t + psi)) stay.

        Notes
        -----
        The change takes effect at :attr:`t`, the time the caller is at, as a
        zero-order hold: the force is ``value`` from t on.  Where the solver has already
        stepped past t (advance interpolated inside its last step), that part of the
        step, computed with the old value, is dropped and the run goes on from the
        interpolated state at t.  The method restarts there as at a switching event
        (``stats["nrestart"]``): multistep histories (bdf, adams), kept Jacobians and
        LU factors (Rosenbrock, implicit Runge-Kutta), the FSAL derivative and the
        step-size controller's memory are dropped, since f jumps at t and a history
        across the jump would carry the old force into the new steps; the step size
        goes on from the last proposal.  Setting the value it has already costs nothing.
        A driver's new target also moves the state: (q, q') at t is projected onto the
        new constraints (minimum-norm corrections) before the restart; a target the
        mechanism cannot reach raises :class:`SimulationFailed`.

        Raises
        ------
        ValueError
            An unknown name (the message lists the inputs), a non-finite value, or a
            formulation whose cached evaluations an input cannot reach (state_space, a
            URDF tree on "joint"; a planar tree on "joint" takes inputs).
        """
        if name not in self._inputs and any(
                e.name == name and e.kind == "driver"
                for e in getattr(self.model, "joint_elements", ())):
            raise ValueError(f"Simulator.set_input: {name!r} is a rotation driver of a "
                             f"spatial model: its target enters the constraint (cos f, sin f) "
                             f"and so its Jacobian, the reactions and the effort computed "
                             f"after the run; it is not an input.  Drive the joint by a "
                             f"torque instead (a rotational spring-damper's actuator).")
        if name not in self._inputs:
            known = sorted(self._inputs) or ("none (a generalized force, a spring-damper's "
                                             "actuator or a URDF joint's constant torque "
                                             "declares one)")
            raise ValueError(f"Simulator.set_input: unknown input {name!r}; the model's "
                             f"inputs: {known}.")
        value = float(value)
        if not math.isfinite(value):
            raise ValueError(f"Simulator.set_input: {name!r} must be finite, got {value}.")
        inp = self._inputs[name]
        if value == inp.value:
            return
        if self._finished:
            self._check_open("set_input")
        setter = self._c.set_driver if inp.kind == "driver" else self._c.set_force
        status = setter(inp.row, inp.sign * value, self._t)
        if status < 0:
            self._stopped(status, self._t, None, "set_input")
        self._history.append((self._t, inp.element, inp.sign * value))
        inp.value = value

    def reset(self, t0: float | None = None, q: ArrayLike | None = None,
              qd: ArrayLike | None = None) -> None:
        """Start a new run (a new trajectory, statistics from zero) from (t0, q, qd).

        Parameters
        ----------
        t0 : float, optional
            The new initial time [s] (default: the first run's t0), before t_end.
        q, qd : array_like, shape (nq,), optional
            The new initial state [m, rad; m/s, rad/s] (default: the model's initial
            state), checked for consistency as by :func:`mbint.simulate`.

        Notes
        -----
        The inputs keep their current values.
        """
        t0 = self._t0 if t0 is None else float(t0)
        if not (math.isfinite(t0) and t0 < self._t_end):
            raise ValueError(f"Simulator.reset: t0 must be finite and before t_end = "
                             f"{self._t_end!r}, got {t0!r}.")
        self._open(t0, q, qd)

    def trajectory(self) -> Trajectory:
        """Everything computed so far, as the :class:`~mbint.Trajectory` that
        :func:`mbint.simulate` returns: every accepted step from t0 up to the solver's
        current point (which may lie past :attr:`t`), with its dense output
        (``traj.sol``, as ``simulate(..., dense_output=True)``) across input changes."""
        out = self._c.result()
        violation = out.pop("violation", None)   # with the drivers' targets of each point
        out, options = _sim._with_meta(out, self._meta, self._opts, self._settings["h"])
        st = self._settings
        traj = _sim._trajectory(self._run, out, options, dict(self._initial), True,
                                st["project"], st["proj_tol"], st["proj_max_iter"])
        if violation is not None:
            traj._violation = Violation(*violation)
        offsets = self._sensor_offsets(traj.t)
        if offsets:
            traj._sensor_offsets = offsets
        return traj

    def _sensor_offsets(self, t: FloatArray) -> dict[str, FloatArray]:
        """{sensor: array over t} for the force sensors of the elements whose actuator an
        input changed: c0 as it was at each t minus the model's own c0 (the sensors'
        tables hold the model's), which the law adds (F = ... + fa(t))."""
        sensors = getattr(self.model, "sensors", {}) or {}
        wanted = {s.element for s in sensors.values() if s.kind == "force"}
        if not self._history or not wanted & {e for _, e, _ in self._history}:
            return {}
        model_c0 = {inp.element: inp.sign * inp.value for inp in _inputs_of(self.model).values()}
        per_element = {}
        for element in wanted & {e for _, e, _ in self._history}:
            c0 = np.full(len(t), self._c0_start[element])
            for tc, e, v in self._history:  # in order; a point at tc has the new value
                if e == element:
                    c0[t >= tc] = v
            per_element[element] = c0 - model_c0[element]
        return {name: per_element[s.element] for name, s in sensors.items()
                if s.kind == "force" and s.element in per_element}

    def __repr__(self) -> str:
        return (f"<Simulator {self.model.name!r} {self.method} {self.formulation} "
                f"t={self._t!r}>")


def _inputs_of(model: Any) -> dict[str, _Input]:
    """The inputs of a model: {name: (row of its C force table, sign, value)}, the value
    being ``sign * c0`` of the row's time function.

    A planar model: its generalized forces and the actuators of its spring-dampers
    (TSDA), by element name.  A spatial model: the actuators of its translational and
    rotational spring-dampers (TSDA, RSDA), by element name; for a
    :class:`~mbint.UrdfModel` its revolute joints driven by a C time function
    (:meth:`~mbint.UrdfModel.set_joint_torques`), by joint name, as the joint torque
    (the drive's actuator is minus the torque)."""
    kind = getattr(model, "kind", None)
    inputs = {}
    if kind == "planar":
        for row, e in enumerate(model.joint_elements):
            if e.kind in ("driver_coord", "driver_angle"):
                inputs[e.name] = _Input("driver", row, 1.0, float(e.params.get("c0", 0.0)),
                                        e.name)
        table = [e for e in model.force_elements if e.kind != "python"]
        for row, e in enumerate(table):
            if e.kind in ("generalized", "tsda"):
                inputs[e.name] = _Input("force", row, 1.0, float(e.params.get("fa_c0", 0.0)),
                                        e.name)
        return inputs
    if kind != "spatial":
        return inputs
    row = 0
    for e in model.joint_elements:
        # a translation driver (a_i . d - f(t)): a rotation driver's constraint, and so its
        # Jacobian and effort after the run, depend on the target (not an input)
        if e.kind == "driver" and e.prims[0]["type"] == "dot2":
            inputs[e.name] = _Input("driver", row, 1.0, float(e.prims[0].get("c0", 0.0)),
                                    e.name)
        row += len(e.prims)
    joints = {f"{j.name}.drive": j.name for j in getattr(model, "urdf_joints", ())}
    row = 0
    for e in model.force_elements:
        if e.kind in ("python", "cforce"):
            continue
        if e.kind in ("tsda", "rsda"):
            c0 = float(e.prims[0].get("fa_c0", 0.0))
            if e.name in joints:
                inputs[joints[e.name]] = _Input("force", row, -1.0, -c0, e.name)
            else:
                inputs[e.name] = _Input("force", row, 1.0, c0, e.name)
        row += len(e.prims)
    return inputs


@dataclasses.dataclass
class _Input:
    """An input of a Simulator: what it sets (``"force"``: the constant term of a force
    element's time function; ``"driver"``: that of a driver's target), the row of the C
    table (force table; joint or constraint table for a driver), and its value
    (``sign * c0``)."""

    kind: str
    row: int
    sign: float
    value: float
    element: str = ""      # the force element's name


def _own_handle(run: Any) -> tuple[Any, dict[str, _Input]]:
    """The run with a handle of its own (the model's C tables built anew, so that the
    inputs change the Simulator's copy, not the model's) and its inputs
    (:func:`_inputs_of`)."""
    model = run.model
    inputs = _inputs_of(model)
    if not inputs:
        return run, {}
    if model.kind == "planar":
        c = model.compile()
        py = [e for e in model.force_elements if e.kind == "python"]
        extra = model._python_forces(py) if py else None
        handle = _core.mech_planar(c.bodies, c.gravity, c.joints, np.array(c.forces), c.nc,
                                   extra)
        _core.mech_set_linalg(handle, linalg_code(model._linear_algebra))
    else:
        own = copy.copy(model)      # the same elements, packed into tables of its own
        own._compiled = None
        handle = own._linalg_handle()
    return dataclasses.replace(run, handle=handle), inputs


class OdeSimulator(_Pieces):
    """A run of :func:`mbint.solve_ivp` in pieces, as SciPy's ``OdeSolver`` objects:
    :meth:`step`, :meth:`advance`, :attr:`y`.

    Parameters
    ----------
    fun : callable or LowLevelCallable
        ``fun(t, y, *args)`` as in :func:`mbint.solve_ivp` (a C right-hand side runs
        without the GIL).
    t0 : float
        Initial time [s].
    y0 : array_like, shape (n,)
        Initial state (real).
    method : str
        A method of :func:`mbint.solve_ivp`, the SUNDIALS ones included (their
        integrator starts anew at :meth:`restart`).
    t_end : float
        The end of the span [s] (default +inf; a fixed step ``h`` needs a finite one):
        the steps are those of ``solve_ivp(fun, (t0, t_end), y0, ...)``.
    **options
        The keywords of :func:`mbint.solve_ivp` (``args``, ``rtol``, ``atol``, ``jac``,
        ``mass``, ``events``, ``h``, ``max_steps``, ...; the method's own options) except
        ``t_eval``, ``dense_output`` and ``progress``.

    Attributes
    ----------
    t : float
        The current time [s].
    y : ndarray, shape (n,)
        The state at :attr:`t` (a copy).
    stats, finished
        As :class:`Simulator`'s.

    Examples
    --------
    >>> import numpy as np, mbint
    >>> sim = mbint.OdeSimulator(lambda t, y: -y, 0.0, [1.0], rtol=1e-10, atol=1e-12)
    >>> _ = sim.advance(1.0)
    >>> bool(abs(sim.y[0] - np.exp(-1.0)) < 1e-9)
    True
    """

    def __init__(self, fun: RhsFun, t0: float, y0: ArrayLike, method: str | type = "dopri5", *,
                 t_end: float = math.inf, args: Sequence[Any] | None = None,
                 rtol: float = 1e-3, atol: ArrayLike = 1e-6, first_step: float | None = None,
                 max_step: float = np.inf, min_step: float = 0.0, max_steps: int | None = None,
                 h: float | None = None, jac: ArrayLike | RhsFun | None = None,
                 jac_sparsity: ArrayLike | None = None, mass: ArrayLike | None = None,
                 dfdt: RhsFun | None = None, autonomous: bool = False, events: Events = None,
                 controller: str | None = None, error_per_unit_step: bool = False,
                 safety: float | None = None, fac_min: float | None = None,
                 fac_max: float | None = None, nq: int | None = None,
                 **method_options: Any) -> None:
        from . import _validate as check
        from .ivp import _method, _solve_args
        for bad in ("t_eval", "dense_output", "progress"):
            if bad in method_options:
                raise ValueError(f"OdeSimulator: {bad} is not an option of the OdeSimulator "
                                 f"(advance(t) gives the state at t).")
        mname, info = _method(method)
        t0, t_end = _span("OdeSimulator", t0, t_end, h)
        self.method, self._t0, self._t_end = mname, t0, t_end
        steps = dict(first_step=first_step, max_step=max_step, min_step=min_step,
                     max_steps=max_steps, h=h, controller=controller,
                     error_per_unit_step=error_per_unit_step, safety=safety, fac_min=fac_min,
                     fac_max=fac_max)

        def open_(t0: float, y0: Any) -> None:
            y0a = check.float_vector("y0", y0)
            if y0a.size == 0:
                raise ValueError("OdeSimulator: y0 must not be empty.")
            rtol_, atol_a, cfun, kw = _solve_args(info, mname, fun, t0, t_end, y0a, rtol, atol,
                                                  None, events, args, jac, jac_sparsity, mass,
                                                  dfdt, autonomous, nq, dict(steps),
                                                  dict(method_options), pieces=True)
            self._c = _core.OdeStepper(mname, cfun, t0, t_end, y0a, atol_a, rtol_, **kw)
            self._has_events = kw["events"] is not None
            self._t, self._y, self._y0, self._finished = t0, y0a.copy(), y0a, False

        self._open = open_
        self._y0_first = y0
        open_(t0, y0)

    def _take(self, y: Any) -> None:
        self._y = np.array(y)

    @property
    def y(self) -> FloatArray:
        """The state at :attr:`t` (a copy, shape (n,))."""
        return self._y.copy()

    def restart(self) -> None:
        """The right-hand side changed at :attr:`t` (a parameter ``fun`` reads, changed by
        the caller): the run goes on from t with the method restarted, as
        :meth:`Simulator.set_input` does (the part of the last step past t dropped,
        histories, Jacobians and f(t, y) evaluated anew)."""
        status = self._c.restart(self._t)
        if status < 0:
            self._stopped(status, self._t, None, "restart")
        self._finished = False

    def reset(self, t0: float | None = None, y0: ArrayLike | None = None) -> None:
        """Start a new run from (t0, y0) (defaults: the first run's)."""
        t0 = self._t0 if t0 is None else float(t0)
        if not (math.isfinite(t0) and t0 < self._t_end):
            raise ValueError(f"OdeSimulator.reset: t0 must be finite and before t_end = "
                             f"{self._t_end!r}, got {t0!r}.")
        self._open(t0, self._y0_first if y0 is None else y0)

    def trajectory(self) -> OdeResult:
        """Everything so far as the :class:`~mbint.OdeResult` of :func:`mbint.solve_ivp`:
        every accepted step from t0 up to the solver's current point."""
        from ._interrupt import raise_if_interrupted
        from .ivp import _make_result
        out = self._c.result()
        res = _make_result(out, self.method, self._y0.size, False, self._has_events,
                           y0=self._y0)
        raise_if_interrupted(out, res)
        return res

    def __repr__(self) -> str:
        return f"<OdeSimulator {self.method} t={self._t!r}>"
