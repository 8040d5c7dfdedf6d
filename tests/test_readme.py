"""Every Python snippet of README.md runs as written (in order, in one namespace, in a
temporary directory), and the README points only at files the repository has."""
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
    ns = {"__name__": "readme"}
    for k, code in enumerate(SNIPPETS):
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
