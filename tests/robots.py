"""The URDF test set: the robots folder of the example-robot-data wheel (None when the
package is not installed), for the tests that load its robots."""
import importlib.metadata
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
