/* The problem's own iteration matrices (mb_problem.linsys, linsys.h) as the linear
 * solver of CVODE, ARKStep and IDA (ODE problems without a mass matrix; for IDA also
 * the residual F = M y' - f of a problem with a diagonal mass matrix p->mass_diag whose
 * linsys factors a M - J: the sparse DAE formulations): no n x n array is formed.
 *
 * SUNDIALS 6.4 offers matrix-embedded linear solvers (SUNLINEARSOLVER_MATRIX_EMBEDDED,
 * CVodeSetLinearSolver(mem, LS, NULL)), but CVODE then never calls the solver's setup
 * (its lsetup is disabled: every Newton iteration calls solve alone, with no
 * Jacobian-age, gamma-ratio or convergence-failure logic and no scaling of the
 * correction after a change of gamma), so the solver would have to re-invent CVODE's
 * heuristics.  Instead the solver here is an ordinary SUNLINEARSOLVER_DIRECT one over
 * a "handle" SUNMatrix that holds no entries, only the coefficients of
 *     A = alpha I + beta J,   J = the Jacobian kept by the linsys,
 * and the generation of that J.  The integrator's matrix-based path then runs
 * unchanged: it calls the Jacobian function when it decides J is out of date
 * (CVODE: after msbj = 51 steps, a convergence failure, a large change of gamma;
 * counted in njev), otherwise copies its saved J (a copy of the handle); it forms
 * A = I - gamma J by SUNMatScaleAddI (IDA: the Jacobian function sets A = cj I - J
 * directly) and calls setup (counted in nlu) and solve.  So the structured path makes
 * the same decisions as the dense one (same njev and nlu up to rounding).
 *
 *   Jacobian function  linsys->jac(t, y, f(t, y)); the handle becomes (0, 1) with a
 *                      new generation (older handles are stale)
 *   setup(A)           linsys->factor(slot 0, a = -alpha / beta): alpha I + beta J =
 *                      -beta (a I - J) (a M - J with a diagonal mass matrix);
 *                      CVODE/ARKODE: a = 1/gamma, IDA: a = cj
 *   solve(x = A^-1 b)  x = (-1/beta) (a I - J)^-1 b by linsys->solve(slot 0)
 *
 * Failures: a linsys call returning > 0 is recoverable (the integrator retries with a
 * smaller step), < 0 fatal (kept in r->cb_status with its message, as for the other
 * callbacks).  A setup with a stale or empty handle (J not evaluated since) is an
 * internal error, reported as MB_ERR_LINALG. */
#include <stdlib.h>
#include "status.h"
#include "sundials_impl.h"

typedef struct handle {
    sun_run *r;
    double alpha, beta;  /* A = alpha I + beta J */
    unsigned long gen;   /* generation of J (0: none) */
} handle;

#define HANDLE(A) ((handle *)(A)->content)

static SUNMatrix_ID hm_getid(SUNMatrix A)
{
    (void)A;
    return SUNMATRIX_CUSTOM;
}

static void hm_destroy(SUNMatrix A)
{
    if (!A)
        return;
    free(A->content);
    A->content = NULL;
    SUNMatFreeEmpty(A);
}

static SUNMatrix hm_new(sun_run *r)
{
    SUNMatrix A = SUNMatNewEmpty(r->ctx);
    if (!A)
        return NULL;
    handle *h = calloc(1, sizeof *h);
    if (!h) {
        SUNMatFreeEmpty(A);
        return NULL;
    }
    h->r = r;
    A->content = h;
    A->ops->getid = hm_getid;
    A->ops->destroy = hm_destroy;
    return A;
}

static SUNMatrix hm_clone(SUNMatrix A)
{
    SUNMatrix B = hm_new(HANDLE(A)->r);
    if (B && SUNMatCopyOps(A, B) != 0) {
        hm_destroy(B);
        return NULL;
    }
    return B;
}

static int hm_zero(SUNMatrix A)
{
    handle *h = HANDLE(A);
    h->alpha = h->beta = 0.0;
    h->gen = 0;
    return 0;
}

static int hm_copy(SUNMatrix A, SUNMatrix B)  /* B = A */
{
    handle *a = HANDLE(A), *b = HANDLE(B);
    b->alpha = a->alpha;
    b->beta = a->beta;
    b->gen = a->gen;
    return 0;
}

static int hm_scaleaddi(realtype c, SUNMatrix A)  /* A = c A + I */
{
    handle *h = HANDLE(A);
    h->alpha = c * h->alpha + 1.0;
    h->beta *= c;
    return 0;
}

/* ------------------------------------------------------------ linear solver */

static SUNLinearSolver_Type ls_gettype(SUNLinearSolver S)
{
    (void)S;
    return SUNLINEARSOLVER_DIRECT;
}

static SUNLinearSolver_ID ls_getid(SUNLinearSolver S)
{
    (void)S;
    return SUNLINEARSOLVER_CUSTOM;
}

static int ls_initialize(SUNLinearSolver S)
{
    (void)S;
    return SUNLS_SUCCESS;
}

/* a fatal linsys failure: code rc (< 0) of the named call */
static int ls_fatal(sun_run *r, int rc, const char *call, double a)
{
    mb_sun_cb_fail(r, rc == MB_ERR_CALLBACK ? MB_ERR_CALLBACK : MB_ERR_LINALG,
                   "The problem's linear systems (linsys %s) failed with code %d (a = %.17g).",
                   call, rc, a);
    return SUNLS_PACKAGE_FAIL_UNREC;
}

static int ls_setup(SUNLinearSolver S, SUNMatrix A)
{
    sun_run *r = S->content;
    const handle *h = HANDLE(A);
    if (r->cb_status)
        return SUNLS_PACKAGE_FAIL_UNREC;
    if (h->gen == 0 || h->gen != r->lsys_gen || h->beta == 0.0) {
        mb_sun_cb_fail(r, MB_ERR_LINALG,
                       "Internal error: an iteration matrix without the current Jacobian "
                       "(linsys).");
        return SUNLS_ILL_INPUT;
    }
    const mb_linsys *ls = r->p->linsys;
    double a = -h->alpha / h->beta;
    r->lsys_factored = 0;
    int rc = ls->factor(0, a, 0.0, ls->ctx);
    if (rc > 0)
        return SUNLS_LUFACT_FAIL;  /* singular: the integrator shrinks the step */
    if (rc < 0)
        return ls_fatal(r, rc, "factor", a);
    r->lsys_scale = -1.0 / h->beta;
    r->lsys_a = a;
    r->lsys_factored = 1;
    return SUNLS_SUCCESS;
}

static int ls_solve(SUNLinearSolver S, SUNMatrix A, N_Vector x, N_Vector b, realtype tol)
{
    (void)A; (void)tol;
    sun_run *r = S->content;
    if (r->cb_status)
        return SUNLS_PACKAGE_FAIL_UNREC;
    if (!r->lsys_factored)
        return SUNLS_MEM_NULL;
    N_VScale(r->lsys_scale, b, x);
    const mb_linsys *ls = r->p->linsys;
    int rc = ls->solve(0, N_VGetArrayPointer(x), NULL, ls->ctx);
    if (rc > 0)
        return SUNLS_PACKAGE_FAIL_REC;
    if (rc < 0)
        return ls_fatal(r, rc, "solve", r->lsys_a);
    return SUNLS_SUCCESS;
}

static int ls_free(SUNLinearSolver S)
{
    if (S)
        SUNLinSolFreeEmpty(S);  /* the content is the run: not owned */
    return SUNLS_SUCCESS;
}

/* ------------------------------------------------------------------ public */

int mb_sun_linsys_create(sun_run *r)
{
    r->A = hm_new(r);
    if (r->A) {
        SUNMatrix_Ops o = r->A->ops;
        o->clone = hm_clone;
        o->zero = hm_zero;
        o->copy = hm_copy;
        o->scaleaddi = hm_scaleaddi;
    }
    r->LS = r->A ? SUNLinSolNewEmpty(r->ctx) : NULL;
    if (!r->LS)
        return MB_ERR_MEM;
    r->LS->content = r;
    SUNLinearSolver_Ops o = r->LS->ops;
    o->gettype = ls_gettype;
    o->getid = ls_getid;
    o->initialize = ls_initialize;
    o->setup = ls_setup;
    o->solve = ls_solve;
    o->free = ls_free;
    r->lsys_gen = 0;
    r->lsys_factored = 0;
    return MB_OK;
}

int mb_sun_linsys_eval(sun_run *r, double t, N_Vector y, const double *fy, SUNMatrix J,
                       double alpha, double beta)
{
    if (r->cb_status)
        return -1;
    const mb_linsys *ls = r->p->linsys;
    handle *h = HANDLE(J);
    r->lsys_gen++;  /* the kept J changes: every older handle is stale */
    h->gen = 0;
    int rc = ls->jac(t, N_VGetArrayPointer(y), fy, ls->ctx);
    rc = mb_sun_check(r, rc, t, NULL, 0, "Jacobian (linsys)", "entry");
    if (rc != 0)
        return rc;
    h->alpha = alpha;
    h->beta = beta;
    h->gen = r->lsys_gen;
    return 0;
}

int mb_sun_linsys_jac(realtype t, N_Vector y, N_Vector fy, SUNMatrix J, void *ud, N_Vector tmp1,
                      N_Vector tmp2, N_Vector tmp3)
{
    (void)tmp1; (void)tmp2; (void)tmp3;
    return mb_sun_linsys_eval(ud, t, y, N_VGetArrayPointer(fy), J, 0.0, 1.0);
}
