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
#include <math.h>
#include <string.h>
#include "status.h"
#include "sundials.h"
#include "project.h"

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
    /* the inputs' changes so far (set_force), for the outputs of result() */
    struct input_change *hist;
    ptrdiff_t nhist, cap;
    /* the arguments and result of the current piece */
    double t_arg;
    ptrdiff_t row;
    double value;
    int rc;
} stepper_obj;

/* ---- the inputs: a row's value, and the tables as they were at a time ---- */

typedef struct input_change {
    double t;               /* the change took effect at t */
    ptrdiff_t row;          /* of the force table, or of the joint (constraint) table */
    int driver;             /* a driver's target, not a force */
    double before, after;   /* c0 */
} input_change;

/* c0 of the time function of a force element (an actuator, a generalized force) or, with
 * driver, of a driver (planar joint row, spatial constraint primitive) */
static double *input_slot(mech_handle *mh, ptrdiff_t row, int driver)
{
    if (driver)
        return mh->spatial ? &mh->scons[row].f.c0 : &mh->joints[row].f.c0;
    return mh->spatial ? &mh->sforces[row].fa.c0 : &mh->forces[row].fa.c0;
}


/* the force table as it was at time t (at(t) of mech_session_result_at): the changes
 * after t undone, last first, then those at or before t applied in order (a point at
 * the time of a change holds the state the new value acts on from there) */
static void inputs_at(double t, void *ctx)
{
    stepper_obj *o = ctx;
    mech_handle *mh = o->S->s.mh;
    for (ptrdiff_t k = o->nhist - 1; k >= 0; k--)
        if (o->hist[k].t > t)
            *input_slot(mh, o->hist[k].row, o->hist[k].driver) = o->hist[k].before;
    for (ptrdiff_t k = 0; k < o->nhist; k++)
        if (o->hist[k].t <= t)
            *input_slot(mh, o->hist[k].row, o->hist[k].driver) = o->hist[k].after;
    mb_form_changed(&o->S->F);
}

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

/* y at t made consistent by the formulation from its (q, q') (mb_form_initial: the DAEs'
 * multipliers for the problem as it is now) */
static int consistent_at(mech_session *S, double t, double *y)
{
    mb_formulation *F = &S->F;
    ptrdiff_t nq = F->nq;
    double *q = malloc((size_t)(2 * nq > 0 ? 2 * nq : 1) * sizeof(double));
    if (!q)
        return MB_ERR_MEM;
    int rc = mb_form_maps_state(F) ? mb_form_full(F, t, y, q, q + nq) : MB_OK;
    if (!mb_form_maps_state(F))
        memcpy(q, y, (size_t)(2 * nq) * sizeof(double));
    const double *atol_y;
    if (rc == MB_OK)
        rc = mb_form_initial(F, t, q, q + nq, PyArray_DATA((PyArrayObject *)S->atol_in), y,
                             &atol_y);
    if (rc != MB_OK)
        snprintf(S->r.res.message, sizeof S->r.res.message, "set_input at t = %.17g: %s", t,
                 F->msg);
    free(q);
    return rc;
}

/* the force changes at t (inside the last step or at its end): the state at t, the new
 * value, the formulation's cache dropped, the method restarted there */
static int piece_set_force(run_ctx *r, void *arg)
{
    stepper_obj *o = arg;
    int rc = pw_advance(o, o->t_arg, o->y);
    mech_session *S = o->S;
    if (rc == MB_OK && o->row >= 0) {
        *input_slot(S->s.mh, o->row, 0) = o->value;
        mb_form_changed(&S->F);
        if (S->F.n > 2 * S->F.nq)  /* a DAE: its multipliers at t anew, for the new force */
            rc = consistent_at(S, o->t_arg, o->y);
    }
    if (rc == MB_OK)
        rc = pw_restart_at(o, o->t_arg, o->y);
    mb_result *res = &r->res;
    if (rc == MB_OK && res->nt > 0 && res->t[res->nt - 1] == o->t_arg)  /* the point at t */
        memcpy(res->y + (res->nt - 1) * res->n, o->y, (size_t)res->n * sizeof(double));
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
    PyMem_Free(o->hist);
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

static int piece_set_driver(run_ctx *r, void *arg);

/* The change of an input (row of the force table, or with driver of the joint/constraint
 * table) to value at t, kept in the history when it took place (result()'s outputs);
 * the status, or NULL with an exception */
static PyObject *change_input(stepper_obj *o, ptrdiff_t row, int driver, double value, double t)
{
    if (o->nhist == o->cap) {
        ptrdiff_t cap = o->cap ? 2 * o->cap : 16;
        input_change *h = PyMem_Realloc(o->hist, (size_t)cap * sizeof *h);
        if (!h)
            return PyErr_NoMemory();
        o->hist = h;
        o->cap = cap;
    }
    double *slot = input_slot(o->S->s.mh, row, driver), before = *slot;
    o->row = row;
    o->value = value;
    o->t_arg = t;
    if (run_one(o, driver ? piece_set_driver : piece_set_force))
        return NULL;
    if (*slot != before)
        o->hist[o->nhist++] = (input_change){t, row, driver, before, value};
    return PyLong_FromLong(o->rc);
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
    return change_input(o, row, 0, value, t);
}


/* A driver's target changes at t: c0 of its time function in row o->row becomes
 * o->value, the state at t is projected onto the new constraints (minimum-norm
 * corrections of q and q', project.h) and the formulation's state rebuilt from it
 * (mb_form_initial: the DAEs' multipliers too); the method restarts there, the result's
 * point at t holding the new state. */
static int piece_set_driver(run_ctx *r, void *arg)
{
    stepper_obj *o = arg;
    mech_session *S = o->S;
    mech_handle *mh = S->s.mh;
    mb_formulation *F = &S->F;
    ptrdiff_t nq = F->nq;
    int rc = pw_advance(o, o->t_arg, o->y);
    if (rc != MB_OK) {
        o->rc = rc;
        return rc;
    }
    double *q = malloc((size_t)(2 * nq > 0 ? 2 * nq : 1) * sizeof(double));
    mb_proj pr;
    memset(&pr, 0, sizeof pr);
    if (!q) {
        o->rc = r->res.status = MB_ERR_MEM;
        return MB_ERR_MEM;
    }
    memcpy(q, o->y, (size_t)(2 * nq) * sizeof(double));  /* y begins with (q, q') */
    *input_slot(mh, o->row, 1) = o->value;
    rc = mb_form_changed(F);
    if (rc == MB_OK && (rc = mb_proj_init(&pr, &mh->mech, NULL, 1)) == MB_OK &&
        (rc = mb_proj_run(&pr, o->t_arg, q, q + nq, NULL, NULL)) != MB_OK)
        snprintf(r->res.message, sizeof r->res.message, "set_input: the state at t = %.17g "
                 "cannot reach the driver's new target: %s", o->t_arg, pr.msg);
    mb_proj_free(&pr);
    if (rc == MB_OK) {
        memcpy(o->y, q, (size_t)(2 * nq) * sizeof(double));
        if (F->n > 2 * nq)
            rc = consistent_at(S, o->t_arg, o->y);
    }
    free(q);
    if (rc == MB_OK)
        rc = pw_restart_at(o, o->t_arg, o->y);
    mb_result *res = &r->res;
    if (rc == MB_OK && res->nt > 0 && res->t[res->nt - 1] == o->t_arg)
        memcpy(res->y + (res->nt - 1) * res->n, o->y, (size_t)res->n * sizeof(double));
    if (rc != MB_OK && res->status == MB_OK) {  /* the run cannot go on */
        res->status = rc;
        if (res->message[0] == '\0')
            snprintf(res->message, sizeof res->message, "%s", mb_status_str(rc));
    }
    o->rc = rc;
    return rc;
}

static PyObject *stepper_set_driver(stepper_obj *o, PyObject *args)
{
    Py_ssize_t row;
    double value, t;
    if (!PyArg_ParseTuple(args, "ndd", &row, &value, &t))
        return NULL;
    if (!o->S) {
        PyErr_SetString(PyExc_ValueError, "set_driver: an ODE has no drivers.");
        return NULL;
    }
    mech_handle *mh = o->S->s.mh;
    int driver = 0;
    if (mh->planar && row >= 0 && row < mh->pm.nj)
        driver = mh->joints[row].type == MB_JOINT_DRIVER_COORD ||
                 mh->joints[row].type == MB_JOINT_DRIVER_ANGLE;
    else if (mh->spatial && row >= 0 && row < mh->sm.ncon)  /* a primitive with f(t) */
        driver = mh->scons[row].type == MB_SC_ANGLE || mh->scons[row].type == MB_SC_DOT2 ||
                 mh->scons[row].type == MB_SC_DOT1 || mh->scons[row].type == MB_SC_DIST;
    if (!driver) {
        PyErr_Format(PyExc_ValueError, "set_driver: row %zd is not a driver (a constraint "
                     "with a time function).", row);
        return NULL;
    }
    if (mb_form_maps_state(&o->S->F)) {
        PyErr_SetString(PyExc_ValueError, "set_input: a driver's target cannot change on the "
                        "state-space formulation (its partition and cached evaluations hold "
                        "the old target); use 'index1' or a DAE formulation.");
        return NULL;
    }
    return change_input(o, row, 1, value, t);
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

/* out["violation"] = (Phi, Phi_q q' + Phi_t, Phi_q q'' - gamma), each (nc, m), at the
 * result's points with the drivers' targets each point had (the model's own kernels know
 * only its initial targets); 0 or -1 with an exception */
static int add_violation(stepper_obj *o, PyObject *out)
{
    mech_session *S = o->S;
    const mb_mech *M = &S->s.mh->mech;
    const mb_result *res = &S->r.res;
    ptrdiff_t nq = M->nq, nc = M->nc, m = res->nt, n = res->n;
    PyObject *qdd = PyDict_GetItemString(out, "qdd");  /* borrowed, (nq, m) */
    if (!qdd || !M->phi || !M->phi_q || !M->gamma) {
        PyErr_SetString(PyExc_RuntimeError, "set_driver: the violation needs q'' and the "
                        "constraint kernels.");
        return -1;
    }
    const double *A = PyArray_DATA((PyArrayObject *)qdd);
    npy_intp d[2] = {(npy_intp)nc, (npy_intp)m};
    PyObject *lv[3] = {PyArray_ZEROS(2, d, NPY_DOUBLE, 0), PyArray_ZEROS(2, d, NPY_DOUBLE, 0),
                       PyArray_ZEROS(2, d, NPY_DOUBLE, 0)};
    double *w = PyMem_Malloc((size_t)(nc * nq + 3 * nc + nq + 1) * sizeof(double));
    int rc = (lv[0] && lv[1] && lv[2] && w) ? MB_OK : MB_ERR_MEM;
    double *P = w, *ph = P + nc * nq, *pt = ph + nc, *g = pt + nc, *a = g + nc;
    double *pos = rc == MB_OK ? PyArray_DATA((PyArrayObject *)lv[0]) : NULL;
    double *vel = rc == MB_OK ? PyArray_DATA((PyArrayObject *)lv[1]) : NULL;
    double *acc = rc == MB_OK ? PyArray_DATA((PyArrayObject *)lv[2]) : NULL;
    for (ptrdiff_t i = 0; i < m && rc == MB_OK; i++) {
        double t = res->t[i];
        const double *q = res->y + i * n, *qd = q + nq;
        inputs_at(t, o);
        for (ptrdiff_t c = 0; c < nq; c++) a[c] = A[c * m + i];
        for (ptrdiff_t c = 0; c < nc; c++) pt[c] = 0.0;
        rc = M->phi(t, q, ph, M->ctx);
        if (rc == MB_OK) rc = M->phi_q(t, q, P, nc, M->ctx);
        if (rc == MB_OK && M->phi_t) rc = M->phi_t(t, q, pt, M->ctx);
        if (rc == MB_OK) rc = M->gamma(t, q, qd, g, M->ctx);
        for (ptrdiff_t r = 0; r < nc && rc == MB_OK; r++) {
            double v = pt[r], ac = -g[r];
            for (ptrdiff_t c = 0; c < nq; c++) {
                v += P[c * nc + r] * qd[c];
                ac += P[c * nc + r] * a[c];
            }
            pos[r * m + i] = ph[r];
            vel[r * m + i] = v;
            acc[r * m + i] = ac;
        }
    }
    PyMem_Free(w);
    PyObject *tup = rc == MB_OK ? Py_BuildValue("(NNN)", lv[0], lv[1], lv[2]) : NULL;
    if (!tup) {
        for (int k = 0; k < 3; k++) Py_XDECREF(lv[k]);
        if (!PyErr_Occurred())
            PyErr_Format(rc == MB_ERR_MEM ? PyExc_MemoryError : PyExc_RuntimeError,
                         "set_driver: the constraint violation failed (status %d).", rc);
        return -1;
    }
    int bad = PyDict_SetItemString(out, "violation", tup);
    Py_DECREF(tup);
    return bad;
}

static PyObject *stepper_result(stepper_obj *o, PyObject *noargs)
{
    (void)noargs;
    if (o->sun)
        mb_sundials_sync(o->sun);
    if (!o->S)
        return result_dict_of_run(o->r);
    if (o->nhist == 0)
        return mech_session_result(o->S);
    /* q'' and lambda of each point with the inputs it had; then the current ones */
    PyObject *out = mech_session_result_at(o->S, inputs_at, o);
    int drivers = 0;
    for (ptrdiff_t k = 0; k < o->nhist; k++)
        drivers |= o->hist[k].driver;
    if (out && drivers && add_violation(o, out) < 0)
        Py_CLEAR(out);
    inputs_at(INFINITY, o);
    return out;
}

static PyMethodDef stepper_methods[] = {
    {"step", (PyCFunction)stepper_step, METH_NOARGS, "step() -> (status, t, y)"},
    {"advance", (PyCFunction)stepper_advance, METH_O, "advance(t) -> (status, t, y)"},
    {"set_force", (PyCFunction)stepper_set_force, METH_VARARGS,
     "set_force(row, value, t) -> status"},
    {"set_driver", (PyCFunction)stepper_set_driver, METH_VARARGS,
     "set_driver(row, value, t) -> status"},
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
