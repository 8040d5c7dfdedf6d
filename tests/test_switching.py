"""Switching events close to the minimum step size: a contact found a few ulps past
the start of a step used to be retried with a step shorter than the driver's minimum
("Required step size is less than spacing between numbers"); the step now crosses the
switch instead."""
import pytest

import mbint
from mbint import models


@pytest.mark.parametrize("method,rtol", [("dopri5", 1e-9), ("bdf", 1e-10)])
def test_tight_tolerance_contact_restarts_reach_the_end(method, rtol):
    tr = mbint.simulate(models.bouncing_balls(), (0, 3), method=method, rtol=rtol,
                        atol=rtol * 1e-2, max_step=0.005)
    assert tr.t[-1] == 3.0
    assert tr.stats["nrestart"] >= 20  # every contact opening and closing restarts
