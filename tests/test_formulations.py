"""The table of formulations (mbint/mbs/formulations.py) against what the C core does.

Every rule simulate applies comes from one row of the table; these tests hold the table
to the behaviour: each method the table says solves a formulation runs it to the end
on a small mechanism, each other method is refused with a ValueError naming the
ones that do, the codes are the C core's, and the options a formulation does not take
are refused."""
import warnings

import numpy as np
import pytest

import mbint
from mbint import models
from mbint.methods import method_info
from mbint.mbs.formulations import TABLE, formulation, formulations, supported_formulations


def test_codes_are_those_of_the_c_core():
    assert set(mbint._core.formulations()) == set(TABLE)
    assert [f.name for f in formulations()] == list(TABLE)
    for f in formulations():
        assert f.code == mbint._core.formulations()[f.name]


def test_supported_formulations_lists_the_state_space():
    # regression: supported_formulations left out "state_space", which every method of
    # mbint's own driver runs (and SUNDIALS methods do not)
    assert "state_space" in supported_formulations("rosenbrock_nystrom")
    assert "state_space" in supported_formulations("dopri5")
    assert "state_space" not in supported_formulations("cvode_bdf")
    assert supported_formulations("ida") == ("index1", "index1_dae", "ggl", "joint")


T_LISTED = 1.0


def _run(method, form, m, t_end=0.02):
    info = method_info(method)
    kw = dict(rtol=1e-4, atol=1e-6)
    if info.adaptive == "none" or method in ("nystrom_midpoint",):
        kw = dict(h=2e-3)
    if method == "singular_perturbation":
        kw["fast"] = "auto"
    return mbint.simulate(m, (0.0, t_end), method=method, formulation=form.name, **kw)


def _tree_model(tmp_path):
    """A double pendulum of rods from URDF: the joint formulation takes a UrdfModel."""
    pytest.importorskip("yourdfpy")
    from urdf_chains import rod_chain
    return mbint.load_urdf(rod_chain(tmp_path, 2, damping=0.1), q=[0.8, -0.5])


@pytest.mark.parametrize("name", list(TABLE))
def test_the_table_says_which_methods_solve_each_formulation(name, tmp_path):
    form = formulation(name)
    m = (_tree_model(tmp_path) if form.tree
         else models.pendulum_chain(2, k=20.0, c=0.1))  # soft enough for every explicit method
    ref = mbint.simulate(m, (0.0, T_LISTED), method="radau_iia", rtol=1e-10, atol=1e-12)
    for info in mbint.methods():
        if form.solves(info):
            # to the end of a swing, not just its first steps: ros4 ran index1_dae's first
            # 0.02 s, then its step collapsed at 0.71 s (regression)
            tr = _run(info.name, form, m, T_LISTED)
            assert tr.success, (name, info.name, tr.message)
            assert tr.formulation == name
            err = np.abs(tr.q[:, -1] - ref.q[:, -1]).max()
            # singular_perturbation integrates the reduced (quasi-static fast) problem: its
            # error is the model's O(epsilon), 0.12 here, not the tolerance's
            assert err < (0.5 if info.name == "singular_perturbation" else 0.01), \
                (name, info.name, err)
        else:
            with pytest.raises(ValueError, match=f"method '{info.name}' does not solve it"):
                _run(info.name, form, m)


def test_options_a_formulation_does_not_take_are_refused():
    m = models.stiff_double_pendulum()
    for f in formulations():
        method = "radau_iia"
        if not f.baumgarte:
            with pytest.raises(ValueError, match="baumgarte"):
                mbint.simulate(m, (0, 0.01), method, formulation=f.name, baumgarte=1.0)
        if not f.project:
            with pytest.raises(ValueError, match="project"):
                mbint.simulate(m, (0, 0.01), method, formulation=f.name, project=True)
        if not f.independent:
            with pytest.raises(ValueError, match="independent"):
                mbint.simulate(m, (0, 0.01), method, formulation=f.name, independent=[2])
        if not (f.sparse or f.sparse_dae):
            with pytest.raises(ValueError, match="sparse"):
                mbint.simulate(m, (0, 0.01), method, formulation=f.name,
                               linear_algebra="sparse")
        elif f.sparse_dae:  # the sparse DAE mode: the methods flagged MB_LINSYS_MASS only
            # (astable_block is not; lstable_block is since its split Newton)
            with pytest.raises(ValueError, match="sparse DAE"), warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)  # astable_block on index3
                mbint.simulate(m, (0, 0.01), "astable_block", formulation=f.name,
                               linear_algebra="sparse")
    with pytest.raises(ValueError, match="index4"):
        formulation("index4")


def test_state_size_and_atol_layout():
    m = models.stiff_double_pendulum()
    nq, nc = m.nq, m.nc
    assert [formulation(n).size(m) for n in TABLE] == [2 * nq, 2 * nq, 2 * nq + nc,
                                                      2 * nq + nc, 2 * nq + nc, 2 * nq + 2 * nc,
                                                      2 * nq]
    # atol per component of the DAE state is accepted; the ODE layout is not
    tr = mbint.simulate(m, (0, 0.01), "radau_iia", formulation="index3",
                        atol=np.full(2 * nq + nc, 1e-6))
    assert tr.success
    with pytest.raises(ValueError, match=r"\(q, v, lambda\)"):
        mbint.simulate(m, (0, 0.01), "radau_iia", formulation="index3", atol=np.ones(2 * nq))
