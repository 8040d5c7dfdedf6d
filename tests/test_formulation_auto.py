"""formulation="auto" of mbint.simulate (issue 23): the measured rule of
mbint.mbs.formulations.auto_formulation.  A tree that the joint formulation accepts runs
on "joint" (up to AUTO_JOINT_MAX joints for explicit methods, AUTO_JOINT_MAX_IMPLICIT
for implicit ones), anything else on "index1"; the run is the explicit choice's, bit for
bit; the default formulation is unchanged."""
import importlib

import numpy as np
import pytest

import mbint
from mbint import models

F = importlib.import_module("mbint.mbs.formulations")  # the module (mbint.mbs exports a
# function of the same name)

from robots import ROBOTS, needs_robots


def slider_crank():
    """A free slider-crank (crank, rod, slider on a guide; a closed loop), at rest."""
    from test_reactions import slider_crank as driven
    return driven(omega=None, load=0.0)


def _same(a, b):
    """Two trajectories equal bit for bit (times, coordinates, rates, counters)."""
    assert a.formulation == b.formulation
    assert np.array_equal(a.t, b.t)
    assert np.array_equal(a.q, b.q) and np.array_equal(a.qd, b.qd)
    assert a.stats["nfev"] == b.stats["nfev"]


@pytest.mark.parametrize("method", ["dop853", "radau_iia"])
def test_rn_double_pendulum_runs_on_joint(method):
    m = models.stiff_double_pendulum()
    auto = mbint.simulate(m, (0, 0.05), method, formulation="auto")
    assert auto.formulation == "joint"
    assert auto.options["formulation_requested"] == "auto"
    assert "2 joints" in auto.options["formulation_rule"]
    _same(auto, mbint.simulate(m, (0, 0.05), method, formulation="joint"))


@needs_robots
def test_ur5_runs_on_joint():
    m = mbint.load_urdf(str(ROBOTS / "ur_description/urdf/ur5_robot.urdf"),
                        q=np.linspace(-0.4, 0.4, 6))
    auto = mbint.simulate(m, (0, 0.05), "dop853", formulation="auto")
    assert auto.formulation == "joint"
    _same(auto, mbint.simulate(m, (0, 0.05), "dop853", formulation="joint"))


def test_slider_crank_loop_runs_on_index1():
    m = slider_crank()
    auto = mbint.simulate(m, (0, 0.05), "dop853", formulation="auto")
    assert auto.formulation == "index1"
    assert "not a tree" in auto.options["formulation_rule"]
    _same(auto, mbint.simulate(m, (0, 0.05), "dop853", formulation="index1"))
    with pytest.raises(ValueError):  # the rule's premise: joint refuses the loop
        mbint.simulate(m, (0, 0.05), "dop853", formulation="joint")


def test_long_chain_with_implicit_method_runs_on_index1():
    lim = F.AUTO_JOINT_MAX_IMPLICIT["planar"]
    m = models.pendulum_chain(lim + 1, link=0.1, mass=0.1)
    auto = mbint.simulate(m, (0, 1e-3), "radau_iia", formulation="auto")
    assert auto.formulation == "index1"
    assert f"{lim + 1} joints > {lim}" in auto.options["formulation_rule"]
    _same(auto, mbint.simulate(m, (0, 1e-3), "radau_iia", formulation="index1"))
    # the same chain with an explicit method is under AUTO_JOINT_MAX: joint
    assert mbint.simulate(m, (0, 1e-3), "dopri5", formulation="auto").formulation == "joint"
    # at the limit: joint
    m = models.pendulum_chain(lim, link=0.1, mass=0.1)
    assert mbint.simulate(m, (0, 1e-3), "radau_iia", formulation="auto").formulation == "joint"


def test_spatial_implicit_limit(monkeypatch, tmp_path):
    """A URDF tree takes the URDF limit, not the planar one (lowered to keep it small)."""
    pytest.importorskip("yourdfpy")
    from urdf_chains import rod_chain
    m = mbint.load_urdf(rod_chain(tmp_path, 4, length=0.1, mass=0.1, axes="yx"),
                        q=[0.3, -0.2, 0.1, 0.2])
    monkeypatch.setitem(F.AUTO_JOINT_MAX_IMPLICIT, "urdf", 3)
    monkeypatch.setitem(F.AUTO_JOINT_MAX_IMPLICIT, "planar", 10)
    monkeypatch.setitem(F.AUTO_JOINT_MAX_IMPLICIT, "spatial", 10)
    tr = mbint.simulate(m, (0, 1e-3), "radau_iia", formulation="auto")
    assert tr.formulation == "index1"
    assert "4 joints > 3" in tr.options["formulation_rule"]
    monkeypatch.setitem(F.AUTO_JOINT_MAX_IMPLICIT, "urdf", 4)
    assert mbint.simulate(m, (0, 1e-3), "radau_iia", formulation="auto").formulation == "joint"


def test_hand_built_spatial_tree(monkeypatch):
    """A SpatialModel rope on ball joints runs on joint (its own implicit limit)."""
    from test_joint_spatial import rope
    m = rope(4)
    tr = mbint.simulate(m, (0, 1e-3), "dop853", formulation="auto")
    assert tr.formulation == "joint"
    _same(tr, mbint.simulate(m, (0, 1e-3), "dop853", formulation="joint"))
    monkeypatch.setitem(F.AUTO_JOINT_MAX_IMPLICIT, "spatial", 3)
    monkeypatch.setitem(F.AUTO_JOINT_MAX_IMPLICIT, "urdf", 10)
    tr = mbint.simulate(m, (0, 1e-3), "radau_iia", formulation="auto")
    assert tr.formulation == "index1" and "4 joints > 3" in tr.options["formulation_rule"]


def test_explicit_limit(monkeypatch):
    """A tree over AUTO_JOINT_MAX joints runs on index1 with an explicit method too (the
    limit lowered so that the chain stays small); at the limit it runs on joint."""
    monkeypatch.setattr(F, "AUTO_JOINT_MAX", 4)
    assert mbint.simulate(models.pendulum_chain(5), (0, 1e-3), "dop853",
                          formulation="auto").formulation == "index1"
    assert mbint.simulate(models.pendulum_chain(4), (0, 1e-3), "dop853",
                          formulation="auto").formulation == "joint"


def test_spatial_model_and_contacts_run_on_index1():
    assert mbint.simulate(models.hmmwv(), (0, 1e-3), "dop853",
                          formulation="auto").formulation == "index1"
    assert mbint.simulate(models.bouncing_balls(), (0, 1e-3), "dop853",
                          formulation="auto").formulation == "index1"


@pytest.mark.parametrize("kw, expected", [(dict(baumgarte=5.0), "index1"),
                                          (dict(project=True), "index1"),
                                          (dict(linear_algebra="sparse"), "index1"),
                                          (dict(independent=[2]), "state_space")])
def test_options_of_another_formulation_decide(kw, expected):
    m = models.stiff_double_pendulum()  # a tree: joint without these options
    tr = mbint.simulate(m, (0, 1e-3), "radau_iia", formulation="auto", **kw)
    assert tr.formulation == expected
    _same(tr, mbint.simulate(m, (0, 1e-3), "radau_iia", formulation=expected, **kw))


def test_default_is_unchanged():
    tr = mbint.simulate(models.stiff_double_pendulum(), (0, 1e-3), "radau_iia")
    assert tr.formulation == "index1"
    assert "formulation_rule" not in tr.options


@pytest.mark.parametrize("bad", ["Auto", "automatic", "", None, 3])
def test_bad_formulation_rejected(bad):
    with pytest.raises(ValueError, match="formulation"):
        mbint.simulate(models.stiff_double_pendulum(), (0, 1e-3), "dop853", formulation=bad)
