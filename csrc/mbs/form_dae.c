/* The DAE formulations as formulations (formulation.h): y = (q, v, lambda) (GGL: and mu)
 * with M_p y' = f (dae.c; LS eqs 1-4), started from the consistent lambda(t0).  The
 * methods with a mass matrix solve index1_dae, those flagged MB_DAE also index2, index3
 * and ggl; of the SUNDIALS methods only IDA, on index1_dae and ggl: the multipliers are
 * algebraic, and GGL's (index 2) are left out of its error test.  o->linalg chooses the
 * dense or the sparse mode (dae.h mb_dae_init_ex; the sparse one for the methods flagged
 * MB_LINSYS_MASS only: simulate asks for it only with them -- bdf, radau_iia and ida, whose
 * iteration matrix cj M_p - df/dy is then the problem's linsys with a = cj). */
#include <stdlib.h>
#include <string.h>
#include "carve.h"
#include "dae.h"
#include "formulation.h"
#include "mbs_common.h"
#include "status.h"

typedef struct form_dae {
    mb_dae f;
    int project;
    double *yp0;              /* y'(t0) of the consistent initial state (n) */
    unsigned char *algebraic; /* IDA: 1 for lambda (and mu) (n) */
    double *work;
} form_dae;

static int dae_open(mb_formulation *F, const mb_form_options *o)
{
    form_dae *x = calloc(1, sizeof *x);
    if (!x)
        return MB_FAIL(F, MB_ERR_MEM, "formulation '%s': out of memory.", F->name);
    F->impl = x;
    int sparse = o->linalg == 1 ? 0 : o->linalg == 2 ? 1 : -1;  /* mb_dae_init_ex */
    int rc = mb_dae_init_ex(&x->f, F->mech, F->kind, sparse);
    if (rc != MB_OK)
        return MB_FAIL(F, rc, "%s", x->f.msg);
    ptrdiff_t n = x->f.n;
    x->work = calloc(n + mb_doubles_for((size_t)n) + 1, sizeof(double));
    if (!x->work)
        return MB_FAIL(F, MB_ERR_MEM, "formulation '%s': out of memory.", F->name);
    x->yp0 = x->work;
    x->algebraic = (unsigned char *)(void *)(x->work + n);
    for (ptrdiff_t i = 0; i < n; i++)
        x->algebraic[i] = i >= 2 * F->nq;
    if (o->proj_tol > 0)
        x->f.proj.tol = o->proj_tol;
    if (o->proj_max_iter > 0)
        x->f.proj.max_iter = o->proj_max_iter;
    x->project = o->project;
    F->n = n;
    F->sparse = x->f.sp != NULL;
    return MB_OK;
}

static void dae_close(mb_formulation *F)
{
    form_dae *x = F->impl;
    if (x) {
        mb_dae_free(&x->f);
        free(x->work);
    }
    free(x);
}

/* y0 = (q0, v0, lambda0[, 0]); atol is given over y already (its layout: n entries) */
static int dae_initial(mb_formulation *F, double t0, const double *q0, const double *qd0,
                       const double *atol, double *y0, const double **atol_y)
{
    form_dae *x = F->impl;
    int rc = mb_dae_initial(&x->f, t0, q0, qd0, y0, x->yp0);
    if (rc != MB_OK)
        return MB_FAIL(F, rc, "%s", x->f.msg);
    *atol_y = atol;
    return MB_OK;
}

void mb_form_dae_params_changed(mb_formulation *F)
{
    form_dae *x = F->impl;
    if (x)
        x->f.mass_ok = 0;  /* M(q) factored again at the next call (dense mode) */
}

static void dae_problem(mb_formulation *F, mb_problem *p)
{
    form_dae *x = F->impl;
    mb_dae_problem(&x->f, p);
    if (x->project)
        p->project = mb_dae_project_hook;
}

static int dae_sundials(mb_formulation *F, const char *method, mb_form_ida *ida)
{
    form_dae *x = F->impl;
    if (strcmp(method, "ida") != 0)
        return MB_FAIL(F, MB_ERR_NOT_SUPPORTED, "method: SUNDIALS method '%s' does not solve "
                       "the DAE formulations; ida does (index1_dae, ggl).", method);
    if (F->kind != MB_DAE_INDEX1 && F->kind != MB_DAE_GGL)
        return MB_FAIL(F, MB_ERR_NOT_SUPPORTED, "method: ida solves the index-1 DAE and GGL, not "
                       "the index-2 or index-3 formulations.");
    ida->algebraic = x->algebraic;
    ida->yp0 = x->yp0;  /* consistent: no IDACalcIC */
    ida->suppress_alg = F->kind != MB_DAE_INDEX1;
    /* sparse mode: no dense Jacobian; IDA's cj M_p - df/dy is the problem's linsys (a M_p
     * - J, a = cj) through the adapter's linear solver (methods/sundials_linsys.c) */
    ida->jac = x->f.sp ? NULL : mb_dae_ida_jac;
    return MB_OK;
}

static int dae_outputs(mb_formulation *F, double t, const double *y, double *q, double *qd,
                       double *qdd, double *lam)
{
    form_dae *x = F->impl;
    ptrdiff_t nq = F->nq;
    if (q) memcpy(q, y, (size_t)nq * sizeof(double));
    if (qd) memcpy(qd, y + nq, (size_t)nq * sizeof(double));
    return mb_dae_accel(&x->f, t, y, qdd, lam);
}

static const char *dae_why(const mb_formulation *F, int status)
{
    const form_dae *x = F->impl;
    int explains = status == MB_ERR_LINALG || status == MB_ERR_CONV || status == MB_ERR_RHS_FAIL;
    const char *m = x->f.msg[0] ? x->f.msg : x->f.proj.msg;
    return explains && m[0] ? m : NULL;
}

const mb_form_ops mb_form_dae = {
    "dae", dae_open, dae_close, dae_initial, dae_problem, dae_sundials, NULL, dae_outputs,
    dae_why,
};
