"""Plots an engineer trusts: units on every axis, curves that stay apart, no exact
zeros on a log axis, dissipation named in energy plots, figures shown once in
Jupyter, animations inline and as GIF/MP4."""
import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

import mbint  # noqa: E402
from mbint import models  # noqa: E402


@pytest.fixture(scope="module")
def pendulum():
    return mbint.simulate(models.stiff_double_pendulum(), (0, 1), method="radau_iia",
                          project=True, dense_output=True)


def test_axes_carry_units_and_curves_differ(pendulum):
    # regression: m and rad shared one axis ("q [m, rad]"); now a panel per unit
    fig = pendulum.plot("q")
    top, bottom = fig.axes
    assert top.get_ylabel() == "q [m]" and bottom.get_ylabel() == "q [rad]"
    assert bottom.get_xlabel() == "t [s]"
    assert [ln.get_label() for ln in top.lines][:2] == ["q body1.x", "q body1.y"]
    assert [ln.get_label() for ln in bottom.lines] == ["q body1.theta", "q body2.theta"]
    lines = top.lines + bottom.lines
    styles = {(ln.get_linestyle(), ln.get_marker()) for ln in lines}
    assert len(styles) == len(lines) == 6               # each curve its own look
    # on an axis of the caller's: one axis, the units in the legend
    _, ax = plt.subplots()
    pendulum.plot("q", ax=ax)
    assert ax.get_ylabel() == "q [m, rad]"
    assert [ln.get_label() for ln in ax.lines][:3] == ["q body1.x [m]", "q body1.y [m]",
                                                       "q body1.theta [rad]"]
    assert pendulum.plot("theta").axes[0].get_ylabel() == "theta [rad]"
    assert pendulum.plot("qd", coords=[0, 1]).axes[0].get_ylabel() == "dq/dt [m/s]"
    assert pendulum.plot("lam").axes[0].get_ylabel() == "multipliers lambda [N]"
    plt.close("all")


def test_violation_plot_leaves_exact_zeros_out(pendulum):
    V = pendulum.violation()
    assert np.any(V.position == 0) or np.any(V.velocity == 0)    # projected: exact zeros occur
    ax = pendulum.plot_violation().axes[0]
    assert ax.get_yscale() == "log"
    for ln, v in zip(ax.lines, V):
        y = np.asarray(ln.get_ydata(), float)
        assert np.all(np.isnan(y) == (v == 0))                  # zeros are gaps, not 1e-308
        assert np.nanmin(y) > 0
    texts = [t.get_text() for t in ax.get_legend().get_texts()]
    assert any("exactly 0 at" in t for t in texts)
    balls = mbint.simulate(models.bouncing_balls(), (0, 0.1))   # no constraints: all zero
    ax = balls.plot_violation().axes[0]
    assert ax.get_yscale() == "linear"
    assert all("exactly 0 everywhere" in t.get_text() for t in ax.get_legend().get_texts())
    plt.close("all")


def test_energy_plot_names_dissipation(pendulum):
    ax = pendulum.plot_energy().axes[0]
    assert ax.get_ylabel() == "energy [J]"
    lines = {ln.get_label(): np.asarray(ln.get_ydata()) for ln in ax.lines}
    assert "dissipated work W (dampers)" in lines
    EW = lines["E + W (constant without actuators)"]
    E0 = pendulum.energy().total[0]
    assert np.max(np.abs(EW - E0)) < 1e-3 * abs(E0)            # the balance closes
    assert np.ptp(lines["total E = T + V"]) > 0.5 * abs(E0)     # while E itself falls
    undamped = mbint.simulate(models.two_link_manipulator(), (0, 0.2))
    labels = [ln.get_label() for ln in undamped.plot_energy().axes[0].lines]
    assert labels == ["kinetic T", "potential V", "total E = T + V"]
    plt.close("all")


def test_figure_is_shown_once_in_jupyter(pendulum, monkeypatch):
    """Regression: a pyplot figure that is a cell's value was shown by the displayhook
    and again by the inline backend at the cell's end.  Displayed once, the figure
    leaves pyplot, so the backend's end-of-cell display cannot repeat it."""
    shown = []
    import IPython.display

    monkeypatch.setattr(IPython.display, "display", lambda obj: shown.append(obj))
    fig = pendulum.plot("q")
    assert plt.fignum_exists(fig.number)
    fig._ipython_display_()                  # the cell's value (or the backend's display)
    assert len(shown) == 1 and shown[0].data[:8] == b"\x89PNG\r\n\x1a\n"
    assert not plt.fignum_exists(fig.number)  # the end-of-cell display no longer sees it
    fig._ipython_display_()                  # ``fig`` in a later cell: shown again, once
    assert len(shown) == 2


def test_animation_inline_gif_and_mp4(pendulum, tmp_path):
    anim = pendulum.animate(fps=10)
    assert isinstance(anim, mbint.mbs.trajectory.Animation) and anim.n_frames == 11
    html = anim._repr_html_()
    assert "<script" in html and html.count("data:image/png;base64") >= anim.n_frames
    gif = pendulum.animate(tmp_path / "p.gif", fps=10)
    from PIL import Image

    assert Image.open(gif[0]).n_frames == 11
    mp4 = anim.save(tmp_path / "p.mp4")
    data = mp4[0].read_bytes()
    assert len(data) > 1000 and data[4:8] == b"ftyp"          # an ISO media file


def test_output_plot_reads_the_output_unit():
    """Regression: traj.plot of a named output labelled its axis without the unit the
    model declares (model.output_units: a driver's torque in N m)."""
    m = mbint.PlanarModel(name="crank")
    crank = m.add_body(1.0, 0.01, q=(0.1, 0.0, 0.0), name="crank")
    m.add_revolute(m.ground, (0, 0), crank, (-0.1, 0), name="O")
    m.add_driver(crank, "theta", c1=2.0, name="motor")
    m.set_initial(qd=np.linalg.lstsq(m.constraint_jacobian(0.0), -m.phi_t(0.0), rcond=None)[0])
    traj = mbint.simulate(m, (0, 0.2), method="radau_iia")
    assert m.output_units["motor.torque"] == "N m"
    fig = traj.plot("motor.torque")
    assert fig.axes[0].get_ylabel() == "motor.torque [N m]"
    plt.close(fig)
