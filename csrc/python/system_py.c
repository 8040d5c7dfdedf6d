/* mbint._core: a MechanicalSystem (mbint/mbs/mechanical.py) as an mb_mech table.
 *
 * Each slot of the table calls the user's kernel: a Python callable, called with
 * the same argument order as the slot, time first (with the GIL held; the run
 * then keeps the GIL), or a C function from a LowLevelCallable whose signature is
 * that of the mb_mech slot (mbs/mech.h) with the user data FIRST and ptrdiff_t spelled
 * long, e.g. "int (void *, double, const double *, double *, long)" for the constraint
 * Jacobian (C_SIGNATURES in mbint/mbs/mechanical.py: the public form, kept as it was
 * when the internal table moved its context last, so that compiled user kernels stay
 * valid; call_slot below translates).
 * Phi_t and gamma fall back to central differences when not given; the
 * derivative slots the user leaves out stay NULL, so the formulations
 * (mbs/index1.c) use their own central differences. */
#include "mech_py.h"
#define NO_IMPORT_ARRAY
#define PY_ARRAY_UNIQUE_SYMBOL MBINT_ARRAY_API
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#include <numpy/arrayobject.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "convert.h"
#include "status.h"

/* Python argument forms, time first as the C slots and SciPy's f(t, y): mass(q);
 * constraints, constraint_jacobian, constraint_t (t, q); every other kernel
 * (t, q, b) with b = qd, x (size nq) or lam (size nc) */
enum { A_Q, A_T_Q, A_T_Q_QD, A_T_Q_LAM };
enum { D_NQ, D_NC, D_ONE };

static const struct slot_info {
    const char *name;   /* keyword and name in messages */
    const char *sig;    /* LowLevelCallable signature, spaces and const removed */
    int form, rows, cols;
} slot_info[S_COUNT] = {
    {"mass", "int(void*,double*,double*,long)", A_Q, D_NQ, D_NQ},
    {"forces", "int(void*,double,double*,double*,double*)", A_T_Q_QD, D_NQ, D_ONE},
    {"constraints", "int(void*,double,double*,double*)", A_T_Q, D_NC, D_ONE},
    {"constraint_jacobian", "int(void*,double,double*,double*,long)", A_T_Q, D_NC, D_NQ},
    {"constraint_t", "int(void*,double,double*,double*)", A_T_Q, D_NC, D_ONE},
    {"gamma", "int(void*,double,double*,double*,double*)", A_T_Q_QD, D_NC, D_ONE},
    {"forces_q", "int(void*,double,double*,double*,double*,long)", A_T_Q_QD, D_NQ, D_NQ},
    {"forces_qd", "int(void*,double,double*,double*,double*,long)", A_T_Q_QD, D_NQ, D_NQ},
    {"gamma_q", "int(void*,double,double*,double*,double*,long)", A_T_Q_QD, D_NC, D_NQ},
    {"gamma_qd", "int(void*,double,double*,double*,double*,long)", A_T_Q_QD, D_NC, D_NQ},
    {"phiq_x_q", "int(void*,double,double*,double*,double*,long)", A_T_Q_QD, D_NC, D_NQ},
    {"phiqT_lam_q", "int(void*,double,double*,double*,double*,long)", A_T_Q_LAM, D_NQ, D_NQ},
};

typedef int (*mass_cfn)(void *, const double *, double *, ptrdiff_t);
typedef int (*vec2_cfn)(void *, double, const double *, const double *, double *);
typedef int (*vec1_cfn)(void *, double, const double *, double *);
typedef int (*mat1_cfn)(void *, double, const double *, double *, ptrdiff_t);
typedef int (*mat2_cfn)(void *, double, const double *, const double *, double *, ptrdiff_t);

static ptrdiff_t dim_of(const mech_handle *h, int d)
{
    return d == D_NQ ? h->nq : d == D_NC ? h->nc : 1;
}

/* Call the Python kernel of slot k, time first (mass(q), f(t, q) or f(t, q, b)),
 * and write its (rows x cols) result column-major into out (leading dimension
 * ld).  q, b: the vectors of the argument form. */
static int py_slot(mech_handle *h, int k, double t, const double *q, const double *b, double *out,
                   ptrdiff_t ld)
{
    const struct slot_info *si = &slot_info[k];
    ptrdiff_t nq = h->nq, rows = dim_of(h, si->rows), cols = dim_of(h, si->cols);
    PyObject *argv[3] = {NULL, NULL, NULL};
    int na = 0, ok = 1;
    PyObject *pt = PyFloat_FromDouble(t), *pq = vec_from(q, nq), *pb = NULL;
    if (si->form == A_T_Q_QD)
        pb = vec_from(b, nq);
    else if (si->form == A_T_Q_LAM)
        pb = vec_from(b, h->nc);
    if (!pt || !pq || ((si->form != A_Q && si->form != A_T_Q) && !pb))
        ok = 0;
    if (ok) {
        switch (si->form) {
        case A_Q: argv[0] = pq; na = 1; break;
        case A_T_Q: argv[0] = pt; argv[1] = pq; na = 2; break;
        default: argv[0] = pt; argv[1] = pq; argv[2] = pb; na = 3; break;
        }
    }
    PyObject *r = ok ? PyObject_Vectorcall(h->s[k].py, argv, (size_t)na, NULL) : NULL;
    Py_XDECREF(pt);
    Py_XDECREF(pq);
    Py_XDECREF(pb);
    if (!r)
        return MB_ERR_CALLBACK;
    PyArrayObject *a = (PyArrayObject *)PyArray_FROMANY(r, NPY_DOUBLE, 0, 2, NPY_ARRAY_CARRAY);
    if (!a) {
        char who[64];
        snprintf(who, sizeof who, "MechanicalSystem.%s", si->name);
        returned_error(r, who, "an array of real numbers");
    }
    Py_DECREF(r);
    if (!a)
        return MB_ERR_CALLBACK;
    int nd = PyArray_NDIM(a);
    int good;
    if (cols == 1)
        good = PyArray_SIZE(a) == rows && (nd <= 1 || (nd == 2 && PyArray_DIM(a, 0) == rows));
    else
        good = (nd == 2 && PyArray_DIM(a, 0) == rows && PyArray_DIM(a, 1) == cols) ||
               (nd < 2 && rows * cols == 1 && PyArray_SIZE(a) == 1);
    if (!good) {
        if (cols == 1)
            PyErr_Format(PyExc_ValueError, "MechanicalSystem.%s returned %zd values, expected %zd.",
                         si->name, (Py_ssize_t)PyArray_SIZE(a), (Py_ssize_t)rows);
        else
            PyErr_Format(PyExc_ValueError,
                         "MechanicalSystem.%s returned an array of %d dimension(s) and size %zd, "
                         "expected shape (%zd, %zd).", si->name, nd,
                         (Py_ssize_t)PyArray_SIZE(a), (Py_ssize_t)rows, (Py_ssize_t)cols);
        Py_DECREF(a);
        return MB_ERR_CALLBACK;
    }
    const double *x = PyArray_DATA(a);  /* C order */
    if (cols == 1 || nd < 2) {
        memcpy(out, x, (size_t)(rows * cols) * sizeof(double));
    } else {
        for (ptrdiff_t c = 0; c < cols; c++)
            for (ptrdiff_t i = 0; i < rows; i++)
                out[c * ld + i] = x[i * cols + c];
    }
    Py_DECREF(a);
    return 0;
}

/* dispatch slot k to its C function or Python callable */
static int call_slot(mech_handle *h, int k, double t, const double *q, const double *b,
                     double *out, ptrdiff_t ld)
{
    slot *s = &h->s[k];
    if (!s->cf)
        return py_slot(h, k, t, q, b, out, ld);
    switch (k) {
    case S_MASS: return ((mass_cfn)s->cf)(s->ud, q, out, ld);
    case S_FORCES: case S_GAMMA: return ((vec2_cfn)s->cf)(s->ud, t, q, b, out);
    case S_PHI: case S_PHI_T: return ((vec1_cfn)s->cf)(s->ud, t, q, out);
    case S_PHI_Q: return ((mat1_cfn)s->cf)(s->ud, t, q, out, ld);
    default: return ((mat2_cfn)s->cf)(s->ud, t, q, b, out, ld);
    }
}

static int us_mass(const double *q, double *M, ptrdiff_t ld, void *ctx)
{
    mech_handle *h = ctx;
    if (h->M_const) {
        for (ptrdiff_t c = 0; c < h->nq; c++)
            memcpy(M + c * ld, h->M_const + c * h->nq, (size_t)h->nq * sizeof(double));
        return 0;
    }
    return call_slot(h, S_MASS, 0.0, q, NULL, M, ld);
}

static int us_forces(double t, const double *q, const double *qd, double *Q, void *ctx)
{
    return call_slot(ctx, S_FORCES, t, q, qd, Q, ((mech_handle *)ctx)->nq);
}

static int us_phi(double t, const double *q, double *phi, void *ctx)
{
    return call_slot(ctx, S_PHI, t, q, NULL, phi, 1);
}

static int us_phi_q(double t, const double *q, double *Pq, ptrdiff_t ld, void *ctx)
{
    return call_slot(ctx, S_PHI_Q, t, q, NULL, Pq, ld);
}

/* Phi_t: the user's kernel, zero, or a central difference of Phi in t */
static int us_phi_t(double t, const double *q, double *pt, void *ctx)
{
    mech_handle *h = ctx;
    ptrdiff_t nc = h->nc;
    if (h->s[S_PHI_T].py || h->s[S_PHI_T].cf)
        return call_slot(h, S_PHI_T, t, q, NULL, pt, 1);
    if (h->phi_t_zero || nc == 0) {
        memset(pt, 0, (size_t)nc * sizeof(double));
        return 0;
    }
    double *w = malloc((size_t)nc * sizeof(double));
    if (!w)
        return MB_ERR_MEM;
    double d = cbrt(DBL_EPSILON) * fmax(1.0, fabs(t));
    volatile double tp = t + d, tm = t - d;
    int rc = call_slot(h, S_PHI, tp, q, NULL, pt, 1);
    if (!rc)
        rc = call_slot(h, S_PHI, tm, q, NULL, w, 1);
    if (!rc)
        for (ptrdiff_t i = 0; i < nc; i++)
            pt[i] = (pt[i] - w[i]) / (tp - tm);
    free(w);
    return rc;
}

/* gamma = -(Phi_q q')_q q' - 2 Phi_qt q' - Phi_tt by central differences along the
 * path s -> (t + s, q + s q'):  gamma = -d/ds [Phi_q q' + Phi_t].  With Phi_t by
 * differences too, d/ds Phi_t is the mixed second difference of Phi(t + s + r, q + s q'). */
static int us_gamma(double t, const double *q, const double *qd, double *g, void *ctx)
{
    mech_handle *h = ctx;
    ptrdiff_t nq = h->nq, nc = h->nc;
    if (h->s[S_GAMMA].py || h->s[S_GAMMA].cf)
        return call_slot(h, S_GAMMA, t, q, qd, g, 1);
    if (nc == 0)
        return 0;
    double *qs = malloc((size_t)(nq + nc * nq + 2 * nc) * sizeof(double));
    if (!qs)
        return MB_ERR_MEM;
    double *P = qs + nq, *v = P + nc * nq, *w = v + nc;
    double d = cbrt(DBL_EPSILON) * fmax(1.0, fabs(t));
    int rc = 0;
    memset(g, 0, (size_t)nc * sizeof(double));
    for (int side = -1; side <= 1 && !rc; side += 2) {
        for (ptrdiff_t k = 0; k < nq; k++)
            qs[k] = q[k] + side * d * qd[k];
        rc = call_slot(h, S_PHI_Q, t + side * d, qs, NULL, P, nc);
        if (rc)
            break;
        for (ptrdiff_t i = 0; i < nc; i++) {
            double acc = 0.0;
            for (ptrdiff_t k = 0; k < nq; k++)
                acc += P[k * nc + i] * qd[k];
            g[i] -= side * acc / (2.0 * d);
        }
        if (h->s[S_PHI_T].py || h->s[S_PHI_T].cf) {
            rc = call_slot(h, S_PHI_T, t + side * d, qs, NULL, v, 1);
            for (ptrdiff_t i = 0; !rc && i < nc; i++)
                g[i] -= side * v[i] / (2.0 * d);
        }
    }
    if (!rc && !h->phi_t_zero && !(h->s[S_PHI_T].py || h->s[S_PHI_T].cf)) {
        /* d/ds Phi_t = d^2 Phi(t + s + r, q + s q') / ds dr: mixed second difference */
        double e = pow(DBL_EPSILON, 0.25) * fmax(1.0, fabs(t));
        for (int si = -1; si <= 1 && !rc; si += 2)
            for (int ri = -1; ri <= 1 && !rc; ri += 2) {
                for (ptrdiff_t k = 0; k < nq; k++)
                    qs[k] = q[k] + si * e * qd[k];
                rc = call_slot(h, S_PHI, t + si * e + ri * e, qs, NULL, w, 1);
                for (ptrdiff_t i = 0; !rc && i < nc; i++)
                    g[i] -= si * ri * w[i] / (4.0 * e * e);
            }
    }
    free(qs);
    return rc;
}

static int us_forces_q(double t, const double *q, const double *qd,
                       double *o, ptrdiff_t ld, void *ctx)
{
    return call_slot(ctx, S_FORCES_Q, t, q, qd, o, ld);
}
static int us_forces_qd(double t, const double *q, const double *qd,
                        double *o, ptrdiff_t ld, void *ctx)
{
    return call_slot(ctx, S_FORCES_QD, t, q, qd, o, ld);
}
static int us_gamma_q(double t, const double *q, const double *qd,
                      double *o, ptrdiff_t ld, void *ctx)
{
    return call_slot(ctx, S_GAMMA_Q, t, q, qd, o, ld);
}
static int us_gamma_qd(double t, const double *q, const double *qd,
                       double *o, ptrdiff_t ld, void *ctx)
{
    return call_slot(ctx, S_GAMMA_QD, t, q, qd, o, ld);
}
static int us_phiq_x_q(double t, const double *q, const double *x,
                       double *o, ptrdiff_t ld, void *ctx)
{
    return call_slot(ctx, S_PHIQ_X_Q, t, q, x, o, ld);
}
static int us_phiqT_lam_q(double t, const double *q, const double *lam,
                          double *o, ptrdiff_t ld, void *ctx)
{
    return call_slot(ctx, S_PHIQT_LAM_Q, t, q, lam, o, ld);
}

static int fill_slot(mech_handle *h, int k, PyObject *o)
{
    slot *s = &h->s[k];
    if (o == Py_None)
        return 0;
    if (PyCapsule_CheckExact(o)) {
        char sig[256];
        void *cf, *ud;
        if (capsule_signature(o, sig, sizeof sig, &cf, &ud))
            return -1;
        if (strcmp(sig, slot_info[k].sig) != 0) {
            PyErr_Format(PyExc_ValueError,
                         "%s: LowLevelCallable signature '%s' is not supported; expected '%s' "
                         "(the mb_mech slot of mbs/mech.h, ptrdiff_t as long).",
                         slot_info[k].name, sig, slot_info[k].sig);
            return -1;
        }
        s->cf = cf;
        s->ud = ud;
        return 0;
    }
    if (!PyCallable_Check(o)) {
        PyErr_Format(PyExc_TypeError, "%s must be callable, a LowLevelCallable or None.",
                     slot_info[k].name);
        return -1;
    }
    Py_INCREF(o);
    s->py = o;
    h->python = 1;
    return 0;
}

const char mech_system_doc[] =
"mech_system(nq, nc, mass, forces, constraints=None, constraint_jacobian=None,\n"
"            constraint_t=None, gamma=None, forces_q=None, forces_qd=None, gamma_q=None,\n"
"            gamma_qd=None, phiq_x_q=None, phiqT_lam_q=None) -> handle\n--\n\n"
"A mech handle over user kernels (Python callables or LowLevelCallable capsules).\n"
"mass may be a constant (nq, nq) array.  constraint_t: None = central differences\n"
"of the constraints in t, False = the constraints do not depend on t.  gamma None:\n"
"central differences of the constraint Jacobian.  Missing derivatives stay NULL.";

PyObject *mech_system(PyObject *self, PyObject *args, PyObject *kw)
{
    (void)self;
    static char *kwlist[] = {"nq", "nc", "mass", "forces", "constraints", "constraint_jacobian",
                             "constraint_t", "gamma", "forces_q", "forces_qd", "gamma_q",
                             "gamma_qd", "phiq_x_q", "phiqT_lam_q", NULL};
    Py_ssize_t nq, nc;
    PyObject *o[S_COUNT];
    for (int k = 0; k < S_COUNT; k++)
        o[k] = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "nnOO|OOOOOOOOOO", kwlist, &nq, &nc, &o[S_MASS],
                                     &o[S_FORCES], &o[S_PHI], &o[S_PHI_Q], &o[S_PHI_T],
                                     &o[S_GAMMA], &o[S_FORCES_Q], &o[S_FORCES_QD], &o[S_GAMMA_Q],
                                     &o[S_GAMMA_QD], &o[S_PHIQ_X_Q], &o[S_PHIQT_LAM_Q]))
        return NULL;
    if (nq < 1 || nc < 0 || nc > 100000000 || nq > 100000000)
        return PyErr_Format(PyExc_ValueError, "nq must be positive and nc non-negative "
                                              "(got nq = %zd, nc = %zd).", nq, nc);
    if (nc > 0 && (o[S_PHI] == Py_None || o[S_PHI_Q] == Py_None))
        return PyErr_Format(PyExc_ValueError, "constraints and constraint_jacobian are required "
                                              "when nc = %zd > 0.", nc);
    mech_handle *h = PyMem_Calloc(1, sizeof *h);
    if (!h)
        return PyErr_NoMemory();
    h->nq = nq;
    h->nc = nc;
    PyObject *massobj = o[S_MASS];
    if (!PyCallable_Check(massobj) && !PyCapsule_CheckExact(massobj)) {
        PyArrayObject *M = (PyArrayObject *)PyArray_FROMANY(
            massobj, NPY_DOUBLE, 2, 2, NPY_ARRAY_F_CONTIGUOUS | NPY_ARRAY_ALIGNED);
        if (!M)
            goto fail;
        if (PyArray_DIM(M, 0) != nq || PyArray_DIM(M, 1) != nq) {
            PyErr_Format(PyExc_ValueError, "mass must be callable or an array of shape (%zd, %zd).",
                         nq, nq);
            Py_DECREF(M);
            goto fail;
        }
        h->M_const = PyMem_Malloc((size_t)(nq * nq) * sizeof(double));
        if (!h->M_const) {
            Py_DECREF(M);
            PyErr_NoMemory();
            goto fail;
        }
        memcpy(h->M_const, PyArray_DATA(M), (size_t)(nq * nq) * sizeof(double));
        Py_DECREF(M);
        o[S_MASS] = Py_None;
    }
    if (o[S_PHI_T] == Py_False) {
        h->phi_t_zero = 1;
        o[S_PHI_T] = Py_None;
    }
    if (o[S_FORCES] == Py_None) {
        PyErr_SetString(PyExc_ValueError, "forces is required.");
        goto fail;
    }
    for (int k = 0; k < S_COUNT; k++)
        if (fill_slot(h, k, o[k]))
            goto fail;

    mb_mech *m = &h->mech;
    m->nq = nq;
    m->nc = nc;
    m->mass_constant = h->M_const != NULL;
    m->ctx = h;
    m->mass = us_mass;
    m->forces = us_forces;
    m->phi = us_phi;
    m->phi_q = us_phi_q;
    m->phi_t = us_phi_t;
    m->gamma = us_gamma;
#define OPT(slotk, field, fn) m->field = (h->s[slotk].py || h->s[slotk].cf) ? fn : NULL;
    OPT(S_FORCES_Q, forces_q, us_forces_q)
    OPT(S_FORCES_QD, forces_qd, us_forces_qd)
    OPT(S_GAMMA_Q, gamma_q, us_gamma_q)
    OPT(S_GAMMA_QD, gamma_qd, us_gamma_qd)
    OPT(S_PHIQ_X_Q, phiq_x_q, us_phiq_x_q)
    OPT(S_PHIQT_LAM_Q, phiqT_lam_q, us_phiqT_lam_q)
#undef OPT
    m->energy = NULL;
    return new_handle_capsule(h);
fail:
    for (int k = 0; k < S_COUNT; k++)
        Py_XDECREF(h->s[k].py);
    PyMem_Free(h->M_const);
    PyMem_Free(h);
    return NULL;
}
