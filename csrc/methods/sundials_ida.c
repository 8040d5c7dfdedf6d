/* IDA adapter: variable-order BDF on a residual F(t, y, y') = 0 with the dense
 * direct linear solver.
 *   ODE problems (mb_sundials_run "ida"):  F = M y' - f(t, y), M = identity
 *     without a mass matrix.  Jacobian dF/dy + cj dF/dy' = cj M - df/dy from
 *     the problem's df/dy, else IDA's difference quotients.  Without M,
 *     y'(t0) = f(t0, y0); with M the components whose column of M is zero are
 *     algebraic and (y_alg, y'_diff) at t0 are made consistent by IDACalcIC.
 *   Residual problems (mb_sundials_ida_run): F = p->res, with the caller's
 *     y'(t0), algebraic flags, IDACalcIC on request and an optional Jacobian.
 * The run itself is in sundials_common.c. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <ida/ida.h>
#include <ida/ida_ls.h>
#include <sunlinsol/sunlinsol_dense.h>
#include <sunmatrix/sunmatrix_dense.h>
#include "status.h"
#include "sundials_impl.h"

/* user residual of a residual problem, in the conventions of mb_sun_rhs */
static int dae_res(sun_run *r, double t, N_Vector y, N_Vector yp, N_Vector rr)
{
    if (r->cb_status)
        return -1;
    double *F = N_VGetArrayPointer(rr);
    int rc = r->p->res(t, N_VGetArrayPointer(y), N_VGetArrayPointer(yp), F, r->p->ctx);
    if (rc > 0)
        return 1;
    if (rc == MB_ERR_CALLBACK)
        return mb_sun_cb_fail(r, MB_ERR_CALLBACK, NULL);
    if (rc < 0)
        return mb_sun_cb_fail(r, MB_ERR_RHS_FAIL,
                              "The residual returned failure code %d at t = %.17g.", rc, t);
    for (sunindextype i = 0; i < r->n; i++)
        if (!isfinite(F[i]))
            return mb_sun_cb_fail(r, MB_ERR_NONFINITE,
                                  "The residual returned a non-finite value (component %td) at "
                                  "t = %.17g.", (ptrdiff_t)i, t);
    return 0;
}

static int ida_res(realtype t, N_Vector y, N_Vector yp, N_Vector rr, void *ud)
{
    sun_run *r = ud;
    if (r->dae)
        return dae_res(r, t, y, yp, rr);
    int rc = mb_sun_rhs(r, t, y, rr);  /* rr = f */
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
    return mb_sun_events(ud, t, y, g);
}

static int ida_jac(realtype t, realtype cj, N_Vector y, N_Vector yp, N_Vector rr, SUNMatrix J,
                   void *ud, N_Vector tmp1, N_Vector tmp2, N_Vector tmp3)
{
    (void)rr; (void)tmp1; (void)tmp2; (void)tmp3;
    sun_run *r = ud;
    sunindextype n = r->n, ld = SUNDenseMatrix_Rows(J);
    double *Jd = SUNDenseMatrix_Data(J);
    if (r->dae) {
        if (r->cb_status)
            return -1;
        int rc = r->dae->jac(t, cj, N_VGetArrayPointer(y), N_VGetArrayPointer(yp), Jd,
                             (ptrdiff_t)ld, r->p->ctx);
        if (rc > 0)
            return 1;
        if (rc == MB_ERR_CALLBACK)
            return mb_sun_cb_fail(r, MB_ERR_CALLBACK, NULL);
        if (rc < 0)
            return mb_sun_cb_fail(r, MB_ERR_RHS_FAIL,
                                  "The Jacobian returned failure code %d at t = %.17g.", rc, t);
        for (sunindextype k = 0; k < n * ld; k++)
            if (!isfinite(Jd[k]))
                return mb_sun_cb_fail(r, MB_ERR_NONFINITE,
                                      "The Jacobian returned a non-finite value (entry %td) "
                                      "at t = %.17g.",
                                      (ptrdiff_t)k, t);
        return 0;
    }
    int rc = mb_sun_jac(r, t, y, J);  /* J = df/dy */
    if (rc != 0)
        return rc;
    const double *M = r->p->mass;
    for (sunindextype j = 0; j < n; j++)
        for (sunindextype i = 0; i < n; i++)
            Jd[j * ld + i] = -Jd[j * ld + i] + cj * (M ? M[j * n + i] : (double)(i == j));
    return 0;
}

#define TRY(call, name)                                   \
    do {                                                  \
        int flag_ = (call);                               \
        if (flag_ < 0)                                    \
            return mb_sun_setup_fail(r, flag_, name);     \
    } while (0)

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
        if (mb_sun_rhs(r, t0, r->y, r->yp) != 0) {
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
    double span = tf - t0;
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
    TRY(IDAGetConsistentIC(mem, r->y, r->yp), "IDAGetConsistentIC");
    return MB_OK;
}

static int ida_setup(sun_run *r, double t0, double tf)
{
    const mb_options *o = r->o;
    int calc_ic, has_alg;
    int rc = initial_slope(r, t0, r->v2, &calc_ic, &has_alg);
    if (rc != MB_OK)
        return rc;
    r->mem = IDACreate(r->ctx);
    if (!r->mem) {
        snprintf(r->res->message, sizeof r->res->message, "IDACreate failed.");
        return MB_ERR_MEM;
    }
    void *mem = r->mem;
    TRY(IDASetErrHandlerFn(mem, mb_sun_err_handler, r), "IDASetErrHandlerFn");
    TRY(IDAInit(mem, ida_res, t0, r->y, r->yp), "IDAInit");
    TRY(IDASetUserData(mem, r), "IDASetUserData");
    TRY(IDASVtolerances(mem, o->rtol, r->atol), "IDASVtolerances");
    r->A = SUNDenseMatrix(r->n, r->n, r->ctx);
    r->LS = r->A ? SUNLinSol_Dense(r->y, r->A, r->ctx) : NULL;
    if (!r->A || !r->LS) {
        snprintf(r->res->message, sizeof r->res->message, "SUNDenseMatrix/SUNLinSol_Dense failed.");
        return MB_ERR_MEM;
    }
    TRY(IDASetLinearSolver(mem, r->LS, r->A), "IDASetLinearSolver");
    if (r->dae ? r->dae->jac != NULL : r->p->jac != NULL)
        TRY(IDASetJacFn(mem, ida_jac), "IDASetJacFn");
    TRY(IDASetMaxNumSteps(mem, -1), "IDASetMaxNumSteps");
    TRY(IDASetStopTime(mem, tf), "IDASetStopTime");
    if (o->first_step > 0)
        TRY(IDASetInitStep(mem, r->dir * o->first_step), "IDASetInitStep");
    if (o->max_step > 0 && isfinite(o->max_step))
        TRY(IDASetMaxStep(mem, o->max_step), "IDASetMaxStep");
    if (o->min_step > 0)
        TRY(IDASetMinStep(mem, o->min_step), "IDASetMinStep");
    if (o->n_events > 0) {
        TRY(IDARootInit(mem, (int)o->n_events, ida_root), "IDARootInit");
        TRY(IDASetRootDirection(mem, r->rootdir), "IDASetRootDirection");
        TRY(IDASetNoInactiveRootWarn(mem), "IDASetNoInactiveRootWarn");
    }
    if (has_alg || calc_ic)
        TRY(IDASetId(mem, r->v2), "IDASetId");
    if (calc_ic)
        return consistent_ic(r, t0, tf);
    return MB_OK;
}

static int ida_evolve(sun_run *r, double tf, double *t_ret)
{
    return IDASolve(r->mem, tf, t_ret, r->y, r->yp, IDA_ONE_STEP);
}

static int ida_dky(sun_run *r, double t, int k, N_Vector out)
{
    return IDAGetDky(r->mem, t, k, out);
}

static int ida_last_step(sun_run *r, double *tn, double *hu, int *deg)
{
    int flag = IDAGetCurrentTime(r->mem, tn);
    if (flag >= 0)
        flag = IDAGetLastStep(r->mem, hu);
    if (flag >= 0)
        flag = IDAGetLastOrder(r->mem, deg);
    return flag;
}

static int ida_root_info(sun_run *r, int *found)
{
    return IDAGetRootInfo(r->mem, found);
}

static int ida_local_error(sun_run *r, N_Vector ewt, N_Vector ele)
{
    int flag = IDAGetErrWeights(r->mem, ewt);
    return flag < 0 ? flag : IDAGetEstLocalErrors(r->mem, ele);
}

static void ida_stats(sun_run *r, mb_stats *st)
{
    long nre = 0, nre_ls = 0, nje = 0, nsetups = 0, nst = 0, netf = 0, ncfn = 0;
    IDAGetNumResEvals(r->mem, &nre);
    IDAGetNumLinResEvals(r->mem, &nre_ls);
    IDAGetNumJacEvals(r->mem, &nje);
    IDAGetNumLinSolvSetups(r->mem, &nsetups);
    IDAGetNumSteps(r->mem, &nst);
    IDAGetNumErrTestFails(r->mem, &netf);
    IDAGetNumStepSolveFails(r->mem, &ncfn);
    st->nfev = nre + nre_ls;
    st->njev = nje;
    st->nlu = nsetups;
    st->nsteps = nst;
    st->nreject = netf;
    st->nfail = ncfn;
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

static void ida_free(sun_run *r)
{
    IDAFree(&r->mem);
}

const sun_backend mb_sun_ida = {
    "IDA", ida_setup, ida_evolve, ida_dky, ida_last_step, ida_root_info, ida_local_error,
    ida_stats, ida_status, ida_free,
};
