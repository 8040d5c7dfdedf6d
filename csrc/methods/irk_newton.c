/* The stacked stage system of implicit_rk.c and block_lstable.c and its simplified-Newton
 * solve (irk_newton.h). */
#include <float.h>
#include <math.h>
#include <string.h>
#include "../linalg/dense.h" /* LU */
#include "irk_newton.h"
#include "status.h"

static const double THETA_REUSE_JAC = 1e-3; /* RADAU5's THET */
enum { STAGEWISE_STEPS = 20 };

void mb_irk_carve(mb_carver *c, int s, ptrdiff_t n, mb_irk_work *w)
{
    size_t nn = (size_t)n, N = (size_t)s * nn;
    w->J = mb_carve(c, (size_t)s * nn * nn);
    w->E = mb_carve(c, N * N);
    w->ipiv = mb_carve_int(c, N);
    w->Z = mb_carve(c, N);
    w->F = mb_carve(c, N);
    w->dZ = mb_carve(c, N);
    w->yt = mb_carve(c, nn);
    w->v = mb_carve(c, nn);
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

/* E = I_s (x) M - h (A (x) I) diag(J_i): the one J (per_stage 0), or the stage Jacobians */
static int factor(mb_stepper *s, const mb_irk_system *sys, const mb_irk_work *w, double h,
                  int per_stage)
{
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
        mb_mass_apply(n, s->p->mass, w->Z + i * n, w->v);
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
static int newton(mb_stepper *s, const mb_irk_system *sys, mb_irk_state *st,
                  const mb_irk_work *w, double t, double h, const double *y, int start,
                  int *conv, double *gmax)
{
    ptrdiff_t n = s->n, N = (ptrdiff_t)sys->s * n;
    *conv = 0;
    *gmax = NAN;
    if (start)
        start_values(s, sys, st, w, h);
    mb_newton_begin(&st->nw);
    for (;;) {
        for (ptrdiff_t i = 0; i < sys->s; i++) {
            for (ptrdiff_t l = 0; l < n; l++)
                w->yt[l] = y[l] + w->Z[i * n + l];
            double ti = t + sys->c[i] * h;
            int rc = sys->iterate_rhs ? mb_rhs_iterate(s, ti, w->yt, w->F + i * n)
                                      : mb_rhs(s, ti, w->yt, w->F + i * n);
            if (rc != MB_OK)
                return rc;
        }
        *gmax = residual(s, sys, w, h);
        int rc = mb_lu_solve(N, w->E, N, w->ipiv, w->dZ, 1);
        if (rc != MB_OK)
            return rc;
        int nc = mb_newton_check(&st->nw, mb_irk_norm(s, sys->s, w->dZ, y));
        if (nc == MB_NEWTON_FAILED)
            return MB_OK;
        for (ptrdiff_t k = 0; k < N; k++)
            w->Z[k] += w->dZ[k];
        /* the block methods ask for two iterations: the rate theta of this solve, not the
         * last one's, then bounds the error left (a rate carried over let one iteration
         * pass with the constraint residual at 1e3 x the tolerance on the LS manipulator) */
        if (nc == MB_NEWTON_CONVERGED && st->nw.iter >= sys->min_iter) {
            *conv = 1;
            return MB_OK;
        }
    }
}

/* The stage Jacobians' attempt starts from the extrapolated interpolant, else from the
 * last iterate when it is finite, else from zero; then J_i there. */
static int stagewise_start(mb_stepper *s, const mb_irk_system *sys, mb_irk_state *st,
                           const mb_irk_work *w, double t, double h, const double *y,
                           int attempt)
{
    ptrdiff_t N = (ptrdiff_t)sys->s * s->n;
    if (st->poly_ok) {
        start_values(s, sys, st, w, h);
    } else {
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

int mb_irk_solve(mb_stepper *s, const mb_irk_system *sys, mb_irk_state *st,
                 const mb_irk_work *w, double t, double h, const double *y, int *why,
                 double *gmax)
{
    int rc, conv = 0;
    *why = 0;
    *gmax = NAN;
    /* attempts: the one J (kept across steps), a fresh one at (t, y), the stage Jacobians */
    for (int attempt = st->stagewise > 0 ? 2 : 0; attempt < 3; attempt++) {
        int per_stage = attempt == 2;
        if (per_stage) {
            if ((rc = stagewise_start(s, sys, st, w, t, h, y, attempt)) != MB_OK)
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
        if ((rc = newton(s, sys, st, w, t, h, y, !per_stage, &conv, gmax)) != MB_OK)
            return rc;
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
        int slow = st->nw.iter > 2 && st->nw.theta > THETA_REUSE_JAC;
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
