"""Progress of long runs and of ensembles: tqdm bars (Jupyter-aware) and callbacks.

A single run reports progress from C: the driver calls its monitor before every
step attempt, and the binding calls the Python callback ``progress(t)`` at most
every 0.1 s of wall time (``MB_PROGRESS_INTERVAL``, csrc/python/options.h), taking
the GIL only then when the run released it.  Ctrl-C is noticed in the same place
(every 5 ms); an exception raised by the callback stops the run, a
KeyboardInterrupt with the partial result (:class:`mbint.IntegrationInterrupted`).

``progress=True`` on :func:`mbint.solve_ivp`, :func:`mbint.solve_dae` or
:func:`mbint.simulate` shows a bar of simulated time that appears only when the run
lasts longer than a second (tqdm's ``delay``); ``tqdm.auto`` draws a widget in
Jupyter and text in a terminal.

Python handles signals in the main thread only, so Ctrl-C cannot reach a run in
another thread (a member of a thread-backed :func:`mbint.ensemble`).  Such a run is
stopped through the same monitor: inside :func:`cancel_scope` every run of the
current thread (or context) calls ``check()`` at most every 5 ms
(``MB_SIGNAL_INTERVAL``, from C), and an exception it raises stops the run where it
is, as Ctrl-C does (a KeyboardInterrupt: :class:`mbint.IntegrationInterrupted` with
the partial result).
"""
from __future__ import annotations

import contextlib
import contextvars
import math
import warnings
from typing import Any, Callable, Iterator

from ._typing import Progress

__all__ = ["run_progress", "bar", "cancel_scope", "run_cancel"]

#: the cancel check of the runs of this context (see :func:`cancel_scope`), or None
_CANCEL: contextvars.ContextVar[Callable[[], Any] | None] = contextvars.ContextVar(
    "mbint_cancel", default=None)


@contextlib.contextmanager
def cancel_scope(check: Callable[[], Any]) -> Iterator[None]:
    """Within the block, every run of this thread (context) calls ``check()`` at most
    every 5 ms of wall time; an exception it raises stops the run (a
    KeyboardInterrupt: as Ctrl-C, with the partial result)."""
    token = _CANCEL.set(check)
    try:
        yield
    finally:
        _CANCEL.reset(token)


def run_cancel() -> Callable[[], Any] | None:
    """The ``cancel`` of the C entry points: the check of the enclosing
    :func:`cancel_scope`, or None."""
    return _CANCEL.get()

#: wall time (s) after which a single run's bar appears
RUN_BAR_DELAY = 1.0


def bar(**kwargs: Any) -> Any:
    """A ``tqdm.auto`` bar (a widget in Jupyter, text elsewhere).

    Without ipywidgets tqdm falls back to text in Jupyter; its warning about that
    is silenced here.
    """
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from tqdm.auto import tqdm

        return tqdm(**kwargs)


class _RunBar:
    """progress(t) for one run from t0 to tf: a bar of simulated time in s."""

    def __init__(self, t0: float, tf: float, desc: str) -> None:
        self.t0 = float(t0)
        span = abs(float(tf) - self.t0)
        self.total = span if math.isfinite(span) and span > 0 else None
        fmt = ("{desc}: {percentage:3.0f}%|{bar}| {n:.4g} of {total:.4g} s simulated "
               "[{elapsed}<{remaining}]") if self.total else None
        self.bar = bar(total=self.total, desc=desc, unit="s", delay=RUN_BAR_DELAY,
                       leave=False, bar_format=fmt)

    def __call__(self, t: float) -> None:
        done = abs(float(t) - self.t0)
        if self.total is not None:
            done = min(done, self.total)
        self.bar.update(done - self.bar.n)

    def close(self) -> None:
        self.bar.close()


def _noop() -> None:
    return None


def run_progress(progress: Progress, t0: float, tf: float,
                 desc: str) -> tuple[Callable[[float], Any] | None, Callable[[], Any]]:
    """The callback the C run calls and the function closing it afterwards.

    Parameters
    ----------
    progress : bool or callable
        False/None: no reporting.  True: a tqdm bar of simulated time, shown
        once the run has lasted ``RUN_BAR_DELAY`` s.  A callable: called as
        ``progress(t)`` with the time t [s] of the next step attempt, at most
        every 0.1 s of wall time.
    t0, tf : float
        The interval of the run [s].
    desc : str
        The bar's title.

    Returns
    -------
    callback : callable or None
    close : callable
    """
    if progress is None or progress is False:
        return None, _noop
    if progress is True:
        b = _RunBar(t0, tf, desc)
        return b, b.close
    if callable(progress):
        return progress, _noop
    raise ValueError(f"progress must be True, False or a callable progress(t), got {progress!r}.")
