"""Type aliases of mbint's public signatures (for annotations only; nothing here runs).

Every module annotates with ``from __future__ import annotations``, so these names are
read by type checkers and by ``inspect``, never evaluated at import time.
"""
from __future__ import annotations

from typing import Any, Callable, Mapping, Sequence, Union

import numpy as np
from numpy.typing import ArrayLike, NDArray

__all__ = ["ArrayLike", "FloatArray", "ComplexArray", "IntArray", "BoolArray", "TSpan",
           "RhsFun", "EventFun", "Events", "OutputFun", "Progress", "FloatOrArray", "TimeFn"]

#: a float64 array (every state, time series and matrix mbint returns)
FloatArray = NDArray[np.float64]
#: a complex array (stability functions, eigenvalues)
ComplexArray = NDArray[np.complex128]
#: an integer index array
IntArray = NDArray[np.intp]
#: a boolean mask
BoolArray = NDArray[np.bool_]

#: ``(t0, tf)`` [s]
TSpan = Sequence[float]

#: ``fun(t, y, *args) -> y'``, a Python callable or a :class:`scipy.LowLevelCallable`
RhsFun = Callable[..., ArrayLike]
#: ``g(t, y)`` or ``g(t, q, qd)``, with optional attributes ``terminal`` and ``direction``
EventFun = Callable[..., float]
#: one event function, a sequence of them, or None
Events = Union[EventFun, Sequence[EventFun], None]
#: an output ``fn(t, q, qd)`` of a mechanism
OutputFun = Callable[[Any, Any, Any], Any]
#: ``progress=``: False, True (a bar) or a callable ``progress(t, t0, tf)``
Progress = Union[bool, None, Callable[[float], Any]]
#: a float for one state, an array for m states (the kernels' convention)
FloatOrArray = Union[float, FloatArray]
#: the coefficients of a prescribed time function c0 + c1 t + c2 t^2 + a sin(w t + psi):
#: a constant, a sequence (c0, c1, c2, a, w, psi) or a mapping
TimeFn = Union[float, Sequence[float], Mapping[str, float], None]
