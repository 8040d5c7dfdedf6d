#include "problem_py.h"
#define NO_IMPORT_ARRAY
#define PY_ARRAY_UNIQUE_SYMBOL MBINT_ARRAY_API
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#include <numpy/arrayobject.h>
#include <stdio.h>
#include <string.h>
#include "convert.h"
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

/* fun(t, ya, *args) */
static PyObject *call_with(PyObject *fun, PyObject *args, double t, PyObject *ya)
{
    PyObject *pt = PyFloat_FromDouble(t);
    if (!pt)
        return NULL;
    PyObject *lead[2] = {pt, ya};
    PyObject *r = call_lead(fun, args, lead, 2);
    Py_DECREF(pt);
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
    /* fast path: a float64 array in native byte order, aligned and contiguous, is
     * copied as it is; anything else is converted (a big-endian '>f8' array has
     * type NPY_DOUBLE too, but its bytes must be swapped) */
    if (PyArray_Check(r) && PyArray_TYPE((PyArrayObject *)r) == NPY_DOUBLE &&
        PyArray_ISNOTSWAPPED((PyArrayObject *)r) && PyArray_ISALIGNED((PyArrayObject *)r) &&
        PyArray_SIZE((PyArrayObject *)r) == c->n && PyArray_IS_C_CONTIGUOUS((PyArrayObject *)r) &&
        PyArray_NDIM((PyArrayObject *)r) <= 2) {
        memcpy(ydot, PyArray_DATA((PyArrayObject *)r), (size_t)c->n * sizeof(double));
        Py_DECREF(r);
        return 0;
    }
    PyArrayObject *a = returned_vector(r, 2, c->n, "fun(t, y)",
                                       "fun(t, y) returned an array of size %zd; "
                                       "expected size %zd (the size of y0).");
    if (!a)
        return MB_ERR_CALLBACK;
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
    PyObject *ya = vec_from(y, c->n);
    if (!ya)
        return MB_ERR_CALLBACK;
    PyObject *r = call_with(c->dfdt, c->args, t, ya);
    Py_DECREF(ya);
    if (!r)
        return MB_ERR_CALLBACK;
    PyArrayObject *a = returned_vector(r, 1, c->n, "dfdt(t, y)",
                                       "dfdt(t, y) returned %zd values; expected %zd.");
    if (!a)
        return MB_ERR_CALLBACK;
    memcpy(ft, PyArray_DATA(a), (size_t)c->n * sizeof(double));
    Py_DECREF(a);
    return 0;
}

int py_dfdp(double t, const double *y, int k, double *fp, void *ctx)
{
    problem_ctx *c = ctx;
    ptrdiff_t n = c->n, np = c->np;
    if (!(c->dfdp_ok && t == c->dfdp_t && memcmp(y, c->dfdp_y, (size_t)n * sizeof(double)) == 0)) {
        c->dfdp_ok = 0;
        PyObject *ya = vec_from(y, n);
        if (!ya)
            return MB_ERR_CALLBACK;
        PyObject *r = call_with(c->dfdp, c->args, t, ya);
        Py_DECREF(ya);
        if (!r)
            return MB_ERR_CALLBACK;
        PyArrayObject *a = returned_vector(r, 2, n * np, "dfdp(t, y, p)",
                                           "dfdp(t, y, p) returned %zd values; expected %zd "
                                           "(shape (n, np)).");
        if (!a)
            return MB_ERR_CALLBACK;
        if (PyArray_NDIM(a) != 2 || PyArray_DIM(a, 0) != n) {
            Py_DECREF(a);
            PyErr_Format(PyExc_ValueError, "dfdp(t, y, p) must return shape (n, np) = (%zd, %zd).",
                         (Py_ssize_t)n, (Py_ssize_t)np);
            return MB_ERR_CALLBACK;
        }
        memcpy(c->dfdp_m, PyArray_DATA(a), (size_t)(n * np) * sizeof(double));
        Py_DECREF(a);
        memcpy(c->dfdp_y, y, (size_t)n * sizeof(double));
        c->dfdp_t = t;
        c->dfdp_ok = 1;
    }
    for (ptrdiff_t i = 0; i < n; i++)
        fp[i] = c->dfdp_m[i * np + k];
    return 0;
}

int c_rhs(double t, const double *y, double *ydot, void *ctx)
{
    c_fun_ctx *c = ctx;
    if (c->f)
        return c->f(t, y, ydot, c->ud);
    return c->fn(c->n, t, y, ydot, c->ud);
}

/* the name of event i in messages: "events[i] (name)" */
static void event_name(PyObject *ev, ptrdiff_t i, char *buf, size_t len)
{
    PyObject *name = PyObject_GetAttrString(ev, "__name__");
    const char *s = name && PyUnicode_Check(name) ? PyUnicode_AsUTF8(name) : NULL;
    if (s)
        snprintf(buf, len, "events[%td] (%s)", i, s);
    else
        snprintf(buf, len, "events[%td]", i);
    PyErr_Clear();
    Py_XDECREF(name);
}

/* g(t, y, *args) of event i as a float into *g; MB_ERR_CALLBACK with the exception
 * set (one naming the event and what it returned when that was not a real number) */
static int call_event(py_events_ctx *c, ptrdiff_t i, double t, const double *y, double *g)
{
    PyObject *ya = vec_from(y, c->n);
    if (!ya)
        return MB_ERR_CALLBACK;
    PyObject *ev = PySequence_GetItem(c->events, i);
    if (!ev) {
        Py_DECREF(ya);
        return MB_ERR_CALLBACK;
    }
    PyObject *r = call_with(ev, c->args, t, ya);
    Py_DECREF(ya);
    double v = r ? PyFloat_AsDouble(r) : -1.0;
    if (r && v == -1.0 && PyErr_Occurred()) {
        char who[160];
        PyObject *type, *value, *tb;
        PyErr_Fetch(&type, &value, &tb);  /* the name is looked up with no exception set */
        event_name(ev, i, who, sizeof who);
        PyErr_Restore(type, value, tb);
        returned_error(r, who, "a real number");
    }
    Py_DECREF(ev);
    Py_XDECREF(r);
    if (v == -1.0 && PyErr_Occurred())
        return MB_ERR_CALLBACK;
    *g = v;
    return 0;
}

int py_events(double t, const double *y, double *g, void *ctx)
{
    py_events_ctx *c = ctx;
    for (ptrdiff_t i = 0; i < c->nev; i++) {
        int rc = call_event(c, i, t, y, g + i);
        if (rc != 0)
            return rc;
    }
    return 0;
}

int jac_from_object(PyObject *jac, PyObject *args, ptrdiff_t n, jac_ctx *j)
{
    memset(j, 0, sizeof *j);
    j->n = n;
    j->args = args;
    if (PyCapsule_CheckExact(jac)) {
        char sig[256];
        void *ptr;
        if (capsule_signature(jac, sig, sizeof sig, &ptr, &j->ud))
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
    PyArrayObject *a = as_square(jac, NPY_DOUBLE, n, "jac");
    if (!a)
        return -1;
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
    PyObject *ya = vec_from(y, n);
    if (!ya)
        return MB_ERR_CALLBACK;
    PyObject *r = call_with(j->fun, j->args, t, ya);
    Py_DECREF(ya);
    if (!r || returned_matrix(r, n, J, ld, "jac(t, y)"))
        return MB_ERR_CALLBACK;
    return 0;
}

/* Accepted signatures (spaces and 'const' ignored):
 *   int (double, double *, double *, void *)
 *   int (int, double, double *, double *, void *) */
int c_fun_from_capsule(PyObject *capsule, ptrdiff_t n, c_fun_ctx *c)
{
    memset(c, 0, sizeof *c);
    char sig[256];
    void *ptr;
    if (capsule_signature(capsule, sig, sizeof sig, &ptr, &c->ud))
        return -1;
    c->n = (int)n;
    if (strcmp(sig, "int(double,double*,double*,void*)") == 0) {
        c->f = (mb_rhs_fn)ptr;
    } else if (strcmp(sig, "int(int,double,double*,double*,void*)") == 0) {
        c->fn = (c_rhs_n_fn)ptr;
    } else {
        const char *name = PyCapsule_GetName(capsule);
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

int res_from_object(PyObject *fun, PyObject *args, ptrdiff_t n, py_res_ctx *c)
{
    memset(c, 0, sizeof *c);
    c->n = n;
    c->args = args;
    if (PyCapsule_CheckExact(fun)) {
        char sig[256];
        void *ptr;
        if (capsule_signature(fun, sig, sizeof sig, &ptr, &c->ud))
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
    PyObject *lead[3] = {PyFloat_FromDouble(t), vec_from(y, c->n), vec_from(yp, c->n)};
    PyObject *out = NULL;
    if (lead[0] && lead[1] && lead[2])
        out = call_lead(c->fun, c->args, lead, 3);
    for (int i = 0; i < 3; i++)
        Py_XDECREF(lead[i]);
    if (!out)
        return MB_ERR_CALLBACK;
    PyArrayObject *a = returned_vector(out, 1, c->n, "residual(t, y, yp)",
                                       "residual(t, y, yp) returned an array of "
                                       "size %zd; expected size %zd (the size of y0).");
    if (!a)
        return MB_ERR_CALLBACK;
    memcpy(r, PyArray_DATA(a), (size_t)c->n * sizeof(double));
    Py_DECREF(a);
    return 0;
}

int py_dae_jac(double t, double cj, const double *y, const double *yp, double *J, ptrdiff_t ld,
               void *ctx)
{
    py_res_ctx *c = ctx;
    ptrdiff_t n = c->n;
    PyObject *lead[4] = {PyFloat_FromDouble(t), vec_from(y, n), vec_from(yp, n),
                         PyFloat_FromDouble(cj)};
    PyObject *out = NULL;
    if (lead[0] && lead[1] && lead[2] && lead[3])
        out = call_lead(c->jac, c->args, lead, 4);
    for (int i = 0; i < 4; i++)
        Py_XDECREF(lead[i]);
    if (!out || returned_matrix(out, n, J, ld, "jac(t, y, yp, cj)"))
        return MB_ERR_CALLBACK;
    return 0;
}
