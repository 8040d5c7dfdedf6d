/* The model handle's evaluations (mech_py.h): _core.mech_eval (a kernel of the mb_mech
 * table, or the index-1 formulation's q'', f and df/dy, at one point or a batch) and
 * _core.mech_project (the projection onto the constraints, project.h). */
#include "mech_py.h"
#define NO_IMPORT_ARRAY
#define PY_ARRAY_UNIQUE_SYMBOL MBINT_ARRAY_API
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#include <numpy/arrayobject.h>
#include <string.h>
#include "convert.h"
#include "index1.h"
#include "model.h"
#include "status.h"

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

const char mech_eval_doc[] =
"mech_eval(handle, kernel, t, q, qd=None, alpha=0.0, beta=0.0) -> ndarray\n--\n\n"
"Evaluate a kernel at one point (q of shape (nq,)) or at m points (q of shape\n"
"(m, nq), t scalar or (m,)).  kernel: phi, phi_q, phi_t, gamma, mass, forces,\n"
"forces_q, forces_qd, phiq_x_q (qd = x, size nq), phiqT_lam_q (qd = lambda, size\n"
"nc), gamma_q, gamma_qd, energy (kinetic, potential), contact_gaps, acc (q'' then\n"
"lambda from the index-1 system with Baumgarte alpha, beta), rhs (f of y = (q, qd)),\n"
"jac (df/dy), mass_x_q ((M x)_q, qd = x).  Matrices come back with shape (rows,\n"
"cols) per point.";

PyObject *mech_eval(PyObject *self, PyObject *args, PyObject *kw)
{
    (void)self;
    static char *kwlist[] = {"handle", "kernel", "t", "q", "qd", "alpha", "beta", NULL};
    PyObject *ho, *to, *qo, *bo = Py_None;
    const char *kname;
    double alpha = 0.0, beta = 0.0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OsOO|Odd", kwlist, &ho, &kname, &to, &qo, &bo,
                                     &alpha, &beta))
        return NULL;
    mech_handle *h = mech_handle_get(ho);
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

const char mech_project_doc[] =
"mech_project(handle, t, q, qd, tol=0.0, max_iter=0) -> (q, qd, res_pos, res_vel)\n--\n\n"
"Project (q, qd) onto Phi(t, q) = 0 and Phi_q qd + Phi_t = 0 (minimum-norm Newton\n"
"correction, mb_index1_project); tol, max_iter <= 0 keep the formulation's defaults.\n"
"res_pos, res_vel: the max-norms of the residuals after the projection.";

PyObject *mech_project(PyObject *self, PyObject *args, PyObject *kw)
{
    (void)self;
    static char *kwlist[] = {"handle", "t", "q", "qd", "tol", "max_iter", NULL};
    PyObject *ho, *qo, *vo;
    double t, tol = 0.0;
    int max_iter = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OdOO|di", kwlist, &ho, &t, &qo, &vo, &tol,
                                     &max_iter))
        return NULL;
    mech_handle *h = mech_handle_get(ho);
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

