"""The local pools of :func:`mbint.ensemble`: the members serially, on threads or on
worker processes, each failure kept to its own member.

- a member that raises is a :class:`MemberError` in its place (the others go on);
- threads: n_workers threads, each taking the next member when done with one;
- processes: the workers of one pool per session (:class:`_Pool`), reused across
  calls; short members go out in chunks, but each worker runs one member at a time
  and returns its result at once, so a worker that dies (a member calls
  ``os._exit``, a crash) costs only the member it ran, which becomes a MemberError
  saying so; the members queued behind it go on in a fresh worker;
- ``timeout``: a member that runs longer is a MemberError (``TimeoutError``): its
  worker process is killed; on a thread or serially its mbint runs are stopped
  through the driver's monitor (:func:`mbint.progress.cancel_scope`, every 5 ms),
  and a thread member that does not stop (it hangs outside an mbint run) is
  reported and its thread left running (a fresh one takes its place);
- Ctrl-C (a KeyboardInterrupt in the main thread) stops the running members the
  same way and propagates; what finished is in ``results`` (the caller raises
  :class:`mbint.EnsembleInterrupted` with it);
- the worker processes import the main script again (forkserver and spawn do):
  :func:`_check_main_guard` refuses, with the reason, a call from a script's top
  level outside ``if __name__ == "__main__":``, which used to break every worker.

Every runner fills ``results[k]`` (initially :data:`PENDING`) and advances the
progress bar once per finished member.
"""
from __future__ import annotations

import ast
import atexit
import collections
import itertools
import os
import pickle
import queue
import sys
import threading
import time
import traceback
from typing import Any

from .progress import cancel_scope

__all__ = ["MemberError", "PENDING", "run_member", "run_serial", "run_threads", "run_processes",
           "shutdown_pool"]

#: seconds between the checks of the waiting loops (Ctrl-C, timeouts)
_TICK = 0.1
#: seconds a stopped thread member is given to end before it is left running
_GRACE = 1.0
#: seconds a worker process may spend loading a task (unpickling it: importing the
#: modules it needs) before its first member's timeout starts; loading is not the
#: member's run (on a loaded machine a fresh worker's imports took longer than a
#: 1.5 s timeout, and a member that returns at once timed out)
_LOAD_ALLOWANCE = 60.0
#: a member not finished yet
PENDING = object()


class MemberError:
    """A member of an ensemble whose task raised, whose worker process died or that
    ran longer than ``timeout``: what it was and why it failed.

    Attributes
    ----------
    index : int
        Position in ``params``.
    params : object
        The parameter set.
    error : str
        The exception's type name.
    message : str
        ``"<error>: <message>"``.
    traceback : str
        The formatted traceback (from the worker).
    success : bool
        Always False; ``status`` is -1 (as a failed run).
    """

    __module__ = "mbint.ensemble"  # its public home: pickles name it there
    success = False
    status = -1

    def __init__(self, index: int, params: Any, exc: BaseException) -> None:
        self.index = int(index)
        self.params = params
        self.error = type(exc).__name__
        self.message = f"{self.error}: {exc}"
        self.traceback = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))

    def __repr__(self):
        return f"<MemberError #{self.index} {self.params!r}: {self.message}>"


# ---------------------------------------------------------------- the member runs
def run_member(task, index, p):
    """task(p), or the MemberError of its exception (never raises an Exception)."""
    try:
        return task(p)
    except Exception as exc:  # noqa: BLE001 - a member's failure is a result
        return MemberError(index, p, exc)


class _Stop:
    """The cancel check of one member's runs (:func:`mbint.progress.cancel_scope`):
    once set (a timeout, Ctrl-C of the ensemble), the next call of the driver's
    monitor raises KeyboardInterrupt and the run stops where it is."""

    def __init__(self):
        self.why = None

    def set(self, why):
        if self.why is None:
            self.why = why

    def __call__(self):
        if self.why is not None:
            raise KeyboardInterrupt(f"ensemble member stopped ({self.why})")


def _timeout_error(k, timeout, how):
    return TimeoutError(f"member {k} ran longer than timeout = {timeout:g} s; {how}.")


def _run_stoppable(task, k, p, stop, timeout):
    """task(p) with its runs stopped by ``stop``; a timeout is the member's
    MemberError, Ctrl-C of the ensemble propagates (a KeyboardInterrupt)."""
    with cancel_scope(stop):
        try:
            return task(p)
        except Exception as exc:  # noqa: BLE001 - a member's failure is a result
            return MemberError(k, p, exc)
        except KeyboardInterrupt:
            if stop.why == "timeout":
                return MemberError(k, p, _timeout_error(k, timeout, "its run was stopped"))
            raise


def run_serial(task, params, results, bar, timeout):
    """Every member in this process, one after the other."""
    for k, p in enumerate(params):
        if timeout is None:
            results[k] = run_member(task, k, p)
        else:
            stop = _Stop()
            timer = threading.Timer(timeout, stop.set, ("timeout",))
            timer.daemon = True
            timer.start()
            try:
                results[k] = _run_stoppable(task, k, p, stop, timeout)
            finally:
                timer.cancel()
        if bar is not None:
            bar.update(1)


# ---------------------------------------------------------------- threads
class _Slot:
    """One thread of run_threads; retired: left running with a member given up on, it
    takes no other member."""

    def __init__(self):
        self.retired = False
        self.thread = None


def run_threads(task, params, n_workers, results, bar, timeout):
    """The members on up to n_workers daemon threads of this process, each taking the
    next member when it is done with one (no thread start per member).  Python runs
    signal handlers in the main thread only: a member's runs are stopped through
    their monitor (a timeout, Ctrl-C here); a member that does not stop (it is not
    inside an mbint run) is reported, its thread left running (it takes no other
    member) and a fresh thread takes its place."""
    done = queue.Queue()
    waiting = collections.deque(range(len(params)))
    lock = threading.Lock()  # waiting, running
    running = {}  # member -> [its _Stop, start time, time to give up on it or None, _Slot]
    threads = []  # the _Slot of every thread started

    def work(me):
        while True:
            with lock:
                if me.retired or not waiting:
                    return
                k = waiting.popleft()
                stop = _Stop()
                running[k] = [stop, time.monotonic(), None, me]
            try:
                r = _run_stoppable(task, k, params[k], stop, timeout)
            except BaseException as exc:  # noqa: BLE001 - stopped by Ctrl-C, or SystemExit
                r = PENDING if stop.why == "interrupted" else MemberError(k, params[k], exc)
            done.put((k, r))

    def start():
        me = _Slot()
        me.thread = threading.Thread(target=work, args=(me,), daemon=True,
                                     name="mbint ensemble worker")
        threads.append(me)
        me.thread.start()

    def collect(wait):
        try:
            k, r = done.get(timeout=wait)
        except queue.Empty:
            return
        while True:
            with lock:
                mine = running.pop(k, None) is not None  # else given up on, ending late
            if mine and r is not PENDING:
                results[k] = r
                if bar is not None:
                    bar.update(1)
            try:
                k, r = done.get_nowait()
            except queue.Empty:
                return

    def busy():
        with lock:
            return bool(waiting or running)

    try:
        for _ in range(min(n_workers, len(params))):
            start()
        while busy():
            collect(_TICK)
            if timeout is not None:
                left = _expire_threads(running, lock, params, results, bar, timeout)
                with lock:
                    more = bool(waiting)
                for _ in range(left if more else 0):
                    start()  # in place of a thread left running
    except KeyboardInterrupt:
        with lock:
            waiting.clear()
            for stop, _, _, _ in running.values():
                stop.set("interrupted")
        t_end = time.monotonic() + _GRACE
        while busy() and time.monotonic() < t_end:  # the stopped runs end within ms
            collect(_TICK)
        raise
    t_end = time.monotonic() + _GRACE
    for me in threads:  # those not left running end now: no member is waiting
        if not me.retired:
            me.thread.join(max(0.0, t_end - time.monotonic()))


def _expire_threads(running, lock, params, results, bar, timeout):
    """Stop the members that ran longer than timeout (through their runs' monitor);
    report those that did not stop within _GRACE s and leave their threads (retired:
    they take no other member).  The number of threads left running now."""
    now = time.monotonic()
    left = 0
    with lock:
        for k, entry in list(running.items()):
            stop, started, give_up, slot = entry
            if give_up is None and now - started > timeout:
                stop.set("timeout")
                entry[2] = now + _GRACE
            elif give_up is not None and now > give_up:
                del running[k]
                slot.retired = True
                left += 1
                results[k] = MemberError(k, params[k], _timeout_error(
                    k, timeout, "it could not be stopped (it is not inside an mbint run), and "
                                "its thread is left running"))
                if bar is not None:
                    bar.update(1)
    return left


# ---------------------------------------------------------------- processes
#: seconds of work sent to a worker process in one message (short members in chunks)
_CHUNK_SECONDS = 0.05
#: most members in one message
_CHUNK_MAX = 64
#: largest message sent to a busy worker (sockets hold about 200 kB on Linux)
_AHEAD_BYTES = 32768


def _pool_context():
    import multiprocessing as mp

    methods = mp.get_all_start_methods()
    if "forkserver" in methods:
        ctx = mp.get_context("forkserver")
        ctx.set_forkserver_preload(["mbint"])
        return ctx
    return mp.get_context("spawn")


def _worker_main(conn, alive):
    """A worker process of the pool: "ready", then messages ``(task id, task, members)``
    -- the task as cloudpickle bytes when it changes (else None), members a list of
    (k, p) -- until the parent sends b"" or goes away (``alive``: the read end of a
    pipe the parent never writes, at EOF when the parent is gone).  Each member's
    result goes back as cloudpickle bytes as soon as it is computed, so that the
    parent knows which member runs (the first it sent and has not had back)."""
    import signal

    import cloudpickle

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle
    _exit_with_parent(alive)
    conn.send_bytes(b"ready")
    task = task_error = None
    while True:
        try:
            msg = conn.recv_bytes()
        except (EOFError, OSError):
            return
        if not msg:
            return
        _, payload, members = pickle.loads(msg)
        if payload is not None:
            task = task_error = None
            try:
                task = pickle.loads(payload)
            except Exception as exc:  # noqa: BLE001 - every member's failure
                task_error = exc
            conn.send_bytes(b"loaded")  # the members' timeouts start now
        for k, p in members:
            if task_error is not None:
                res = MemberError(k, p, task_error)
            else:
                try:
                    res = task(p)
                except Exception as exc:  # noqa: BLE001 - a member's failure is a result
                    res = MemberError(k, p, exc)
            try:
                out = cloudpickle.dumps(res)
            except Exception as exc:  # noqa: BLE001 - an unpicklable result is the member's failure
                out = cloudpickle.dumps(MemberError(k, p, exc))
            conn.send_bytes(out)


def _exit_with_parent(alive):
    """In a worker: end this process when the parent process ends (also while a
    member runs), so that no worker outlives a killed ensemble."""
    def watch():
        from multiprocessing.connection import wait

        wait([alive])
        os._exit(1)

    threading.Thread(target=watch, daemon=True, name="mbint parent watch").start()


class _Worker:
    """The parent's side of one worker process: its pipe, the task it holds and the
    members sent to it and not returned yet (the first of them runs)."""

    def __init__(self, ctx):
        self.conn, child = ctx.Pipe()
        alive, self._alive = ctx.Pipe(duplex=False)  # never written: closed, it says "gone"
        self.proc = ctx.Process(target=_worker_main, args=(child, alive), daemon=True,
                                name="mbint ensemble worker")
        self.proc.start()
        child.close()
        alive.close()
        self.ready = False
        self.task_id = None   # the task it holds
        self.inflight = collections.deque()  # members sent, not returned: the first runs
        self.started = None   # monotonic time the running member started
        self.loading = False  # a task sent, not loaded yet (_LOAD_ALLOWANCE)

    def exit_code(self):
        self.proc.join(1.0)
        code = self.proc.exitcode
        return f"killed by signal {-code}" if code is not None and code < 0 else \
            f"exit code {code}"

    def close(self, kill=False):
        if self.proc.is_alive() and not kill:
            try:
                self.conn.send_bytes(b"")
            except OSError:
                pass
            self.proc.join(1.0)
        if self.proc.is_alive():
            self.proc.kill()
            self.proc.join(1.0)
        self.conn.close()
        self._alive.close()


class _Pool:
    """The worker processes kept between :func:`mbint.ensemble` calls: a call takes
    the idle ones (starting more when it needs them) and gives back those that
    finished cleanly; a worker that died, ran out of time or was running a member at
    Ctrl-C is killed and never comes back.  Emptied at interpreter exit
    (:func:`shutdown_pool`), and forgotten in a forked child (its workers are the
    parent's)."""

    def __init__(self):
        self.lock = threading.Lock()
        self.idle = []
        self.pid = os.getpid()

    def _mine(self):
        if self.pid != os.getpid():  # a forked child: the workers are the parent's
            self.idle, self.pid = [], os.getpid()

    def take(self, ctx, n):
        with self.lock:
            self._mine()
            alive = [w for w in self.idle if w.proc.is_alive()]
            dead = [w for w in self.idle if w not in alive]
            got, self.idle = alive[:n], alive[n:]
        for w in dead:
            w.close(kill=True)
        return got + [_Worker(ctx) for _ in range(n - len(got))]

    def give_back(self, workers, keep):
        """The workers that are free and alive back to the pool: at most keep idle, and
        at least as many as there are cores (a smaller ensemble in between does not
        cost the next larger one its workers)."""
        keep = max(keep, os.cpu_count() or 1)
        with self.lock:
            self._mine()
            self.idle += [w for w in workers if w.proc.pid is not None and
                          not w.inflight and w.proc.is_alive()]
            surplus, self.idle = self.idle[keep:], self.idle[:keep]
        for w in surplus:
            w.close()

    def shutdown(self):
        with self.lock:
            self._mine()
            idle, self.idle = self.idle, []
        for w in idle:
            w.close()

    def pids(self):
        with self.lock:
            return [w.proc.pid for w in self.idle]


_POOL = _Pool()
_TASK_IDS = itertools.count(1)


def shutdown_pool() -> None:
    """Stop the idle worker processes of the pool (done at interpreter exit; the next
    process-backed ensemble starts fresh ones, e.g. to import changed modules)."""
    _POOL.shutdown()


atexit.register(shutdown_pool)


def run_processes(task, params, n_workers, results, bar, timeout):
    """The members on n_workers worker processes of the pool.  A worker gets short
    members in chunks (about _CHUNK_SECONDS of work per message, from the measured
    member times) and the next chunk before it finishes the one it runs; it returns
    each member's result as soon as it is computed, so a worker that dies or runs
    out of time costs its running member only: that member gets a MemberError, the
    members queued behind it go back to the queue and on in a fresh worker."""
    import cloudpickle
    from multiprocessing.connection import wait

    _check_main_guard()
    ctx = _pool_context()
    task_id, payload = next(_TASK_IDS), cloudpickle.dumps(task)
    waiting = collections.deque(range(len(params)))
    workers = _POOL.take(ctx, min(n_workers, len(params)))
    spent = [0.0, 0]  # seconds and count of the members returned: the mean member time

    def finish(k, r):
        results[k] = r
        if bar is not None:
            bar.update(1)

    def feed(w):
        """Keep w busy: a chunk when it has nothing queued behind its running member
        (short members: the next chunk waits in its pipe; long ones: one at a time)."""
        while waiting and w.ready:
            mean = spent[0] / spent[1] if spent[1] else None
            depth = 2 if mean is not None and mean < _CHUNK_SECONDS else 1
            if len(w.inflight) >= depth:
                return
            back = _send(w, _take_chunk(waiting, mean, len(workers)), task_id, payload,
                         params, finish)
            if back:  # w is gone (its sentinel says so), or the chunk is too large to
                waiting.extendleft(reversed(back))  # wait in its pipe: when w is done
                return

    def replace(w, why):
        """w is gone: its running member fails with why, the members queued behind it
        go back to the queue, a fresh worker takes its place."""
        if w.inflight:
            k = w.inflight.popleft()
            finish(k, MemberError(k, params[k], why))
            waiting.extendleft(reversed(w.inflight))
            w.inflight.clear()
        elif not w.ready:
            raise RuntimeError(_startup_failure(w.exit_code()))
        w.close(kill=True)
        if waiting:
            workers[workers.index(w)] = _Worker(ctx)
        else:
            workers.remove(w)

    try:
        while waiting or any(w.inflight for w in workers):
            for w in workers:
                feed(w)
            by_obj = {w.conn: w for w in workers}
            by_obj.update({w.proc.sentinel: w for w in workers})
            for obj in wait(list(by_obj), timeout=_TICK):
                w = by_obj[obj]
                if w not in workers:
                    continue  # replaced by an earlier event of this round
                if not _receive(w, params, finish, feed, spent):
                    k = w.inflight[0] if w.inflight else -1
                    replace(w, RuntimeError(
                        f"the worker process running member {k} died ({w.exit_code()}) "
                        f"before returning a result; the other members go on in a fresh "
                        f"worker"))
            for w in list(workers):
                if timeout is not None and w.inflight and time.monotonic() - w.started > \
                        timeout + (_LOAD_ALLOWANCE if w.loading else 0.0):
                    replace(w, _timeout_error(w.inflight[0], timeout,
                                              "its worker process was killed"))
    finally:
        for w in workers:  # those still running a member (Ctrl-C, an error here)
            if w.inflight or not w.proc.is_alive():
                w.close(kill=True)
        _POOL.give_back(workers, keep=n_workers)


def _take_chunk(waiting, mean, n_workers):
    """The next members for one worker: about _CHUNK_SECONDS of work at the mean
    member time (one member while it is unknown), at most _CHUNK_MAX, and at most
    half a fair share of what is left, so that the workers finish together."""
    n = 1
    if mean is not None:
        n = _CHUNK_MAX if mean <= 0 else int(_CHUNK_SECONDS / mean)
        n = min(n, _CHUNK_MAX, len(waiting) // (2 * n_workers))
    return [waiting.popleft() for _ in range(max(1, min(n, len(waiting))))]


def _send(w, members, task_id, payload, params, finish):
    """Members to worker w, with the task when w does not hold it yet (a parameter
    set that does not pickle: its MemberError, the others go).  Returns the members
    not sent, to go back to the queue: none, or all that pickle when w is gone (its
    pipe is broken) or when w is busy and the message is larger than _AHEAD_BYTES
    (it might not fit in the pipe: sending would block until w reads it, while w
    may be blocked sending a large result to us)."""
    import cloudpickle

    head = (task_id, payload if w.task_id != task_id else None)
    try:
        msg = cloudpickle.dumps(head + ([(k, params[k]) for k in members],))
    except Exception:  # noqa: BLE001 - find the members that do not pickle
        good = []
        for k in members:
            try:
                cloudpickle.dumps(params[k])
                good.append(k)
            except Exception as exc:  # noqa: BLE001 - the member's failure
                finish(k, MemberError(k, params[k], exc))
        if not good:
            return []
        members, msg = good, cloudpickle.dumps(head + ([(k, params[k]) for k in good],))
    if w.inflight and len(msg) > _AHEAD_BYTES:
        return members
    try:
        w.conn.send_bytes(msg)
    except OSError:
        return members
    if not w.inflight:
        w.started = time.monotonic()
    if head[1] is not None:
        w.loading = True
    w.inflight.extend(members)
    w.task_id = task_id
    return []


def _receive(w, params, finish, feed, spent):
    """What worker w sent: "ready", or the results of its running members (for each,
    the next chunk goes out before the result is unpickled); False when w died."""
    for _ in range(_CHUNK_MAX):
        if not w.conn.poll():
            break
        try:
            data = w.conn.recv_bytes()
        except (EOFError, OSError):
            return False
        if data == b"ready":
            w.ready = True
        elif data == b"loaded":
            w.loading = False
            w.started = time.monotonic()
        elif w.inflight:
            k = w.inflight.popleft()
            now = time.monotonic()
            spent[0] += now - w.started
            spent[1] += 1
            w.started = now
            feed(w)
            try:
                r = pickle.loads(data)
            except Exception as exc:  # noqa: BLE001 - a result the parent cannot load
                r = MemberError(k, params[k], exc)
            finish(k, r)
    return w.proc.is_alive()


def _startup_failure(code):
    hint = ""
    if _main_is_imported_by_workers():
        hint = (' A common cause: the script calls mbint.ensemble outside `if __name__ == '
                '"__main__":` (the workers import the main script again).')
    return (f"mbint.ensemble: a worker process exited ({code}) before it could run a member; "
            f"its error is printed above.{hint}")


# ---------------------------------------------------------------- the main guard
def _main_is_imported_by_workers():
    """Whether the worker processes import this program's main module again (as
    multiprocessing's spawn and forkserver do: a script, or ``python -m module``)."""
    main = sys.modules.get("__main__")
    name = getattr(getattr(main, "__spec__", None), "name", None)
    if name is not None:
        return not (name == "__main__" or name.endswith(".__main__"))
    path = getattr(main, "__file__", None)
    return path is not None and os.path.splitext(os.path.basename(path))[0] != "ipython"


def _is_main_test(node):
    """``__name__ == "__main__"`` (either way round)."""
    if not (isinstance(node, ast.Compare) and len(node.ops) == 1
            and isinstance(node.ops[0], ast.Eq)):
        return False
    sides = [node.left, node.comparators[0]]
    return any(isinstance(a, ast.Name) and a.id == "__name__" for a in sides) and \
        any(isinstance(a, ast.Constant) and a.value == "__main__" for a in sides)


def _check_main_guard():
    """RuntimeError when ensemble is called from the top level of the main script
    outside ``if __name__ == "__main__":``: the worker processes import the script
    again, and would each start an ensemble of their own there (multiprocessing
    then breaks every worker, and every member failed with BrokenProcessPool)."""
    import multiprocessing as mp

    if getattr(mp.current_process(), "_inheriting", False):  # in a worker, importing
        raise RuntimeError(_GUARD_MESSAGE.format(where="the main script"))
    if not _main_is_imported_by_workers():
        return
    main = sys.modules["__main__"]
    frame, line = sys._getframe(1), None
    while frame is not None:  # the main module's own top-level line leading here
        if frame.f_globals is main.__dict__ and frame.f_code.co_name == "<module>":
            line = frame.f_lineno
        frame = frame.f_back
    path = getattr(main, "__file__", None)
    if line is None or path is None:
        return
    try:
        with open(path, encoding="utf-8") as fh:
            tree = ast.parse(fh.read())
    except (OSError, SyntaxError, ValueError):
        return
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and _is_main_test(node.test) and \
                node.body[0].lineno <= line <= node.body[-1].end_lineno:
            return
    raise RuntimeError(_GUARD_MESSAGE.format(where=f"{path}, line {line}"))


_GUARD_MESSAGE = (
    'mbint.ensemble is called at the top level of a script, outside `if __name__ == '
    '"__main__":` ({where}).  The worker processes import the script again (as '
    'multiprocessing\'s forkserver and spawn start methods do) and would start an ensemble '
    'of their own there.  Put the call, or the code that leads to it, under\n\n'
    '    if __name__ == "__main__":\n\n'
    'or run with backend="threads" or n_workers=1.')
