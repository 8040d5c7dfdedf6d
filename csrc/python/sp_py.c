/* mbint._core.sp_propose: the fast/slow split of singular_perturbation proposed from a
 * Jacobian (mb_sp_propose, methods/singular_perturbation.h), for
 * mbint.propose_split().  The kernel run without fast= uses the same function. */
#include "method_options.h"
#define NO_IMPORT_ARRAY
#define PY_ARRAY_UNIQUE_SYMBOL MBINT_ARRAY_API
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#include <numpy/arrayobject.h>
#include <string.h>
#include "singular_perturbation.h"
#include "status.h"

PyDoc_STRVAR(sp_propose_doc,
"sp_propose(J, min_ratio=10.0) -> dict\n--\n\n"
"The fast components of singular_perturbation proposed from the Jacobian J (n, n):\n"
"fast (int array), participation (n: diagonal of the spectral projector onto the fast\n"
"modes), eigenvalues (complex, n), ratio (the largest gap of the eigenvalue moduli),\n"
"threshold (the smallest fast modulus).  See mb_sp_propose.");

static PyObject *sp_propose(PyObject *self, PyObject *args, PyObject *kw)
{
    (void)self;
    static char *kwlist[] = {"J", "min_ratio", NULL};
    PyObject *jo;
    double min_ratio = MB_SP_MIN_RATIO;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O|d", kwlist, &jo, &min_ratio))
        return NULL;
    if (!(min_ratio >= 1.0)) {
        char num[32];  /* PyErr_Format has no %g */
        snprintf(num, sizeof num, "%g", min_ratio);
        return PyErr_Format(PyExc_ValueError, "min_ratio must be at least 1, got %s.", num);
    }
    PyArrayObject *J = (PyArrayObject *)PyArray_FROMANY(jo, NPY_DOUBLE, 2, 2,
                                                        NPY_ARRAY_F_CONTIGUOUS | NPY_ARRAY_ALIGNED);
    if (!J)
        return NULL;
    ptrdiff_t n = PyArray_DIM(J, 0);
    if (PyArray_DIM(J, 1) != n) {
        Py_DECREF(J);
        return PyErr_Format(PyExc_ValueError, "J must be square, got shape (%td, %td).", n,
                            (ptrdiff_t)PyArray_DIM(J, 1));
    }
    size_t nn = (size_t)(n > 0 ? n : 1);
    double *buf = PyMem_Malloc((4 * nn + mb_sp_propose_work_size(n)) * sizeof(double));
    ptrdiff_t *fast = PyMem_Malloc(nn * sizeof(ptrdiff_t));
    PyObject *out = NULL;
    if (!buf || !fast) {
        PyErr_NoMemory();
        goto done;
    }
    double *part = buf, *wr = part + nn, *wi = wr + nn, *work = wi + nn;
    ptrdiff_t m = 0;
    double ratio = 0.0, thr = 0.0;
    int rc = mb_sp_propose(n, PyArray_DATA(J), n > 0 ? n : 1, min_ratio, fast, &m, part, wr,
                           wi, &ratio, &thr, work);
    if (rc != MB_OK) {
        PyErr_Format(PyExc_ValueError, "J: the Schur form failed (%s); is J finite?",
                     mb_status_str(rc));
        goto done;
    }
    npy_intp dn = (npy_intp)n, dm = (npy_intp)m;
    PyArrayObject *F = (PyArrayObject *)PyArray_SimpleNew(1, &dm, NPY_INTP);
    PyArrayObject *Pa = (PyArrayObject *)PyArray_SimpleNew(1, &dn, NPY_DOUBLE);
    PyArrayObject *E = (PyArrayObject *)PyArray_SimpleNew(1, &dn, NPY_CDOUBLE);
    if (F && Pa && E) {
        for (ptrdiff_t i = 0; i < m; i++)
            ((npy_intp *)PyArray_DATA(F))[i] = (npy_intp)fast[i];
        memcpy(PyArray_DATA(Pa), part, (size_t)n * sizeof(double));
        double *e = PyArray_DATA(E);
        for (ptrdiff_t i = 0; i < n; i++) {
            e[2 * i] = wr[i];
            e[2 * i + 1] = wi[i];
        }
        out = Py_BuildValue("{s:O,s:O,s:O,s:d,s:d}", "fast", F, "participation", Pa,
                            "eigenvalues", E, "ratio", ratio, "threshold", thr);
    }
    Py_XDECREF(F);
    Py_XDECREF(Pa);
    Py_XDECREF(E);
done:
    Py_DECREF(J);
    PyMem_Free(buf);
    PyMem_Free(fast);
    return out;
}

PyMethodDef mb_sp_methods[] = {
    {"sp_propose", (PyCFunction)(void (*)(void))sp_propose, METH_VARARGS | METH_KEYWORDS,
     sp_propose_doc},
    {NULL, NULL, 0, NULL}};
