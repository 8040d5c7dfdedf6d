"""Write the local intersphinx inventories of docs/_inv/ (Python, NumPy, SciPy, xarray).

The documentation is built without network access (CI reaches only PyPI and Debian), so
intersphinx cannot download objects.inv from numpy.org, docs.scipy.org or
docs.xarray.dev.  These inventories are a hand-listed subset: the objects the mbint
documentation references, with their real addresses on those sites.  Add an object
here when a docstring names one, and run ``python tools/make_inventories.py``.
"""
from pathlib import Path

import sphobjinv as soi

OUT = Path(__file__).resolve().parent.parent / "docs" / "_inv"

# project: (version, base URL, [(name, role, path under the base)]); a role "label" or
# "term" is in the std domain (numpydoc links "bool", "sequence" and "array_like" there)
OBJECTS = {
    "python": ("3", "https://docs.python.org/3/", [
        ("bltin-boolean-values", "label", "library/stdtypes.html#boolean-type-bool"),
        ("sequence", "term", "glossary.html#term-sequence"),
    ]),
    "numpy": ("stable", "https://numpy.org/doc/stable/", [
        ("numpy.ndarray", "class", "reference/generated/numpy.ndarray.html"),
        ("array_like", "term", "glossary.html#term-array_like"),
        ("numpy.linspace", "function", "reference/generated/numpy.linspace.html"),
        ("numpy.geomspace", "function", "reference/generated/numpy.geomspace.html"),
        ("numpy.random.Generator", "class", "reference/random/generator.html#numpy.random.Generator"),
    ]),
    "scipy": ("stable", "https://docs.scipy.org/doc/scipy/", [
        ("scipy.integrate.solve_ivp", "function",
         "reference/generated/scipy.integrate.solve_ivp.html"),
        ("scipy.integrate.OdeSolution", "class",
         "reference/generated/scipy.integrate.OdeSolution.html"),
        ("scipy.LowLevelCallable", "class", "reference/generated/scipy.LowLevelCallable.html"),
        ("scipy.signal.StateSpace", "class", "reference/generated/scipy.signal.StateSpace.html"),
        ("scipy.sparse.csc_matrix", "class", "reference/generated/scipy.sparse.csc_matrix.html"),
    ]),
    "xarray": ("stable", "https://docs.xarray.dev/en/stable/", [
        ("xarray.Dataset", "class", "generated/xarray.Dataset.html"),
        ("xarray.DataArray", "class", "generated/xarray.DataArray.html"),
        ("xarray.open_dataset", "function", "generated/xarray.open_dataset.html"),
    ]),
}


def main():
    OUT.mkdir(parents=True, exist_ok=True)
    for project, (version, _base, objects) in OBJECTS.items():
        inv = soi.Inventory()
        inv.project, inv.version = project, version
        for name, role, uri in objects:
            std = role in ("label", "term")
            inv.objects.append(soi.DataObjStr(name=name, domain="std" if std else "py", role=role,
                                              priority="-1" if std else "1", uri=uri,
                                              dispname="-"))
        soi.writebytes(OUT / f"{project}.inv", soi.compress(inv.data_file(contract=True)))
        print(f"{OUT / f'{project}.inv'}: {len(objects)} objects")


if __name__ == "__main__":
    main()
