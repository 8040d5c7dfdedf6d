"""SciPy's own test suite of ``solve_ivp`` run against ``mbint.solve_ivp``.

The installed SciPy's ``scipy/integrate/_ivp/tests/test_ivp.py`` is imported at test
time (whatever SciPy version pip installed), its module-level name ``solve_ivp`` is
swapped for ``mbint.solve_ivp`` and every test function is run with its own
parametrizations.  The method names need no mapping: SciPy's names (``RK23``,
``RK45``, ``DOP853``, ``Radau``, ``BDF``, ``LSODA``) and its solver classes are aliases
of mbint's methods (:func:`mbint.methods.resolve`).

Skipped, each with its reason (``SKIP``):
- tests of SciPy internals that ``solve_ivp`` does not reach (solver classes, its
  ``OdeSolution`` and ``ConstantDenseOutput``, ``num_jac``, ``select_initial_step``);
- documented deliberate differences (``DIFFERENCES``).
"""
from __future__ import annotations

import inspect
import itertools

import pytest

import mbint

test_ivp = pytest.importorskip("scipy.integrate._ivp.tests.test_ivp")

SKIP = {
    "test_classes": "SciPy's OdeSolver classes (the step-by-step solver API), not solve_ivp",
    "test_OdeSolution": "SciPy's OdeSolution class",
    "test_ConstantDenseOutput": "SciPy's ConstantDenseOutput class",
    "test_num_jac": "SciPy's internal finite-difference Jacobian num_jac",
    "test_num_jac_sparse": "SciPy's internal finite-difference Jacobian num_jac",
    "test_no_integration_class": "SciPy's OdeSolver classes",
    "test_inital_maxstep": "SciPy's internal select_initial_step",
}

#: deliberate differences from SciPy (the test name, and why mbint differs)
DIFFERENCES = {
    "test_t_eval_early_event": (
        "with every t_eval point after a terminal event SciPy returns the lists t = [] and "
        "y = [] (and the test asserts `not res.y`); mbint returns arrays of shape (0,) and "
        "(n, 0), one type whatever the outcome (NumPy refuses the truth value of an empty "
        "array)"),
}


def _cases():
    """(test name, kwargs) for every test function of SciPy's module, expanding its
    pytest.mark.parametrize marks and giving the fixture ``num_parallel_threads`` 1."""
    out = []
    for name, fn in sorted(vars(test_ivp).items()):
        if not (name.startswith("test_") and inspect.isfunction(fn)):
            continue
        grids = [[{}]]
        for mark in getattr(fn, "pytestmark", []):
            if mark.name != "parametrize":
                continue
            argnames, values = mark.args[0], mark.args[1]
            names = [a.strip() for a in argnames.split(",")] if isinstance(argnames, str) \
                else list(argnames)
            grid = []
            for v in values:
                v = v.values if hasattr(v, "values") else v  # pytest.param
                v = v if len(names) > 1 else (v,)
                grid.append(dict(zip(names, v)))
            grids.append(grid)
        for combo in itertools.product(*grids):
            kw = {}
            for d in combo:
                kw.update(d)
            if "num_parallel_threads" in inspect.signature(fn).parameters:
                kw["num_parallel_threads"] = 1
            label = name + ("[" + "-".join(str(v) for k, v in kw.items()
                                           if k != "num_parallel_threads") + "]" if
                            len(kw) > ("num_parallel_threads" in kw) else "")
            out.append(pytest.param(name, kw, id=label))
    return out


CASES = _cases()


def test_the_suite_was_found():
    assert len(CASES) > 30


@pytest.mark.parametrize("name, kwargs", CASES)
def test_scipy_case(name, kwargs, monkeypatch):
    if name in SKIP:
        pytest.skip(SKIP[name])
    if name in DIFFERENCES:
        pytest.skip("deliberate difference: " + DIFFERENCES[name])
    monkeypatch.setattr(test_ivp, "solve_ivp", mbint.solve_ivp)
    getattr(test_ivp, name)(**kwargs)
