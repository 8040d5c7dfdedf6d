/* mbint._core: a PlanarModel (mbint/mbs/planar.py) as an mb_mech table.
 *
 * The flat tables of PlanarModel.compile() (row layout in planar_py.h, column
 * names served by _core.planar_layout) are checked and parsed once into an
 * mb_planar_model (mbs/model.h) owned by a mech handle (mech_py.h); the kernels
 * are then those of mbs/planar.c, with no Python per call unless the model has
 * Python forces (extra). */
#include "planar_py.h"
#include "mech_py.h"
#define NO_IMPORT_ARRAY
#define PY_ARRAY_UNIQUE_SYMBOL MBINT_ARRAY_API
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#include <numpy/arrayobject.h>
#include <math.h>
#include <string.h>
#include "convert.h"
#include "status.h"

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

const char planar_layout_doc[] =
"planar_layout() -> dict\n--\n\n"
"Column names of the planar tables (bodies, joints, forces), the joint and force\n"
"type codes and the number of Phi rows of each joint type (see planar_py.h).";

PyObject *planar_layout(PyObject *self, PyObject *noargs)
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

/* ------------------------------------------------------------------ arrays */

static PyArrayObject *as_table(PyObject *o, ptrdiff_t rows, ptrdiff_t cols, const char *what)
{
    return (PyArrayObject *)as_table_object(o, rows, cols, what);
}

/* ------------------------------------------------------------------ planar */

/* the slow path of PlanarModel.add_force: Q += extra(t, q, qd) */
static int planar_extra(double t, const double *q, const double *qd, double *Q, void *ctx)
{
    mech_handle *h = ctx;
    ptrdiff_t nq = h->nq;
    PyObject *tq = PyFloat_FromDouble(t), *aq = vec_from(q, nq), *av = vec_from(qd, nq);
    PyObject *r = NULL;
    if (tq && aq && av)
        r = PyObject_CallFunctionObjArgs(h->extra, tq, aq, av, NULL);
    Py_XDECREF(tq);
    Py_XDECREF(aq);
    Py_XDECREF(av);
    if (!r)
        return MB_ERR_CALLBACK;
    PyArrayObject *a = returned_vector(r, 1, nq, "the Python forces extra(t, q, qd)", "add_force: the forces returned %zd entries, "
                                       "expected %zd.");
    if (!a)
        return MB_ERR_CALLBACK;
    const double *x = PyArray_DATA(a);
    for (ptrdiff_t k = 0; k < nq; k++)
        Q[k] += x[k];
    Py_DECREF(a);
    return 0;
}

const char mech_planar_doc[] =
"mech_planar(bodies, gravity, joints, forces, nc, extra=None) -> handle\n--\n\n"
"Parse the flat tables of PlanarModel.compile() (layout: planar_layout()) into an\n"
"mb_planar_model and return a mech handle.  extra(t, q, qd) -> (nq,) is added to\n"
"the generalized forces (Python forces; the run then keeps the GIL).";

/* bodies: positive mass and inertia; 0 or -1 with ValueError */
static int parse_bodies(mech_handle *h, PyArrayObject *B, ptrdiff_t nb)
{
    memcpy(h->body, PyArray_DATA(B), (size_t)(2 * nb) * sizeof(double));
    for (ptrdiff_t k = 0; k < nb; k++)
        if (!(h->body[2 * k] > 0) || !(h->body[2 * k + 1] > 0)) {
            PyErr_Format(PyExc_ValueError, "bodies row %zd: mass and inertia must be positive.",
                         (Py_ssize_t)k);
            return -1;
        }
    return 0;
}

/* joint rows: their rows make nc; 0 or -1 */
static int parse_joints(mech_handle *h, PyArrayObject *J, ptrdiff_t nb, ptrdiff_t nc)
{
    ptrdiff_t rows_total = 0;
    const double *jt = PyArray_DATA(J);
    for (ptrdiff_t r = 0; r < PyArray_DIM(J, 0); r++) {
        const double *x = jt + r * MB_PY_JOINT_NCOLS;
        mb_planar_joint *jn = &h->joints[r];
        if (table_int(x[0], 1, 7, "joints", r, "type", &jn->type) ||
            table_int(x[1], -1, (int)nb, "joints", r, "i", &jn->i) ||
            table_int(x[2], -1, (int)nb, "joints", r, "j", &jn->j) ||
            table_int(x[11], 0, 3, "joints", r, "coord", &jn->coord) ||
            table_int(x[18], 0, (int)(nc > 0 ? nc : 1), "joints", r, "row", &jn->row))
            return -1;
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
            return -1;
        }
        if (jn->type == MB_JOINT_DRIVER_COORD && jn->i < 0) {
            PyErr_Format(PyExc_ValueError, "joints row %zd: a coordinate driver needs a body.",
                         (Py_ssize_t)r);
            return -1;
        }
        rows_total += nr;
    }
    if (rows_total != nc) {
        PyErr_Format(PyExc_ValueError, "nc = %zd but the joints have %zd rows.", (Py_ssize_t)nc,
                     (Py_ssize_t)rows_total);
        return -1;
    }
    return 0;
}

/* force rows (and the number of contacts); 0 or -1 */
static int parse_forces(mech_handle *h, PyArrayObject *F, ptrdiff_t nb)
{
    const double *ft = PyArray_DATA(F);
    for (ptrdiff_t r = 0; r < PyArray_DIM(F, 0); r++) {
        const double *x = ft + r * MB_PY_FORCE_NCOLS;
        mb_planar_force *fc = &h->forces[r];
        if (table_int(x[0], 1, 6, "forces", r, "type", &fc->type) ||
            table_int(x[1], -1, (int)nb, "forces", r, "i", &fc->i) ||
            table_int(x[2], -1, (int)nb, "forces", r, "j", &fc->j) ||
            table_int(x[16], 0, 2, "forces", r, "wrap", &fc->wrap) ||
            table_int(x[26], 0, (int)(3 * nb), "forces", r, "coord", &fc->coord))
            return -1;
        fc->si[0] = x[3]; fc->si[1] = x[4];
        fc->sj[0] = x[5]; fc->sj[1] = x[6];
        fc->k = x[7]; fc->c = x[8]; fc->L0 = x[9];
        fc->fa.c0 = x[10]; fc->fa.c1 = x[11]; fc->fa.c2 = x[12];
        fc->fa.a = x[13]; fc->fa.w = x[14]; fc->fa.psi = x[15];
        fc->K = x[17]; fc->cd = x[18]; fc->e = x[19];
        fc->ri = x[20]; fc->rj = x[21];
        fc->p0[0] = x[22]; fc->p0[1] = x[23];
        fc->nrm[0] = x[24]; fc->nrm[1] = x[25];
        int contact = fc->type == MB_FORCE_CONTACT_LINE || fc->type == MB_FORCE_CONTACT_CIRCLES;
        if (contact && fc->i < 0) {
            PyErr_Format(PyExc_ValueError, "forces row %zd: a contact needs a body i.",
                         (Py_ssize_t)r);
            return -1;
        }
        h->ncontact += contact;
    }
    return 0;
}

static void planar_release(mech_handle *h)
{
    PyMem_Free(h->body);
    PyMem_Free(h->joints);
    PyMem_Free(h->forces);
    PyMem_Free(h);
}

/* a handle with room for the tables; NULL with MemoryError */
static mech_handle *new_planar_handle(ptrdiff_t nb, ptrdiff_t nc, ptrdiff_t nj, ptrdiff_t nf)
{
    mech_handle *h = PyMem_Calloc(1, sizeof *h);
    if (!h)
        return (mech_handle *)PyErr_NoMemory();
    h->planar = 1;
    h->nq = 3 * nb;
    h->nc = nc;
    h->body = PyMem_Malloc((size_t)(2 * nb) * sizeof(double));
    h->joints = PyMem_Calloc((size_t)(nj > 0 ? nj : 1), sizeof(mb_planar_joint));
    h->forces = PyMem_Calloc((size_t)(nf > 0 ? nf : 1), sizeof(mb_planar_force));
    if (!h->body || !h->joints || !h->forces) {
        planar_release(h);
        return (mech_handle *)PyErr_NoMemory();
    }
    return h;
}

/* the parsed tables as the model (mb_planar_model) and its mb_mech */
static void finish_model(mech_handle *h, PyArrayObject *G, ptrdiff_t nb, ptrdiff_t nc,
                         ptrdiff_t nj, ptrdiff_t nf, PyObject *extra)
{
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
}

PyObject *mech_planar(PyObject *self, PyObject *args, PyObject *kw)
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
    G = F ? (PyArrayObject *)PyArray_FROMANY(go, NPY_DOUBLE, 1, 1, NPY_ARRAY_CARRAY) : NULL;
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
    if (!(h = new_planar_handle(nb, nc, nj, nf)))
        goto done;
    if (parse_bodies(h, B, nb) || parse_joints(h, J, nb, nc) || parse_forces(h, F, nb)) {
        planar_release(h);
        goto done;
    }
    finish_model(h, G, nb, nc, nj, nf, extra);
    out = new_handle_capsule(h);
done:
    Py_XDECREF(B);
    Py_XDECREF(G);
    Py_XDECREF(J);
    Py_XDECREF(F);
    return out;
}
