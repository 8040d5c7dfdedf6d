#include "problem_py.h"
#define NO_IMPORT_ARRAY
#define PY_ARRAY_UNIQUE_SYMBOL MBINT_ARRAY_API
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#include <numpy/arrayobject.h>
#include <string.h>
#include "status.h"

/* A fresh array with y's values; reuses the cached one when fun kept no reference. */
static PyObject *y_array(PyObject **cache, ptrdiff_t n, const double *y)
{
    PyObject *a = *cache;
    if (a == NULL || Py_REFCNT(a) > 1) {
        Py_XDECREF(a);
        npy_intp dims[1] = {(npy_intp)n};
        a = PyArray_SimpleNew(1, dims, NPY_DOUBLE);
        *cache = a;
        if (a == NULL)
            return NULL;
    }
    memcpy(PyArray_DATA((PyArrayObject *)a), y, (size_t)n * sizeof(double));
    Py_INCREF(a);
    return a;
}

static PyObject *call_with(PyObject *fun, PyObject *args, double t, PyObject *ya)
{
    Py_ssize_t na = args ? PyTuple_GET_SIZE(args) : 0;
    PyObject *stack[16];
    PyObject **argv = stack;
    if (na + 2 > 16) {
        argv = PyMem_Malloc((size_t)(na + 2) * sizeof *argv);
        if (!argv)
            return PyErr_NoMemory();
    }
    PyObject *pt = PyFloat_FromDouble(t);
    if (!pt) {
        if (argv != stack) PyMem_Free(argv);
        return NULL;
    }
    argv[0] = pt;
    argv[1] = ya;
    for (Py_ssize_t i = 0; i < na; i++)
        argv[2 + i] = PyTuple_GET_ITEM(args, i);
    PyObject *r = PyObject_Vectorcall(fun, argv, (size_t)(na + 2), NULL);
    Py_DECREF(pt);
    if (argv != stack)
        PyMem_Free(argv);
    return r;
}

int py_rhs(double t, const double *y, double *ydot, void *ctx)
{
    py_fun_ctx *c = ctx;
    PyObject *ya = y_array(&c->ybuf, c->n, y);
    if (!ya)
        return MB_ERR_CALLBACK;
    PyObject *r = call_with(c->fun, c->args, t, ya);
    Py_DECREF(ya);
    if (!r)
        return MB_ERR_CALLBACK;
    if (PyArray_Check(r) && PyArray_TYPE((PyArrayObject *)r) == NPY_DOUBLE &&
        PyArray_SIZE((PyArrayObject *)r) == c->n && PyArray_IS_C_CONTIGUOUS((PyArrayObject *)r) &&
        PyArray_NDIM((PyArrayObject *)r) <= 2) {
        memcpy(ydot, PyArray_DATA((PyArrayObject *)r), (size_t)c->n * sizeof(double));
        Py_DECREF(r);
        return 0;
    }
    PyArrayObject *a = (PyArrayObject *)PyArray_FROMANY(r, NPY_DOUBLE, 0, 2,
                                                       NPY_ARRAY_C_CONTIGUOUS | NPY_ARRAY_ALIGNED);
    Py_DECREF(r);
    if (!a)
        return MB_ERR_CALLBACK;
    if (PyArray_SIZE(a) != c->n) {
        PyErr_Format(PyExc_ValueError,
                     "fun(t, y) returned an array of size %zd; expected size %zd (the size of y0).",
                     (Py_ssize_t)PyArray_SIZE(a), (Py_ssize_t)c->n);
        Py_DECREF(a);
        return MB_ERR_CALLBACK;
    }
    memcpy(ydot, PyArray_DATA(a), (size_t)c->n * sizeof(double));
    Py_DECREF(a);
    return 0;
}

int problem_rhs(double t, const double *y, double *ydot, void *ctx)
{
    problem_ctx *c = ctx;
    return c->rhs(t, y, ydot, c->rhs_ctx);
}

int zero_dfdt(double t, const double *y, double *ft, void *ctx)
{
    (void)t; (void)y;
    memset(ft, 0, (size_t)((problem_ctx *)ctx)->n * sizeof(double));
    return 0;
}

int py_dfdt(double t, const double *y, double *ft, void *ctx)
{
    problem_ctx *c = ctx;
    npy_intp dims[1] = {(npy_intp)c->n};
    PyObject *ya = PyArray_SimpleNew(1, dims, NPY_DOUBLE);
    if (!ya)
        return MB_ERR_CALLBACK;
    memcpy(PyArray_DATA((PyArrayObject *)ya), y, (size_t)c->n * sizeof(double));
    PyObject *r = call_with(c->dfdt, c->args, t, ya);
    Py_DECREF(ya);
    if (!r)
        return MB_ERR_CALLBACK;
    PyArrayObject *a = (PyArrayObject *)PyArray_FROMANY(r, NPY_DOUBLE, 0, 1,
                                                       NPY_ARRAY_C_CONTIGUOUS | NPY_ARRAY_ALIGNED);
    Py_DECREF(r);
    if (!a)
        return MB_ERR_CALLBACK;
    if (PyArray_SIZE(a) != c->n) {
        PyErr_Format(PyExc_ValueError, "dfdt(t, y) returned %zd values; expected %zd.",
                     (Py_ssize_t)PyArray_SIZE(a), (Py_ssize_t)c->n);
        Py_DECREF(a);
        return MB_ERR_CALLBACK;
    }
    memcpy(ft, PyArray_DATA(a), (size_t)c->n * sizeof(double));
    Py_DECREF(a);
    return 0;
}

int c_rhs(double t, const double *y, double *ydot, void *ctx)
{
    c_fun_ctx *c = ctx;
    if (c->f)
        return c->f(t, y, ydot, c->ud);
    return c->fn(c->n, t, y, ydot, c->ud);
}

int py_events(double t, const double *y, double *g, void *ctx)
{
    py_events_ctx *c = ctx;
    PyObject *ya = NULL;
    for (ptrdiff_t i = 0; i < c->nev; i++) {
        npy_intp dims[1] = {(npy_intp)c->n};
        ya = PyArray_SimpleNew(1, dims, NPY_DOUBLE);
        if (!ya)
            return MB_ERR_CALLBACK;
        memcpy(PyArray_DATA((PyArrayObject *)ya), y, (size_t)c->n * sizeof(double));
        PyObject *ev = PySequence_GetItem(c->events, i);
        if (!ev) {
            Py_DECREF(ya);
            return MB_ERR_CALLBACK;
        }
        PyObject *r = call_with(ev, c->args, t, ya);
        Py_DECREF(ev);
        Py_DECREF(ya);
        if (!r)
            return MB_ERR_CALLBACK;
        double v = PyFloat_AsDouble(r);
        Py_DECREF(r);
        if (v == -1.0 && PyErr_Occurred())
            return MB_ERR_CALLBACK;
        g[i] = v;
    }
    return 0;
}

/* capsule signature with spaces and 'const' removed */
static int capsule_sig(PyObject *capsule, char *sig, size_t len, void **ptr, void **ud)
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
    *ptr = PyCapsule_GetPointer(capsule, name);
    if (!*ptr)
        return -1;
    *ud = PyCapsule_GetContext(capsule);
    return PyErr_Occurred() ? -1 : 0;
}

int jac_from_object(PyObject *jac, PyObject *args, ptrdiff_t n, jac_ctx *j)
{
    memset(j, 0, sizeof *j);
    j->n = n;
    j->args = args;
    if (PyCapsule_CheckExact(jac)) {
        char sig[256];
        void *ptr;
        if (capsule_sig(jac, sig, sizeof sig, &ptr, &j->ud))
            return -1;
        if (strcmp(sig, "int(double,double*,double*,long,void*)") == 0)
            j->cf = (mb_jac_fn)ptr;
        else if (strcmp(sig, "int(double,double*,double*,void*)") == 0)
            j->cf_nold = (c_jac_nold_fn)ptr;
        else if (strcmp(sig, "int(int,double,double*,double*,void*)") == 0)
            j->cfn = (c_jac_n_fn)ptr;
        else {
            PyErr_Format(PyExc_ValueError,
                         "jac: LowLevelCallable signature '%s' is not supported; use "
                         "'int (double, const double *, double *, void *)' writing J "
                         "column-major (J[j*n + i] = df_i/dy_j).", sig);
            return -1;
        }
        return 0;
    }
    if (PyCallable_Check(jac)) {
        j->fun = jac;
        return 0;
    }
    PyArrayObject *a = (PyArrayObject *)PyArray_FROMANY(jac, NPY_DOUBLE, 2, 2,
                                                       NPY_ARRAY_F_CONTIGUOUS | NPY_ARRAY_ALIGNED);
    if (!a)
        return -1;
    if (PyArray_DIM(a, 0) != n || PyArray_DIM(a, 1) != n) {
        PyErr_Format(PyExc_ValueError, "jac must have shape (%zd, %zd).", (Py_ssize_t)n,
                     (Py_ssize_t)n);
        Py_DECREF(a);
        return -1;
    }
    j->constant = PyMem_Malloc((size_t)(n * n) * sizeof(double));
    if (!j->constant) {
        Py_DECREF(a);
        PyErr_NoMemory();
        return -1;
    }
    memcpy(j->constant, PyArray_DATA(a), (size_t)(n * n) * sizeof(double));
    Py_DECREF(a);
    return 0;
}

void jac_ctx_free(jac_ctx *j)
{
    PyMem_Free(j->constant);
    j->constant = NULL;
}

int any_jac(double t, const double *y, double *J, ptrdiff_t ld, void *ctx)
{
    jac_ctx *j = ((problem_ctx *)ctx)->jac;
    ptrdiff_t n = j->n;
    if (j->constant) {
        for (ptrdiff_t c = 0; c < n; c++)
            memcpy(J + c * ld, j->constant + c * n, (size_t)n * sizeof(double));
        return 0;
    }
    if (j->cf)
        return j->cf(t, y, J, ld, j->ud);
    if (j->cf_nold || j->cfn) {
        if (ld != n)
            return MB_ERR_ILL_INPUT;
        return j->cf_nold ? j->cf_nold(t, y, J, j->ud) : j->cfn((int)n, t, y, J, j->ud);
    }
    npy_intp dims[1] = {(npy_intp)n};
    PyObject *ya = PyArray_SimpleNew(1, dims, NPY_DOUBLE);
    if (!ya)
        return MB_ERR_CALLBACK;
    memcpy(PyArray_DATA((PyArrayObject *)ya), y, (size_t)n * sizeof(double));
    PyObject *r = call_with(j->fun, j->args, t, ya);
    Py_DECREF(ya);
    if (!r)
        return MB_ERR_CALLBACK;
    PyArrayObject *a = (PyArrayObject *)PyArray_FROMANY(r, NPY_DOUBLE, 0, 2, NPY_ARRAY_ALIGNED);
    Py_DECREF(r);
    if (!a)
        return MB_ERR_CALLBACK;
    if (PyArray_SIZE(a) != n * n || (PyArray_NDIM(a) == 2 && PyArray_DIM(a, 0) != n)) {
        PyErr_Format(PyExc_ValueError, "jac(t, y) must return shape (%zd, %zd).", (Py_ssize_t)n,
                     (Py_ssize_t)n);
        Py_DECREF(a);
        return MB_ERR_CALLBACK;
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

/* Accepted signatures (spaces and 'const' ignored):
 *   int (double, double *, double *, void *)
 *   int (int, double, double *, double *, void *) */
int c_fun_from_capsule(PyObject *capsule, ptrdiff_t n, c_fun_ctx *c)
{
    memset(c, 0, sizeof *c);
    const char *name = PyCapsule_GetName(capsule);
    if (!name && PyErr_Occurred())
        return -1;
    char sig[256];
    size_t k = 0;
    for (const char *p = name ? name : ""; *p && k + 1 < sizeof sig; p++) {
        if (strncmp(p, "const", 5) == 0) {
            p += 4;
            continue;
        }
        if (*p != ' ')
            sig[k++] = *p;
    }
    sig[k] = '\0';
    void *ptr = PyCapsule_GetPointer(capsule, name);
    if (!ptr)
        return -1;
    c->ud = PyCapsule_GetContext(capsule);
    if (PyErr_Occurred())
        return -1;
    c->n = (int)n;
    if (strcmp(sig, "int(double,double*,double*,void*)") == 0) {
        c->f = (mb_rhs_fn)ptr;
    } else if (strcmp(sig, "int(int,double,double*,double*,void*)") == 0) {
        c->fn = (c_rhs_n_fn)ptr;
    } else {
        PyErr_Format(PyExc_ValueError,
                     "fun: LowLevelCallable signature '%s' is not supported; use "
                     "'int (double, const double *, double *, void *)' or "
                     "'int (int, double, const double *, double *, void *)'.",
                     name ? name : "(none)");
        return -1;
    }
    return 0;
}

/* ---- residual problems (mbint.solve_dae) ---- */

static PyObject *vec_copy(ptrdiff_t n, const double *x)
{
    npy_intp dims[1] = {(npy_intp)n};
    PyObject *a = PyArray_SimpleNew(1, dims, NPY_DOUBLE);
    if (a)
        memcpy(PyArray_DATA((PyArrayObject *)a), x, (size_t)n * sizeof(double));
    return a;
}

/* fun(lead[0], ..., lead[nl-1], *args) */
static PyObject *call_lead(PyObject *fun, PyObject *args, PyObject **lead, int nl)
{
    Py_ssize_t na = args ? PyTuple_GET_SIZE(args) : 0;
    PyObject *stack[16];
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

int res_from_object(PyObject *fun, PyObject *args, ptrdiff_t n, py_res_ctx *c)
{
    memset(c, 0, sizeof *c);
    c->n = n;
    c->args = args;
    if (PyCapsule_CheckExact(fun)) {
        char sig[256];
        void *ptr;
        if (capsule_sig(fun, sig, sizeof sig, &ptr, &c->ud))
            return -1;
        if (strcmp(sig, "int(double,double*,double*,double*,void*)") != 0) {
            PyErr_Format(PyExc_ValueError,
                         "residual: LowLevelCallable signature '%s' is not supported; use "
                         "'int (double t, const double *y, const double *yp, double *r, "
                         "void *user_data)'.", sig);
            return -1;
        }
        c->cf = (c_res_fn)ptr;
        return 0;
    }
    if (!PyCallable_Check(fun)) {
        PyErr_SetString(PyExc_TypeError, "residual must be callable or a LowLevelCallable.");
        return -1;
    }
    c->fun = fun;
    return 0;
}

int any_res(double t, const double *y, const double *yp, double *r, void *ctx)
{
    py_res_ctx *c = ctx;
    if (c->cf)
        return c->cf(t, y, yp, r, c->ud);
    PyObject *lead[3] = {PyFloat_FromDouble(t), vec_copy(c->n, y), vec_copy(c->n, yp)};
    PyObject *out = NULL;
    if (lead[0] && lead[1] && lead[2])
        out = call_lead(c->fun, c->args, lead, 3);
    for (int i = 0; i < 3; i++)
        Py_XDECREF(lead[i]);
    if (!out)
        return MB_ERR_CALLBACK;
    PyArrayObject *a = (PyArrayObject *)PyArray_FROMANY(out, NPY_DOUBLE, 0, 1,
                                                       NPY_ARRAY_C_CONTIGUOUS | NPY_ARRAY_ALIGNED);
    Py_DECREF(out);
    if (!a)
        return MB_ERR_CALLBACK;
    if (PyArray_SIZE(a) != c->n) {
        PyErr_Format(PyExc_ValueError,
                     "residual(t, y, yp) returned an array of size %zd; expected size %zd "
                     "(the size of y0).", (Py_ssize_t)PyArray_SIZE(a), (Py_ssize_t)c->n);
        Py_DECREF(a);
        return MB_ERR_CALLBACK;
    }
    memcpy(r, PyArray_DATA(a), (size_t)c->n * sizeof(double));
    Py_DECREF(a);
    return 0;
}

int py_dae_jac(double t, double cj, const double *y, const double *yp, double *J, ptrdiff_t ld,
               void *ctx)
{
    py_res_ctx *c = ctx;
    ptrdiff_t n = c->n;
    PyObject *lead[4] = {PyFloat_FromDouble(t), vec_copy(n, y), vec_copy(n, yp),
                         PyFloat_FromDouble(cj)};
    PyObject *out = NULL;
    if (lead[0] && lead[1] && lead[2] && lead[3])
        out = call_lead(c->jac, c->args, lead, 4);
    for (int i = 0; i < 4; i++)
        Py_XDECREF(lead[i]);
    if (!out)
        return MB_ERR_CALLBACK;
    PyArrayObject *a = (PyArrayObject *)PyArray_FROMANY(out, NPY_DOUBLE, 0, 2, NPY_ARRAY_ALIGNED);
    Py_DECREF(out);
    if (!a)
        return MB_ERR_CALLBACK;
    if (PyArray_SIZE(a) != n * n || (PyArray_NDIM(a) == 2 && PyArray_DIM(a, 0) != n)) {
        PyErr_Format(PyExc_ValueError, "jac(t, y, yp, cj) must return shape (%zd, %zd).",
                     (Py_ssize_t)n, (Py_ssize_t)n);
        Py_DECREF(a);
        return MB_ERR_CALLBACK;
    }
    if (PyArray_NDIM(a) < 2) {
        J[0] = *(double *)PyArray_DATA(a);
    } else {
        for (ptrdiff_t col = 0; col < n; col++)
            for (ptrdiff_t i = 0; i < n; i++)
                J[col * ld + i] = *(double *)PyArray_GETPTR2(a, i, col);
    }
    Py_DECREF(a);
    return 0;
}
