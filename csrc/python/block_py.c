/* mbint._core.block_coefficients and block_stability: the B, d of the block methods
 * lstable_block / astable_block (methods/block_lstable.h) for given options, and their
 * stability function R(z), for mbint.stability and the tests. */
#include "method_options.h"
#define NO_IMPORT_ARRAY
#define PY_ARRAY_UNIQUE_SYMBOL MBINT_ARRAY_API
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#include <numpy/arrayobject.h>
#include <string.h>
#include "block_lstable.h"
#include "status.h"

/* the coefficients of method (lstable_block / astable_block) with the options dict o */
static int resolve(const char *method, PyObject *o, mb_block_coeffs *co)
{
    int variant;
    if (strcmp(method, "lstable_block") == 0)
        variant = MB_BLOCK_LSTABLE;
    else if (strcmp(method, "astable_block") == 0)
        variant = MB_BLOCK_ASTABLE;
    else {
        PyErr_Format(PyExc_ValueError, "method must be 'lstable_block' or 'astable_block', got "
                     "'%s'.", method);
        return -1;
    }
    void *opt = NULL;
    if (mb_py_method_options_convert(method, o, 0, &opt))
        return -1;
    char msg[300];
    int rc = mb_block_resolve(variant, opt, co, NULL, msg, sizeof msg);
    PyMem_Free(opt);
    if (rc != MB_OK) {
        PyErr_SetString(PyExc_ValueError, msg);
        return -1;
    }
    return 0;
}

static PyObject *vec(const double *x, npy_intp n)
{
    PyObject *a = PyArray_SimpleNew(1, &n, NPY_DOUBLE);
    if (a)
        memcpy(PyArray_DATA((PyArrayObject *)a), x, (size_t)n * sizeof(double));
    return a;
}

PyDoc_STRVAR(block_coefficients_doc,
"block_coefficients(method, options) -> dict\n--\n\n"
"B (r, r), d (r,), the nodes c (r,) and the constants mu (r,) of LS eqs 5, 8, 9 for h = 1\n"
"(method 'lstable_block' or 'astable_block', options a dict of its options or None), the\n"
"Pade degrees k, j matched, the classical order and the stage order.");

static PyObject *block_coefficients(PyObject *self, PyObject *args)
{
    (void)self;
    const char *method;
    PyObject *o = Py_None;
    if (!PyArg_ParseTuple(args, "s|O", &method, &o))
        return NULL;
    mb_block_coeffs co;
    if (resolve(method, o, &co))
        return NULL;
    npy_intp dims[2] = {co.r, co.r};
    PyObject *B = PyArray_SimpleNew(2, dims, NPY_DOUBLE);  /* C order = row-major */
    if (!B)
        return NULL;
    memcpy(PyArray_DATA((PyArrayObject *)B), co.B, (size_t)(co.r * co.r) * sizeof(double));
    PyObject *d = vec(co.d, co.r), *c = vec(co.c, co.r), *mu = vec(co.mu, co.r);
    PyObject *out = NULL;
    if (d && c && mu)
        out = Py_BuildValue("{s:O,s:O,s:O,s:O,s:i,s:i,s:i,s:i,s:i}", "B", B, "d", d, "c", c,
                            "mu", mu, "r", co.r, "k", co.k, "j", co.j, "order", co.order,
                            "stage_order", co.stage_order);
    Py_DECREF(B);
    Py_XDECREF(d);
    Py_XDECREF(c);
    Py_XDECREF(mu);
    return out;
}

PyDoc_STRVAR(block_stability_doc,
"block_stability(method, options, z) -> complex ndarray\n--\n\n"
"R(z) = e_r^T (I - z B)^-1 (e + z d) (LS eq 7) of the block method with these options\n"
"(NaN at a pole).");

static PyObject *block_stability(PyObject *self, PyObject *args)
{
    (void)self;
    const char *method;
    PyObject *o, *zo;
    if (!PyArg_ParseTuple(args, "sOO", &method, &o, &zo))
        return NULL;
    mb_block_coeffs co;
    if (resolve(method, o, &co))
        return NULL;
    PyArrayObject *Z = (PyArrayObject *)PyArray_FROMANY(zo, NPY_CDOUBLE, 0, 0, NPY_ARRAY_CARRAY);
    if (!Z)
        return NULL;
    PyObject *R = PyArray_NewLikeArray(Z, NPY_CORDER, NULL, 0);
    if (R) {
        const double *z = PyArray_DATA(Z);
        double *rv = PyArray_DATA((PyArrayObject *)R);
        for (npy_intp k = 0; k < PyArray_SIZE(Z); k++)
            if (mb_block_stability(&co, z[2 * k], z[2 * k + 1], &rv[2 * k], &rv[2 * k + 1]) != MB_OK)
                rv[2 * k] = rv[2 * k + 1] = Py_NAN;
    }
    Py_DECREF(Z);
    return R;
}

PyMethodDef mb_block_methods[] = {
    {"block_coefficients", block_coefficients, METH_VARARGS, block_coefficients_doc},
    {"block_stability", block_stability, METH_VARARGS, block_stability_doc},
    {NULL, NULL, 0, NULL}};
