/* mbint._core: parse, convert once, release the GIL when no Python runs per step,
 * call the driver, map the status (the run itself: options.h).  Argument checking
 * for users is done in mbint/_validate.py; here arrays are re-checked only for
 * memory safety. */
#include "mech_py.h"
#include "simulate_py.h"
#include "sens_mech.h"
#include "options.h"
#include "method_options.h"
#define PY_ARRAY_UNIQUE_SYMBOL MBINT_ARRAY_API
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#include <numpy/arrayobject.h>
#include <string.h>
#include "status.h"
#include "tableaus.h"
#include "problems.h"
#include "index1.h"

PyDoc_STRVAR(solve_doc,
"solve(method, fun, t0, tf, y0, atol, rtol, ...) -> dict\n\n"
"Low-level entry point behind mbint.solve_ivp (arguments validated there).\n"
"fun is a Python callable fun(t, y, *args) or a PyCapsule of a LowLevelCallable.");

static PyObject *core_solve(PyObject *self, PyObject *a, PyObject *kw)
{
    (void)self;
    ode_session *S = PyMem_Malloc(sizeof *S);
    if (!S)
        return PyErr_NoMemory();
    PyObject *out = NULL;
    if (!ode_session_open(S, a, kw) && run_execute(&S->r, &S->p, &S->ra) == 0)
        out = result_dict_of_run(&S->r);
    if (ode_session_sens_result(S, out))
        Py_CLEAR(out);
    ode_session_close(S);
    PyMem_Free(S);
    return out;
}

PyDoc_STRVAR(solve_dae_doc,
"solve_dae(residual, t0, tf, y0, yp0, atol, rtol, ...) -> dict\n\n"
"Low-level entry point behind mbint.solve_dae (arguments validated there): IDA on\n"
"residual(t, y, yp, *args) = 0 (a Python callable or a LowLevelCallable capsule).\n"
"The dict is that of solve() plus 'yp0', the y' used at t0.");

static PyObject *core_solve_dae(PyObject *self, PyObject *a, PyObject *kw)
{
    (void)self;
    static char *kwlist[] = {"residual", "t0", "tf", "y0", "yp0", "atol", "rtol", RUN_KW_STEPS,
                             RUN_KW_OUTPUT, "args", "algebraic", "calc_ic", "jac", NULL};
    PyObject *fun, *yp0o, *args = NULL, *algo = Py_None, *jaco = Py_None;
    int calc_ic = 1;
    run_args ra;
    run_args_init(&ra);
    if (!PyArg_ParseTupleAndKeywords(a, kw, "OddOOOO|" RUN_FMT_STEPS RUN_FMT_OUTPUT "O!OpO",
                                     kwlist, &fun, &ra.t0, &ra.tf, &ra.y0, &yp0o, &ra.atol,
                                     &ra.rtol, RUN_ADDR_STEPS(ra), RUN_ADDR_OUTPUT(ra),
                                     &PyTuple_Type, &args, &algo, &calc_ic, &jaco))
        return NULL;
    run_ctx r;
    if (run_begin(&r, "ida"))
        return NULL;
    PyArrayObject *yp0 = NULL, *alg = NULL;
    PyObject *out = NULL, *ypo = NULL;
    py_res_ctx rc_ctx;

    if (run_prepare(&r, &ra, -1, args))
        goto done;
    ptrdiff_t n = r.n;
    yp0 = as_vec(yp0o, n, "yp0");
    if (!yp0)
        goto done;
    if (res_from_object(fun, args, n, &rc_ctx))
        goto done;
    r.python |= rc_ctx.fun != NULL;
    mb_dae_options d = {PyArray_DATA(yp0), NULL, calc_ic, NULL, 0};
    if (jaco != Py_None) {
        if (!PyCallable_Check(jaco)) {
            PyErr_SetString(PyExc_TypeError, "jac must be callable jac(t, y, yp, cj).");
            goto done;
        }
        rc_ctx.jac = jaco;
        d.jac = py_dae_jac;
        r.python = 1;
    }
    if (algo != Py_None) {
        alg = (PyArrayObject *)PyArray_FROMANY(algo, NPY_UINT8, 1, 1, NPY_ARRAY_CARRAY);
        if (!alg)
            goto done;
        if (PyArray_SIZE(alg) != n) {
            PyErr_Format(PyExc_ValueError, "algebraic must have %zd entries.", (Py_ssize_t)n);
            goto done;
        }
        d.algebraic = PyArray_DATA(alg);
    }
    mb_problem p;
    memset(&p, 0, sizeof p);
    p.n = n;
    p.res = any_res;
    p.ctx = &rc_ctx;

    npy_intp dims[1] = {(npy_intp)n};
    ypo = PyArray_SimpleNew(1, dims, NPY_DOUBLE);
    if (!ypo)
        goto done;
    r.dae = &d;
    r.yp0_out = PyArray_DATA((PyArrayObject *)ypo);
    if (run_execute(&r, &p, &ra))
        goto done;
    out = result_dict_of_run(&r);
    if (out) {
        int bad = dict_set(out, "yp0", ypo);  /* dict_set releases ypo */
        ypo = NULL;
        if (bad)
            Py_CLEAR(out);
    }

done:
    run_free(&r);
    Py_XDECREF(ypo);
    Py_XDECREF(yp0);
    Py_XDECREF(alg);
    return out;
}

static PyObject *core_methods(PyObject *self, PyObject *noargs)
{
    (void)self; (void)noargs;
    size_t nm = mb_method_count(), ns = mb_sundials_count();
    PyObject *lst = PyList_New((Py_ssize_t)(nm + ns));
    if (!lst)
        return NULL;
    for (size_t i = 0; i < nm + ns; i++) {
        PyObject *d;
        if (i < nm) {
            const mb_method *m = mb_method_at(i);
            d = Py_BuildValue("{s:s,s:i,s:i,s:I,s:s,s:i,s:N}", "name", m->name, "order",
                              m->order, "error_order", m->error_order, "flags", m->flags,
                              "backend", "mbint", "controller",
                              m->controller ? m->controller : MB_CONTROLLER_PI, "options",
                              mb_py_method_option_names(m->name));
        } else {  /* SUNDIALS methods (sundials.h): own time loop */
            const mb_sundials_method *m = mb_sundials_at(i - nm);
            d = Py_BuildValue("{s:s,s:i,s:i,s:I,s:s}", "name", m->name, "order", m->order,
                              "error_order", m->error_order, "flags", m->flags, "backend",
                              "sundials");
        }
        if (!d) {
            Py_DECREF(lst);
            return NULL;
        }
        PyList_SET_ITEM(lst, (Py_ssize_t)i, d);
    }
    return lst;
}

static PyObject *core_tableau(PyObject *self, PyObject *arg)
{
    (void)self;
    const char *name = PyUnicode_AsUTF8(arg);
    if (!name)
        return NULL;
    const mb_method *m = mb_method_find(name);
    const mb_erk_tableau *T = NULL;
    const mb_erk_tableau *all[] = {&mb_erk_euler, &mb_erk_heun, &mb_erk_rk4, &mb_erk_rk23,
                                   &mb_erk_dopri5, &mb_erk_dop853};
    for (size_t i = 0; m && i < sizeof all / sizeof all[0]; i++)
        if (m->data == all[i])
            T = all[i];
    if (!T)
        return PyErr_Format(PyExc_ValueError, "method '%s' has no explicit Runge-Kutta tableau.", name);
    int s = T->s, nk = T->s + T->fsal, nx = T->s_extra;
    PyObject *d = PyDict_New();
    if (!d)
        return NULL;
    if (dict_set(d, "c", vec_from(T->c, s)) || dict_set(d, "A", mat_from(T->A, s, s)) ||
        dict_set(d, "b", vec_from(T->b, s)) ||
        dict_set(d, "e", T->e ? vec_from(T->e, nk) : (Py_INCREF(Py_None), Py_None)) ||
        dict_set(d, "P", T->P ? mat_from(T->P, nk, T->dense_deg) : (Py_INCREF(Py_None), Py_None)) ||
        dict_set(d, "order", PyLong_FromLong(T->order)) ||
        dict_set(d, "error_order", PyLong_FromLong(T->error_order)) ||
        dict_set(d, "fsal", PyBool_FromLong(T->fsal)) ||
        dict_set(d, "reference", PyUnicode_FromString(T->reference)) ||
        dict_set(d, "e3", T->e3 ? vec_from(T->e3, nk) : (Py_INCREF(Py_None), Py_None)) ||
        dict_set(d, "c_extra", vec_from(T->c_extra, nx)) ||
        dict_set(d, "A_extra", mat_from(T->A_extra, nx, nk + nx)) ||
        dict_set(d, "D", T->D ? mat_from(T->D, 4, nk + nx) : (Py_INCREF(Py_None), Py_None))) {
        Py_DECREF(d);
        return NULL;
    }
    return d;
}

static PyObject *core_status_table(PyObject *self, PyObject *noargs)
{
    (void)self; (void)noargs;
    return Py_BuildValue("["
#define MB_STATUS(name, code, msg) "(sis)"
#include "status.def"
#undef MB_STATUS
                         "]"
#define MB_STATUS(name, code, msg) , #name, code, msg
#include "status.def"
#undef MB_STATUS
    );
}

static PyObject *core_amplification(PyObject *self, PyObject *a)
{
    (void)self;
    const char *name;
    PyObject *zo;
    if (!PyArg_ParseTuple(a, "sO", &name, &zo))
        return NULL;
    const mb_method *m = mb_method_find(name);
    if (!m)
        return PyErr_Format(PyExc_ValueError, "method: unknown method '%s'.", name);
    if (!m->amplification)
        return PyErr_Format(PyExc_ValueError, "method '%s' has no stability function R(z).", name);
    PyArrayObject *z = (PyArrayObject *)PyArray_FROMANY(zo, NPY_CDOUBLE, 0, 0,
                                                       NPY_ARRAY_C_CONTIGUOUS | NPY_ARRAY_ALIGNED);
    if (!z)
        return NULL;
    PyArrayObject *R = (PyArrayObject *)PyArray_NewLikeArray(z, NPY_CORDER, NULL, 0);
    if (!R) {
        Py_DECREF(z);
        return NULL;
    }
    const double *zin = PyArray_DATA(z);
    double *rout = PyArray_DATA(R);
    npy_intp cnt = PyArray_SIZE(z);
    for (npy_intp k = 0; k < cnt; k++)
        m->amplification(m, zin[2 * k], zin[2 * k + 1], &rout[2 * k], &rout[2 * k + 1]);
    Py_DECREF(z);
    return (PyObject *)R;
}

PyDoc_STRVAR(dense_record_eval_doc,
"dense_record_eval(method, n, rec, t0, h, theta) -> ndarray\n\n"
"Evaluate one step's dense record (the continuous output of a method whose dense\n"
"output is not a polynomial, e.g. llm: y_n + phi(t_n, y_n; t - t_n), LLM eq 18) at\n"
"t0 + theta h.  rec: the step's record (dense_rec_len doubles of a result's dense_c);\n"
"theta: a float (result shape (n,)) or a 1-D array (result shape (len(theta), n)).");

static PyObject *core_dense_record_eval(PyObject *self, PyObject *a)
{
    (void)self;
    const char *name;
    Py_ssize_t n;
    PyObject *reco, *tho;
    double t0, h;
    if (!PyArg_ParseTuple(a, "snOddO", &name, &n, &reco, &t0, &h, &tho))
        return NULL;
    const mb_method *m = mb_method_find(name);
    if (!m)
        return PyErr_Format(PyExc_ValueError, "method: unknown method '%s'.", name);
    if (!m->dense_record_size || !m->dense_record || !m->dense_record_eval)
        return PyErr_Format(PyExc_ValueError, "method '%s' has no dense records.", name);
    if (n <= 0)
        return PyErr_Format(PyExc_ValueError, "n must be positive, got %zd.", n);
    size_t wsz = 0, len = m->dense_record_size((ptrdiff_t)n, m->data, &wsz);
    PyArrayObject *rec = as_vec(reco, (ptrdiff_t)len, "rec");
    if (!rec)
        return NULL;
    PyArrayObject *th = (PyArrayObject *)PyArray_FROMANY(tho, NPY_DOUBLE, 0, 1,
                                                        NPY_ARRAY_C_CONTIGUOUS | NPY_ARRAY_ALIGNED);
    PyObject *out = NULL;
    double *work = NULL;
    if (!th)
        goto done;
    npy_intp m_pts = PyArray_SIZE(th);
    int scalar = PyArray_NDIM(th) == 0;
    npy_intp dims[2] = {m_pts, (npy_intp)n};
    out = scalar ? PyArray_SimpleNew(1, dims + 1, NPY_DOUBLE) : PyArray_SimpleNew(2, dims, NPY_DOUBLE);
    work = PyMem_Malloc((wsz + 1) * sizeof(double));
    if (!out || !work) {
        if (!work)
            PyErr_NoMemory();
        Py_CLEAR(out);
        goto done;
    }
    const double *thv = PyArray_DATA(th), *rv = PyArray_DATA(rec);
    double *yv = PyArray_DATA((PyArrayObject *)out);
    int rc = MB_OK;
    npy_intp k;
    Py_BEGIN_ALLOW_THREADS
    for (k = 0; k < m_pts && rc == MB_OK; k++)
        rc = m->dense_record_eval(m, (ptrdiff_t)n, rv, t0, h, thv[k], yv + k * n, work);
    Py_END_ALLOW_THREADS
    if (rc != MB_OK) {
        char theta[32];  /* PyErr_Format has no %g */
        snprintf(theta, sizeof theta, "%g", thv[k - 1]);
        PyErr_Format(PyExc_RuntimeError, "dense_record_eval: %s (status %d) at theta = %s.",
                     mb_status_str(rc), rc, theta);
        Py_CLEAR(out);
    }
done:
    PyMem_Free(work);
    Py_XDECREF(th);
    Py_DECREF(rec);
    return out;
}

static void capsule_noop(PyObject *c) { (void)c; }

static PyObject *core_c_problem(PyObject *self, PyObject *arg)
{
    (void)self;
    const char *name = PyUnicode_AsUTF8(arg);
    if (!name)
        return NULL;
    mb_rhs_fn f = mb_test_problem_find(name);
    if (!f)
        return PyErr_Format(PyExc_ValueError, "unknown C test problem '%s'.", name);
    return PyCapsule_New((void *)f, "int (double, double *, double *, void *)", capsule_noop);
}

static PyObject *core_c_problem_jac(PyObject *self, PyObject *arg)
{
    (void)self;
    const char *name = PyUnicode_AsUTF8(arg);
    if (!name)
        return NULL;
    mb_jac_fn f = mb_test_problem_jac(name);
    if (!f)
        return PyErr_Format(PyExc_ValueError, "C test problem '%s' has no Jacobian.", name);
    return PyCapsule_New((void *)f, "int (double, double *, double *, long, void *)", capsule_noop);
}

#include "expm.h"

/* expm(A[, info]): exp(A) by mb_expm_ex (test and benchmark hook); with info true, also
 * {"m", "s", "products"} (Pade degree, squarings, matrix products). */
static PyObject *core_expm(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *ao;
    int info = 0;
    if (!PyArg_ParseTuple(args, "O|p", &ao, &info))
        return NULL;
    PyArrayObject *a = (PyArrayObject *)PyArray_FROMANY(ao, NPY_DOUBLE, 2, 2,
                                                       NPY_ARRAY_F_CONTIGUOUS | NPY_ARRAY_ALIGNED);
    if (!a)
        return NULL;
    npy_intp n = PyArray_DIM(a, 0);
    if (PyArray_DIM(a, 1) != n) {
        Py_DECREF(a);
        return PyErr_Format(PyExc_ValueError, "expm: A must be square, got %ld x %ld.",
                            (long)n, (long)PyArray_DIM(a, 1));
    }
    npy_intp dims[2] = {n, n};
    PyArrayObject *E = (PyArrayObject *)PyArray_ZEROS(2, dims, NPY_DOUBLE, 1);
    size_t lw = mb_expm_work_size((ptrdiff_t)n);
    double *work = PyMem_Malloc((lw ? lw : 1) * sizeof *work);
    int *ipiv = PyMem_Malloc((size_t)(n ? n : 1) * sizeof *ipiv);
    if (!E || !work || !ipiv) {
        Py_DECREF(a);
        Py_XDECREF(E);
        PyMem_Free(work);
        PyMem_Free(ipiv);
        return PyErr_NoMemory();
    }
    mb_expm_stats st;
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = mb_expm_ex((ptrdiff_t)n, PyArray_DATA(a), (ptrdiff_t)(n ? n : 1), PyArray_DATA(E),
                    (ptrdiff_t)(n ? n : 1), work, ipiv, &st);
    Py_END_ALLOW_THREADS
    Py_DECREF(a);
    PyMem_Free(work);
    PyMem_Free(ipiv);
    if (rc != MB_OK) {
        Py_DECREF(E);
        return PyErr_Format(PyExc_RuntimeError, "expm failed (status %d: %s): non-finite "
                            "input, exp(A) overflows, or a singular Pade denominator.", rc,
                            mb_status_str(rc));
    }
    if (!info)
        return (PyObject *)E;
    return Py_BuildValue("N{s:i,s:i,s:i}", E, "m", st.m, "s", st.s, "products", st.products);
}

#define KW(f) (PyCFunction)(void (*)(void))(f), METH_VARARGS | METH_KEYWORDS
/* the mechanisms: their handles (planar_py.c, spatial_py.c, system_py.c, mech_handle.c),
 * evaluations (mech_eval.c), simulation (simulate_py.c), the state space (statespace_py.c), the rank
 * check of check_initial_conditions (rank_py.c) */
static PyMethodDef mech_methods_def[] = {
    {"planar_layout", planar_layout, METH_NOARGS, planar_layout_doc},
    {"mech_planar", KW(mech_planar), mech_planar_doc},
    {"mech_system", KW(mech_system), mech_system_doc},
    {"spatial_layout", spatial_layout, METH_NOARGS, spatial_layout_doc},
    {"mech_spatial", KW(mech_spatial), mech_spatial_doc},
    {"mech_info", mech_info, METH_O, mech_info_doc},
    {"mech_set_linalg", mech_set_linalg, METH_VARARGS, mech_set_linalg_doc},
    {"mech_eval", KW(mech_eval), mech_eval_doc},
    {"mech_project", KW(mech_project), mech_project_doc},
    {"mech_simulate", KW(mech_simulate), mech_simulate_doc},
    {"formulations", mech_formulations, METH_NOARGS, mech_formulations_doc},
    {"form_probe", KW(form_probe), form_probe_doc},
    {"mech_param", KW(mech_param), mech_param_doc},
    {"mech_ss_eval", KW(mech_ss_eval), mech_ss_eval_doc},
    {"mech_ss_recover", KW(mech_ss_recover), mech_ss_recover_doc},
    {"mech_initial_check", KW(mech_initial_check), mech_initial_check_doc},
    {"mech_phi_q_sparse", KW(mech_phi_q_sparse), mech_phi_q_sparse_doc},
    {"gram_dependent", KW(gram_dependent), gram_dependent_doc},
    {"sensor_layout", sensor_layout, METH_NOARGS, sensor_layout_doc},
    {"sensors_eval", KW(sensors_eval), sensors_eval_doc},
    {"jtree_new", KW(jtree_new), jtree_new_doc},
    {"jtree_eval", KW(jtree_eval), jtree_eval_doc},
    {NULL, NULL, 0, NULL}};
#undef KW

static PyMethodDef core_methods_def[] = {
    {"solve", (PyCFunction)(void (*)(void))core_solve, METH_VARARGS | METH_KEYWORDS, solve_doc},
    {"solve_dae", (PyCFunction)(void (*)(void))core_solve_dae, METH_VARARGS | METH_KEYWORDS,
     solve_dae_doc},
    {"methods", core_methods, METH_NOARGS,
     "Registered methods: name, order, error_order, flags, backend ('mbint' or 'sundials')."},
    {"tableau", core_tableau, METH_O, "Butcher tableau of an explicit Runge-Kutta method (c, A, b, e, P; DOP853 also e3, "
     "its dense-output stages c_extra, A_extra and Hairer's dense form D: tableaus.h)."},
    {"amplification", core_amplification, METH_VARARGS,
     "amplification(method, z): the method's stability function R(z) (complex array)."},
    {"status_table", core_status_table, METH_NOARGS, "(name, code, message) of every status."},
    {"dense_record_eval", core_dense_record_eval, METH_VARARGS, dense_record_eval_doc},
    {"c_problem", core_c_problem, METH_O,
     "PyCapsule of a built-in C right-hand side (signature int (double, double *, double *, void *))."},
    {"expm", core_expm, METH_VARARGS, "expm(A[, info]): exp(A); with info true, (E, {m, s, products})."},
    {"c_problem_jac", core_c_problem_jac, METH_O,
     "PyCapsule of a built-in C Jacobian (int (double, double *, double *, long ld, void *), column-major)."},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef core_module = {PyModuleDef_HEAD_INIT, "_core",
                                         "mbint's C core (binding only).", -1, core_methods_def,
                                         NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__core(void)
{
    import_array();
    PyObject *mod = PyModule_Create(&core_module);
    if (!mod)
        return NULL;
#define FLAG(x) if (PyModule_AddIntConstant(mod, #x, x)) { Py_DECREF(mod); return NULL; }
    FLAG(MB_EMBEDDED) FLAG(MB_FSAL) FLAG(MB_USES_F0) FLAG(MB_NEEDS_JAC) FLAG(MB_SECOND_ORDER)
    FLAG(MB_DENSE_HERMITE) FLAG(MB_VARIABLE_ORDER) FLAG(MB_IMPLICIT) FLAG(MB_FIXED_ONLY) FLAG(MB_MASS) FLAG(MB_LU_REUSE) FLAG(MB_DAE)
    FLAG(MB_LINSYS) FLAG(MB_LINSYS_MASS) FLAG(MB_INDEX1_SPARSE_MIN_NQ)
    FLAG(MB_DEFAULT_MAX_STEPS)
    FLAG(MB_CONTROLLER_DEFAULT) FLAG(MB_CONTROLLER_I) FLAG(MB_CONTROLLER_PI)
    FLAG(MB_CONTROLLER_PREDICTIVE)
#undef FLAG
    if (PyModule_AddFunctions(mod, mech_methods_def)) {
        Py_DECREF(mod);
        return NULL;
    }
    if (PyModule_AddFunctions(mod, mb_sp_methods)) {  /* sp_py.c */
        Py_DECREF(mod);
        return NULL;
    }
    if (PyModule_AddFunctions(mod, mb_block_methods)) {  /* block_py.c */
        Py_DECREF(mod);
        return NULL;
    }
    if (mech_stepper_add_type(mod)) {  /* simulator_py.c */
        Py_DECREF(mod);
        return NULL;
    }
    return mod;
}
