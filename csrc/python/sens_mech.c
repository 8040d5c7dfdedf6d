/* Forward parameter sensitivities of a mechanism's run (issue 26): the parameters'
 * addresses in a handle's tables, and the run of _core.mech_simulate(sens=...) as
 * core/sens.h's augmented problem over the formulation's (sens_mech.h). */
#include "sens_mech.h"
#define NO_IMPORT_ARRAY
#define PY_ARRAY_UNIQUE_SYMBOL MBINT_ARRAY_API
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#include <numpy/arrayobject.h>
#include <float.h>
#include <math.h>
#include <stddef.h>
#include <string.h>
#include "convert.h"
#include "sens.h"
#include "status.h"

/* ---- the parameters: a column name -> the offset of its double in a row ---- */

typedef struct field {
    const char *name;
    size_t off;
} field;

#define D (sizeof(double))
#define TF(S, m, p) {p "c0", offsetof(S, m.c0)}, {p "c1", offsetof(S, m.c1)},          \
        {p "c2", offsetof(S, m.c2)}, {p "a", offsetof(S, m.a)}, {p "w", offsetof(S, m.w)}, \
        {p "psi", offsetof(S, m.psi)}
#define V2(S, m, p) {p "_x", offsetof(S, m)}, {p "_y", offsetof(S, m) + D}
#define V3(S, m, p) V2(S, m, p), {p "_z", offsetof(S, m) + 2 * D}

static const field planar_joint[] = {
    V2(mb_planar_joint, si, "si"), V2(mb_planar_joint, sj, "sj"), V2(mb_planar_joint, ni, "ni"),
    {"L", offsetof(mb_planar_joint, L)}, {"phi0", offsetof(mb_planar_joint, phi0)},
    TF(mb_planar_joint, f, ""), {NULL, 0}};
static const field planar_force[] = {
    V2(mb_planar_force, si, "si"), V2(mb_planar_force, sj, "sj"),
    {"k", offsetof(mb_planar_force, k)}, {"c", offsetof(mb_planar_force, c)},
    {"L0", offsetof(mb_planar_force, L0)}, TF(mb_planar_force, fa, "fa_"),
    {"K", offsetof(mb_planar_force, K)}, {"cd", offsetof(mb_planar_force, cd)},
    {"e", offsetof(mb_planar_force, e)}, {"ri", offsetof(mb_planar_force, ri)},
    {"rj", offsetof(mb_planar_force, rj)}, V2(mb_planar_force, p0, "p0"),
    V2(mb_planar_force, nrm, "nrm"), {NULL, 0}};
static const field spatial_con[] = {
    V3(mb_spatial_con, ai, "ai"), V3(mb_spatial_con, bi, "bi"), V3(mb_spatial_con, aj, "aj"),
    V3(mb_spatial_con, si, "si"), V3(mb_spatial_con, sj, "sj"), TF(mb_spatial_con, f, ""),
    {NULL, 0}};
static const field spatial_force[] = {
    V3(mb_spatial_force, si, "si"), V3(mb_spatial_force, sj, "sj"),
    V3(mb_spatial_force, ai, "ai"), V3(mb_spatial_force, bi, "bi"),
    V3(mb_spatial_force, aj, "aj"), V3(mb_spatial_force, bj, "bj"),
    {"k", offsetof(mb_spatial_force, k)}, {"c", offsetof(mb_spatial_force, c)},
    {"L0", offsetof(mb_spatial_force, L0)}, TF(mb_spatial_force, fa, "fa_"),
    {"z0", offsetof(mb_spatial_force, z0)}, {"bump_x", offsetof(mb_spatial_force, bump_x)},
    {"bump_r", offsetof(mb_spatial_force, bump_r)},
    {"wheel_r", offsetof(mb_spatial_force, wheel_r)}, {NULL, 0}};
static const char *const planar_body[] = {"mass", "inertia", NULL};
static const char *const spatial_body[] = {"mass", "Jxx", "Jyy", "Jzz", "Jxy", "Jxz", "Jyz",
                                           NULL};

static double *in_row(void *row, const field *f, const char *name)
{
    for (; f->name; f++)
        if (strcmp(f->name, name) == 0)
            return (double *)((char *)row + f->off);
    return NULL;
}

double *mech_param_slot(mech_handle *h, int table, ptrdiff_t row, const char *name,
                        const char **why)
{
    ptrdiff_t nrow = 0;
    *why = "the model is neither planar nor spatial (a MechanicalSystem's kernels are its own)";
    if (!h->planar && !h->spatial)
        return NULL;
    if (table == 0)
        nrow = h->planar ? h->pm.nb : h->sm.nb;
    else if (table == 1)
        nrow = h->planar ? h->pm.nj : h->sm.ncon;
    else if (table == 2)
        nrow = h->planar ? h->pm.nf : h->sm.nf;
    *why = "no such row of the table";
    if (table < 0 || table > 2 || row < 0 || row >= nrow)
        return NULL;
    double *p = NULL;
    if (table == 0) {
        const char *const *cols = h->planar ? planar_body : spatial_body;
        int ncol = h->planar ? 2 : 7;
        for (int c = 0; cols[c] && !p; c++)
            if (strcmp(cols[c], name) == 0)
                p = (h->planar ? h->body : h->sbody) + ncol * row + c;
    } else if (table == 1) {
        p = h->planar ? in_row(&h->joints[row], planar_joint, name)
                      : in_row(&h->scons[row], spatial_con, name);
    } else {
        p = h->planar ? in_row(&h->forces[row], planar_force, name)
                      : in_row(&h->sforces[row], spatial_force, name);
    }
    *why = "no such real-valued column (type, body indices, row, coord, wrap and "
           "unilateral are no parameters)";
    return p;
}

const char mech_param_doc[] =
"mech_param(handle, table, row, name, value=None) -> float\n--\n\n"
"The value of a model parameter in the handle's C tables (table 0 bodies, 1 joints\n"
"(planar joint rows; spatial constraint element rows), 2 force elements; name a\n"
"column of planar_layout() / spatial_layout()); with value, set it (every later\n"
"evaluation and run on the handle reads the new value) and return the old one.";

PyObject *mech_param(PyObject *self, PyObject *args, PyObject *kw)
{
    (void)self;
    static char *kwlist[] = {"handle", "table", "row", "name", "value", NULL};
    PyObject *ho, *vo = Py_None;
    int table;
    Py_ssize_t row;
    const char *name, *why;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "Oins|O", kwlist, &ho, &table, &row, &name, &vo))
        return NULL;
    mech_handle *h = mech_handle_get(ho);
    if (!h)
        return NULL;
    double *p = mech_param_slot(h, table, row, name, &why);
    if (!p)
        return PyErr_Format(PyExc_ValueError, "mech_param: table %d row %zd column '%s': %s.",
                            table, row, name, why);
    double old = *p;
    if (vo != Py_None) {
        double v = PyFloat_AsDouble(vo);
        if (v == -1.0 && PyErr_Occurred())
            return NULL;
        *p = v;
    }
    return PyFloat_FromDouble(old);
}

/* ---- the run ---- */

struct mech_sens {
    mech_handle *h;
    int np, block_newton, dq, jac_rhs;
    int *table;
    double **p, *last, *pbar;
    double *ep;              /* np: the step of df/dp_k (m_dfdp) */
    double *atol_s;          /* np: the atol of s_k's components, or 0: atol / pbar_k */
    double *fpm;             /* 2 n: its two evaluations */
    double *s0;              /* np x 2 nq: the initial sensitivities of (q, q') */
    mb_formulation *F;
    mb_problem base, watch;
    mb_sens *s;
    double *work;
    double *atol_dq;         /* n: the atol of the difference steps (dq_atol) */
    ptrdiff_t nt;
    PyObject *sy, *sq, *sqd; /* after split: (n | nq, np, nt) */
};

/* a parameter changed since the formulation last saw the tables: tell it */
static int watch(mech_sens *ms)
{
    int changed = 0;
    for (int k = 0; k < ms->np; k++)
        if (ms->p[k] && memcmp(ms->p[k], &ms->last[k], sizeof(double)) != 0) {
            ms->last[k] = *ms->p[k];
            changed = 1;
        }
    if (!changed)
        return 0;
    int rc = mb_form_params_changed(ms->F);
    return rc == MB_OK ? 0 : (rc > 0 ? -rc : rc);
}

static int w_rhs(double t, const double *y, double *f, void *ctx)
{
    mech_sens *ms = ctx;
    int rc = watch(ms);
    return rc ? rc : ms->base.rhs(t, y, f, ms->base.ctx);
}

static int w_jac(double t, const double *y, double *J, ptrdiff_t ld, void *ctx)
{
    mech_sens *ms = ctx;
    int rc = watch(ms);
    return rc ? rc : ms->base.jac(t, y, J, ld, ms->base.ctx);
}

static int w_dfdt(double t, const double *y, double *ft, void *ctx)
{
    mech_sens *ms = ctx;
    int rc = watch(ms);
    return rc ? rc : ms->base.dfdt(t, y, ft, ms->base.ctx);
}

static int w_acc(double t, const double *q, const double *qd, double *a, void *ctx)
{
    mech_sens *ms = ctx;
    int rc = watch(ms);
    return rc ? rc : ms->base.acc(t, q, qd, a, ms->base.ctx);
}

static int w_bound(double t, const double *y, const double *f, double *h, void *ctx)
{
    mech_sens *ms = ctx;
    int rc = watch(ms);
    return rc ? rc : ms->base.step_bound(t, y, f, h, ms->base.ctx);
}

/* Column k of df/dp by a centred difference in p alone, step ep[k] (sens.h's dfdp: the
 * difference of the augmented rhs then runs along (s_k, 0)).  A force element's k, c or
 * actuator coefficient enters f linearly (Q is linear in it, and every formulation's f
 * affine in Q): ep = its scale, exact but for rounding; any other parameter ep =
 * MB_SENS_DFDP_REL times its scale.  With sens.c's step eps^(1/3) pbar the change of f
 * is small beside f when the parameter's force is (the stiff double pendulum's spring
 * beside its damper: 4e-9 of f), and df/dp carries relative rounding noise of ~5e-8. */
#define MB_SENS_DFDP_REL 1e-4

static int m_dfdp(double t, const double *y, int k, double *fp, void *ctx)
{
    mech_sens *ms = ctx;
    ptrdiff_t n = ms->F->n;
    if (!ms->p[k]) {
        memset(fp, 0, (size_t)n * sizeof(double));
        return 0;
    }
    double p0 = *ms->p[k], e = ms->ep[k], *fm = ms->fpm + n;
    *ms->p[k] = p0 + e;
    int rc = w_rhs(t, y, ms->fpm, ms);
    *ms->p[k] = p0 - e;
    if (rc == 0)
        rc = w_rhs(t, y, fm, ms);
    *ms->p[k] = p0;
    for (ptrdiff_t i = 0; i < n && rc == 0; i++) fp[i] = (ms->fpm[i] - fm[i]) / (2 * e);
    return rc;
}

/* the list of sens= entries, checked; 0 or -1 */
static int parse_params(mech_sens *ms, PyObject *params)
{
    for (int k = 0; k < ms->np; k++) {
        PyObject *it = PySequence_Fast_GET_ITEM(params, k);
        int table;
        Py_ssize_t row;
        const char *name, *why;
        double pbar;
        int linear;
        double atol_s;
        if (!PyArg_ParseTuple(it, "insdpd", &table, &row, &name, &pbar, &linear, &atol_s))
            return -1;
        ms->atol_s[k] = atol_s;
        if (!(pbar > 0) || !isfinite(pbar)) {
            PyErr_Format(PyExc_ValueError, "sens: parameter %d: scale %g must be positive.", k,
                         pbar);
            return -1;
        }
        ms->table[k] = table;
        ms->pbar[k] = pbar;
        ms->ep[k] = linear ? pbar : MB_SENS_DFDP_REL * pbar;
        ms->p[k] = NULL;  /* table -1: an initial condition only */
        if (table >= 0 && !(ms->p[k] = mech_param_slot(ms->h, table, row, name, &why))) {
            PyErr_Format(PyExc_ValueError, "sens: parameter %d (table %d row %zd column '%s'): "
                         "%s.", k, table, row, name, why);
            return -1;
        }
        ms->last[k] = ms->p[k] ? *ms->p[k] : 0.0;
    }
    return 0;
}

int mech_sens_parse(mech_handle *h, PyObject *spec, ptrdiff_t nq, mech_sens **out)
{
    *out = NULL;
    if (spec == Py_None)
        return 0;
    PyObject *params, *s0o;
    int block_newton, dq, jac_rhs = 0;
    if (!PyArg_ParseTuple(spec, "OOii|i", &params, &s0o, &block_newton, &dq, &jac_rhs))
        return -1;
    PyObject *pl = PySequence_Fast(params, "sens: a sequence of parameters");
    if (!pl)
        return -1;
    Py_ssize_t np = PySequence_Fast_GET_SIZE(pl);
    PyObject *s0 = np > 0 && np < 100000 ? as_vec_object(s0o, 2 * nq * np, "sens s0") : NULL;
    mech_sens *ms = s0 ? PyMem_Calloc(1, sizeof *ms) : NULL;
    int rc = -1;
    if (!s0) {
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_ValueError, "sens: between 1 and 99999 parameters.");
        goto done;
    }
    if (!ms) {
        PyErr_NoMemory();
        goto done;
    }
    *out = ms;
    ms->h = h;
    ms->np = (int)np;
    ms->block_newton = block_newton;
    ms->jac_rhs = jac_rhs;
    ms->dq = dq ? MB_SENS_FORWARD : MB_SENS_CENTERED;
    ms->table = PyMem_Calloc((size_t)np, sizeof(int));
    ms->p = PyMem_Calloc((size_t)np, sizeof(double *));
    ms->last = PyMem_Calloc((size_t)np, sizeof(double));
    ms->pbar = PyMem_Calloc((size_t)np, sizeof(double));
    ms->ep = PyMem_Calloc((size_t)np, sizeof(double));
    ms->atol_s = PyMem_Calloc((size_t)np, sizeof(double));
    ms->s0 = PyMem_Malloc((size_t)(2 * nq * np) * sizeof(double));
    if (!ms->table || !ms->p || !ms->last || !ms->pbar || !ms->ep || !ms->atol_s || !ms->s0) {
        PyErr_NoMemory();
        goto done;
    }
    memcpy(ms->s0, PyArray_DATA((PyArrayObject *)s0), (size_t)(2 * nq * np) * sizeof(double));
    rc = parse_params(ms, pl);
done:
    Py_DECREF(pl);
    Py_XDECREF(s0);
    return rc;
}

/* what the formulation or the method cannot differentiate: ValueError, -1 */
static int refuse(mech_sens *ms, const mb_formulation *F, int has_method, const char *method)
{
    const char *why = NULL;
    if (F->kind == MB_FORM_STATE_SPACE)
        why = "the state-space formulation changes its coordinates during the run "
              "(repartitions, its check of each step's end); use index1, a DAE formulation "
              "or joint";
    else if (ms->base.project || ms->base.check)
        why = "project=True changes the state after every step, which the sensitivities "
              "would have to follow; run without it";
    else if (F->sparse)
        why = "the sparse linear algebra keeps blocks built at its start; pass "
              "linear_algebra='dense'";
    else if (!has_method)
        why = "the SUNDIALS methods run their own step loop over a residual or an "
              "ODE of their own; use one of mbint's methods";
    if (why) {
        PyErr_Format(PyExc_ValueError, "sensitivities: formulation='%s', method='%s': %s.",
                     mb_form_name(F->kind), method, why);
        return -1;
    }
    for (int k = 0; k < ms->np; k++)
        if (F->kind == MB_FORM_JOINT && (ms->table[k] == 0 || ms->table[k] == 1)) {
            PyErr_Format(PyExc_ValueError, "sensitivities: parameter %d: formulation='joint' "
                         "builds its inertias and joint geometry into its tree when it opens; "
                         "a body's mass or inertia or a joint's entry is a parameter of the "
                         "other formulations (index1, the DAEs).", k);
            return -1;
        }
    return 0;
}

/* the step of a difference along (s, e_k): c / max(1 / pbar, rms(s / (|y| + atol))) */
static double dq_step(const double *s, const double *y, const double *atol, ptrdiff_t n,
                      double pbar, double c)
{
    double r = 0;
    for (ptrdiff_t i = 0; i < n; i++) {
        double w = s[i] / (fabs(y[i]) + atol[i]);
        r += w * w;
    }
    r = n > 0 ? sqrt(r / (double)n) : 0;
    return c / fmax(1.0 / pbar, r);
}

/* The atol of the difference steps e = c / max(1 / pbar, rms(s / (|y| + atol_dq))): the
 * run's atol, but at least MB_SENS_DQ_FLOOR times the largest |y0| of its block (q, q',
 * the multipliers), so that e |s| is c times the block's magnitude.  With atol alone, a
 * component that starts at 0 under a tight atol (an angle, a body at rest) made
 * e |s| ~ 1e-13: the difference of J along s was rounding noise, and bdf and rodas4
 * stopped at t ~ 1e-7 on the stiff double pendulum at atol 1e-8
 * (tests/test_sens_mech_fd.py::test_zero_initial_components_under_a_tight_atol). */
#define MB_SENS_DQ_FLOOR 1.0

static void dq_atol(double *a, const double *atol, const double *y0, ptrdiff_t n, ptrdiff_t nb)
{
    ptrdiff_t lo[3] = {0, nb < n ? nb : n, 2 * nb < n ? 2 * nb : n}, hi[3] = {lo[1], lo[2], n};
    for (int b = 0; b < 3; b++) {
        double m = 0;
        for (ptrdiff_t i = lo[b]; i < hi[b]; i++) m = fmax(m, fabs(y0[i]));
        for (ptrdiff_t i = lo[b]; i < hi[b]; i++) a[i] = fmax(atol[i], MB_SENS_DQ_FLOOR * m);
    }
}

/* The atol of s_k (n x np into a): given, or atol / pbar_k (CVODES'); for the index-1
 * multipliers (a DAE's rows from n2 = 2 nq on, dae_index 1: index1_dae) at least
 * MB_SENS_ALG_FLOOR times the multipliers' largest |y0|, over pbar_k (the higher-index
 * ones enter the norms scaled by h^(index - 1) and keep atol / pbar_k).  An algebraic component of s_k is a solve of the constraint rows, its
 * round-off ~ eps times the multipliers' scale over p; with the run's atol / pbar alone
 * (1e-6 / 5e4 = 2e-11 for rsda2.c on the stiff double pendulum, lambda ~ 4e5 N) that was
 * below it where a d lambda / dp crosses 0: bdf's Newton increments of those rows stayed
 * at ~1e-12 without converging (rate > 1), and the steps collapsed to t ~ 5e-4 s
 * (tests/test_sens_mech_fd.py::test_index1_dae_double_pendulum). */
#define MB_SENS_ALG_FLOOR 1e-10

static void sens_atol(const mech_sens *ms, const double *atol_y, const double *y0, ptrdiff_t n,
                      ptrdiff_t n2, double *a)
{
    const unsigned char *ix = ms->base.dae_index;
    double m = 0;
    for (ptrdiff_t i = n2; i < n; i++) m = fmax(m, fabs(y0[i]));
    for (int k = 0; k < ms->np; k++)
        for (ptrdiff_t i = 0; i < n; i++) {
            int alg1 = ix && i >= n2 && ix[i] <= 1;
            double ai = alg1 ? fmax(atol_y[i], MB_SENS_ALG_FLOOR * m) : atol_y[i];
            a[i + n * k] = ms->atol_s[k] > 0 ? ms->atol_s[k] : ai / ms->pbar[k];
        }
}

/* S0 (n x np) of the integrated state: the centred difference of mb_form_initial along
 * (s0_k of (q, q'), e_k); then the nominal state again (the formulation's initial data) */
static int initial_sens(mech_sens *ms, mb_formulation *F, double t0, const double *q0,
                        const double *qd0, const double *atol_in, const double *atol_y,
                        double *S0)
{
    ptrdiff_t nq = F->nq, n = F->n;
    double *qq = PyMem_Malloc((size_t)(6 * nq + 2 * n) * sizeof(double));
    if (!qq)
        return MB_ERR_MEM;
    double *yp = qq + 2 * nq, *ym = yp + n, *z = ym + n, *az = z + 2 * nq, c = cbrt(DBL_EPSILON);
    const double *at;
    int rc = MB_OK;
    for (ptrdiff_t i = 0; i < nq; i++) {
        z[i] = q0[i];
        z[nq + i] = qd0[i];
    }
    dq_atol(az, atol_in, z, 2 * nq, nq);
    for (int k = 0; k < ms->np && rc == MB_OK; k++) {
        const double *s = ms->s0 + 2 * nq * k;
        double e = dq_step(s, z, az, 2 * nq, ms->pbar[k], c), p0 = ms->p[k] ? *ms->p[k] : 0;
        for (int side = 0; side < 2 && rc == MB_OK; side++) {
            double sg = side ? -e : e;
            for (ptrdiff_t i = 0; i < 2 * nq; i++) qq[i] = z[i] + sg * s[i];
            if (ms->p[k])
                *ms->p[k] = p0 + sg;
            mb_form_params_changed(F);
            rc = mb_form_initial(F, t0, qq, qq + nq, atol_in, side ? ym : yp, &at);
            if (ms->p[k])
                *ms->p[k] = p0;
        }
        for (ptrdiff_t i = 0; i < n && rc == MB_OK; i++)
            S0[i + n * k] = (yp[i] - ym[i]) / (2 * e);
    }
    mb_form_params_changed(F);
    int rc2 = mb_form_initial(F, t0, q0, qd0, atol_in, yp, &at);
    (void)atol_y;
    PyMem_Free(qq);
    return rc != MB_OK ? rc : rc2;
}

int mech_sens_start(mech_sens *ms, mb_formulation *F, const char *method, int has_method,
                    double t0, const double *q0, const double *qd0, const double *atol_in,
                    const double *y0, const double *atol_y, PyObject **Y0, PyObject **atolY)
{
    ms->F = F;
    mb_form_problem(F, &ms->base);
    if (refuse(ms, F, has_method, method))
        return -1;
    mb_problem *w = &ms->watch, *b = &ms->base;
    *w = *b;
    w->rhs = w_rhs;
    w->jac = b->jac ? w_jac : NULL;
    w->dfdt = b->dfdt ? w_dfdt : NULL;
    w->acc = b->acc ? w_acc : NULL;
    w->step_bound = b->step_bound ? w_bound : NULL;
    w->res = NULL;  /* IDA's view: refused above */
    w->ctx = ms;
    ptrdiff_t n = F->n, N = n * (1 + ms->np);
    size_t size = mb_sens_work_size(n, w->nq, ms->np, w->mass != NULL, 1);
    ms->work = PyMem_Malloc((size + 1) * sizeof(double));
    ms->atol_dq = PyMem_Malloc((size_t)n * sizeof(double));
    ms->fpm = PyMem_Malloc((size_t)(2 * n) * sizeof(double));
    double *S0 = PyMem_Malloc((size_t)(n * ms->np) * sizeof(double));
    npy_intp dN = (npy_intp)N;
    *Y0 = PyArray_SimpleNew(1, &dN, NPY_DOUBLE);
    *atolY = PyArray_SimpleNew(1, &dN, NPY_DOUBLE);
    if (!ms->work || !ms->atol_dq || !ms->fpm || !S0 || !*Y0 || !*atolY) {
        PyMem_Free(S0);
        if (!PyErr_Occurred())
            PyErr_NoMemory();
        return -1;
    }
    mb_sens_options o = {ms->dq, ms->block_newton, m_dfdp, ms->jac_rhs && b->jac};
    dq_atol(ms->atol_dq, atol_y, y0, n, b->nq > 0 ? b->nq : F->nq);
    int rc = initial_sens(ms, F, t0, q0, qd0, atol_in, atol_y, S0);
    if (rc == MB_OK)
        rc = mb_sens_init(w, ms->np, ms->p, ms->pbar, ms->atol_dq, &o, 1, ms->work, &ms->s);
    if (rc != MB_OK) {
        PyMem_Free(S0);
        if (!PyErr_Occurred())
            PyErr_Format(PyExc_ValueError, "sensitivities: formulation='%s' at t0 = %g: %s "
                         "(status %d: %s)", mb_form_name(F->kind), t0, F->msg, rc,
                         mb_status_str(rc));
        return -1;
    }
    mb_sens_pack(ms->s, y0, S0, PyArray_DATA((PyArrayObject *)*Y0));
    sens_atol(ms, atol_y, y0, n, 2 * F->nq, S0);
    mb_sens_pack(ms->s, atol_y, S0, PyArray_DATA((PyArrayObject *)*atolY));
    PyMem_Free(S0);
    return 0;
}

const mb_problem *mech_sens_problem(const mech_sens *ms)
{
    return mb_sens_problem(ms->s);
}

/* s_q, s_q' (2 nq) of s_y (n) at (t, y): the formulation's map to (q, q') differenced
 * (centred) along s_y when it is not the identity on y's first 2 nq entries */
static int full_sens(mech_sens *ms, int k, double t, const double *y, const double *sy,
                     double *sq, double *w, const double *atol)
{
    mb_formulation *F = ms->F;
    ptrdiff_t nq = F->nq, n = F->n;
    if (!mb_form_maps_state(F)) {
        memcpy(sq, sy, (size_t)(2 * nq) * sizeof(double));
        return MB_OK;
    }
    double e = dq_step(sy, y, atol, n, ms->pbar[k], cbrt(DBL_EPSILON));
    double *yy = w, *qp = w + n, *qm = qp + 2 * nq;
    for (ptrdiff_t i = 0; i < n; i++) yy[i] = y[i] + e * sy[i];
    int rc = mb_form_outputs(F, t, yy, qp, qp + nq, NULL, NULL);
    for (ptrdiff_t i = 0; i < n; i++) yy[i] = y[i] - e * sy[i];
    if (rc == MB_OK)
        rc = mb_form_outputs(F, t, yy, qm, qm + nq, NULL, NULL);
    for (ptrdiff_t i = 0; i < 2 * nq; i++) sq[i] = rc == MB_OK ? (qp[i] - qm[i]) / (2 * e) : NAN;
    return rc;
}

int mech_sens_split(mech_sens *ms, mb_result *res)
{
    mb_formulation *F = ms->F;
    ptrdiff_t n = F->n, nq = F->nq, N = res->n, nt = res->nt;
    int np = ms->np;
    npy_intp dy[3] = {(npy_intp)n, np, (npy_intp)nt}, dq[3] = {(npy_intp)nq, np, (npy_intp)nt};
    ms->sy = PyArray_SimpleNew(3, dy, NPY_DOUBLE);
    ms->sq = PyArray_SimpleNew(3, dq, NPY_DOUBLE);
    ms->sqd = PyArray_SimpleNew(3, dq, NPY_DOUBLE);
    double *y = PyMem_Malloc((size_t)(n * (np + 3) + 6 * nq + n) * sizeof(double));
    if (!ms->sy || !ms->sq || !ms->sqd || !y) {
        PyMem_Free(y);
        if (!PyErr_Occurred())
            PyErr_NoMemory();
        return -1;
    }
    double *S = y + n, *sq = S + n * np, *w = sq + 2 * nq, *atol = w + n + 4 * nq;
    double *SY = PyArray_DATA((PyArrayObject *)ms->sy), *SQ = PyArray_DATA((PyArrayObject *)ms->sq),
           *SQD = PyArray_DATA((PyArrayObject *)ms->sqd);
    memcpy(atol, ms->atol_dq, (size_t)n * sizeof(double));
    (void)N;
    for (ptrdiff_t m = 0; m < nt; m++) {
        mb_sens_unpack(ms->s, res->y + m * N, y, S);
        for (int k = 0; k < np; k++) {
            for (ptrdiff_t i = 0; i < n; i++) SY[(i * np + k) * nt + m] = S[i + n * k];
            full_sens(ms, k, res->t[m], y, S + n * k, sq, w, atol);
            for (ptrdiff_t i = 0; i < nq; i++) {
                SQ[(i * np + k) * nt + m] = sq[i];
                SQD[(i * np + k) * nt + m] = sq[nq + i];
            }
        }
        memcpy(res->y + m * n, y, (size_t)n * sizeof(double));  /* compacted: row m < row m */
    }
    res->n = n;
    ms->nt = nt;
    PyMem_Free(y);
    PyErr_Clear();
    return 0;
}

int mech_sens_export(mech_sens *ms, PyObject *out, PyObject *y0)
{
    return PyDict_SetItemString(out, "sens_y", ms->sy) ||
           PyDict_SetItemString(out, "sens_q", ms->sq) ||
           PyDict_SetItemString(out, "sens_qd", ms->sqd) ||
           PyDict_SetItemString(out, "y0", y0) ||
           dict_set(out, "sens_nf_base", PyLong_FromLong(mb_sens_nf_base(ms->s))) ||
           dict_set(out, "sens_njac_base", PyLong_FromLong(mb_sens_njac_base(ms->s)))
               ? -1 : 0;
}

void mech_sens_free(mech_sens *ms)
{
    if (!ms)
        return;
    PyMem_Free(ms->table);
    PyMem_Free(ms->p);
    PyMem_Free(ms->last);
    PyMem_Free(ms->pbar);
    PyMem_Free(ms->s0);
    PyMem_Free(ms->work);
    PyMem_Free(ms->atol_dq);
    PyMem_Free(ms->fpm);
    PyMem_Free(ms->ep);
    PyMem_Free(ms->atol_s);
    Py_XDECREF(ms->sy);
    Py_XDECREF(ms->sq);
    Py_XDECREF(ms->sqd);
    PyMem_Free(ms);
}
