"""mbint: integrators for multibody dynamics with a C core.

Public API
----------
solve_ivp   SciPy-compatible initial value problem solver over mbint's methods
methods     every method with its properties
stability   stability functions and regions
errors      global error by step halving (Richardson) and the truncation/round-off study
problems    standard test problems (Python callables and C LowLevelCallables)
"""
from . import _status, errors, problems, stability
from .dense import DenseOutput
from .ivp import OdeResult, solve_ivp
from .methods import MethodInfo, methods

__all__ = ["solve_ivp", "methods", "MethodInfo", "OdeResult", "DenseOutput", "stability",
           "errors", "problems", "_status"]
__version__ = "0.1.0"
