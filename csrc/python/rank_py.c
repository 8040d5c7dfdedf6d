/* What mbint.check_initial_conditions asks of the C side (mech_py.h): below
 * SPARSE_MIN_NQ coordinates _core.mech_initial_check (the residuals and the singular
 * values of Phi_q in one call, mbs/initial.h); from there on _core.mech_phi_q_sparse
 * (Phi_q as (row, column, value) triplets from the mechanism's sparse kernels, mech.h
 * mb_mech_sparse) and _core.gram_dependent (the dependent rows of P from the envelope
 * LDL^T of G = P P^T, linalg/envelope.h). */
#include "mech_py.h"
#define NO_IMPORT_ARRAY
#define PY_ARRAY_UNIQUE_SYMBOL MBINT_ARRAY_API
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#include <numpy/arrayobject.h>
#include <string.h>
#include "envelope.h"
#include "initial.h"
#include "status.h"

const char mech_initial_check_doc[] =
"mech_initial_check(handle, t, q, qd, rtol) -> (scale, position, velocity, rank, sv)\n--\n\n"
"In one call (mbs/initial.h; dense: for small mechanisms): scale = max(|q|, |qd|),\n"
"max |Phi(t, q)|, max |Phi_q qd + Phi_t|, the rank of Phi_q(t, q) (singular values\n"
"above rtol max(1, s_max)) and its min(nc, nq) singular values sv (descending).\n"
"ValueError when Phi_q is not finite, RuntimeError when a kernel fails.";

PyObject *mech_initial_check(PyObject *self, PyObject *args, PyObject *kw)
{
    (void)self;
    static char *kwlist[] = {"handle", "t", "q", "qd", "rtol", NULL};
    PyObject *ho, *qo, *vo;
    double t, rtol;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OdOOd", kwlist, &ho, &t, &qo, &vo, &rtol))
        return NULL;
    mech_handle *h = mech_handle_get(ho);
    if (!h)
        return NULL;
    PyArrayObject *Q = (PyArrayObject *)PyArray_FROMANY(qo, NPY_DOUBLE, 1, 1, NPY_ARRAY_CARRAY);
    PyArrayObject *V = Q ? (PyArrayObject *)PyArray_FROMANY(vo, NPY_DOUBLE, 1, 1,
                                                             NPY_ARRAY_CARRAY) : NULL;
    PyArrayObject *S = NULL;
    PyObject *out = NULL;
    if (!V)
        goto done;
    if (PyArray_DIM(Q, 0) != h->nq || PyArray_DIM(V, 0) != h->nq) {
        PyErr_Format(PyExc_ValueError, "q and qd must have shape (%zd,).", (Py_ssize_t)h->nq);
        goto done;
    }
    npy_intp k = (npy_intp)(h->nc < h->nq ? h->nc : h->nq);
    S = (PyArrayObject *)PyArray_SimpleNew(1, &k, NPY_DOUBLE);
    if (!S)
        goto done;
    double scale = 0.0, pos = 0.0, vel = 0.0;
    ptrdiff_t rank = 0;
    int rc;
    PyThreadState *ts = h->python ? NULL : PyEval_SaveThread();
    rc = mb_initial_check(&h->mech, t, PyArray_DATA(Q), PyArray_DATA(V), rtol, &scale, &pos,
                          &vel, PyArray_DATA(S), &rank);
    if (ts)
        PyEval_RestoreThread(ts);
    if (rc == MB_ERR_MEM)
        PyErr_NoMemory();
    else if (rc == MB_ERR_NONFINITE || rc == MB_ERR_LINALG)
        PyErr_Format(PyExc_ValueError, "the constraint Jacobian Phi_q is not finite at q0 "
                     "(or its SVD did not converge): %s", mb_status_str(rc));
    else if (rc != MB_OK && !PyErr_Occurred())
        PyErr_Format(PyExc_RuntimeError, "a constraint kernel failed at q0: %s (status %d).",
                     mb_status_str(rc), rc);
    if (rc == MB_OK)
        out = Py_BuildValue("dddnO", scale, pos, vel, (Py_ssize_t)rank, S);
done:
    Py_XDECREF(S);
    Py_XDECREF(Q);
    Py_XDECREF(V);
    return out;
}

const char mech_phi_q_sparse_doc[] =
"mech_phi_q_sparse(handle, t, q) -> (rows, cols, values) or None\n--\n\n"
"Phi_q(t, q) (nc x nq) as triplets from the mechanism's sparse kernels (int32 rows and\n"
"columns, float64 values; an entry may repeat, its values are summed); None when the\n"
"mechanism has none (a MechanicalSystem, a SpatialModel, a PlanarModel with Python\n"
"forces).  O(nnz) memory and time.";

PyObject *mech_phi_q_sparse(PyObject *self, PyObject *args, PyObject *kw)
{
    (void)self;
    static char *kwlist[] = {"handle", "t", "q", NULL};
    PyObject *ho, *qo;
    double t;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OdO", kwlist, &ho, &t, &qo))
        return NULL;
    mech_handle *h = mech_handle_get(ho);
    if (!h)
        return NULL;
    const mb_mech *m = &h->mech;
    if (!m->sparse)
        Py_RETURN_NONE;
    PyArrayObject *Q = (PyArrayObject *)PyArray_FROMANY(qo, NPY_DOUBLE, 1, 1, NPY_ARRAY_CARRAY);
    if (!Q)
        return NULL;
    if (PyArray_DIM(Q, 0) != h->nq) {
        Py_DECREF(Q);
        return PyErr_Format(PyExc_ValueError, "q must have shape (%zd,).", (Py_ssize_t)h->nq);
    }
    ptrdiff_t npq = 0, nc_ = 0;
    int rc = m->sparse->sizes(&npq, &nc_, m->ctx);
    PyObject *out = NULL;
    PyArrayObject *R = NULL, *C = NULL, *V = NULL;
    int *cr = NULL, *cc = NULL;
    if (rc != MB_OK)
        goto fail;
    npy_intp dn = (npy_intp)npq;
    R = (PyArrayObject *)PyArray_SimpleNew(1, &dn, NPY_INT32);
    C = (PyArrayObject *)PyArray_SimpleNew(1, &dn, NPY_INT32);
    V = (PyArrayObject *)PyArray_SimpleNew(1, &dn, NPY_DOUBLE);
    cr = PyMem_Malloc(((size_t)nc_ + 1) * sizeof *cr);
    cc = PyMem_Malloc(((size_t)nc_ + 1) * sizeof *cc);
    if (!R || !C || !V || !cr || !cc) {
        if (!PyErr_Occurred())
            PyErr_NoMemory();
        goto done;
    }
    rc = m->sparse->pattern(PyArray_DATA(R), PyArray_DATA(C), cr, cc, m->ctx);
    if (rc == MB_OK)
        rc = m->sparse->phi_q(t, PyArray_DATA(Q), PyArray_DATA(V), m->ctx);
    if (rc != MB_OK)
        goto fail;
    out = Py_BuildValue("OOO", R, C, V);
    goto done;
fail:
    PyErr_Format(PyExc_RuntimeError, "the sparse Phi_q kernel failed: %s (status %d).",
                 mb_status_str(rc), rc);
done:
    PyMem_Free(cr);
    PyMem_Free(cc);
    Py_XDECREF(R);
    Py_XDECREF(C);
    Py_XDECREF(V);
    Py_DECREF(Q);
    return out;
}

const char gram_dependent_doc[] =
"gram_dependent(indptr, indices, data, rtol2) -> (dependent, rank)\n--\n\n"
"The rows of P (m x n) that depend on earlier rows, from G = P P^T (m x m) given in\n"
"CSR (at least its lower triangle; entries above the diagonal are ignored): the\n"
"envelope LDL^T of G in the natural order (linalg/envelope.h), row i dependent when\n"
"its pivot is at most rtol2 |P_i|^2.  dependent: bool array (m,); rank: the number\n"
"of independent rows.  Memory and time linear in the envelope of G.";

PyObject *gram_dependent(PyObject *self, PyObject *args, PyObject *kw)
{
    (void)self;
    static char *kwlist[] = {"indptr", "indices", "data", "rtol2", NULL};
    PyObject *po, *io, *dO;
    double rtol2;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OOOd", kwlist, &po, &io, &dO, &rtol2))
        return NULL;
    PyArrayObject *P = (PyArrayObject *)PyArray_FROMANY(po, NPY_INTP, 1, 1, NPY_ARRAY_CARRAY);
    PyArrayObject *Ix = (PyArrayObject *)PyArray_FROMANY(io, NPY_INTP, 1, 1, NPY_ARRAY_CARRAY);
    PyArrayObject *D = (PyArrayObject *)PyArray_FROMANY(dO, NPY_DOUBLE, 1, 1, NPY_ARRAY_CARRAY);
    PyObject *out = NULL;
    PyArrayObject *dep = NULL;
    if (!P || !Ix || !D)
        goto done;
    npy_intp m = PyArray_DIM(P, 0) - 1;
    const npy_intp *ptr = PyArray_DATA(P);
    npy_intp nnz = PyArray_DIM(Ix, 0);
    if (m < 0 || PyArray_DIM(D, 0) != nnz || ptr[0] != 0 || ptr[m] != nnz) {
        PyErr_SetString(PyExc_ValueError, "gram_dependent: indptr, indices and data do not "
                                          "form a CSR matrix.");
        goto done;
    }
    for (npy_intp i = 0; i < m; i++)
        if (ptr[i + 1] < ptr[i]) {
            PyErr_SetString(PyExc_ValueError, "gram_dependent: indptr must not decrease.");
            goto done;
        }
    dep = (PyArrayObject *)PyArray_ZEROS(1, &m, NPY_BOOL, 0);
    if (!dep)
        goto done;
    ptrdiff_t rank = 0;
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = mb_gram_dependent((ptrdiff_t)m, (const ptrdiff_t *)ptr, PyArray_DATA(Ix), PyArray_DATA(D),
                           rtol2, PyArray_DATA(dep), &rank);
    Py_END_ALLOW_THREADS
    if (rc == MB_ERR_MEM) {
        PyErr_NoMemory();
        goto done;
    }
    if (rc != MB_OK) {
        PyErr_Format(PyExc_ValueError, "gram_dependent: %s (a column out of range, a negative "
                     "or non-finite diagonal, or a negative rtol2).", mb_status_str(rc));
        goto done;
    }
    out = Py_BuildValue("On", dep, (Py_ssize_t)rank);
done:
    Py_XDECREF(dep);
    Py_XDECREF(P);
    Py_XDECREF(Ix);
    Py_XDECREF(D);
    return out;
}
