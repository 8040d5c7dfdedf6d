/* Variable-order (1-5), variable-step BDF with a constant, possibly singular mass
 * matrix: M y' = f(t, y).
 *
 * Form: QUASI-CONSTANT STEP SIZE with a modified divided-difference array, as in
 * Shampine & Reichelt's ode15s and SciPy's _ivp/bdf.py.  The history is the array
 *     D_j = nabla^j y_n  (j = 0..k+2)   backward differences on an equal grid of
 *                                        spacing h_c (the committed step size),
 * i.e. the interpolating polynomial of the last k + 1 points.  A step of another
 * size h first rescales rows 0..k by the factor r = h / h_c, D <- (R(r) U)^T D
 * (change_D: interpolation of the same polynomial on the grid of spacing h).
 *
 * Formulas (numerical differentiation formulas, NDF, when kappa != 0):
 *     gamma_k = sum_{j<=k} 1/j,  alpha_k = (1 - kappa_k) gamma_k,
 *     predictor  y_p = sum_{j=0..k} D_j,
 *     corrector  alpha_k d + sum_{j=1..k} gamma_j D_j = h M^{-1} f(t+h, y_p + d)
 *                written as  M (d + psi) = c f(t + h, y_p + d),
 *                c = h / alpha_k,  psi = sum_{j=1..k} gamma_j D_j / alpha_k,
 *     y_{n+1} = y_p + d,  local error  err = (kappa_k gamma_k + 1/(k+1)) d.
 * With kappa = 0 these are the classical BDF (e.g. BDF2 at constant h:
 * y_{n+1} = 4/3 y_n - 1/3 y_{n-1} + 2/3 h f_{n+1}, lecture notes 7.8).  The
 * registered "bdf" uses the NDF coefficients of ode15s and SciPy (kappa = -0.1850,
 * -1/9, -0.0823, -0.0415 for orders 1-4, 0 for order 5); mb_bdf_classic gives the
 * plain BDF (kappa = 0) with the same kernel.  After a step the differences are
 * updated: D_{k+2} = d - D_{k+1}, D_{k+1} = d, D_j += D_{j+1} (j = k..0).
 *
 * Newton: simplified Newton on d with the iteration matrix M - c J (I - c J without
 * a mass matrix) under the shared monitor (linalg/newton.h; tolerance
 * max(10 eps / rtol, min(0.03, sqrt(rtol))) in the run's weighted RMS norm, at most
 * 4 iterations).  J is evaluated at (t + h, y_p) with the first iteration's
 * f(t + h, y_p) (no extra evaluation) and kept across steps until Newton fails with
 * a J older than the current step; then J is re-evaluated and Newton retried once
 * (mb_jac_reuse, as implicit_simple.c).
 * A failure with a current J returns > 0 with h_fail_factor = 0.5.  The LU is
 * refactored only when c (i.e. h or the order) or J changed.  The monitor lets the
 * first iteration converge on the rate of the last solve (eta); with a mass matrix
 * only when that first correction is itself within the tolerance: on the index-1 DAE
 * of the LS manipulator (rtol = atol = 1e-4) steps passed with one correction of the
 * multipliers 2.5-6 times the tolerance (eta ~ 1e-4 carried over, J kept from earlier
 * steps), the multipliers in the history drifted off the constraint, and the error
 * estimate stopped shrinking with h until the step collapsed (t = 0.593 s, for every
 * last bit of lambda(t0); before, at other tolerances, for some last bits only).
 *
 * Step size and order (after_step, Shampine-Reichelt / SciPy, with CVODE's bias): a
 * rejected step gives h *= max(0.2, safety (B err)^(-1/(k+1))) at the same order,
 * safety = 0.9 (2 m + 1) / (2 m + n_iter), m = 4.  After an accepted step the size
 * stays until k + 1 steps of equal size were taken; then the estimates at orders k-1
 * (err_const_{k-1} D_k), k and k+1 (err_const_{k+1} D_{k+2}) give factors
 * (B err_q)^(-1/(q+1)), the order with the largest factor is taken and
 * h *= min(10, safety * that factor).  B = 6 (CVODE's BIAS2): new steps aim at 1/6
 * of the tolerance while a step is accepted at err <= 1.  Measured on Van der Pol
 * (mu = 1000), Robertson and HIRES at rtol 1e-3..1e-8 this costs 6-10 % more f
 * evaluations than B = 1 (SciPy), because fewer steps are rejected, and brings the
 * global error at the end from up to 15x down to at most ~6x the tolerance.
 * The run starts (and restarts) at order 1 with D_1 = h y'(t): y' = f without a mass
 * matrix, and h (M - c J)^{-1} f with one (first BE-like linearized step, which
 * also gives consistent algebraic increments for index-1 DAEs).
 *
 * Mass matrix and algebraic components: every component, differential or
 * algebraic, enters the error test with the same estimate err = err_const_k d (as
 * DASSL and ode15s do for index-1 problems: d is the difference between the
 * corrected value and the polynomial extrapolation, which is as meaningful for an
 * algebraic variable as for a differential one).  Index-2/3 components of a
 * semi-explicit DAE (mb_problem.dae_index; the mechanism formulations of mbs/dae.c)
 * enter every norm (Newton and error test) scaled by h^(index - 1), as in RADAU5
 * (mb_norm): the scaled test controls the differential variables; measured on a double
 * pendulum at index 3 the error of (q, v) is ~2000x the tolerance, at index 2 and GGL
 * ~15x (index 1: ~5x).
 *
 * History is committed only in accept(): step() works in a second difference
 * buffer that accept() makes current, so a rejected step (or a Newton failure)
 * leaves the committed state unchanged.  When step() starts from a time that is
 * not the last accepted point, or accept() receives a time inside the step (a
 * terminal event), the history restarts at order 1.  When after_step is not
 * called (fixed steps), accept() selects the order by the same rules.
 *
 * Dense output: the interpolating polynomial of the accepted step (through
 * y_{n+1}, y_n, ..., y_{n+1-k} on the grid of spacing h) as monomials in theta,
 * degree k; the constant term is y_n itself and the value at theta = 1 is y_{n+1}
 * up to rounding.
 *
 * f evaluations: one per Newton iteration; no f at the accepted point (the flag
 * MB_USES_F0 is not set: the driver would otherwise evaluate f(t, y) before every
 * step; f is needed only at a (re)start, where the driver's f0 is used when valid).
 *
 * References: L. F. Shampine, M. W. Reichelt, The MATLAB ODE suite, SIAM J. Sci.
 * Comput. 18 (1997) 1-22; SciPy scipy/integrate/_ivp/bdf.py; E. Hairer, G. Wanner,
 * Solving ODEs II, III.5 and VI.2.
 */
#include <float.h>
#include <math.h>
#include <string.h>
#include "bdf.h"
#include "carve.h"
#include "../linalg/dense.h" /* LU */
#include "newton.h"
#include "norm.h"
#include "status.h"

enum { KMAX = MB_BDF_MAX_ORDER, NROW = KMAX + 3, NEWTON_MAXITER = 4 };
static const double MIN_FACTOR = 0.2, MAX_FACTOR = 10.0;
static const double BIAS = 6.0;   /* new steps aim at err = 1/BIAS (CVODE's BIAS2) */

const mb_bdf_table mb_bdf_ndf = { "ndf", { 0.0, -0.1850, -1.0 / 9.0, -0.0823, -0.0415, 0.0 } };
const mb_bdf_table mb_bdf_classic = { "bdf", { 0.0, 0.0, 0.0, 0.0, 0.0, 0.0 } };

typedef struct bdf_state {
    /* committed history */
    int started;      /* D of buffer cur is valid */
    int cur;          /* committed difference buffer (0 or 1) */
    int n_equal;      /* accepted steps of size h_c since the last size/order change */
    double t_c, h_c;  /* last accepted point, spacing of the committed D */
    /* the last computed step */
    int pending;      /* waits for accept() */
    int selected;     /* after_step chose order and size */
    int reselect;     /* the selection changed order/size (n_equal restarts) */
    int stepped;      /* dense output valid */
    int k, n_iter, n_equal_new, buf;
    double t, h;
    double err_k, err_m, err_p;  /* weighted RMS norms at orders k, k-1, k+1 */
    /* Jacobian and iteration matrix */
    mb_jac_reuse jr;  /* J kept across steps (method.h): fresh = evaluated in this step */
    int lu_ok;
    double c_lu;      /* c of the factored matrix */
    mb_newton nw;
    double gamma[KMAX + 2], alpha[KMAX + 2], err_const[KMAX + 2];
} bdf_state;

enum { V_YP, V_PSI, V_D, V_F, V_DY, V_Y, V_FP, V_YN, V_TMP, NVEC };

typedef struct bdf_work {
    bdf_state *st;
    double *D[2];       /* the difference buffers (NROW x n each), committed: D[st->cur] */
    double *J, *LU;     /* n x n each; none with the problem's linsys (linsys.h) */
    int *ipiv;
    double *v[NVEC];    /* vectors of n */
} bdf_work;

/* The one layout of the workspace: counts it (c->base NULL) and carves it. */
static size_t layout(mb_carver *c, const mb_problem *p, bdf_work *w)
{
    size_t n = (size_t)p->n, nn = p->linsys ? 0 : n * n;
    w->st = mb_carve_bytes(c, sizeof *w->st);
    for (int b = 0; b < 2; b++)
        w->D[b] = mb_carve(c, NROW * n);
    w->J = mb_carve(c, nn);
    w->LU = mb_carve(c, nn);
    w->ipiv = mb_carve_int(c, nn ? n : 0);
    for (int v = 0; v < NVEC; v++)
        w->v[v] = mb_carve(c, n);
    return c->off;
}

static size_t bdf_work_size(const mb_problem *p, const void *data)
{
    (void)data;
    bdf_work w;
    return layout(&(mb_carver){NULL, 0}, p, &w);
}

static bdf_work workspace(mb_stepper *s)
{
    bdf_work w;
    layout(&(mb_carver){s->work, 0}, s->p, &w);
    return w;
}

static const bdf_state *cstate(const mb_stepper *s)
{
    return (const bdf_state *)(const void *)s->work;  /* the first part of the layout */
}

static int bdf_init(mb_stepper *s)
{
    bdf_state *st = workspace(s).st;
    const mb_bdf_table *T = s->m->data ? s->m->data : &mb_bdf_ndf;
    memset(st, 0, sizeof *st);
    st->gamma[0] = 0.0;
    for (int k = 1; k <= KMAX + 1; k++) {
        double kap = k <= KMAX ? T->kappa[k] : 0.0;
        st->gamma[k] = st->gamma[k - 1] + 1.0 / k;
        st->alpha[k] = (1.0 - kap) * st->gamma[k];
        st->err_const[k] = kap * st->gamma[k] + 1.0 / (k + 1);
    }
    double rtol = s->rtol > 0 ? s->rtol : 1e-3;
    double tol = fmax(10.0 * DBL_EPSILON / rtol, fmin(0.03, sqrt(rtol)));
    mb_newton_init(&st->nw, tol, NEWTON_MAXITER);
    s->order = 1;
    return MB_OK;
}

/* ---- difference array ---- */

/* R(factor) of ode15s: R[i][j] = prod_{l=1..i} (l - 1 - factor j) / l, R[0][j] = 1 */
static void compute_R(int k, double factor, double R[NROW][NROW])
{
    for (int j = 0; j <= k; j++)
        R[0][j] = 1.0;
    for (int i = 1; i <= k; i++) {
        R[i][0] = 0.0;
        for (int j = 1; j <= k; j++)
            R[i][j] = R[i - 1][j] * ((double)(i - 1) - factor * j) / (double)i;
    }
}

void mb_bdf_change_D(ptrdiff_t n, int k, double factor, double *D, ptrdiff_t ld)
{
    double R[NROW][NROW], U[NROW][NROW], RU[NROW][NROW];
    if (k < 1) return;
    if (k > NROW - 1) k = NROW - 1;
    compute_R(k, factor, R);
    compute_R(k, 1.0, U);
    for (int i = 0; i <= k; i++)
        for (int j = 0; j <= k; j++) {
            double acc = 0.0;
            for (int l = 0; l <= k; l++)
                acc += R[i][l] * U[l][j];
            RU[i][j] = acc;
        }
    /* D_new[j] = sum_i RU[i][j] D[i]; row 0 is unchanged (RU[i][0] = delta_i0) */
    double v[NROW];
    for (ptrdiff_t c = 0; c < n; c++) {
        for (int i = 0; i <= k; i++)
            v[i] = D[i * ld + c];
        for (int j = 1; j <= k; j++) {
            double acc = 0.0;
            for (int i = 0; i <= k; i++)
                acc += RU[i][j] * v[i];
            D[j * ld + c] = acc;
        }
    }
}

/* ---- linear algebra ---- */

/* LU of M - c J (I - c J without a mass matrix) */
static int factor_matrix(mb_stepper *s, const bdf_work *w, double c)
{
    bdf_state *st = w->st;
    s->stats->nlu++;
    st->lu_ok = 0;
    int rc = s->p->linsys ? mb_linsys_factor(s, 0, 1.0 / c, 0.0)  /* I - c J = c (I/c - J) */
                          : mb_newton_matrix_factor(s->n, s->p->mass, w->J, c, w->LU, w->ipiv);
    if (rc != MB_OK)
        return rc;
    st->lu_ok = 1;
    st->c_lu = c;
    return MB_OK;
}

/* x <- (M - c J)^-1 x with the factorization for c */
static int lu_solve(mb_stepper *s, const bdf_work *w, double c, double *x)
{
    if (!s->p->linsys)
        return mb_lu_solve(s->n, w->LU, s->n, w->ipiv, x, 1);
    int rc = mb_linsys_solve(s, 0, x, NULL);
    for (ptrdiff_t i = 0; rc == MB_OK && i < s->n; i++)
        x[i] /= c;
    return rc;
}

static int lu_current(const bdf_state *st, double c)
{
    return st->lu_ok && fabs(c - st->c_lu) <= 1e-10 * fabs(c);
}


/* ---- history ---- */

static void restart(mb_stepper *s, bdf_state *st)
{
    st->started = 0;
    st->pending = 0;
    st->n_equal = 0;
    s->order = 1;
}

/* D_0 = y, D_1 = h y'(t) on the committed buffer, spacing h, order 1 */
static int start_history(mb_stepper *s, const bdf_work *w, double t, double h, const double *y)
{
    bdf_state *st = w->st;
    ptrdiff_t n = s->n;
    double *D = w->D[st->cur], *f = w->v[V_TMP];
    int rc;
    restart(s, st);
    memset(D, 0, (size_t)(NROW * n) * sizeof(double));
    memcpy(D, y, (size_t)n * sizeof(double));
    if (s->f0_ok) {
        memcpy(f, s->f0, (size_t)n * sizeof(double));
    } else if ((rc = mb_rhs(s, t, y, f)) != MB_OK) {
        return rc;
    }
    if (s->p->mass || s->p->mass_diag) {
        /* h (M - c J)^{-1} f: a linearized backward-Euler increment */
        double c = h / st->alpha[1];
        double *fy = w->v[V_F];
        memcpy(fy, f, (size_t)n * sizeof(double));
        if ((rc = mb_jac(s, t, y, fy, w->J)) != MB_OK)
            return rc;
        st->jr = (mb_jac_reuse){.ok = 1, .fresh = 1, .need = 0};
        st->lu_ok = 0;
        if ((rc = factor_matrix(s, w, c)) != MB_OK)
            return rc == MB_ERR_LINALG ? MB_RECOVERABLE : rc;
        if ((rc = lu_solve(s, w, c, f)) != MB_OK)
            return rc;
    }
    for (ptrdiff_t i = 0; i < n; i++)
        D[n + i] = h * f[i];
    st->t_c = t;
    st->h_c = h;
    st->started = 1;
    return MB_OK;
}

int mb_bdf_start(mb_stepper *s, double t, double h, int k, const double *Y)
{
    bdf_work wk = workspace(s);
    bdf_state *st = wk.st;
    ptrdiff_t n = s->n;
    if (k < 1 || k > KMAX || !(h != 0.0))
        return MB_ERR_ILL_INPUT;
    restart(s, st);
    double *D = wk.D[st->cur];
    memset(D, 0, (size_t)(NROW * n) * sizeof(double));
    /* backward differences nabla^j y_n from y_n, y_{n-1}, ..., y_{n-k} */
    double w[KMAX + 1];
    for (ptrdiff_t c = 0; c < n; c++) {
        for (int j = 0; j <= k; j++)
            w[j] = Y[j * n + c];
        for (int j = 0; j <= k; j++) {
            D[j * n + c] = w[0];
            for (int i = 0; i < k - j; i++)
                w[i] = w[i] - w[i + 1];
        }
    }
    st->t_c = t;
    st->h_c = h;
    st->started = 1;
    s->order = k;
    return MB_OK;
}

/* ---- the step ---- */

/* simplified Newton on d: M (d + psi) = c f(t, y_p + d); returns 1 if converged */
static int newton(mb_stepper *s, const bdf_work *wk, double t, double c, int *rc_out)
{
    bdf_state *st = wk->st;
    ptrdiff_t n = s->n;
    const double *M = s->p->mass, *Md = s->p->mass_diag;
    double *yp = wk->v[V_YP], *psi = wk->v[V_PSI], *d = wk->v[V_D], *f = wk->v[V_F];
    double *dy = wk->v[V_DY], *yv = wk->v[V_Y], *fp = wk->v[V_FP], *w = wk->v[V_TMP];
    *rc_out = MB_OK;
    mb_newton_begin(&st->nw);
    memcpy(yv, yp, (size_t)n * sizeof(double));
    memset(d, 0, (size_t)n * sizeof(double));
    for (int it = 0; it < NEWTON_MAXITER; it++) {
        const double *fv = fp;
        if (it > 0) {
            int rc = mb_rhs_iterate(s, t, yv, f);
            if (rc < 0) { *rc_out = rc; return 0; }
            if (rc > 0) return 0;
            fv = f;
        }
        if (M) {
            for (ptrdiff_t i = 0; i < n; i++) {
                w[i] = psi[i] + d[i];
                dy[i] = c * fv[i];
            }
            mb_gemv(n, n, -1.0, M, n, w, 1.0, dy);
        } else if (Md) {  /* diagonal M with the problem's linsys (MB_LINSYS_MASS) */
            for (ptrdiff_t i = 0; i < n; i++)
                dy[i] = c * fv[i] - Md[i] * (psi[i] + d[i]);
        } else {
            for (ptrdiff_t i = 0; i < n; i++)
                dy[i] = c * fv[i] - psi[i] - d[i];
        }
        int rc = lu_solve(s, wk, st->c_lu, dy);
        if (rc != MB_OK) { *rc_out = rc; return 0; }
        double dz = mb_norm(s, dy, yp, NULL);
        int status = mb_newton_check(&st->nw, dz);
        if (status == MB_NEWTON_FAILED)
            return 0;
        for (ptrdiff_t i = 0; i < n; i++) {
            yv[i] += dy[i];
            d[i] += dy[i];
        }
        /* with a mass matrix, a first correction beyond the tolerance needs a rate of
         * this solve (see the top of the file) */
        if (status == MB_NEWTON_CONVERGED && (M || Md) && it == 0 && dz > st->nw.kappa)
            status = MB_NEWTON_CONTINUE;
        if (status == MB_NEWTON_CONVERGED) {
            st->n_iter = it + 1;
            return 1;
        }
    }
    return 0;
}

/* The predictor y_p = sum_{j<=k} D_j and the history term psi = sum_{j=1..k} gamma_j D_j
 * / alpha_k from the working differences D */
static void predict(const bdf_work *w, ptrdiff_t n, int k, const double *D)
{
    const bdf_state *st = w->st;
    double *yp = w->v[V_YP], *psi = w->v[V_PSI];
    double ak = st->alpha[k];
    for (ptrdiff_t i = 0; i < n; i++) {
        double sp = D[i], sg = 0.0;
        for (int j = 1; j <= k; j++) {
            sp += D[j * n + i];
            sg += st->gamma[j] * D[j * n + i];
        }
        yp[i] = sp;
        psi[i] = sg / ak;
    }
}

/* The corrector at tn with c = h / alpha_k: Newton with the kept J, and once more with a
 * fresh J when the kept one fails (mb_jac_reuse).  Returns MB_OK when converged, a
 * recoverable failure with h_fail_factor = 0.5, or a fatal status. */
static int correct(mb_stepper *s, const bdf_work *w, double tn, double c)
{
    bdf_state *st = w->st;
    const double *yp = w->v[V_YP], *fp = w->v[V_FP];
    int rc, converged = 0;
    for (;;) {
        int jac_new;
        if ((rc = mb_jac_refresh(s, &st->jr, tn, yp, fp, w->J, &jac_new)) != MB_OK)
            return rc;
        if (jac_new)
            st->lu_ok = 0;
        if (!lu_current(st, c)) {
            rc = factor_matrix(s, w, c);
            if (rc == MB_ERR_LINALG) break;   /* singular iteration matrix: smaller h */
            if (rc != MB_OK) return rc;
        }
        converged = newton(s, w, tn, c, &rc);
        if (rc < 0)
            return rc;
        if (converged || st->jr.fresh)
            break;
        st->jr.need = 1;   /* J from an earlier step: re-evaluate and retry */
    }
    if (!converged) {
        s->h_fail_factor = 0.5;
        return MB_RECOVERABLE;
    }
    return MB_OK;
}

/* y_{n+1}, the error estimate err = err_const_k d, the difference update of D and the
 * norms of the estimates at orders k - 1 and k + 1 (after k + 1 equal steps) */
static void update(mb_stepper *s, const bdf_work *w, int k, int n_equal_new, double *D,
                   const double *y, double *y_new, double *err)
{
    bdf_state *st = w->st;
    ptrdiff_t n = s->n;
    const double *yv = w->v[V_Y], *d = w->v[V_D];
    double ek = st->err_const[k];
    memcpy(y_new, yv, (size_t)n * sizeof(double));
    memcpy(w->v[V_YN], y, (size_t)n * sizeof(double));
    for (ptrdiff_t i = 0; i < n; i++)
        err[i] = ek * d[i];
    double *Dk1 = D + (k + 1) * n, *Dk2 = D + (k + 2) * n;
    for (ptrdiff_t i = 0; i < n; i++) {
        Dk2[i] = d[i] - Dk1[i];
        Dk1[i] = d[i];
    }
    for (int j = k; j >= 0; j--) {
        double *Dj = D + j * n, *Dj1 = D + (j + 1) * n;
        for (ptrdiff_t i = 0; i < n; i++)
            Dj[i] += Dj1[i];
    }
    memcpy(D, y_new, (size_t)n * sizeof(double));

    st->err_k = mb_norm(s, err, y, y_new);
    st->err_m = st->err_p = INFINITY;
    if (n_equal_new >= k + 1) {
        double *e = w->v[V_TMP];
        if (k > 1) {
            for (ptrdiff_t i = 0; i < n; i++)
                e[i] = st->err_const[k - 1] * D[k * n + i];
            st->err_m = mb_norm(s, e, y, y_new);
        }
        if (k < KMAX) {
            for (ptrdiff_t i = 0; i < n; i++)
                e[i] = st->err_const[k + 1] * Dk2[i];
            st->err_p = mb_norm(s, e, y, y_new);
        }
    }
}

static int bdf_step(mb_stepper *s, double t, double h, const double *y, double *y_new,
                    double *err)
{
    bdf_work w = workspace(s);
    bdf_state *st = w.st;
    ptrdiff_t n = s->n;
    int rc;
    st->pending = 0;
    if (!st->started ||
        fabs(t - st->t_c) > 4.0 * DBL_EPSILON * (fabs(t) + fabs(h))) {
        if ((rc = start_history(s, &w, t, h, y)) != MB_OK)
            return rc;
    }
    int k = s->order < 1 ? 1 : (s->order > KMAX ? KMAX : s->order);
    int wb = 1 - st->cur;
    double *Dc = w.D[st->cur], *D = w.D[wb];
    memcpy(D, Dc, (size_t)(NROW * n) * sizeof(double));
    double ratio = h / st->h_c;
    int equal = fabs(ratio - 1.0) <= 1e-10;
    if (!equal)
        mb_bdf_change_D(n, k, ratio, D, n);
    int n_equal_new = equal ? st->n_equal + 1 : 1;

    predict(&w, n, k, D);
    double c = h / st->alpha[k], tn = t + h;
    rc = mb_rhs_iterate(s, tn, w.v[V_YP], w.v[V_FP]);
    if (rc != MB_OK) {
        if (rc > 0) s->h_fail_factor = 0.5;
        return rc;
    }
    if ((rc = correct(s, &w, tn, c)) != MB_OK)
        return rc;
    update(s, &w, k, n_equal_new, D, y, y_new, err);
    st->k = k;
    st->t = t;
    st->h = h;
    st->buf = wb;
    st->n_equal_new = n_equal_new;
    st->pending = 1;
    st->selected = 0;
    st->reselect = 0;
    st->stepped = 1;
    s->order = k;
    return MB_OK;
}

/* factor x^(-1/p) with x = 0 -> inf and x = inf -> 0 */
static double root_factor(double x, int p)
{
    if (!(x < INFINITY)) return 0.0;
    if (x <= 0.0) return INFINITY;
    return pow(x, -1.0 / p);
}

/* order and step-size choice after a step of error norm err (driver's norm of the
 * order-k estimate); sets s->order, returns h_next / h */
static double choose(mb_stepper *s, bdf_state *st, double err, int accepted)
{
    int k = st->k;
    double safety = 0.9 * (2.0 * NEWTON_MAXITER + 1.0) / (2.0 * NEWTON_MAXITER + st->n_iter);
    s->order = k;
    if (!accepted) {
        double fac = isfinite(err) ? safety * root_factor(BIAS * err, k + 1) : MIN_FACTOR;
        return fmin(1.0, fmax(MIN_FACTOR, fac));
    }
    if (st->n_equal_new < k + 1)
        return 1.0;
    double sc = st->err_k > 0.0 ? BIAS * err / st->err_k : BIAS;
    err *= BIAS;
    double fm = k > 1 ? root_factor(sc * st->err_m, k) : 0.0;
    double f0 = root_factor(err, k + 1);
    double fp = k < KMAX ? root_factor(sc * st->err_p, k + 2) : 0.0;
    int knew = k;
    double fbest = f0;
    if (fm > fbest) { knew = k - 1; fbest = fm; }
    if (fp > fbest) { knew = k + 1; fbest = fp; }
    s->order = knew;
    st->reselect = 1;
    return fmin(MAX_FACTOR, safety * fbest);
}

static int bdf_after_step(mb_stepper *s, double h, double err_norm, int accepted,
                          double *factor)
{
    bdf_state *st = workspace(s).st;
    (void)h;
    if (!st->pending) {
        *factor = accepted ? 1.0 : 0.5;
        return MB_OK;
    }
    *factor = choose(s, st, err_norm, accepted);
    st->selected = 1;
    return MB_OK;
}

static int bdf_accept(mb_stepper *s, double t_new, const double *y_new)
{
    bdf_state *st = workspace(s).st;
    (void)y_new;
    if (!st->pending)
        return MB_OK;
    st->pending = 0;
    st->jr.fresh = 0;
    double t_end = st->t + st->h;
    if (fabs(t_new - t_end) > 4.0 * DBL_EPSILON * (fabs(t_end) + fabs(st->h))) {
        restart(s, st);   /* a point inside the step was accepted */
        return MB_OK;
    }
    if (!st->selected)
        (void)choose(s, st, st->err_k, 1);
    st->cur = st->buf;
    st->t_c = t_end;
    st->h_c = st->h;
    st->n_equal = st->reselect ? 0 : st->n_equal_new;
    return MB_OK;
}

static int bdf_dense_degree(const mb_stepper *s)
{
    const bdf_state *st = cstate(s);
    return st->stepped ? st->k : 1;
}

/* y(theta) = sum_j D_j P_j(theta), P_0 = 1, P_j = P_{j-1} (theta + j - 2) / j */
static int bdf_dense(mb_stepper *s, double *C)
{
    bdf_work w = workspace(s);
    bdf_state *st = w.st;
    ptrdiff_t n = s->n;
    if (!st->stepped)
        return mb_fail(s, MB_ERR_ILL_INPUT, "bdf: dense output requested before any step.");
    int k = st->k;
    const double *D = w.D[st->buf];
    double P[KMAX + 1][KMAX + 1];
    memset(P, 0, sizeof P);
    P[0][0] = 1.0;
    for (int j = 1; j <= k; j++) {
        double a = (double)(j - 2);
        for (int m = 0; m <= j; m++) {
            double lo = m > 0 ? P[j - 1][m - 1] : 0.0;
            double hi = m < j ? P[j - 1][m] : 0.0;
            P[j][m] = (lo + a * hi) / (double)j;
        }
    }
    memcpy(C, w.v[V_YN], (size_t)n * sizeof(double));
    for (int m = 1; m <= k; m++) {
        double *Cm = C + m * n;
        for (ptrdiff_t i = 0; i < n; i++) {
            double acc = 0.0;
            for (int j = m; j <= k; j++)
                acc += P[j][m] * D[j * n + i];
            Cm[i] = acc;
        }
    }
    return MB_OK;
}

const mb_method mb_method_bdf = {
    .name = "bdf",
    .order = KMAX,
    .error_order = KMAX,
    .flags = MB_NEEDS_JAC | MB_EMBEDDED | MB_IMPLICIT | MB_VARIABLE_ORDER | MB_MASS | MB_DAE | MB_LINSYS_MASS |
             MB_LINSYS,
    .max_dense_degree = KMAX,
    .data = &mb_bdf_ndf,
    .work_size = bdf_work_size,
    .init = bdf_init,
    .step = bdf_step,
    .accept = bdf_accept,
    .after_step = bdf_after_step,
    .dense = bdf_dense,
    .dense_degree = bdf_dense_degree,
};
