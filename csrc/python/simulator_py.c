/* _core.MechStepper: a run of mech_simulate (simulate_py.c, mech_session) taken in
 * pieces by mbint.Simulator (mbint/simulator.py) through the driver's piecewise
 * entry points (driver.h "Piecewise runs"):
 *
 *   MechStepper(handle, method, t0, tf, y0, atol, rtol, ...)  mech_simulate's keywords
 *       (t_eval None): the session opened, the driver set up (the first step size)
 *   step()          one accepted step  -> (status, t, y)
 *   advance(t)      up to t, the state there by the dense output -> (status, t, y)
 *   set_force(row, value, t)  the constant term c0 of the time function of row `row`
 *                   of the force table (a planar generalized force or TSDA actuator, a
 *                   spatial TSDA or RSDA actuator) becomes value at time t: the run
 *                   moves back to t when it stepped past it, the formulation forgets
 *                   its cached Q, the method restarts at t -> status
 *   restart(t)      the same without a force: the problem changed at t (a parameter
 *                   of the user's right-hand side)
 *   stats()         the statistics so far (dict)
 *   result()        mech_simulate's dict of everything so far
 *
 * y: the full state (q, q') (2 nq), also for formulations that integrate other
 * variables.  status: 0 the run goes on, 1 it ended (tf or a terminal event), < 0 it
 * failed (its message in result()).  An exception of the user's code or Ctrl-C during
 * a piece is held (result()["raised"] / ["interrupted"]) with what was computed, as in
 * mech_simulate.  The GIL is released during every piece unless Python runs per step;
 * a piece runs at most once at a time per object (RuntimeError otherwise).  mbint's own
 * methods run through the driver's piecewise entry points, the SUNDIALS ones through
 * the adapters' (sundials.h "Piecewise runs"). */
#include "simulate_py.h"
#define NO_IMPORT_ARRAY
#define PY_ARRAY_UNIQUE_SYMBOL MBINT_ARRAY_API
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#include <numpy/arrayobject.h>
#include <string.h>
#include "status.h"
#include "sundials.h"

typedef struct stepper_obj {
    PyObject_HEAD
    mech_session *S;        /* a mechanism's session (never moves: pointers into itself), */
    ode_session *O;         /* or an ODE's (_core.OdeStepper): one of the two */
    run_ctx *r;             /* the session's run, arguments and problem */
    run_args *ra;
    const mb_problem *p;
    mb_driver_state *st;    /* the driver's piecewise run, */
    mb_sundials_state *sun; /* or a SUNDIALS method's (one of the two) */
    PyObject *args, *kw;    /* the constructor's arguments: the session borrows from them
                             * (the events, the method's name, the handle's capsule) */
    double *y;              /* n: the formulation's state at the last stop */
    int busy;
    /* the arguments and result of the current piece */
    double t_arg;
    ptrdiff_t row;
    double value;
    int rc;
} stepper_obj;

/* ---- the piecewise run: the driver's or a SUNDIALS method's ---- */

static int pw_step(stepper_obj *o)
{
    return o->sun ? mb_sundials_step(o->sun) : mb_driver_step(o->st);
}

static int pw_advance(stepper_obj *o, double t, double *y)
{
    return o->sun ? mb_sundials_advance(o->sun, t, y) : mb_driver_advance(o->st, t, y);
}

static int pw_restart_at(stepper_obj *o, double t, const double *y)
{
    return o->sun ? mb_sundials_restart_at(o->sun, t, y) : mb_driver_restart_at(o->st, t, y);
}

static double pw_t(const stepper_obj *o)
{
    return o->sun ? mb_sundials_t(o->sun) : mb_driver_t(o->st);
}

static const double *pw_y(const stepper_obj *o)
{
    return o->sun ? mb_sundials_y(o->sun) : mb_driver_y(o->st);
}

static int pw_status(const stepper_obj *o)
{
    return o->sun ? mb_sundials_status(o->sun) : mb_driver_status(o->st);
}

/* ---- pieces (run_piece: GIL released unless Python runs per step) ---- */

static int piece_open(run_ctx *r, void *arg)
{
    stepper_obj *o = arg;
    const double *y0 = PyArray_DATA((PyArrayObject *)r->y0);
    if (r->m)
        o->rc = mb_driver_open(&o->st, r->m, o->p, o->ra->t0, o->ra->tf, y0, &r->o, &r->res);
    else  /* a SUNDIALS method: IDA on the formulation's residual view when r->dae */
        o->rc = mb_sundials_open(&o->sun, r->name, o->p, r->dae, o->ra->t0, o->ra->tf, y0,
                                 &r->o, &r->res);
    if (o->rc == MB_OK)
        memcpy(o->y, y0, (size_t)r->n * sizeof(double));
    return o->rc;
}

static int piece_step(run_ctx *r, void *arg)
{
    stepper_obj *o = arg;
    o->rc = pw_step(o);
    memcpy(o->y, pw_y(o), (size_t)r->n * sizeof(double));
    return o->rc;
}

static int piece_advance(run_ctx *r, void *arg)
{
    stepper_obj *o = arg;
    o->rc = pw_advance(o, o->t_arg, o->y);
    if (o->rc != MB_OK)  /* stopped short of t: the run's own point */
        memcpy(o->y, pw_y(o), (size_t)r->n * sizeof(double));
    return o->rc;
}

/* the force changes at t (inside the last step or at its end): the state at t, the new
 * value, the formulation's cache dropped, the method restarted there */
static int piece_set_force(run_ctx *r, void *arg)
{
    stepper_obj *o = arg;
    (void)r;
    int rc = pw_advance(o, o->t_arg, o->y);
    if (rc == MB_OK) {
        if (o->row >= 0) {
            mech_handle *mh = o->S->s.mh;
            if (mh->spatial)
                mh->sforces[o->row].fa.c0 = o->value;
            else
                mh->forces[o->row].fa.c0 = o->value;
            mb_form_changed(&o->S->F);
        }
        rc = pw_restart_at(o, o->t_arg, o->y);
    }
    o->rc = rc;
    return rc;
}

/* run one piece; 0, or -1 with an exception (busy, memory) */
static int run_one(stepper_obj *o, run_piece_fn piece)
{
    if (o->busy) {
        PyErr_SetString(PyExc_RuntimeError, "Simulator: a step is already running on this "
                        "simulator (another thread).");
        return -1;
    }
    o->busy = 1;
    int rc = run_piece(o->r, o->ra, piece, o);
    o->busy = 0;
    return rc;
}

/* (status, t, state) after a piece: the full state (q, q') of a mechanism, y of an ODE */
static PyObject *stop_tuple(stepper_obj *o, double t)
{
    mech_session *S = o->S;
    mb_formulation *F = S ? &S->F : NULL;
    ptrdiff_t nq = F ? F->nq : 0;
    npy_intp d = (npy_intp)(F ? 2 * nq : o->r->n);
    PyObject *y = PyArray_SimpleNew(1, &d, NPY_DOUBLE);
    if (!y)
        return NULL;
    double *q = PyArray_DATA((PyArrayObject *)y);
    if (!F) {
        memcpy(q, o->y, (size_t)d * sizeof(double));
    } else if (mb_form_maps_state(F)) {
        if (mb_form_full(F, t, o->y, q, q + nq) != MB_OK) {
            for (ptrdiff_t i = 0; i < 2 * nq; i++) q[i] = NAN;
            if (PyErr_Occurred()) {
                Py_DECREF(y);
                return NULL;
            }
        }
    } else {
        memcpy(q, o->y, (size_t)(2 * nq) * sizeof(double));
    }
    /* ended: only once the caller is at the run's last point (advance interpolates
     * inside the last step before that) */
    int status = o->rc < 0 ? o->rc : pw_status(o);
    if (status == MB_TERMINATED && t != pw_t(o))
        status = MB_OK;
    return Py_BuildValue("idN", status, t, y);
}

/* ---- methods ---- */

/* the driver's piecewise run on the session's problem (common to both types); the
 * object, or NULL with the exception (o released) */
static PyObject *stepper_start(stepper_obj *o)
{
    run_ctx *r = o->r;
    if (r->o.t_eval) {
        PyErr_SetString(PyExc_ValueError, "Simulator: t_eval is not taken (advance(t) gives "
                        "the state at t).");
        Py_DECREF(o);
        return NULL;
    }
    o->y = PyMem_Malloc((size_t)(r->n > 0 ? r->n : 1) * sizeof(double));
    if (!o->y) {
        Py_DECREF(o);
        return PyErr_NoMemory();
    }
    if (run_one(o, piece_open)) {
        Py_DECREF(o);
        return NULL;
    }
    if (o->rc != MB_OK && !r->interrupt && !r->raised) {
        PyErr_Format(PyExc_ValueError, "Simulator: %s (status %d)", r->res.message, o->rc);
        Py_DECREF(o);
        return NULL;
    }
    return (PyObject *)o;
}

/* the object holding the constructor's arguments (the session borrows from them) */
static stepper_obj *stepper_alloc(PyTypeObject *type, PyObject *args, PyObject *kw)
{
    stepper_obj *o = (stepper_obj *)type->tp_alloc(type, 0);
    if (!o)
        return NULL;
    o->args = args;
    o->kw = kw;
    Py_INCREF(args);
    Py_XINCREF(kw);
    return o;
}

/* the session (a mechanism's or an ODE's) opened from the constructor's arguments, then
 * the piecewise run on it */
static PyObject *stepper_new_of(PyTypeObject *type, PyObject *args, PyObject *kw, int ode)
{
    stepper_obj *o = stepper_alloc(type, args, kw);
    if (!o)
        return NULL;
    int bad;
    if (ode) {
        bad = !(o->O = PyMem_Malloc(sizeof *o->O)) ? (PyErr_NoMemory(), -1)
                                                  : ode_session_open(o->O, args, kw);
    } else {
        bad = !(o->S = PyMem_Malloc(sizeof *o->S)) ? (PyErr_NoMemory(), -1)
                                                  : mech_session_open(o->S, args, kw);
    }
    if (bad) {
        Py_DECREF(o);  /* dealloc closes the session */
        return NULL;
    }
    o->r = ode ? &o->O->r : &o->S->r;
    o->ra = ode ? &o->O->ra : &o->S->ra;
    o->p = ode ? &o->O->p : &o->S->p;
    return stepper_start(o);
}

static PyObject *mech_stepper_new(PyTypeObject *type, PyObject *args, PyObject *kw)
{
    return stepper_new_of(type, args, kw, 0);
}

static PyObject *ode_stepper_new(PyTypeObject *type, PyObject *args, PyObject *kw)
{
    return stepper_new_of(type, args, kw, 1);
}

static void stepper_dealloc(stepper_obj *o)
{
    if (o->st) mb_driver_close(o->st);
    if (o->sun) mb_sundials_close(o->sun);
    if (o->S) {
        mech_session_close(o->S);
        PyMem_Free(o->S);
    }
    if (o->O) {
        ode_session_close(o->O);
        PyMem_Free(o->O);
    }
    PyMem_Free(o->y);
    Py_XDECREF(o->args);
    Py_XDECREF(o->kw);
    Py_TYPE(o)->tp_free((PyObject *)o);
}

static PyObject *stepper_step(stepper_obj *o, PyObject *noargs)
{
    (void)noargs;
    if (run_one(o, piece_step))
        return NULL;
    return stop_tuple(o, pw_t(o));
}

static PyObject *stepper_advance(stepper_obj *o, PyObject *arg)
{
    double t = PyFloat_AsDouble(arg);
    if (t == -1.0 && PyErr_Occurred())
        return NULL;
    o->t_arg = t;
    if (run_one(o, piece_advance))
        return NULL;
    return stop_tuple(o, o->rc == MB_OK ? t : pw_t(o));
}

static PyObject *stepper_set_force(stepper_obj *o, PyObject *args)
{
    Py_ssize_t row;
    double value, t;
    if (!PyArg_ParseTuple(args, "ndd", &row, &value, &t))
        return NULL;
    if (!o->S) {
        PyErr_SetString(PyExc_ValueError, "set_force: an ODE has no forces.");
        return NULL;
    }
    mech_handle *mh = o->S->s.mh;
    int input = 0;  /* a force element with a time function of its own (mb_timefn fa) */
    if (mh->planar && row >= 0 && row < mh->pm.nf)
        input = mh->forces[row].type == MB_FORCE_GENERALIZED ||
                mh->forces[row].type == MB_FORCE_TSDA;
    else if (mh->spatial && row >= 0 && row < mh->sm.nf)
        input = mh->sforces[row].type == MB_SF_TSDA || mh->sforces[row].type == MB_SF_RSDA;
    if (!input) {
        PyErr_Format(PyExc_ValueError, "set_force: row %zd is not a generalized force or "
                     "the actuator of a spring-damper.", row);
        return NULL;
    }
    if (o->S->F.kind != MB_FORM_INDEX1 && mb_form_changed(&o->S->F) != MB_OK) {
        PyErr_Format(PyExc_ValueError, "set_input: formulation '%s' keeps evaluations of the "
                     "forces that an input change cannot reach; use 'index1' or a DAE "
                     "formulation.", mb_form_name(o->S->F.kind));
        return NULL;
    }
    o->row = row;
    o->value = value;
    o->t_arg = t;
    if (run_one(o, piece_set_force))
        return NULL;
    return PyLong_FromLong(o->rc);
}

/* the problem changed at t (a parameter the user's right-hand side reads): as
 * set_force without a force */
static PyObject *stepper_restart(stepper_obj *o, PyObject *arg)
{
    double t = PyFloat_AsDouble(arg);
    if (t == -1.0 && PyErr_Occurred())
        return NULL;
    o->row = -1;
    o->t_arg = t;
    if (run_one(o, piece_set_force))
        return NULL;
    return PyLong_FromLong(o->rc);
}

static PyObject *stepper_stats(stepper_obj *o, PyObject *noargs)
{
    (void)noargs;
    if (o->sun)
        mb_sundials_sync(o->sun);
    const mb_stats *s = &o->r->res.stats;
    return Py_BuildValue("{sl,sl,sl,sl,sl,sl,sl,sd}", "nsteps", (long)s->nsteps, "nfev",
                         (long)s->nfev, "njev", (long)s->njev, "nlu", (long)s->nlu, "nreject",
                         (long)s->nreject, "nfail", (long)s->nfail, "nrestart",
                         (long)s->nrestart, "t", pw_t(o));
}

static PyObject *stepper_result(stepper_obj *o, PyObject *noargs)
{
    (void)noargs;
    if (o->sun)
        mb_sundials_sync(o->sun);
    return o->S ? mech_session_result(o->S) : result_dict_of_run(o->r);
}

static PyMethodDef stepper_methods[] = {
    {"step", (PyCFunction)stepper_step, METH_NOARGS, "step() -> (status, t, y)"},
    {"advance", (PyCFunction)stepper_advance, METH_O, "advance(t) -> (status, t, y)"},
    {"set_force", (PyCFunction)stepper_set_force, METH_VARARGS,
     "set_force(row, value, t) -> status"},
    {"restart", (PyCFunction)stepper_restart, METH_O, "restart(t) -> status"},
    {"stats", (PyCFunction)stepper_stats, METH_NOARGS, "stats() -> dict"},
    {"result", (PyCFunction)stepper_result, METH_NOARGS, "result() -> dict (mech_simulate's)"},
    {NULL, NULL, 0, NULL}};

static PyTypeObject mech_stepper_type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "mbint._core.MechStepper",
    .tp_basicsize = sizeof(stepper_obj),
    .tp_dealloc = (destructor)stepper_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "MechStepper(handle, method, t0, tf, y0, atol, rtol, **mech_simulate keywords):\n"
              "a run of mech_simulate in pieces (csrc/python/simulator_py.c).",
    .tp_methods = stepper_methods,
    .tp_new = mech_stepper_new,
};

static PyTypeObject ode_stepper_type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "mbint._core.OdeStepper",
    .tp_basicsize = sizeof(stepper_obj),
    .tp_dealloc = (destructor)stepper_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "OdeStepper(method, fun, t0, tf, y0, atol, rtol, **solve keywords):\n"
              "a run of _core.solve in pieces (csrc/python/simulator_py.c).",
    .tp_methods = stepper_methods,
    .tp_new = ode_stepper_new,
};

static int add_type(PyObject *mod, PyTypeObject *t, const char *name)
{
    if (PyType_Ready(t) < 0)
        return -1;
    Py_INCREF(t);
    if (PyModule_AddObject(mod, name, (PyObject *)t) < 0) {
        Py_DECREF(t);
        return -1;
    }
    return 0;
}

int mech_stepper_add_type(PyObject *mod)
{
    return add_type(mod, &mech_stepper_type, "MechStepper") ||
           add_type(mod, &ode_stepper_type, "OdeStepper") ? -1 : 0;
}
