/* mbint._core: a SpatialModel (mbint/mbs/spatial.py) as an mb_mech table.
 *
 * The flat tables of SpatialModel.compile() (column names served by
 * _core.spatial_layout, so that Python packs what C reads) are checked and parsed once
 * into an mb_spatial_model (mbs/spatial.h) owned by a mech handle (mech_py.h); the
 * kernels are those of mbs/spatial.c and spatial_forces.c, with no Python per call
 * unless the model has Python point forces.
 *
 * Tables (float64, C order, one row per element; integers as exact doubles):
 *   bodies (nb, 7):   mass Jxx Jyy Jzz Jxy Jxz Jyz (body-frame inertia tensor entries)
 *   gravity (3,)
 *   cons (ncon, 25):  type i j ai(3) bi(3) aj(3) si(3) sj(3) c0 c1 c2 a w psi row
 *   forces (nf, 35):  type i j si(3) sj(3) ai(3) bi(3) aj(3) bj(3) k c L0
 *                     fa_c0 fa_c1 fa_c2 fa_a fa_w fa_psi z0 bump_x bump_r wheel_r unilateral
 *   callbacks:        a sequence of (body, (sx, sy, sz), fn), fn a Python callable
 *                     fn(t, q, qd) -> (F, n) (6 values, global frame) or a LowLevelCallable
 *                     capsule "int (void *, double, const double *, const double *, double *)".
 */
#include "mech_py.h"
#define NO_IMPORT_ARRAY
#define PY_ARRAY_UNIQUE_SYMBOL MBINT_ARRAY_API
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#include <numpy/arrayobject.h>
#include <math.h>
#include <string.h>
#include "convert.h"
#include "status.h"

enum { SP_BODY_NCOLS = 7, SP_CON_NCOLS = 25, SP_FORCE_NCOLS = 35 };

static const char *const body_cols[SP_BODY_NCOLS] = {"mass", "Jxx", "Jyy", "Jzz", "Jxy", "Jxz",
                                                     "Jyz"};
static const char *const con_cols[SP_CON_NCOLS] = {
    "type", "i", "j", "ai_x", "ai_y", "ai_z", "bi_x", "bi_y", "bi_z", "aj_x", "aj_y", "aj_z",
    "si_x", "si_y", "si_z", "sj_x", "sj_y", "sj_z", "c0", "c1", "c2", "a", "w", "psi", "row"};
static const char *const force_cols[SP_FORCE_NCOLS] = {
    "type", "i", "j", "si_x", "si_y", "si_z", "sj_x", "sj_y", "sj_z", "ai_x", "ai_y", "ai_z",
    "bi_x", "bi_y", "bi_z", "aj_x", "aj_y", "aj_z", "bj_x", "bj_y", "bj_z", "k", "c", "L0",
    "fa_c0", "fa_c1", "fa_c2", "fa_a", "fa_w", "fa_psi", "z0", "bump_x", "bump_r", "wheel_r",
    "unilateral"};

/* a Python point force: the callable and the handle (for nq) */
struct spatial_pycb {
    mech_handle *h;
    PyObject *fn;
};

static PyObject *names(const char *const *nm, int n)
{
    PyObject *t = PyTuple_New(n);
    for (int k = 0; t && k < n; k++) {
        PyObject *s = PyUnicode_FromString(nm[k]);
        if (!s) {
            Py_DECREF(t);
            return NULL;
        }
        PyTuple_SET_ITEM(t, k, s);
    }
    return t;
}

const char spatial_layout_doc[] =
"spatial_layout() -> dict\n--\n\n"
"Column names of the spatial tables (bodies, cons, forces), the constraint and force\n"
"type codes and the rows of each constraint type (csrc/python/spatial_py.c).";

PyObject *spatial_layout(PyObject *self, PyObject *noargs)
{
    (void)self; (void)noargs;
    return Py_BuildValue(
        "{s:N,s:N,s:N,s:{s:i,s:i,s:i,s:i,s:i},s:{s:i,s:i,s:i,s:i,s:i},s:{i:i,i:i,i:i,i:i,i:i}}",
        "body", names(body_cols, SP_BODY_NCOLS),
        "con", names(con_cols, SP_CON_NCOLS),
        "force", names(force_cols, SP_FORCE_NCOLS),
        "con_types", "dot1", MB_SC_DOT1, "dot2", MB_SC_DOT2, "point", MB_SC_POINT,
        "dist", MB_SC_DIST, "angle", MB_SC_ANGLE,
        "force_types", "tsda", MB_SF_TSDA, "rsda", MB_SF_RSDA, "bushing_t", MB_SF_BUSHING_T,
        "bushing_r", MB_SF_BUSHING_R, "tire", MB_SF_TIRE,
        "con_rows", MB_SC_DOT1, mb_spatial_con_rows(MB_SC_DOT1), MB_SC_DOT2,
        mb_spatial_con_rows(MB_SC_DOT2), MB_SC_POINT, mb_spatial_con_rows(MB_SC_POINT),
        MB_SC_DIST, mb_spatial_con_rows(MB_SC_DIST), MB_SC_ANGLE,
        mb_spatial_con_rows(MB_SC_ANGLE));
}

/* new reference to a C-contiguous finite float64 table (n, cols) */
static PyArrayObject *table(PyObject *o, ptrdiff_t cols, const char *what)
{
    return (PyArrayObject *)as_table_object(o, -1, cols, what);
}

static void vec3(const double *x, double v[3])
{
    v[0] = x[0];
    v[1] = x[1];
    v[2] = x[2];
}

static void timefn(const double *x, mb_timefn *f)
{
    f->c0 = x[0]; f->c1 = x[1]; f->c2 = x[2];
    f->a = x[3]; f->w = x[4]; f->psi = x[5];
}

/* the trampoline of a Python point force */
static int py_point_force(void *ud, double t, const double *q, const double *qd, double *out6)
{
    struct spatial_pycb *cb = ud;
    ptrdiff_t nq = cb->h->nq;
    PyObject *tq = PyFloat_FromDouble(t), *aq = vec_from(q, nq), *av = vec_from(qd, nq);
    PyObject *r = NULL;
    if (tq && aq && av)
        r = PyObject_CallFunctionObjArgs(cb->fn, tq, aq, av, NULL);
    Py_XDECREF(tq);
    Py_XDECREF(aq);
    Py_XDECREF(av);
    if (!r)
        return MB_ERR_CALLBACK;
    PyArrayObject *a = returned_vector(r, 2, 6, "add_force's fn(t, q, qd)",
                                       "add_force: the function returned %zd values, "
                                       "expected %zd (F_x, F_y, F_z, n_x, n_y, n_z).");
    if (!a)
        return MB_ERR_CALLBACK;
    memcpy(out6, PyArray_DATA(a), 6 * sizeof(double));
    Py_DECREF(a);
    return 0;
}

static void spatial_release(mech_handle *h)
{
    if (!h->spatial)
        return;
    for (int k = 0; h->scb_py && k < h->sm.ncb; k++)
        Py_XDECREF(h->scb_py[k].fn);
    PyMem_Free(h->sbody);
    PyMem_Free(h->scons);
    PyMem_Free(h->sforces);
    PyMem_Free(h->scb);
    PyMem_Free(h->scb_py);
    h->sbody = NULL;
    h->scons = NULL;
    h->sforces = NULL;
    h->scb = NULL;
    h->scb_py = NULL;
}

const char mech_spatial_doc[] =
"mech_spatial(bodies, gravity, cons, forces, nc, callbacks=()) -> handle\n--\n\n"
"Parse the flat tables of SpatialModel.compile() (layout: spatial_layout()) into an\n"
"mb_spatial_model and return a mech handle.  callbacks: (body, s, fn) point forces,\n"
"fn a Python callable fn(t, q, qd) -> 6 values (F, n; the run then keeps the GIL) or a\n"
"LowLevelCallable capsule 'int (void *, double, const double *, const double *, double *)'.";

/* bodies: a positive mass and a symmetric positive definite inertia tensor (Sylvester);
 * 0 or -1 with ValueError */
static int parse_bodies(mech_handle *h, PyArrayObject *B, ptrdiff_t nb)
{
    memcpy(h->sbody, PyArray_DATA(B), (size_t)(SP_BODY_NCOLS * nb) * sizeof(double));
    for (ptrdiff_t k = 0; k < nb; k++) {
        const double *x = h->sbody + SP_BODY_NCOLS * k;
        double J11 = x[1], J22 = x[2], J33 = x[3], J12 = x[4], J13 = x[5], J23 = x[6];
        double d2 = J11 * J22 - J12 * J12;
        double d3 = J11 * (J22 * J33 - J23 * J23) - J12 * (J12 * J33 - J23 * J13) +
                    J13 * (J12 * J23 - J22 * J13);
        if (!(x[0] > 0) || !(J11 > 0) || !(d2 > 0) || !(d3 > 0)) {
            PyErr_Format(PyExc_ValueError, "bodies row %zd: the mass must be positive and the "
                         "inertia tensor positive definite.", (Py_ssize_t)k);
            return -1;
        }
    }
    return 0;
}

/* constraint rows: nb normalizations and the elements' rows make nc; 0 or -1 */
static int parse_cons(mech_handle *h, PyArrayObject *C, ptrdiff_t nb, ptrdiff_t nc)
{
    ptrdiff_t rows = nb, ncon = PyArray_DIM(C, 0);
    const double *ct = PyArray_DATA(C);
    for (ptrdiff_t r = 0; r < ncon; r++) {
        const double *x = ct + r * SP_CON_NCOLS;
        mb_spatial_con *c = &h->scons[r];
        if (table_int(x[0], 1, 6, "cons", r, "type", &c->type) ||
            table_int(x[1], -1, (int)nb, "cons", r, "i", &c->i) ||
            table_int(x[2], -1, (int)nb, "cons", r, "j", &c->j) ||
            table_int(x[24], (int)nb, (int)(nc > nb ? nc : nb + 1), "cons", r, "row", &c->row))
            return -1;
        vec3(x + 3, c->ai);
        vec3(x + 6, c->bi);
        vec3(x + 9, c->aj);
        vec3(x + 12, c->si);
        vec3(x + 15, c->sj);
        timefn(x + 18, &c->f);
        int nr = mb_spatial_con_rows(c->type);
        if (c->row + nr > nc) {
            PyErr_Format(PyExc_ValueError, "cons row %zd: rows %d..%d exceed nc = %zd.",
                         (Py_ssize_t)r, c->row, c->row + nr - 1, (Py_ssize_t)nc);
            return -1;
        }
        rows += nr;
    }
    if (rows != nc) {
        PyErr_Format(PyExc_ValueError, "nc = %zd but the model has %zd rows (nb normalizations "
                     "and the elements').", (Py_ssize_t)nc, (Py_ssize_t)rows);
        return -1;
    }
    return 0;
}

/* force rows; 0 or -1 */
static int parse_forces(mech_handle *h, PyArrayObject *F, ptrdiff_t nb)
{
    const double *ft = PyArray_DATA(F);
    for (ptrdiff_t r = 0; r < PyArray_DIM(F, 0); r++) {
        const double *x = ft + r * SP_FORCE_NCOLS;
        mb_spatial_force *f = &h->sforces[r];
        if (table_int(x[0], 1, 6, "forces", r, "type", &f->type) ||
            table_int(x[1], -1, (int)nb, "forces", r, "i", &f->i) ||
            table_int(x[2], -1, (int)nb, "forces", r, "j", &f->j) ||
            table_int(x[34], 0, 2, "forces", r, "unilateral", &f->unilateral))
            return -1;
        vec3(x + 3, f->si);
        vec3(x + 6, f->sj);
        vec3(x + 9, f->ai);
        vec3(x + 12, f->bi);
        vec3(x + 15, f->aj);
        vec3(x + 18, f->bj);
        f->k = x[21];
        f->c = x[22];
        f->L0 = x[23];
        timefn(x + 24, &f->fa);
        f->z0 = x[30];
        f->bump_x = x[31];
        f->bump_r = x[32];
        f->wheel_r = x[33];
        if (f->type == MB_SF_TIRE && (f->i < 0 || f->bump_r < 0 || f->wheel_r < 0)) {
            PyErr_Format(PyExc_ValueError, "forces row %zd: a tire needs a body i and "
                         "non-negative bump and wheel radii.", (Py_ssize_t)r);
            return -1;
        }
    }
    return 0;
}

/* the function of callback k: a LowLevelCallable of the point-force signature or a
 * Python callable (the run then keeps the GIL); 0 or -1 */
static int callback_fn(mech_handle *h, ptrdiff_t k, PyObject *fn, mb_spatial_cbforce *c)
{
    if (PyCapsule_CheckExact(fn)) {
        char sig[256];
        void *cf, *ud;
        if (capsule_signature(fn, sig, sizeof sig, &cf, &ud))
            return -1;
        if (strcmp(sig, "int(void*,double,double*,double*,double*)") != 0) {
            PyErr_Format(PyExc_ValueError, "callbacks[%zd]: LowLevelCallable signature '%s' "
                         "is not supported; expected 'int (void *, double, const double *, "
                         "const double *, double *)'.", (Py_ssize_t)k, sig);
            return -1;
        }
        c->fn = (mb_point_force_fn)cf;
        c->ud = ud;
    } else if (PyCallable_Check(fn)) {
        Py_INCREF(fn);
        h->scb_py[k].fn = fn;
        h->scb_py[k].h = h;
        c->fn = py_point_force;
        c->ud = &h->scb_py[k];
        h->python = 1;
    } else {
        PyErr_Format(PyExc_TypeError, "callbacks[%zd]: fn must be callable or a "
                     "LowLevelCallable.", (Py_ssize_t)k);
        return -1;
    }
    return 0;
}

/* the point-force callbacks (body, s, fn); 0 or -1 */
static int parse_callbacks(mech_handle *h, PyObject *cbs, ptrdiff_t nb)
{
    for (ptrdiff_t k = 0; k < PySequence_Fast_GET_SIZE(cbs); k++) {
        PyObject *item = PySequence_Fast_GET_ITEM(cbs, k);
        PyObject *bod, *so, *fn;
        if (!PyTuple_Check(item) || !PyArg_ParseTuple(item, "OOO", &bod, &so, &fn)) {
            PyErr_Clear();
            PyErr_Format(PyExc_ValueError, "callbacks[%zd] must be (body, s, fn).", (Py_ssize_t)k);
            return -1;
        }
        long b = PyLong_AsLong(bod);
        if ((b == -1 && PyErr_Occurred()) || b < 0 || b >= nb) {
            PyErr_Clear();
            PyErr_Format(PyExc_ValueError, "callbacks[%zd]: body must be an index in [0, %zd).",
                         (Py_ssize_t)k, (Py_ssize_t)nb);
            return -1;
        }
        PyArrayObject *S = as_vec(so, 3, "callbacks: s");
        if (!S)
            return -1;
        mb_spatial_cbforce *c = &h->scb[k];
        c->body = (int)b;
        vec3(PyArray_DATA(S), c->s);
        Py_DECREF(S);
        if (callback_fn(h, k, fn, c))
            return -1;
        h->sm.ncb = (int)(k + 1);  /* counts the callbacks filled so far (spatial_release) */
    }
    return 0;
}

/* a handle with room for the tables; NULL with MemoryError */
static mech_handle *new_spatial_handle(ptrdiff_t nb, ptrdiff_t nc, ptrdiff_t ncon, ptrdiff_t nf,
                                       ptrdiff_t ncb)
{
    mech_handle *h = PyMem_Calloc(1, sizeof *h);
    if (!h)
        return (mech_handle *)PyErr_NoMemory();
    h->spatial = 1;
    h->release = spatial_release;
    h->nq = 7 * nb;
    h->nc = nc;
    h->sbody = PyMem_Malloc((size_t)(SP_BODY_NCOLS * nb) * sizeof(double));
    h->scons = PyMem_Calloc((size_t)(ncon > 0 ? ncon : 1), sizeof(mb_spatial_con));
    h->sforces = PyMem_Calloc((size_t)(nf > 0 ? nf : 1), sizeof(mb_spatial_force));
    h->scb = PyMem_Calloc((size_t)(ncb > 0 ? ncb : 1), sizeof(mb_spatial_cbforce));
    h->scb_py = PyMem_Calloc((size_t)(ncb > 0 ? ncb : 1), sizeof(struct spatial_pycb));
    if (!h->sbody || !h->scons || !h->sforces || !h->scb || !h->scb_py) {
        spatial_release(h);
        PyMem_Free(h);
        return (mech_handle *)PyErr_NoMemory();
    }
    return h;
}

/* the parsed tables as the model (mb_spatial_model) and its mb_mech; 0 or -1 */
static int finish_model(mech_handle *h, PyArrayObject *G, ptrdiff_t nb, ptrdiff_t nc,
                        ptrdiff_t ncon, ptrdiff_t nf, ptrdiff_t ncb)
{
    h->sm.nb = (int)nb;
    h->sm.body = h->sbody;
    for (int c = 0; c < 3; c++) h->sm.g[c] = ((const double *)PyArray_DATA(G))[c];
    h->sm.ncon = (int)ncon;
    h->sm.cons = h->scons;
    h->sm.nc = (int)nc;
    h->sm.nf = (int)nf;
    h->sm.forces = h->sforces;
    h->sm.ncb = (int)ncb;
    h->sm.cb = h->scb;
    if (mb_spatial_check(&h->sm) != MB_OK) {
        PyErr_SetString(PyExc_ValueError, "mech_spatial: the tables are inconsistent.");
        return -1;
    }
    mb_spatial_mech(&h->sm, &h->mech);
    return 0;
}

PyObject *mech_spatial(PyObject *self, PyObject *args, PyObject *kw)
{
    (void)self;
    static char *kwlist[] = {"bodies", "gravity", "cons", "forces", "nc", "callbacks", NULL};
    PyObject *bo, *go, *co, *fo, *cbo = NULL;
    Py_ssize_t nc;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OOOOn|O", kwlist, &bo, &go, &co, &fo, &nc, &cbo))
        return NULL;
    PyArrayObject *B = NULL, *G = NULL, *C = NULL, *F = NULL;
    PyObject *cbs = NULL, *out = NULL;
    mech_handle *h = NULL;
    B = table(bo, SP_BODY_NCOLS, "bodies");
    C = B ? table(co, SP_CON_NCOLS, "cons") : NULL;
    F = C ? table(fo, SP_FORCE_NCOLS, "forces") : NULL;
    G = F ? (PyArrayObject *)PyArray_FROMANY(go, NPY_DOUBLE, 1, 1, NPY_ARRAY_CARRAY) : NULL;
    if (!G)
        goto done;
    if (PyArray_SIZE(G) != 3 || !isfinite(((double *)PyArray_DATA(G))[0]) ||
        !isfinite(((double *)PyArray_DATA(G))[1]) || !isfinite(((double *)PyArray_DATA(G))[2])) {
        PyErr_SetString(PyExc_ValueError, "gravity must have 3 finite entries.");
        goto done;
    }
    cbs = cbo ? PySequence_Fast(cbo, "callbacks must be a sequence of (body, s, fn).")
              : PyTuple_New(0);
    if (!cbs)
        goto done;
    ptrdiff_t nb = PyArray_DIM(B, 0), ncon = PyArray_DIM(C, 0), nf = PyArray_DIM(F, 0);
    ptrdiff_t ncb = PySequence_Fast_GET_SIZE(cbs);
    if (nb < 1 || nb > 1000000) {
        PyErr_SetString(PyExc_ValueError, "bodies: a spatial model needs at least one body.");
        goto done;
    }
    if (!(h = new_spatial_handle(nb, nc, ncon, nf, ncb)))
        goto done;
    if (parse_bodies(h, B, nb) || parse_cons(h, C, nb, nc) || parse_forces(h, F, nb) ||
        parse_callbacks(h, cbs, nb) || finish_model(h, G, nb, nc, ncon, nf, ncb)) {
        spatial_release(h);
        PyMem_Free(h);
        goto done;
    }
    out = new_handle_capsule(h);
done:
    Py_XDECREF(B);
    Py_XDECREF(G);
    Py_XDECREF(C);
    Py_XDECREF(F);
    Py_XDECREF(cbs);
    return out;
}
