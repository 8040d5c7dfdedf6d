"""Ctrl-C during a run: :class:`IntegrationInterrupted` carries what was computed.

The C driver (and the SUNDIALS loop) checks Python's signal handlers at most every
5 ms of wall time, also when the GIL is released for a right-hand side in C; a
KeyboardInterrupt stops the run where it is and the front end
(:func:`mbint.solve_ivp`, :func:`mbint.solve_dae`, :func:`mbint.simulate`) raises
:class:`IntegrationInterrupted` with the partial result attached.

Any other exception raised by the user's code during a run (``fun``, ``jac``, an
event, ``dfdt``, a residual, a Python force or kernel of a model, ``progress``)
stops it the same way and propagates unchanged (its type, message and traceback,
from the callback up), with the partial result attached as ``exc.result``::

    try:
        res = mbint.solve_ivp(f, (0, 10), y0)
    except MyError as exc:
        res = exc.result            # status -1, t and y up to the last accepted step
"""
from __future__ import annotations

from typing import Any

__all__ = ["IntegrationInterrupted", "raise_if_interrupted"]


class IntegrationInterrupted(KeyboardInterrupt):
    """A run stopped by Ctrl-C (KeyboardInterrupt); nothing computed is lost.

    It is a KeyboardInterrupt, so code that does not expect it stops as usual;
    code that does can keep the partial result::

        try:
            res = mbint.solve_ivp(f, (0, 1e6), y0, method="radau_iia")
        except mbint.IntegrationInterrupted as exc:
            res = exc.result        # status -1, t and y up to the interruption

    Attributes
    ----------
    result : OdeResult or Trajectory
        The trajectory up to the last accepted step before the interruption
        (``status = -1``, ``message`` says where it stopped).
    """

    def __init__(self, result: Any) -> None:
        t_last = result.t[-1] if len(result.t) else float("nan")
        super().__init__(f"integration interrupted at t = {t_last:.17g} s; the partial "
                         f"result is in .result")
        self.result = result


def raise_if_interrupted(out: dict[str, Any], result: Any) -> None:
    """Raise the exception that stopped the run of the C entry point that returned
    ``out``, with ``result`` attached: :class:`IntegrationInterrupted` (from the
    original KeyboardInterrupt) for Ctrl-C, the user's own exception (as it was
    raised, ``exc.result`` added) for a callback that raised."""
    raised = out.get("raised")
    if raised is not None:
        try:
            raised.result = result
        except AttributeError:  # an exception type that takes no attributes
            pass
        try:
            raise raised          # its traceback continues here, the callback's frames kept
        finally:
            raised = None         # no reference cycle through this frame
    exc = out.get("interrupted")
    if exc is None:
        return
    raise IntegrationInterrupted(result) from (exc if isinstance(exc, BaseException) else None)
