/* The state-space formulation as a formulation (formulation.h): y = (v, v'), v the
 * independent coordinates chosen by Gauss-Jordan with full pivoting (statespace.c; RN
 * eqs 4-10).  Its policy lives here: coordinates the caller prefers to keep independent
 * get pivot weight SS_PREFER_WEIGHT; without such a list (and unless the caller asks for
 * the paper's pivoting alone) the coordinates in which the stiff force elements act are
 * preferred (stiff_preference); the caller's absolute tolerances over (q, q') are
 * carried over to (v, v') at the start and at every change of coordinates; events see
 * the full (q, q'); the outputs are mapped back to full coordinates through the run's
 * log.  SUNDIALS methods do not run on it: they keep their own step loop, and the
 * formulation must recover the dependent coordinates and check the partition after every
 * accepted step. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "formulation.h"
#include "mbs_common.h"
#include "statespace.h"
#include "statespace_sparse.h"
#include "status.h"

/* Gauss-Jordan ranks the pivots of preferred independent coordinates this much lower */
#define SS_PREFER_WEIGHT 0.1

typedef struct form_ss {
    mb_ss s;
    double *weights;  /* pivot weights (nq), or NULL */
    int stiff;        /* prefer the coordinates of stiff force elements (at the start) */
} form_ss;

static int ss_prefer(mb_formulation *F, form_ss *x, const int *prefer, ptrdiff_t n)
{
    if (!prefer)
        return MB_OK;
    ptrdiff_t nq = F->nq;
    x->weights = malloc((size_t)nq * sizeof(double));
    if (!x->weights)
        return MB_FAIL(F, MB_ERR_MEM, "formulation 'state_space': out of memory.");
    for (ptrdiff_t j = 0; j < nq; j++) x->weights[j] = 1.0;
    for (ptrdiff_t k = 0; k < n; k++) {
        if (prefer[k] < 0 || prefer[k] >= nq)
            return MB_FAIL(F, MB_ERR_ILL_INPUT, "independent: coordinate index %d is not in "
                           "[0, %td).", prefer[k], nq);
        x->weights[prefer[k]] = SS_PREFER_WEIGHT;
    }
    x->s.pivot_w = x->weights;
    return MB_OK;
}

/* The default preference.  With the coordinates a stiff force element acts in among the
 * independent ones, its force stays linear in v where it is linear in q (the RN paper's
 * double pendulum: a torsional spring k = 3e5 N m/rad between the links is linear in the
 * body angles, and nonlinear in (theta1, y2), the partition full pivoting picks, where
 * rosenbrock_nystrom takes 3-9 times as long at matched error, tests/benchmarks/
 * bench_rn.py).  A coordinate's stiffness is its diagonal in the force Jacobians at the
 * start, as squared frequencies: s_j = max(|K_jj|, C_jj^2 / M_jj) / M_jj with K = -Q_q,
 * C = -Q_q'; coordinates with s_j >= STIFF_SHARE max_j s_j are preferred (none when the
 * model has no forces_q or no stiffness).  Scratch: nq x nq, freed here. */
#define STIFF_SHARE 1e-2

static int stiff_preference(mb_formulation *F, form_ss *x, double t, const double *q,
                            const double *qd)
{
    const mb_mech *m = F->mech;
    ptrdiff_t nq = F->nq;
    if (!m->forces_q || nq == 0)
        return MB_OK;
    size_t na = x->s.sp ? 0 : (size_t)(nq * nq);  /* sparse mode: no dense scratch */
    double *A = malloc((na + 3 * (size_t)nq) * sizeof(double));
    if (!A)
        return MB_FAIL(F, MB_ERR_MEM, "formulation 'state_space': out of memory.");
    double *md = A + na, *kd = md + nq, *cd = kd + nq, smax = 0.0;
    int rc = MB_OK;
    if (x->s.sp) {  /* the same diagonals from the sparse kernels */
        rc = mb_ss_sparse_diagonals(x->s.sp, t, q, qd, md, kd, cd);
        goto scores;
    }
    rc = m->mass(q, A, nq, m->ctx);
    for (ptrdiff_t j = 0; rc == MB_OK && j < nq; j++)
        md[j] = A[j * nq + j];
    if (rc == MB_OK && (rc = m->forces_q(t, q, qd, A, nq, m->ctx)) == MB_OK)
        for (ptrdiff_t j = 0; j < nq; j++)
            kd[j] = fabs(A[j * nq + j]);
    for (ptrdiff_t j = 0; j < nq; j++)
        cd[j] = 0.0;
    if (rc == MB_OK && m->forces_qd && (rc = m->forces_qd(t, q, qd, A, nq, m->ctx)) == MB_OK)
        for (ptrdiff_t j = 0; j < nq; j++)
            cd[j] = fabs(A[j * nq + j]);
scores:
    if (rc != MB_OK) {
        free(A);
        return MB_FAIL(F, rc, "formulation 'state_space': the mass matrix or the force Jacobian at t0 "
                      "failed.");
    }
    for (ptrdiff_t j = 0; j < nq; j++) {  /* the scores, in kd */
        kd[j] = md[j] > 0 ? fmax(kd[j], cd[j] * cd[j] / md[j]) / md[j] : 0.0;
        if (isfinite(kd[j]) && kd[j] > smax)
            smax = kd[j];
    }
    if (smax > 0) {
        x->weights = A;  /* the first nq doubles of the scratch become the weights */
        for (ptrdiff_t j = 0; j < nq; j++)
            md[j] = kd[j] >= STIFF_SHARE * smax ? SS_PREFER_WEIGHT : 1.0;
        memmove(A, md, (size_t)nq * sizeof(double));
        x->s.pivot_w = x->weights;
    } else {
        free(A);
    }
    return MB_OK;
}

static int ss_open(mb_formulation *F, const mb_form_options *o)
{
    if (o->project)
        return MB_FAIL(F, MB_ERR_ILL_INPUT, "project: the state-space formulation satisfies the "
                       "constraints by construction (dependent coordinates by Newton after every "
                       "step); leave project=False.");
    form_ss *x = calloc(1, sizeof *x);
    if (!x)
        return MB_FAIL(F, MB_ERR_MEM, "formulation 'state_space': out of memory.");
    F->impl = x;
    int sparse = o->linalg == 1 ? 0 : o->linalg == 2 ? 1 : -1;  /* as index1 */
    int rc = mb_ss_init_ex(&x->s, F->mech, sparse);
    if (rc != MB_OK)
        return MB_FAIL(F, rc, "%s", x->s.msg);
    F->sparse = x->s.sp != NULL;
    if (o->proj_tol > 0)
        x->s.newton_tol = o->proj_tol;
    if (o->proj_max_iter > 0)
        x->s.newton_max_iter = o->proj_max_iter;
    if ((rc = ss_prefer(F, x, o->prefer, o->nprefer)) != MB_OK)
        return rc;
    x->stiff = !o->prefer && !o->pivoting;
    F->n = 2 * x->s.nd;
    return MB_OK;
}

static void ss_close(mb_formulation *F)
{
    form_ss *x = F->impl;
    if (x) {
        mb_ss_free(&x->s);
        free(x->weights);
    }
    free(x);
}

/* partition at (t0, q0), y0 = (v0, v0'), atol over (q, q') -> over (v, v') */
static int ss_initial(mb_formulation *F, double t0, const double *q0, const double *qd0,
                      const double *atol, double *y0, const double **atol_y)
{
    form_ss *x = F->impl;
    x->s.atol_q = atol;
    int rc;
    if (x->stiff && !x->weights && (rc = stiff_preference(F, x, t0, q0, qd0)) != MB_OK)
        return rc;
    rc = mb_ss_start(&x->s, t0, q0, qd0, y0);
    if (rc != MB_OK)
        return MB_FAIL(F, rc, "%s", x->s.msg);
    *atol_y = x->s.atol_v;
    return MB_OK;
}

static void ss_problem(mb_formulation *F, mb_problem *p)
{
    form_ss *x = F->impl;
    mb_ss_problem(&x->s, p);
}

static int ss_sundials(mb_formulation *F, const char *method, mb_form_ida *ida)
{
    (void)ida;
    return MB_FAIL(F, MB_ERR_NOT_SUPPORTED,
                   "method '%s' cannot run on the state-space formulation: it is a SUNDIALS "
                   "method with its own step loop, and the formulation must recover the "
                   "dependent coordinates and check the partition after every accepted step "
                   "(use one of mbint's own methods, e.g. 'rosenbrock_nystrom' or 'bdf').",
                   method);
}

/* during the run: Newton from the last accepted point, in the current partition */
static int ss_full(mb_formulation *F, double t, const double *y, double *q, double *qd)
{
    form_ss *x = F->impl;
    return mb_ss_full(&x->s, t, y, q, qd, NULL, NULL);
}

/* after the run: through the log (the partition of the step containing t) */
static int ss_outputs(mb_formulation *F, double t, const double *y, double *q, double *qd,
                      double *qdd, double *lam)
{
    form_ss *x = F->impl;
    return mb_ss_recover(&x->s, t, y, q, qd, qdd, lam);
}

static const char *ss_why(const mb_formulation *F, int status)
{
    const form_ss *x = F->impl;
    return status < 0 && status != MB_ERR_INTERRUPTED && x->s.msg[0] ? x->s.msg : NULL;
}

const mb_form_ops mb_form_state_space = {
    "state_space", ss_open, ss_close, ss_initial, ss_problem, ss_sundials, ss_full,
    ss_outputs, ss_why,
};
