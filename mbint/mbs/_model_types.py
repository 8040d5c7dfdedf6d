"""The model kinds as annotation types (for annotations only; nothing here runs).

Kept apart from :mod:`mbint._typing`, which every module imports: only the modules above
the models (simulate, the formulations, statics, the Simulator) import this one, so
that no file the models are built of refers back to them.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Union

if TYPE_CHECKING:
    from .mechanical import MechanicalSystem
    from .planar import PlanarModel
    from .spatial import SpatialModel

__all__ = ["Model", "BodyModelType"]

#: a mechanism that :func:`mbint.simulate` runs (a URDF model is a SpatialModel)
Model = Union["PlanarModel", "SpatialModel", "MechanicalSystem"]
#: a mechanism built of bodies and joints (joint reactions, drawing)
BodyModelType = Union["PlanarModel", "SpatialModel"]
