/* The index-1 ODE as a formulation (formulation.h): y = (q, q'), q'' and lambda from the
 * saddle-point system of index1.c (LLM eqs 9-15), optional Baumgarte terms and projection
 * after accepted steps, dense or sparse (KLU) linear algebra.  Every method runs on it,
 * the SUNDIALS ones included. */
#include <stdlib.h>
#include <string.h>
#include "formulation.h"
#include "index1.h"
#include "mbs_common.h"
#include "status.h"

typedef struct form_index1 {
    mb_index1 f;
    int project;
} form_index1;

static int i1_open(mb_formulation *F, const mb_form_options *o)
{
    form_index1 *x = calloc(1, sizeof *x);
    if (!x)
        return MB_FAIL(F, MB_ERR_MEM, "formulation 'index1': out of memory.");
    F->impl = x;
    int sparse = o->linalg == 1 ? 0 : o->linalg == 2 ? 1 : -1;  /* mb_index1_init_ex */
    int rc = mb_index1_init_ex(&x->f, F->mech, o->alpha, o->beta, sparse);
    if (rc != MB_OK)
        return MB_FAIL(F, rc, "%s", x->f.msg);
    if (o->proj_tol > 0)
        x->f.proj.tol = o->proj_tol;
    if (o->proj_max_iter > 0)
        x->f.proj.max_iter = o->proj_max_iter;
    x->project = o->project && F->nc > 0;
    F->n = 2 * F->nq;
    F->sparse = x->f.sp != NULL;
    return MB_OK;
}

void mb_form_index1_changed(mb_formulation *F)
{
    form_index1 *x = F->impl;
    if (x)
        x->f.cache_ok = 0;
}

int mb_form_index1_params_changed(mb_formulation *F)
{
    form_index1 *x = F->impl;
    int rc = x ? mb_index1_params_changed(&x->f) : MB_OK;
    return rc == MB_OK ? MB_OK : MB_FAIL(F, rc, "%s", x->f.msg);
}

static void i1_close(mb_formulation *F)
{
    form_index1 *x = F->impl;
    if (x)
        mb_index1_free(&x->f);
    free(x);
}

static int i1_initial(mb_formulation *F, double t0, const double *q0, const double *qd0,
                      const double *atol, double *y0, const double **atol_y)
{
    (void)t0;
    memcpy(y0, q0, (size_t)F->nq * sizeof(double));
    memcpy(y0 + F->nq, qd0, (size_t)F->nq * sizeof(double));
    *atol_y = atol;
    return MB_OK;
}

static void i1_problem(mb_formulation *F, mb_problem *p)
{
    form_index1 *x = F->impl;
    mb_index1_problem(&x->f, p);
    if (x->project)
        p->project = mb_index1_project_hook;
}

static int i1_sundials(mb_formulation *F, const char *method, mb_form_ida *ida)
{
    (void)F; (void)method; (void)ida;
    return MB_OK;  /* an ODE: every SUNDIALS method (ida on M y' = f with M = I) */
}

static int i1_outputs(mb_formulation *F, double t, const double *y, double *q, double *qd,
                      double *qdd, double *lam)
{
    form_index1 *x = F->impl;
    ptrdiff_t nq = F->nq;
    if (q) memcpy(q, y, (size_t)nq * sizeof(double));
    if (qd) memcpy(qd, y + nq, (size_t)nq * sizeof(double));
    return mb_index1_solve(&x->f, t, y, y + nq, qdd, lam);
}

static const char *i1_why(const mb_formulation *F, int status)
{
    const form_index1 *x = F->impl;
    int explains = status == MB_ERR_LINALG || status == MB_ERR_CONV || status == MB_ERR_RHS_FAIL;
    return explains && x->f.msg[0] ? x->f.msg : NULL;
}

const mb_form_ops mb_form_index1 = {
    "index1", i1_open, i1_close, i1_initial, i1_problem, i1_sundials, NULL, i1_outputs, i1_why,
};
