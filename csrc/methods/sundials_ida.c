/* IDA adapter: variable-order BDF on a residual F(t, y, y') = 0 with the dense
 * direct linear solver.
 *   ODE problems (mb_sundials_run "ida"):  F = M y' - f(t, y), M = identity
 *     without a mass matrix.  Jacobian dF/dy + cj dF/dy' = cj M - df/dy from
 *     the problem's df/dy, else df/dy by differences kept across IDA's linear
 *     set-ups (ode_jac_kept, below).  Without M,
 *     y'(t0) = f(t0, y0); with M the components whose column of M is zero are
 *     algebraic and (y_alg, y'_diff) at t0 are made consistent by IDACalcIC.
 *     Without M and with a linsys (mb_problem.linsys), cj I - df/dy is the
 *     linsys's a I - J with a = cj (sundials_linsys.c): no dense matrix.
 *   Residual problems (mb_sundials_ida_run): F = p->res, with the caller's
 *     y'(t0), algebraic flags, IDACalcIC on request and an optional Jacobian.
 *     A residual F = M y' - f with a diagonal M (p->mass_diag) and a linsys of
 *     a M - J (the sparse mode of the DAE formulations, csrc/mbs/dae_sparse.c):
 *     cj M - df/dy is the linsys's a M - J with a = cj, no dense matrix either.
 * The run itself is in sundials_common.c. */
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ida/ida.h>
#include <ida/ida_ls.h>
#include "status.h"
#include "sundials_impl.h"

/* user residual of a residual problem, in the conventions of mb_sun_rhs */
static int dae_res(sun_run *r, double t, N_Vector y, N_Vector yp, N_Vector rr)
{
    if (r->cb_status)
        return -1;
    double *F = N_VGetArrayPointer(rr);
    int rc = r->p->res(t, N_VGetArrayPointer(y), N_VGetArrayPointer(yp), F, r->p->ctx);
    return mb_sun_check(r, rc, t, F, (ptrdiff_t)r->n, "residual", "component");
}

static int ida_res(realtype t, N_Vector y, N_Vector yp, N_Vector rr, void *ud)
{
    sun_run *r = ud;
    if (r->dae)
        return dae_res(r, t, y, yp, rr);
    int rc = mb_sun_rhs(t, y, rr, r);  /* rr = f */
    if (rc != 0)
        return rc;
    sunindextype n = r->n;
    double *F = N_VGetArrayPointer(rr);
    const double *ypv = N_VGetArrayPointer(yp), *M = r->p->mass;
    if (!M) {
        for (sunindextype i = 0; i < n; i++)
            F[i] = ypv[i] - F[i];
        return 0;
    }
    for (sunindextype i = 0; i < n; i++)
        r->f[i] = -F[i];
    for (sunindextype j = 0; j < n; j++)
        for (sunindextype i = 0; i < n; i++)
            r->f[i] += M[j * n + i] * ypv[j];
    memcpy(F, r->f, (size_t)n * sizeof(double));
    return 0;
}

static int ida_root(realtype t, N_Vector y, N_Vector yp, realtype *g, void *ud)
{
    (void)yp;
    return mb_sun_events(t, y, g, ud);
}

/* df/dy of an ODE problem without a Jacobian.  IDA's own difference quotients were
 * evaluated at every linear set-up, which IDA makes whenever cj = alpha / h changes by
 * more than 25 % -- after every rejected step, since IDA keeps no Jacobian apart from
 * its iteration matrix -- at n residuals each, with an increment tied to the tolerance
 * (1 / ewt = rtol |y| + atol, a relative 1e-4 at rtol 1e-4).  On the test set's
 * transistor amplifier (8 equations, index 1, half of IDA's steps rejected by its
 * error test) these made 75 % of the 131,129 residuals at rtol 1e-6.  As CVODE keeps
 * its J: df/dy by forward differences with the increments of the core's difference
 * Jacobian (core/jacobian.c), kept while IDA's Newton converges and for at most
 * JF_MAX_AGE steps; a set-up for a new cj only forms cj M - df/dy again.  f(t, y) is
 * M y' - F from IDA's residual: n evaluations of f per df/dy. */
enum { JF_MAX_AGE = 50 };  /* CVODE's MSBJ */

/* r->jf = df/dy at (t, y) by forward differences; rr = F(t, y, y'); yt, ft scratch */
static int ode_jac_differences(sun_run *r, double t, N_Vector y, N_Vector yp, N_Vector rr,
                               N_Vector yt, N_Vector ft)
{
    sunindextype n = r->n;
    double *f0 = r->f;
    const double *ypv = N_VGetArrayPointer(yp), *F = N_VGetArrayPointer(rr), *M = r->p->mass;
    for (sunindextype i = 0; i < n; i++) {
        double acc = -F[i];
        for (sunindextype j = 0; j < n; j++)
            acc += (M ? M[j * n + i] : (double)(i == j)) * ypv[j];
        f0[i] = acc;  /* f = M y' - F */
    }
    int rc = mb_sun_dq_columns(r, t, y, f0, r->jf, (ptrdiff_t)n, yt, ft);
    if (rc == 0)
        r->jf_evals++;
    return rc;
}

/* df/dy into J (dense): the kept one, or a new one after a Newton failure of IDA since
 * it was evaluated, after JF_MAX_AGE steps, or at the first set-up */
static int ode_jac_kept(sun_run *r, double t, N_Vector y, N_Vector yp, N_Vector rr,
                        SUNMatrix J, N_Vector yt, N_Vector ft)
{
    long nst = 0, ncf = 0;
    IDAGetNumSteps(r->mem, &nst);
    IDAGetNumNonlinSolvConvFails(r->mem, &ncf);
    if (r->jf_evals == 0 || ncf != r->jf_ncf || nst - r->jf_nst >= JF_MAX_AGE) {
        int rc = ode_jac_differences(r, t, y, yp, rr, yt, ft);
        if (rc != 0)
            return rc;
        r->jf_nst = nst;
        r->jf_ncf = ncf;
    }
    sunindextype n = r->n, ld = SUNDenseMatrix_Rows(J);
    double *Jd = SUNDenseMatrix_Data(J);
    for (sunindextype j = 0; j < n; j++)
        memcpy(Jd + j * ld, r->jf + j * n, (size_t)n * sizeof(double));
    return 0;
}

static int ida_jac(realtype t, realtype cj, N_Vector y, N_Vector yp, N_Vector rr, SUNMatrix J,
                   void *ud, N_Vector tmp1, N_Vector tmp2, N_Vector tmp3)
{
    (void)tmp3;
    sun_run *r = ud;
    sunindextype n = r->n, ld = SUNDenseMatrix_Rows(J);
    double *Jd = SUNDenseMatrix_Data(J);
    if (r->dae) {
        if (r->cb_status)
            return -1;
        int rc = r->dae->jac(t, cj, N_VGetArrayPointer(y), N_VGetArrayPointer(yp), Jd,
                             (ptrdiff_t)ld, r->p->ctx);
        return mb_sun_check(r, rc, t, Jd, (ptrdiff_t)(n * ld), "Jacobian", "entry");
    }
    int rc = r->jf ? ode_jac_kept(r, t, y, yp, rr, J, tmp1, tmp2)
                   : mb_sun_jac(r, t, y, J);  /* J = df/dy */
    if (rc != 0)
        return rc;
    const double *M = r->p->mass;
    for (sunindextype j = 0; j < n; j++)
        for (sunindextype i = 0; i < n; i++)
            Jd[j * ld + i] = -Jd[j * ld + i] + cj * (M ? M[j * n + i] : (double)(i == j));
    return 0;
}

/* the Jacobian of F = M y' - f through the problem's linsys: J_F = cj M - df/dy, the
 * linsys's a M - J with a = cj, f = M y' - F at (t, y, y').  M = I for an ODE problem
 * without a mass matrix; the diagonal p->mass_diag for a residual problem that has one
 * (a sparse DAE formulation: F = M_p y' - f, its linsys factoring a M_p - J) */
static int ida_jac_linsys(realtype t, realtype cj, N_Vector y, N_Vector yp, N_Vector rr,
                          SUNMatrix J, void *ud, N_Vector tmp1, N_Vector tmp2, N_Vector tmp3)
{
    (void)tmp1; (void)tmp2; (void)tmp3;
    sun_run *r = ud;
    const double *ypv = N_VGetArrayPointer(yp), *F = N_VGetArrayPointer(rr);
    const double *Md = r->dae ? r->p->mass_diag : NULL;
    if (Md)
        for (sunindextype i = 0; i < r->n; i++)
            r->f[i] = Md[i] * ypv[i] - F[i];
    else
        for (sunindextype i = 0; i < r->n; i++)
            r->f[i] = ypv[i] - F[i];
    return mb_sun_linsys_eval(r, t, y, r->f, J, cj, -1.0);
}

/* y'(t0), the differential/algebraic flags (into id: 1 / 0) and whether
 * IDACalcIC must run; returns an mb status */
static int initial_slope(sun_run *r, double t0, N_Vector id, int *calc_ic, int *has_alg)
{
    sunindextype n = r->n;
    double *idv = N_VGetArrayPointer(id);
    *has_alg = 0;
    if (r->dae) {
        for (sunindextype i = 0; i < n; i++) {
            idv[i] = r->dae->algebraic && r->dae->algebraic[i] ? 0.0 : 1.0;
            *has_alg |= idv[i] == 0.0;
        }
        *calc_ic = r->dae->calc_ic;
        return MB_OK;  /* r->yp holds the caller's y'(t0) */
    }
    const double *M = r->p->mass;
    if (!M) {
        N_VConst(1.0, id);
        *calc_ic = 0;
        r->extra_nfev++;
        if (mb_sun_rhs(t0, r->y, r->yp, r) != 0) {
            if (r->cb_status)
                return r->cb_status;
            snprintf(r->res->message, sizeof r->res->message,
                     "The right-hand side asked for a smaller step at t0 = %.17g.", t0);
            return MB_ERR_RHS_FAIL;
        }
        return MB_OK;
    }
    for (sunindextype j = 0; j < n; j++) {
        int zero = 1;
        for (sunindextype i = 0; i < n && zero; i++)
            zero = M[j * n + i] == 0.0;
        idv[j] = zero ? 0.0 : 1.0;
        *has_alg |= zero;
    }
    N_VConst(0.0, r->yp);
    *calc_ic = 1;
    return MB_OK;
}

/* IDACalcIC (IDA_YA_YDP_INIT).  Its Newton iteration moves the differential
 * y' by cj times the correction of a differential y, with cj = 1/h and
 * h = 1e-3 (tout1 - t0) at first: for long spans this simplified Newton does not
 * converge (Robertson to 1e5), so on failure retry from the original values with
 * tout1 closer to t0 (spans 1e-3, 1e-6, 1e-9 of the interval). */
static int consistent_ic(sun_run *r, double t0, double tf)
{
    void *mem = r->mem;
    N_Vector y0 = N_VClone(r->y), yp0 = r->v1;  /* the caller's values, to restart from */
    if (!y0) {
        snprintf(r->res->message, sizeof r->res->message, "N_VClone failed.");
        return MB_ERR_MEM;
    }
    N_VScale(1.0, r->y, y0);
    N_VScale(1.0, r->yp, yp0);
    /* the scale of t for IDACalcIC's first Newton step (tf may be infinite) */
    double span = isfinite(tf) ? tf - t0 : (tf > t0 ? 1.0 : -1.0) * fmax(1.0, fabs(t0));
    int flag = 0;
    const char *call = "IDACalcIC (consistent initial values)";
    for (int k = 0; k < 4; k++) {
        if (k > 0) {
            N_VScale(1.0, y0, r->y);
            N_VScale(1.0, yp0, r->yp);
            r->sun_msg[0] = '\0';
            if ((flag = IDAReInit(mem, t0, r->y, r->yp)) < 0) {
                call = "IDAReInit";
                break;
            }
        }
        flag = IDACalcIC(mem, IDA_YA_YDP_INIT, t0 + span * pow(1e-3, 3 * k));
        if (flag >= 0 || r->cb_status)
            break;
    }
    N_VDestroy(y0);
    if (flag < 0)
        return mb_sun_setup_fail(r, flag, call);
    SUN_TRY(r, IDAGetConsistentIC(mem, r->y, r->yp), "IDAGetConsistentIC");
    return MB_OK;
}

static int ida_root_init(void *mem, int n_events)
{
    return IDARootInit(mem, n_events, ida_root);
}

static int ida_set_jac(void *mem)
{
    return IDASetJacFn(mem, ida_jac);
}

static int ida_set_jac_linsys(void *mem)
{
    return IDASetJacFn(mem, ida_jac_linsys);
}

static long ida_nfev(void *mem)
{
    long nre = 0;
    IDAGetNumResEvals(mem, &nre);
    return nre;
}

static const sun_api ida_api = {
    SUN_API_COMMON(IDA),
    .set_linear_solver = IDASetLinearSolver,
    .get_last_order = IDAGetLastOrder,
    .get_num_step_solve_fails = IDAGetNumStepSolveFails,
    .get_num_jac_evals = IDAGetNumJacEvals,
    .get_num_lin_solv_setups = IDAGetNumLinSolvSetups,
    .get_num_lin_rhs_evals = IDAGetNumLinResEvals,
    .root_init = ida_root_init,
    .set_jac = ida_set_jac,
    .set_jac_linsys = ida_set_jac_linsys,
    .nfev = ida_nfev,
};

static int ida_setup(sun_run *r, double t0, double tf)
{
    int calc_ic, has_alg;
    int rc = initial_slope(r, t0, r->v2, &calc_ic, &has_alg);
    if (rc == MB_OK)
        rc = mb_sun_attach(r, IDACreate(r->ctx));
    if (rc != MB_OK)
        return rc;
    SUN_TRY(r, IDAInit(r->mem, ida_res, t0, r->y, r->yp), "IDAInit");
    /* an ODE problem without a Jacobian (and without its own linsys): df/dy kept */
    if (!r->dae && !r->p->jac && !(r->p->linsys && !r->p->mass)) {
        r->jf = malloc((size_t)r->n * (size_t)r->n * sizeof(double));
        if (!r->jf) {
            snprintf(r->res->message, sizeof r->res->message, "Out of memory.");
            return MB_ERR_MEM;
        }
    }
    rc = mb_sun_configure(r, tf, r->dae ? r->dae->jac != NULL : 1);
    if (rc != MB_OK)
        return rc;
    if (has_alg || calc_ic)
        SUN_TRY(r, IDASetId(r->mem, r->v2), "IDASetId");
    if (r->dae && r->dae->suppress_alg && has_alg)
        SUN_TRY(r, IDASetSuppressAlg(r->mem, SUNTRUE), "IDASetSuppressAlg");
    return calc_ic ? consistent_ic(r, t0, tf) : MB_OK;
}

static int ida_evolve(sun_run *r, double tf, double *t_ret)
{
    return IDASolve(r->mem, tf, t_ret, r->y, r->yp, IDA_ONE_STEP);
}

/* IDA anew at (t, r->y): an ODE without a mass matrix from y'(t) = f(t, y); otherwise
 * from the old interpolant's y'(t) (r->yp), its algebraic components and y' made
 * consistent by IDACalcIC (the problem changed at t) */
static int ida_reinit(sun_run *r, double t)
{
    r->jf_nst = LONG_MIN / 2;  /* a kept df/dy is evaluated anew */
    if (!r->dae && !r->p->mass) {
        int calc_ic, has_alg;
        int rc = initial_slope(r, t, r->v2, &calc_ic, &has_alg);
        if (rc != MB_OK)
            return rc;
        SUN_TRY(r, IDAReInit(r->mem, t, r->y, r->yp), "IDAReInit");
        return MB_OK;
    }
    SUN_TRY(r, IDAReInit(r->mem, t, r->y, r->yp), "IDAReInit");
    return consistent_ic(r, t, r->tf);
}

static int ida_status(int flag)
{
    switch (flag) {
    case IDA_TOO_MUCH_WORK: return MB_ERR_MAX_STEPS;
    case IDA_TOO_MUCH_ACC:
    case IDA_ERR_FAIL: return MB_ERR_STEP_TOO_SMALL;
    case IDA_CONV_FAIL:
    case IDA_LINESEARCH_FAIL:
    case IDA_NO_RECOVERY:
    case IDA_CONSTR_FAIL:
    case IDA_NLS_INIT_FAIL:
    case IDA_NLS_SETUP_FAIL:
    case IDA_NLS_FAIL: return MB_ERR_CONV;
    case IDA_LINIT_FAIL:
    case IDA_LSETUP_FAIL:
    case IDA_LSOLVE_FAIL: return MB_ERR_LINALG;
    case IDA_RES_FAIL:
    case IDA_REP_RES_ERR:
    case IDA_FIRST_RES_FAIL: return MB_ERR_RHS_FAIL;
    case IDA_RTFUNC_FAIL: return MB_ERR_EVENT_FAIL;
    case IDA_MEM_FAIL: return MB_ERR_MEM;
    default: return MB_ERR_ILL_INPUT;
    }
}

const sun_backend mb_sun_ida = {"IDA", &ida_api, ida_setup, ida_evolve, ida_status,
                                  ida_reinit};
