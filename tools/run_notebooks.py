"""Execute notebooks in place at the committed settings and store their outputs.

    python tools/run_notebooks.py                      # every notebooks/*.ipynb, quick settings
    python tools/run_notebooks.py notebooks/05_vehicle.ipynb
    python tools/run_notebooks.py --full               # the full settings (long)

The notebooks are committed with their outputs, so that the documentation shows them
(``make docs`` renders the stored outputs; it executes nothing).  This script is how
those outputs are made, the same way for every notebook (a new one included):

- the kernel is this interpreter with the repository root first on ``PYTHONPATH`` (the
  tree's ``mbint``, not another installed copy), ``MBINT_NB_QUICK=1`` unless
  ``--full``, and a ``matplotlibrc`` with a small figure resolution (``DPI``);
- the first cell gets (or has replaced) one paragraph between the ``NOTE_BEGIN`` and
  ``NOTE_END`` markers saying which settings the stored outputs come from;
- volatile metadata is removed (execution timestamps, kernel and language versions,
  widget state; progress-bar widgets, whose state is not stored, are dropped, and so are
  Dask's timestamped log lines), the repository's absolute path in outputs becomes ``<repo>``;
- every PNG is re-encoded as a palette PNG (256 colours) when that is smaller, and the
  notebook's size is printed: ``tests/test_notebooks.py`` holds it under ``MAX_BYTES``.

A notebook that raises is not written (its previous version stays) and the script exits
with status 1.
"""
from __future__ import annotations

import argparse
import base64
import io
import json
import os
import re
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"
DPI = 72                  # figure.dpi of the stored figures
MAX_BYTES = 1_500_000     # the bound tests/test_notebooks.py holds every notebook to
WIDGET = "application/vnd.jupyter.widget-view+json"
DASK_LOG = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d+ - distributed\.")
NOTE_BEGIN = "<!-- stored-outputs -->"
NOTE_END = "<!-- /stored-outputs -->"
NOTES = {
    True: ("*The outputs stored in this notebook come from the reduced settings "
           "(`MBINT_NB_QUICK=1`, as the test suite runs it; `python tools/run_notebooks.py`): "
           "shorter runs, fewer points, fewer timing repetitions. Unset the variable and run "
           "the notebook for the full settings. Printed times are CPU times of one run on a "
           "shared machine, not assertions.*"),
    False: ("*The outputs stored in this notebook come from the full settings "
            "(`python tools/run_notebooks.py --full`). Printed times are CPU times of one run "
            "on a shared machine, not assertions.*"),
}


def kernel_environment(workdir, quick=True):
    """Environment variables for a kernel that runs this interpreter on this tree.

    Parameters
    ----------
    workdir : pathlib.Path
        A scratch directory: the kernelspec and the matplotlibrc are written there.
    quick : bool
        Set ``MBINT_NB_QUICK=1`` (the reduced settings).

    Returns
    -------
    dict
        The variables to set (``JUPYTER_PATH``, ``PYTHONPATH``, ``MBINT_NB_QUICK``,
        ``MPLBACKEND``, ``MATPLOTLIBRC``).
    """
    spec_dir = Path(workdir) / "jupyter" / "kernels" / "python3"
    spec_dir.mkdir(parents=True, exist_ok=True)
    (spec_dir / "kernel.json").write_text(json.dumps({
        "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "Python 3 (ipykernel)", "language": "python"}))
    rc_dir = Path(workdir) / "mplrc"
    rc_dir.mkdir(exist_ok=True)
    (rc_dir / "matplotlibrc").write_text(f"figure.dpi: {DPI}\nsavefig.dpi: {DPI}\n")
    path = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p)
    return {"JUPYTER_PATH": str(Path(workdir) / "jupyter"), "PYTHONPATH": path,
            "MBINT_NB_QUICK": "1" if quick else "0",
            "MPLBACKEND": "module://matplotlib_inline.backend_inline",
            "MATPLOTLIBRC": str(rc_dir)}


def set_note(nb, quick):
    """Put the stored-outputs paragraph at the end of the first cell (a markdown cell).

    Parameters
    ----------
    nb : nbformat.NotebookNode
        Changed in place; a markdown cell is inserted first when the first cell is code.
    quick : bool
        Which note: the reduced or the full settings.
    """
    import nbformat

    if not nb.cells or nb.cells[0].cell_type != "markdown":
        nb.cells.insert(0, nbformat.v4.new_markdown_cell(""))
    cell = nb.cells[0]
    src = cell.source
    if NOTE_BEGIN in src:
        src = src[:src.index(NOTE_BEGIN)].rstrip()
    cell.source = f"{src}\n\n{NOTE_BEGIN}\n{NOTES[quick]}\n{NOTE_END}".lstrip()


def shrink_png(data):
    """A base64 PNG as a palette PNG when that is smaller.

    Parameters
    ----------
    data : str
        Base64 text of a PNG.

    Returns
    -------
    str
        Base64 text of the smaller of the two encodings.
    """
    from PIL import Image

    raw = base64.b64decode(data)
    img = Image.open(io.BytesIO(raw))
    buf = io.BytesIO()
    img.convert("RGB").quantize(colors=256, method=Image.Quantize.MEDIANCUT).save(
        buf, format="PNG", optimize=True)
    small = buf.getvalue()
    return base64.b64encode(small).decode() + "\n" if len(small) < len(raw) else data


def clean(nb):
    """Remove volatile metadata and local paths, and shrink the PNGs, in place.

    Parameters
    ----------
    nb : nbformat.NotebookNode
        An executed notebook.
    """
    nb.metadata.pop("widgets", None)
    nb.metadata["kernelspec"] = {"display_name": "Python 3 (ipykernel)", "language": "python",
                                 "name": "python3"}
    nb.metadata["language_info"] = {"name": "python"}
    for cell in nb.cells:
        for key in ("execution", "collapsed", "scrolled", "ExecuteTime"):
            cell.metadata.pop(key, None)
        if "outputs" in cell:   # progress-bar widgets: their state is not stored, drop them
            cell.outputs = [o for o in cell.outputs if WIDGET not in o.get("data", {})]
        if "outputs" in cell:   # Dask's timestamped log lines at a cluster's shutdown
            for out in cell.outputs:
                if out.get("name") == "stderr":
                    out["text"] = "".join(line for line in out["text"].splitlines(True)
                                          if not DASK_LOG.match(line))
            cell.outputs = [o for o in cell.outputs if o.get("output_type") != "stream"
                            or o.get("text")]
        for out in cell.get("outputs", []):
            if "text" in out:
                out["text"] = out["text"].replace(str(ROOT), "<repo>")
            data = out.get("data", {})
            for mime in list(data):
                if mime == "image/png":
                    data[mime] = shrink_png(data[mime])
                elif isinstance(data[mime], str):
                    data[mime] = data[mime].replace(str(ROOT), "<repo>")
            out.get("metadata", {}).pop("needs_background", None)


def run_notebook(path, quick=True, timeout=1800):
    """Execute one notebook and write it back with its outputs.

    Parameters
    ----------
    path : pathlib.Path
        The notebook; it runs in its own directory.
    quick : bool
        The reduced settings (``MBINT_NB_QUICK=1``).
    timeout : float
        Seconds a cell may take.

    Returns
    -------
    int
        The size of the written file [bytes].
    """
    import nbformat
    from nbclient import NotebookClient

    nb = nbformat.read(path, as_version=4)
    set_note(nb, quick)
    with tempfile.TemporaryDirectory() as tmp:
        saved = {k: os.environ.get(k) for k in ("JUPYTER_PATH", "PYTHONPATH", "MBINT_NB_QUICK",
                                                "MPLBACKEND", "MATPLOTLIBRC")}
        os.environ.update(kernel_environment(tmp, quick))
        try:
            NotebookClient(nb, kernel_name="python3", timeout=timeout, record_timing=False,
                           resources={"metadata": {"path": str(Path(path).parent)}}).execute()
        finally:
            for k, v in saved.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v
    clean(nb)
    nbformat.write(nb, path)
    return Path(path).stat().st_size


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("notebooks", nargs="*", type=Path,
                    help="notebooks to run (default: every notebooks/*.ipynb)")
    ap.add_argument("--full", action="store_true", help="the full settings (MBINT_NB_QUICK=0)")
    ap.add_argument("--timeout", type=float, default=1800, help="seconds a cell may take")
    args = ap.parse_args(argv)
    paths = args.notebooks or sorted(NOTEBOOKS.glob("*.ipynb"))
    failed = []
    for p in paths:
        try:
            size = run_notebook(p, quick=not args.full, timeout=args.timeout)
        except Exception as exc:  # report every notebook, then fail
            failed.append(p)
            print(f"{p}: FAILED: {type(exc).__name__}: {str(exc)[-2000:]}", flush=True)
            continue
        flag = "" if size <= MAX_BYTES else f"  (over {MAX_BYTES} bytes)"
        print(f"{p}: {size / 1e3:.0f} kB{flag}", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
