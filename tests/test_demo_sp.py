"""The SP section of the demo (mbint.demo.sp.section_sp) in quick mode: the files it
writes and the facts its summary reports (SP paper Figs 2-5, 7, 8)."""
import matplotlib

matplotlib.use("Agg")

import pytest  # noqa: E402

from mbint.demo.sp import section_sp  # noqa: E402
from test_demo_llm import Collect  # noqa: E402


def test_section_sp_quick(tmp_path):
    s = Collect()
    import warnings

    with warnings.catch_warnings():  # regression: rk4's divergence printed an overflow
        warnings.simplefilter("error", RuntimeWarning)
        out = section_sp(tmp_path, s, quick=True, progress=lambda m: None)
    for name in ("fig2_3_stability.png", "fig4_5_local_error.png", "fig7_8_pendulum.png", "sp.md"):
        assert (tmp_path / "sp" / name).exists()
    # eq 59: beta = 0 has RK4's interval; the interval grows with beta
    assert out["limits"][(100, 0.0)] == pytest.approx(2.785, abs=1e-3)
    assert out["limits"][(100, 0.5)] > out["limits"][(100, 0.3)] > out["limits"][(100, 0.1)]
    # local error: slope 2 for h |lambda_f| << 1, about 1 in the stiff range
    assert out["slopes"][(10, 0.1)][0] == pytest.approx(2.0, abs=0.1)
    assert out["slopes"][(1000, 0.1)][1] == pytest.approx(1.0, abs=0.2)
    rows = {r["method"]: r for r in out["rows"]}
    assert rows["rk4 h=0.005"]["status"] == -1
    sp = rows["singular_perturbation h=0.005"]
    assert sp["status"] == 0 and sp["energy_error"] < 1e-4 and sp["theta_error"] < 1e-6
    assert s.value("pendulum_particle/singular_perturbation h=0.005", "nsteps") == 1000
    assert "particle.x" in (tmp_path / "sp" / "sp.md").read_text()
