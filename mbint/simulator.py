"""``mbint.Simulator``: a mechanism's run taken step by step, for controllers and
co-simulation.

:func:`mbint.simulate` runs from t0 to tf in one call.  A :class:`Simulator` runs the
same run in pieces: :meth:`Simulator.step` takes one step of the method,
:meth:`Simulator.advance` integrates up to a time, :meth:`Simulator.set_input` changes
an input of the model between two pieces.  It is the one driver of mbint (csrc/core,
driver.h "Piecewise runs"): the steps are those that :func:`mbint.simulate` takes over
the same span ``(t0, t_end)``; the state at ``advance(t)`` comes from the last step's
dense output exactly as a ``t_eval`` point of :func:`mbint.simulate` does, so a loop of
``advance(t_k)`` reproduces ``simulate(..., t_eval=t_k)`` bit for bit (as long as no
input changes).  Nothing is re-validated per call: a piece is one C call, the GIL
released while the method steps (Python forces and kernels keep it), Ctrl-C
interrupting it.

Inputs: a :class:`~mbint.PlanarModel`'s generalized forces
(:meth:`~mbint.PlanarModel.add_generalized_force`, by name) are the Simulator's inputs:
``set_input(name, value)`` sets the constant term c0 of that element's
f(t) = c0 + c1 t + ... (N for x, y; N m for theta) in the Simulator's own copy of the
model's C tables (the model itself is left unchanged).
"""
from __future__ import annotations

import dataclasses
import importlib
import math

import numpy as np

from . import _core
from .mbs._kernels import linalg_code

# the module mbint.mbs.simulate (the package exports its function under the same name)
_sim = importlib.import_module(".mbs.simulate", __package__)

__all__ = ["Simulator", "SimulationFailed"]


class SimulationFailed(RuntimeError):
    """A step of a :class:`Simulator` failed (step size too small, max_steps reached, a
    Newton iteration that does not converge...).  Nothing computed is lost:

    Attributes
    ----------
    result : Trajectory
        Every accepted step up to the failure (``result.status`` < 0, its
        ``message`` saying why).
    """

    def __init__(self, message, result):
        super().__init__(message)
        self.result = result


class Simulator:
    """A run of a mechanism in pieces: :meth:`step`, :meth:`advance`, :meth:`set_input`.

    Parameters
    ----------
    model : PlanarModel, SpatialModel or MechanicalSystem
    method : str
        Any method of mbint's own driver (:func:`mbint.methods` with backend
        ``"mbint"``), adaptive or fixed-step (``h=``).  The SUNDIALS methods
        (``cvode_*``, ``ida``, ``arkode_*``) run their own step loop and are refused
        (ValueError).
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
        The inputs and their current values {name: value [N or N m]}.
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

    def __init__(self, model, method="dopri5", formulation="index1", *, t0=0.0, t_end=math.inf,
                 q0=None, qd0=None, project=False, baumgarte=None, consistent="check",
                 events=None, rtol=None, atol=None, h=None, first_step=None, max_step=None,
                 min_step=None, max_steps=None, controller=None, error_per_unit_step=False,
                 safety=None, fac_min=None, fac_max=None, tol=None, proj_tol=None,
                 proj_max_iter=None, contact_switching=True, independent=None,
                 linear_algebra=None, **method_options):
        for bad in ("t_eval", "dense_output", "progress"):
            if bad in method_options:
                raise ValueError(f"Simulator: {bad} is not an option of the Simulator "
                                 f"(advance(t) gives the state at t).")
        run = _sim._validate(model, method, formulation, baumgarte, project, independent,
                             linear_algebra, consistent)
        if run.info.backend != "mbint":
            raise ValueError(f"Simulator: method {run.mname!r} is a SUNDIALS method, which "
                             f"runs its own step loop; the Simulator steps mbint's own driver "
                             f"only (the methods of mbint.methods() with backend 'mbint').")
        t0 = float(t0)
        t_end = float(t_end)
        if not math.isfinite(t0) or not t_end > t0:
            raise ValueError(f"Simulator: t0 must be finite and t_end > t0, got t0 = {t0}, "
                             f"t_end = {t_end}.")
        if h is not None and not math.isfinite(t_end):
            raise ValueError("Simulator: a fixed step h needs a finite t_end (its grid "
                             "t0 + k h ends there).")
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
    def _open(self, t0, q0, qd0):
        """A new run from (t0, q0, qd0): simulate's phases up to the C core's set-up."""
        run, st = self._run, self._settings
        q0, qd0, initial = _sim._initial_state(run, t0, q0, qd0, st["consistent"], st["tol"],
                                               st["proj_tol"], st["proj_max_iter"])
        opts = _sim._resolve_options(run.model, st["given"], fixed_step=st["h"] is not None)
        control = _sim.check.step_control(run.info, run.mname, st["h"], *st["control"])
        control["method_options"] = dict(st["method_options"])
        args, kwargs, meta = _sim._core_args(run, t0, self._t_end, q0, qd0, opts, control,
                                             None, False, st["events"], st["project"],
                                             st["proj_tol"], st["proj_max_iter"],
                                             st["contact_switching"])
        self._c = _core.MechStepper(*args, **kwargs)
        self._meta, self._opts, self._initial = meta, opts, initial
        self._t = t0
        self._q, self._qd = q0.copy(), qd0.copy()
        self._finished = False

    # ------------------------------------------------------------------ state
    @property
    def t(self):
        """The current time [s]."""
        return self._t

    @property
    def t_end(self):
        """The end of the span [s] (inf: none)."""
        return self._t_end

    @property
    def state(self):
        """(q, qd) at :attr:`t`: copies of shape (nq,) [m, rad; m/s, rad/s]."""
        return self._q.copy(), self._qd.copy()

    @property
    def inputs(self):
        """{name: value}: the model's generalized forces [N or N m] (set_input)."""
        return {name: v for name, (_, v) in self._inputs.items()}

    @property
    def finished(self):
        """The run reached t_end or a terminal event."""
        return self._finished

    @property
    def stats(self):
        """Counts of the run so far (dict; see the class's Attributes)."""
        s = self._c.stats()
        s.pop("t")
        return s

    # ------------------------------------------------------------------ pieces
    def _stopped(self, status, t, y, what):
        """Take the outcome of a piece: the time and state, or the failure."""
        nq = self.model.nq
        if status < 0:
            traj = self.trajectory()  # raises the user's exception / Ctrl-C, result attached
            raise SimulationFailed(f"Simulator.{what}: {traj.message}", traj)
        self._t = t
        self._q, self._qd = y[:nq].copy(), y[nq:2 * nq].copy()
        if status == 1:
            self._finished = True
        return t

    def _check_open(self, what):
        if self._finished:
            raise RuntimeError(f"Simulator.{what}: the run ended at t = {self._t!r} (t_end or a "
                               f"terminal event); reset() starts a new one.")

    def step(self):
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

    def advance(self, t):
        """Integrate up to exactly ``t``.

        The method steps as in one :func:`mbint.simulate` call until a step ends at or
        past t; the state at t is that step's dense output there (the method's
        interpolant, or cubic Hermite for methods without one), as a ``t_eval`` point:
        no step is shortened to end on t, the step-size sequence is unchanged.

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
        if not t >= self._t:
            raise ValueError(f"Simulator.advance: t = {t!r} is before the current time "
                             f"{self._t!r}; a Simulator integrates forwards only (reset() "
                             f"starts again).")
        if t > self._t_end:
            raise ValueError(f"Simulator.advance: t = {t!r} is past t_end = {self._t_end!r}.")
        if t == self._t:
            return t
        status, tr, y = self._c.advance(t)
        return self._stopped(status, tr, y, "advance")

    def set_input(self, name, value):
        """Set an input of the model: the constant term of a generalized force.

        Parameters
        ----------
        name : str
            The name of a generalized force of the model
            (:meth:`PlanarModel.add_generalized_force`; :attr:`inputs` lists them).
        value : float
            Its new constant term c0 [N for x, y; N m for theta]; the element's other
            coefficients (c1 t, a sin(w t + psi)) stay.

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

        Raises
        ------
        ValueError
            An unknown name (the message lists the inputs), a non-finite value, or a
            formulation whose cached evaluations an input cannot reach (state_space).
        """
        if name not in self._inputs:
            known = sorted(self._inputs) or "none (add_generalized_force declares them)"
            raise ValueError(f"Simulator.set_input: unknown input {name!r}; the model's "
                             f"inputs: {known}.")
        value = float(value)
        if not math.isfinite(value):
            raise ValueError(f"Simulator.set_input: {name!r} must be finite, got {value}.")
        row, old = self._inputs[name]
        if value == old:
            return
        if self._finished:
            self._check_open("set_input")
        status = self._c.set_force(row, value, self._t)
        if status < 0:
            self._stopped(status, self._t, None, "set_input")
        self._inputs[name] = (row, value)

    def reset(self, t0=None, q=None, qd=None):
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

    def trajectory(self):
        """Everything computed so far, as the :class:`~mbint.Trajectory` that
        :func:`mbint.simulate` returns: every accepted step from t0 up to the solver's
        current point (which may lie past :attr:`t`)."""
        out = self._c.result()
        out, options = _sim._with_meta(out, self._meta, self._opts, self._settings["h"])
        st = self._settings
        return _sim._trajectory(self._run, out, options, dict(self._initial), False,
                                st["project"], st["proj_tol"], st["proj_max_iter"])

    def __repr__(self):
        return (f"<Simulator {self.model.name!r} {self.method} {self.formulation} "
                f"t={self._t!r}>")


def _own_handle(run):
    """The run with a handle of its own (a planar model's C tables copied, so that the
    inputs change the Simulator's copy, not the model's) and the inputs
    {name: (row of the force table, value)}."""
    model = run.model
    if getattr(model, "kind", None) != "planar":
        return run, {}
    c = model.compile()
    table = [e for e in model.force_elements if e.kind != "python"]
    inputs = {e.name: (row, float(e.params.get("fa_c0", 0.0)))
              for row, e in enumerate(table) if e.kind == "generalized"}
    if not inputs:
        return run, {}
    py = [e for e in model.force_elements if e.kind == "python"]
    extra = model._python_forces(py) if py else None
    handle = _core.mech_planar(c.bodies, c.gravity, c.joints, np.array(c.forces), c.nc, extra)
    _core.mech_set_linalg(handle, linalg_code(model._linear_algebra))
    return dataclasses.replace(run, handle=handle), inputs
