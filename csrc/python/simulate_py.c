/* _core.mech_simulate: one path for every formulation of a mechanism (mbs/formulation.h)
 *
 *   open the formulation -> its SUNDIALS settings -> the consistent initial state ->
 *   the run (options.h; events see full states where the formulation maps them) ->
 *   the full state, q'' and lambda at the output points -> the result dict
 *
 * and _core.formulations, the table of formulations by name and code. */
#include "simulate_py.h"
#define NO_IMPORT_ARRAY
#define PY_ARRAY_UNIQUE_SYMBOL MBINT_ARRAY_API
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#include <numpy/arrayobject.h>
#include <math.h>
#include <string.h>
#include "convert.h"
#include "formulation.h"
#include "sens_mech.h"
#include "status.h"

const char mech_formulations_doc[] =
"formulations() -> dict\n--\n\n"
"The formulations of mech_simulate by name: their codes (mbs/formulations.def).";

PyObject *mech_formulations(PyObject *self, PyObject *noargs)
{
    (void)self; (void)noargs;
    PyObject *d = PyDict_New();
    for (int k = 0; d && k < MB_FORM_COUNT; k++)
        if (mb_form_name(k) && dict_set(d, mb_form_name(k), PyLong_FromLong(k)))
            Py_CLEAR(d);
    return d;
}

const char mech_simulate_doc[] =
"mech_simulate(handle, method, t0, tf, y0, atol, rtol, ..., formulation=0, alpha=0,\n"
"              beta=0, project=False, proj_tol=0, proj_max_iter=0, switching=None,\n"
"              contact_switching=False, independent=None, linalg=-1, tree=None,\n"
"              sens=None) -> dict\n"
"--\n\n"
"Run a registered method on a formulation of the mechanism (codes: formulations()),\n"
"with the options of _core.solve (validated in mbint/mbs/simulate.py).  y0 = (q0, qd0);\n"
"atol over (q, qd) (2 nq), or over the DAE state (q, v, lambda[, mu]) for the DAE\n"
"formulations.  Returns _core.solve's dict with y and y_events of the integrated state\n"
"(full (q, qd) for the state-space formulation, its own y in 'ss_y' with its log),\n"
"plus 'qdd' (nq, nt) and 'lam' (nc, nt) at the output points, component-major (NaN\n"
"where they cannot be computed), 'y0' (the initial state integrated) and\n"
"'linear_algebra'.\n"
"alpha, beta: Baumgarte terms (index1); project: project onto the constraints after every\n"
"accepted step; proj_tol, proj_max_iter: its tolerance and iterations (the state space:\n"
"those of its Newton iteration); independent: coordinates the state space keeps\n"
"independent where it can (None: those of the stiff force elements; \"pivoting\": the\n"
"paper's full pivoting alone); linalg: the index-1 linear algebra (0 auto, 1 dense, 2 sparse;\n"
"-1: the handle's).  switching: one int per event (nonzero: a switching event, the run\n"
"restarts at its roots).  contact_switching: the contact gaps of a planar model (in C)\n"
"become switching events after the user's (LLM paper section 3).  tree: the capsule of\n"
"the model's joint tree (_core.jtree_new with body=) for formulation=\"joint\".\n"
"sens: None, or (params, s0, block_newton, forward) for forward parameter sensitivities\n"
"(sens_mech.h): params a list of (table, row, column, scale) (table -1: an initial\n"
"condition only), s0 (np x 2 nq) the initial sensitivities of (q, q'); the result then\n"
"has y of the base state and sens_y (n, np, nt), sens_q, sens_qd (nq, np, nt).";

/* the contact gap functions of a planar model as events (LLM eqs 17-19) */
static int contact_events(double t, const double *y, double *g, void *ctx)
{
    (void)t;
    return mb_planar_contact_gaps(ctx, y, g);
}

static int events_at_full(double t, const double *y, double *g, void *c)
{
    full_events *e = c;
    int rc = mb_form_full(e->F, t, y, e->y, e->y + e->F->nq);
    if (rc != MB_OK)
        return rc > 0 ? MB_ERR_EVENT_FAIL : rc;
    return e->events(t, e->y, g, e->ctx);
}

/* what fails before the run, as exc (unless a callback's own exception is set) */
static void set_error(PyObject *exc, int rc, const char *prefix, const char *msg)
{
    if (PyErr_Occurred())
        return;
    if (rc == MB_ERR_MEM)
        PyErr_NoMemory();
    else
        PyErr_Format(exc, "%s%s (status %d: %s)", prefix, msg, rc, mb_status_str(rc));
}

/* the independent= keyword (None, "pivoting" or a sequence of coordinate indices); 0 or
 * -1 */
static int parse_independent(PyObject *o, sim_args *s)
{
    if (o == Py_None)
        return 0;
    if (PyUnicode_Check(o)) {
        if (PyUnicode_CompareWithASCIIString(o, "pivoting") != 0) {
            PyErr_SetString(PyExc_ValueError, "independent: a sequence of coordinates, "
                            "\"pivoting\" or None.");
            return -1;
        }
        s->fo.pivoting = 1;
        return 0;
    }
    PyArrayObject *a = (PyArrayObject *)PyArray_FROMANY(o, NPY_INT, 1, 1, NPY_ARRAY_CARRAY);
    if (!a)
        return -1;
    ptrdiff_t n = PyArray_SIZE(a);
    s->independent = PyMem_Malloc((size_t)(n > 0 ? n : 1) * sizeof(int));
    if (s->independent)
        memcpy(s->independent, PyArray_DATA(a), (size_t)n * sizeof(int));
    Py_DECREF(a);
    if (!s->independent) {
        PyErr_NoMemory();
        return -1;
    }
    s->fo.prefer = s->independent;
    s->fo.nprefer = n;
    return 0;
}

static int parse(PyObject *a, PyObject *kw, run_args *ra, sim_args *s)
{
    static char *kwlist[] = {"handle", "method", "t0", "tf", "y0", "atol", "rtol", "h",
                             RUN_KW_STEPS, RUN_KW_CONTROL, RUN_KW_OUTPUT, "formulation", "alpha",
                             "beta", "project", "proj_tol", "proj_max_iter", "switching",
                             "contact_switching", "independent", "linalg", "tree", "sens", NULL};
    PyObject *ho, *indep = Py_None, *tree = Py_None, *sens = Py_None;
    memset(s, 0, sizeof *s);
    s->linalg = -1;
    run_args_init(ra);
    if (!PyArg_ParseTupleAndKeywords(
            a, kw, "OsddOOO|d" RUN_FMT_STEPS RUN_FMT_CONTROL RUN_FMT_OUTPUT "iddpdiOpOiOO", kwlist,
            &ho, &s->method, &ra->t0, &ra->tf, &ra->y0, &ra->atol, &ra->rtol, &ra->h,
            RUN_ADDR_STEPS(*ra), RUN_ADDR_CONTROL(*ra), RUN_ADDR_OUTPUT(*ra), &s->kind,
            &s->fo.alpha, &s->fo.beta, &s->fo.project, &s->fo.proj_tol, &s->fo.proj_max_iter,
            &ra->switching, &s->contact_switching, &indep, &s->linalg, &tree, &sens))
        return -1;
    if (tree != Py_None) {  /* formulation="joint": the model's kinematic tree (joint_py.c) */
        if (!(s->fo.tree = jtree_get(tree)))
            return -1;
        s->fo.tree_body = jtree_body(tree);
        Py_INCREF(tree);
        s->tree = tree;
    }
    if (!(s->mh = mech_handle_get(ho)))
        return -1;
    if (!mb_form_name(s->kind)) {
        PyErr_Format(PyExc_ValueError, "formulation: unknown code %d.", s->kind);
        return -1;
    }
    if (s->linalg < -1 || s->linalg > 2) {
        PyErr_Format(PyExc_ValueError, "linalg: unknown code %d.", s->linalg);
        return -1;
    }
    s->fo.linalg = s->linalg < 0 ? s->mh->linalg : s->linalg;
    if (mech_sens_parse(s->mh, sens, s->mh->nq, &s->sens))
        return -1;
    return parse_independent(indep, s);
}

/* the run's method and its settings on F: a SUNDIALS method must run on it (IDA with the
 * formulation's settings in *dae), and runs its own step loop (no projection) */
static int choose_method(run_ctx *r, mb_formulation *F, const sim_args *s, mb_dae_options *dae)
{
    if (run_begin(r, s->method))
        return -1;
    r->python = s->mh->python;
    if (r->m)
        return 0;
    mb_form_ida ida;
    int rc = mb_form_sundials(F, s->method, &ida);
    if (rc != MB_OK) {
        PyErr_SetString(PyExc_ValueError, F->msg);
        return -1;
    }
    if (s->fo.project) {
        PyErr_Format(PyExc_ValueError, "project: SUNDIALS method '%s' runs its own step loop "
                     "and has no projection after accepted steps.", s->method);
        return -1;
    }
    if (ida.algebraic) {  /* IDA on the residual view, from a consistent y0, y'(t0) */
        *dae = (mb_dae_options){ida.yp0, ida.algebraic, 0, ida.jac, ida.suppress_alg};
        r->dae = dae;
    }
    return 0;
}

/* y0 of the formulation from (q0, q0') and the tolerances that go with it; run_prepare;
 * the events at full states where the formulation maps them */
static int start(run_ctx *r, mb_formulation *F, const sim_args *s, run_args *ra, full_events *ev,
                 PyObject **y0f, PyObject **atol_in)
{
    ptrdiff_t nq = F->nq;
    int dae = F->kind >= MB_FORM_INDEX1_DAE && F->kind <= MB_FORM_GGL;
    PyObject *yu = as_vec_object(ra->y0, 2 * nq, "y0");
    PyObject *au = yu ? as_vec_object(ra->atol, dae ? F->n : 2 * nq, "atol") : NULL;
    npy_intp dn = (npy_intp)F->n;
    *y0f = au ? PyArray_SimpleNew(1, &dn, NPY_DOUBLE) : NULL;
    PyObject *atol_y = NULL;
    int rc = -1;
    if (!*y0f)
        goto done;
    const double *yv = PyArray_DATA((PyArrayObject *)yu), *atol = NULL;
    PyThreadState *ts = s->mh->python ? NULL : PyEval_SaveThread();
    int st = mb_form_initial(F, ra->t0, yv, yv + nq, PyArray_DATA((PyArrayObject *)au),
                             PyArray_DATA((PyArrayObject *)*y0f), &atol);
    if (ts)
        PyEval_RestoreThread(ts);
    if (st != MB_OK) {
        char prefix[96];
        snprintf(prefix, sizeof prefix, "formulation='%s' at t0 = %g: ", mb_form_name(F->kind),
                 ra->t0);
        set_error(PyExc_ValueError, st, prefix, F->msg);
        goto done;
    }
    if (s->sens) {  /* the augmented state (y, s_0, ..) of the sensitivities (sens_mech.h) */
        PyObject *Y0 = NULL;
        if (mech_sens_start(s->sens, F, s->method, r->m != NULL, ra->t0, yv, yv + nq,
                            PyArray_DATA((PyArrayObject *)au),
                            PyArray_DATA((PyArrayObject *)*y0f), atol, &Y0, &atol_y)) {
            Py_XDECREF(Y0);
            goto done;
        }
        ra->y0 = Y0;
        ra->atol = atol_y;
        st = run_prepare(r, ra, PyArray_SIZE((PyArrayObject *)Y0), NULL);
        ra->y0 = *y0f;
        Py_DECREF(Y0);
        if (st)
            goto done;
    } else {
        if (!(atol_y = vec_from(atol, F->n)))
            goto done;
        ra->y0 = *y0f;
        ra->atol = atol_y;
        if (run_prepare(r, ra, F->n, NULL))
            goto done;
        r->o.atol = atol;  /* the formulation's own: the state space rewrites it in place */
    }
    if (mb_form_maps_state(F) && r->o.n_events > 0) {
        if (!(ev->y = PyMem_Malloc((size_t)(2 * nq) * sizeof(double)))) {
            PyErr_NoMemory();
            goto done;
        }
        *ev = (full_events){F, r->o.events, r->o.event_ctx, ev->y};
        r->o.events = events_at_full;
        r->o.event_ctx = ev;
        r->user.n = 2 * nq;  /* the user's g(t, q, qd) sees the full (q, q'), not y */
    }
    rc = 0;
    *atol_in = au;  /* the formulation's atol may be au's own data: kept until close */
    au = NULL;
done:
    Py_XDECREF(yu);
    Py_XDECREF(au);
    Py_XDECREF(atol_y);
    return rc;
}

/* the full state (when the formulation integrates other variables: *yf, time-major m x
 * 2 nq), q'' and lambda at the m output points (t, y) of the run, component-major (*qdd
 * nq x m, *lam nc x m: the layout of Trajectory.qdd and .lam, taken without a copy); a
 * point where they cannot be computed is NaN; 0, or -1 when a callback raised or memory
 * ran out */
/* The outputs of a run at its m points: the full state (the formulations that integrate
 * other variables), q'' and lambda.  want_acc 0: q'' and lambda are not computed and *qdd,
 * *lam are None (the joint formulation runs its ABA and solves a saddle-point system of the
 * body coordinates for them at each point, as much as the integration costs on a short
 * run: mbint.simulate leaves them to Trajectory.qdd / .lam, which solve the body
 * coordinates' index-1 system on first use). */
static int outputs(mb_formulation *F, int python, ptrdiff_t m, const double *t, const double *y,
                   PyObject **yf, PyObject **qdd, PyObject **lam,
                   void (*at)(double t, void *ctx), void *at_ctx, int want_acc)
{
    ptrdiff_t nq = F->nq, nc = F->nc, n = F->n;
    int full = mb_form_maps_state(F);
    npy_intp d0[2] = {(npy_intp)m, (npy_intp)(2 * nq)}, d1[2] = {(npy_intp)nq, (npy_intp)m},
             d2[2] = {(npy_intp)nc, (npy_intp)m};
    *yf = full ? PyArray_SimpleNew(2, d0, NPY_DOUBLE) : NULL;
    if (want_acc) {
        *qdd = PyArray_SimpleNew(2, d1, NPY_DOUBLE);
        *lam = PyArray_SimpleNew(2, d2, NPY_DOUBLE);
    } else {
        Py_INCREF(Py_None);
        *qdd = Py_None;
        Py_INCREF(Py_None);
        *lam = Py_None;
    }
    if ((full && !*yf) || !*qdd || !*lam)
        return -1;
    double *row = PyMem_Malloc((size_t)(nq + nc + 1) * sizeof *row);  /* one point's q'', lambda */
    if (!row) {
        PyErr_NoMemory();
        return -1;
    }
    double *Q = full ? PyArray_DATA((PyArrayObject *)*yf) : NULL;
    double *A = want_acc ? PyArray_DATA((PyArrayObject *)*qdd) : NULL;
    double *L = want_acc ? PyArray_DATA((PyArrayObject *)*lam) : NULL;
    int failed = 0;
    PyThreadState *ts = python ? NULL : PyEval_SaveThread();
    for (ptrdiff_t i = 0; i < m && !failed; i++) {
        double *q = Q ? Q + i * 2 * nq : NULL;
        if (at)
            at(t[i], at_ctx);
        int rc = mb_form_outputs(F, t[i], y + i * n, q, q ? q + nq : NULL, A ? row : NULL,
                                 L ? row + nq : NULL);
        if (rc != MB_OK) {
            for (ptrdiff_t c = 0; q && c < 2 * nq; c++) q[c] = NAN;
            for (ptrdiff_t c = 0; c < nq + nc; c++) row[c] = NAN;
            failed = rc == MB_ERR_CALLBACK;
        }
        for (ptrdiff_t c = 0; A && c < nq; c++) A[c * m + i] = row[c];
        for (ptrdiff_t c = 0; L && c < nc; c++) L[c * m + i] = row[nq + c];
    }
    if (ts)
        PyEval_RestoreThread(ts);
    PyMem_Free(row);
    if (failed && PyErr_Occurred())
        return -1;
    PyErr_Clear();
    return 0;
}

/* the event states in full coordinates (the state space) into out["y_events"]; 0 or -1 */
static int full_event_states(mb_formulation *F, const mb_result *res, PyObject *out)
{
    ptrdiff_t nq = F->nq;
    PyObject *ye = PyList_New(res->n_events);
    if (!ye)
        return -1;
    for (ptrdiff_t i = 0; i < res->n_events; i++) {
        npy_intp de[2] = {(npy_intp)res->ev_count[i], (npy_intp)(2 * nq)};
        PyObject *a = PyArray_SimpleNew(2, de, NPY_DOUBLE);
        if (!a) {
            Py_DECREF(ye);
            return -1;
        }
        double *q = PyArray_DATA((PyArrayObject *)a);
        for (ptrdiff_t k = 0; k < res->ev_count[i]; k++, q += 2 * nq)
            if (mb_form_outputs(F, res->ev_t[i][k], res->ev_y[i] + k * F->n, q, q + nq, NULL,
                                NULL) != MB_OK)
                for (ptrdiff_t c = 0; c < 2 * nq; c++) q[c] = NAN;
        PyErr_Clear();
        PyList_SET_ITEM(ye, i, a);
    }
    return dict_set(out, "y_events", ye);
}

/* the result dict: the run's, the outputs, the formulation's extras */
static PyObject *result(run_ctx *r, mb_formulation *F, PyObject *yf, PyObject *qdd, PyObject *lam)
{
    mb_result *res = &r->res;
    const char *why = mb_form_why(F, res->status);
    if (why) {  /* the formulation says why the run failed */
        size_t len = strlen(res->message);
        snprintf(res->message + len, sizeof res->message - len, "%s%s", len ? " " : "", why);
    }
    PyObject *out = result_dict_of_run(r);
    if (!out)
        return NULL;
    int bad = PyDict_SetItemString(out, "qdd", qdd) || PyDict_SetItemString(out, "lam", lam) ||
              PyDict_SetItemString(out, "y0", r->y0) ||
              dict_set(out, "linear_algebra", PyUnicode_FromString(F->sparse ? "sparse"
                                                                              : "dense"));
    if (!bad && yf)  /* the integrated state under ss_y, the full one under y */
        bad = PyDict_SetItemString(out, "ss_y", PyDict_GetItemString(out, "y")) ||
              PyDict_SetItemString(out, "y", yf) || full_event_states(F, res, out);
    if (!bad && F->kind == MB_FORM_STATE_SPACE)
        bad = mech_ss_export(out, F->impl);
    if (bad)
        Py_CLEAR(out);
    return out;
}

int mech_session_open(mech_session *S, PyObject *a, PyObject *kw)
{
    memset(S, 0, sizeof *S);
    run_args *ra = &S->ra;
    sim_args *s = &S->s;
    if (parse(a, kw, ra, s))
        return -1;
    mech_handle *mh = s->mh;
    int rc = mb_form_open(&S->F, s->kind, &mh->mech, &s->fo);
    if (rc != MB_OK) {
        char prefix[64];
        snprintf(prefix, sizeof prefix, "formulation='%s': ", mb_form_name(s->kind));
        /* what the arguments ask of this mechanism (a sparse solver it has no kernels
         * for...) is the caller's to change */
        int caller = rc == MB_ERR_ILL_INPUT || rc == MB_ERR_NOT_SUPPORTED;
        set_error(caller ? PyExc_ValueError : PyExc_RuntimeError, rc, prefix, S->F.msg);
        return -1;
    }
    if (choose_method(&S->r, &S->F, s, &S->dae))
        return -1;
    if (s->contact_switching && mh->planar && mh->ncontact > 0 && S->r.m) {
        S->r.n_extra = mh->ncontact;
        S->r.extra = contact_events;
        S->r.extra_ctx = &mh->pm;
    }
    if (start(&S->r, &S->F, s, ra, &S->ev, &S->y0f, &S->atol_in))
        return -1;
    mb_form_problem(&S->F, &S->p);
    if (s->sens)
        S->p = *mech_sens_problem(s->sens);
    return 0;
}

PyObject *mech_session_result(mech_session *S)
{
    return mech_session_result_at(S, NULL, NULL);
}

static PyObject *session_result(mech_session *S, void (*at)(double t, void *ctx), void *ctx,
                                int want_acc)
{
    PyObject *out = NULL, *yf = NULL, *qdd = NULL, *lam = NULL;
    run_ctx *r = &S->r;
    if (!outputs(&S->F, S->s.mh->python, r->res.nt, r->res.t, r->res.y, &yf, &qdd, &lam, at,
                 ctx, want_acc))
        out = result(r, &S->F, yf, qdd, lam);
    Py_XDECREF(yf);
    Py_XDECREF(qdd);
    Py_XDECREF(lam);
    return out;
}

PyObject *mech_session_result_at(mech_session *S, void (*at)(double t, void *ctx), void *ctx)
{
    return session_result(S, at, ctx, 1);
}

void mech_session_close(mech_session *S)
{
    run_free(&S->r);
    mb_form_close(&S->F);
    PyMem_Free(S->s.independent);
    Py_CLEAR(S->s.tree);
    mech_sens_free(S->s.sens);
    S->s.sens = NULL;
    PyMem_Free(S->ev.y);
    Py_CLEAR(S->y0f);
    Py_CLEAR(S->atol_in);
    S->s.independent = NULL;
    S->ev.y = NULL;
}

PyObject *mech_simulate(PyObject *self, PyObject *a, PyObject *kw)
{
    (void)self;
    mech_session *S = PyMem_Malloc(sizeof *S);
    if (!S)
        return PyErr_NoMemory();
    PyObject *out = NULL;
    /* a whole run of mbint.simulate: the joint formulation's q'' and multipliers on demand */
    if (!mech_session_open(S, a, kw) && !run_execute(&S->r, &S->p, &S->ra) &&
        (!S->s.sens || !mech_sens_split(S->s.sens, &S->r.res)))
        out = session_result(S, NULL, NULL, S->F.kind != MB_FORM_JOINT);
    if (out && S->s.sens && mech_sens_export(S->s.sens, out, S->y0f))
        Py_CLEAR(out);
    mech_session_close(S);
    PyMem_Free(S);
    return out;
}
