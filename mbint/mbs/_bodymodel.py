"""What :class:`~mbint.PlanarModel` and :class:`~mbint.SpatialModel` share: bodies looked
up by object, name or index, unique element names, pairs of distinct bodies, named
outputs, the compiled C tables and pickling (the description only)."""
from __future__ import annotations

import numbers
from typing import TYPE_CHECKING, Any

import numpy as np

from ._kernels import Kernels
from .._typing import ArrayLike, FloatArray, OutputFun

if TYPE_CHECKING:
    from .sensors import Sensor


class BodyModel(Kernels):
    """Base of the body-based model builders.  A subclass sets ``_body_type`` (its body
    class) and has ``bodies``, ``ground``, ``joint_elements``, ``force_elements``,
    ``outputs``, ``_compiled`` and ``compile()``."""

    _body_type: type = object
    _coords: tuple = ()  # the names of a body's coordinates, in the order of q

    @property
    def q0(self) -> FloatArray:
        """Initial coordinates of all bodies, shape (nq,)."""
        return np.concatenate([b.q0 for b in self.bodies]) if self.bodies else np.zeros(0)

    @property
    def qd0(self) -> FloatArray:
        """Initial velocities of all bodies, shape (nq,)."""
        return np.concatenate([b.qd0 for b in self.bodies]) if self.bodies else np.zeros(0)

    @property
    def coordinate_names(self) -> list[str]:
        """Names of the entries of q: ``"<body>.<coordinate>"`` (planar: x, y, theta;
        spatial: x, y, z, e0, e1, e2, e3)."""
        return [f"{b.name}.{c}" for b in self.bodies for c in self._coords]

    def _init_elements(self):
        """Empty lists of bodies, joints, forces and outputs, and the descriptive
        attributes a paper model fills in (description, reference, t_span, settings,
        reference_energy)."""
        self.bodies = []
        self.joint_elements = []
        self.force_elements = []
        self.outputs = {}
        self.output_units = {}
        self.sensors = {}
        self.description = ""
        self.reference = ""
        self.t_span = None
        self.settings = {}
        self.reference_energy = None
        self._compiled = None

    def _new_body(self, name, mass):
        """The checked name (default ``"body<k>"``), the ``where`` of its messages and the
        mass as a positive float, for ``add_body``."""
        name = f"body{len(self.bodies)}" if name is None else str(name)
        where = f"add_body {name!r}"
        if name == "ground" or any(b.name == name for b in self.bodies):
            raise ValueError(f"{where}: the name is already used.")
        try:
            mass = float(mass)
        except (TypeError, ValueError):
            raise ValueError(f"{where}: mass must be a number, got {mass!r}.") from None
        if not np.isfinite(mass):
            raise ValueError(f"{where}: mass must be finite, got {mass}.")
        if mass <= 0:
            raise ValueError(f"{where}: mass must be positive, got {mass}.")
        return name, where, mass

    def body(self, ref: Any) -> Any:
        """The body named or indexed by ``ref`` (``"ground"`` / -1: the ground)."""
        return self._body("body", ref, "ref")

    def _body(self, where, ref, role):
        if isinstance(ref, self._body_type):
            if ref.model is not self:
                raise ValueError(f"{where}: {role} {ref!r} is not a body of this model.")
            return ref
        if isinstance(ref, str):
            if ref == "ground":
                return self.ground
            for b in self.bodies:
                if b.name == ref:
                    return b
        elif isinstance(ref, numbers.Integral) and not isinstance(ref, bool):
            if ref == -1:
                return self.ground
            if 0 <= ref < len(self.bodies):
                return self.bodies[ref]
        raise ValueError(f"{where}: {role} {ref!r} is not a body of this model "
                         f"(bodies: {['ground'] + [b.name for b in self.bodies]}).")

    def _name(self, kind, name, pool=None):
        """``name``, or ``kind`` numbered by the size of ``pool`` (default: all joints and
        forces); a name used by another element is refused."""
        elements = self.joint_elements + self.force_elements
        if name is None:
            name = f"{kind}{len(elements if pool is None else pool)}"
        name = str(name)
        if any(e.name == name for e in elements):
            raise ValueError(f"{kind} {name!r}: the name is already used.")
        return name

    def _pair(self, where, bi, bj):
        bi = self._body(where, bi, "body_i")
        bj = self._body(where, bj, "body_j")
        if bi is bj:
            raise ValueError(f"{where}: body_i and body_j are the same body {bi.name!r}.")
        return bi, bj

    def _joint_row_names(self):
        """``"<joint>[r]"`` (r = 0, 1, ...) for every row of a joint of several rows, the
        joint's name alone for a one-row joint (a driver ``"motor"``, not
        ``"motor[0]"``)."""
        names = []
        for e in self.joint_elements:
            names += [f"{e.name}[{r}]" if e.rows > 1 else e.name for r in range(e.rows)]
        return names

    def add_output(self, name: str, fn: OutputFun, unit: str | None = None) -> None:
        """A named output ``fn(t, q, qd)``, evaluated by :meth:`Trajectory.output`.

        Parameters
        ----------
        name : str
        fn : callable
            ``fn(t, q, qd)`` with t of shape (m,) in s and q, qd of shape
            (nq, m) (a trajectory: coordinates first, points along the last
            axis); returns an array whose last axis has length m.  Indexing
            the coordinate first, ``lambda t, q, qd: q[2]``, works for one
            state (nq,) and for a trajectory alike.
        unit : str, optional
            Its unit (``"rad"``, ``"N m"``, ...), kept in :attr:`output_units` and
            written to a saved trajectory's ``units``.
        """
        if not callable(fn):
            raise ValueError(f"add_output {name!r}: fn must be callable fn(t, q, qd).")
        if str(name) in getattr(self, "sensors", {}):
            raise ValueError(f"add_output {name!r}: the name is already used by a sensor.")
        self.outputs[str(name)] = fn
        if unit is not None:
            self.output_units[str(name)] = str(unit)

    def add_sensor(self, name: str, kind: str, body: Any = None, point: ArrayLike | None = None, *,
                   frame: Any = "ground", other: Any = None, other_point: ArrayLike | None = None,
                   element: str | None = None, axis: ArrayLike | None = None,
                   joint: str | None = None) -> Sensor:
        """A named sensor, evaluated in C at the output times of a trajectory
        (:meth:`Trajectory.sensor`, :meth:`Trajectory.output`, saved with its unit).

        Parameters
        ----------
        name : str
            Unique among the outputs and sensors.
        kind : str
            ``"position"``, ``"velocity"``, ``"acceleration"`` (of the point ``point``
            of ``body``; m, m/s, m/s**2), ``"angular_velocity"``,
            ``"angular_acceleration"`` (of ``body``; rad/s, rad/s**2),
            ``"relative_angle"``, ``"relative_rate"`` (of ``other`` relative to
            ``body``; rad, rad/s), ``"distance"``, ``"distance_rate"`` (between
            ``point`` on ``body`` and ``other_point`` on ``other``; m, m/s),
            ``"force"`` (the tension of a spring-damper, N, or the torque of a
            rotational one, N*m: ``element``) or ``"contact"`` (the normal force of a
            planar contact or the vertical force of a spatial tire, N: ``element``).
            See :mod:`mbint.mbs.sensors`.
        body, other : Body, name or index
        point, other_point : array_like, shape (2,) or (3,), optional
            Points in the body's frame [m] (default: the centre of mass).
        frame : "ground" or Body, name or index
            The axes of a vector quantity: global, or those of a body.
        element : str
            The name of a force element (``force``, ``contact``).
        axis : array_like, shape (3,)
            The rotation axis of a spatial ``relative_angle`` / ``relative_rate``
            (global, at the initial configuration).
        joint : str, optional
            Instead of body, other and axis: the name of a revolute joint, whose angle
            (body_j relative to body_i, about its axis) a ``relative_angle`` /
            ``relative_rate`` reports.

        Returns
        -------
        mbint.mbs.sensors.Sensor
            With its ``unit`` (pint-parseable) and ``components``.

        Raises
        ------
        ValueError
            An unknown kind, body, frame or element, an element the kind cannot read, an
            argument that does not apply to the kind, or a name already used.
        """
        from .sensors import add_sensor

        return add_sensor(self, name, kind, body, point, frame=frame, other=other,
                          other_point=other_point, element=element, axis=axis, joint=joint)

    def _add_driver_output(self, e):
        """The output ``"<driver>.torque"`` (N m) or ``"<driver>.force"`` (N) of driver
        ``e``: the effort it applies to the body it drives
        (:func:`mbint.mbs.reactions.driver_effort`)."""
        from .reactions import DriverEffort

        fn = DriverEffort(self, e.name)
        self.add_output(f"{e.name}.{fn.quantity}", fn, unit=fn.unit)

    def _mech_handle(self):
        return self.compile().handle

    def __getstate__(self):
        """The description only: the C tables are compiled again on first use after
        loading (see :mod:`mbint._pickling` for what cannot be pickled)."""
        state = dict(self.__dict__)
        state["_compiled"] = None
        return state
