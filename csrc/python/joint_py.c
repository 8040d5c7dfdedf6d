/* _core.jtree_new and the evaluations of a joint tree (csrc/mbs/joint_tree.h): the
 * articulated-body algorithm, RNEA, CRBA, forward kinematics and the joints' inputs, for
 * mbint.mbs.joint.JointTree and for formulation="joint" (simulate_py.c takes the tree's
 * capsule). */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#define NO_IMPORT_ARRAY
#define PY_ARRAY_UNIQUE_SYMBOL MBINT_ARRAY_API
#include <numpy/arrayobject.h>
#include <string.h>
#include "convert.h"
#include "mech_py.h"
#include "joint_tree.h"
#include "status.h"

#define JTREE_NAME "mbint.jtree"

typedef struct jtree_owned {
    mb_jtree T;
    int *ints;       /* parent, type, body (the mechanism's body of each, or -1) */
    double *reals;   /* frame, axis, inertia, damping, input */
    double *work;    /* mb_jtree_deriv_work_size(n) (>= mb_jtree_work_size(n)) */
} jtree_owned;

static void jtree_free(jtree_owned *o)
{
    if (!o)
        return;
    PyMem_Free(o->ints);
    PyMem_Free(o->reals);
    PyMem_Free(o->work);
    PyMem_Free(o);
}

static void jtree_capsule_free(PyObject *cap)
{
    jtree_free(PyCapsule_GetPointer(cap, JTREE_NAME));
}

const mb_jtree *jtree_get(PyObject *o)
{
    jtree_owned *t = PyCapsule_GetPointer(o, JTREE_NAME);
    return t ? &t->T : NULL;
}

const int *jtree_body(PyObject *o)
{
    jtree_owned *t = PyCapsule_GetPointer(o, JTREE_NAME);
    return t ? t->ints + 2 * t->T.n : NULL;
}

static jtree_owned *owned(PyObject *o)
{
    return PyCapsule_GetPointer(o, JTREE_NAME);
}

const char jtree_new_doc[] =
"jtree_new(parent, type, frame, axis, inertia, damping, input, gravity, body=None,\n"
"mech_forces=0)\n"
"-> capsule\n--\n\n"
"A joint tree (csrc/mbs/joint_tree.h) from its tables: parent (n ints, -1: the base),\n"
"type (n: 0 revolute, 1 prismatic), frame (n x 12: R row-major, t), axis (n x 3),\n"
"inertia (n x 10: m, c, Ixx Iyy Izz Ixy Ixz Iyz), damping (n), input (n x 6:\n"
"c0 c1 c2 a w psi), gravity (3); body (n ints): the index of each tree body among the\n"
"bodies of the model's mechanism (formulation=\"joint\"); mech_forces=1: a SpatialModel's\n"
"tree (joint_spatial.h: the mechanism's forces, type 3 ball joints).  ValueError naming\n"
"what is wrong.";

PyObject *jtree_new(PyObject *self, PyObject *a, PyObject *kw)
{
    static char *kwlist[] = {"parent", "type", "frame", "axis", "inertia", "damping", "input",
                             "gravity", "body", "mech_forces", NULL};
    PyObject *po, *to, *fo, *ao, *io, *dob, *uo, *go, *bo = Py_None;
    int mech_forces = 0;
    if (!PyArg_ParseTupleAndKeywords(a, kw, "OOOOOOOO|Op", kwlist, &po, &to, &fo, &ao, &io, &dob,
                                     &uo, &go, &bo, &mech_forces))
        return NULL;
    PyArrayObject *P = (PyArrayObject *)PyArray_FROMANY(po, NPY_INT, 1, 1, NPY_ARRAY_CARRAY);
    PyArrayObject *Ty = P ? (PyArrayObject *)PyArray_FROMANY(to, NPY_INT, 1, 1, NPY_ARRAY_CARRAY)
                          : NULL;
    ptrdiff_t n = P ? PyArray_SIZE(P) : 0;
    PyObject *F = Ty ? as_table_object(fo, n, 12, "frame") : NULL;
    PyObject *A = F ? as_table_object(ao, n, 3, "axis") : NULL;
    PyObject *In = A ? as_table_object(io, n, 10, "inertia") : NULL;
    PyObject *D = In ? as_vec_object(dob, n, "damping") : NULL;
    PyObject *U = D ? as_table_object(uo, n, 6, "input") : NULL;
    PyObject *G = U ? as_vec_object(go, 3, "gravity") : NULL;
    PyArrayObject *B = !G || bo == Py_None ? NULL
        : (PyArrayObject *)PyArray_FROMANY(bo, NPY_INT, 1, 1, NPY_ARRAY_CARRAY);
    PyObject *cap = NULL;
    jtree_owned *t = NULL;
    if (!G || (bo != Py_None && !B))
        goto done;
    if (PyArray_SIZE(Ty) != n || (B && PyArray_SIZE(B) != n)) {
        PyErr_Format(PyExc_ValueError, "type and body must have %td entries.", n);
        goto done;
    }
    t = PyMem_Calloc(1, sizeof *t);
    if (t) {
        t->ints = PyMem_Malloc((size_t)(3 * n + 1) * sizeof(int));
        t->reals = PyMem_Malloc((size_t)(32 * n + 1) * sizeof(double));
        t->work = PyMem_Malloc((size_t)mb_jtree_deriv_work_size(n) * sizeof(double));
    }
    if (!t || !t->ints || !t->reals || !t->work) {
        PyErr_NoMemory();
        goto done;
    }
    memcpy(t->ints, PyArray_DATA(P), (size_t)n * sizeof(int));
    memcpy(t->ints + n, PyArray_DATA(Ty), (size_t)n * sizeof(int));
    for (ptrdiff_t i = 0; i < n; i++)
        t->ints[2 * n + i] = B ? ((const int *)PyArray_DATA(B))[i] : -1;
    double *r = t->reals;
    memcpy(r, PyArray_DATA((PyArrayObject *)F), (size_t)(12 * n) * sizeof(double));
    memcpy(r + 12 * n, PyArray_DATA((PyArrayObject *)A), (size_t)(3 * n) * sizeof(double));
    memcpy(r + 15 * n, PyArray_DATA((PyArrayObject *)In), (size_t)(10 * n) * sizeof(double));
    memcpy(r + 25 * n, PyArray_DATA((PyArrayObject *)D), (size_t)n * sizeof(double));
    memcpy(r + 26 * n, PyArray_DATA((PyArrayObject *)U), (size_t)(6 * n) * sizeof(double));
    t->T = (mb_jtree){n, t->ints, t->ints + n, r, r + 12 * n, r + 15 * n, r + 25 * n, r + 26 * n,
                      {0, 0, 0}, 0};
    memcpy(t->T.gravity, PyArray_DATA((PyArrayObject *)G), 3 * sizeof(double));
    t->T.mech_forces = mech_forces;
    char msg[256];
    if (mb_jtree_check(&t->T, msg, sizeof msg) != MB_OK) {
        PyErr_SetString(PyExc_ValueError, msg);
        goto done;
    }
    cap = PyCapsule_New(t, JTREE_NAME, jtree_capsule_free);
    if (cap)
        t = NULL;
done:
    jtree_free(t);
    Py_XDECREF(P);
    Py_XDECREF(Ty);
    Py_XDECREF(F);
    Py_XDECREF(A);
    Py_XDECREF(In);
    Py_XDECREF(D);
    Py_XDECREF(U);
    Py_XDECREF(G);
    Py_XDECREF(B);
    return cap;
}

/* a vector argument of n entries, or NULL for None (*ok 0 on error) */
static PyObject *opt_vec(PyObject *o, ptrdiff_t n, const char *what, int *ok)
{
    if (!o || o == Py_None)
        return NULL;
    PyObject *v = as_vec_object(o, n, what);
    if (!v)
        *ok = 0;
    return v;
}

#define DATA(o) ((o) ? (const double *)PyArray_DATA((PyArrayObject *)(o)) : NULL)

const char jtree_eval_doc[] =
"jtree_eval(tree, what, q, qd=None, x=None, t=0.0) -> ndarray\n--\n\n"
"what = \"aba\": q'' of the generalized force x (None: 0); \"rnea\": M q'' + C with\n"
"q'' = x (None: 0); \"rnea0\": the same without gravity; \"crba\": M(q) (n, n);\n"
"\"fk\": (n, 24) link frames (A row-major, o, w, v, alpha, a; global); \"input\": the\n"
"joints' inputs at t minus their dampers at qd; \"deriv\": (n, 2 n), the transposes of\n"
"dq''/dq and dq''/dq' side by side (q'' = ABA under the inputs, dampers and x),\n"
"exact (mb_jtree_aba_derivatives); \"aba_free\": (a0, q'') of a floating base with\n"
"root = (A row-major (9), o (3), omega (3), v (3)) of body 0 (link coordinates), a0 =\n"
"(alpha; a_origin - omega x v) in link coordinates (mb_jtree_aba_free).";

PyObject *jtree_eval(PyObject *self, PyObject *a, PyObject *kw)
{
    static char *kwlist[] = {"tree", "what", "q", "qd", "x", "t", "root", NULL};
    PyObject *to, *qo, *qdo = Py_None, *xo = Py_None, *ro = Py_None;
    const char *what;
    double t = 0.0;
    if (!PyArg_ParseTupleAndKeywords(a, kw, "OsO|OOdO", kwlist, &to, &what, &qo, &qdo, &xo, &t,
                                     &ro))
        return NULL;
    jtree_owned *tr = owned(to);
    if (!tr)
        return NULL;
    ptrdiff_t n = tr->T.n;
    int ok = 1;
    PyObject *q = as_vec_object(qo, n, "q");
    if (!q)
        return NULL;
    PyObject *qd = opt_vec(qdo, n, "qd", &ok);
    PyObject *x = ok ? opt_vec(xo, n, "x", &ok) : NULL;
    PyObject *out = NULL;
    int rc = MB_OK;
    if (!ok)
        goto done;
    if (!strcmp(what, "aba_free")) {  /* (a0 (6), q'' (n)) of a floating base */
        PyObject *R = as_vec_object(ro, 18, "root");
        npy_intp d = (npy_intp)(6 + n);
        out = R ? PyArray_ZEROS(1, &d, NPY_DOUBLE, 0) : NULL;
        if (!out) {
            Py_XDECREF(R);
            goto done;
        }
        mb_jtree_root root;
        const double *rv = PyArray_DATA((PyArrayObject *)R);
        memcpy(root.A, rv, 9 * sizeof(double));
        memcpy(root.o, rv + 9, 3 * sizeof(double));
        memcpy(root.v, rv + 12, 6 * sizeof(double));
        Py_DECREF(R);
        double *o = PyArray_DATA((PyArrayObject *)out);
        rc = mb_jtree_aba_free(&tr->T, &root, DATA(q), DATA(qd), DATA(x), o, o + 6, tr->work);
    } else if (!strcmp(what, "deriv")) {
        npy_intp d[2] = {(npy_intp)(2 * n), (npy_intp)n};
        out = PyArray_ZEROS(2, d, NPY_DOUBLE, 0);
        if (!out)
            goto done;
        double *o = PyArray_DATA((PyArrayObject *)out);  /* row k: column k of Aq | Av */
        rc = mb_jtree_aba_derivatives(&tr->T, t, DATA(q), DATA(qd), DATA(x), NULL, o,
                                      o + n * n, n, tr->work);
    } else if (!strcmp(what, "crba") || !strcmp(what, "fk")) {
        int fk = what[0] == 'f';
        npy_intp d[2] = {(npy_intp)n, (npy_intp)(fk ? MB_JT_FK : n)};
        out = PyArray_ZEROS(2, d, NPY_DOUBLE, 0);
        if (!out)
            goto done;
        double *o = PyArray_DATA((PyArrayObject *)out);
        /* C order: the symmetric M is the same in either order */
        rc = fk ? mb_jtree_fk(&tr->T, DATA(q), DATA(qd), DATA(x), o, tr->work)
                : mb_jtree_crba(&tr->T, DATA(q), o, n, tr->work);
    } else {
        npy_intp d = (npy_intp)n;
        out = PyArray_ZEROS(1, &d, NPY_DOUBLE, 0);
        if (!out)
            goto done;
        double *o = PyArray_DATA((PyArrayObject *)out);
        if (!strcmp(what, "aba"))
            rc = mb_jtree_aba(&tr->T, DATA(q), DATA(qd), DATA(x), o, tr->work);
        else if (!strcmp(what, "rnea") || !strcmp(what, "rnea0"))
            rc = mb_jtree_rnea(&tr->T, DATA(q), DATA(qd), DATA(x), what[4] != '0', o, tr->work);
        else if (!strcmp(what, "input"))
            rc = mb_jtree_input(&tr->T, t, DATA(qd), o);
        else {
            PyErr_Format(PyExc_ValueError, "what: 'aba', 'rnea', 'rnea0', 'crba', 'fk', "
                         "'input', 'deriv' or 'aba_free', got %R.", PyTuple_GET_ITEM(a, 1));
            Py_CLEAR(out);
            goto done;
        }
    }
    if (rc != MB_OK) {
        PyErr_Format(PyExc_RuntimeError, "joint tree %s failed (status %d: %s).", what, rc,
                     mb_status_str(rc));
        Py_CLEAR(out);
    }
done:
    Py_XDECREF(q);
    Py_XDECREF(qd);
    Py_XDECREF(x);
    return out;
}
