/* mbint._core, multibody part: mech handles, kernel evaluation, simulate.
 *
 * A mech handle (PyCapsule "mbint.mech", struct in mech_py.h) owns an mb_mech
 * (mbs/mech.h) and what its kernels need: the parsed tables of a planar model
 * (mbs/model.h; the row layout is documented in model_py.h), or the kernels of a
 * user-derived MechanicalSystem (system_py.c).
 *
 * mech_simulate builds the index-1 formulation (mbs/index1.h) and runs any
 * registered method through mb_driver_run with the options of _core.solve; the
 * GIL is released when no kernel and no event calls Python.  The result is
 * _core.solve's dict plus q'' and lambda at the output points. */
#include "model_py.h"
#include "mech_py.h"
#define NO_IMPORT_ARRAY
#define PY_ARRAY_UNIQUE_SYMBOL MBINT_ARRAY_API
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#include <numpy/arrayobject.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "index1.h"
#include "model.h"
#include "registry.h"
#include "status.h"
#include "sundials.h"

/* ------------------------------------------------------------------ layout */

static const char *const body_cols[2] = {"mass", "inertia"};
static const char *const joint_cols[MB_PY_JOINT_NCOLS] = {
    "type", "i", "j", "si_x", "si_y", "sj_x", "sj_y", "ni_x", "ni_y", "L", "phi0", "coord",
    "c0", "c1", "c2", "a", "w", "psi", "row"};
static const char *const force_cols[MB_PY_FORCE_NCOLS] = {
    "type", "i", "j", "si_x", "si_y", "sj_x", "sj_y", "k", "c", "L0",
    "fa_c0", "fa_c1", "fa_c2", "fa_a", "fa_w", "fa_psi", "wrap", "K", "cd", "e", "ri", "rj",
    "p0_x", "p0_y", "nrm_x", "nrm_y", "coord"};

/* rows of Phi per joint type (0: unknown type) */
static int joint_rows(int type)
{
    switch (type) {
    case MB_JOINT_REVOLUTE: return 2;
    case MB_JOINT_TRANSLATIONAL: return 2;
    case MB_JOINT_DISTANCE: return 1;
    case MB_JOINT_FIXED: return 3;
    case MB_JOINT_DRIVER_COORD: return 1;
    case MB_JOINT_DRIVER_ANGLE: return 1;
    default: return 0;
    }
}

static PyObject *names_tuple(const char *const *names, int n)
{
    PyObject *t = PyTuple_New(n);
    for (int k = 0; t && k < n; k++) {
        PyObject *s = PyUnicode_FromString(names[k]);
        if (!s) {
            Py_DECREF(t);
            return NULL;
        }
        PyTuple_SET_ITEM(t, k, s);
    }
    return t;
}

PyDoc_STRVAR(planar_layout_doc,
"planar_layout() -> dict\n--\n\n"
"Column names of the planar tables (bodies, joints, forces), the joint and force\n"
"type codes and the number of Phi rows of each joint type (see model_py.h).");

static PyObject *planar_layout(PyObject *self, PyObject *noargs)
{
    (void)self; (void)noargs;
    return Py_BuildValue(
        "{s:N,s:N,s:N,s:{s:i,s:i,s:i,s:i,s:i,s:i},s:{s:i,s:i,s:i,s:i,s:i},"
        "s:{i:i,i:i,i:i,i:i,i:i,i:i}}",
        "body", names_tuple(body_cols, 2),
        "joint", names_tuple(joint_cols, MB_PY_JOINT_NCOLS),
        "force", names_tuple(force_cols, MB_PY_FORCE_NCOLS),
        "joint_types", "revolute", MB_JOINT_REVOLUTE, "translational", MB_JOINT_TRANSLATIONAL,
        "distance", MB_JOINT_DISTANCE, "fixed", MB_JOINT_FIXED,
        "driver_coord", MB_JOINT_DRIVER_COORD, "driver_angle", MB_JOINT_DRIVER_ANGLE,
        "force_types", "tsda", MB_FORCE_TSDA, "rsda", MB_FORCE_RSDA,
        "contact_line", MB_FORCE_CONTACT_LINE, "contact_circles", MB_FORCE_CONTACT_CIRCLES,
        "generalized", MB_FORCE_GENERALIZED,
        "joint_rows", MB_JOINT_REVOLUTE, 2, MB_JOINT_TRANSLATIONAL, 2, MB_JOINT_DISTANCE, 1,
        MB_JOINT_FIXED, 3, MB_JOINT_DRIVER_COORD, 1, MB_JOINT_DRIVER_ANGLE, 1);
}

/* ------------------------------------------------------------------ handle */

static void handle_release(mech_handle *h)
{
    for (int k = 0; k < S_COUNT; k++)
        Py_XDECREF(h->s[k].py);
    Py_XDECREF(h->extra);
    PyMem_Free(h->body);
    PyMem_Free(h->joints);
    PyMem_Free(h->forces);
    PyMem_Free(h->M_const);
    PyMem_Free(h);
}

static void handle_free(PyObject *capsule)
{
    mech_handle *h = PyCapsule_GetPointer(capsule, HANDLE_NAME);
    if (h)
        handle_release(h);
}

static mech_handle *get_handle(PyObject *o)
{
    if (!PyCapsule_IsValid(o, HANDLE_NAME)) {
        PyErr_SetString(PyExc_TypeError, "expected a mech handle (from _core.mech_planar or "
                                         "_core.mech_system).");
        return NULL;
    }
    return PyCapsule_GetPointer(o, HANDLE_NAME);
}

PyObject *new_handle_capsule(mech_handle *h)
{
    PyObject *c = PyCapsule_New(h, HANDLE_NAME, handle_free);
    if (!c)
        handle_release(h);
    return c;
}

/* ------------------------------------------------------------------ arrays */

PyObject *vec_copy(const double *x, ptrdiff_t m)
{
    npy_intp dims[1] = {(npy_intp)m};
    PyObject *a = PyArray_SimpleNew(1, dims, NPY_DOUBLE);
    if (a && m > 0)
        memcpy(PyArray_DATA((PyArrayObject *)a), x, (size_t)m * sizeof(double));
    return a;
}

/* new reference to a C-contiguous float64 table of shape (rows, cols), rows
 * free when rows < 0 */
static PyArrayObject *as_table(PyObject *o, ptrdiff_t rows, ptrdiff_t cols, const char *what)
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
    return a;
}

/* integer stored in a table entry, or -1 with ValueError when it is not one in [lo, hi) */
static int table_int(double v, int lo, int hi, const char *what, ptrdiff_t row, const char *col,
                     int *out)
{
    if (!(v == floor(v)) || v < lo || v >= hi) {
        PyErr_Format(PyExc_ValueError, "%s row %zd: %s = %g must be an integer in [%d, %d).",
                     what, (Py_ssize_t)row, col, v, lo, hi);
        return -1;
    }
    *out = (int)v;
    return 0;
}

/* ------------------------------------------------------------------ planar */

/* the slow path of PlanarModel.add_force: Q += extra(t, q, qd) */
static int planar_extra(void *ctx, double t, const double *q, const double *qd, double *Q)
{
    mech_handle *h = ctx;
    ptrdiff_t nq = h->nq;
    PyObject *tq = PyFloat_FromDouble(t), *aq = vec_copy(q, nq), *av = vec_copy(qd, nq);
    PyObject *r = NULL;
    if (tq && aq && av)
        r = PyObject_CallFunctionObjArgs(h->extra, tq, aq, av, NULL);
    Py_XDECREF(tq);
    Py_XDECREF(aq);
    Py_XDECREF(av);
    if (!r)
        return MB_ERR_CALLBACK;
    PyArrayObject *a = (PyArrayObject *)PyArray_FROMANY(r, NPY_DOUBLE, 0, 1,
                                                       NPY_ARRAY_C_CONTIGUOUS | NPY_ARRAY_ALIGNED);
    Py_DECREF(r);
    if (!a)
        return MB_ERR_CALLBACK;
    if (PyArray_SIZE(a) != nq) {
        PyErr_Format(PyExc_ValueError, "add_force: the forces returned %zd entries, expected %zd.",
                     (Py_ssize_t)PyArray_SIZE(a), (Py_ssize_t)nq);
        Py_DECREF(a);
        return MB_ERR_CALLBACK;
    }
    const double *x = PyArray_DATA(a);
    for (ptrdiff_t k = 0; k < nq; k++)
        Q[k] += x[k];
    Py_DECREF(a);
    return 0;
}

PyDoc_STRVAR(mech_planar_doc,
"mech_planar(bodies, gravity, joints, forces, nc, extra=None) -> handle\n--\n\n"
"Parse the flat tables of PlanarModel.compile() (layout: planar_layout()) into an\n"
"mb_planar_model and return a mech handle.  extra(t, q, qd) -> (nq,) is added to\n"
"the generalized forces (Python forces; the run then keeps the GIL).");

static PyObject *mech_planar(PyObject *self, PyObject *args, PyObject *kw)
{
    (void)self;
    static char *kwlist[] = {"bodies", "gravity", "joints", "forces", "nc", "extra", NULL};
    PyObject *bo, *go, *jo, *fo, *extra = Py_None;
    Py_ssize_t nc;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OOOOn|O", kwlist, &bo, &go, &jo, &fo, &nc, &extra))
        return NULL;
    PyArrayObject *B = NULL, *G = NULL, *J = NULL, *F = NULL;
    mech_handle *h = NULL;
    PyObject *out = NULL;

    B = as_table(bo, -1, 2, "bodies");
    J = B ? as_table(jo, -1, MB_PY_JOINT_NCOLS, "joints") : NULL;
    F = J ? as_table(fo, -1, MB_PY_FORCE_NCOLS, "forces") : NULL;
    if (!F)
        goto done;
    G = (PyArrayObject *)PyArray_FROMANY(go, NPY_DOUBLE, 1, 1, NPY_ARRAY_CARRAY);
    if (!G)
        goto done;
    if (PyArray_SIZE(G) != 2) {
        PyErr_SetString(PyExc_ValueError, "gravity must have 2 entries.");
        goto done;
    }
    ptrdiff_t nb = PyArray_DIM(B, 0), nj = PyArray_DIM(J, 0), nf = PyArray_DIM(F, 0);
    if (nb < 1 || nb > 10000000) {
        PyErr_SetString(PyExc_ValueError, "bodies: a planar model needs at least one body.");
        goto done;
    }
    if (extra != Py_None && !PyCallable_Check(extra)) {
        PyErr_SetString(PyExc_TypeError, "extra must be callable or None.");
        goto done;
    }
    h = PyMem_Calloc(1, sizeof *h);
    if (!h) {
        PyErr_NoMemory();
        goto done;
    }
    h->planar = 1;
    h->nq = 3 * nb;
    h->nc = nc;
    h->body = PyMem_Malloc((size_t)(2 * nb) * sizeof(double));
    h->joints = PyMem_Calloc((size_t)(nj > 0 ? nj : 1), sizeof(mb_planar_joint));
    h->forces = PyMem_Calloc((size_t)(nf > 0 ? nf : 1), sizeof(mb_planar_force));
    if (!h->body || !h->joints || !h->forces) {
        PyErr_NoMemory();
        goto fail;
    }
    memcpy(h->body, PyArray_DATA(B), (size_t)(2 * nb) * sizeof(double));
    for (ptrdiff_t k = 0; k < nb; k++)
        if (!(h->body[2 * k] > 0) || !(h->body[2 * k + 1] > 0)) {
            PyErr_Format(PyExc_ValueError, "bodies row %zd: mass and inertia must be positive.",
                         (Py_ssize_t)k);
            goto fail;
        }

    /* joints */
    ptrdiff_t rows_total = 0;
    const double *jt = PyArray_DATA(J);
    for (ptrdiff_t r = 0; r < nj; r++) {
        const double *x = jt + r * MB_PY_JOINT_NCOLS;
        mb_planar_joint *jn = &h->joints[r];
        if (table_int(x[0], 1, 7, "joints", r, "type", &jn->type) ||
            table_int(x[1], -1, (int)nb, "joints", r, "i", &jn->i) ||
            table_int(x[2], -1, (int)nb, "joints", r, "j", &jn->j) ||
            table_int(x[11], 0, 3, "joints", r, "coord", &jn->coord) ||
            table_int(x[18], 0, (int)(nc > 0 ? nc : 1), "joints", r, "row", &jn->row))
            goto fail;
        jn->si[0] = x[3]; jn->si[1] = x[4];
        jn->sj[0] = x[5]; jn->sj[1] = x[6];
        jn->ni[0] = x[7]; jn->ni[1] = x[8];
        jn->L = x[9];
        jn->phi0 = x[10];
        jn->f.c0 = x[12]; jn->f.c1 = x[13]; jn->f.c2 = x[14];
        jn->f.a = x[15]; jn->f.w = x[16]; jn->f.psi = x[17];
        int nr = joint_rows(jn->type);
        if (jn->row + nr > nc) {
            PyErr_Format(PyExc_ValueError, "joints row %zd: rows %d..%d exceed nc = %zd.",
                         (Py_ssize_t)r, jn->row, jn->row + nr - 1, (Py_ssize_t)nc);
            goto fail;
        }
        if (jn->type == MB_JOINT_DRIVER_COORD && jn->i < 0) {
            PyErr_Format(PyExc_ValueError, "joints row %zd: a coordinate driver needs a body.",
                         (Py_ssize_t)r);
            goto fail;
        }
        rows_total += nr;
    }
    if (rows_total != nc) {
        PyErr_Format(PyExc_ValueError, "nc = %zd but the joints have %zd rows.", (Py_ssize_t)nc,
                     (Py_ssize_t)rows_total);
        goto fail;
    }

    /* forces */
    const double *ft = PyArray_DATA(F);
    for (ptrdiff_t r = 0; r < nf; r++) {
        const double *x = ft + r * MB_PY_FORCE_NCOLS;
        mb_planar_force *fc = &h->forces[r];
        if (table_int(x[0], 1, 6, "forces", r, "type", &fc->type) ||
            table_int(x[1], -1, (int)nb, "forces", r, "i", &fc->i) ||
            table_int(x[2], -1, (int)nb, "forces", r, "j", &fc->j) ||
            table_int(x[16], 0, 2, "forces", r, "wrap", &fc->wrap) ||
            table_int(x[26], 0, (int)(3 * nb), "forces", r, "coord", &fc->coord))
            goto fail;
        fc->si[0] = x[3]; fc->si[1] = x[4];
        fc->sj[0] = x[5]; fc->sj[1] = x[6];
        fc->k = x[7]; fc->c = x[8]; fc->L0 = x[9];
        fc->fa.c0 = x[10]; fc->fa.c1 = x[11]; fc->fa.c2 = x[12];
        fc->fa.a = x[13]; fc->fa.w = x[14]; fc->fa.psi = x[15];
        fc->K = x[17]; fc->cd = x[18]; fc->e = x[19];
        fc->ri = x[20]; fc->rj = x[21];
        fc->p0[0] = x[22]; fc->p0[1] = x[23];
        fc->nrm[0] = x[24]; fc->nrm[1] = x[25];
        if ((fc->type == MB_FORCE_CONTACT_LINE || fc->type == MB_FORCE_CONTACT_CIRCLES) &&
            fc->i < 0) {
            PyErr_Format(PyExc_ValueError, "forces row %zd: a contact needs a body i.",
                         (Py_ssize_t)r);
            goto fail;
        }
        if (fc->type == MB_FORCE_CONTACT_LINE || fc->type == MB_FORCE_CONTACT_CIRCLES)
            h->ncontact++;
    }

    h->pm.nb = (int)nb;
    h->pm.body = h->body;
    h->pm.g[0] = ((const double *)PyArray_DATA(G))[0];
    h->pm.g[1] = ((const double *)PyArray_DATA(G))[1];
    h->pm.nj = (int)nj;
    h->pm.joints = h->joints;
    h->pm.nc = (int)nc;
    h->pm.nf = (int)nf;
    h->pm.forces = h->forces;
    if (extra != Py_None) {
        Py_INCREF(extra);
        h->extra = extra;
        h->pm.extra = planar_extra;
        h->pm.extra_ctx = h;
        h->python = 1;
    }
    mb_planar_mech(&h->pm, &h->mech);
    out = new_handle_capsule(h);
    h = NULL;
    goto done;
fail:
    PyMem_Free(h->body);
    PyMem_Free(h->joints);
    PyMem_Free(h->forces);
    PyMem_Free(h);
done:
    Py_XDECREF(B);
    Py_XDECREF(G);
    Py_XDECREF(J);
    Py_XDECREF(F);
    return out;
}

/* ------------------------------------------------------------------ kernels */

enum {
    K_PHI, K_PHI_Q, K_PHI_T, K_GAMMA, K_MASS, K_FORCES, K_FORCES_Q, K_FORCES_QD, K_PHIQ_X_Q,
    K_PHIQT_LAM_Q, K_GAMMA_Q, K_GAMMA_QD, K_ENERGY, K_GAPS, K_ACC, K_RHS, K_JAC, K_COUNT
};
static const struct kernel_info {
    const char *name;
    int need_qd;  /* 1: qd, 2: x of size nq, 3: lam of size nc */
} kernel_info[K_COUNT] = {
    {"phi", 0}, {"phi_q", 0}, {"phi_t", 0}, {"gamma", 1}, {"mass", 0}, {"forces", 1},
    {"forces_q", 1}, {"forces_qd", 1}, {"phiq_x_q", 2}, {"phiqT_lam_q", 3}, {"gamma_q", 1},
    {"gamma_qd", 1}, {"energy", 1}, {"contact_gaps", 0}, {"acc", 1}, {"rhs", 1}, {"jac", 1},
};

/* output shape of kernel k at one point: rows x cols (cols = 0: a vector) */
static void kernel_shape(const mech_handle *h, int k, ptrdiff_t *rows, ptrdiff_t *cols)
{
    ptrdiff_t nq = h->nq, nc = h->nc;
    switch (k) {
    case K_PHI: case K_PHI_T: case K_GAMMA: *rows = nc; *cols = 0; break;
    case K_PHI_Q: case K_PHIQ_X_Q: case K_GAMMA_Q: case K_GAMMA_QD: *rows = nc; *cols = nq; break;
    case K_MASS: case K_FORCES_Q: case K_FORCES_QD: case K_PHIQT_LAM_Q:
        *rows = nq; *cols = nq; break;
    case K_FORCES: *rows = nq; *cols = 0; break;
    case K_ENERGY: *rows = 2; *cols = 0; break;
    case K_GAPS: *rows = h->ncontact; *cols = 0; break;
    case K_ACC: *rows = nq + nc; *cols = 0; break;   /* qdd then lam */
    case K_RHS: *rows = 2 * nq; *cols = 0; break;
    default: *rows = 2 * nq; *cols = 2 * nq; break;  /* K_JAC */
    }
}

static int kernel_available(const mech_handle *h, int k)
{
    const mb_mech *m = &h->mech;
    switch (k) {
    case K_FORCES_Q: return m->forces_q != NULL;
    case K_FORCES_QD: return m->forces_qd != NULL;
    case K_PHIQ_X_Q: return m->phiq_x_q != NULL;
    case K_PHIQT_LAM_Q: return m->phiqT_lam_q != NULL;
    case K_GAMMA_Q: return m->gamma_q != NULL;
    case K_GAMMA_QD: return m->gamma_qd != NULL;
    case K_ENERGY: return m->energy != NULL;
    case K_GAPS: return h->planar;
    default: return 1;
    }
}

/* evaluate kernel k at one point; out has rows x max(cols, 1) entries (ld = rows);
 * f: an initialized index-1 formulation for K_ACC, K_RHS, K_JAC */
static int eval_point(mech_handle *h, mb_index1 *f, mb_problem *p, int k, double t,
                      const double *q, const double *b, double *out, double *ybuf)
{
    const mb_mech *m = &h->mech;
    ptrdiff_t nq = h->nq, ld;
    ptrdiff_t rows, cols;
    kernel_shape(h, k, &rows, &cols);
    ld = rows > 0 ? rows : 1;
    if (rows == 0)
        return 0;
    switch (k) {
    case K_PHI: return m->phi(m->ctx, t, q, out);
    case K_PHI_Q: return m->phi_q(m->ctx, t, q, out, ld);
    case K_PHI_T: return m->phi_t(m->ctx, t, q, out);
    case K_GAMMA: return m->gamma(m->ctx, t, q, b, out);
    case K_MASS: return m->mass(m->ctx, q, out, ld);
    case K_FORCES: return m->forces(m->ctx, t, q, b, out);
    case K_FORCES_Q: return m->forces_q(m->ctx, t, q, b, out, ld);
    case K_FORCES_QD: return m->forces_qd(m->ctx, t, q, b, out, ld);
    case K_PHIQ_X_Q: return m->phiq_x_q(m->ctx, t, q, b, out, ld);
    case K_PHIQT_LAM_Q: return m->phiqT_lam_q(m->ctx, t, q, b, out, ld);
    case K_GAMMA_Q: return m->gamma_q(m->ctx, t, q, b, out, ld);
    case K_GAMMA_QD: return m->gamma_qd(m->ctx, t, q, b, out, ld);
    case K_ENERGY: return m->energy(m->ctx, t, q, b, out, out + 1);
    case K_GAPS: return mb_planar_contact_gaps(&h->pm, q, out);
    case K_ACC: return mb_index1_solve(f, t, q, b, out, out + nq);
    default:
        memcpy(ybuf, q, (size_t)nq * sizeof(double));
        memcpy(ybuf + nq, b, (size_t)nq * sizeof(double));
        if (k == K_RHS)
            return p->rhs(t, ybuf, out, p->ctx);
        return p->jac(t, ybuf, out, 2 * nq, p->ctx);
    }
}

/* batch of points: new reference to a float64 array of m rows of size w (or one
 * point), or NULL with ValueError; *mpts = m, or -1 for a single point (1-D, or a
 * scalar when w == 1) */
static PyArrayObject *as_points(PyObject *o, ptrdiff_t w, const char *what, ptrdiff_t *mpts)
{
    PyArrayObject *a = (PyArrayObject *)PyArray_FROMANY(o, NPY_DOUBLE, 0, 2,
                                                       NPY_ARRAY_C_CONTIGUOUS | NPY_ARRAY_ALIGNED);
    if (!a)
        return NULL;
    int nd = PyArray_NDIM(a);
    if ((nd == 2 && PyArray_DIM(a, 1) != w) || (nd < 2 && PyArray_SIZE(a) != w)) {
        PyErr_Format(PyExc_ValueError, "%s must have shape (%zd,) or (m, %zd).", what,
                     (Py_ssize_t)w, (Py_ssize_t)w);
        Py_DECREF(a);
        return NULL;
    }
    *mpts = nd == 2 ? PyArray_DIM(a, 0) : -1;
    return a;
}

static int kernel_index(const char *name)
{
    for (int k = 0; k < K_COUNT; k++)
        if (strcmp(name, kernel_info[k].name) == 0)
            return k;
    return -1;
}

static PyObject *status_error(int rc, const char *what)
{
    if (PyErr_Occurred())
        return NULL;
    return PyErr_Format(PyExc_RuntimeError, "%s failed: %s (status %d).", what,
                        mb_status_str(rc), rc);
}

/* RuntimeError with the formulation's own message when it has one */
static PyObject *index1_error(int rc, const mb_index1 *f, const char *what)
{
    if (PyErr_Occurred())
        return NULL;
    if (f->msg[0])
        return PyErr_Format(PyExc_RuntimeError, "%s failed: %s (status %d: %s)", what, f->msg, rc,
                            mb_status_str(rc));
    return status_error(rc, what);
}

PyDoc_STRVAR(mech_eval_doc,
"mech_eval(handle, kernel, t, q, qd=None, alpha=0.0, beta=0.0) -> ndarray\n--\n\n"
"Evaluate a kernel at one point (q of shape (nq,)) or at m points (q of shape\n"
"(m, nq), t scalar or (m,)).  kernel: phi, phi_q, phi_t, gamma, mass, forces,\n"
"forces_q, forces_qd, phiq_x_q (qd = x, size nq), phiqT_lam_q (qd = lambda, size\n"
"nc), gamma_q, gamma_qd, energy (kinetic, potential), contact_gaps, acc (q'' then\n"
"lambda from the index-1 system with Baumgarte alpha, beta), rhs (f of y = (q, qd)),\n"
"jac (df/dy).  Matrices come back with shape (rows, cols) per point.");

static PyObject *mech_eval(PyObject *self, PyObject *args, PyObject *kw)
{
    (void)self;
    static char *kwlist[] = {"handle", "kernel", "t", "q", "qd", "alpha", "beta", NULL};
    PyObject *ho, *to, *qo, *bo = Py_None;
    const char *kname;
    double alpha = 0.0, beta = 0.0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OsOO|Odd", kwlist, &ho, &kname, &to, &qo, &bo,
                                     &alpha, &beta))
        return NULL;
    mech_handle *h = get_handle(ho);
    if (!h)
        return NULL;
    int k = kernel_index(kname);
    if (k < 0)
        return PyErr_Format(PyExc_ValueError, "kernel: unknown kernel '%s'.", kname);
    if (!kernel_available(h, k))
        return PyErr_Format(PyExc_ValueError,
                            "kernel '%s' is not provided by this %s (the formulations use "
                            "central differences instead).", kname,
                            h->planar ? "model" : "system");
    ptrdiff_t nq = h->nq, nc = h->nc;
    int need = kernel_info[k].need_qd;
    ptrdiff_t wb = need == 3 ? nc : nq;
    PyArrayObject *T = NULL, *Q = NULL, *Bv = NULL;
    PyObject *out = NULL, *arr = NULL;
    double *work = NULL;
    mb_index1 f;
    memset(&f, 0, sizeof f);
    int have_f = 0;
    mb_problem p;
    memset(&p, 0, sizeof p);
    ptrdiff_t mq, mb = -1, mt;

    T = (PyArrayObject *)PyArray_FROMANY(to, NPY_DOUBLE, 0, 1, NPY_ARRAY_CARRAY);
    if (!T)
        goto done;
    mt = PyArray_NDIM(T) == 1 ? PyArray_DIM(T, 0) : -1;
    Q = as_points(qo, nq, "q", &mq);
    if (!Q)
        goto done;
    if (need) {
        if (bo == Py_None) {
            PyErr_Format(PyExc_ValueError, "kernel '%s' needs %s.", kname,
                         need == 1 ? "qd" : need == 2 ? "x" : "lam");
            goto done;
        }
        Bv = as_points(bo, wb, need == 1 ? "qd" : need == 2 ? "x" : "lam", &mb);
        if (!Bv)
            goto done;
    }
    ptrdiff_t m = -1;
    ptrdiff_t sizes[3] = {mt, mq, mb};
    for (int i = 0; i < 3; i++)
        if (sizes[i] >= 0) {
            if (m >= 0 && sizes[i] != m) {
                PyErr_SetString(PyExc_ValueError,
                                "t, q and qd must have the same number of points.");
                goto done;
            }
            m = sizes[i];
        }
    int single = m < 0;
    if (single)
        m = 1;
    ptrdiff_t rows, cols;
    kernel_shape(h, k, &rows, &cols);
    ptrdiff_t per = rows * (cols > 0 ? cols : 1);
    {
        npy_intp dims[3];
        int nd = 0;
        if (!single)
            dims[nd++] = (npy_intp)m;
        if (cols > 0)
            dims[nd++] = (npy_intp)cols;  /* column-major per point: transposed below */
        dims[nd++] = (npy_intp)rows;
        arr = PyArray_SimpleNew(nd, dims, NPY_DOUBLE);
        if (!arr)
            goto done;
    }
    work = PyMem_Malloc((size_t)(2 * nq) * sizeof(double));
    if (!work) {
        PyErr_NoMemory();
        goto done;
    }
    if (k == K_ACC || k == K_RHS || k == K_JAC) {
        int rc = mb_index1_init(&f, &h->mech, alpha, beta);
        if (rc) {
            index1_error(rc, &f, "mb_index1_init");
            goto done;
        }
        have_f = 1;
        mb_index1_problem(&f, &p);
        if (k == K_JAC && !p.jac) {
            PyErr_SetString(PyExc_RuntimeError, "the index-1 formulation has no Jacobian.");
            goto done;
        }
    }
    {
        const double *tv = PyArray_DATA(T), *qv = PyArray_DATA(Q);
        const double *bv = Bv ? PyArray_DATA(Bv) : NULL;
        double *ov = PyArray_DATA((PyArrayObject *)arr);
        int rc = 0;
        ptrdiff_t bad = 0;
        PyThreadState *ts = h->python ? NULL : PyEval_SaveThread();
        for (ptrdiff_t i = 0; i < m && !rc; i++) {
            bad = i;
            rc = eval_point(h, &f, &p, k, tv[mt >= 0 ? i : 0], qv + (mq >= 0 ? i : 0) * nq,
                            bv ? bv + (mb >= 0 ? i : 0) * wb : NULL, ov + i * per, work);
        }
        if (ts)
            PyEval_RestoreThread(ts);
        if (rc) {
            if (!PyErr_Occurred())
                PyErr_Format(PyExc_RuntimeError,
                             "kernel '%s' failed at point %zd: %s (status %d)%s%s",
                             kname, (Py_ssize_t)bad, mb_status_str(rc), rc,
                             have_f && f.msg[0] ? ": " : ".", have_f ? f.msg : "");
            goto done;
        }
    }
    if (cols > 0) {
        int nd = PyArray_NDIM((PyArrayObject *)arr);
        out = PyArray_SwapAxes((PyArrayObject *)arr, nd - 2, nd - 1);
    } else {
        out = arr;
        Py_INCREF(out);
    }
done:
    if (have_f)
        mb_index1_free(&f);
    PyMem_Free(work);
    Py_XDECREF(arr);
    Py_XDECREF(T);
    Py_XDECREF(Q);
    Py_XDECREF(Bv);
    return out;
}

/* ------------------------------------------------------------------ projection */

PyDoc_STRVAR(mech_project_doc,
"mech_project(handle, t, q, qd, tol=0.0, max_iter=0) -> (q, qd, res_pos, res_vel)\n--\n\n"
"Project (q, qd) onto Phi(q, t) = 0 and Phi_q qd + Phi_t = 0 (minimum-norm Newton\n"
"correction, mb_index1_project); tol, max_iter <= 0 keep the formulation's defaults.\n"
"res_pos, res_vel: the max-norms of the residuals after the projection.");

static PyObject *mech_project(PyObject *self, PyObject *args, PyObject *kw)
{
    (void)self;
    static char *kwlist[] = {"handle", "t", "q", "qd", "tol", "max_iter", NULL};
    PyObject *ho, *qo, *vo;
    double t, tol = 0.0;
    int max_iter = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OdOO|di", kwlist, &ho, &t, &qo, &vo, &tol,
                                     &max_iter))
        return NULL;
    mech_handle *h = get_handle(ho);
    if (!h)
        return NULL;
    ptrdiff_t nq = h->nq, mq, mv;
    PyArrayObject *Q = as_points(qo, nq, "q", &mq), *V = Q ? as_points(vo, nq, "qd", &mv) : NULL;
    PyObject *qn = NULL, *vn = NULL, *out = NULL;
    mb_index1 f;
    memset(&f, 0, sizeof f);
    int have_f = 0;
    if (!V)
        goto done;
    if (mq >= 0 || mv >= 0) {
        PyErr_SetString(PyExc_ValueError, "q and qd must be single points of shape (nq,).");
        goto done;
    }
    qn = vec_copy(PyArray_DATA(Q), nq);
    vn = vec_copy(PyArray_DATA(V), nq);
    if (!qn || !vn)
        goto done;
    int rc = mb_index1_init(&f, &h->mech, 0.0, 0.0);
    if (rc) {
        index1_error(rc, &f, "mb_index1_init");
        goto done;
    }
    have_f = 1;
    if (tol > 0)
        f.proj_tol = tol;
    if (max_iter > 0)
        f.proj_max_iter = max_iter;
    double *qa = PyArray_DATA((PyArrayObject *)qn), *va = PyArray_DATA((PyArrayObject *)vn);
    double rp = 0.0, rv = 0.0;
    if (h->python) {
        rc = mb_index1_project(&f, t, qa, va, &rp, &rv);
    } else {
        Py_BEGIN_ALLOW_THREADS
        rc = mb_index1_project(&f, t, qa, va, &rp, &rv);
        Py_END_ALLOW_THREADS
    }
    if (rc) {
        index1_error(rc, &f, "the projection onto the constraints");
        goto done;
    }
    out = Py_BuildValue("(OOdd)", qn, vn, rp, rv);
done:
    if (have_f)
        mb_index1_free(&f);
    Py_XDECREF(qn);
    Py_XDECREF(vn);
    Py_XDECREF(Q);
    Py_XDECREF(V);
    return out;
}

/* ------------------------------------------------------------------ simulate */

PyDoc_STRVAR(mech_simulate_doc,
"mech_simulate(handle, method, t0, tf, y0, atol, rtol, ..., alpha=0, beta=0,\n"
"              project=False, proj_tol=0, proj_max_iter=0, switching=None,\n"
"              contact_switching=False) -> dict\n--\n\n"
"Run a registered method on the index-1 formulation of the mechanism, with the\n"
"options of _core.solve (validated in mbint/simulate.py); y0 = (q0, qd0).  Returns\n"
"_core.solve's dict plus 'qdd' (nt, nq) and 'lam' (nt, nc) at the output points\n"
"(NaN where the saddle-point system is singular) and 'nq', 'nc'.\n"
"switching: one int per event (nonzero: a switching event, the run restarts at its\n"
"roots).  contact_switching: the contact gaps of a planar model (in C, no Python)\n"
"become switching events after the user's events (LLM paper section 3): t_events\n"
"and y_events then hold the user's events followed by one entry per contact.");

/* the events of a simulation: the user's (Python) ones, then the contact gap
 * functions of a planar model (LLM eqs 17-19) */
typedef struct sim_events_ctx {
    py_events_ctx *user;
    ptrdiff_t n_user;
    const mb_planar_model *pm;   /* contact gaps after the user's events, or NULL */
} sim_events_ctx;

static int sim_events(double t, const double *y, double *g, void *ctx)
{
    sim_events_ctx *c = ctx;
    if (c->n_user > 0) {
        int rc = py_events(t, y, g, c->user);
        if (rc != 0)
            return rc;
    }
    return c->pm ? mb_planar_contact_gaps(c->pm, y, g + c->n_user) : 0;
}

static PyObject *mech_simulate(PyObject *self, PyObject *a, PyObject *kw)
{
    (void)self;
    static char *kwlist[] = {"handle", "method", "t0", "tf", "y0", "atol", "rtol", "h",
                             "first_step", "max_step", "min_step", "max_steps",
                             "step_doubling", "controller", "error_per_unit_step", "safety",
                             "fac_min", "fac_max", "t_eval", "dense_output", "events",
                             "terminal", "direction", "alpha", "beta", "project", "proj_tol",
                             "proj_max_iter", "switching", "contact_switching", NULL};
    const char *mname;
    PyObject *ho, *y0o, *atolo, *t_evalo = Py_None, *events = Py_None, *termo = Py_None,
                                      *diro = Py_None, *swo = Py_None;
    double t0, tf, rtol, h = 0, first_step = 0, max_step = 0, min_step = 0, safety = 0,
                         fac_min = 0, fac_max = 0, alpha = 0, beta = 0, proj_tol = 0;
    long max_steps = 0;
    int doubling = 0, controller = 1, epus = 0, dense = 0, project = 0, proj_max_iter = 0,
        contact_sw = 0;
    if (!PyArg_ParseTupleAndKeywords(a, kw, "OsddOOd|ddddlpiidddOpOOOddpdiOp", kwlist, &ho,
                                     &mname, &t0, &tf, &y0o, &atolo, &rtol, &h, &first_step,
                                     &max_step, &min_step, &max_steps, &doubling, &controller,
                                     &epus, &safety, &fac_min, &fac_max, &t_evalo, &dense,
                                     &events, &termo, &diro, &alpha, &beta, &project, &proj_tol,
                                     &proj_max_iter, &swo, &contact_sw))
        return NULL;
    mech_handle *mh = get_handle(ho);
    if (!mh)
        return NULL;
    const mb_method *m = mb_method_find(mname);
    const mb_sundials_method *sm = m ? NULL : mb_sundials_find(mname);
    if (!m && !sm)
        return PyErr_Format(PyExc_ValueError, "method: unknown method '%s'.", mname);
    ptrdiff_t nq = mh->nq, nc = mh->nc, n = 2 * nq;

    PyArrayObject *y0 = NULL, *atol = NULL, *te = NULL, *term = NULL, *dir = NULL, *sw = NULL;
    PyObject *out = NULL, *qdd = NULL, *lam = NULL;
    py_events_ctx pye = {0};
    sim_events_ctx sev = {&pye, 0, NULL};
    int *ev_flags = NULL;  /* terminal, direction, switching of all events */
    mb_result res;
    memset(&res, 0, sizeof res);
    int have_res = 0, have_f = 0;
    mb_index1 f;
    memset(&f, 0, sizeof f);
    int python_per_step = mh->python;

    y0 = (PyArrayObject *)PyArray_FROMANY(y0o, NPY_DOUBLE, 1, 1, NPY_ARRAY_CARRAY);
    atol = y0 ? (PyArrayObject *)PyArray_FROMANY(atolo, NPY_DOUBLE, 1, 1, NPY_ARRAY_CARRAY) : NULL;
    if (!atol)
        goto done;
    if (PyArray_SIZE(y0) != n || PyArray_SIZE(atol) != n) {
        PyErr_Format(PyExc_ValueError, "y0 and atol must have 2 nq = %zd entries.", (Py_ssize_t)n);
        goto done;
    }
    if (project && sm) {
        PyErr_Format(PyExc_ValueError, "project: SUNDIALS method '%s' runs its own step loop "
                     "and has no projection after accepted steps.", mname);
        goto done;
    }
    int rc = mb_index1_init(&f, &mh->mech, alpha, beta);
    if (rc) {
        index1_error(rc, &f, "mb_index1_init");
        goto done;
    }
    have_f = 1;
    if (proj_tol > 0)
        f.proj_tol = proj_tol;
    if (proj_max_iter > 0)
        f.proj_max_iter = proj_max_iter;
    mb_problem p;
    memset(&p, 0, sizeof p);
    mb_index1_problem(&f, &p);
    if (project && nc > 0)
        p.project = mb_index1_project_hook;

    mb_options o;
    memset(&o, 0, sizeof o);
    o.rtol = rtol;
    o.atol = PyArray_DATA(atol);
    o.h = h;
    o.first_step = first_step;
    o.max_step = max_step;
    o.min_step = min_step;
    o.max_steps = max_steps;
    o.step_doubling = doubling;
    o.controller = controller ? MB_CONTROLLER_PI : MB_CONTROLLER_I;
    o.error_per_unit_step = epus;
    o.safety = safety;
    o.fac_min = fac_min;
    o.fac_max = fac_max;
    o.dense_output = dense;
    if (t_evalo != Py_None) {
        te = (PyArrayObject *)PyArray_FROMANY(t_evalo, NPY_DOUBLE, 1, 1, NPY_ARRAY_CARRAY);
        if (!te)
            goto done;
        o.t_eval = PyArray_DATA(te);
        o.n_eval = PyArray_SIZE(te);
    }
    Py_ssize_t nev = 0, ncont = 0;
    if (events != Py_None) {
        nev = PySequence_Size(events);
        if (nev < 0)
            goto done;
        if (nev > 0) {
            term = (PyArrayObject *)PyArray_FROMANY(termo, NPY_INT, 1, 1, NPY_ARRAY_CARRAY);
            dir = term ? (PyArrayObject *)PyArray_FROMANY(diro, NPY_INT, 1, 1, NPY_ARRAY_CARRAY)
                       : NULL;
            sw = dir && swo != Py_None
                     ? (PyArrayObject *)PyArray_FROMANY(swo, NPY_INT, 1, 1, NPY_ARRAY_CARRAY)
                     : NULL;
            if (!dir || (swo != Py_None && !sw))
                goto done;
            if (PyArray_SIZE(term) != nev || PyArray_SIZE(dir) != nev ||
                (sw && PyArray_SIZE(sw) != nev)) {
                PyErr_SetString(PyExc_ValueError,
                                "terminal, direction and switching need one entry per event.");
                goto done;
            }
            pye.events = events;
            pye.args = NULL;
            pye.n = n;
            pye.nev = nev;
            python_per_step = 1;
        }
    }
    if (contact_sw && mh->planar && mh->ncontact > 0 && m)
        ncont = mh->ncontact;
    if (sm && sw) {
        for (Py_ssize_t i = 0; i < nev; i++)
            if (((const int *)PyArray_DATA(sw))[i]) {
                PyErr_Format(PyExc_ValueError, "events: switching events restart the integration "
                             "inside mbint's driver; SUNDIALS method '%s' runs its own step "
                             "loop.", mname);
                goto done;
            }
    }
    if (nev + ncont > 0) {
        Py_ssize_t ne = nev + ncont;
        ev_flags = PyMem_Calloc((size_t)(3 * ne), sizeof(int));
        if (!ev_flags) {
            PyErr_NoMemory();
            goto done;
        }
        for (Py_ssize_t i = 0; i < nev; i++) {
            ev_flags[i] = ((const int *)PyArray_DATA(term))[i];
            ev_flags[ne + i] = ((const int *)PyArray_DATA(dir))[i];
            ev_flags[2 * ne + i] = sw ? ((const int *)PyArray_DATA(sw))[i] : 0;
        }
        for (Py_ssize_t i = nev; i < ne; i++)
            ev_flags[2 * ne + i] = 1;  /* contacts: non-terminal, both directions, switching */
        sev.n_user = nev;
        sev.pm = ncont ? &mh->pm : NULL;
        o.events = sim_events;
        o.n_events = ne;
        o.terminal = ev_flags;
        o.direction = ev_flags + ne;
        o.switching = ev_flags + 2 * ne;
        o.event_ctx = &sev;
    }

    have_res = 1;
    {
        PyThreadState *ts = python_per_step ? NULL : PyEval_SaveThread();
        if (m)
            mb_driver_run(m, &p, t0, tf, PyArray_DATA(y0), &o, &res);
        else
            mb_sundials_run(mname, &p, t0, tf, PyArray_DATA(y0), &o, &res);
        if (ts)
            PyEval_RestoreThread(ts);
    }
    if (PyErr_Occurred())   /* the user's own exception propagates */
        goto done;
    if (res.status == MB_ERR_MEM) {
        PyErr_NoMemory();
        goto done;
    }

    /* accelerations and multipliers at the output points */
    {
        npy_intp d1[2] = {(npy_intp)res.nt, (npy_intp)nq}, d2[2] = {(npy_intp)res.nt, (npy_intp)nc};
        qdd = PyArray_SimpleNew(2, d1, NPY_DOUBLE);
        lam = PyArray_SimpleNew(2, d2, NPY_DOUBLE);
        if (!qdd || !lam)
            goto done;
        double *A = PyArray_DATA((PyArrayObject *)qdd), *L = PyArray_DATA((PyArrayObject *)lam);
        PyThreadState *ts = mh->python ? NULL : PyEval_SaveThread();
        int failed = 0;
        for (ptrdiff_t i = 0; i < res.nt && !failed; i++) {
            const double *y = res.y + i * n;
            int r2 = mb_index1_solve(&f, res.t[i], y, y + nq, A + i * nq, L + i * nc);
            if (r2 != 0) {
                for (ptrdiff_t c = 0; c < nq; c++)
                    A[i * nq + c] = NAN;
                for (ptrdiff_t c = 0; c < nc; c++)
                    L[i * nc + c] = NAN;
                if (r2 == MB_ERR_CALLBACK)
                    failed = 1;
            }
        }
        if (ts)
            PyEval_RestoreThread(ts);
        if (failed && PyErr_Occurred())
            goto done;
        PyErr_Clear();
    }
    if ((res.status == MB_ERR_LINALG || res.status == MB_ERR_CONV || res.status == MB_ERR_RHS_FAIL) &&
        f.msg[0]) {  /* the formulation says why (e.g. which pivot vanished) */
        size_t len = strlen(res.message);
        snprintf(res.message + len, sizeof res.message - len, "%s%s", len ? " " : "", f.msg);
    }
    out = result_to_dict(&res);
    if (out && (PyDict_SetItemString(out, "qdd", qdd) || PyDict_SetItemString(out, "lam", lam))) {
        Py_CLEAR(out);
        goto done;
    }

done:
    if (have_res)
        mb_result_free(&res);
    if (have_f)
        mb_index1_free(&f);
    Py_XDECREF(qdd);
    Py_XDECREF(lam);
    Py_XDECREF(y0);
    Py_XDECREF(atol);
    Py_XDECREF(te);
    Py_XDECREF(term);
    Py_XDECREF(dir);
    Py_XDECREF(sw);
    PyMem_Free(ev_flags);
    return out;
}

PyDoc_STRVAR(mech_info_doc,
"mech_info(handle) -> dict\n--\n\n"
"nq, nc, whether a kernel calls Python, the number of contacts and which\n"
"derivative kernels are analytic (True) or left to finite differences (False).");

static PyObject *mech_info(PyObject *self, PyObject *ho)
{
    (void)self;
    mech_handle *h = get_handle(ho);
    if (!h)
        return NULL;
    const mb_mech *m = &h->mech;
    return Py_BuildValue("{s:n,s:n,s:O,s:O,s:n,s:O,s:{s:O,s:O,s:O,s:O,s:O,s:O}}",
                         "nq", (Py_ssize_t)h->nq, "nc", (Py_ssize_t)h->nc,
                         "python", h->python ? Py_True : Py_False,
                         "planar", h->planar ? Py_True : Py_False,
                         "ncontact", (Py_ssize_t)h->ncontact,
                         "mass_constant", m->mass_constant ? Py_True : Py_False,
                         "analytic",
                         "forces_q", m->forces_q ? Py_True : Py_False,
                         "forces_qd", m->forces_qd ? Py_True : Py_False,
                         "phiq_x_q", m->phiq_x_q ? Py_True : Py_False,
                         "phiqT_lam_q", m->phiqT_lam_q ? Py_True : Py_False,
                         "gamma_q", m->gamma_q ? Py_True : Py_False,
                         "gamma_qd", m->gamma_qd ? Py_True : Py_False);
}

PyMethodDef mb_model_methods[] = {
    {"planar_layout", planar_layout, METH_NOARGS, planar_layout_doc},
    {"mech_planar", (PyCFunction)(void (*)(void))mech_planar, METH_VARARGS | METH_KEYWORDS,
     mech_planar_doc},
    {"mech_system", (PyCFunction)(void (*)(void))mech_system, METH_VARARGS | METH_KEYWORDS,
     mech_system_doc},
    {"mech_eval", (PyCFunction)(void (*)(void))mech_eval, METH_VARARGS | METH_KEYWORDS,
     mech_eval_doc},
    {"mech_project", (PyCFunction)(void (*)(void))mech_project, METH_VARARGS | METH_KEYWORDS,
     mech_project_doc},
    {"mech_simulate", (PyCFunction)(void (*)(void))mech_simulate, METH_VARARGS | METH_KEYWORDS,
     mech_simulate_doc},
    {"mech_info", mech_info, METH_O, mech_info_doc},
    {NULL, NULL, 0, NULL}};
