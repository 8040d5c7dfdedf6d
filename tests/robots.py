"""The URDF test set: the robots folder of the example-robot-data wheel (None when the
package is not installed), for the tests that load its robots."""
import importlib.metadata
import math
from pathlib import Path

import pytest


def robots_dir():
    try:
        files = importlib.metadata.files("example-robot-data") or []
    except importlib.metadata.PackageNotFoundError:
        return None
    for f in files:
        if str(f).endswith(".urdf"):
            p = Path(f.locate())
            while p.name != "robots":
                p = p.parent
            return p
    return None


ROBOTS = robots_dir()
needs_robots = pytest.mark.skipif(ROBOTS is None, reason="example-robot-data is not installed")


def set_joint_coordinates(q, joints, x):
    """Pinocchio's configuration q with the coordinates x of its joint models ``joints``
    (a continuous joint holds (cos, sin) of its angle); q is filled in place and returned."""
    for jm, xk in zip(joints, x):
        if jm.nq == 2:
            q[jm.idx_q:jm.idx_q + 2] = math.cos(xk), math.sin(xk)
        else:
            q[jm.idx_q] = xk
    return q
