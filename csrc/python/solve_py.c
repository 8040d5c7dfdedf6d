/* The session of _core.solve (simulate_py.h "ode_session"): solve's keywords parsed into
 * the problem (a Python or C right-hand side, its Jacobian, mass matrix, sparsity), run
 * whole by _core.solve (module.c) or in pieces by _core.OdeStepper (simulator_py.c). */
#include "simulate_py.h"
#define NO_IMPORT_ARRAY
#define PY_ARRAY_UNIQUE_SYMBOL MBINT_ARRAY_API
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#include <numpy/arrayobject.h>
#include <string.h>
#include "sens.h"
#include "status.h"

/* the augmented problem of sens = (p, np, index, pbar, dq, block, dfdp, atol, jac_rhs) over
 * the base
 * problem built in S->p: p a float64 array (the one the callbacks read: args[0]) or
 * None, index (np ints: the entry of p, or -1 for an initial condition only), pbar
 * (np floats), dq (0 centred, 1 forward), block (1: the block linsys), dfdp a callable
 * or None, atol (n floats: the floor of the difference steps' scale |y| + atol), jac_rhs
 * (1: J s_k with the base's jac, mb_sens_options).  Validated in mbint/ivp.py; re-checked here for memory safety. */
static int sens_open(ode_session *S, PyObject *so, int np)
{
    PyObject *po = PyTuple_GET_ITEM(so, 0), *dfdp = PyTuple_GET_ITEM(so, 6);
    PyArrayObject *pa = NULL;
    if (po != Py_None) {
        if (!PyArray_Check(po) || PyArray_TYPE((PyArrayObject *)po) != NPY_DOUBLE ||
            PyArray_NDIM((PyArrayObject *)po) != 1 || !PyArray_ISCARRAY((PyArrayObject *)po)) {
            PyErr_SetString(PyExc_TypeError, "sens: p must be a writeable contiguous float64 array.");
            return -1;
        }
        pa = (PyArrayObject *)po;
        Py_INCREF(po);
        S->sens_p = po;
    }
    PyArrayObject *ix = (PyArrayObject *)PyArray_FROMANY(PyTuple_GET_ITEM(so, 2), NPY_INTP, 1, 1,
                                                          NPY_ARRAY_CARRAY_RO);
    PyArrayObject *pb = (PyArrayObject *)PyArray_FROMANY(PyTuple_GET_ITEM(so, 3), NPY_DOUBLE, 1, 1,
                                                          NPY_ARRAY_CARRAY_RO);
    PyArrayObject *at = (PyArrayObject *)PyArray_FROMANY(PyTuple_GET_ITEM(so, 7), NPY_DOUBLE, 1, 1,
                                                          NPY_ARRAY_CARRAY_RO);
    double **pp = PyMem_Calloc((size_t)np, sizeof *pp);
    int rc = -1;
    if (!ix || !pb || !at || !pp || PyArray_SIZE(ix) != np || PyArray_SIZE(pb) != np ||
        PyArray_SIZE(at) != S->p.n) {
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_ValueError, "sens: index and pbar must hold np values, atol n.");
        goto done;
    }
    for (int k = 0; k < np; k++) {
        npy_intp j = ((const npy_intp *)PyArray_DATA(ix))[k];
        if (j >= 0 && (!pa || j >= PyArray_SIZE(pa))) {
            PyErr_SetString(PyExc_ValueError, "sens: a parameter index is out of the range of p.");
            goto done;
        }
        pp[k] = j >= 0 ? (double *)PyArray_DATA(pa) + j : NULL;
    }
    mb_sens_options o = {(int)PyLong_AsLong(PyTuple_GET_ITEM(so, 4)),
                         (int)PyLong_AsLong(PyTuple_GET_ITEM(so, 5)), NULL,
                         (int)PyLong_AsLong(PyTuple_GET_ITEM(so, 8))};
    ptrdiff_t n = S->p.n;
    if (dfdp != Py_None) {
        S->pc.dfdp = dfdp;
        S->pc.np = np;
        S->pc.dfdp_m = PyMem_Malloc((size_t)(n * np) * sizeof(double));
        S->pc.dfdp_y = PyMem_Malloc((size_t)n * sizeof(double));
        if (!S->pc.dfdp_m || !S->pc.dfdp_y) {
            PyErr_NoMemory();
            goto done;
        }
        o.dfdp = py_dfdp;
        S->r.python = 1;
    }
    S->pb = S->p;
    /* the dense parts always: the methods that do not take the block linsys (and any
     * method on a problem with a mass matrix, whose linsys the driver hides) use aug.jac */
    size_t sz = mb_sens_work_size(n, S->pb.nq, np, S->pb.mass != NULL, 1);
    if (!(S->sens_work = PyMem_Malloc(sz * sizeof(double)))) {
        PyErr_NoMemory();
        goto done;
    }
    int st = mb_sens_init(&S->pb, np, pp, PyArray_DATA(pb), PyArray_DATA(at), &o, 1, S->sens_work,
                          &S->sens);
    if (st != MB_OK) {
        PyErr_Format(PyExc_ValueError, "sensitivities: the problem is not supported (status %d).", st);
        goto done;
    }
    S->p = *mb_sens_problem(S->sens);
    rc = 0;
done:
    Py_XDECREF(ix);
    Py_XDECREF(pb);
    Py_XDECREF(at);
    PyMem_Free(pp);
    return rc;
}

int ode_session_sens_result(ode_session *S, PyObject *out)
{
    if (!S->sens || !out)
        return 0;
    ptrdiff_t n = S->pb.n, N = S->p.n, nb = N / n;
    npy_intp dims[2] = {(npy_intp)nb, (npy_intp)n};
    PyObject *ix = PyArray_SimpleNew(2, dims, NPY_INTP);
    if (!ix)
        return -1;
    npy_intp *d = PyArray_DATA((PyArrayObject *)ix);
    for (ptrdiff_t b = 0; b < nb; b++)
        for (ptrdiff_t i = 0; i < n; i++)
            d[b * n + i] = mb_sens_index(S->sens, (int)b, i);
    PyObject *nf = PyLong_FromLong(mb_sens_nf_base(S->sens));
    PyObject *nj = PyLong_FromLong(mb_sens_njac_base(S->sens));
    int rc = nf && nj && !PyDict_SetItemString(out, "sens_index", ix) &&
                     !PyDict_SetItemString(out, "nfev_base", nf) &&
                     !PyDict_SetItemString(out, "njev_base", nj) ? 0 : -1;
    Py_DECREF(ix);
    Py_XDECREF(nf);
    Py_XDECREF(nj);
    return rc;
}

int ode_session_open(ode_session *S, PyObject *a, PyObject *kw)
{
    static char *kwlist[] = {"method", "fun", "t0", "tf", "y0", "atol", "rtol", "h",
                             RUN_KW_STEPS, RUN_KW_CONTROL, RUN_KW_OUTPUT, "args", "nq", "jac",
                             "mass", "jac_sparsity", "switching", "dfdt", "sens", NULL};
    const char *mname;
    PyObject *fun, *args = NULL, *jaco = Py_None, *masso = Py_None, *spo = Py_None,
                   *dfdto = Py_None, *senso = Py_None;
    Py_ssize_t nq = 0;
    memset(S, 0, sizeof *S);
    run_args *ra = &S->ra;
    run_ctx *r = &S->r;
    problem_ctx *pc = &S->pc;
    mb_problem *p = &S->p;
    run_args_init(ra);
    if (!PyArg_ParseTupleAndKeywords(
            a, kw, "sOddOOO|d" RUN_FMT_STEPS RUN_FMT_CONTROL RUN_FMT_OUTPUT "O!nOOOOOO", kwlist,
            &mname, &fun, &ra->t0, &ra->tf, &ra->y0, &ra->atol, &ra->rtol, &ra->h,
            RUN_ADDR_STEPS(*ra), RUN_ADDR_CONTROL(*ra), RUN_ADDR_OUTPUT(*ra), &PyTuple_Type,
            &args, &nq, &jaco, &masso, &spo, &ra->switching, &dfdto, &senso))
        return -1;
    int np = 0;
    if (senso != Py_None && (!PyTuple_Check(senso) || PyTuple_GET_SIZE(senso) != 9 ||
                             (np = (int)PyLong_AsLong(PyTuple_GET_ITEM(senso, 1))) <= 0)) {
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_TypeError, "sens must be (p, np, index, pbar, dq, block, dfdp, atol, jac_rhs).");
        return -1;
    }
    if (run_begin(r, mname))
        return -1;
    S->begun = 1;
    if (run_prepare(r, ra, -1, args))
        return -1;
    ptrdiff_t n = r->n / (1 + np);
    if (n * (1 + np) != r->n) {
        PyErr_SetString(PyExc_ValueError, "sens: y0 must hold n (1 + np) values.");
        return -1;
    }
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
    return senso == Py_None ? 0 : sens_open(S, senso, np);
}

void ode_session_close(ode_session *S)
{
    if (S->begun)
        run_free(&S->r);
    Py_CLEAR(S->pyf.ybuf);
    Py_CLEAR(S->mass);
    Py_CLEAR(S->sp);
    Py_CLEAR(S->sens_p);
    PyMem_Free(S->sens_work);
    PyMem_Free(S->pc.dfdp_m);
    PyMem_Free(S->pc.dfdp_y);
    S->sens_work = S->pc.dfdp_m = S->pc.dfdp_y = NULL;
    jac_ctx_free(&S->jc);
}
