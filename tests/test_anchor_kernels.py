"""The hand-written f and Jacobian of the speed anchor (tests/benchmarks/anchor_cvode.c,
issue 13) are the model's: they agree with mbint's index-1 kernels
(``model.rhs`` / ``model.jacobian`` of ``models.stiff_double_pendulum()``) to
rounding, at the initial state and at random states (angles far from the springs'
rest positions, spring wrap included)."""
import shutil
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent / "benchmarks"))
import bench_anchor  # noqa: E402

from mbint import models  # noqa: E402

pytestmark = pytest.mark.skipif(shutil.which("cc") is None and shutil.which("gcc") is None,
                                reason="no C compiler")


@pytest.fixture(scope="module")
def exe(tmp_path_factory):
    return bench_anchor.build(tmp_path_factory.mktemp("anchor") / "anchor_cvode")


def test_anchor_f_and_jacobian_are_the_models(exe):
    m = models.stiff_double_pendulum()
    rng = np.random.default_rng(3)
    y0 = np.concatenate([m.q0, m.qd0])
    ys = [y0] + [y0 + s * rng.standard_normal(12) for s in (0.1, 1.0, 3.0, 3.0)]
    for y in ys:
        f, J = bench_anchor.anchor_eval(y, exe=exe)
        fm, Jm = m.rhs(0.0, y), m.jacobian(0.0, y)
        assert np.abs(f - fm).max() <= 1e-12 * np.abs(fm).max()
        assert np.abs(J - Jm).max() <= 1e-12 * np.abs(Jm).max()
