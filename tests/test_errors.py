"""Richardson's global error estimate (LN eq 7.9) and the truncation/round-off study."""
import numpy as np

import mbint
from mbint import problems


def test_richardson_estimate_tracks_true_error():
    T = 1.0
    exact = problems.mass_spring_damper_exact([T])[:, 0]
    for method, h in (("heun", 0.01), ("rk4", 0.02)):
        y, est = mbint.errors.richardson(problems.mass_spring_damper, (0, T), [0.0, 0.0],
                                         method, h)
        true = np.abs(y - exact)
        ratio = np.max(est) / np.max(true)
        assert 0.7 < ratio < 1.4, (method, ratio)


def test_truncation_then_roundoff():
    """E = C1 h^p + C2/h: for Heun the error falls with slope 2 and then stops falling
    once round-off dominates (LN 7.5, figs 7.10-7.13)."""
    T = 1.0
    exact = problems.mass_spring_damper_exact([T])[:, 0]
    st = mbint.errors.step_size_study(problems.c_rhs("mass_spring_damper"), (0, T), [0.0, 0.0],
                                      "rk4", levels=range(4, 21), exact=exact)
    err, h = st["error"], st["h"]
    # truncation branch: slope ~4 over coarse steps
    slope = np.polyfit(np.log(h[2:6]), np.log(err[2:6]), 1)[0]
    assert abs(slope - 4) < 0.3
    # the minimum is not at the finest step: round-off takes over
    k = int(np.argmin(err))
    assert k < len(h) - 1 and err[-1] > 2 * err[k]
    assert err[k] < 1e-11
