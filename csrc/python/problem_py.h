#ifndef MB_PYTHON_PROBLEM_PY_H
#define MB_PYTHON_PROBLEM_PY_H
/* Trampolines that fill an mb_problem from Python objects: a Python callable
 * (called with the GIL held) or a C function pointer from a LowLevelCallable
 * capsule (no Python per call). */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include "problem.h"

typedef struct py_fun_ctx {
    PyObject *fun;      /* callable fun(t, y, *args) */
    PyObject *args;     /* tuple (may be empty) */
    ptrdiff_t n;
    PyObject *ybuf;     /* cached 1-D array handed to fun; replaced when the user keeps it */
} py_fun_ctx;

typedef int (*c_rhs_n_fn)(int n, double t, const double *y, double *ydot, void *ud);

typedef struct c_fun_ctx {
    mb_rhs_fn f;        /* int f(t, y, ydot, ud) */
    c_rhs_n_fn fn;      /* or int f(n, t, y, ydot, ud) */
    int n;
    void *ud;
} c_fun_ctx;

typedef struct py_events_ctx {
    PyObject *events;   /* sequence of callables g(t, y, *args) -> float */
    PyObject *args;
    ptrdiff_t n, nev;
} py_events_ctx;

/* the Jacobian: a Python callable jac(t, y, *args) -> (n, n), a constant matrix,
 * or a C function */
typedef int (*c_jac_n_fn)(int n, double t, const double *y, double *J, void *ud);
typedef int (*c_jac_nold_fn)(double t, const double *y, double *J, void *ud);
typedef struct jac_ctx {
    PyObject *fun;      /* Python callable or NULL */
    PyObject *args;
    ptrdiff_t n;
    double *constant;   /* column-major constant Jacobian or NULL */
    mb_jac_fn cf;       /* int f(t, y, J, ld, ud) */
    c_jac_nold_fn cf_nold; /* int f(t, y, J, ud), ld = n */
    c_jac_n_fn cfn;     /* int f(n, t, y, J, ud) */
    void *ud;
} jac_ctx;

/* what mb_problem.ctx points to: the rhs (Python or C) and the Jacobian */
typedef struct problem_ctx {
    mb_rhs_fn rhs;
    void *rhs_ctx;
    jac_ctx *jac;
    PyObject *dfdt;     /* Python callable dfdt(t, y, *args) -> (n,), or NULL */
    PyObject *args;
    ptrdiff_t n;
    /* sensitivities (sens.h): dfdp(t, y, *args) -> (n, np), called once per (t, y) and
     * kept (dfdp_m, n x np row-major) for the columns asked at the same point */
    PyObject *dfdp;
    int np;
    double *dfdp_m, *dfdp_y, dfdp_t;  /* owned (PyMem) or NULL */
    int dfdp_ok;
} problem_ctx;

int problem_rhs(double t, const double *y, double *ydot, void *ctx);
/* df/dt trampolines: a Python callable (ctx->dfdt), or identically zero (autonomous) */
int py_dfdt(double t, const double *y, double *ft, void *ctx);
int zero_dfdt(double t, const double *y, double *ft, void *ctx);

int py_rhs(double t, const double *y, double *ydot, void *ctx);
/* column k of df/dp at (t, y) from ctx->dfdp (mb_dfdp_fn of sens.h; ctx the problem_ctx) */
int py_dfdp(double t, const double *y, int k, double *fp, void *ctx);
int c_rhs(double t, const double *y, double *ydot, void *ctx);
int py_events(double t, const double *y, double *g, void *ctx);

/* Fill j from jac (callable, array or capsule); 0 or -1 with an exception */
int jac_from_object(PyObject *jac, PyObject *args, ptrdiff_t n, jac_ctx *j);
void jac_ctx_free(jac_ctx *j);
/* the mb_jac_fn trampoline; ctx is the problem_ctx */
int any_jac(double t, const double *y, double *J, ptrdiff_t ld, void *ctx);

/* Fill c from a PyCapsule of a LowLevelCallable; returns 0 or -1 with an exception. */
int c_fun_from_capsule(PyObject *capsule, ptrdiff_t n, c_fun_ctx *c);

/* Residual problems F(t, y, y') = 0 (mbint.solve_dae): a Python callable
 * residual(t, y, yp, *args) -> r (size n) or a C function from a LowLevelCallable
 * int F(double t, const double *y, const double *yp, double *r, void *user_data);
 * optional Python Jacobian jac(t, y, yp, cj, *args) -> dF/dy + cj dF/dy' (n, n). */
typedef int (*c_res_fn)(double t, const double *y, const double *yp, double *r, void *ud);
typedef struct py_res_ctx {
    PyObject *fun;      /* residual callable, or NULL when cf is set */
    c_res_fn cf;        /* C residual */
    void *ud;
    PyObject *jac;      /* Python Jacobian or NULL */
    PyObject *args;     /* tuple (may be empty) */
    ptrdiff_t n;
} py_res_ctx;

/* Fill c from a residual object (callable or capsule); 0 or -1 with an exception. */
int res_from_object(PyObject *fun, PyObject *args, ptrdiff_t n, py_res_ctx *c);
/* the mb_res_fn trampoline (ctx is the py_res_ctx) */
int any_res(double t, const double *y, const double *yp, double *r, void *ctx);
/* the Jacobian trampoline of sundials.h's mb_dae_jac_fn (ctx is the py_res_ctx) */
int py_dae_jac(double t, double cj, const double *y, const double *yp, double *J, ptrdiff_t ld,
               void *ctx);

#endif
