/* CVODE adapters: cvode_bdf (BDF, orders 1-5) and cvode_adams (Adams-Moulton,
 * orders 1-12), both with Newton iteration and the dense direct linear solver
 * (SUNDenseMatrix + SUNLinSol_Dense), the problem's Jacobian when it has one,
 * else CVODE's difference quotients.  The run itself is in sundials_common.c. */
#include <math.h>
#include <stdio.h>
#include <cvode/cvode.h>
#include <sunlinsol/sunlinsol_dense.h>
#include <sunmatrix/sunmatrix_dense.h>
#include "status.h"
#include "sundials_impl.h"

static int cv_rhs(realtype t, N_Vector y, N_Vector ydot, void *ud)
{
    return mb_sun_rhs(ud, t, y, ydot);
}

static int cv_root(realtype t, N_Vector y, realtype *g, void *ud)
{
    return mb_sun_events(ud, t, y, g);
}

static int cv_jac(realtype t, N_Vector y, N_Vector fy, SUNMatrix J, void *ud, N_Vector tmp1,
                  N_Vector tmp2, N_Vector tmp3)
{
    (void)fy; (void)tmp1; (void)tmp2; (void)tmp3;
    return mb_sun_jac(ud, t, y, J);
}

#define TRY(call, name)                                   \
    do {                                                  \
        int flag_ = (call);                               \
        if (flag_ < 0)                                    \
            return mb_sun_setup_fail(r, flag_, name);     \
    } while (0)

static int cv_setup(sun_run *r, int lmm, double t0, double tf)
{
    const mb_options *o = r->o;
    r->mem = CVodeCreate(lmm, r->ctx);
    if (!r->mem) {
        snprintf(r->res->message, sizeof r->res->message, "CVodeCreate failed.");
        return MB_ERR_MEM;
    }
    void *mem = r->mem;
    TRY(CVodeSetErrHandlerFn(mem, mb_sun_err_handler, r), "CVodeSetErrHandlerFn");
    TRY(CVodeInit(mem, cv_rhs, t0, r->y), "CVodeInit");
    TRY(CVodeSetUserData(mem, r), "CVodeSetUserData");
    TRY(CVodeSVtolerances(mem, o->rtol, r->atol), "CVodeSVtolerances");
    r->A = SUNDenseMatrix(r->n, r->n, r->ctx);
    r->LS = r->A ? SUNLinSol_Dense(r->y, r->A, r->ctx) : NULL;
    if (!r->A || !r->LS) {
        snprintf(r->res->message, sizeof r->res->message, "SUNDenseMatrix/SUNLinSol_Dense failed.");
        return MB_ERR_MEM;
    }
    TRY(CVodeSetLinearSolver(mem, r->LS, r->A), "CVodeSetLinearSolver");
    if (r->p->jac)
        TRY(CVodeSetJacFn(mem, cv_jac), "CVodeSetJacFn");
    /* one step per call (ONE_STEP): the step limit is checked by the run */
    TRY(CVodeSetMaxNumSteps(mem, -1), "CVodeSetMaxNumSteps");
    TRY(CVodeSetMaxHnilWarns(mem, -1), "CVodeSetMaxHnilWarns");
    TRY(CVodeSetStopTime(mem, tf), "CVodeSetStopTime");
    if (o->first_step > 0)
        TRY(CVodeSetInitStep(mem, r->dir * o->first_step), "CVodeSetInitStep");
    if (o->max_step > 0 && isfinite(o->max_step))
        TRY(CVodeSetMaxStep(mem, o->max_step), "CVodeSetMaxStep");
    if (o->min_step > 0)
        TRY(CVodeSetMinStep(mem, o->min_step), "CVodeSetMinStep");
    if (o->n_events > 0) {
        TRY(CVodeRootInit(mem, (int)o->n_events, cv_root), "CVodeRootInit");
        TRY(CVodeSetRootDirection(mem, r->rootdir), "CVodeSetRootDirection");
        TRY(CVodeSetNoInactiveRootWarn(mem), "CVodeSetNoInactiveRootWarn");
    }
    return MB_OK;
}

static int cv_setup_bdf(sun_run *r, double t0, double tf)
{
    return cv_setup(r, CV_BDF, t0, tf);
}

static int cv_setup_adams(sun_run *r, double t0, double tf)
{
    return cv_setup(r, CV_ADAMS, t0, tf);
}

static int cv_evolve(sun_run *r, double tf, double *t_ret)
{
    return CVode(r->mem, tf, r->y, t_ret, CV_ONE_STEP);
}

static int cv_dky(sun_run *r, double t, int k, N_Vector out)
{
    return CVodeGetDky(r->mem, t, k, out);
}

static int cv_last_step(sun_run *r, double *tn, double *hu, int *deg)
{
    int flag = CVodeGetCurrentTime(r->mem, tn);
    if (flag >= 0)
        flag = CVodeGetLastStep(r->mem, hu);
    if (flag >= 0)
        flag = CVodeGetLastOrder(r->mem, deg);  /* the Nordsieck polynomial's degree */
    return flag;
}

static int cv_root_info(sun_run *r, int *found)
{
    return CVodeGetRootInfo(r->mem, found);
}

static int cv_local_error(sun_run *r, N_Vector ewt, N_Vector ele)
{
    int flag = CVodeGetErrWeights(r->mem, ewt);
    return flag < 0 ? flag : CVodeGetEstLocalErrors(r->mem, ele);
}

static void cv_stats(sun_run *r, mb_stats *st)
{
    long nfe = 0, nfe_ls = 0, nje = 0, nsetups = 0, nst = 0, netf = 0, ncfn = 0;
    CVodeGetNumRhsEvals(r->mem, &nfe);
    CVodeGetNumLinRhsEvals(r->mem, &nfe_ls);
    CVodeGetNumJacEvals(r->mem, &nje);
    CVodeGetNumLinSolvSetups(r->mem, &nsetups);
    CVodeGetNumSteps(r->mem, &nst);
    CVodeGetNumErrTestFails(r->mem, &netf);
    CVodeGetNumStepSolveFails(r->mem, &ncfn);
    st->nfev = nfe + nfe_ls;
    st->njev = nje;
    st->nlu = nsetups;
    st->nsteps = nst;
    st->nreject = netf;
    st->nfail = ncfn;
}

static int cv_status(int flag)
{
    switch (flag) {
    case CV_TOO_MUCH_WORK: return MB_ERR_MAX_STEPS;
    case CV_TOO_MUCH_ACC:
    case CV_ERR_FAILURE:
    case CV_TOO_CLOSE: return MB_ERR_STEP_TOO_SMALL;
    case CV_CONV_FAILURE:
    case CV_NLS_INIT_FAIL:
    case CV_NLS_SETUP_FAIL:
    case CV_NLS_FAIL: return MB_ERR_CONV;
    case CV_LINIT_FAIL:
    case CV_LSETUP_FAIL:
    case CV_LSOLVE_FAIL: return MB_ERR_LINALG;
    case CV_RHSFUNC_FAIL:
    case CV_FIRST_RHSFUNC_ERR:
    case CV_REPTD_RHSFUNC_ERR:
    case CV_UNREC_RHSFUNC_ERR: return MB_ERR_RHS_FAIL;
    case CV_RTFUNC_FAIL: return MB_ERR_EVENT_FAIL;
    case CV_MEM_FAIL: return MB_ERR_MEM;
    default: return MB_ERR_ILL_INPUT;
    }
}

static void cv_free(sun_run *r)
{
    CVodeFree(&r->mem);
}

const sun_backend mb_sun_cvode_bdf = {
    "CVODE", cv_setup_bdf, cv_evolve, cv_dky, cv_last_step, cv_root_info, cv_local_error,
    cv_stats, cv_status, cv_free,
};

const sun_backend mb_sun_cvode_adams = {
    "CVODE", cv_setup_adams, cv_evolve, cv_dky, cv_last_step, cv_root_info, cv_local_error,
    cv_stats, cv_status, cv_free,
};
