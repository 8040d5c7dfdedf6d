/* The stacked stage system of implicit_rk.c and block_lstable.c and its simplified-Newton
 * solve (irk_newton.h). */
#include <complex.h>
#include <float.h>
#include <math.h>
#include <string.h>
#include "../linalg/dense.h" /* LU */
#include "../linalg/spectral.h" /* mb_schur */
#include "irk_newton.h"
#include "status.h"

static const double THETA_REUSE_JAC = 1e-3; /* RADAU5's THET */
enum { STAGEWISE_STEPS = 20, MIN_ITER_INDEX3 = 2 /* see newton() */ };

/* the stacked system's work; dense 0: without the s n x n stage Jacobians, the
 * s n x s n matrix and its pivots (the split through the problem's linsys) */
static void carve_stacked(mb_carver *c, int s, ptrdiff_t n, size_t dense, mb_irk_work *w)
{
    size_t nn = (size_t)n, N = (size_t)s * nn;
    w->J = mb_carve(c, dense * (size_t)s * nn * nn);
    w->E = mb_carve(c, dense * N * N);
    w->ipiv = mb_carve_int(c, dense * N);
    w->Z = mb_carve(c, N);
    w->F = mb_carve(c, N);
    w->dZ = mb_carve(c, N);
    w->yt = mb_carve(c, nn);
    w->v = mb_carve(c, nn);
}

void mb_irk_carve(mb_carver *c, int s, ptrdiff_t n, mb_irk_work *w)
{
    carve_stacked(c, s, n, 1, w);
    w->split = NULL;
}

double mb_irk_norm(const mb_stepper *s, int ns, const double *x, const double *y)
{
    ptrdiff_t n = s->n;
    double sum = 0.0;
    for (int i = 0; i < ns; i++) {
        double e = mb_norm(s, x + (ptrdiff_t)i * n, y, NULL);
        sum += e * e;
    }
    return sqrt(sum / ns);
}

/* ---- the Kronecker split (irk_newton.h: mb_irk_split) ---- */

_Static_assert(_Alignof(double complex) <= _Alignof(double), "double complex alignment");

void mb_irk_carve_split(mb_carver *c, int s, ptrdiff_t n, int dense, mb_irk_work *w,
                        mb_irk_split_work *sw)
{
    size_t nn = (size_t)n, N = (size_t)s * nn, d = dense ? 1 : 0;
    mb_irk_split_work count;
    if (!sw)
        sw = &count;  /* counting (c->base NULL) */
    carve_stacked(c, s, n, d, w);
    sw->E = mb_carve(c, d * (size_t)(s + 1) * nn * nn);  /* pairs: 2 n^2; s odd: + 1 */
    sw->ipiv = mb_carve_int(c, d * N);
    sw->W = mb_carve(c, N);
    sw->xi = mb_carve(c, nn);
    w->split = sw == &count ? NULL : sw;
}

/* an eigenvector of A (row-major s x s) for lambda by inverse iteration (shift lambda (1 +
 * 1e-10)), scaled so that its largest component is 1 */
static int eigvec(int s, const double *A, double complex lambda, double complex *v)
{
    double complex E[MB_IRK_SPLIT_MAX * MB_IRK_SPLIT_MAX], sh = lambda * (1.0 + 1e-10);
    int ip[MB_IRK_SPLIT_MAX];
    for (int i = 0; i < s; i++)
        for (int j = 0; j < s; j++)
            E[j * s + i] = A[i * s + j] - (i == j ? sh : 0.0);  /* column-major */
    if (mb_zlu_factor(s, E, s, ip) != MB_OK)
        return MB_ERR_LINALG;
    for (int i = 0; i < s; i++) v[i] = 1.0 + 0.1 * i;
    for (int it = 0; it < 4; it++) {
        if (mb_zlu_solve(s, E, s, ip, v, 1) != MB_OK)
            return MB_ERR_LINALG;
        int m = 0;
        for (int i = 1; i < s; i++) if (cabs(v[i]) > cabs(v[m])) m = i;
        double complex vm = v[m];
        if (!(cabs(vm) > 0.0) || !isfinite(cabs(vm)))
            return MB_ERR_LINALG;
        for (int i = 0; i < s; i++) v[i] /= vm;
    }
    return MB_OK;
}

/* T^{-1} (row-major) by LU; cond_inf and the residual of T Lambda T^{-1} against A */
static int split_check(int s, const double *A, mb_irk_split *sp)
{
    double X[MB_IRK_SPLIT_MAX * MB_IRK_SPLIT_MAX], L[MB_IRK_SPLIT_MAX * MB_IRK_SPLIT_MAX];
    int ip[MB_IRK_SPLIT_MAX];
    for (int i = 0; i < s * s; i++) X[i] = sp->T[i], sp->TI[i] = 0.0;  /* X = T^T col-major */
    for (int i = 0; i < s; i++) sp->TI[i * s + i] = 1.0;
    /* X holds T^T in column-major order, i.e. T row-major read as T^T: solve T^T Y = I,
     * then TI = Y^T, and Y column-major is TI row-major */
    if (mb_lu_factor(s, X, s, ip) != MB_OK || mb_lu_solve(s, X, s, ip, sp->TI, s) != MB_OK)
        return MB_ERR_LINALG;
    double nt = 0.0, ni = 0.0, na = 0.0, res = 0.0;
    for (int i = 0; i < s; i++) {
        double rt = 0.0, ri = 0.0;
        for (int j = 0; j < s; j++) {
            rt += fabs(sp->T[i * s + j]);
            ri += fabs(sp->TI[i * s + j]);
            na = fmax(na, fabs(A[i * s + j]));
        }
        nt = fmax(nt, rt);
        ni = fmax(ni, ri);
    }
    for (int i = 0; i < s * s; i++) L[i] = 0.0;
    for (int k = 0; k < sp->nb; k++) {
        int r = sp->row[k];
        L[r * s + r] = sp->lr[k];
        if (sp->size[k] == 2) {
            L[r * s + r + 1] = sp->li[k];
            L[(r + 1) * s + r] = -sp->li[k];
            L[(r + 1) * s + r + 1] = sp->lr[k];
        }
    }
    for (int i = 0; i < s; i++)
        for (int j = 0; j < s; j++) {
            double acc = 0.0;
            for (int a = 0; a < s; a++)
                for (int b = 0; b < s; b++)
                    acc += sp->T[i * s + a] * L[a * s + b] * sp->TI[b * s + j];
            res = fmax(res, fabs(acc - A[i * s + j]));
        }
    sp->cond = nt * ni;
    sp->resid = na > 0.0 ? res / na : INFINITY;
    return sp->cond <= 1e8 && sp->resid <= 1e-10 ? MB_OK : MB_ERR_LINALG;
}

int mb_irk_split_setup(int s, const double *A, mb_irk_split *sp)
{
    double S[MB_IRK_SPLIT_MAX * MB_IRK_SPLIT_MAX], Q[MB_IRK_SPLIT_MAX * MB_IRK_SPLIT_MAX];
    double wr[MB_IRK_SPLIT_MAX], wi[MB_IRK_SPLIT_MAX], work[1024];
    memset(sp, 0, sizeof *sp);
    sp->cond = sp->resid = INFINITY;
    if (s < 1 || s > MB_IRK_SPLIT_MAX || mb_spectral_work_size(s) > sizeof work)
        return MB_ERR_ILL_INPUT;
    sp->s = s;
    memcpy(S, A, (size_t)(s * s) * sizeof(double));  /* A^T: the same eigenvalues */
    if (mb_schur(s, S, s, Q, s, wr, wi, work) != MB_OK)
        return MB_ERR_LINALG;
    double amax = 0.0;
    for (int i = 0; i < s; i++) amax = fmax(amax, hypot(wr[i], wi[i]));
    for (int i = 0; i < s; i++)
        for (int j = 0; j < i; j++)  /* a repeated eigenvalue: no safe eigenvector basis */
            if (hypot(wr[i] - wr[j], wi[i] - wi[j]) <= 1e-8 * amax)
                return MB_ERR_LINALG;
    for (int i = 0; i < s; i++) {
        double complex v[MB_IRK_SPLIT_MAX];
        int pair = wi[i] != 0.0;
        if (pair && wi[i] < 0.0)
            continue;  /* the member with beta > 0 stands for the pair */
        if (!(hypot(wr[i], wi[i]) > 1e-12 * amax) || eigvec(s, A, wr[i] + I * wi[i], v) != MB_OK)
            return MB_ERR_LINALG;
        int k = sp->nb++, r = k == 0 ? 0 : sp->row[k - 1] + sp->size[k - 1];
        sp->row[k] = r;
        sp->size[k] = pair ? 2 : 1;
        sp->lr[k] = wr[i];
        sp->li[k] = pair ? wi[i] : 0.0;
        for (int l = 0; l < s; l++) {
            sp->T[l * s + r] = creal(v[l]);
            if (pair) sp->T[l * s + r + 1] = cimag(v[l]);
        }
    }
    return split_check(s, A, sp);
}

/* the coefficient a of block k for step h: 1 / (h lambda), 1 / (h (alpha - i beta)) */
static double complex split_a(const mb_irk_split *sp, int k, double h)
{
    return 1.0 / (h * (sp->lr[k] - I * sp->li[k]));
}

/* factor a M - J for every block (dense or the problem's linsys slot k); one nlu each */
static int split_factor(mb_stepper *s, const mb_irk_work *w, double h)
{
    mb_irk_split_work *sw = w->split;
    const mb_irk_split *sp = sw->sp;
    const double *M = s->p->mass;
    ptrdiff_t n = s->n;
    sw->active = 0;
    for (int k = 0; k < sp->nb; k++) {
        double complex a = split_a(sp, k, h);
        int rc;
        s->stats->nlu++;
        if (s->p->linsys) {
            rc = mb_linsys_factor(s, k, creal(a), sp->size[k] == 2 ? cimag(a) : 0.0);
        } else if (sp->size[k] == 1) {
            double *E = sw->E + (ptrdiff_t)sp->row[k] * n * n;
            for (ptrdiff_t c = 0; c < n; c++)
                for (ptrdiff_t r = 0; r < n; r++)
                    E[c * n + r] = creal(a) * (M ? M[c * n + r] : (double)(r == c)) - w->J[c * n + r];
            rc = mb_lu_factor(n, E, n, sw->ipiv + sp->row[k] * n);
        } else {
            double complex *E = (double complex *)(void *)(sw->E + (ptrdiff_t)sp->row[k] * n * n);
            for (ptrdiff_t c = 0; c < n; c++)
                for (ptrdiff_t r = 0; r < n; r++)
                    E[c * n + r] = a * (M ? M[c * n + r] : (double)(r == c)) - w->J[c * n + r];
            rc = mb_zlu_factor(n, E, n, sw->ipiv + sp->row[k] * n);
        }
        if (rc != MB_OK)
            return rc;
    }
    sw->active = 1;
    sw->h = h;
    return MB_OK;
}

/* x <- (I_s (x) M - h A (x) J)^{-1} x through the blocks (W = (T^{-1} (x) I) x, block
 * solves, x = (T (x) I) W) */
static int split_solve(mb_stepper *s, const mb_irk_work *w, double *x)
{
    mb_irk_split_work *sw = w->split;
    const mb_irk_split *sp = sw->sp;
    ptrdiff_t n = s->n;
    int ns = sp->s;
    double *W = sw->W;
    for (ptrdiff_t l = 0; l < n; l++)
        for (int i = 0; i < ns; i++) {
            double acc = 0.0;
            for (int j = 0; j < ns; j++) acc += sp->TI[i * ns + j] * x[j * n + l];
            W[i * n + l] = acc;
        }
    for (int k = 0; k < sp->nb; k++) {
        double complex a = split_a(sp, k, sw->h);
        double *u = W + (ptrdiff_t)sp->row[k] * n, *v = u + n;
        int rc;
        if (sp->size[k] == 1) {
            for (ptrdiff_t l = 0; l < n; l++) u[l] *= creal(a);
            rc = s->p->linsys ? mb_linsys_solve(s, k, u, NULL)
                              : mb_lu_solve(n, sw->E + (ptrdiff_t)sp->row[k] * n * n, n,
                                            sw->ipiv + sp->row[k] * n, u, 1);
        } else if (s->p->linsys) {
            for (ptrdiff_t l = 0; l < n; l++) {
                double complex g = a * (u[l] + I * v[l]);
                u[l] = creal(g);
                v[l] = cimag(g);
            }
            rc = mb_linsys_solve(s, k, u, v);
        } else {
            double complex *g = (double complex *)(void *)x;  /* x is free until the end */
            for (ptrdiff_t l = 0; l < n; l++) g[l] = a * (u[l] + I * v[l]);
            rc = mb_zlu_solve(n, (const double complex *)(const void *)(sw->E + (ptrdiff_t)sp->row[k] * n * n),
                              n, sw->ipiv + sp->row[k] * n, g, 1);
            for (ptrdiff_t l = 0; rc == MB_OK && l < n; l++) {
                u[l] = creal(g[l]);
                v[l] = cimag(g[l]);
            }
        }
        if (rc != MB_OK)
            return rc;
    }
    for (ptrdiff_t l = 0; l < n; l++)
        for (int i = 0; i < ns; i++) {
            double acc = 0.0;
            for (int j = 0; j < ns; j++) acc += sp->T[i * ns + j] * W[j * n + l];
            x[i * n + l] = acc;
        }
    return MB_OK;
}

/* x <- E^{-1} x with the factorization held: the split one, or the full LU in w->E */
static int stage_solve(mb_stepper *s, const mb_irk_system *sys, const mb_irk_work *w, double *x)
{
    ptrdiff_t N = (ptrdiff_t)sys->s * s->n;
    if (w->split && w->split->active)
        return split_solve(s, w, x);
    return mb_lu_solve(N, w->E, N, w->ipiv, x, 1);
}

/* E = I_s (x) M - h (A (x) I) diag(J_i): the one J (per_stage 0), or the stage Jacobians */
static int factor(mb_stepper *s, const mb_irk_system *sys, const mb_irk_work *w, double h,
                  int per_stage)
{
    if (w->split && w->split->sp && !per_stage)
        return split_factor(s, w, h);
    if (w->split)
        w->split->active = 0;
    s->stats->nlu++;
    return mb_newton_stage_factor(sys->s, s->n, s->p->mass, sys->A, h, w->J, per_stage, w->E,
                                  w->ipiv);
}

/* the stage Jacobians J_i = df/dy(t + c_i h, y + Z_i) at the Z in w->Z */
static int stage_jacobians(mb_stepper *s, const mb_irk_system *sys, const mb_irk_work *w,
                           double t, double h, const double *y)
{
    ptrdiff_t n = s->n;
    for (int i = 0; i < sys->s; i++) {
        for (ptrdiff_t l = 0; l < n; l++)
            w->yt[l] = y[l] + w->Z[i * n + l];
        int rc = mb_rhs_iterate(s, t + sys->c[i] * h, w->yt, w->F + i * n);
        if (rc == MB_OK)
            rc = mb_jac(s, t + sys->c[i] * h, w->yt, w->F + i * n, w->J + i * n * n);
        if (rc != MB_OK)
            return rc;
    }
    return MB_OK;
}

/* starting values: the last accepted step's interpolant u extrapolated,
 * Z_i = u(1 + c_i h / h_old) - u(1); zero on the first step */
static void start_values(mb_stepper *s, const mb_irk_system *sys, const mb_irk_state *st,
                         const mb_irk_work *w, double h)
{
    ptrdiff_t n = s->n;
    if (!st->poly_ok) {
        memset(w->Z, 0, (size_t)(sys->s * n) * sizeof(double));
        return;
    }
    for (int i = 0; i < sys->s; i++) {
        double sg = 1.0 + sys->c[i] * h / st->h_old, pk = 1.0;
        double *z = w->Z + (ptrdiff_t)i * n;
        memset(z, 0, (size_t)n * sizeof(double));
        for (int k = 1; k <= sys->degree; k++) {
            pk *= sg;
            const double *q = w->Q + (ptrdiff_t)(k - 1) * n;
            for (ptrdiff_t l = 0; l < n; l++)
                z[l] += (pk - 1.0) * q[l];
        }
    }
}

/* dZ = G(Z) = h d (x) w + h (A (x) I) F - (I (x) M) Z; returns its max-norm */
static double residual(mb_stepper *s, const mb_irk_system *sys, const mb_irk_work *w, double h)
{
    ptrdiff_t n = s->n, ns = sys->s;
    double gm = 0.0;
    for (ptrdiff_t i = 0; i < ns; i++) {
        double *g = w->dZ + i * n;
        mb_stepper_mass_apply(s, w->Z + i * n, w->v);
        for (ptrdiff_t l = 0; l < n; l++) {
            double acc = sys->d ? sys->d[i] * w->w[l] : 0.0;
            for (ptrdiff_t j = 0; j < ns; j++)
                acc += sys->A[i * ns + j] * w->F[j * n + l];
            g[l] = h * acc - w->v[l];
            gm = fmax(gm, fabs(g[l]));
        }
    }
    return gm;
}

/* Simplified Newton from the starting values (start) or the Z in w->Z.  *conv = 1 when
 * converged, *gmax the max-norm of the last residual.  Returns MB_OK or the code of a
 * failed f evaluation or solve. */
/* F_i = f(t + c_i h, y + Z_i) for every stage (the problem's iteration right-hand side
 * where the system asks for it); the first nonzero status */
static int stage_rhs(mb_stepper *s, const mb_irk_system *sys, const mb_irk_work *w, double t,
                     double h, const double *y)
{
    ptrdiff_t n = s->n;
    for (ptrdiff_t i = 0; i < sys->s; i++) {
        for (ptrdiff_t l = 0; l < n; l++)
            w->yt[l] = y[l] + w->Z[i * n + l];
        double ti = t + sys->c[i] * h;
        int rc = sys->iterate_rhs ? mb_rhs_iterate(s, ti, w->yt, w->F + i * n)
                                  : mb_rhs(s, ti, w->yt, w->F + i * n);
        if (rc != MB_OK)
            return rc;
    }
    return MB_OK;
}

static int has_index3(const mb_stepper *s);
static int newton(mb_stepper *s, const mb_irk_system *sys, mb_irk_state *st,
                  const mb_irk_work *w, double t, double h, const double *y, int start,
                  int *conv, double *gmax)
{
    ptrdiff_t n = s->n, N = (ptrdiff_t)sys->s * n;
    int min_iter = sys->min_iter;
    if (has_index3(s) && min_iter < MIN_ITER_INDEX3)
        min_iter = MIN_ITER_INDEX3;
    *conv = 0;
    *gmax = NAN;
    if (start)
        start_values(s, sys, st, w, h);
    mb_newton_begin(&st->nw);
    for (;;) {
        int rc = stage_rhs(s, sys, w, t, h, y);
        if (rc != MB_OK)
            return rc;
        *gmax = residual(s, sys, w, h);
        rc = stage_solve(s, sys, w, w->dZ);
        if (rc != MB_OK)
            return rc;
        int nc = mb_newton_check(&st->nw, mb_irk_norm(s, sys->s, w->dZ, y));
        if (nc == MB_NEWTON_FAILED)
            return MB_OK;
        for (ptrdiff_t k = 0; k < N; k++)
            w->Z[k] += w->dZ[k];
        /* the block methods, and every method on an index-3 DAE, ask for two iterations:
         * the rate theta of this solve, not the last one's, then bounds the error left (a
         * rate carried over let one iteration pass with the constraint residual at 1e3 x
         * the tolerance on the LS manipulator; with radau_iia4 on pendulum_chain(3),
         * h = 5e-3, one iteration at |dZ| = 0.14 passed on a carried eta = 0.12 and left
         * the positions 5e-5 off: see "Newton to round-off") */
        if (nc == MB_NEWTON_CONVERGED && st->nw.iter >= min_iter) {
            *conv = 1;
            return MB_OK;
        }
    }
}

/* The stage Jacobians' attempt starts from the extrapolated interpolant, else from the
 * last iterate when it is finite, else from zero (resume: from the last iterate, which
 * converged to the tolerance); then J_i there. */
static int stagewise_start(mb_stepper *s, const mb_irk_system *sys, mb_irk_state *st,
                           const mb_irk_work *w, double t, double h, const double *y,
                           int attempt, int resume)
{
    ptrdiff_t N = (ptrdiff_t)sys->s * s->n;
    if (!resume && st->poly_ok) {
        start_values(s, sys, st, w, h);
    } else if (!resume) {
        int finite = attempt > 0;
        for (ptrdiff_t k = 0; finite && k < N; k++)
            finite = isfinite(w->Z[k]);
        if (!finite)
            memset(w->Z, 0, (size_t)N * sizeof(double));
    }
    int rc = stage_jacobians(s, sys, w, t, h, y);
    if (rc != MB_OK)
        return rc;
    st->lu_ok = 0;
    st->jr.need = 1;  /* the single J is due again afterwards */
    return MB_OK;
}

/* ---- Newton to round-off on an index-3 DAE ----
 *
 * The position constraint 0 = Phi(q) of a mechanism's index-3 form is an equation the
 * discrete solution satisfies exactly: what Newton leaves in it is not an error of the
 * method but a residual, amplified by the index into the velocities (1/h) and the
 * multipliers (1/h^2).  Newton's test at newton_tol in the run's norm cannot see it:
 * RADAU5's scaling (mb_norm) weighs the index-2 and index-3 components by h and h^2,
 * and the positions pass at a fraction of atol + rtol |q| -- on the LS manipulator
 * (index 3, h = 0.01, the default tolerances of a fixed-step run) Phi stayed at 5e-9
 * where the paper's converged Newton holds 2.8e-15 (LS Table 4).  A test of the whole
 * iterate at round-off cannot serve: components near zero weighed by atol (a velocity
 * through 0) have a noise floor far above eps / rtol in that norm.  So on a problem with
 * index-3 components, after the test at the tolerance, Newton goes on ("polishing")
 * with the corrections of the index-1 components alone (the positions, the arguments of
 * Phi) until the error left in them, the last correction times theta / (1 - theta), is
 * within POLISH_ULPS ulps of their largest stage value: usually one iteration more.
 * When the positions' rate exceeds THETA_POLISH (a J kept across steps, or J changing
 * within the step) the polishing goes on from its last iterate with a fresh J, then
 * with the stage Jacobians, each judged by its own rate (its first correction is not
 * compared with the last J's).  When it stalls with the stage Jacobians too, the
 * iterate is not converged and the attempt fails (MB_IRK_NO_CONV: a fixed step then
 * ends the run with the message), unless its positions' correction is within
 * POLISH_FLOOR_ULPS ulps of their largest stage value: the noise of f, not an error
 * (the one such stall in tests/test_dae.py, test_block*.py, test_demo_ls.py,
 * test_formulations.py, test_simulate.py, test_spatial.py: lstable_block, adaptive,
 * at 21 ulps).
 *
 * Why the test at the tolerance does not suffice.  The positions' stage rows are
 * linear, so their Newton error is h times the velocities' one; a velocity left off by
 * dv at every step moves the positions by dv per unit time, and the norm's weight h on
 * the velocities lets dv reach kappa (atol + rtol |v|) / h: the global error then
 * grows as h shrinks.  Measured with radau_iia4 on pendulum_chain(3), index 3, default
 * rtol 1e-3, t in [0, 1]: accepting the iterate "converged to the tolerance" after a
 * stalled polish (as this code did) gave 2.7e-2, 7.1e-2, 7.4e-3 at h = 1e-2, 5e-3,
 * 2e-3 with status 0 (the error entered at single steps: 2.8e-12 at t = 0.505, 2.6e-6
 * at t = 0.51); radau_ia4 8.4e-2 at h = 5e-3.  Now 2.5e-9, 3.4e-12, 4.3e-11, the values
 * of a run at rtol 1e-10 (tests/test_irk_index3.py); two Newton iterations (newton())
 * alone gave 9.0e-6 at h = 1e-2.  The first correction of the stage Jacobians (exact
 * block matrix) from a stalled iterate is of the size of the one it stalled at, so its
 * ratio to the last J's correction (0.54 -> 0.56 at t = 0.505 above) said nothing about
 * the new J; judged by a rate of its own the polish reached round-off at every one of
 * the 5 steps (radau_iia4, h = 1e-2; radau_iia3: 9) where the kept J stalled.
 * Index-1/2 problems and ODEs take the path they took before. */
static const double POLISH_ULPS = 4.0;
static const double THETA_POLISH = 0.5;
static const double POLISH_FLOOR_ULPS = 64.0;
enum { POLISH_MAX_ITER = 10 };

static int has_index3(const mb_stepper *s)
{
    const unsigned char *ix = s->p->dae_index;
    for (ptrdiff_t i = 0; ix && i < s->n; i++)
        if (ix[i] >= 3)
            return 1;
    return 0;
}

/* the largest correction of the index-1 components in w->dZ (*d) and the largest of
 * their stage values (*ymax) */
static void position_scale(const mb_stepper *s, const mb_irk_system *sys,
                           const mb_irk_work *w, const double *y, double *d, double *ymax)
{
    ptrdiff_t n = s->n;
    const unsigned char *ix = s->p->dae_index;
    *d = *ymax = 0.0;
    for (ptrdiff_t i = 0; i < sys->s; i++)
        for (ptrdiff_t l = 0; l < n; l++) {
            if (ix[l] != 1)
                continue;
            *d = fmax(*d, fabs(w->dZ[i * n + l]));
            *ymax = fmax(*ymax, fabs(y[l] + w->Z[i * n + l]));
        }
}

/* the error left after a positions' correction d at the rate theta (0: unknown) is
 * round-off */
static int polished(double d, double theta, double ymax)
{
    double eta = theta > 0.0 ? theta / (1.0 - theta) : 1.0;
    return eta * d <= POLISH_ULPS * DBL_EPSILON * ymax;
}

/* Polishing iterations from the iterate in w->Z (last positions' correction *d_prev,
 * updated; 0: none with this J yet) with the factored matrix in w->E.  *d_err: the last
 * positions' correction computed (applied or not), *ymax their scale.  Returns 1 when
 * they stalled (the iterate kept is the last one that improved), 0 when the positions
 * reached round-off, or the code of a failed solve. */
static int polish(mb_stepper *s, const mb_irk_system *sys, const mb_irk_work *w, double t,
                  double h, const double *y, double *d_prev, double *rate, double *d_err,
                  double *ymax)
{
    ptrdiff_t n = s->n, N = (ptrdiff_t)sys->s * n;
    for (int it = 0; it < POLISH_MAX_ITER; it++) {
        int rc = stage_rhs(s, sys, w, t, h, y);
        if (rc < 0)
            return rc;
        if (rc > 0) {
            *d_err = INFINITY;  /* f not finite at the iterate: no estimate */
            return 1;
        }
        residual(s, sys, w, h);
        rc = stage_solve(s, sys, w, w->dZ);
        if (rc != MB_OK)
            return rc;
        double d;
        position_scale(s, sys, w, y, &d, ymax);
        *d_err = d;
        double theta = *d_prev > 0.0 ? d / *d_prev : 0.0;
        *rate = fmax(*rate, theta);
        int stalled = !(theta <= THETA_POLISH);
        if (stalled && !polished(d, 0.0, *ymax))
            return 1;
        for (ptrdiff_t k = 0; k < N; k++)
            w->Z[k] += w->dZ[k];
        *d_prev = d;
        if (polished(d, stalled ? 0.0 : theta, *ymax))
            return 0;
    }
    return 1;
}

int mb_irk_solve(mb_stepper *s, const mb_irk_system *sys, mb_irk_state *st,
                 const mb_irk_work *w, double t, double h, const double *y, int *why,
                 double *gmax)
{
    int rc, conv = 0, resume = 0, index3 = has_index3(s);
    double d_pos = 0.0, rate = 0.0;  /* the positions' last correction and rate (polishing) */
    *why = 0;
    *gmax = NAN;
    /* attempts: the one J (kept across steps), a fresh one at (t, y), the stage Jacobians;
     * on an index-3 problem the polishing of a converged iterate resumes in the next */
    int last = s->p->linsys ? 1 : 2;  /* no stage Jacobians with the problem's linsys */
    for (int attempt = st->stagewise > 0 ? 2 : 0; attempt <= last; attempt++) {
        int per_stage = attempt == 2;
        if (per_stage) {
            if ((rc = stagewise_start(s, sys, st, w, t, h, y, attempt, resume)) != MB_OK)
                return rc;
        } else {
            int jac_new;
            if (attempt == 1 && st->jr.fresh)
                continue;  /* J at (t, y) already failed */
            if (attempt == 1)
                st->jr.need = 1;
            if ((rc = mb_jac_refresh(s, &st->jr, t, y, s->f0, w->J, &jac_new)) != MB_OK)
                return rc;
            if (jac_new)
                st->lu_ok = 0;
        }
        /* h of a fixed-step run varies in its last bits (t0 + k h - t) */
        if (per_stage || !st->lu_ok || fabs(h - st->h_lu) > 1e-12 * fabs(h)) {
            st->lu_ok = 0;
            if (factor(s, sys, w, h, per_stage) != MB_OK) {
                s->h_fail_factor = 0.5;
                *why = MB_IRK_SINGULAR;
                return MB_RECOVERABLE;  /* singular iteration matrix: smaller h */
            }
            if (!per_stage) {
                st->lu_ok = 1;
                st->h_lu = h;
            }
        }
        int resumed = resume;
        if (!resumed && (rc = newton(s, sys, st, w, t, h, y, !per_stage, &conv, gmax)) != MB_OK)
            return rc;
        if (conv && index3) {
            int stalled = 1;
            double ymax = 0.0, d_err = NAN;
            if (!resumed) {
                position_scale(s, sys, w, y, &d_pos, &ymax);
                d_err = d_pos;
                stalled = !polished(d_pos, st->nw.theta, ymax);
            } else {
                d_pos = 0.0;  /* a new J: its own rate, not one against the last J's */
            }
            if (stalled &&
                (stalled = polish(s, sys, w, t, h, y, &d_pos, &rate, &d_err, &ymax)) < 0)
                return stalled;
            if (stalled && !per_stage && attempt < last) {
                resume = 1;  /* on from this iterate with the next J */
                continue;
            }
            if (stalled && !(d_err <= POLISH_FLOOR_ULPS * DBL_EPSILON * ymax))
                conv = 0;  /* not converged: see "Newton to round-off" */
            else if (resumed)
                break;  /* a polishing attempt, not one after a convergence failure */
        }
        if (conv) {
            if (per_stage)
                st->stagewise = st->stagewise > 0 ? st->stagewise - 1 : STAGEWISE_STEPS;
            break;
        }
        if (per_stage)
            st->stagewise = 0;
    }
    if (!conv) {
        st->jr.need = 1;
        s->h_fail_factor = 0.5;
        *why = MB_IRK_NO_CONV;
        return MB_RECOVERABLE;
    }
    if (st->stagewise == 0) {
        int slow = (st->nw.iter > 2 || rate > 0.0) &&
                   fmax(st->nw.theta, rate) > THETA_REUSE_JAC;
        st->jr.need = sys->keep_need ? st->jr.need || slow : slow;
    }
    return MB_OK;
}

int mb_irk_accepted(mb_stepper *s, mb_irk_state *st, double t_new)
{
    st->jr.fresh = 0;
    double t_end = s->t_last + s->h_last;
    st->poly_ok = fabs(t_new - t_end) <= 4.0 * DBL_EPSILON * (fabs(t_end) + fabs(s->h_last));
    if (st->poly_ok)
        st->h_old = s->h_last;
    return st->poly_ok;
}
