"""The documentation (make docs): the Sphinx build with warnings as errors and no network
access, the notebook pages with their figures, an API page for every public name, and the
user guide's code, run as written.

The build executes no notebook (``nb_execution_mode = "off"``: they carry their stored
outputs) and reads the intersphinx inventories from docs/_inv/ (a fetch from the web would
be a warning, hence an error; the sockets are closed to make sure).
"""
import re
import socket
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import pytest  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
PRIVATE = {"_status"}          # in mbint.__all__ for the C status codes, not documented


def _build(out, doctrees):
    """``sphinx -W --keep-going -b html docs out`` with the sockets closed; its status."""
    from sphinx.cmd.build import build_main

    mp = pytest.MonkeyPatch()

    def no_network(*args, **kwargs):
        raise OSError("test_docs: the documentation build must not use the network")
    mp.setattr(socket.socket, "connect", no_network)
    mp.setattr(socket, "create_connection", no_network)
    try:
        return build_main(["-W", "--keep-going", "-q", "-E", "-b", "html", "-d", str(doctrees),
                           str(DOCS), str(out)])
    finally:
        mp.undo()


def _check_pages(html):
    assert (html / "index.html").exists()
    for page in ("installation", "guide", "choosing", "api", "notebooks", "design",
                 "changelog"):
        assert (html / f"{page}.html").exists(), page
    assert "Unreleased" in (html / "changelog.html").read_text()        # CHANGELOG.md
    assert "The source papers" in (html / "design.html").read_text()    # docs/design.md


def _check_notebooks(html):
    assert NOTEBOOKS
    for nb in NOTEBOOKS:
        page = html / "notebooks" / f"{nb.stem}.html"
        assert page.exists(), f"{nb.name} is not in the site"
        text = page.read_text()
        assert re.search(r"<img [^>]*src=\"[^\"]+\.png\"", text), f"{nb.name}: no figure"
        assert "Traceback" not in text, f"{nb.name}: an error output"


def _check_api(html):
    import mbint

    names = [n for n in mbint.__all__ if n not in PRIVATE]
    missing = [n for n in names if not (html / "generated" / f"mbint.{n}.html").exists()]
    assert not missing, f"not in docs/api.rst: {missing}"
    solve = (html / "generated" / "mbint.solve_ivp.html").read_text()
    assert "Parameters" in solve and "t_span" in solve
    # intersphinx from the local inventories: a link to NumPy's glossary, not a bare name
    sim = (html / "generated" / "mbint.simulate.html").read_text()
    assert "https://numpy.org/doc/stable/glossary.html#term-array_like" in sim


def test_make_docs(tmp_path):
    """The whole site, built once (one test, so that parallel workers never build it
    twice into the same source tree): no warning, every page, every notebook with its
    figures, an API page for every public name."""
    pytest.importorskip("sphinx")
    status = _build(tmp_path / "html", tmp_path / "doctrees")
    assert status == 0, "sphinx -W reported warnings (see the captured stderr)"
    html = tmp_path / "html"
    _check_pages(html)
    _check_notebooks(html)
    _check_api(html)


def _blocks(page):
    return re.findall(r"```python\n(.*?)```", (DOCS / page).read_text(), re.S)


def test_the_guide_runs_as_written(tmp_path, monkeypatch):
    """The guide's blocks in order in one namespace (the page says so), in a temporary
    directory."""
    import matplotlib.pyplot as plt

    blocks = _blocks("guide.md")
    assert len(blocks) >= 7
    monkeypatch.chdir(tmp_path)
    ns = {"__name__": "guide"}
    for k, code in enumerate(blocks):
        try:
            exec(compile(code, f"docs/guide.md block {k + 1}", "exec"), ns)
        except Exception as exc:  # name the block in the failure
            pytest.fail(f"guide block {k + 1} failed: {type(exc).__name__}: {exc}\n{code}")
        finally:
            plt.close("all")
    # what the page says the blocks show
    assert ns["res"].status == 0 and ns["vdp"].status == 0
    assert ns["traj"].q.shape[0] == 3 and ns["sm"].nq == 7 and ns["sm"].nc == 4
    assert ns["back"].q.shape == ns["traj"].q.shape


def test_the_inventories_hold_what_they_say():
    """docs/_inv/*.inv: each object's address on its project's site, as
    tools/make_inventories.py lists them (a hand-listed subset, read back)."""
    sphobjinv = pytest.importorskip("sphobjinv")
    import importlib.util

    spec = importlib.util.spec_from_file_location("make_inventories",
                                                  ROOT / "tools" / "make_inventories.py")
    mk = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mk)
    for project, (_version, _base, objects) in mk.OBJECTS.items():
        inv = sphobjinv.Inventory(DOCS / "_inv" / f"{project}.inv")
        got = {(o.name, o.role): o.uri_expanded for o in inv.objects}
        assert got == {(n, r): u for n, r, u in objects}, project
