/* The session of _core.solve (simulate_py.h "ode_session"): solve's keywords parsed into
 * the problem (a Python or C right-hand side, its Jacobian, mass matrix, sparsity), run
 * whole by _core.solve (module.c) or in pieces by _core.OdeStepper (simulator_py.c). */
#include "simulate_py.h"
#define NO_IMPORT_ARRAY
#define PY_ARRAY_UNIQUE_SYMBOL MBINT_ARRAY_API
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#include <numpy/arrayobject.h>
#include <string.h>

int ode_session_open(ode_session *S, PyObject *a, PyObject *kw)
{
    static char *kwlist[] = {"method", "fun", "t0", "tf", "y0", "atol", "rtol", "h",
                             RUN_KW_STEPS, RUN_KW_CONTROL, RUN_KW_OUTPUT, "args", "nq", "jac",
                             "mass", "jac_sparsity", "switching", "dfdt", NULL};
    const char *mname;
    PyObject *fun, *args = NULL, *jaco = Py_None, *masso = Py_None, *spo = Py_None,
                   *dfdto = Py_None;
    Py_ssize_t nq = 0;
    memset(S, 0, sizeof *S);
    run_args *ra = &S->ra;
    run_ctx *r = &S->r;
    problem_ctx *pc = &S->pc;
    mb_problem *p = &S->p;
    run_args_init(ra);
    if (!PyArg_ParseTupleAndKeywords(
            a, kw, "sOddOOO|d" RUN_FMT_STEPS RUN_FMT_CONTROL RUN_FMT_OUTPUT "O!nOOOOO", kwlist,
            &mname, &fun, &ra->t0, &ra->tf, &ra->y0, &ra->atol, &ra->rtol, &ra->h,
            RUN_ADDR_STEPS(*ra), RUN_ADDR_CONTROL(*ra), RUN_ADDR_OUTPUT(*ra), &PyTuple_Type,
            &args, &nq, &jaco, &masso, &spo, &ra->switching, &dfdto))
        return -1;
    if (run_begin(r, mname))
        return -1;
    S->begun = 1;
    if (run_prepare(r, ra, -1, args))
        return -1;
    ptrdiff_t n = r->n;
    p->n = n;
    p->nq = nq;
    if (PyCapsule_CheckExact(fun)) {
        if (c_fun_from_capsule(fun, n, &S->cf))
            return -1;
        pc->rhs = c_rhs;
        pc->rhs_ctx = &S->cf;
    } else if (PyCallable_Check(fun)) {
        S->pyf.fun = fun;
        S->pyf.args = args;
        S->pyf.n = n;
        pc->rhs = py_rhs;
        pc->rhs_ctx = &S->pyf;
        r->python = 1;
    } else {
        PyErr_SetString(PyExc_TypeError, "fun must be callable or a LowLevelCallable capsule.");
        return -1;
    }

    p->rhs = problem_rhs;
    p->ctx = pc;
    pc->n = n;
    pc->args = args;
    if (dfdto != Py_None) {
        if (PyUnicode_Check(dfdto) && PyUnicode_CompareWithASCIIString(dfdto, "zero") == 0) {
            p->dfdt = zero_dfdt;
        } else if (PyCallable_Check(dfdto)) {
            pc->dfdt = dfdto;
            p->dfdt = py_dfdt;
            r->python = 1;
        } else {
            PyErr_SetString(PyExc_TypeError, "dfdt must be callable or 'zero'.");
            return -1;
        }
    }
    if (jaco != Py_None) {
        if (jac_from_object(jaco, args, n, &S->jc))
            return -1;
        pc->jac = &S->jc;
        p->jac = any_jac;
        p->jac_constant = S->jc.constant != NULL;
        if (S->jc.fun)
            r->python = 1;
    }
    if (masso != Py_None) {
        if (!(S->mass = (PyObject *)as_square(masso, NPY_DOUBLE, n, "mass")))
            return -1;
        p->mass = PyArray_DATA((PyArrayObject *)S->mass);
    }
    if (spo != Py_None) {
        if (!(S->sp = (PyObject *)as_square(spo, NPY_UINT8, n, "jac_sparsity")))
            return -1;
        p->jac_sparsity = PyArray_DATA((PyArrayObject *)S->sp);
    }
    return 0;
}

void ode_session_close(ode_session *S)
{
    if (S->begun)
        run_free(&S->r);
    Py_CLEAR(S->pyf.ybuf);
    Py_CLEAR(S->mass);
    Py_CLEAR(S->sp);
    jac_ctx_free(&S->jc);
}
