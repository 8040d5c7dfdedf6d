/* mbint._core, multibody part: mech handles, kernel evaluation, simulate.
 *
 * A mech handle (PyCapsule "mbint.mech", struct in mech_py.h) owns an mb_mech
 * (mbs/mech.h) and what its kernels need: the parsed tables of a planar model
 * (planar_py.c; the row layout is documented in model_py.h), or the kernels of a
 * user-derived MechanicalSystem (system_py.c).
 *
 * mech_simulate builds the index-1 formulation (mbs/index1.h) or a DAE formulation
 * (mbs/dae.h: index 1, 2, 3, GGL) and runs any method with the options of _core.solve
 * (options.h); the GIL is released when no kernel and no event calls Python.  The
 * result is _core.solve's dict plus q'' and lambda at the output points. */
#include "model_py.h"
#include "mech_py.h"
#include "options.h"
#define NO_IMPORT_ARRAY
#define PY_ARRAY_UNIQUE_SYMBOL MBINT_ARRAY_API
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#include <numpy/arrayobject.h>
#include <math.h>
#include <string.h>
#include "convert.h"
#include "dae.h"
#include "index1.h"
#include "statespace.h"
#include "model.h"
#include "status.h"

/* ------------------------------------------------------------------ handle */

static void handle_release(mech_handle *h)
{
    for (int k = 0; k < S_COUNT; k++)
        Py_XDECREF(h->s[k].py);
    Py_XDECREF(h->extra);
    PyMem_Free(h->body);
    PyMem_Free(h->joints);
    PyMem_Free(h->forces);
    PyMem_Free(h->M_const);
    spatial_release(h);
    PyMem_Free(h);
}

static void handle_free(PyObject *capsule)
{
    mech_handle *h = PyCapsule_GetPointer(capsule, HANDLE_NAME);
    if (h)
        handle_release(h);
}

static mech_handle *get_handle(PyObject *o)
{
    if (!PyCapsule_IsValid(o, HANDLE_NAME)) {
        PyErr_SetString(PyExc_TypeError, "expected a mech handle (from _core.mech_planar or "
                                         "_core.mech_system).");
        return NULL;
    }
    return PyCapsule_GetPointer(o, HANDLE_NAME);
}

PyObject *new_handle_capsule(mech_handle *h)
{
    PyObject *c = PyCapsule_New(h, HANDLE_NAME, handle_free);
    if (!c)
        handle_release(h);
    return c;
}

/* ------------------------------------------------------------------ kernels */

enum {
    K_PHI, K_PHI_Q, K_PHI_T, K_GAMMA, K_MASS, K_FORCES, K_FORCES_Q, K_FORCES_QD, K_PHIQ_X_Q,
    K_PHIQT_LAM_Q, K_GAMMA_Q, K_GAMMA_QD, K_ENERGY, K_GAPS, K_ACC, K_RHS, K_JAC, K_MASS_X_Q,
    K_COUNT
};
static const struct kernel_info {
    const char *name;
    int need_qd;  /* 1: qd, 2: x of size nq, 3: lam of size nc */
} kernel_info[K_COUNT] = {
    {"phi", 0}, {"phi_q", 0}, {"phi_t", 0}, {"gamma", 1}, {"mass", 0}, {"forces", 1},
    {"forces_q", 1}, {"forces_qd", 1}, {"phiq_x_q", 2}, {"phiqT_lam_q", 3}, {"gamma_q", 1},
    {"gamma_qd", 1}, {"energy", 1}, {"contact_gaps", 0}, {"acc", 1}, {"rhs", 1}, {"jac", 1},
    {"mass_x_q", 2},
};

/* output shape of kernel k at one point: rows x cols (cols = 0: a vector) */
static void kernel_shape(const mech_handle *h, int k, ptrdiff_t *rows, ptrdiff_t *cols)
{
    ptrdiff_t nq = h->nq, nc = h->nc;
    switch (k) {
    case K_PHI: case K_PHI_T: case K_GAMMA: *rows = nc; *cols = 0; break;
    case K_PHI_Q: case K_PHIQ_X_Q: case K_GAMMA_Q: case K_GAMMA_QD: *rows = nc; *cols = nq; break;
    case K_MASS: case K_FORCES_Q: case K_FORCES_QD: case K_PHIQT_LAM_Q: case K_MASS_X_Q:
        *rows = nq; *cols = nq; break;
    case K_FORCES: *rows = nq; *cols = 0; break;
    case K_ENERGY: *rows = 2; *cols = 0; break;
    case K_GAPS: *rows = h->ncontact; *cols = 0; break;
    case K_ACC: *rows = nq + nc; *cols = 0; break;   /* qdd then lam */
    case K_RHS: *rows = 2 * nq; *cols = 0; break;
    default: *rows = 2 * nq; *cols = 2 * nq; break;  /* K_JAC */
    }
}

static int kernel_available(const mech_handle *h, int k)
{
    const mb_mech *m = &h->mech;
    switch (k) {
    case K_FORCES_Q: return m->forces_q != NULL;
    case K_FORCES_QD: return m->forces_qd != NULL;
    case K_PHIQ_X_Q: return m->phiq_x_q != NULL;
    case K_PHIQT_LAM_Q: return m->phiqT_lam_q != NULL;
    case K_GAMMA_Q: return m->gamma_q != NULL;
    case K_GAMMA_QD: return m->gamma_qd != NULL;
    case K_ENERGY: return m->energy != NULL;
    case K_GAPS: return h->planar;
    case K_MASS_X_Q: return m->mass_x_q != NULL;
    default: return 1;
    }
}

/* evaluate kernel k at one point; out has rows x max(cols, 1) entries (ld = rows);
 * f: an initialized index-1 formulation for K_ACC, K_RHS, K_JAC */
static int eval_point(mech_handle *h, mb_index1 *f, mb_problem *p, int k, double t,
                      const double *q, const double *b, double *out, double *ybuf)
{
    const mb_mech *m = &h->mech;
    ptrdiff_t nq = h->nq, ld;
    ptrdiff_t rows, cols;
    kernel_shape(h, k, &rows, &cols);
    ld = rows > 0 ? rows : 1;
    if (rows == 0)
        return 0;
    switch (k) {
    case K_PHI: return m->phi(t, q, out, m->ctx);
    case K_PHI_Q: return m->phi_q(t, q, out, ld, m->ctx);
    case K_PHI_T: return m->phi_t(t, q, out, m->ctx);
    case K_GAMMA: return m->gamma(t, q, b, out, m->ctx);
    case K_MASS: return m->mass(q, out, ld, m->ctx);
    case K_MASS_X_Q: return m->mass_x_q(q, b, out, ld, m->ctx);
    case K_FORCES: return m->forces(t, q, b, out, m->ctx);
    case K_FORCES_Q: return m->forces_q(t, q, b, out, ld, m->ctx);
    case K_FORCES_QD: return m->forces_qd(t, q, b, out, ld, m->ctx);
    case K_PHIQ_X_Q: return m->phiq_x_q(t, q, b, out, ld, m->ctx);
    case K_PHIQT_LAM_Q: return m->phiqT_lam_q(t, q, b, out, ld, m->ctx);
    case K_GAMMA_Q: return m->gamma_q(t, q, b, out, ld, m->ctx);
    case K_GAMMA_QD: return m->gamma_qd(t, q, b, out, ld, m->ctx);
    case K_ENERGY: return m->energy(t, q, b, out, out + 1, m->ctx);
    case K_GAPS: return mb_planar_contact_gaps(&h->pm, q, out);
    case K_ACC: return mb_index1_solve(f, t, q, b, out, out + nq);
    default:
        memcpy(ybuf, q, (size_t)nq * sizeof(double));
        memcpy(ybuf + nq, b, (size_t)nq * sizeof(double));
        if (k == K_RHS)
            return p->rhs(t, ybuf, out, p->ctx);
        return p->jac(t, ybuf, out, 2 * nq, p->ctx);
    }
}

/* batch of points: new reference to a float64 array of m rows of size w (or one
 * point), or NULL with ValueError; *mpts = m, or -1 for a single point (1-D, or a
 * scalar when w == 1) */
static PyArrayObject *as_points(PyObject *o, ptrdiff_t w, const char *what, ptrdiff_t *mpts)
{
    PyArrayObject *a = (PyArrayObject *)PyArray_FROMANY(o, NPY_DOUBLE, 0, 2,
                                                       NPY_ARRAY_C_CONTIGUOUS | NPY_ARRAY_ALIGNED);
    if (!a)
        return NULL;
    int nd = PyArray_NDIM(a);
    if ((nd == 2 && PyArray_DIM(a, 1) != w) || (nd < 2 && PyArray_SIZE(a) != w)) {
        PyErr_Format(PyExc_ValueError, "%s must have shape (%zd,) or (m, %zd).", what,
                     (Py_ssize_t)w, (Py_ssize_t)w);
        Py_DECREF(a);
        return NULL;
    }
    *mpts = nd == 2 ? PyArray_DIM(a, 0) : -1;
    return a;
}

static int kernel_index(const char *name)
{
    for (int k = 0; k < K_COUNT; k++)
        if (strcmp(name, kernel_info[k].name) == 0)
            return k;
    return -1;
}

static PyObject *status_error(int rc, const char *what)
{
    if (PyErr_Occurred())
        return NULL;
    return PyErr_Format(PyExc_RuntimeError, "%s failed: %s (status %d).", what,
                        mb_status_str(rc), rc);
}

/* RuntimeError with the formulation's own message when it has one */
static PyObject *index1_error(int rc, const mb_index1 *f, const char *what)
{
    if (PyErr_Occurred())
        return NULL;
    if (f->msg[0])
        return PyErr_Format(PyExc_RuntimeError, "%s failed: %s (status %d: %s)", what, f->msg, rc,
                            mb_status_str(rc));
    return status_error(rc, what);
}

/* the index-1 formulation of h with Baumgarte alpha, beta and the projection's
 * tolerance and iteration limit (<= 0: the formulation's defaults), its linear algebra
 * linalg (0 auto, 1 dense, 2 sparse; < 0: the handle's setting); 0, or -1 with
 * RuntimeError (nothing to free) */
static int index1_open(mb_index1 *f, mech_handle *h, double alpha, double beta, double proj_tol,
                       int proj_max_iter, int linalg)
{
    if (linalg < 0)
        linalg = h->linalg;
    int rc = mb_index1_init_ex(f, &h->mech, alpha, beta, linalg == 0 ? -1 : linalg - 1);
    if (rc) {
        index1_error(rc, f, "mb_index1_init");
        return -1;
    }
    if (proj_tol > 0)
        f->proj.tol = proj_tol;
    if (proj_max_iter > 0)
        f->proj.max_iter = proj_max_iter;
    return 0;
}

PyDoc_STRVAR(mech_eval_doc,
"mech_eval(handle, kernel, t, q, qd=None, alpha=0.0, beta=0.0) -> ndarray\n--\n\n"
"Evaluate a kernel at one point (q of shape (nq,)) or at m points (q of shape\n"
"(m, nq), t scalar or (m,)).  kernel: phi, phi_q, phi_t, gamma, mass, forces,\n"
"forces_q, forces_qd, phiq_x_q (qd = x, size nq), phiqT_lam_q (qd = lambda, size\n"
"nc), gamma_q, gamma_qd, energy (kinetic, potential), contact_gaps, acc (q'' then\n"
"lambda from the index-1 system with Baumgarte alpha, beta), rhs (f of y = (q, qd)),\n"
"jac (df/dy), mass_x_q ((M x)_q, qd = x).  Matrices come back with shape (rows,\n"
"cols) per point.");

static PyObject *mech_eval(PyObject *self, PyObject *args, PyObject *kw)
{
    (void)self;
    static char *kwlist[] = {"handle", "kernel", "t", "q", "qd", "alpha", "beta", NULL};
    PyObject *ho, *to, *qo, *bo = Py_None;
    const char *kname;
    double alpha = 0.0, beta = 0.0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OsOO|Odd", kwlist, &ho, &kname, &to, &qo, &bo,
                                     &alpha, &beta))
        return NULL;
    mech_handle *h = get_handle(ho);
    if (!h)
        return NULL;
    int k = kernel_index(kname);
    if (k < 0)
        return PyErr_Format(PyExc_ValueError, "kernel: unknown kernel '%s'.", kname);
    if (!kernel_available(h, k))
        return PyErr_Format(PyExc_ValueError,
                            "kernel '%s' is not provided by this %s (the formulations use "
                            "central differences instead).", kname,
                            h->planar ? "model" : "system");
    ptrdiff_t nq = h->nq, nc = h->nc;
    int need = kernel_info[k].need_qd;
    ptrdiff_t wb = need == 3 ? nc : nq;
    PyArrayObject *T = NULL, *Q = NULL, *Bv = NULL;
    PyObject *out = NULL, *arr = NULL;
    double *work = NULL;
    mb_index1 f;
    memset(&f, 0, sizeof f);
    int have_f = 0;
    mb_problem p;
    memset(&p, 0, sizeof p);
    ptrdiff_t mq, mb = -1, mt;

    T = (PyArrayObject *)PyArray_FROMANY(to, NPY_DOUBLE, 0, 1, NPY_ARRAY_CARRAY);
    if (!T)
        goto done;
    mt = PyArray_NDIM(T) == 1 ? PyArray_DIM(T, 0) : -1;
    Q = as_points(qo, nq, "q", &mq);
    if (!Q)
        goto done;
    if (need) {
        if (bo == Py_None) {
            PyErr_Format(PyExc_ValueError, "kernel '%s' needs %s.", kname,
                         need == 1 ? "qd" : need == 2 ? "x" : "lam");
            goto done;
        }
        Bv = as_points(bo, wb, need == 1 ? "qd" : need == 2 ? "x" : "lam", &mb);
        if (!Bv)
            goto done;
    }
    ptrdiff_t m = -1;
    ptrdiff_t sizes[3] = {mt, mq, mb};
    for (int i = 0; i < 3; i++)
        if (sizes[i] >= 0) {
            if (m >= 0 && sizes[i] != m) {
                PyErr_SetString(PyExc_ValueError,
                                "t, q and qd must have the same number of points.");
                goto done;
            }
            m = sizes[i];
        }
    int single = m < 0;
    if (single)
        m = 1;
    ptrdiff_t rows, cols;
    kernel_shape(h, k, &rows, &cols);
    ptrdiff_t per = rows * (cols > 0 ? cols : 1);
    {
        npy_intp dims[3];
        int nd = 0;
        if (!single)
            dims[nd++] = (npy_intp)m;
        if (cols > 0)
            dims[nd++] = (npy_intp)cols;  /* column-major per point: transposed below */
        dims[nd++] = (npy_intp)rows;
        arr = PyArray_SimpleNew(nd, dims, NPY_DOUBLE);
        if (!arr)
            goto done;
    }
    work = PyMem_Malloc((size_t)(2 * nq) * sizeof(double));
    if (!work) {
        PyErr_NoMemory();
        goto done;
    }
    if (k == K_ACC || k == K_RHS || k == K_JAC) {
        if (index1_open(&f, h, alpha, beta, 0.0, 0, -1))
            goto done;
        have_f = 1;
        mb_index1_problem(&f, &p);
        if (k == K_JAC && !p.jac) {
            PyErr_SetString(PyExc_RuntimeError, "the index-1 formulation has no Jacobian.");
            goto done;
        }
    }
    {
        const double *tv = PyArray_DATA(T), *qv = PyArray_DATA(Q);
        const double *bv = Bv ? PyArray_DATA(Bv) : NULL;
        double *ov = PyArray_DATA((PyArrayObject *)arr);
        int rc = 0;
        ptrdiff_t bad = 0;
        PyThreadState *ts = h->python ? NULL : PyEval_SaveThread();
        for (ptrdiff_t i = 0; i < m && !rc; i++) {
            bad = i;
            rc = eval_point(h, &f, &p, k, tv[mt >= 0 ? i : 0], qv + (mq >= 0 ? i : 0) * nq,
                            bv ? bv + (mb >= 0 ? i : 0) * wb : NULL, ov + i * per, work);
        }
        if (ts)
            PyEval_RestoreThread(ts);
        if (rc) {
            if (!PyErr_Occurred())
                PyErr_Format(PyExc_RuntimeError,
                             "kernel '%s' failed at point %zd: %s (status %d)%s%s",
                             kname, (Py_ssize_t)bad, mb_status_str(rc), rc,
                             have_f && f.msg[0] ? ": " : ".", have_f ? f.msg : "");
            goto done;
        }
    }
    if (cols > 0) {
        int nd = PyArray_NDIM((PyArrayObject *)arr);
        out = PyArray_SwapAxes((PyArrayObject *)arr, nd - 2, nd - 1);
    } else {
        out = arr;
        Py_INCREF(out);
    }
done:
    if (have_f)
        mb_index1_free(&f);
    PyMem_Free(work);
    Py_XDECREF(arr);
    Py_XDECREF(T);
    Py_XDECREF(Q);
    Py_XDECREF(Bv);
    return out;
}

/* ------------------------------------------------------------------ projection */

PyDoc_STRVAR(mech_project_doc,
"mech_project(handle, t, q, qd, tol=0.0, max_iter=0) -> (q, qd, res_pos, res_vel)\n--\n\n"
"Project (q, qd) onto Phi(t, q) = 0 and Phi_q qd + Phi_t = 0 (minimum-norm Newton\n"
"correction, mb_index1_project); tol, max_iter <= 0 keep the formulation's defaults.\n"
"res_pos, res_vel: the max-norms of the residuals after the projection.");

static PyObject *mech_project(PyObject *self, PyObject *args, PyObject *kw)
{
    (void)self;
    static char *kwlist[] = {"handle", "t", "q", "qd", "tol", "max_iter", NULL};
    PyObject *ho, *qo, *vo;
    double t, tol = 0.0;
    int max_iter = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OdOO|di", kwlist, &ho, &t, &qo, &vo, &tol,
                                     &max_iter))
        return NULL;
    mech_handle *h = get_handle(ho);
    if (!h)
        return NULL;
    ptrdiff_t nq = h->nq, mq, mv;
    PyArrayObject *Q = as_points(qo, nq, "q", &mq), *V = Q ? as_points(vo, nq, "qd", &mv) : NULL;
    PyObject *qn = NULL, *vn = NULL, *out = NULL;
    mb_index1 f;
    memset(&f, 0, sizeof f);
    int have_f = 0;
    if (!V)
        goto done;
    if (mq >= 0 || mv >= 0) {
        PyErr_SetString(PyExc_ValueError, "q and qd must be single points of shape (nq,).");
        goto done;
    }
    qn = vec_from(PyArray_DATA(Q), nq);
    vn = vec_from(PyArray_DATA(V), nq);
    if (!qn || !vn)
        goto done;
    if (index1_open(&f, h, 0.0, 0.0, tol, max_iter, -1))
        goto done;
    have_f = 1;
    double *qa = PyArray_DATA((PyArrayObject *)qn), *va = PyArray_DATA((PyArrayObject *)vn);
    double rp = 0.0, rv = 0.0;
    int rc;
    if (h->python) {
        rc = mb_index1_project(&f, t, qa, va, &rp, &rv);
    } else {
        Py_BEGIN_ALLOW_THREADS
        rc = mb_index1_project(&f, t, qa, va, &rp, &rv);
        Py_END_ALLOW_THREADS
    }
    if (rc) {
        index1_error(rc, &f, "the projection onto the constraints");
        goto done;
    }
    out = Py_BuildValue("(OOdd)", qn, vn, rp, rv);
done:
    if (have_f)
        mb_index1_free(&f);
    Py_XDECREF(qn);
    Py_XDECREF(vn);
    Py_XDECREF(Q);
    Py_XDECREF(V);
    return out;
}

/* ------------------------------------------------------------------ simulate */

PyDoc_STRVAR(mech_simulate_doc,
"mech_simulate(handle, method, t0, tf, y0, atol, rtol, ..., alpha=0, beta=0,\n"
"              project=False, proj_tol=0, proj_max_iter=0, switching=None,\n"
"              contact_switching=False, formulation=0) -> dict\n--\n\n"
"Run a registered method on a formulation of the mechanism, with the options of\n"
"_core.solve (validated in mbint/simulate.py); y0 = (q0, qd0).  formulation 0: the\n"
"index-1 ODE in y = (q, qd) (mbs/index1.h); 1, 2, 3: the index-1, -2, -3 DAE and 4 GGL\n"
"(mbs/dae.h) in y = (q, v, lambda[, mu]), started from the consistent lambda(t0)\n"
"(atol then has one entry per component of that y; ida runs on its residual).\n"
"Returns _core.solve's dict (y of the formulation's size) plus 'qdd' (nt, nq) and\n"
"'lam' (nt, nc) at the output points (the index-1 system's for formulation 0, NaN where\n"
"the saddle-point system is singular; the integrated lambda and\n"
"M^-1 (Q - Phi_q^T lambda) for the DAEs) and 'y0' (the initial state used).\n"
"switching: one int per event (nonzero: a switching event, the run restarts at its\n"
"roots).  contact_switching: the contact gaps of a planar model (in C, no Python)\n"
"become switching events after the user's events (LLM paper section 3): t_events\n"
"and y_events then hold the user's events followed by one entry per contact.");

/* the contact gap functions of a planar model as events (LLM eqs 17-19) */
static int contact_events(double t, const double *y, double *g, void *ctx)
{
    (void)t;
    return mb_planar_contact_gaps(ctx, y, g);
}

/* RuntimeError with the DAE formulation's message */
static PyObject *dae_error(int rc, const mb_dae *f, const char *what)
{
    if (PyErr_Occurred())
        return NULL;
    if (f->msg[0])
        return PyErr_Format(PyExc_RuntimeError, "%s failed: %s (status %d: %s)", what, f->msg, rc,
                            mb_status_str(rc));
    return status_error(rc, what);
}

/* ------------------------------------------------------------------ state space */

/* the run's events (the user's, then the contacts) see full (q, q'): y = (v, v') is
 * mapped first (Newton from the last accepted point, in the step's partition) */
typedef struct ss_events_ctx {
    mb_ss *ss;
    mb_event_fn events;
    void *ctx;
    double *yfull;   /* 2 nq */
} ss_events_ctx;

static int ss_events(double t, const double *y, double *g, void *c)
{
    ss_events_ctx *e = c;
    ptrdiff_t nq = e->ss->nq;
    int rc = mb_ss_full(e->ss, t, y, e->yfull, e->yfull + nq, NULL, NULL);
    if (rc != MB_OK)
        return rc > 0 ? MB_ERR_EVENT_FAIL : rc;
    return e->events(t, e->yfull, g, e->ctx);
}

/* full state rows of m reduced rows y (2 nd each) at times t through the log:
 * yf (m x 2 nq), qdd (m x nq), lam (m x nc) (NULL: not wanted); a row that cannot be
 * recovered is NaN; returns the first failure's status or 0 */
static int ss_rows(mb_ss *ss, ptrdiff_t m, const double *t, const double *y, double *yf,
                   double *qdd, double *lam)
{
    ptrdiff_t nq = ss->nq, nc = ss->nc, nd = ss->nd;
    int first = 0;
    for (ptrdiff_t i = 0; i < m; i++) {
        double *q = yf + i * 2 * nq;
        int rc = mb_ss_recover(ss, t[i], y + i * 2 * nd, q, q + nq, qdd ? qdd + i * nq : NULL,
                               lam ? lam + i * nc : NULL);
        if (rc != MB_OK) {
            for (ptrdiff_t c = 0; c < 2 * nq; c++) q[c] = NAN;
            for (ptrdiff_t c = 0; qdd && c < nq; c++) qdd[i * nq + c] = NAN;
            for (ptrdiff_t c = 0; lam && c < nc; c++) lam[i * nc + c] = NAN;
            if (!first) first = rc;
            if (rc == MB_ERR_CALLBACK) return rc;
        }
    }
    return first;
}

/* the log, the partition table and the statistics of ss into d; 0 or -1 */
static int ss_export(PyObject *d, const mb_ss *ss)
{
    ptrdiff_t nq = ss->nq, nd = ss->nd;
    PyObject *lp = NULL, *pa = NULL;
    npy_intp d1[1] = {(npy_intp)ss->nlog}, d2[2] = {(npy_intp)ss->npart, (npy_intp)nd};
    lp = PyArray_SimpleNew(1, d1, NPY_INT64);
    pa = PyArray_SimpleNew(2, d2, NPY_INT64);
    if (!lp || !pa) {
        Py_XDECREF(lp);
        Py_XDECREF(pa);
        return -1;
    }
    for (ptrdiff_t k = 0; k < ss->nlog; k++)
        ((npy_int64 *)PyArray_DATA((PyArrayObject *)lp))[k] = ss->log_part[k];
    for (ptrdiff_t k = 0; k < ss->npart * nd; k++)
        ((npy_int64 *)PyArray_DATA((PyArrayObject *)pa))[k] = ss->parts[k];
    if (dict_set(d, "ss_log_part", lp)) {
        Py_DECREF(pa);
        return -1;
    }
    if (dict_set(d, "ss_parts", pa) ||
        dict_set(d, "ss_log_t", vec_from(ss->log_t, ss->nlog)) ||
        dict_set(d, "ss_log_y", mat_from(ss->log_y, ss->nlog, 2 * nq)) ||
        dict_set(d, "ss_part_t", vec_from(ss->part_t, ss->npart)) ||
        dict_set(d, "nrepartition", PyLong_FromLong(ss->nrepartition)) ||
        dict_set(d, "npartition_change", PyLong_FromLong(ss->nchange)) ||
        dict_set(d, "ss_neval", PyLong_FromLong(ss->neval)) ||
        dict_set(d, "ss_newton_iter", PyLong_FromLong(ss->niter)) ||
        dict_set(d, "ss_newton_fail", PyLong_FromLong(ss->nnewton_fail)) ||
        dict_set(d, "ss_cond_max", PyFloat_FromDouble(ss->cond_max)) ||
        dict_set(d, "ss_cond_ref", PyFloat_FromDouble(ss->cond_ref)))
        return -1;
    return 0;
}

/* open the state-space formulation of h with Newton tolerance / limit (<= 0: the
 * defaults); 0, or -1 with ValueError (nothing to free) */
static int ss_open(mb_ss *ss, mech_handle *h, double newton_tol, int newton_max_iter)
{
    int rc = mb_ss_init(ss, &h->mech);
    if (rc) {
        if (rc == MB_ERR_MEM)
            PyErr_NoMemory();
        else
            PyErr_Format(PyExc_ValueError, "formulation='state_space': %s", ss->msg);
        return -1;
    }
    if (newton_tol > 0)
        ss->newton_tol = newton_tol;
    if (newton_max_iter > 0)
        ss->newton_max_iter = newton_max_iter;
    return 0;
}

/* mech_simulate with state_space=True: y0 and atol are full (2 nq); the run integrates
 * y = (v, v') (2 nd); the result's y, y_events, qdd, lam are full again */
/* Gauss-Jordan ranks the pivots of preferred independent coordinates this much lower */
#define SS_PREFER_WEIGHT 0.1

/* pivot weights (nq) from a sequence of preferred independent coordinates (or None:
 * *w = NULL); 0 or -1 with ValueError */
static int ss_prefer(PyObject *prefer, ptrdiff_t nq, double **w)
{
    *w = NULL;
    if (prefer == Py_None)
        return 0;
    PyArrayObject *P = (PyArrayObject *)PyArray_FROMANY(prefer, NPY_INT64, 1, 1, NPY_ARRAY_CARRAY);
    if (!P)
        return -1;
    *w = PyMem_Malloc((size_t)(nq > 0 ? nq : 1) * sizeof(double));
    if (!*w) {
        Py_DECREF(P);
        PyErr_NoMemory();
        return -1;
    }
    for (ptrdiff_t j = 0; j < nq; j++) (*w)[j] = 1.0;
    const npy_int64 *ix = PyArray_DATA(P);
    for (ptrdiff_t k = 0; k < PyArray_SIZE(P); k++) {
        if (ix[k] < 0 || ix[k] >= nq) {
            PyErr_Format(PyExc_ValueError, "independent: coordinate index %lld is not in "
                         "[0, %zd).", (long long)ix[k], (Py_ssize_t)nq);
            Py_DECREF(P);
            PyMem_Free(*w);
            *w = NULL;
            return -1;
        }
        (*w)[ix[k]] = SS_PREFER_WEIGHT;
    }
    Py_DECREF(P);
    return 0;
}

static PyObject *ss_simulate(mech_handle *mh, const char *mname, run_args *ra, double proj_tol,
                             int proj_max_iter, int contact_sw, PyObject *prefer)
{
    run_ctx r;
    if (run_begin(&r, mname))
        return NULL;
    ptrdiff_t nq = mh->nq, nc = mh->nc;
    PyObject *out = NULL, *qdd = NULL, *lam = NULL, *yf = NULL, *yred = NULL;
    int have_ss = 0;
    mb_ss ss;
    ss_events_ctx ec;
    double *weights = NULL;
    memset(&ss, 0, sizeof ss);
    memset(&ec, 0, sizeof ec);
    r.python = mh->python;
    if (!r.m) {
        PyErr_Format(PyExc_ValueError,
                     "method '%s' cannot run on the state-space formulation: it is a SUNDIALS "
                     "method with its own step loop, and the formulation must recover the "
                     "dependent coordinates and check the partition after every accepted step "
                     "(use one of mbint's own methods, e.g. 'rosenbrock_nystrom' or 'bdf').",
                     mname);
        goto done;
    }
    if (contact_sw && mh->planar && mh->ncontact > 0) {
        r.n_extra = mh->ncontact;
        r.extra = contact_events;
        r.extra_ctx = &mh->pm;
    }
    if (run_prepare(&r, ra, 2 * nq, NULL))
        goto done;
    if (ss_open(&ss, mh, proj_tol, proj_max_iter))
        goto done;
    have_ss = 1;
    ptrdiff_t nd = ss.nd;
    if (ss_prefer(prefer, nq, &weights))
        goto done;
    ss.pivot_w = weights;
    ss.atol_q = PyArray_DATA((PyArrayObject *)r.atol);
    {
        npy_intp dims[1] = {(npy_intp)(2 * nd)};
        yred = PyArray_SimpleNew(1, dims, NPY_DOUBLE);
        ec.yfull = PyMem_Malloc((size_t)(2 * nq) * sizeof(double));
        if (!yred || !ec.yfull) {
            PyErr_NoMemory();
            goto done;
        }
        const double *y0 = PyArray_DATA((PyArrayObject *)r.y0);
        int rc;
        if (mh->python) {
            rc = mb_ss_start(&ss, ra->t0, y0, y0 + nq, PyArray_DATA((PyArrayObject *)yred));
        } else {
            Py_BEGIN_ALLOW_THREADS
            rc = mb_ss_start(&ss, ra->t0, y0, y0 + nq, PyArray_DATA((PyArrayObject *)yred));
            Py_END_ALLOW_THREADS
        }
        if (rc) {
            if (!PyErr_Occurred())
                PyErr_Format(PyExc_ValueError, "formulation='state_space' at t0 = %g: %s (status "
                             "%d: %s)", ra->t0, ss.msg, rc, mb_status_str(rc));
            goto done;
        }
        Py_DECREF(r.y0);
        r.y0 = yred;
        yred = NULL;
        r.o.atol = ss.atol_v;
    }
    if (r.o.n_events > 0) {
        ec.ss = &ss;
        ec.events = r.o.events;
        ec.ctx = r.o.event_ctx;
        r.o.events = ss_events;
        r.o.event_ctx = &ec;
    }
    mb_problem p;
    mb_ss_problem(&ss, &p);
    if (run_execute(&r, &p, ra))
        goto done;

    /* full state, accelerations and multipliers at the output points */
    mb_result *res = &r.res;
    {
        npy_intp d0[2] = {(npy_intp)res->nt, (npy_intp)(2 * nq)};
        npy_intp d1[2] = {(npy_intp)res->nt, (npy_intp)nq}, d2[2] = {(npy_intp)res->nt, (npy_intp)nc};
        yf = PyArray_SimpleNew(2, d0, NPY_DOUBLE);
        qdd = PyArray_SimpleNew(2, d1, NPY_DOUBLE);
        lam = PyArray_SimpleNew(2, d2, NPY_DOUBLE);
        if (!yf || !qdd || !lam)
            goto done;
        int rc;
        PyThreadState *ts = mh->python ? NULL : PyEval_SaveThread();
        rc = ss_rows(&ss, res->nt, res->t, res->y, PyArray_DATA((PyArrayObject *)yf),
                     PyArray_DATA((PyArrayObject *)qdd), PyArray_DATA((PyArrayObject *)lam));
        if (ts)
            PyEval_RestoreThread(ts);
        if (rc == MB_ERR_CALLBACK && PyErr_Occurred())
            goto done;
        PyErr_Clear();
    }
    if (res->status < 0 && res->status != MB_ERR_INTERRUPTED && ss.msg[0]) {
        size_t len = strlen(res->message);
        snprintf(res->message + len, sizeof res->message - len, "%s%s", len ? " " : "", ss.msg);
    }
    out = result_dict_of_run(&r);
    if (!out)
        goto done;
    if (PyDict_SetItemString(out, "ss_y", PyDict_GetItemString(out, "y")) ||
        PyDict_SetItemString(out, "y", yf) || PyDict_SetItemString(out, "qdd", qdd) ||
        PyDict_SetItemString(out, "lam", lam) || ss_export(out, &ss)) {
        Py_CLEAR(out);
        goto done;
    }
    {   /* the events' states, full */
        PyObject *ye = PyList_New(res->n_events);
        if (!ye) {
            Py_CLEAR(out);
            goto done;
        }
        for (ptrdiff_t i = 0; i < res->n_events; i++) {
            npy_intp de[2] = {(npy_intp)res->ev_count[i], (npy_intp)(2 * nq)};
            PyObject *a = PyArray_SimpleNew(2, de, NPY_DOUBLE);
            if (!a) {
                Py_DECREF(ye);
                Py_CLEAR(out);
                goto done;
            }
            ss_rows(&ss, res->ev_count[i], res->ev_t[i], res->ev_y[i],
                    PyArray_DATA((PyArrayObject *)a), NULL, NULL);
            PyErr_Clear();
            PyList_SET_ITEM(ye, i, a);
        }
        if (dict_set(out, "y_events", ye))
            Py_CLEAR(out);
    }
done:
    run_free(&r);
    if (have_ss)
        mb_ss_free(&ss);
    PyMem_Free(weights);
    PyMem_Free(ec.yfull);
    Py_XDECREF(yf);
    Py_XDECREF(yred);
    Py_XDECREF(qdd);
    Py_XDECREF(lam);
    return out;
}

static PyObject *mech_simulate(PyObject *self, PyObject *a, PyObject *kw)
{
    (void)self;
    static char *kwlist[] = {"handle", "method", "t0", "tf", "y0", "atol", "rtol", "h",
                             RUN_KW_STEPS, RUN_KW_CONTROL, RUN_KW_OUTPUT, "alpha", "beta",
                             "project", "proj_tol", "proj_max_iter", "switching",
                             "contact_switching", "state_space", "prefer_independent",
                             "formulation", "linalg", NULL};
    const char *mname;
    PyObject *ho;
    double alpha = 0, beta = 0, proj_tol = 0;
    int project = 0, proj_max_iter = 0, contact_sw = 0, state_space = 0, formulation = 0;
    int linalg = -1;
    PyObject *prefer = Py_None;
    run_args ra;
    run_args_init(&ra);
    if (!PyArg_ParseTupleAndKeywords(
            a, kw, "OsddOOO|d" RUN_FMT_STEPS RUN_FMT_CONTROL RUN_FMT_OUTPUT "ddpdiOppOii", kwlist,
            &ho, &mname, &ra.t0, &ra.tf, &ra.y0, &ra.atol, &ra.rtol, &ra.h, RUN_ADDR_STEPS(ra),
            RUN_ADDR_CONTROL(ra), RUN_ADDR_OUTPUT(ra), &alpha, &beta, &project, &proj_tol,
            &proj_max_iter, &ra.switching, &contact_sw, &state_space, &prefer, &formulation,
            &linalg))
        return NULL;
    if (linalg > 2)
        return PyErr_Format(PyExc_ValueError, "linalg: unknown code %d.", linalg);
    mech_handle *mh = get_handle(ho);
    if (!mh)
        return NULL;
    if (formulation < 0 || formulation > MB_DAE_GGL)
        return PyErr_Format(PyExc_ValueError, "formulation: unknown code %d.", formulation);
    if (formulation > 0 && mh->nc == 0)
        return PyErr_Format(PyExc_ValueError, "formulation: the DAE formulations need "
                            "constraints; this mechanism has none (use the index-1 ODE).");
    if (state_space)  /* issue 9: the state-space formulation (statespace.h) */
        return ss_simulate(mh, mname, &ra, proj_tol, proj_max_iter, contact_sw, prefer);
    run_ctx r;
    if (run_begin(&r, mname))
        return NULL;
    ptrdiff_t nq = mh->nq, nc = mh->nc, n = 2 * nq;

    PyObject *out = NULL, *qdd = NULL, *lam = NULL, *y0dae = NULL, *yp0 = NULL;
    PyObject *y0_user = ra.y0;
    int have_f = 0, have_d = 0;
    mb_index1 f;
    mb_dae fd;
    memset(&f, 0, sizeof f);
    memset(&fd, 0, sizeof fd);
    unsigned char *alg = NULL;
    mb_dae_options dopt;
    memset(&dopt, 0, sizeof dopt);
    r.python = mh->python;
    if (contact_sw && mh->planar && mh->ncontact > 0 && r.m) {
        r.n_extra = mh->ncontact;
        r.extra = contact_events;
        r.extra_ctx = &mh->pm;
    }
    mb_problem p;
    memset(&p, 0, sizeof p);
    if (formulation > 0) {
        /* the DAE: y0 = (q0, qd0, lambda0[, 0]) from (q0, qd0) */
        int rc = mb_dae_init(&fd, &mh->mech, formulation);
        if (rc) {
            dae_error(rc, &fd, "mb_dae_init");
            goto done;
        }
        have_d = 1;
        PyObject *yu = as_vec_object(y0_user, n, "y0");
        if (!yu)
            goto done;
        npy_intp dn = (npy_intp)fd.n;
        y0dae = PyArray_SimpleNew(1, &dn, NPY_DOUBLE);
        yp0 = PyArray_SimpleNew(1, &dn, NPY_DOUBLE);
        if (!y0dae || !yp0) {
            Py_DECREF(yu);
            goto done;
        }
        const double *yv = PyArray_DATA((PyArrayObject *)yu);
        if (mh->python) {
            rc = mb_dae_initial(&fd, ra.t0, yv, yv + nq, PyArray_DATA((PyArrayObject *)y0dae),
                                PyArray_DATA((PyArrayObject *)yp0));
        } else {
            Py_BEGIN_ALLOW_THREADS
            rc = mb_dae_initial(&fd, ra.t0, yv, yv + nq, PyArray_DATA((PyArrayObject *)y0dae),
                                PyArray_DATA((PyArrayObject *)yp0));
            Py_END_ALLOW_THREADS
        }
        Py_DECREF(yu);
        if (rc) {
            dae_error(rc, &fd, "the consistent initial multipliers");
            goto done;
        }
        ra.y0 = y0dae;
        n = fd.n;
        mb_dae_problem(&fd, &p);
        if (!r.m) {
            if (strcmp(mname, "ida") != 0) {
                PyErr_Format(PyExc_ValueError, "method: SUNDIALS method '%s' does not solve the "
                             "DAE formulations; ida does (index1_dae, ggl).", mname);
                goto done;
            }
            alg = PyMem_Calloc((size_t)n, 1);
            if (!alg) {
                PyErr_NoMemory();
                goto done;
            }
            int high = 0;
            for (ptrdiff_t i = 0; i < n; i++) {
                alg[i] = i >= 2 * nq;
                high |= fd.index[i] >= 3 || (fd.index[i] == 2 && i < 2 * nq);
            }
            if (high) {
                PyErr_SetString(PyExc_ValueError, "method: ida solves the index-1 DAE and GGL, "
                                "not the index-2 or index-3 formulations.");
                goto done;
            }
            dopt.yp0 = PyArray_DATA((PyArrayObject *)yp0);
            dopt.algebraic = alg;
            dopt.calc_ic = 0;  /* y0, y'(t0) are consistent */
            dopt.jac = mb_dae_ida_jac;
            dopt.suppress_alg = formulation != MB_DAE_INDEX1;  /* index-2 multipliers */
            r.dae = &dopt;
        }
    }
    if (run_prepare(&r, &ra, n, NULL))
        goto done;
    if (project && !r.m) {
        PyErr_Format(PyExc_ValueError, "project: SUNDIALS method '%s' runs its own step loop "
                     "and has no projection after accepted steps.", mname);
        goto done;
    }
    if (formulation == 0) {
        if (index1_open(&f, mh, alpha, beta, proj_tol, proj_max_iter, linalg))
            goto done;
        have_f = 1;
        mb_index1_problem(&f, &p);
        if (project && nc > 0)
            p.project = mb_index1_project_hook;
    } else {
        if (proj_tol > 0)
            fd.proj.tol = proj_tol;
        if (proj_max_iter > 0)
            fd.proj.max_iter = proj_max_iter;
        if (project)
            p.project = mb_dae_project_hook;
    }
    if (run_execute(&r, &p, &ra))
        goto done;

    /* accelerations and multipliers at the output points */
    mb_result *res = &r.res;
    {
        npy_intp d1[2] = {(npy_intp)res->nt, (npy_intp)nq}, d2[2] = {(npy_intp)res->nt, (npy_intp)nc};
        qdd = PyArray_SimpleNew(2, d1, NPY_DOUBLE);
        lam = PyArray_SimpleNew(2, d2, NPY_DOUBLE);
        if (!qdd || !lam)
            goto done;
        double *A = PyArray_DATA((PyArrayObject *)qdd), *L = PyArray_DATA((PyArrayObject *)lam);
        PyThreadState *ts = mh->python ? NULL : PyEval_SaveThread();
        int failed = 0;
        for (ptrdiff_t i = 0; i < res->nt && !failed; i++) {
            const double *y = res->y + i * n;
            int r2 = formulation == 0
                         ? mb_index1_solve(&f, res->t[i], y, y + nq, A + i * nq, L + i * nc)
                         : mb_dae_accel(&fd, res->t[i], y, A + i * nq, L + i * nc);
            if (r2 != 0) {
                for (ptrdiff_t c = 0; c < nq; c++)
                    A[i * nq + c] = NAN;
                for (ptrdiff_t c = 0; c < nc; c++)
                    L[i * nc + c] = NAN;
                if (r2 == MB_ERR_CALLBACK)
                    failed = 1;
            }
        }
        if (ts)
            PyEval_RestoreThread(ts);
        if (failed && PyErr_Occurred())
            goto done;
        PyErr_Clear();
    }
    const char *fmsg = formulation == 0 ? f.msg : fd.msg[0] ? fd.msg : fd.proj.msg;
    if ((res->status == MB_ERR_LINALG || res->status == MB_ERR_CONV ||
         res->status == MB_ERR_RHS_FAIL) && fmsg[0]) {  /* the formulation says why */
        size_t len = strlen(res->message);
        snprintf(res->message + len, sizeof res->message - len, "%s%s", len ? " " : "", fmsg);
    }
    out = result_dict_of_run(&r);
    if (out && (PyDict_SetItemString(out, "qdd", qdd) || PyDict_SetItemString(out, "lam", lam) ||
                PyDict_SetItemString(out, "y0", r.y0)))
        Py_CLEAR(out);
    if (out) {  /* the linear algebra the formulation chose (index1.h) */
        PyObject *la = PyUnicode_FromString(have_f && f.sp ? "sparse" : "dense");
        if (!la || PyDict_SetItemString(out, "linear_algebra", la))
            Py_CLEAR(out);
        Py_XDECREF(la);
    }

done:
    run_free(&r);
    if (have_f)
        mb_index1_free(&f);
    if (have_d)
        mb_dae_free(&fd);
    PyMem_Free(alg);
    Py_XDECREF(qdd);
    Py_XDECREF(lam);
    Py_XDECREF(y0dae);
    Py_XDECREF(yp0);
    return out;
}

/* ------------------------------------------------------------------ state space:
 * evaluation at a point and recovery of full states after a run */

PyDoc_STRVAR(mech_ss_eval_doc,
"mech_ss_eval(handle, t0, q0, qd0, t, v=None, vd=None, indep=None, tol=0.0,\n"
"             max_iter=0, jac=True) -> dict\n--\n\n"
"The state-space formulation (csrc/mbs/statespace.c) partitioned at the consistent\n"
"(t0, q0, qd0) (Gauss-Jordan with full pivoting, or the independent coordinates\n"
"indep), with Newton for the dependent positions starting there, evaluated at\n"
"(t, v, vd) (default: v, vd of (q0, qd0)): indep, dep, q, qd, qdd, lam, vdd, M_hat (nd x nd), cond (cond_1 Phi_u),\n"
"H (nc x nd), iterations (Newton); with jac also J1, J2, MJ1, MJ2 (M^ J1, M^ J2:\n"
"the right-hand sides of RN eqs 31, 35) and Mat (M^ dv''/dt, eq 46).  ValueError\n"
"when no nonsingular Phi_u exists at q0 (message names the dependent rows), or\n"
"RuntimeError when the evaluation fails (Newton).");

static PyObject *int_vec(const int *x, ptrdiff_t m)
{
    npy_intp d[1] = {(npy_intp)m};
    PyObject *a = PyArray_SimpleNew(1, d, NPY_INT64);
    if (a)
        for (ptrdiff_t k = 0; k < m; k++) ((npy_int64 *)PyArray_DATA((PyArrayObject *)a))[k] = x[k];
    return a;
}

/* column-major rows x cols into a C-ordered (rows, cols) array */
static PyObject *cm_mat(const double *x, ptrdiff_t rows, ptrdiff_t cols)
{
    npy_intp d[2] = {(npy_intp)rows, (npy_intp)cols};
    PyObject *a = PyArray_SimpleNew(2, d, NPY_DOUBLE);
    if (a) {
        double *o = PyArray_DATA((PyArrayObject *)a);
        for (ptrdiff_t i = 0; i < rows; i++)
            for (ptrdiff_t j = 0; j < cols; j++) o[i * cols + j] = x[i + rows * j];
    }
    return a;
}

static PyObject *mech_ss_eval(PyObject *self, PyObject *args, PyObject *kw)
{
    (void)self;
    static char *kwlist[] = {"handle", "t0", "q0", "qd0", "t", "v", "vd", "indep", "tol",
                             "max_iter", "jac", NULL};
    PyObject *ho, *qo, *qdo, *vo = Py_None, *vdo = Py_None, *io = Py_None;
    double t0, t, tol = 0.0;
    int max_iter = 0, want_jac = 1;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OdOOd|OOOdip", kwlist, &ho, &t0, &qo, &qdo, &t,
                                     &vo, &vdo, &io, &tol, &max_iter, &want_jac))
        return NULL;
    mech_handle *h = get_handle(ho);
    if (!h)
        return NULL;
    mb_ss ss;
    memset(&ss, 0, sizeof ss);
    PyArrayObject *Q = NULL, *QD = NULL, *V = NULL, *VD = NULL, *IND = NULL;
    PyObject *out = NULL;
    double *buf = NULL;
    int have = 0, rc = 0;
    if (ss_open(&ss, h, tol, max_iter))
        goto done;
    have = 1;
    ptrdiff_t nq = ss.nq, nc = ss.nc, nd = ss.nd;
    Q = as_vec(qo, nq, "q0");
    QD = Q ? as_vec(qdo, nq, "qd0") : NULL;
    if (!QD)
        goto done;
    if (vo != Py_None && !(V = as_vec(vo, nd, "v")))
        goto done;
    if (vdo != Py_None && !(VD = as_vec(vdo, nd, "vd")))
        goto done;
    if (io != Py_None) {
        IND = (PyArrayObject *)PyArray_FROMANY(io, NPY_INT, 1, 1, NPY_ARRAY_CARRAY);
        if (!IND)
            goto done;
        if (PyArray_SIZE(IND) != nd) {
            PyErr_Format(PyExc_ValueError, "indep must have nd = %zd entries.", (Py_ssize_t)nd);
            goto done;
        }
    }
    buf = PyMem_Malloc((size_t)(4 * nd * nd + 3 * nd + 1) * sizeof(double));
    if (!buf) {
        PyErr_NoMemory();
        goto done;
    }
    double *y = buf, *J1 = y + 2 * nd, *J2 = J1 + nd * nd, *MJ1 = J2 + nd * nd, *MJ2 = MJ1 + nd * nd,
           *Mat = MJ2 + nd * nd, cond = 0.0;
    const double *q0 = PyArray_DATA(Q), *qd0 = PyArray_DATA(QD);
    mb_problem p;
    mb_ss_problem(&ss, &p);
    {
        PyThreadState *ts = h->python ? NULL : PyEval_SaveThread();
        if (IND) {  /* the table holds it; use_partition validates it and derives dep */
            rc = mb_ss_load_log(&ss, 0, NULL, NULL, NULL, 1, PyArray_DATA(IND));
        } else {
            rc = mb_ss_partition(&ss, t0, q0, NULL);
        }
        if (rc == MB_OK) rc = mb_ss_set_base(&ss, t0, q0, qd0);
        /* v, v' default to those of (q0, qd0) */
        for (ptrdiff_t i = 0; rc == MB_OK && i < nd; i++) {
            y[i] = V ? ((const double *)PyArray_DATA(V))[i] : q0[ss.indep[i]];
            y[nd + i] = VD ? ((const double *)PyArray_DATA(VD))[i] : qd0[ss.indep[i]];
        }
        if (rc == MB_OK) rc = mb_ss_full(&ss, t, y, NULL, NULL, NULL, NULL);
        if (rc == MB_OK) rc = mb_ss_cond(&ss, t, y, &cond);
        if (rc == MB_OK && want_jac) {
            rc = mb_ss_jacobians(&ss, t, y, J1, J2, nd);
            if (rc == MB_OK) rc = p.acc_mjac(t, y, y + nd, NULL, MJ1, MJ2, Mat, p.ctx);
        }
        if (ts)
            PyEval_RestoreThread(ts);
    }
    if (rc != MB_OK) {
        if (!PyErr_Occurred())
            PyErr_Format(rc == MB_ERR_LINALG && !IND ? PyExc_ValueError : PyExc_RuntimeError,
                         "state-space evaluation failed: %s (status %d: %s)", ss.msg, rc,
                         mb_status_str(rc));
        goto done;
    }
    {
        /* the point that mb_ss_full evaluated (aux) is the one at (t, y) */
        mb_ss_full(&ss, t, y, NULL, NULL, NULL, NULL);
        const mb_ss_point *P = &ss.aux;
        out = PyDict_New();
        if (!out ||
            dict_set(out, "indep", int_vec(ss.indep, nd)) ||
            dict_set(out, "dep", int_vec(ss.dep, nc)) ||
            dict_set(out, "q", vec_from(P->q, nq)) ||
            dict_set(out, "qd", vec_from(P->qd, nq)) ||
            dict_set(out, "qdd", vec_from(P->qdd, nq)) ||
            dict_set(out, "lam", vec_from(P->lam, nc)) ||
            dict_set(out, "vdd", vec_from(P->vdd, nd)) ||
            dict_set(out, "M_hat", cm_mat(P->Mh, nd, nd)) ||
            dict_set(out, "H", cm_mat(P->H, nc, nd)) ||
            dict_set(out, "cond", PyFloat_FromDouble(cond)) ||
            dict_set(out, "iterations", PyLong_FromLong(P->iters)) ||
            (want_jac && (dict_set(out, "J1", cm_mat(J1, nd, nd)) ||
                          dict_set(out, "J2", cm_mat(J2, nd, nd)) ||
                          dict_set(out, "MJ1", cm_mat(MJ1, nd, nd)) ||
                          dict_set(out, "MJ2", cm_mat(MJ2, nd, nd)) ||
                          dict_set(out, "Mat", vec_from(Mat, nd)))))
            Py_CLEAR(out);
    }
done:
    if (have)
        mb_ss_free(&ss);
    PyMem_Free(buf);
    Py_XDECREF(Q);
    Py_XDECREF(QD);
    Py_XDECREF(V);
    Py_XDECREF(VD);
    Py_XDECREF(IND);
    return out;
}

PyDoc_STRVAR(mech_ss_recover_doc,
"mech_ss_recover(handle, t, y, log_t, log_part, log_y, parts, tol=0.0, max_iter=0)\n"
"    -> (yfull, qdd, lam)\n--\n\n"
"Full states of reduced outputs y (m, 2 nd) at times t (m,) of a state-space run,\n"
"through the run's log (ss_log_t, ss_log_part, ss_log_y, ss_parts of its result):\n"
"yfull (m, 2 nq), qdd (m, nq), lam (m, nc); NaN rows where Newton fails.");

static PyObject *mech_ss_recover(PyObject *self, PyObject *args, PyObject *kw)
{
    (void)self;
    static char *kwlist[] = {"handle", "t", "y", "log_t", "log_part", "log_y", "parts", "tol",
                             "max_iter", NULL};
    PyObject *ho, *to, *yo, *lto, *lpo, *lyo, *po;
    double tol = 0.0;
    int max_iter = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OOOOOOO|di", kwlist, &ho, &to, &yo, &lto, &lpo,
                                     &lyo, &po, &tol, &max_iter))
        return NULL;
    mech_handle *h = get_handle(ho);
    if (!h)
        return NULL;
    mb_ss ss;
    memset(&ss, 0, sizeof ss);
    PyArrayObject *T = NULL, *Y = NULL, *LT = NULL, *LP = NULL, *LY = NULL, *PA = NULL;
    PyObject *yf = NULL, *qdd = NULL, *lam = NULL, *out = NULL;
    int have = 0;
    if (ss_open(&ss, h, tol, max_iter))
        goto done;
    have = 1;
    ptrdiff_t nq = ss.nq, nc = ss.nc, nd = ss.nd;
    T = (PyArrayObject *)PyArray_FROMANY(to, NPY_DOUBLE, 1, 1, NPY_ARRAY_CARRAY);
    Y = T ? (PyArrayObject *)PyArray_FROMANY(yo, NPY_DOUBLE, 2, 2, NPY_ARRAY_CARRAY) : NULL;
    LT = Y ? (PyArrayObject *)PyArray_FROMANY(lto, NPY_DOUBLE, 1, 1, NPY_ARRAY_CARRAY) : NULL;
    LP = LT ? (PyArrayObject *)PyArray_FROMANY(lpo, NPY_INT, 1, 1, NPY_ARRAY_CARRAY) : NULL;
    LY = LP ? (PyArrayObject *)PyArray_FROMANY(lyo, NPY_DOUBLE, 2, 2, NPY_ARRAY_CARRAY) : NULL;
    PA = LY ? (PyArrayObject *)PyArray_FROMANY(po, NPY_INT, 2, 2, NPY_ARRAY_CARRAY) : NULL;
    if (!PA)
        goto done;
    ptrdiff_t m = PyArray_DIM(T, 0), nlog = PyArray_DIM(LT, 0), npart = PyArray_DIM(PA, 0);
    if (PyArray_DIM(Y, 0) != m || PyArray_DIM(Y, 1) != 2 * nd || PyArray_DIM(LP, 0) != nlog ||
        PyArray_DIM(LY, 0) != nlog || PyArray_DIM(LY, 1) != 2 * nq || PyArray_DIM(PA, 1) != nd) {
        PyErr_SetString(PyExc_ValueError, "mech_ss_recover: inconsistent shapes of t, y and the log.");
        goto done;
    }
    int rc = mb_ss_load_log(&ss, nlog, PyArray_DATA(LT), PyArray_DATA(LP), PyArray_DATA(LY),
                            npart, PyArray_DATA(PA));
    if (rc) {
        PyErr_Format(PyExc_ValueError, "mech_ss_recover: %s", ss.msg);
        goto done;
    }
    {
        npy_intp d0[2] = {(npy_intp)m, (npy_intp)(2 * nq)}, d1[2] = {(npy_intp)m, (npy_intp)nq},
                 d2[2] = {(npy_intp)m, (npy_intp)nc};
        yf = PyArray_SimpleNew(2, d0, NPY_DOUBLE);
        qdd = PyArray_SimpleNew(2, d1, NPY_DOUBLE);
        lam = PyArray_SimpleNew(2, d2, NPY_DOUBLE);
        if (!yf || !qdd || !lam)
            goto done;
        PyThreadState *ts = h->python ? NULL : PyEval_SaveThread();
        rc = ss_rows(&ss, m, PyArray_DATA(T), PyArray_DATA(Y), PyArray_DATA((PyArrayObject *)yf),
                     PyArray_DATA((PyArrayObject *)qdd), PyArray_DATA((PyArrayObject *)lam));
        if (ts)
            PyEval_RestoreThread(ts);
        if (rc == MB_ERR_CALLBACK && PyErr_Occurred())
            goto done;
        PyErr_Clear();
    }
    out = Py_BuildValue("(OOO)", yf, qdd, lam);
done:
    if (have)
        mb_ss_free(&ss);
    Py_XDECREF(T);
    Py_XDECREF(Y);
    Py_XDECREF(LT);
    Py_XDECREF(LP);
    Py_XDECREF(LY);
    Py_XDECREF(PA);
    Py_XDECREF(yf);
    Py_XDECREF(qdd);
    Py_XDECREF(lam);
    return out;
}

PyDoc_STRVAR(mech_set_linalg_doc,
"mech_set_linalg(handle, code) -> None\n--\n\n"
"The linear algebra of the index-1 formulation on this handle from now on (every\n"
"kernel evaluation, projection and run that does not name its own): 0 automatic\n"
"(sparse KLU for a planar model with at least MB_INDEX1_SPARSE_MIN_NQ coordinates,\n"
"else dense), 1 dense, 2 sparse (a RuntimeError at first use when the mechanism\n"
"has no sparse kernels).");

static PyObject *mech_set_linalg(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *ho;
    int code;
    if (!PyArg_ParseTuple(args, "Oi", &ho, &code))
        return NULL;
    mech_handle *h = get_handle(ho);
    if (!h)
        return NULL;
    if (code < 0 || code > 2)
        return PyErr_Format(PyExc_ValueError, "mech_set_linalg: unknown code %d.", code);
    h->linalg = code;
    Py_RETURN_NONE;
}

PyDoc_STRVAR(mech_info_doc,
"mech_info(handle) -> dict\n--\n\n"
"nq, nc, whether a kernel calls Python, the number of contacts and which\n"
"derivative kernels are analytic (True) or left to finite differences (False).");

static PyObject *mech_info(PyObject *self, PyObject *ho)
{
    (void)self;
    mech_handle *h = get_handle(ho);
    if (!h)
        return NULL;
    const mb_mech *m = &h->mech;
    return Py_BuildValue("{s:n,s:n,s:O,s:O,s:O,s:n,s:O,s:{s:O,s:O,s:O,s:O,s:O,s:O,s:O}}",
                         "nq", (Py_ssize_t)h->nq, "nc", (Py_ssize_t)h->nc,
                         "python", h->python ? Py_True : Py_False,
                         "planar", h->planar ? Py_True : Py_False,
                         "spatial", h->spatial ? Py_True : Py_False,
                         "ncontact", (Py_ssize_t)h->ncontact,
                         "mass_constant", m->mass_constant ? Py_True : Py_False,
                         "analytic",
                         "forces_q", m->forces_q ? Py_True : Py_False,
                         "forces_qd", m->forces_qd ? Py_True : Py_False,
                         "phiq_x_q", m->phiq_x_q ? Py_True : Py_False,
                         "phiqT_lam_q", m->phiqT_lam_q ? Py_True : Py_False,
                         "gamma_q", m->gamma_q ? Py_True : Py_False,
                         "gamma_qd", m->gamma_qd ? Py_True : Py_False,
                         "mass_x_q", m->mass_x_q ? Py_True : Py_False);
}

PyMethodDef mb_model_methods[] = {
    {"planar_layout", planar_layout, METH_NOARGS, planar_layout_doc},
    {"mech_planar", (PyCFunction)(void (*)(void))mech_planar, METH_VARARGS | METH_KEYWORDS,
     mech_planar_doc},
    {"mech_system", (PyCFunction)(void (*)(void))mech_system, METH_VARARGS | METH_KEYWORDS,
     mech_system_doc},
    {"spatial_layout", spatial_layout, METH_NOARGS, spatial_layout_doc},
    {"mech_spatial", (PyCFunction)(void (*)(void))mech_spatial, METH_VARARGS | METH_KEYWORDS,
     mech_spatial_doc},
    {"mech_eval", (PyCFunction)(void (*)(void))mech_eval, METH_VARARGS | METH_KEYWORDS,
     mech_eval_doc},
    {"mech_project", (PyCFunction)(void (*)(void))mech_project, METH_VARARGS | METH_KEYWORDS,
     mech_project_doc},
    {"mech_simulate", (PyCFunction)(void (*)(void))mech_simulate, METH_VARARGS | METH_KEYWORDS,
     mech_simulate_doc},
    {"mech_info", mech_info, METH_O, mech_info_doc},
    {"mech_set_linalg", mech_set_linalg, METH_VARARGS, mech_set_linalg_doc},
    {"mech_ss_eval", (PyCFunction)(void (*)(void))mech_ss_eval, METH_VARARGS | METH_KEYWORDS,
     mech_ss_eval_doc},
    {"mech_ss_recover", (PyCFunction)(void (*)(void))mech_ss_recover,
     METH_VARARGS | METH_KEYWORDS, mech_ss_recover_doc},
    {NULL, NULL, 0, NULL}};
