"""``python -m mbint demo --quick`` and the plot functions of mbint.plot."""
import csv
import math
import os
import subprocess
import sys

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

import mbint  # noqa: E402
from mbint import errors, plot, problems  # noqa: E402
from mbint.__main__ import main  # noqa: E402

PNGS = ("msd_solution.png", "msd_step_sizes.png", "pendulum_energy.png", "stability_regions.png",
        "error_vs_step.png", "richardson.png", "work_precision.png")
MSD_METHODS = {"euler", "heun", "rk4", "nystrom_midpoint", "rk23", "dopri5", "adams"}


@pytest.fixture(scope="module")
def demo_out(tmp_path_factory):
    out = tmp_path_factory.mktemp("demo")
    env = dict(os.environ, MPLBACKEND="Agg")
    proc = subprocess.run([sys.executable, "-m", "mbint", "demo", "--quick", "--out", str(out)],
                          capture_output=True, text=True, timeout=300, env=env)
    assert proc.returncode == 0, proc.stderr
    return out, proc.stdout


@pytest.fixture(scope="module")
def rows(demo_out):
    with open(demo_out[0] / "summary.csv", newline="") as fh:
        return list(csv.DictReader(fh))


def value(rows, section, method, quantity, h=None, rtol=None):
    """The single CSV value matching the keys (h, rtol compared as floats)."""
    hits = [r for r in rows if r["section"] == section and r["method"] == method
            and r["quantity"] == quantity
            and (h is None or (r["h"] and math.isclose(float(r["h"]), h)))
            and (rtol is None or (r["rtol"] and math.isclose(float(r["rtol"]), rtol)))]
    assert len(hits) == 1, (section, method, quantity, h, rtol, hits)
    return float(hits[0]["value"])


def test_demo_writes_files_and_progress(demo_out):
    out, stdout = demo_out
    for name in PNGS:
        data = (out / name).read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n", name
        assert len(data) > 5000, name
    md = (out / "summary.md").read_text()
    for heading in ("## (a) Mass-spring-damper", "## (b) Undamped pendulum", "## (c) Stability",
                    "## (d) Global error", "### Richardson", "## (e) Work"):
        assert heading in md
    assert "| method | h or tolerance | nfev |" in md
    for name in PNGS:
        assert f"]({name})" in md
    assert "[mbint demo] (a) mass-spring-damper" in stdout
    assert "wrote" in stdout and "summary.csv" in stdout


def test_csv_has_every_method_with_finite_errors(rows):
    assert list(rows[0]) == ["section", "method", "h", "rtol", "quantity", "value"]
    msd = {r["method"] for r in rows if r["section"] == "msd" and r["quantity"] == "max_error"}
    assert msd == MSD_METHODS
    for r in rows:
        if r["quantity"] in ("max_error", "max_error_dense", "error", "estimate", "true_error"):
            assert math.isfinite(float(r["value"])), r
    for m in ("rk23", "dopri5", "adams"):
        assert value(rows, "msd", m, "max_error", rtol=1e-6) < 1e-4
        assert value(rows, "msd", m, "nfev", rtol=1e-6) > 0


def test_msd_errors_follow_the_order(rows):
    rk4 = value(rows, "msd", "rk4", "max_error", h=0.01)
    heun = value(rows, "msd", "heun", "max_error", h=0.01)
    euler = value(rows, "msd", "euler", "max_error", h=0.01)
    assert rk4 < 1e-5
    assert rk4 < heun / 100 < euler / 100
    assert value(rows, "msd", "rk4", "nfev", h=0.01) == 2001     # 4 per step (+1 initial)
    assert value(rows, "msd", "nystrom_midpoint", "nfev", h=0.01) == 500   # 1 per step
    # forward Euler at h = 0.01 does not damp: |R| = |1 + h lambda| ~ 1 (LN 7.1)
    assert value(rows, "msd", "euler", "abs_R_h_lambda", h=0.01) == pytest.approx(1.0, abs=1e-5)


def test_pendulum_euler_gains_energy_others_keep_it(rows):
    assert value(rows, "pendulum", "euler", "energy_rel_change_end", h=0.01) > 0.10
    assert abs(value(rows, "pendulum", "rk4", "energy_rel_change_max", h=0.01)) < 1e-6
    assert abs(value(rows, "pendulum", "dopri5", "energy_rel_change_max", rtol=1e-6)) < 1e-4
    assert abs(value(rows, "pendulum", "nystrom_midpoint", "energy_rel_change_max", h=0.01)) < 1e-3


def test_stability_limits(rows):
    assert value(rows, "stability", "rk4", "imag_axis_limit") == pytest.approx(2 * math.sqrt(2),
                                                                              abs=2e-3)
    assert value(rows, "stability", "euler", "imag_axis_limit") == 0.0
    assert value(rows, "stability", "heun", "imag_axis_limit") < 0.01
    assert value(rows, "stability", "nystrom_midpoint", "imag_axis_limit") == pytest.approx(2.0,
                                                                                           abs=2e-3)
    assert value(rows, "stability", "euler", "real_axis_limit") == pytest.approx(2.0, abs=2e-3)


def test_error_study_slopes_and_richardson(rows):
    assert value(rows, "error_study", "heun", "slope_truncation") == pytest.approx(2.0, abs=0.15)
    assert value(rows, "error_study", "rk4", "slope_truncation") == pytest.approx(4.0, abs=0.25)
    for m in ("heun", "rk4"):
        ests = [(float(r["h"]), float(r["value"])) for r in rows if r["section"] == "richardson"
                and r["method"] == m and r["quantity"] == "estimate"]
        assert len(ests) >= 4
        h = min(h for h, _ in ests)
        ratio = value(rows, "richardson", m, "estimate", h=h) / value(rows, "richardson", m,
                                                                      "true_error", h=h)
        assert 0.8 < ratio < 1.25, (m, h, ratio)


def test_cli_usage_errors(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["nosuch"])
    assert exc.value.code == 2
    assert "usage" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exc:
        main([])
    assert exc.value.code == 2


# ---------------------------------------------------------------------------
# mbint.plot on small inputs
# ---------------------------------------------------------------------------

@pytest.fixture(scope="module")
def small_result():
    return mbint.solve_ivp(problems.mass_spring_damper, (0.0, 1.0), [0.0, 0.0], method="dopri5",
                           rtol=1e-4, dense_output=True)


def test_plot_solution(small_result):
    fig = plot.plot_solution(small_result)
    assert isinstance(fig, Figure)
    ax = fig.axes[0]
    # one dense line and one marker set per component
    assert len(ax.lines) == 4
    assert len(ax.lines[0].get_xdata()) == 500
    assert len(ax.lines[1].get_xdata()) == len(small_result.t)
    plt.close(fig)
    fixed = mbint.solve_ivp(problems.mass_spring_damper, (0.0, 1.0), [0.0, 0.0], method="rk4",
                            h=0.1)
    fig, ax = plt.subplots()
    assert plot.plot_solution(fixed, components=1, labels="v", ax=ax) is fig
    assert [ln.get_label() for ln in ax.lines] == ["v"]
    with pytest.raises(ValueError, match="labels"):
        plot.plot_solution(fixed, components=[0, 1], labels=["x"], ax=ax)
    with pytest.raises(ValueError, match="components"):
        plot.plot_solution(fixed, components=[5], ax=ax)
    plt.close(fig)


def test_plot_step_sizes(small_result):
    other = mbint.solve_ivp(problems.mass_spring_damper, (0.0, 1.0), [0.0, 0.0], method="rk23",
                            rtol=1e-4)
    fig = plot.plot_step_sizes([small_result, other])
    ax = fig.axes[0]
    assert isinstance(fig, Figure)
    assert ax.get_yscale() == "log"
    assert len(ax.lines) == 2
    np.testing.assert_allclose(ax.lines[1].get_ydata(), np.abs(other.h_steps))
    assert isinstance(plot.plot_step_sizes(small_result), Figure)
    plt.close("all")


def test_plot_stability_regions():
    fig = plot.plot_stability_regions(["euler", "rk4"], n=101)
    ax = fig.axes[0]
    assert isinstance(fig, Figure)
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["euler", "rk4"]
    assert ax.get_xlim() == (-5.0, 1.0)
    plt.close(fig)


def test_error_slopes_and_plot_error_vs_step():
    h = 2.0 ** -np.arange(1, 30)
    e = h ** 2 + 1e-12 / h          # truncation C1 h^2 and round-off C2 / h
    study = {"h": h, "D": np.r_[np.nan, np.abs(np.diff(e))], "error": e}
    sl = plot.error_slopes(study)
    assert sl["truncation"] == pytest.approx(2.0, abs=0.01)
    assert sl["roundoff"] == pytest.approx(-1.0, abs=0.05)
    assert sl["h_min"] == 2.0 ** -14       # minimum of h^2 + 1e-12 / h at h = 7.9e-5
    only_trunc = plot.error_slopes({"h": h[:10], "D": study["D"][:10], "error": e[:10]})
    assert math.isnan(only_trunc["roundoff"])

    real = errors.step_size_study(problems.c_rhs("mass_spring_damper"), (0.0, 1.0), [0.0, 0.0],
                                  "heun", levels=range(4, 10),
                                  exact=problems.mass_spring_damper_exact(1.0))
    fig = plot.plot_error_vs_step([study, real], labels=["model", "heun"])
    ax = fig.axes[0]
    assert isinstance(fig, Figure)
    assert ax.get_xscale() == ax.get_yscale() == "log"
    labels = [ln.get_label() for ln in ax.lines]
    assert "heun: error" in labels and "heun: D" in labels
    assert "slope 2" in labels and "slope -1 (C2/h)" in labels
    plt.close(fig)


def test_plot_work_precision():
    rows = [{"method": "a", "nfev": 100, "error": 1e-2, "time": 0.1},
            {"method": "a", "nfev": 50, "error": 1e-1, "time": 0.05},
            {"method": "b", "nfev": 80, "error": 1e-4, "time": 0.2}]
    fig = plot.plot_work_precision(rows)
    ax = fig.axes[0]
    assert isinstance(fig, Figure)
    assert len(ax.lines) == 2
    np.testing.assert_allclose(ax.lines[0].get_xdata(), [50, 100])   # sorted by cost
    assert isinstance(plot.plot_work_precision(rows, x="time"), Figure)
    with pytest.raises(ValueError, match="x must be"):
        plot.plot_work_precision(rows, x="steps")
    plt.close("all")
