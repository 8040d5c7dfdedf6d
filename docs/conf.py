"""Sphinx configuration of the mbint documentation (``make docs``)."""
import os
import shutil
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))          # the tree's mbint (its built extension included)

import mbint  # noqa: E402

project = "mbint"
author = "the mbint authors"
copyright = "the mbint authors"
version = release = mbint.__version__

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.intersphinx",
    "sphinx.ext.mathjax",
    "numpydoc",
    "myst_nb",
]

# the notebooks live in notebooks/ with their stored outputs; the build copies them in
# and executes nothing (tools/run_notebooks.py makes the outputs)
NB_SRC, NB_DST = ROOT / "notebooks", HERE / "notebooks"
NB_DST.mkdir(exist_ok=True)
for old in NB_DST.glob("*.ipynb"):
    if not (NB_SRC / old.name).exists():
        old.unlink()
for nb in sorted(NB_SRC.glob("*.ipynb")):
    if not (NB_DST / nb.name).exists() or (NB_DST / nb.name).read_bytes() != nb.read_bytes():
        shutil.copyfile(nb, NB_DST / nb.name)
nb_execution_mode = "off"
nb_merge_streams = True

myst_enable_extensions = ["dollarmath", "colon_fence"]
myst_heading_anchors = 3
source_suffix = {".rst": "restructuredtext", ".md": "myst-nb", ".ipynb": "myst-nb"}
exclude_patterns = ["_build", "_inv", "Thumbs.db", ".DS_Store", "**.ipynb_checkpoints"]

autosummary_generate = True
autodoc_default_options = {"members": False}
autodoc_typehints = "none"          # numpydoc's Parameters sections carry the types
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_validation_checks = set()
numpydoc_xref_param_type = True
numpydoc_xref_aliases = {
    "ndarray": "numpy.ndarray",
    "Dataset": "xarray.Dataset",
    "DataArray": "xarray.DataArray",
    "LowLevelCallable": "scipy.LowLevelCallable",
    "Trajectory": "mbint.Trajectory",
    "PlanarModel": "mbint.PlanarModel",
    "SpatialModel": "mbint.SpatialModel",
    "MechanicalSystem": "mbint.MechanicalSystem",
    "OdeResult": "mbint.OdeResult",
}
numpydoc_xref_ignore = "all"

# local inventories (a hand-listed subset, tools/make_inventories.py): no network access
intersphinx_mapping = {
    "python": ("https://docs.python.org/3/", str(HERE / "_inv" / "python.inv")),
    "numpy": ("https://numpy.org/doc/stable/", str(HERE / "_inv" / "numpy.inv")),
    "scipy": ("https://docs.scipy.org/doc/scipy/", str(HERE / "_inv" / "scipy.inv")),
    "xarray": ("https://docs.xarray.dev/en/stable/", str(HERE / "_inv" / "xarray.inv")),
}
intersphinx_timeout = 1

html_theme = "furo"
html_title = f"mbint {release}"
html_static_path = []
os.environ.setdefault("MPLBACKEND", "Agg")
