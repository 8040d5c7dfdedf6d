"""Every Python snippet of README.md runs as written, on its own (each in a fresh
namespace, as a reader copies one block: its imports are its own), in a temporary
directory, and the README points only at files the repository has."""
import os
import re
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import pytest  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text()
SNIPPETS = re.findall(r"```python\n(.*?)```", README, re.S)


def test_there_are_snippets():
    assert len(SNIPPETS) >= 4


def test_snippets_run_as_written(tmp_path, monkeypatch):
    import matplotlib.pyplot as plt

    monkeypatch.chdir(tmp_path)
    for k, code in enumerate(SNIPPETS):
        ns = {"__name__": "readme"}  # standalone: nothing from the blocks before
        try:
            exec(compile(code, f"README.md snippet {k + 1}", "exec"), ns)
        except Exception as exc:  # name the snippet in the failure
            pytest.fail(f"README snippet {k + 1} failed: {type(exc).__name__}: {exc}\n{code}")
        finally:
            plt.close("all")


def test_links_point_into_the_repository():
    assert "../shared" not in README
    for target in re.findall(r"\]\(([^)#]+)\)", README):
        if "://" in target:
            continue
        assert (ROOT / target).exists(), f"README links {target}, which does not exist"
    assert "make demo" in README and "make test" in README


def test_every_subpackage_is_installed():
    """`pip install .` (not editable) installs the packages pyproject.toml lists: each
    directory of mbint/ with an __init__.py must be one of them (mbint.mbs, mbint.demo
    and mbint.testing were left out once)."""
    import tomllib

    listed = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
                 ["packages"])
    found = {".".join(p.parent.relative_to(ROOT).parts) for p in (ROOT / "mbint").rglob(
        "__init__.py")}
    assert found <= listed, f"not installed by pip install .: {sorted(found - listed)}"
