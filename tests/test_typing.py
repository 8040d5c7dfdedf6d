"""The package is typed (PEP 561): mypy passes on mbint/, its annotations hold.

- ``python -m mypy`` over mbint/ (the configuration of pyproject.toml) reports nothing;
- tests/typing_usage.py, typed use of the public API with ``assert_type``, passes mypy,
  and run, its values have the types the annotations promise (the annotations checked
  against what the code returns);
- tests/typing_errors.py, misuses, gets an error on exactly its marked lines (so the
  check can fail: a signature that lost its annotation lets a misuse through);
- every public function and method is annotated (parameters and return), found by
  introspection of the public modules;
- the stub of the C extension (mbint/_core.pyi) declares only names the extension has;
- py.typed and the stub are package data (the wheel ships them).

mypy runs twice in one test, on the package and then on the snippets, with a cache in
the test's temporary directory (nothing written into the tree, no race with another
worker): about 25 s of CPU in all.
"""
import ast
import inspect
import pathlib
import re
import runpy
import subprocess
import sys
import types

import numpy as np
import pytest

import mbint

ROOT = pathlib.Path(__file__).resolve().parent.parent
USAGE = pathlib.Path("tests") / "typing_usage.py"
ERRORS = pathlib.Path("tests") / "typing_errors.py"

#: the modules whose public names (``__all__``, else what they define) are the API
PUBLIC_MODULES = ["mbint", "mbint.mbs", "mbint.models", "mbint.stability", "mbint.errors",
                  "mbint.multirate", "mbint.problems", "mbint.plot", "mbint.dense", "mbint.ivp",
                  "mbint.dae", "mbint.methods", "mbint.simulator", "mbint.ensemble",
                  "mbint.mbs.linear", "mbint.mbs.reactions", "mbint.mbs.trajectory",
                  "mbint.mbs.dataset", "mbint.mbs.urdf", "mbint.mbs.planar", "mbint.mbs.spatial",
                  "mbint.mbs.mechanical", "mbint.mbs.simulate", "mbint.mbs.statespace",
                  "mbint.mbs.formulations", "mbint.animation", "mbint.progress",
                  "mbint.mbs.outputs"]


def _mypy(args, cache):
    proc = subprocess.run([sys.executable, "-m", "mypy", f"--cache-dir={cache}", *args],
                          cwd=ROOT, capture_output=True, text=True, timeout=600)
    return proc.returncode, proc.stdout + proc.stderr


def _expected_errors():
    """{line: error code} of the lines of tests/typing_errors.py marked ``# error: <code>``."""
    expected = {}
    for k, line in enumerate((ROOT / ERRORS).read_text().splitlines(), start=1):
        m = re.search(r"# error: ([a-z-]+)", line)
        if m:
            expected[k] = m.group(1)
    return expected


def test_mypy_on_the_package_the_typed_usage_and_the_misuses(tmp_path):
    """One test, so that a parallel run analyses the package once (in one worker): mypy
    on mbint/ (exit 0), then with the same cache on the two snippets: no error in the
    typed usage, an error of the marked code on each marked line of the misuses and
    nowhere else."""
    pytest.importorskip("mypy")
    code, out = _mypy(["mbint"], tmp_path)
    assert code == 0 and "Success" in out, "python -m mypy mbint:\n" + out

    code, out = _mypy(["--no-error-summary", "--show-error-codes", str(USAGE), str(ERRORS)],
                      tmp_path)
    assert code in (0, 1), f"mypy did not run (exit {code}):\n{out}"
    by_file = {}
    for ln in out.splitlines():
        if ": error:" in ln:
            by_file.setdefault(pathlib.Path(ln.split(":", 1)[0]).as_posix(), []).append(ln)
    assert set(by_file) <= {USAGE.as_posix(), ERRORS.as_posix()}, out
    assert by_file.get(USAGE.as_posix(), []) == [], "the typed usage:\n" + out
    expected = _expected_errors()
    assert len(expected) >= 5
    got = {}
    for ln in by_file.get(ERRORS.as_posix(), []):
        m = re.match(r"[^:]+:(\d+): error: .*\[([a-z-]+)\]$", ln)
        assert m, ln
        got[int(m.group(1))] = m.group(2)
    assert got == expected, "the misuses:\n" + out


def test_the_typed_usage_runs_and_its_values_have_the_annotated_types():
    """Run tests/typing_usage.py: the values behind its ``assert_type`` lines are of the
    types mypy accepted (a wrong return annotation that mypy believed fails here)."""
    from mbint.ivp import OdeResult
    from mbint.mbs.planar import Body, Element

    v = runpy.run_path(str(ROOT / USAGE))["VALUES"]
    assert type(v["bar"]) is Body and type(v["pin"]) is Element
    assert type(v["nq"]) is int and v["nq"] == 3
    for key in ("q0", "q", "y_half"):
        assert isinstance(v[key], np.ndarray) and v[key].dtype == np.float64, key
    assert isinstance(v["traj"], mbint.Trajectory) and type(v["success"]) is bool
    assert isinstance(v["res"], OdeResult)
    assert all(isinstance(m, mbint.MethodInfo) for m in v["infos"]) and len(v["infos"]) > 10
    assert type(v["limit"]) is float
    # RK4's real stability interval: |1 + z + z^2/2 + z^3/6 + z^4/24| <= 1 down to -2.785
    assert v["limit"] == pytest.approx(2.785, abs=1e-3)
    a = v["amplification"]
    assert isinstance(a, np.ndarray) and a.dtype == np.complex128
    z = 1j
    assert complex(a) == pytest.approx(1 + z + z**2 / 2 + z**3 / 6 + z**4 / 24, abs=1e-14)
    assert isinstance(v["kinetic"], float)
    from mbint.mbs.reactions import JointReaction

    assert type(v["pin_reaction"]) is JointReaction
    assert set(v["all_reactions"]) == {"pin"}
    assert all(type(r) is JointReaction for r in v["all_reactions"].values())
    # a uniform bar (m = 1 kg, L = 1 m) pinned at one end, released horizontal: the pin
    # pushes it up by m g / 4 at release and by at most 5 m g / 2 (at the bottom)
    Fy = v["pin_reaction"].on("bar").force[1]
    assert Fy[0] == pytest.approx(9.81 / 4, rel=1e-6)
    assert np.all(Fy > 0) and Fy.max() <= 2.5 * 9.81 * (1 + 1e-6)
    # the solution of y' = -y at t = 0.5 through the typed dense output
    assert float(v["y_half"][0]) == pytest.approx(np.exp(-0.5), rel=1e-7)


def _public_functions():
    """(qualified name, function) of every public function and method of the API: the
    public names of PUBLIC_MODULES and the methods and properties of their classes
    (inherited ones from mbint's own base classes included)."""
    import importlib

    seen, out = set(), []

    def add(qual, fn):
        if id(fn) not in seen:
            seen.add(id(fn))
            out.append((qual, fn))

    for mname in PUBLIC_MODULES:
        mod = importlib.import_module(mname)
        names = getattr(mod, "__all__", None)
        if names is None:
            names = [n for n, o in vars(mod).items() if not n.startswith("_")
                     and getattr(o, "__module__", None) == mname]
        for n in names:
            o = getattr(mod, n)
            if isinstance(o, types.ModuleType) or not getattr(o, "__module__", "").startswith(
                    "mbint"):
                continue
            if inspect.isfunction(o):
                add(f"{o.__module__}.{n}", inspect.unwrap(o))
            elif inspect.isclass(o):
                members = {}
                for k in reversed(o.__mro__):
                    if k.__module__.startswith("mbint"):
                        members.update(vars(k))
                for an, a in members.items():
                    if an.startswith("_") and an not in ("__init__", "__call__"):
                        continue
                    f = a.fget if isinstance(a, property) else getattr(a, "__func__", a)
                    if inspect.isfunction(f):
                        add(f"{o.__module__}.{o.__name__}.{an}", inspect.unwrap(f))
    return out


def test_every_public_function_is_annotated():
    funcs = _public_functions()
    assert len(funcs) > 200  # the walk finds the API (it is not vacuous)
    missing = []
    for qual, fn in funcs:
        sig = inspect.signature(fn)
        params = list(sig.parameters.values())
        if params and params[0].name in ("self", "cls"):
            params = params[1:]
        bare = [p.name for p in params if p.annotation is inspect.Parameter.empty]
        if sig.return_annotation is inspect.Signature.empty:
            bare.append("return")
        if bare:
            missing.append(f"{qual}: {', '.join(bare)}")
    assert missing == [], "not annotated:\n" + "\n".join(missing)


def test_the_annotation_check_sees_a_missing_annotation():
    """The introspection above flags what it should: a bare parameter and a bare return."""
    def f(t: float, y):  # noqa: ANN001 (the point of the test)
        return y

    sig = inspect.signature(f)
    assert [p.name for p in sig.parameters.values()
            if p.annotation is inspect.Parameter.empty] == ["y"]
    assert sig.return_annotation is inspect.Signature.empty


def test_the_stub_declares_only_what_the_extension_has():
    from mbint import _core

    tree = ast.parse((ROOT / "mbint" / "_core.pyi").read_text())
    declared = {}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            declared[node.name] = []
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            declared[node.target.id] = []
        elif isinstance(node, ast.ClassDef):
            declared[node.name] = [f.name for f in node.body if isinstance(f, ast.FunctionDef)
                                   and not f.name.startswith("__")]
    private = {n for n in declared if n.startswith("_")}  # the stub's own helpers
    assert {"mech_simulate", "solve", "MechStepper", "MB_FSAL"} <= set(declared)
    for name in sorted(set(declared) - private):
        assert hasattr(_core, name), f"_core.pyi declares {name}, which _core lacks"
    for cls in ("MechStepper", "OdeStepper"):
        methods = set(declared["_Stepper"]) | set(declared[cls])
        for m in methods - {"__init__"}:
            assert callable(getattr(getattr(_core, cls), m, None)), f"{cls}.{m}"
    # return types of the stub against what the binding returns
    assert isinstance(_core.methods(), list) and all(isinstance(d, dict) for d in _core.methods())
    assert all(isinstance(r, tuple) and type(r[1]) is int for r in _core.status_table())
    for layout in (_core.formulations, _core.planar_layout, _core.spatial_layout,
                   _core.sensor_layout):
        assert isinstance(layout(), dict)
    assert isinstance(_core.tableau("rk4"), dict)
    R = _core.amplification("rk4", np.array([-1.0 + 0j]))
    assert isinstance(R, np.ndarray) and R.dtype == np.complex128
    assert complex(R[0]) == pytest.approx(1 - 1 + 1 / 2 - 1 / 6 + 1 / 24, abs=1e-15)
    dep, rank = _core.gram_dependent(np.array([0, 1, 2]), np.array([0, 1]),
                                     np.array([1.0, 1.0]), 1e-12)  # G = I (2 x 2)
    assert dep.dtype == np.bool_ and not dep.any() and type(rank) is int and rank == 2
    # every name mbint/ takes from _core is declared (mypy checks only annotated bodies)
    used = set()
    for path in (ROOT / "mbint").rglob("*.py"):
        used |= set(re.findall(r"\b_core\.([A-Za-z_][A-Za-z_0-9]*)", path.read_text()))
    assert used - set(declared) == set(), "used in mbint/ but not in _core.pyi"
    # the constants have the types the stub gives them
    for name in declared:
        if name.startswith("MB_"):
            assert type(getattr(_core, name)) is int, name


def test_py_typed_and_the_stub_are_package_data():
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+
    cfg = tomllib.loads((ROOT / "pyproject.toml").read_text())
    data = cfg["tool"]["setuptools"]["package-data"]["mbint"]
    assert "py.typed" in data and "_core.pyi" in data
    pkg = pathlib.Path(mbint.__file__).parent
    assert (pkg / "py.typed").is_file() and (pkg / "_core.pyi").is_file()
    assert "mypy" in " ".join(cfg["project"]["optional-dependencies"]["test"])
