/* _core.form_probe: a formulation's f(t, y) and df/dy at given states y, outside a run
 * (tests against differences, per-call benchmarks).  jac_fd: forward differences of that
 * f as form_joint.c's jac_by_differences takes them (2 n + 1 calls of f, step
 * sqrt(DBL_EPSILON) max(1, |y_j|)), so that the two Jacobians are timed in one process. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#define NO_IMPORT_ARRAY
#define PY_ARRAY_UNIQUE_SYMBOL MBINT_ARRAY_API
#include <numpy/arrayobject.h>
#include <math.h>
#include <string.h>
#include "mech_py.h"
#include "formulation.h"
#include "status.h"

const char form_probe_doc[] =
"form_probe(handle, formulation, y, what, t=0.0, tree=None, reps=1) -> ndarray\n--\n\n"
"f (what='rhs', shape (m, n)) or df/dy (what='jac': the formulation's own; 'jac_fd':\n"
"forward differences of f, 2 n + 1 calls; shape (m, n, n)) of the formulation\n"
"(a name, e.g. 'joint') over the mechanism of handle at the m states y (m, n).\n"
"reps: each evaluation repeated (timing).  tree: the joint tree's capsule.";

static int fd_jac(const mb_problem *p, double t, const double *y, double *J, double *w,
                  ptrdiff_t n)
{
    double *f0 = w, *f1 = w + n, *yp = w + 2 * n;
    int rc = p->rhs(t, y, f0, p->ctx);
    memcpy(yp, y, (size_t)n * sizeof(double));
    for (ptrdiff_t j = 0; j < n && rc == MB_OK; j++) {
        double h = 1.4901161193847656e-08 * fmax(1.0, fabs(y[j]));
        yp[j] = y[j] + h;
        h = yp[j] - y[j];
        rc = p->rhs(t, yp, f1, p->ctx);
        yp[j] = y[j];
        for (ptrdiff_t i = 0; i < n; i++) J[j * n + i] = (f1[i] - f0[i]) / h;
    }
    return rc;
}

PyObject *form_probe(PyObject *self, PyObject *args, PyObject *kw)
{
    (void)self;
    static char *kwlist[] = {"handle", "formulation", "y", "what", "t", "tree", "reps", NULL};
    PyObject *ho, *yo, *tree = Py_None, *out = NULL;
    const char *fname, *what;
    double t = 0.0;
    int reps = 1;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OsOs|dOi", kwlist, &ho, &fname, &yo, &what, &t,
                                     &tree, &reps))
        return NULL;
    mech_handle *h = mech_handle_get(ho);
    if (!h)
        return NULL;
    int kind = mb_form_kind_of(fname), mode = !strcmp(what, "rhs") ? 0 : !strcmp(what, "jac") ? 1
                                               : !strcmp(what, "jac_fd") ? 2 : -1;
    if (kind < 0)
        return PyErr_Format(PyExc_ValueError, "formulation: unknown formulation '%s'.", fname);
    if (mode < 0)
        return PyErr_Format(PyExc_ValueError, "what: 'rhs', 'jac' or 'jac_fd', got '%s'.", what);
    if (reps < 1)
        return PyErr_Format(PyExc_ValueError, "reps: at least 1, got %d.", reps);
    mb_form_options o;
    memset(&o, 0, sizeof o);
    if (tree != Py_None) {
        if (!(o.tree = jtree_get(tree)))
            return NULL;
        o.tree_body = jtree_body(tree);
    }
    mb_formulation F;
    if (mb_form_open(&F, kind, &h->mech, &o) != MB_OK)
        return PyErr_Format(PyExc_ValueError, "formulation='%s': %s", fname, F.msg);
    mb_problem p;
    mb_form_problem(&F, &p);
    ptrdiff_t n = F.n;
    PyArrayObject *Y = (PyArrayObject *)PyArray_FROMANY(yo, NPY_DOUBLE, 2, 2, NPY_ARRAY_CARRAY);
    double *w = PyMem_Malloc((size_t)(3 * n + n * n) * sizeof(double));
    if (!Y || !w || PyArray_DIM(Y, 1) != n) {
        if (Y && w)
            PyErr_Format(PyExc_ValueError, "y must have shape (m, %zd).", (Py_ssize_t)n);
        else if (!w)
            PyErr_NoMemory();
        goto done;
    }
    npy_intp m = PyArray_DIM(Y, 0), dims[3] = {m, (npy_intp)n, (npy_intp)n};
    if (mode == 1 && !p.jac) {
        PyErr_SetString(PyExc_ValueError, "this formulation has no Jacobian.");
        goto done;
    }
    PyObject *arr = PyArray_SimpleNew(mode ? 3 : 2, dims, NPY_DOUBLE);
    if (!arr)
        goto done;
    const double *yv = PyArray_DATA(Y);
    double *ov = PyArray_DATA((PyArrayObject *)arr);
    int rc = MB_OK;
    PyThreadState *ts = h->python ? NULL : PyEval_SaveThread();
    for (npy_intp k = 0; k < m && rc == MB_OK; k++)
        for (int r = 0; r < reps && rc == MB_OK; r++) {
            const double *y = yv + k * n;
            if (mode == 0)
                rc = p.rhs(t, y, ov + k * n, p.ctx);
            else if (mode == 1)
                rc = p.jac(t, y, w + 3 * n, n, p.ctx);
            else
                rc = fd_jac(&p, t, y, w + 3 * n, w, n);
            for (ptrdiff_t i = 0; mode && i < n; i++)  /* column-major -> (row, col) */
                for (ptrdiff_t j = 0; j < n; j++) ov[(k * n + i) * n + j] = w[3 * n + j * n + i];
        }
    if (ts)
        PyEval_RestoreThread(ts);
    if (rc != MB_OK && !PyErr_Occurred()) {
        PyErr_Format(PyExc_RuntimeError, "form_probe: %s failed: %s (status %d).", what,
                     mb_status_str(rc), rc);
        Py_DECREF(arr);
        goto done;
    }
    out = arr;
done:
    Py_XDECREF(Y);
    PyMem_Free(w);
    mb_form_close(&F);
    return out;
}
