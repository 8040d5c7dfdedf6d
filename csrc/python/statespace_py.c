/* The state-space formulation from Python (mech_py.h): _core.mech_ss_eval (the
 * formulation partitioned at a state and evaluated at a point: statespace.h) and
 * _core.mech_ss_recover (full states of a run's reduced outputs through its log); and the
 * state-space part of a simulation's result (mech_ss_rows, mech_ss_export). */
#include "mech_py.h"
#define NO_IMPORT_ARRAY
#define PY_ARRAY_UNIQUE_SYMBOL MBINT_ARRAY_API
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#include <numpy/arrayobject.h>
#include <math.h>
#include <string.h>
#include "convert.h"
#include "statespace.h"
#include "status.h"

/* full state rows of m reduced rows y (2 nd each) at times t through the log:
 * yf (m x 2 nq), qdd (m x nq), lam (m x nc) (NULL: not wanted); a row that cannot be
 * recovered is NaN; returns the first failure's status or 0 */
int mech_ss_rows(mb_ss *ss, ptrdiff_t m, const double *t, const double *y, double *yf,
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
int mech_ss_export(PyObject *d, const mb_ss *ss)
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

/* ---- evaluation at a point and recovery of full states after a run ---- */

const char mech_ss_eval_doc[] =
"mech_ss_eval(handle, t0, q0, qd0, t, v=None, vd=None, indep=None, tol=0.0,\n"
"             max_iter=0, jac=True) -> dict\n--\n\n"
"The state-space formulation (csrc/mbs/statespace.c) partitioned at the consistent\n"
"(t0, q0, qd0) (Gauss-Jordan with full pivoting, or the independent coordinates\n"
"indep), with Newton for the dependent positions starting there, evaluated at\n"
"(t, v, vd) (default: v, vd of (q0, qd0)): indep, dep, q, qd, qdd, lam, vdd, M_hat (nd x nd), cond (cond_1 Phi_u),\n"
"H (nc x nd), iterations (Newton); with jac also J1, J2, MJ1, MJ2 (M^ J1, M^ J2:\n"
"the right-hand sides of RN eqs 31, 35) and Mat (M^ dv''/dt, eq 46).  ValueError\n"
"when no nonsingular Phi_u exists at q0 (message names the dependent rows), or\n"
"RuntimeError when the evaluation fails (Newton).";

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

PyObject *mech_ss_eval(PyObject *self, PyObject *args, PyObject *kw)
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
    mech_handle *h = mech_handle_get(ho);
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

const char mech_ss_recover_doc[] =
"mech_ss_recover(handle, t, y, log_t, log_part, log_y, parts, tol=0.0, max_iter=0)\n"
"    -> (yfull, qdd, lam)\n--\n\n"
"Full states of reduced outputs y (m, 2 nd) at times t (m,) of a state-space run,\n"
"through the run's log (ss_log_t, ss_log_part, ss_log_y, ss_parts of its result):\n"
"yfull (m, 2 nq), qdd (m, nq), lam (m, nc); NaN rows where Newton fails.";

PyObject *mech_ss_recover(PyObject *self, PyObject *args, PyObject *kw)
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
    mech_handle *h = mech_handle_get(ho);
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
        rc = mech_ss_rows(&ss, m, PyArray_DATA(T), PyArray_DATA(Y), PyArray_DATA((PyArrayObject *)yf),
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

