"""Ensembles: one task over many parameter sets, on a local pool or a Dask cluster.

:func:`ensemble` runs ``task(p)`` for every parameter set ``p`` of ``params`` and
returns the results in the order of ``params``.  The task is any picklable
callable, typically a :class:`SimulationTask` (a model factory plus the options
of :func:`mbint.simulate`, optionally a reduction of the trajectory).

Where it runs:

- ``n_workers=1``: serially in this process;
- default (more workers): threads of this process when the members are C-backed
  runs -- a :class:`SimulationTask` whose model calls no Python while it is
  integrated (no Python forces or Python kernels, e.g. a :class:`PlanarModel` of
  built-in elements) and without Python ``events``: the C core releases the GIL
  for the run, so the runs go on in parallel; threads need no pool to start and
  return the results without pickling.  Only each member's Python part (the model
  factory, validation, the Trajectory, ``reduce``) holds the GIL: about 1.5 ms, a
  few percent of a member of 0.1 s.  Any other task (a callable of its own, a
  model with Python forces) runs on processes;
- ``backend="processes"``: a pool of ``n_workers`` worker processes (default: the
  number of cores), started with ``forkserver`` (``spawn`` where there is none) once
  per Python session and reused by later ensembles (the fork server and the
  workers import mbint once, about 1.5 s; the pool is shut down at interpreter exit,
  or by ``shutdown_pool()`` of this module, e.g. to import changed modules anew).
  The task and the results travel as ``cloudpickle`` bytes, so lambdas in a task
  or a model work; short members go to a worker several at a time (about 0.05 s
  of work per message, measured as the ensemble runs), and the next ones are sent
  before it is done.  The workers import the main script again (as
  ``forkserver`` and ``spawn`` do), so a script must call :func:`ensemble` under
  ``if __name__ == "__main__":`` (a call outside it is refused with a RuntimeError
  saying so);
- ``backend="threads"``: threads in this process for any task: they run in parallel
  only while the task releases the GIL (mbint's C-backed runs do);
- ``client=`` a ``dask.distributed.Client``: the same call on that cluster (Dask
  pickles with cloudpickle too); with ``dataset=True`` the results stay on the
  cluster as a lazy, chunked ``xarray.Dataset`` (one chunk per member).

A member that raises returns a :class:`MemberError` (its message and traceback)
in its place; the others go on.  So does a member that kills its worker process
(the others go on in a fresh one) and, with ``timeout=``, a member that runs too
long (its worker process is killed; in a thread or serially its run is stopped
through the driver's monitor, as Ctrl-C stops it).  Ctrl-C stops the running
members and raises :class:`EnsembleInterrupted` with the finished ones.  A run that
fails inside the integrator returns its Trajectory with ``status = -1`` as usual.
Every member is computed by the same code on the same inputs wherever it runs, so
the results are bit-identical to a serial loop (tests/test_ensemble.py).

Dask is imported only when a client is given: ``import mbint`` does not need it.
"""
from __future__ import annotations

import os
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Callable, Iterable, Sequence

import numpy as np

from ._typing import TSpan

if TYPE_CHECKING:
    import xarray

    from .mbs.trajectory import Trajectory

from ._pools import (PENDING, MemberError, run_member, run_processes, run_serial, run_threads,
                     shutdown_pool)

__all__ = ["ensemble", "EnsembleResult", "EnsembleInterrupted", "MemberError", "SimulationTask",
           "shutdown_pool"]


class SimulationTask:
    """A task for :func:`ensemble`: build a model from a parameter set, simulate it.

    ``task(p)`` calls ``model_factory(**p)`` for a mapping p, ``model_factory(*p)``
    for a tuple, else ``model_factory(p)``; then :func:`mbint.simulate` with
    ``t_span`` (default: the model's ``t_span``) and the options; then
    ``reduce(trajectory)`` when given.

    Parameters
    ----------
    model_factory : callable
        Returns a PlanarModel or MechanicalSystem (e.g. a function of
        :mod:`mbint.models`).
    t_span : 2-sequence of float, optional
    reduce : callable, optional
        ``reduce(traj)`` -> what the ensemble keeps of each member (a number, a
        dict of arrays, a Dataset...): small results travel faster.
    **simulate_options
        Passed to :func:`mbint.simulate` (``method``, ``rtol``, ``t_eval``, ...).
    """

    def __init__(self, model_factory: Callable[..., Any], t_span: TSpan | None = None,
                 reduce: Callable[[Trajectory], Any] | None = None,
                 **simulate_options: Any) -> None:
        if not callable(model_factory):
            raise ValueError("model_factory must be callable model_factory(**params).")
        if reduce is not None and not callable(reduce):
            raise ValueError("reduce must be callable reduce(trajectory) or None.")
        self.model_factory = model_factory
        self.t_span = None if t_span is None else tuple(float(v) for v in t_span)
        self.reduce = reduce
        self.simulate_options = dict(simulate_options)

    def model(self, p: Any) -> Any:
        """The model of parameter set p."""
        if isinstance(p, Mapping):
            return self.model_factory(**p)
        if isinstance(p, tuple):
            return self.model_factory(*p)
        return self.model_factory(p)

    def __call__(self, p: Any) -> Any:
        from .mbs.simulate import simulate

        model = self.model(p)
        t_span = self.t_span if self.t_span is not None else getattr(model, "t_span", None)
        if t_span is None:
            raise ValueError("t_span: the model has no t_span; give SimulationTask(t_span=...).")
        traj = simulate(model, t_span, **self.simulate_options)
        return traj if self.reduce is None else self.reduce(traj)

    def __repr__(self):
        name = getattr(self.model_factory, "__name__", repr(self.model_factory))
        return f"SimulationTask({name}, t_span={self.t_span}, {self.simulate_options})"


class EnsembleResult(list):
    """The results of :func:`ensemble`, in the order of ``params`` (a list).

    Attributes
    ----------
    params : list
        The parameter sets.
    failed : list of int
        Indices of the members that failed (a :class:`MemberError`, or a result
        with ``success`` False).
    backend : str
        ``"serial"``, ``"processes"``, ``"threads"`` or ``"dask"``.
    n_workers : int
    wall_time : float
        Seconds from the first submission to the last result.
    """

    def __init__(self, results: Iterable[Any], params: Sequence[Any], backend: str, n_workers: int,
                 wall_time: float) -> None:
        super().__init__(results)
        self.params = list(params)
        self.backend = backend
        self.n_workers = n_workers
        self.wall_time = wall_time

    @property
    def failed(self) -> list[int]:
        return [k for k, r in enumerate(self) if not getattr(r, "success", True)]

    @property
    def errors(self) -> list[MemberError]:
        """The :class:`MemberError` of every member whose task raised."""
        return [r for r in self if isinstance(r, MemberError)]

    def to_xarray(self) -> xarray.Dataset:
        """The results as one ``xarray.Dataset`` with a ``member`` dimension (see
        :func:`ensemble`, ``dataset=True``)."""
        return _stack([_member_dataset(r) for r in self], self.params)

    def __repr__(self):
        return (f"<EnsembleResult: {len(self)} members, {len(self.failed)} failed, "
                f"{self.backend} x {self.n_workers}, {self.wall_time:.3g} s>")


class EnsembleInterrupted(KeyboardInterrupt):
    """Ctrl-C during :func:`ensemble`: the running members were stopped (their runs
    through the driver's monitor, their worker processes killed); nothing finished
    is lost.

    It is a KeyboardInterrupt, so code that does not expect it stops as usual::

        try:
            res = mbint.ensemble(task, params)
        except mbint.EnsembleInterrupted as exc:
            res = exc.result      # finished members; the others are MemberErrors

    Attributes
    ----------
    result : EnsembleResult
        Every member in the order of ``params``: the finished ones, and for the
        others a :class:`MemberError` (``error == "KeyboardInterrupt"``).
    """

    def __init__(self, result: EnsembleResult, n_finished: int) -> None:
        super().__init__(f"ensemble interrupted: {n_finished} of {len(result)} members "
                         f"finished; the results are in .result")
        self.result = result


# ---------------------------------------------------------------- ensemble
def _progress_bar(show, n, desc):
    if not show:
        return None
    from .progress import bar

    return bar(total=n, desc=desc, unit="run")


def _local_setup(n_workers, backend, timeout, task=None, params=()):
    """(n_workers, backend, timeout) of a local run, checked; the default backend:
    serial for one worker, threads when the members are C-backed runs
    (:func:`_runs_in_c`), else processes."""
    if n_workers is None:
        n_workers = os.cpu_count() or 1
    if isinstance(n_workers, bool) or int(n_workers) != n_workers or n_workers < 1:
        raise ValueError(f"n_workers must be a positive integer, got {n_workers!r}.")
    n_workers = int(n_workers)
    if timeout is not None:
        try:
            timeout = float(timeout)
        except (TypeError, ValueError):
            timeout = float("nan")
        if not timeout > 0:
            raise ValueError("timeout must be a positive number of seconds (per member) or "
                             "None.")
    if backend is None:
        if n_workers == 1:
            backend = "serial"
        else:
            backend = "threads" if _runs_in_c(task, params) else "processes"
    return n_workers, backend, timeout


def _runs_in_c(task, params):
    """Whether the members are C-backed runs, which release the GIL: ``task`` is a
    :class:`SimulationTask` without Python events whose model, built for the first
    parameter set, calls no Python during the run (no Python forces)."""
    if not isinstance(task, SimulationTask) or not params:
        return False
    if task.simulate_options.get("events") is not None:
        return False
    from . import _core

    try:
        handle = task.model(params[0])._mech_handle()
        return not _core.mech_info(handle)["python"]
    except Exception:  # noqa: BLE001 - not a model of mbint's, or its factory fails there
        return False


def ensemble(task: Callable[[Any], Any], params: Sequence[Any], *, client: Any = None,
             n_workers: int | None = None, backend: str | None = None, progress: bool = True,
             dataset: bool = False,
             timeout: float | None = None) -> EnsembleResult | xarray.Dataset:
    """Run ``task(p)`` for every parameter set p of ``params``, in parallel.

    Parameters
    ----------
    task : callable
        ``task(p) -> result``: a :class:`SimulationTask` or any picklable
        callable (with the process pool or Dask, lambdas and closures work too:
        they travel by cloudpickle).
    params : sequence
        The parameter sets (dicts for a SimulationTask's ``factory(**p)``).
    client : dask.distributed.Client, optional
        Run on this Dask cluster.
    n_workers : int, optional
        Local pool size (default: the number of cores; 1 runs serially here).
        Ignored with ``client`` (the cluster has its workers).
    backend : {None, "processes", "threads", "serial"}
        The local pool's kind.  None: serial for one worker; else threads when the
        members are C-backed runs (a SimulationTask whose model calls no Python
        during the run, and no Python events: the model is built once here for the
        first parameter set to find out), processes otherwise.  The worker
        processes import the main script again: in a script, call ensemble under
        ``if __name__ == "__main__":`` (else RuntimeError, saying so).
    progress : bool
        A progress bar (tqdm; a widget in Jupyter) counting finished members.
    dataset : bool
        Return an ``xarray.Dataset`` with a ``member`` dimension instead of the
        list: every member's :meth:`Trajectory.to_xarray` (without step history,
        dense records and events), a dict of arrays or a Dataset, stacked; the
        parameter sets' keys become coordinates along ``member``, and
        ``success``, ``message`` say which members failed (their values are
        NaN).  The members must share their output times (give ``t_eval``).
        With ``client`` the dataset is lazy (Dask arrays, one chunk per member,
        computed on the cluster); its structure is taken from the first member
        that finishes, so the call returns once one member is done.
    timeout : float, optional
        Seconds a member may run (local pools; not with ``client``), counted from
        when it can start: a worker process's loading of the task (the imports its
        unpickling needs, up to 60 s) is not charged to it.  A member
        that runs longer is a :class:`MemberError` (``TimeoutError``) and the
        others go on: its worker process is killed; in a thread or serially its
        mbint runs are stopped through the driver's monitor (within 5 ms).  A
        thread cannot be killed: a member that hangs outside an mbint run is
        reported after one more second and its thread left running (a fresh
        thread takes its place for the other members; serially it cannot be
        stopped at all): use processes for such tasks.

    Returns
    -------
    EnsembleResult or xarray.Dataset
        The results in the order of ``params``; a member whose task raised, whose
        worker process died or that ran out of time is a :class:`MemberError`.

    Raises
    ------
    EnsembleInterrupted
        Ctrl-C (a KeyboardInterrupt): the running members are stopped, the
        finished ones are in ``exc.result``.

    Examples
    --------
    >>> task = mbint.SimulationTask(mbint.models.stiff_double_pendulum, (0, 1),
    ...                             method="radau_iia", t_eval=np.linspace(0, 1, 11))
    >>> res = mbint.ensemble(task, [{"k2": k} for k in (1e4, 1e5, 3e5)], n_workers=2)
    """
    if not callable(task):
        raise ValueError("task must be callable task(params).")
    try:
        params = list(params)
    except TypeError:
        raise ValueError("params must be a sequence of parameter sets.") from None
    if backend not in (None, "processes", "threads", "serial"):
        raise ValueError(f"backend must be None, 'processes', 'threads' or 'serial', "
                         f"got {backend!r}.")
    if client is not None:
        if timeout is not None:
            raise ValueError("timeout: not with client= (Dask runs the members on its own "
                             "workers; set limits on the cluster).")
        return _run_dask(task, params, client, progress, dataset)
    n_workers, backend, timeout = _local_setup(n_workers, backend, timeout, task, params)
    t_start = time.perf_counter()
    bar = _progress_bar(progress, len(params), f"ensemble ({backend} x {n_workers})")
    results = [PENDING] * len(params)
    try:
        if backend == "serial" or not params:
            run_serial(task, params, results, bar, timeout)
        elif backend == "threads":
            run_threads(task, params, n_workers, results, bar, timeout)
        else:
            run_processes(task, params, n_workers, results, bar, timeout)
    except KeyboardInterrupt as exc:
        n_done = sum(r is not PENDING for r in results)
        out = EnsembleResult(_unfinished_as_errors(results, params), params, backend, n_workers,
                             time.perf_counter() - t_start)
        raise EnsembleInterrupted(out, n_done) from exc
    finally:
        if bar is not None:
            bar.close()
    out = EnsembleResult(results, params, backend, n_workers, time.perf_counter() - t_start)
    return out.to_xarray() if dataset else out


def _unfinished_as_errors(results, params):
    return [MemberError(k, p, KeyboardInterrupt("not finished: the ensemble was interrupted"))
            if r is PENDING else r for k, (r, p) in enumerate(zip(results, params))]


# ---------------------------------------------------------------- Dask
def _run_dask(task, params, client, progress, dataset):
    try:
        from distributed import as_completed
    except ImportError as exc:  # pragma: no cover - client given without distributed
        raise ImportError("client=: ensembles on Dask need dask.distributed "
                          "(pip install 'mbint[dask]').") from exc
    t_start = time.perf_counter()
    futures = [client.submit(run_member, task, k, p, pure=False) for k, p in enumerate(params)]
    if dataset:
        return _lazy_dataset(client, futures, params)
    bar = _progress_bar(progress, len(params), f"ensemble (dask, {len(client.nthreads())} workers)")
    try:
        for _ in as_completed(futures):
            if bar is not None:
                bar.update(1)
    finally:
        if bar is not None:
            bar.close()
    results = client.gather(futures, errors="skip")
    out = []
    for k, (f, r) in enumerate(zip(futures, results)):
        if f.status == "error":  # not raised by the task (caught there): the worker died
            out.append(MemberError(k, params[k], f.exception()))
        else:
            out.append(r)
    return EnsembleResult(out, params, "dask", len(client.nthreads()),
                          time.perf_counter() - t_start)


# ---------------------------------------------------------------- datasets
def _member_dataset(r):
    """One member's result as a Dataset (None for a failure)."""
    import xarray as xr

    from .mbs.trajectory import Trajectory

    if isinstance(r, MemberError):
        return None
    if isinstance(r, Trajectory):
        return r.to_xarray(steps=False, dense=False, events=False)
    if isinstance(r, xr.Dataset):
        return r
    if isinstance(r, Mapping):
        data = {}
        for k, v in r.items():
            a = np.asarray(v)
            data[str(k)] = ([f"{k}_dim{i}" for i in range(a.ndim)], a)
        return xr.Dataset(data)
    if np.ndim(r) == 0 and np.isscalar(r) or isinstance(r, (int, float, np.number)):
        return xr.Dataset({"value": ((), np.asarray(r))})
    a = np.asarray(r)
    return xr.Dataset({"value": ([f"value_dim{i}" for i in range(a.ndim)], a)})


def _nan_like(ds):
    """A dataset of the template's structure filled with NaN (a failed member)."""
    out = ds.copy(deep=True)
    for name, v in out.data_vars.items():
        if np.issubdtype(v.dtype, np.floating) or np.issubdtype(v.dtype, np.complexfloating):
            out[name] = v.copy(data=np.full(v.shape, np.nan, v.dtype))
        elif np.issubdtype(v.dtype, np.integer):
            out[name] = v.copy(data=np.full(v.shape, np.nan)).astype(float)
    return out


def _param_coords(params):
    """Coordinates along ``member``: one per key of dict parameter sets with scalar
    values, else the parameter sets' repr."""
    coords = {"member": np.arange(len(params))}
    if params and all(isinstance(p, Mapping) for p in params):
        keys = list(params[0])
        if all(list(p) == keys for p in params) and all(
                np.ndim(p[k]) == 0 for p in params for k in keys):
            for k in keys:
                coords[str(k)] = ("member", np.array([p[k] for p in params]))
            return coords
    if params and all(np.ndim(p) == 0 and isinstance(p, (int, float, np.number)) for p in params):
        coords["param"] = ("member", np.array(params))
        return coords
    coords["params"] = ("member", np.array([repr(p) for p in params], dtype=object))
    return coords


def _stack(datasets, params, success=None, messages=None):
    import xarray as xr

    template = next((d for d in datasets if d is not None), None)
    if template is None:
        raise ValueError("dataset: every member failed; nothing to stack (see the messages "
                         "of the list result, dataset=False).")
    filled = [d if d is not None else _nan_like(template) for d in datasets]
    try:
        ds = xr.concat(filled, dim="member", join="exact", combine_attrs="drop_conflicts",
                       data_vars="all", coords="minimal", compat="override")
    except ValueError as exc:
        raise ValueError(f"dataset: the members' results do not align ({exc}); for "
                         f"trajectories give a common t_eval to simulate.") from exc
    ds = ds.assign_coords(_param_coords(params))
    if success is None:
        success = [d is not None and bool(d.attrs.get("success", 1)) for d in datasets]
    ds["success"] = ("member", np.array(success, bool))
    return ds


def _member_arrays(r, template_vars):
    """In a Dask worker: the member's variables as arrays of the template's shapes
    (NaN for a failure)."""
    ds = _member_dataset(r)
    out = {}
    for name, (shape, dtype) in template_vars.items():
        if ds is None or name not in ds:
            out[name] = np.full(shape, np.nan)
        else:
            out[name] = np.asarray(ds[name].values).astype(dtype if ds is not None else float)
    out["__success__"] = np.array(ds is not None and bool(ds.attrs.get("success", 1)))
    return out


def _pick(d, name):
    return d[name]


def _lazy_dataset(client, futures, params):
    """The members as a lazy Dataset: dask arrays, one chunk per member, whose tasks
    depend on the members' futures (the results stay on the cluster)."""
    import dask
    import dask.array as da
    import xarray as xr
    from distributed import as_completed

    # the structure from the first member that succeeds (fetched: one member)
    template = None
    for f in as_completed(futures):
        ds = client.submit(_member_dataset, f, pure=False).result()
        if ds is not None:
            template = ds
            break
    if template is None:
        raise ValueError("dataset: every member failed; nothing to stack.")
    tv = {}
    for name, v in template.data_vars.items():
        if np.issubdtype(v.dtype, np.number):
            dt = v.dtype if np.issubdtype(v.dtype, np.floating) else np.dtype(float)
            tv[name] = (v.shape, dt)
    arrays = [client.submit(_member_arrays, f, tv, pure=False) for f in futures]
    data = {}
    for name, (shape, dt) in tv.items():
        parts = [da.from_delayed(dask.delayed(_pick)(a, name), shape=shape, dtype=dt)
                 for a in arrays]
        data[name] = (("member",) + template[name].dims, da.stack(parts),
                      dict(template[name].attrs))
    ok = [da.from_delayed(dask.delayed(_pick)(a, "__success__"), shape=(), dtype=bool)
          for a in arrays]
    data["success"] = ("member", da.stack(ok))
    ds = xr.Dataset(data, coords={k: v for k, v in template.coords.items()},
                    attrs={k: v for k, v in template.attrs.items()
                           if k in ("method", "formulation", "model_name", "model_class",
                                    "mbint_version", "options_json")})
    return ds.assign_coords(_param_coords(params))
