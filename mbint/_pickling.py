"""Pickling of what holds C handles: models rebuilt from their description.

A :class:`PlanarModel` pickles its description (bodies, joints, forces, outputs)
and compiles its C tables again when it is first used after loading; a
:class:`MechanicalSystem` pickles the kernels it was given and builds its C
kernel table again on loading.  No pointer ever enters a pickle.

What cannot be pickled, and why:

- a lambda or a function defined inside another function (an output, a Python
  force, a kernel): :mod:`pickle` stores functions by their importable name, and
  these have none.  ``cloudpickle`` pickles them by value; :func:`mbint.ensemble`
  and Dask use it, so they work there;
- a C kernel that is a ctypes *callback* (a Python function wrapped by
  ``ctypes.CFUNCTYPE``): give the Python function itself instead;
- a ``scipy.LowLevelCallable`` with ``user_data`` (a pointer into this process's
  memory), or one made from a raw PyCapsule or a Cython module: the pointer means
  nothing in another process.

A C kernel that is a function of a shared library (``ctypes.CDLL(path).name``,
possibly wrapped in a ``scipy.LowLevelCallable`` without user_data) pickles as
(library path, symbol, signature) and is looked up again on loading, so the
library must exist at that path where the pickle is loaded.
"""
from __future__ import annotations

import ctypes
import pickle

__all__ = ["CFunctionRef", "c_function_ref"]


class CFunctionRef:
    """A C function of a shared library, by name: what a pickle holds of a C kernel.

    Parameters
    ----------
    library : str
        The path (or name) the library was loaded with (``ctypes.CDLL(library)``).
    symbol : str
        The function's name in the library.
    signature : str
        Its C signature as scipy.LowLevelCallable states it.
    """

    def __init__(self, library, symbol, signature):
        self.library, self.symbol, self.signature = str(library), str(symbol), str(signature)

    def load(self):
        """The function as a scipy.LowLevelCallable (the library loaded again)."""
        from scipy import LowLevelCallable

        try:
            fn = getattr(ctypes.CDLL(self.library), self.symbol)
        except (OSError, AttributeError) as exc:
            raise pickle.UnpicklingError(
                f"C kernel {self.symbol!r} of {self.library!r} cannot be loaded here: {exc}") \
                from exc
        return LowLevelCallable(fn, signature=self.signature)

    def __repr__(self):
        return f"CFunctionRef({self.library!r}, {self.symbol!r}, {self.signature!r})"


def c_function_ref(obj, what):
    """The :class:`CFunctionRef` of a C kernel, or PicklingError saying why not.

    Parameters
    ----------
    obj : ctypes function or scipy.LowLevelCallable
    what : str
        The kernel's name (for the message).
    """
    from scipy import LowLevelCallable

    signature = None
    fn = obj
    if isinstance(obj, LowLevelCallable):
        if obj.user_data is not None:
            raise pickle.PicklingError(
                f"{what}: a LowLevelCallable with user_data cannot be pickled (user_data is a "
                f"pointer into this process's memory).")
        fn, signature = obj.function, obj.signature
    if isinstance(fn, ctypes._CFuncPtr):
        owners = getattr(fn, "_objects", None) or {}
        lib = owners.get("0") if isinstance(owners, dict) else None
        if isinstance(lib, ctypes.CDLL) and getattr(lib, "_name", None):
            if signature is None:
                signature = LowLevelCallable(fn).signature
            return CFunctionRef(lib._name, fn.__name__, signature)
        raise pickle.PicklingError(
            f"{what}: a ctypes callback (a Python function wrapped by CFUNCTYPE) cannot be "
            f"pickled; give the Python function itself as the kernel, or a function of a "
            f"shared library (ctypes.CDLL(path).name).")
    raise pickle.PicklingError(
        f"{what}: this C kernel ({type(fn).__name__}) cannot be pickled: only functions of a "
        f"shared library loaded with ctypes.CDLL (optionally in a LowLevelCallable without "
        f"user_data) are rebuilt by name in another process.")
