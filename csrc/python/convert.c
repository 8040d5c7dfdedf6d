/* Conversions at the boundary shared by the binding files (convert.h). */
#include "convert.h"
#define NO_IMPORT_ARRAY
#define PY_ARRAY_UNIQUE_SYMBOL MBINT_ARRAY_API
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#include <numpy/arrayobject.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

PyObject *vec_from(const double *x, ptrdiff_t m)
{
    npy_intp dims[1] = {(npy_intp)m};
    PyObject *a = PyArray_SimpleNew(1, dims, NPY_DOUBLE);
    if (a && m > 0)
        memcpy(PyArray_DATA((PyArrayObject *)a), x, (size_t)m * sizeof(double));
    return a;
}

PyObject *mat_from(const double *x, ptrdiff_t rows, ptrdiff_t cols)
{
    npy_intp dims[2] = {(npy_intp)rows, (npy_intp)cols};
    PyObject *a = PyArray_SimpleNew(2, dims, NPY_DOUBLE);
    if (a && rows * cols > 0)
        memcpy(PyArray_DATA((PyArrayObject *)a), x, (size_t)(rows * cols) * sizeof(double));
    return a;
}

PyObject *as_vec_object(PyObject *o, ptrdiff_t m, const char *what)
{
    PyArrayObject *a = (PyArrayObject *)PyArray_FROMANY(o, NPY_DOUBLE, 0, 1,
                                                       NPY_ARRAY_C_CONTIGUOUS | NPY_ARRAY_ALIGNED);
    if (!a)
        return NULL;
    if (m >= 0 && PyArray_SIZE(a) != m) {
        PyErr_Format(PyExc_ValueError, "%s must have %zd entries, got %zd.", what,
                     (Py_ssize_t)m, (Py_ssize_t)PyArray_SIZE(a));
        Py_DECREF(a);
        return NULL;
    }
    return (PyObject *)a;
}

PyObject *as_square_object(PyObject *o, int typenum, ptrdiff_t n, const char *what)
{
    PyArrayObject *a = (PyArrayObject *)PyArray_FROMANY(o, typenum, 2, 2,
                                                       NPY_ARRAY_F_CONTIGUOUS | NPY_ARRAY_ALIGNED);
    if (!a)
        return NULL;
    if (PyArray_DIM(a, 0) != n || PyArray_DIM(a, 1) != n) {
        PyErr_Format(PyExc_ValueError, "%s must have shape (%zd, %zd).", what, (Py_ssize_t)n,
                     (Py_ssize_t)n);
        Py_DECREF(a);
        return NULL;
    }
    return (PyObject *)a;
}

int dict_set(PyObject *d, const char *k, PyObject *v)
{
    if (!v)
        return -1;
    int rc = PyDict_SetItemString(d, k, v);
    Py_DECREF(v);
    return rc;
}

PyObject *call_lead(PyObject *fun, PyObject *args, PyObject *const *lead, int nl)
{
    Py_ssize_t na = args ? PyTuple_GET_SIZE(args) : 0;
    PyObject *stack[16] = {NULL};
    PyObject **argv = stack;
    if (na + nl > 16) {
        argv = PyMem_Malloc((size_t)(na + nl) * sizeof *argv);
        if (!argv)
            return PyErr_NoMemory();
    }
    for (int i = 0; i < nl; i++)
        argv[i] = lead[i];
    for (Py_ssize_t i = 0; i < na; i++)
        argv[nl + i] = PyTuple_GET_ITEM(args, i);
    PyObject *r = PyObject_Vectorcall(fun, argv, (size_t)(na + nl), NULL);
    if (argv != stack)
        PyMem_Free(argv);
    return r;
}

/* What a callback returned, for a message: "complex values (dtype complex128)",
 * "an array of shape (2,) and dtype float64", or "'abc' (str)"; NULL on failure. */
static PyObject *describe_returned(PyObject *r)
{
    if (PyArray_Check(r) || PyList_Check(r) || PyTuple_Check(r) || PyComplex_Check(r) ||
        PyArray_IsScalar(r, Generic)) {
        PyArrayObject *a = (PyArrayObject *)PyArray_FROM_O(r);
        PyObject *out = NULL;
        if (a && PyTypeNum_ISCOMPLEX(PyArray_TYPE(a))) {
            out = PyUnicode_FromFormat("complex values (dtype %S)", (PyObject *)PyArray_DESCR(a));
        } else if (a && PyArray_NDIM(a) > 0) {
            PyObject *shape = PyObject_GetAttrString((PyObject *)a, "shape");
            if (shape)
                out = PyUnicode_FromFormat("an array of shape %S and dtype %S", shape,
                                           (PyObject *)PyArray_DESCR(a));
            Py_XDECREF(shape);
        }
        Py_XDECREF(a);
        if (out)
            return out;
        PyErr_Clear();
    }
    return PyUnicode_FromFormat("%.80R (%s)", r, Py_TYPE(r)->tp_name);
}

void returned_error(PyObject *r, const char *who, const char *expected)
{
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    if (!type)
        return;
    PyErr_NormalizeException(&type, &value, &tb);
    if (value && tb)
        PyException_SetTraceback(value, tb);
    int is_type = PyErr_GivenExceptionMatches(type, PyExc_TypeError);
    PyObject *desc = NULL;
    if (value && (is_type || PyErr_GivenExceptionMatches(type, PyExc_ValueError)))
        desc = describe_returned(r);
    if (!desc) {  /* another kind of failure (MemoryError...): as it is */
        PyErr_Clear();
        PyErr_Restore(type, value, tb);
        return;
    }
    PyErr_Format(is_type ? PyExc_TypeError : PyExc_ValueError, "%s returned %U; expected %s.",
                 who, desc, expected);
    Py_DECREF(desc);
    PyObject *t2, *v2, *tb2;
    PyErr_Fetch(&t2, &v2, &tb2);
    PyErr_NormalizeException(&t2, &v2, &tb2);
    if (v2)
        PyException_SetCause(v2, value);  /* takes over value */
    else
        Py_DECREF(value);
    Py_DECREF(type);
    Py_XDECREF(tb);
    PyErr_Restore(t2, v2, tb2);
}

PyObject *returned_vector_object(PyObject *r, int maxdim, ptrdiff_t n, const char *who,
                                 const char *fmt)
{
    PyArrayObject *a = (PyArrayObject *)PyArray_FROMANY(r, NPY_DOUBLE, 0, maxdim,
                                                       NPY_ARRAY_C_CONTIGUOUS | NPY_ARRAY_ALIGNED);
    if (!a) {
        char expected[64];
        snprintf(expected, sizeof expected, "%zd real numbers", (Py_ssize_t)n);
        returned_error(r, who, expected);
    }
    Py_DECREF(r);
    if (!a)
        return NULL;
    if (PyArray_SIZE(a) != n) {
        PyErr_Format(PyExc_ValueError, fmt, (Py_ssize_t)PyArray_SIZE(a), (Py_ssize_t)n);
        Py_DECREF(a);
        return NULL;
    }
    return (PyObject *)a;
}

int returned_matrix(PyObject *r, ptrdiff_t n, double *J, ptrdiff_t ld, const char *what)
{
    /* a scipy.sparse matrix (or anything with toarray()) is densified */
    if (!PyArray_Check(r) && PyObject_HasAttrString(r, "toarray")) {
        PyObject *d = PyObject_CallMethod(r, "toarray", NULL);
        Py_DECREF(r);
        if (!d)
            return -1;
        r = d;
    }
    PyArrayObject *a = (PyArrayObject *)PyArray_FROMANY(r, NPY_DOUBLE, 0, 2, NPY_ARRAY_ALIGNED);
    if (!a)
        returned_error(r, what, "an (n, n) array of real numbers");
    Py_DECREF(r);
    if (!a)
        return -1;
    /* shape (n, n); for n == 1 also a scalar (a flat (n*n,) array is refused: its
     * layout is ambiguous) */
    int ok = PyArray_NDIM(a) == 2 ? PyArray_DIM(a, 0) == n && PyArray_DIM(a, 1) == n
                                  : n == 1 && PyArray_NDIM(a) == 0;
    if (!ok) {
        PyErr_Format(PyExc_ValueError, "%s must return an array of shape (%zd, %zd), got %s%zd "
                     "entries.", what, (Py_ssize_t)n, (Py_ssize_t)n,
                     PyArray_NDIM(a) == 1 ? "a 1-D array of " : "", (Py_ssize_t)PyArray_SIZE(a));
        Py_DECREF(a);
        return -1;
    }
    if (PyArray_NDIM(a) < 2) {  /* n == 1 */
        J[0] = *(double *)PyArray_DATA(a);
    } else {
        for (ptrdiff_t c = 0; c < n; c++)
            for (ptrdiff_t i = 0; i < n; i++)
                J[c * ld + i] = *(double *)PyArray_GETPTR2(a, i, c);
    }
    Py_DECREF(a);
    return 0;
}

int capsule_signature(PyObject *capsule, char *sig, size_t len, void **ptr, void **ud)
{
    const char *name = PyCapsule_GetName(capsule);
    if (!name && PyErr_Occurred())
        return -1;
    size_t k = 0;
    for (const char *p = name ? name : ""; *p && k + 1 < len; p++) {
        if (strncmp(p, "const", 5) == 0) {
            p += 4;
            continue;
        }
        if (*p != ' ')
            sig[k++] = *p;
    }
    sig[k] = '\0';
    if (ptr) {
        *ptr = PyCapsule_GetPointer(capsule, name);
        if (!*ptr)
            return -1;
    }
    if (ud) {
        *ud = PyCapsule_GetContext(capsule);
        if (PyErr_Occurred())
            return -1;
    }
    return 0;
}

/* new reference to a C-contiguous float64 table of shape (rows, cols), rows
 * free when rows < 0 */
PyObject *as_table_object(PyObject *o, ptrdiff_t rows, ptrdiff_t cols, const char *what)
{
    PyArrayObject *a = (PyArrayObject *)PyArray_FROMANY(o, NPY_DOUBLE, 2, 2,
                                                       NPY_ARRAY_C_CONTIGUOUS | NPY_ARRAY_ALIGNED);
    if (!a)
        return NULL;
    if ((rows >= 0 && PyArray_DIM(a, 0) != rows) || PyArray_DIM(a, 1) != cols) {
        PyErr_Format(PyExc_ValueError, "%s must have shape (%s, %zd), got (%zd, %zd).", what,
                     rows >= 0 ? "rows" : "n", (Py_ssize_t)cols, (Py_ssize_t)PyArray_DIM(a, 0),
                     (Py_ssize_t)PyArray_DIM(a, 1));
        Py_DECREF(a);
        return NULL;
    }
    const double *x = PyArray_DATA(a);
    for (npy_intp k = 0; k < PyArray_SIZE(a); k++)
        if (!isfinite(x[k])) {
            PyErr_Format(PyExc_ValueError, "%s: entry %zd is not finite.", what, (Py_ssize_t)k);
            Py_DECREF(a);
            return NULL;
        }
    return (PyObject *)a;
}

/* integer stored in a table entry, or -1 with ValueError when it is not one in [lo, hi) */
int table_int(double v, int lo, int hi, const char *what, ptrdiff_t row, const char *col,
              int *out)
{
    if (!(v == floor(v)) || v < lo || v >= hi) {
        char num[32];  /* PyErr_Format has no %g */
        snprintf(num, sizeof num, "%g", v);
        PyErr_Format(PyExc_ValueError, "%s row %zd: %s = %s must be an integer in [%d, %d).",
                     what, (Py_ssize_t)row, col, num, lo, hi);
        return -1;
    }
    *out = (int)v;
    return 0;
}
