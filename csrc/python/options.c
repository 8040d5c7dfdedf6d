/* One run of an integrator from Python: options, events, the run with the GIL
 * released when no Python runs per step, the result dict (options.h). */
#include "options.h"
#define NO_IMPORT_ARRAY
#define PY_ARRAY_UNIQUE_SYMBOL MBINT_ARRAY_API
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#include <numpy/arrayobject.h>
#include <math.h>
#include <string.h>
#include <time.h>
#include "method_options.h"
#include "status.h"

void run_args_init(run_args *a)
{
    memset(a, 0, sizeof *a);
    a->controller = 0;  /* MB_CONTROLLER_DEFAULT: the method's preferred one */
    a->y0 = a->atol = a->rtol = Py_None;
    a->t_eval = a->events = a->terminal = a->direction = a->switching = Py_None;
    a->method_options = Py_None;
    a->progress = a->cancel = Py_None;
}

int run_begin(run_ctx *r, const char *name)
{
    memset(r, 0, sizeof *r);
    r->name = name;
    r->m = mb_method_find(name);
    if (!r->m && !mb_sundials_find(name)) {
        PyErr_Format(PyExc_ValueError, "method: unknown method '%s'.", name);
        return -1;
    }
    return 0;
}

/* the user's events, then the extra C events */
static int run_events(double t, const double *y, double *g, void *ctx)
{
    run_ctx *r = ctx;
    if (r->user.nev > 0) {
        int rc = py_events(t, y, g, &r->user);
        if (rc != 0)
            return rc;
    }
    return r->n_extra > 0 ? r->extra(t, y, g + r->user.nev, r->extra_ctx) : 0;
}

/* nev ints from o into out, or -1 with ValueError(msg) when the size differs */
static int copy_flags(PyObject *o, Py_ssize_t nev, int *out, const char *msg)
{
    PyArrayObject *a = (PyArrayObject *)PyArray_FROMANY(o, NPY_INT, 1, 1, NPY_ARRAY_CARRAY);
    if (!a)
        return -1;
    int bad = PyArray_SIZE(a) != nev;
    if (bad)
        PyErr_SetString(PyExc_ValueError, msg);
    else
        memcpy(out, PyArray_DATA(a), (size_t)nev * sizeof(int));
    Py_DECREF(a);
    return bad ? -1 : 0;
}

static int prepare_events(run_ctx *r, const run_args *a, PyObject *args)
{
    Py_ssize_t nev = 0;
    if (a->events != Py_None && (nev = PySequence_Size(a->events)) < 0)
        return -1;
    ptrdiff_t ne = nev + r->n_extra;
    if (ne == 0)
        return 0;
    r->ev_flags = PyMem_Calloc((size_t)(3 * ne), sizeof(int));
    if (!r->ev_flags) {
        PyErr_NoMemory();
        return -1;
    }
    int *terminal = r->ev_flags, *direction = terminal + ne, *switching = direction + ne;
    if (nev > 0) {
        if (copy_flags(a->terminal, nev, terminal,
                       "terminal and direction need one entry per event.") ||
            copy_flags(a->direction, nev, direction,
                       "terminal and direction need one entry per event.") ||
            (a->switching != Py_None &&
             copy_flags(a->switching, nev, switching, "switching needs one entry per event.")))
            return -1;
        for (Py_ssize_t i = 0; !r->m && i < nev; i++)
            if (switching[i]) {
                PyErr_Format(PyExc_ValueError, "events: switching events restart the "
                             "integration inside mbint's driver; SUNDIALS method '%s' runs its "
                             "own step loop.", r->name);
                return -1;
            }
        r->user.events = a->events;
        r->user.args = args;
        r->user.n = r->n;
        r->user.nev = nev;
        r->python = 1;
    }
    for (ptrdiff_t i = nev; i < ne; i++)
        switching[i] = 1;  /* extra events: non-terminal, both directions, switching */
    r->o.events = run_events;
    r->o.n_events = ne;
    r->o.terminal = terminal;
    r->o.direction = direction;
    r->o.switching = switching;
    r->o.event_ctx = r;
    return 0;
}

int run_prepare(run_ctx *r, const run_args *a, ptrdiff_t n0, PyObject *args)
{
    r->y0 = as_vec_object(a->y0, n0, "y0");
    if (!r->y0)
        return -1;
    r->n = PyArray_SIZE((PyArrayObject *)r->y0);
    r->atol = as_vec_object(a->atol, r->n, "atol");
    if (!r->atol)
        return -1;
    mb_options *o = &r->o;
    if (PyFloat_Check(a->rtol) || PyLong_Check(a->rtol)) {
        o->rtol = PyFloat_AsDouble(a->rtol);
        if (o->rtol == -1.0 && PyErr_Occurred())
            return -1;
    } else {  /* per-component: the smallest sets the Newton tolerances */
        r->rtol_v = as_vec_object(a->rtol, r->n, "rtol");
        if (!r->rtol_v)
            return -1;
        o->rtol_v = PyArray_DATA((PyArrayObject *)r->rtol_v);
        o->rtol = r->n > 0 ? o->rtol_v[0] : 1e-3;
        for (ptrdiff_t i = 1; i < r->n; i++)
            o->rtol = fmin(o->rtol, o->rtol_v[i]);
    }
    o->atol = PyArray_DATA((PyArrayObject *)r->atol);
    o->h = a->h;
    o->first_step = a->first_step;
    o->max_step = a->max_step;
    o->min_step = a->min_step;
    o->max_steps = a->max_steps;
    o->step_doubling = a->step_doubling;
    if (a->controller < MB_CONTROLLER_DEFAULT || a->controller > MB_CONTROLLER_PREDICTIVE) {
        PyErr_Format(PyExc_ValueError, "controller: unknown controller code %d.", a->controller);
        return -1;
    }
    o->controller = (mb_controller_kind)a->controller;
    o->error_per_unit_step = a->error_per_unit_step;
    o->safety = a->safety;
    o->fac_min = a->fac_min;
    o->fac_max = a->fac_max;
    o->dense_output = a->dense_output;
    if (a->t_eval != Py_None) {
        r->t_eval = as_vec_object(a->t_eval, -1, "t_eval");
        if (!r->t_eval)
            return -1;
        o->t_eval = PyArray_DATA((PyArrayObject *)r->t_eval);
        o->n_eval = PyArray_SIZE((PyArrayObject *)r->t_eval);
    }
    if (mb_py_method_options_convert(r->name, a->method_options, r->n, &r->method_options))
        return -1;
    o->method_options = r->method_options;
    return prepare_events(r, a, args);
}

static double monotonic_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* mb_options.monitor: Python's signal handlers and cancel(), at most every
 * MB_SIGNAL_INTERVAL s, and the progress callback, at most every MB_PROGRESS_INTERVAL s
 * (the GIL is taken only then when it was released) */
static int run_monitor(double t, void *ctx)
{
    run_ctx *r = ctx;
    double now = monotonic_seconds();
    if (now - r->mon_last < MB_SIGNAL_INTERVAL)
        return MB_OK;
    r->mon_last = now;
    int report = r->progress && now - r->prog_last >= MB_PROGRESS_INTERVAL;
    if (report)
        r->prog_last = now;
    int failed;
    PyGILState_STATE g = PyGILState_UNLOCKED;
    if (!r->python)  /* the GIL was released for the run */
        g = PyGILState_Ensure();
    failed = PyErr_CheckSignals() < 0;  /* the exception stays set in this thread */
    if (!failed && r->cancel) {
        PyObject *rv = PyObject_CallNoArgs(r->cancel);
        failed = rv == NULL;
        Py_XDECREF(rv);
    }
    if (!failed && report) {
        PyObject *tt = PyFloat_FromDouble(t);
        PyObject *rv = tt ? PyObject_CallOneArg(r->progress, tt) : NULL;
        Py_XDECREF(tt);
        failed = rv == NULL;
        Py_XDECREF(rv);
    }
    if (!r->python)
        PyGILState_Release(g);
    return failed ? MB_ERR_INTERRUPTED : MB_OK;
}

/* the exception set in this thread, taken over with its traceback, into r: a
 * KeyboardInterrupt (Ctrl-C, cancel()) in r->interrupt with the status of an
 * interrupted run, any other in r->raised with the status of a failed callback (the
 * monitor reports what progress() or cancel() raised as an interruption) */
static void hold_exception(run_ctx *r)
{
    int interrupt = PyErr_ExceptionMatches(PyExc_KeyboardInterrupt);
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    PyErr_NormalizeException(&type, &value, &tb);
    if (value && tb)
        PyException_SetTraceback(value, tb);
    Py_XDECREF(type);
    Py_XDECREF(tb);
    if (!value)
        value = (Py_INCREF(Py_None), Py_None);
    if (!interrupt) {
        r->raised = value;
        if (r->res.status == MB_ERR_INTERRUPTED) {
            r->res.status = MB_ERR_CALLBACK;
            snprintf(r->res.message, sizeof r->res.message, "%s",
                     mb_status_str(MB_ERR_CALLBACK));
        }
        return;
    }
    r->interrupt = value;
    r->res.status = MB_ERR_INTERRUPTED;
    snprintf(r->res.message, sizeof r->res.message, "%s", mb_status_str(MB_ERR_INTERRUPTED));
}

int run_piece(run_ctx *r, const run_args *a, run_piece_fn piece, void *arg)
{
    r->o.monitor = run_monitor;
    r->o.monitor_ctx = r;
    r->mon_last = monotonic_seconds();
    r->prog_last = r->mon_last;
    r->progress = a->progress != Py_None ? a->progress : NULL;
    r->cancel = a->cancel != Py_None ? a->cancel : NULL;
    PyThreadState *ts = r->python ? NULL : PyEval_SaveThread();
    piece(r, arg);
    if (ts)
        PyEval_RestoreThread(ts);
    if (PyErr_Occurred()) {
        /* Ctrl-C, cancel() or an exception of the user's own (a callback, progress):
         * keep what was computed and hand the exception over with it */
        hold_exception(r);
        return 0;
    }
    if (r->res.status == MB_ERR_MEM) {
        PyErr_NoMemory();
        return -1;
    }
    return 0;
}

/* the whole run of run_execute */
typedef struct whole_run {
    const mb_problem *p;
    const run_args *a;
} whole_run;

static int run_whole(run_ctx *r, void *arg)
{
    const whole_run *w = arg;
    const double *y0 = PyArray_DATA((PyArrayObject *)r->y0);
    if (r->dae)
        return mb_sundials_ida_run(w->p, w->a->t0, w->a->tf, y0, r->dae, &r->o, &r->res,
                                   r->yp0_out);
    if (r->m)
        return mb_driver_run(r->m, w->p, w->a->t0, w->a->tf, y0, &r->o, &r->res);
    return mb_sundials_run(r->name, w->p, w->a->t0, w->a->tf, y0, &r->o, &r->res);
}

int run_execute(run_ctx *r, const mb_problem *p, const run_args *a)
{
    whole_run w = {p, a};
    return run_piece(r, a, run_whole, &w);
}

PyObject *result_dict_of_run(run_ctx *r)
{
    PyObject *d = result_to_dict(&r->res);
    if (d && (PyDict_SetItemString(d, "interrupted", r->interrupt ? r->interrupt : Py_None) < 0 ||
              PyDict_SetItemString(d, "raised", r->raised ? r->raised : Py_None) < 0))
        Py_CLEAR(d);
    Py_CLEAR(r->interrupt);
    Py_CLEAR(r->raised);
    return d;
}

void run_free(run_ctx *r)
{
    mb_result_free(&r->res);
    Py_XDECREF(r->y0);
    Py_XDECREF(r->atol);
    Py_XDECREF(r->t_eval);
    Py_XDECREF(r->rtol_v);
    PyMem_Free(r->ev_flags);
    Py_CLEAR(r->interrupt);
    Py_CLEAR(r->raised);
    PyMem_Free(r->method_options);
    r->method_options = NULL;
    r->y0 = r->atol = r->t_eval = r->rtol_v = NULL;
    r->ev_flags = NULL;
}

PyObject *result_to_dict(const mb_result *r)
{
    PyObject *d = PyDict_New();
    if (!d)
        return NULL;
    ptrdiff_t n = r->n;
    PyObject *evt = NULL, *evy = NULL;
    if (dict_set(d, "t", vec_from(r->t, r->nt)) ||
        dict_set(d, "y", mat_from(r->y, r->nt, n)) ||
        dict_set(d, "status", PyLong_FromLong(r->status)) ||
        dict_set(d, "message", PyUnicode_FromString(r->message)) ||
        dict_set(d, "nfev", PyLong_FromLong(r->stats.nfev)) ||
        dict_set(d, "njev", PyLong_FromLong(r->stats.njev)) ||
        dict_set(d, "nlu", PyLong_FromLong(r->stats.nlu)) ||
        dict_set(d, "nsteps", PyLong_FromLong(r->stats.nsteps)) ||
        dict_set(d, "nreject", PyLong_FromLong(r->stats.nreject)) ||
        dict_set(d, "nfail", PyLong_FromLong(r->stats.nfail)) ||
        dict_set(d, "nrestart", PyLong_FromLong(r->stats.nrestart)) ||
        dict_set(d, "nswitch", PyLong_FromLong(r->stats.nswitch)) ||
        dict_set(d, "hist_t", vec_from(r->hist_t, r->n_hist)) ||
        dict_set(d, "hist_h", vec_from(r->hist_h, r->n_hist)) ||
        dict_set(d, "hist_err", vec_from(r->hist_err, r->n_hist)) ||
        dict_set(d, "dense_t", vec_from(r->d_t, r->nsteps_d)) ||
        dict_set(d, "dense_h", vec_from(r->d_h, r->nsteps_d)) ||
        dict_set(d, "dense_c", vec_from(r->d_c, r->len_c)) ||
        dict_set(d, "dense_rec_len", PyLong_FromSsize_t((Py_ssize_t)r->d_rec_len)))
        goto fail;
    {
        npy_intp dims[1] = {(npy_intp)r->nsteps_d};
        PyObject *deg = PyArray_SimpleNew(1, dims, NPY_INT64);
        PyObject *off = PyArray_SimpleNew(1, dims, NPY_INT64);
        if (!deg || !off) {
            Py_XDECREF(deg);
            Py_XDECREF(off);
            goto fail;
        }
        for (ptrdiff_t k = 0; k < r->nsteps_d; k++) {
            ((npy_int64 *)PyArray_DATA((PyArrayObject *)deg))[k] = r->d_deg[k];
            ((npy_int64 *)PyArray_DATA((PyArrayObject *)off))[k] = r->d_off[k];
        }
        if (dict_set(d, "dense_deg", deg)) {
            Py_DECREF(off);
            goto fail;
        }
        if (dict_set(d, "dense_off", off))
            goto fail;
    }
    evt = PyList_New(r->n_events);
    evy = PyList_New(r->n_events);
    if (!evt || !evy)
        goto fail;
    for (ptrdiff_t i = 0; i < r->n_events; i++) {
        PyObject *a = vec_from(r->ev_t[i], r->ev_count[i]);
        PyObject *b = mat_from(r->ev_y[i], r->ev_count[i], n);
        if (!a || !b) {
            Py_XDECREF(a);
            Py_XDECREF(b);
            goto fail;
        }
        PyList_SET_ITEM(evt, i, a);
        PyList_SET_ITEM(evy, i, b);
    }
    {
        int bad = dict_set(d, "t_events", evt);  /* dict_set releases evt */
        evt = NULL;
        if (bad)
            goto fail;
        bad = dict_set(d, "y_events", evy);
        evy = NULL;
        if (bad)
            goto fail;
    }
    return d;
fail:
    Py_XDECREF(evt);
    Py_XDECREF(evy);
    Py_DECREF(d);
    return NULL;
}
