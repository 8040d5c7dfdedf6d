"""The notebooks of notebooks/: committed with their outputs (tools/run_notebooks.py), and
each still runs.

- every notebook executes without error at the reduced settings (``MBINT_NB_QUICK=1``) on
  a copy in memory (the committed file is not touched), in a kernel that imports this
  tree's mbint, and draws a figure;
- every committed notebook carries its outputs: figures (PNG), no error output, a note in
  its first cell saying which settings they come from, and a size under
  ``run_notebooks.MAX_BYTES``;
- no notebook reaches into the checkout (``tests/benchmarks`` by path): it imports the
  installed package only.
"""
import copy
import importlib.util
import json
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOK_DIR = ROOT / "notebooks"
NOTEBOOKS = sorted(NOTEBOOK_DIR.glob("*.ipynb"))
_spec = importlib.util.spec_from_file_location("run_notebooks", ROOT / "tools" / "run_notebooks.py")
run_notebooks = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(run_notebooks)


def _code_outputs(nb):
    return [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])]


def _pngs(nb):
    return sum("image/png" in o.get("data", {}) for o in _code_outputs(nb))


def test_there_are_notebooks():
    assert NOTEBOOKS, f"no notebooks in {NOTEBOOK_DIR}"


@pytest.fixture
def kernel_env(tmp_path, monkeypatch):
    """A ``python3`` kernelspec that runs this interpreter on this tree, found first on
    JUPYTER_PATH (tools/run_notebooks.py: the same environment the stored outputs were
    made in), with the reduced settings."""
    for key, value in run_notebooks.kernel_environment(tmp_path, quick=True).items():
        monkeypatch.setenv(key, value)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_notebook_runs(path, kernel_env):
    nb = copy.deepcopy(nbformat.read(path, as_version=4))
    for cell in nb.cells:        # run from scratch: nothing of the stored outputs is kept
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
    client = NotebookClient(nb, kernel_name="python3", timeout=600,
                            resources={"metadata": {"path": str(NOTEBOOK_DIR)}})
    client.execute()      # raises CellExecutionError on the first failing cell
    assert not [o for o in _code_outputs(nb) if o.output_type == "error"]
    assert _pngs(nb) > 0, f"{path.name}: no figure was drawn"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_notebook_is_committed_with_its_outputs(path):
    nb = nbformat.read(path, as_version=4)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert code and all(c.execution_count is not None for c in code), \
        f"{path.name}: not executed; run python tools/run_notebooks.py {path.relative_to(ROOT)}"
    assert _pngs(nb) > 0, f"{path.name}: no stored figure"
    assert not [o for o in _code_outputs(nb) if o.output_type == "error"]
    first = nb.cells[0]
    assert first.cell_type == "markdown" and run_notebooks.NOTE_BEGIN in first.source, \
        f"{path.name}: the first cell does not say which settings the outputs come from"
    size = path.stat().st_size
    assert size < run_notebooks.MAX_BYTES, f"{path.name}: {size} bytes"
    text = json.dumps(nb)
    assert str(ROOT) not in text, f"{path.name}: stores the checkout's absolute path"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_notebook_imports_only_the_package(path):
    nb = nbformat.read(path, as_version=4)
    for cell in nb.cells:
        if cell.cell_type == "code":
            assert "sys.path" not in cell.source and '"tests"' not in cell.source, \
                f"{path.name}: reaches into the checkout:\n{cell.source[:300]}"


def test_the_runner_cleans_what_it_stores():
    """run_notebooks.clean on a hand-made notebook: volatile metadata, widgets, Dask's log
    lines and the checkout's path go; a large PNG is re-encoded smaller and stays a PNG."""
    import base64
    import io

    import numpy as np
    from PIL import Image

    rng = np.random.default_rng(0)
    img = (rng.random((200, 300, 3)) * 8).astype(np.uint8) * 32   # 512 colours, noisy
    buf = io.BytesIO()
    Image.fromarray(img).save(buf, format="PNG")
    png = base64.b64encode(buf.getvalue()).decode()
    nb = nbformat.v4.new_notebook(metadata={"widgets": {"x": 1},
                                            "language_info": {"name": "python", "version": "9"}})
    cell = nbformat.v4.new_code_cell("x", execution_count=1, metadata={"execution": {"iopub.status.idle": "2026-11-27T18:00:00Z"}})
    cell.outputs = [
        nbformat.v4.new_output("display_data", data={run_notebooks.WIDGET: {}, "text/plain": "0%"}),
        nbformat.v4.new_output("stream", name="stderr", text=(
            "2026-11-27 18:03:46,867 - distributed.nanny - WARNING - killing\n")),
        nbformat.v4.new_output("stream", name="stdout", text=f"{ROOT}/notebooks\n"),
        nbformat.v4.new_output("display_data", data={"image/png": png}),
    ]
    nb.cells.append(cell)
    run_notebooks.clean(nb)
    assert "widgets" not in nb.metadata and nb.metadata["language_info"] == {"name": "python"}
    assert "execution" not in cell.metadata
    assert [o.output_type for o in cell.outputs] == ["stream", "display_data"]
    assert cell.outputs[0].text == "<repo>/notebooks\n"
    small = base64.b64decode(cell.outputs[1].data["image/png"])
    assert small[:8] == b"\x89PNG\r\n\x1a\n" and len(small) <= len(buf.getvalue())
    assert Image.open(io.BytesIO(small)).size == (300, 200)
    run_notebooks.set_note(nb, quick=True)
    run_notebooks.set_note(nb, quick=True)          # idempotent: one note
    assert nb.cells[0].source.count(run_notebooks.NOTE_BEGIN) == 1
