/* The singular-perturbation multirate scheme (SP paper: Gil, Sanfelice, Nikravesh,
 * "Numerical Integration Scheme Using Singular Perturbation Method", DETC2013).
 *
 * y = (x, z): slow x (nx components) and fast z (m components, mb_sp_options),
 * x' = f(t, x, z), z' = g(t, x, z).  One step from (t_n, x_n, z_n), with
 * F = f(t_n, y_n), G = g(t_n, y_n) and the Jacobian blocks f_x, f_z, g_x, g_z at y_n:
 *
 * Linearized slow manifold (eq 22; g_t, absent from the paper, enters as g_x does):
 *   H(tau, x) = z_n - sigma - P (x - x_n) - c tau,
 *   sigma = g_z^-1 G,  P = g_z^-1 g_x,  c = g_z^-1 g_t      (eqs 26-27, 32).
 * Step 1 (eqs 31-33, 43-44): y~' = g_z y~ + gamma, y~(0) = sigma, gamma = P F + c.
 *   With v = y~ - sigma, v' = g_z v + b1, b1 = G + gamma (g_z sigma = G), so
 *   int_0^h y~ = h sigma + h^2 phi_2(h g_z) b1.  The paper's eq 34 exponentiates a
 *   (2m+1) x (2m+1) matrix [[0, I, 0], [0, g_z, gamma], [0, 0, 0]] and applies it to
 *   sigma; the same integral comes from the (m+2) x (m+2) matrix of phi.h with
 *   V = [h b1, 0] (also: eq 36 prints G_1(t) = t I, which is int_0^t e^{g_z s} ds).
 * Step 2 (eqs 28-30, 45): RK4 on x' = f(t, x, H(t - t_n, x)) from x_n gives x^;
 *   x_{n+1} = x^ + f_z int_0^h y~.
 * Step 3 (eqs 38-42, 46-47): y' = A y + u(tau), y(0) = sigma, A = g_z + P f_z,
 *   u(tau) = P [(1 - tau/h) K1 + (tau/h) K5] + c with K1 = f(x_n, H(x_n)) (the first
 *   RK4 stage) and K5 = f(x_{n+1}, H(x_{n+1})).  With w = y - sigma,
 *   w' = A w + B0 + B1 tau, B0 = A sigma + P K1 + c, B1 = P (K5 - K1) / h:
 *   w(h) = h phi_1(hA) B0 + h^2 phi_2(hA) B1 (phi.h, V = [h^2 B1, h B0, ...]).  Eq 47
 *   prints the block matrix as [[A, B, C], [0, 0, 1], [0, 0, 0]] with B the constant
 *   and C the slope; Van Loan's theorem puts the slope in the middle column and the
 *   constant in the last (the paper's own eqs 55-57 follow the latter).
 *   z_{n+1} = H(h, x_{n+1}) + y(h) = z_n - P (x_{n+1} - x_n) - c h + w(h)   (eq 46).
 * The scheme is first order (local error O(h^2) while h |lambda_f| << 1, O(h) for
 * h |lambda_f| >> 1; stability: mbint.stability.sp_*).
 *
 * Error estimate (not in the paper), for rtol/atol.  On the linear test equation of
 * eq 50 the leading local error is the coupling the superposition of eq 30 leaves
 * out: the correction D = f_z int y~ of x also moves x along the slow dynamics
 * S = f_x - f_z P within the step (about -(h/2) S D), and y~ ignores the feedback
 * f_z y that step 3 includes.  The estimate of x adds
 *   f_z (int y - int y~)             step 3's y against step 1's y~ (the integral of
 *                                     w comes with the same exponential, p = 3),
 *   -(h/2) S D                        the coupling,
 *   (h/6) (K4 - K5 + S D)             embedded RK4(3) with stage 5 at x^ (b^ = (1/6,
 *                                     1/3, 1/3, 0, 1/6), order 3),
 *   (h/3) r_x                         the residual of eq 28 at t_{n+1}, r_x =
 *                                     f(y_{n+1}) - K5 - f_z y(h) (the superposition),
 * and the estimate of z is -P e_x (z_{n+1} follows x_{n+1} through H) plus the LLM
 * local error (LLM eqs 29-33) of the fast linearization:
 *   l = int_0^h e^{g_z (h - u)} r_z u^2 / h^2 du = 2 h phi_3(h g_z) r_z,
 *   r_z = g(y_{n+1}) - [G + g_x (x_{n+1} - x_n) + g_z (z_{n+1} - z_n) + g_t h].
 * Checked against the exact local error in tests/test_singular_perturbation.py.
 *
 * Work per step: the Jacobian, g_t (mb_dfdt, when the fast block has one) and the
 * LU of g_z once per (t_n, y_n) (a rejected step retried from the same point reuses
 * them, as llm.c does); 4 + 1 evaluations of f for the RK4 stages and K5, f(y_{n+1})
 * (the next step's f0); two exponentials of size m + 2 and m + 3 (m + 2 in a
 * fixed-step run) and, with an error estimate, one more of size m + 3.  Nothing of
 * size n is exponentiated.  A singular g_z is a recoverable failure (a smaller step;
 * a fixed-step run stops with the message).
 *
 * Continuous output (dense record): x by the cubic Hermite interpolant of (x_n, F,
 * x_{n+1}, f_x(y_{n+1})), z(tau) = z_n - P (x(tau) - x_n) - c tau + w(tau) with w
 * from step 3's linear model, exact at tau = h.
 */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include "carve.h"
#include "singular_perturbation.h"
#include "dense.h"
#include "phi.h"
#include "spectral.h"
#include "status.h"

/* ---- the split ---- */

int mb_sp_check_split(ptrdiff_t n, ptrdiff_t n_fast, const ptrdiff_t *fast, char *msg,
                      size_t msg_len)
{
#define BAD(...) do { if (msg && msg_len) snprintf(msg, msg_len, __VA_ARGS__); \
                      return MB_ERR_ILL_INPUT; } while (0)
    for (ptrdiff_t a = 0; a < n_fast; a++) {
        if (fast[a] < 0 || fast[a] >= n)
            BAD("fast: index %td is out of range for a state of %td components.", fast[a], n);
        for (ptrdiff_t b = 0; b < a; b++)
            if (fast[b] == fast[a])
                BAD("fast: index %td is given twice.", fast[a]);
    }
    if (n_fast <= 0)
        BAD("fast: no fast variable given; the scheme needs at least one fast and one slow "
            "variable.");
    if (n_fast >= n)
        BAD("fast: %td indices for a state of %td components; at least one variable must "
            "be slow.", n_fast, n);
    return MB_OK;
#undef BAD
}

/* the work of mb_sp_propose: the Schur form T and vectors Q (n^2 each), the sorted
 * moduli (n), the selection (n ints), the spectral work */
typedef struct propose_work {
    double *T, *Q, *mu, *swork;
    int *sel;
} propose_work;

/* The one layout of the work: counts it (c->base NULL) and carves it. */
static size_t propose_layout(mb_carver *c, ptrdiff_t n, propose_work *w)
{
    size_t nn = (size_t)n;
    w->T = mb_carve(c, nn * nn);
    w->Q = mb_carve(c, nn * nn);
    w->mu = mb_carve(c, nn);
    w->sel = mb_carve_int(c, nn);
    w->swork = mb_carve(c, mb_spectral_work_size(n));
    return c->off;
}

size_t mb_sp_propose_work_size(ptrdiff_t n)
{
    propose_work w;
    return propose_layout(&(mb_carver){NULL, 0}, n > 0 ? n : 1, &w);
}

int mb_sp_propose(ptrdiff_t n, const double *J, ptrdiff_t ldj, double min_ratio,
                  ptrdiff_t *fast, ptrdiff_t *m, double *part, double *wr, double *wi,
                  double *ratio, double *threshold, double *work)
{
    *m = 0;
    *ratio = 0.0;
    *threshold = 0.0;
    if (n < 0 || ldj < (n > 0 ? n : 1) || !(min_ratio >= 1.0))
        return MB_ERR_ILL_INPUT;
    if (n == 0)
        return MB_OK;
    propose_work pw;
    propose_layout(&(mb_carver){work, 0}, n, &pw);
    double *T = pw.T, *Q = pw.Q, *mu = pw.mu, *swork = pw.swork;
    int *sel = pw.sel;
    for (ptrdiff_t j = 0; j < n; j++)
        memcpy(T + j * n, J + j * ldj, (size_t)n * sizeof(double));
    int rc = mb_schur(n, T, n, Q, n, wr, wi, swork);
    if (rc != MB_OK)
        return rc;
    for (ptrdiff_t i = 0; i < n; i++) {
        part[i] = 0.0;
        mu[i] = hypot(wr[i], wi[i]);
    }
    /* sort the moduli decreasing (insertion sort: n is small) */
    for (ptrdiff_t i = 1; i < n; i++) {
        double v = mu[i];
        ptrdiff_t j = i;
        for (; j > 0 && mu[j - 1] < v; j--)
            mu[j] = mu[j - 1];
        mu[j] = v;
    }
    if (!(mu[0] > 0.0) || n < 2)
        return MB_OK;
    double floor_ = MB_SP_FLOOR * mu[0], best = 0.0, thr = 0.0;
    for (ptrdiff_t k = 0; k + 1 < n; k++) {
        double r = mu[k] / fmax(mu[k + 1], floor_);
        if (r > best) {
            best = r;
            thr = mu[k];
        }
    }
    *ratio = best;
    *threshold = thr;
    if (best < min_ratio)
        return MB_OK;
    for (ptrdiff_t i = 0; i < n; i++)
        sel[i] = hypot(wr[i], wi[i]) >= thr;
    ptrdiff_t k = 0;
    if ((rc = mb_projector_diag(n, T, n, Q, n, sel, wr, wi, part, &k, swork)) != MB_OK)
        return rc;
    ptrdiff_t cnt = 0;
    for (ptrdiff_t i = 0; i < n; i++)
        if (part[i] > 0.5)
            fast[cnt++] = i;
    *m = (cnt == n) ? 0 : cnt;
    return MB_OK;
}

/* ---- workspace ---- */

typedef struct sp_state {
    int lin;         /* linearization at (tJ, yJ): 0 none, LIN_OK, LIN_SINGULAR (g_z) */
    int split_ok;    /* F, S, m, nx are set */
    int autonomous;  /* g_t = 0 */
    int msg_set;     /* a recoverable failure wrote s->msg: clear it once a step is accepted */
    int have_step;   /* a step was computed (for the dense record) */
    ptrdiff_t m, nx; /* fast and slow sizes */
    double tJ;
} sp_state;

typedef struct sp_ws {
    sp_state *st;
    ptrdiff_t *F, *S;             /* fast and slow indices (m, nx used) */
    int *ipiv;                    /* pivots of the LU of g_z */
    /* the linearization at (tJ, yJ); fJ = f(tJ, yJ) */
    double *yJ, *fJ, *J, *ft;     /* n, n, n^2, n */
    double *Gz, *LU, *P, *A, *Fz, *Fx; /* m x m, m x m, m x nx, m x m, nx x m, nx x nx */
    double *sig, *ct, *b1;        /* m */
    /* step vectors */
    double *x0, *z0, *K1, *K2, *K3, *K4, *K5, *X, *yt, *ftmp;
    double *inty, *inty3, *D, *B0, *B1, *w, *ex, *ez, *t1, *t2;
    double *y1, *f1;              /* y_{n+1}, f(y_{n+1}) of the last step (dense record) */
    double *V, *W;                /* n x 3 each */
    double *phiwork;
    double *part, *wr, *wi, *pwork; /* the proposal */
} sp_ws;

enum { LIN_OK = 1, LIN_SINGULAR = 2 };

/* The one layout of the workspace: counts it (c->base NULL) and carves it. */
static size_t layout(mb_carver *c, ptrdiff_t n, sp_ws *w)
{
    size_t nn = (size_t)n;
    w->st = mb_carve_bytes(c, sizeof *w->st);
    w->F = mb_carve_index(c, nn);
    w->S = mb_carve_index(c, nn);
    w->ipiv = mb_carve_int(c, nn);
    double **vec[] = {&w->yJ, &w->fJ, &w->ft, &w->sig, &w->ct, &w->b1, &w->x0, &w->z0,
                      &w->K1, &w->K2, &w->K3, &w->K4, &w->K5, &w->X, &w->yt, &w->ftmp,
                      &w->inty, &w->inty3, &w->D, &w->B0, &w->B1, &w->w, &w->ex, &w->ez,
                      &w->t1, &w->t2, &w->y1, &w->f1, &w->part, &w->wr, &w->wi};
    for (size_t k = 0; k < sizeof vec / sizeof vec[0]; k++)
        *vec[k] = mb_carve(c, nn);
    double **mat[] = {&w->J, &w->Gz, &w->LU, &w->P, &w->A, &w->Fz, &w->Fx};
    for (size_t k = 0; k < sizeof mat / sizeof mat[0]; k++)
        *mat[k] = mb_carve(c, nn * nn);
    w->V = mb_carve(c, 3 * nn);
    w->W = mb_carve(c, 3 * nn);
    w->phiwork = mb_carve(c, mb_phi_work_size(n, 3));
    w->pwork = mb_carve(c, mb_sp_propose_work_size(n));
    return c->off;
}

static size_t sp_work_size(const mb_problem *p, const void *data)
{
    (void)data;
    sp_ws w;
    return layout(&(mb_carver){NULL, 0}, p->n, &w);
}

static void carve(mb_stepper *s, sp_ws *w)
{
    layout(&(mb_carver){s->work, 0}, s->n, w);
}

/* ---- the linearization at (t, y) ---- */

static int sp_set_split(mb_stepper *s, sp_ws *w, const double *J)
{
    sp_state *st = w->st;
    ptrdiff_t n = s->n, m = 0;
    const mb_sp_options *o = s->method_options;
    if (!o) {
        m = 0;
    } else if (o->n_fast != MB_SP_PROPOSE) {
        m = o->n_fast;
        memcpy(w->F, o->fast, (size_t)m * sizeof(ptrdiff_t));
    } else {
        double ratio, thr;
        int rc = mb_sp_propose(n, J, n, MB_SP_MIN_RATIO, w->F, &m, w->part, w->wr, w->wi,
                               &ratio, &thr, w->pwork);
        if (rc != MB_OK)
            return mb_fail(s, rc, "singular_perturbation: the proposal of the fast variables "
                           "failed (Schur form of the Jacobian).");
    }
    /* slow = the complement, increasing; fast sorted increasing too */
    for (ptrdiff_t i = 1; i < m; i++) {
        ptrdiff_t v = w->F[i], j = i;
        for (; j > 0 && w->F[j - 1] > v; j--)
            w->F[j] = w->F[j - 1];
        w->F[j] = v;
    }
    ptrdiff_t a = 0, nx = 0;
    for (ptrdiff_t i = 0; i < n; i++) {
        if (a < m && w->F[a] == i)
            a++;
        else
            w->S[nx++] = i;
    }
    st->m = m;
    st->nx = nx;
    st->split_ok = 1;
    return MB_OK;
}

/* g_z singular: a recoverable failure, with a message (cleared when a later step is
 * accepted; it stays when the run ends here: a fixed step, or h too small) */
static int singular_gz(mb_stepper *s, sp_ws *w, double t)
{
    if (s->msg && s->msg[0] == '\0') {
        mb_fail(s, MB_RECOVERABLE, "singular_perturbation: the fast block g_z = dg/dz of the "
                "Jacobian is singular at t = %.17g; the scheme needs an invertible g_z (a fast "
                "variable that nothing pulls back, such as a free rotation, makes it "
                "singular; see fast=).", t);
        w->st->msg_set = 1;
    }
    return MB_RECOVERABLE;
}

static int sp_linearize(mb_stepper *s, sp_ws *w, double t, const double *y)
{
    sp_state *st = w->st;
    ptrdiff_t n = s->n;
    int rc;
    st->lin = 0;
    /* no fast variables (no options): no Jacobian needed */
    if (s->method_options && (rc = mb_jac(s, t, y, s->f0, w->J)) != MB_OK)
        return rc;
    if (!st->split_ok && (rc = sp_set_split(s, w, w->J)) != MB_OK)
        return rc;
    ptrdiff_t m = st->m, nx = st->nx;
    const ptrdiff_t *F = w->F, *S = w->S;
    const double *J = w->J;
    memcpy(w->yJ, y, (size_t)n * sizeof(double));
    memcpy(w->fJ, s->f0, (size_t)n * sizeof(double));
    st->tJ = t;
    if (m == 0) {
        st->lin = LIN_OK;
        return MB_OK;
    }
    if ((rc = mb_dfdt(s, t, y, s->f0, w->ft)) != MB_OK)
        return rc;
    st->autonomous = 1;
    for (ptrdiff_t a = 0; a < m; a++)
        if (w->ft[F[a]] != 0.0)
            st->autonomous = 0;
    /* blocks: Gz (m x m), g_x into P (m x nx), Fz (nx x m), Fx (nx x nx) */
    double gmax = 0.0;
    for (ptrdiff_t b = 0; b < m; b++)
        for (ptrdiff_t a = 0; a < m; a++) {
            double v = J[F[b] * n + F[a]];
            w->Gz[b * m + a] = v;
            w->LU[b * m + a] = v;
            gmax = fmax(gmax, fabs(v));
        }
    for (ptrdiff_t b = 0; b < nx; b++)
        for (ptrdiff_t a = 0; a < m; a++)
            w->P[b * m + a] = J[S[b] * n + F[a]];
    for (ptrdiff_t b = 0; b < m; b++)
        for (ptrdiff_t a = 0; a < nx; a++)
            w->Fz[b * nx + a] = J[F[b] * n + S[a]];
    for (ptrdiff_t b = 0; b < nx; b++)
        for (ptrdiff_t a = 0; a < nx; a++)
            w->Fx[b * nx + a] = J[S[b] * n + S[a]];
    s->stats->nlu++;
    rc = mb_lu_factor(m, w->LU, m, w->ipiv);
    double umin = INFINITY;
    for (ptrdiff_t a = 0; rc == MB_OK && a < m; a++)
        umin = fmin(umin, fabs(w->LU[a * m + a]));
    if (rc != MB_OK || !(umin > 64.0 * (double)m * DBL_EPSILON * gmax)) {
        st->lin = LIN_SINGULAR;  /* a retry from this point fails without a new J */
        return singular_gz(s, w, t);
    }
    /* sigma = g_z^-1 G, c = g_z^-1 g_t, P = g_z^-1 g_x */
    for (ptrdiff_t a = 0; a < m; a++) {
        w->sig[a] = s->f0[F[a]];
        w->ct[a] = st->autonomous ? 0.0 : w->ft[F[a]];
    }
    if ((rc = mb_lu_solve(m, w->LU, m, w->ipiv, w->sig, 1)) != MB_OK ||
        (!st->autonomous && (rc = mb_lu_solve(m, w->LU, m, w->ipiv, w->ct, 1)) != MB_OK) ||
        (nx > 0 && (rc = mb_lu_solve(m, w->LU, m, w->ipiv, w->P, nx)) != MB_OK)) {
        st->lin = LIN_SINGULAR;
        return singular_gz(s, w, t);
    }
    /* A = g_z + P f_z */
    memcpy(w->A, w->Gz, (size_t)(m * m) * sizeof(double));
    if (nx > 0)
        mb_gemm(m, m, nx, 1.0, w->P, m, w->Fz, nx, 1.0, w->A, m);
    /* b1 = G + gamma, gamma = P F + c */
    for (ptrdiff_t a = 0; a < nx; a++)
        w->t1[a] = s->f0[S[a]];
    for (ptrdiff_t a = 0; a < m; a++)
        w->b1[a] = s->f0[F[a]] + w->ct[a];
    if (nx > 0)
        mb_gemv(m, nx, 1.0, w->P, m, w->t1, 1.0, w->b1);
    for (ptrdiff_t a = 0; a < m * m; a++)
        if (!isfinite(w->A[a]))
            return MB_RECOVERABLE;
    st->lin = LIN_OK;
    return MB_OK;
}

/* K = f_x(t + tau, (X, H(tau, X))), the slow part of f on the linearized manifold;
 * the full f goes to w->ftmp */
static int slow_rhs(mb_stepper *s, sp_ws *w, double t, double tau, const double *X, double *K)
{
    ptrdiff_t m = w->st->m, nx = w->st->nx;
    const ptrdiff_t *F = w->F, *S = w->S;
    for (ptrdiff_t a = 0; a < nx; a++) {
        w->yt[S[a]] = X[a];
        w->t2[a] = X[a] - w->x0[a];
    }
    if (m > 0) {
        /* H = z_n - sigma - P (X - x_n) - c tau */
        for (ptrdiff_t a = 0; a < m; a++)
            w->t1[a] = w->z0[a] - w->sig[a] - w->ct[a] * tau;
        if (nx > 0)
            mb_gemv(m, nx, -1.0, w->P, m, w->t2, 1.0, w->t1);
        for (ptrdiff_t a = 0; a < m; a++)
            w->yt[F[a]] = w->t1[a];
    }
    int rc = mb_rhs(s, t + tau, w->yt, w->ftmp);
    if (rc != MB_OK)
        return rc;
    for (ptrdiff_t a = 0; a < nx; a++)
        K[a] = w->ftmp[S[a]];
    return MB_OK;
}

/* S v = f_x v - f_z (P v) for v of size nx, into out (nx); uses t1 */
static void slow_jac_times(sp_ws *w, const double *v, double *out)
{
    ptrdiff_t m = w->st->m, nx = w->st->nx;
    mb_gemv(nx, nx, 1.0, w->Fx, nx, v, 0.0, out);
    if (m > 0) {
        mb_gemv(m, nx, 1.0, w->P, m, v, 0.0, w->t1);
        mb_gemv(nx, m, -1.0, w->Fz, nx, w->t1, 1.0, out);
    }
}

static int sp_init(mb_stepper *s)
{
    if (s->p->mass)
        return mb_fail(s, MB_ERR_NOT_SUPPORTED, "Method 'singular_perturbation' does not take "
                       "a mass matrix (use radau_iia, bdf or rodas4).");
    const mb_sp_options *o = s->method_options;
    if (o && o->n_fast != MB_SP_PROPOSE &&
        mb_sp_check_split(s->n, o->n_fast, o->fast, s->msg, s->msg_len) != MB_OK)
        return MB_ERR_ILL_INPUT;
    sp_ws w;
    carve(s, &w);
    /* also after a restart at a switching event (nrestart > 0 then): a new
     * linearization, but the split of the run's start stays */
    sp_state keep = *w.st;
    memset(w.st, 0, sizeof *w.st);
    if (s->stats->nrestart > 0 && keep.split_ok) {
        w.st->split_ok = 1;
        w.st->m = keep.m;
        w.st->nx = keep.nx;
    }
    return MB_OK;
}

static int exp_fail(int rc)
{
    return rc == MB_ERR_LINALG ? MB_RECOVERABLE : rc;
}

/* step 1: int_0^h y~ = h sigma + h^2 phi_2(h g_z) b1, into inty */
static int fast_integral(mb_stepper *s, sp_ws *w, double h)
{
    ptrdiff_t m = w->st->m;
    int rc;
    for (ptrdiff_t a = 0; a < m; a++) {
        w->V[a] = h * w->b1[a];
        w->V[m + a] = 0.0;
    }
    s->stats->nlu++;
    if ((rc = mb_phi_columns(m, w->Gz, m, h, 2, w->V, m, w->W, m, w->phiwork)) != MB_OK)
        return exp_fail(rc);
    for (ptrdiff_t a = 0; a < m; a++)
        w->inty[a] = h * w->sig[a] + h * w->W[m + a];
    return MB_OK;
}

/* step 2: RK4 on the slow manifold (K1..K4), D = f_z int y~, x_{n+1} = x^ + D into X */
static int slow_rk4(mb_stepper *s, sp_ws *w, double t, double h)
{
    ptrdiff_t m = w->st->m, nx = w->st->nx;
    int rc;
    if ((rc = slow_rhs(s, w, t, 0.0, w->x0, w->K1)) != MB_OK)
        return rc;
    for (ptrdiff_t a = 0; a < nx; a++)
        w->X[a] = w->x0[a] + 0.5 * h * w->K1[a];
    if ((rc = slow_rhs(s, w, t, 0.5 * h, w->X, w->K2)) != MB_OK)
        return rc;
    for (ptrdiff_t a = 0; a < nx; a++)
        w->X[a] = w->x0[a] + 0.5 * h * w->K2[a];
    if ((rc = slow_rhs(s, w, t, 0.5 * h, w->X, w->K3)) != MB_OK)
        return rc;
    for (ptrdiff_t a = 0; a < nx; a++)
        w->X[a] = w->x0[a] + h * w->K3[a];
    if ((rc = slow_rhs(s, w, t, h, w->X, w->K4)) != MB_OK)
        return rc;
    if (m > 0)
        mb_gemv(nx, m, 1.0, w->Fz, nx, w->inty, 0.0, w->D);
    else
        memset(w->D, 0, (size_t)nx * sizeof(double));
    for (ptrdiff_t a = 0; a < nx; a++)
        w->X[a] = w->x0[a] + h / 6.0 * (w->K1[a] + 2.0 * w->K2[a] + 2.0 * w->K3[a] + w->K4[a]) +
                  w->D[a];
    return MB_OK;
}

/* step 3: w(h) = h phi_1(hA) B0 + h^2 phi_2(hA) B1 with B0 = A sigma + P K1 + c,
 * B1 = P (K5 - K1) / h; z_{n+1} = z_n - P (x_{n+1} - x_n) - c h + w(h) into y_new; with
 * the estimate (est) also int y of step 3 into inty3 */
static int fast_update(mb_stepper *s, sp_ws *w, double h, double *y_new, int est)
{
    ptrdiff_t m = w->st->m, nx = w->st->nx;
    const ptrdiff_t *F = w->F;
    int rc;
    for (ptrdiff_t a = 0; a < m; a++)
        w->B0[a] = w->ct[a];
    mb_gemv(m, m, 1.0, w->A, m, w->sig, 1.0, w->B0);
    for (ptrdiff_t a = 0; a < nx; a++)
        w->t2[a] = (w->K5[a] - w->K1[a]) / h;
    if (nx > 0) {
        mb_gemv(m, nx, 1.0, w->P, m, w->K1, 1.0, w->B0);
        mb_gemv(m, nx, 1.0, w->P, m, w->t2, 0.0, w->B1);
    }
    ptrdiff_t p = est ? 3 : 2;
    for (ptrdiff_t a = 0; a < m; a++) {
        w->V[a] = h * h * w->B1[a];
        w->V[m + a] = h * w->B0[a];
        w->V[2 * m + a] = 0.0;
    }
    s->stats->nlu++;
    if ((rc = mb_phi_columns(m, w->A, m, h, p, w->V, m, w->W, m, w->phiwork)) != MB_OK)
        return exp_fail(rc);
    for (ptrdiff_t a = 0; a < nx; a++)
        w->t2[a] = w->X[a] - w->x0[a];
    for (ptrdiff_t a = 0; a < m; a++) {
        w->w[a] = w->W[m + a];
        w->t1[a] = w->z0[a] - w->ct[a] * h + w->w[a];
    }
    if (nx > 0)
        mb_gemv(m, nx, -1.0, w->P, m, w->t2, 1.0, w->t1);
    for (ptrdiff_t a = 0; a < m; a++)
        y_new[F[a]] = w->t1[a];
    if (est)
        for (ptrdiff_t a = 0; a < m; a++)
            w->inty3[a] = h * w->sig[a] + h * w->W[2 * m + a];
    return MB_OK;
}

/* the estimate of z: e_z = -P e_x + l, l = 2 h phi_3(h g_z) r_z the LLM local error of
 * the fast linearization, r_z = g(y_{n+1}) - G - g_x dx - g_z dz - g_t h */
static int fast_estimate(mb_stepper *s, sp_ws *w, double h, const double *y_new)
{
    const sp_state *st = w->st;
    ptrdiff_t n = s->n, m = st->m, nx = st->nx;
    const ptrdiff_t *F = w->F, *S = w->S;
    int rc;
    for (ptrdiff_t a = 0; a < nx; a++)
        w->t2[a] = w->X[a] - w->x0[a];
    for (ptrdiff_t a = 0; a < m; a++) {
        w->K3[a] = y_new[F[a]] - w->z0[a];  /* K3 is free now: dz */
        w->K4[a] = s->f1[F[a]] - w->fJ[F[a]] - (st->autonomous ? 0.0 : h * w->ft[F[a]]);
    }
    mb_gemv(m, m, -1.0, w->Gz, m, w->K3, 1.0, w->K4);
    /* g_x = g_z P: its product with dx through the unfactored blocks of J */
    for (ptrdiff_t b = 0; b < nx; b++) {
        double d = w->t2[b];
        if (d != 0.0)
            for (ptrdiff_t a = 0; a < m; a++)
                w->K4[a] -= w->J[S[b] * n + F[a]] * d;
    }
    for (ptrdiff_t a = 0; a < m; a++) {
        w->V[a] = 2.0 * h * w->K4[a];
        w->V[m + a] = w->V[2 * m + a] = 0.0;
    }
    s->stats->nlu++;
    if ((rc = mb_phi_columns(m, w->Gz, m, h, 3, w->V, m, w->W, m, w->phiwork)) != MB_OK)
        return exp_fail(rc);
    for (ptrdiff_t a = 0; a < m; a++)
        w->ez[a] = w->W[2 * m + a];
    if (nx > 0)
        mb_gemv(m, nx, -1.0, w->P, m, w->ex, 1.0, w->ez);
    return MB_OK;
}

/* the error estimate (top of the file) into err */
static int sp_estimate(mb_stepper *s, sp_ws *w, double h, const double *y_new, double *err)
{
    ptrdiff_t m = w->st->m, nx = w->st->nx;
    const ptrdiff_t *F = w->F, *S = w->S;
    double *ex = w->ex;
    int rc;
    /* (h/6)(K4 - K5) + (h/3) r_x, r_x = f_x(y_{n+1}) - K5 - f_z y(h), y(h) = sigma + w */
    for (ptrdiff_t a = 0; a < m; a++)
        w->t1[a] = w->sig[a] + w->w[a];
    for (ptrdiff_t a = 0; a < nx; a++)
        w->t2[a] = s->f1[S[a]] - w->K5[a];
    if (m > 0)
        mb_gemv(nx, m, -1.0, w->Fz, nx, w->t1, 1.0, w->t2);
    for (ptrdiff_t a = 0; a < nx; a++)
        ex[a] = h / 6.0 * (w->K4[a] - w->K5[a]) + h / 3.0 * w->t2[a];
    if (m > 0) {
        /* -(h/3) S D  (= -(h/2) S D from the coupling + (h/6) S D of the RK4 stage) */
        slow_jac_times(w, w->D, w->K2);  /* K2 is free now */
        for (ptrdiff_t a = 0; a < nx; a++)
            ex[a] -= h / 3.0 * w->K2[a];
        /* f_z (int y - int y~) */
        for (ptrdiff_t a = 0; a < m; a++)
            w->t1[a] = w->inty3[a] - w->inty[a];
        mb_gemv(nx, m, 1.0, w->Fz, nx, w->t1, 1.0, ex);
        if ((rc = fast_estimate(s, w, h, y_new)) != MB_OK)
            return rc;
    }
    for (ptrdiff_t a = 0; a < nx; a++)
        err[S[a]] = ex[a];
    for (ptrdiff_t a = 0; a < m; a++)
        err[F[a]] = w->ez[a];
    return MB_OK;
}

static int sp_step(mb_stepper *s, double t, double h, const double *y, double *y_new,
                   double *err)
{
    sp_ws w;
    carve(s, &w);
    sp_state *st = w.st;
    ptrdiff_t n = s->n;
    int rc;
    st->have_step = 0;
    if (!(st->lin && st->tJ == t && memcmp(w.yJ, y, (size_t)n * sizeof(double)) == 0)) {
        if ((rc = sp_linearize(s, &w, t, y)) != MB_OK)
            return rc;
    } else if (st->lin == LIN_SINGULAR) {
        return singular_gz(s, &w, t);
    }
    ptrdiff_t m = st->m, nx = st->nx;
    const ptrdiff_t *F = w.F, *S = w.S;
    for (ptrdiff_t a = 0; a < nx; a++)
        w.x0[a] = y[S[a]];
    for (ptrdiff_t a = 0; a < m; a++)
        w.z0[a] = y[F[a]];
    if (m > 0 && (rc = fast_integral(s, &w, h)) != MB_OK)  /* step 1 */
        return rc;
    if ((rc = slow_rk4(s, &w, t, h)) != MB_OK)  /* step 2 */
        return rc;
    /* step 3: K5 = f(x_{n+1}, H(x_{n+1})), then the fast variables */
    if ((rc = slow_rhs(s, &w, t, h, w.X, w.K5)) != MB_OK)
        return rc;
    for (ptrdiff_t a = 0; a < nx; a++)
        y_new[S[a]] = w.X[a];
    int est = s->err_wanted;
    if (m > 0 && (rc = fast_update(s, &w, h, y_new, est)) != MB_OK)
        return rc;
    for (ptrdiff_t i = 0; i < n; i++)
        if (!isfinite(y_new[i]))
            return MB_RECOVERABLE;
    /* f(t_{n+1}, y_{n+1}): the residuals of the estimate, the dense record, the next f0 */
    if ((rc = mb_rhs(s, t + h, y_new, s->f1)) != MB_OK)
        return rc;
    s->f1_ok = 1;
    memcpy(w.y1, y_new, (size_t)n * sizeof(double));
    memcpy(w.f1, s->f1, (size_t)n * sizeof(double));
    st->have_step = 1;
    return est ? sp_estimate(s, &w, h, y_new, err) : MB_OK;
}

static int sp_accept(mb_stepper *s, double t_new, const double *y_new)
{
    (void)t_new;
    (void)y_new;
    sp_ws w;
    carve(s, &w);
    if (w.st->msg_set) {  /* the failure it reported was recovered from */
        if (s->msg)
            s->msg[0] = '\0';
        w.st->msg_set = 0;
    }
    return MB_OK;
}

/* ---- continuous output as a dense record ---- */

/* rec: [m, idx (F then S, n), y_n, y_{n+1}, f_n, f_{n+1} (n each), c, B0, B1 (n each,
 *       first m used), P (m x nx) then A (m x m) (n^2 doubles hold both: m n <= n^2)] */
typedef struct sp_rec {
    double *m, *idx, *y0, *y1, *f0, *f1, *ct, *B0, *B1, *PA;
} sp_rec;

/* The one layout of a record: counts it (c->base NULL) and carves it. */
static size_t rec_layout(mb_carver *c, ptrdiff_t n, sp_rec *r)
{
    size_t nn = (size_t)n;
    r->m = mb_carve(c, 1);
    double **vec[] = {&r->idx, &r->y0, &r->y1, &r->f0, &r->f1, &r->ct, &r->B0, &r->B1};
    for (size_t k = 0; k < sizeof vec / sizeof vec[0]; k++)
        *vec[k] = mb_carve(c, nn);
    r->PA = mb_carve(c, nn * nn);
    return c->off;
}

/* the scratch of record_eval: V, W (2n each) and the work of mb_phi_columns (p = 2) */
typedef struct sp_eval_work {
    double *V, *W, *phiwork;
} sp_eval_work;

static size_t eval_layout(mb_carver *c, ptrdiff_t n, sp_eval_work *w)
{
    w->V = mb_carve(c, 2 * (size_t)n);
    w->W = mb_carve(c, 2 * (size_t)n);
    w->phiwork = mb_carve(c, mb_phi_work_size(n, 2));
    return c->off;
}

static size_t sp_record_size(ptrdiff_t n, const void *data, size_t *work_size)
{
    (void)data;
    sp_eval_work w;
    sp_rec r;
    *work_size = eval_layout(&(mb_carver){NULL, 0}, n, &w);
    return rec_layout(&(mb_carver){NULL, 0}, n, &r);
}

static int sp_record(mb_stepper *s, double *rec)
{
    sp_ws w;
    carve(s, &w);
    const sp_state *st = w.st;
    if (!st->have_step)
        return mb_fail(s, MB_ERR_ILL_INPUT,
                       "singular_perturbation: dense output requested before any step.");
    ptrdiff_t n = s->n, m = st->m, nx = st->nx;
    size_t bytes = (size_t)n * sizeof(double);
    sp_rec r;
    rec_layout(&(mb_carver){rec, 0}, n, &r);
    r.m[0] = (double)m;
    for (ptrdiff_t a = 0; a < m; a++)
        r.idx[a] = (double)w.F[a];
    for (ptrdiff_t a = 0; a < nx; a++)
        r.idx[m + a] = (double)w.S[a];
    memcpy(r.y0, w.yJ, bytes);
    memcpy(r.y1, w.y1, bytes);
    memcpy(r.f0, w.fJ, bytes);
    memcpy(r.f1, w.f1, bytes);
    double *vm[] = {r.ct, r.B0, r.B1};
    const double *from[] = {w.ct, w.B0, w.B1};
    for (int k = 0; k < 3; k++) {
        memset(vm[k], 0, bytes);
        memcpy(vm[k], from[k], (size_t)m * sizeof(double));
    }
    memset(r.PA, 0, (size_t)(n * n) * sizeof(double));
    memcpy(r.PA, w.P, (size_t)(m * nx) * sizeof(double));
    memcpy(r.PA + m * nx, w.A, (size_t)(m * m) * sizeof(double));
    return MB_OK;
}

static int sp_record_eval(const mb_method *mt, ptrdiff_t n, const double *rec, double t0,
                          double h, double theta, double *y, double *work)
{
    (void)mt;
    (void)t0;
    sp_rec r;  /* read only */
    rec_layout(&(mb_carver){(double *)rec, 0}, n, &r);
    ptrdiff_t m = (ptrdiff_t)r.m[0], nx = n - m;
    const double *idx = r.idx, *y0 = r.y0, *y1 = r.y1, *f0 = r.f0, *f1 = r.f1, *ct = r.ct,
                 *B0 = r.B0, *B1 = r.B1, *P = r.PA, *A = r.PA + m * nx;
    if (theta == 0.0) {
        memcpy(y, y0, (size_t)n * sizeof(double));
        return MB_OK;
    }
    if (theta == 1.0) {
        memcpy(y, y1, (size_t)n * sizeof(double));
        return MB_OK;
    }
    sp_eval_work ew;
    eval_layout(&(mb_carver){work, 0}, n, &ew);
    double *V = ew.V, *W = ew.W, *phiwork = ew.phiwork;
    /* x: cubic Hermite of (y0, h f0, y1, h f1) on the slow components */
    double th = theta, th2 = th * th, th3 = th2 * th;
    double h00 = 2 * th3 - 3 * th2 + 1, h10 = th3 - 2 * th2 + th, h01 = -2 * th3 + 3 * th2,
           h11 = th3 - th2;
    for (ptrdiff_t a = 0; a < nx; a++) {
        ptrdiff_t i = (ptrdiff_t)idx[m + a];
        y[i] = h00 * y0[i] + h * h10 * f0[i] + h01 * y1[i] + h * h11 * f1[i];
    }
    if (m == 0)
        return MB_OK;
    /* w(tau) = tau phi_1(tau A) B0 + tau^2 phi_2(tau A) B1 */
    double tau = theta * h;
    for (ptrdiff_t a = 0; a < m; a++) {
        V[a] = tau * tau * B1[a];
        V[m + a] = tau * B0[a];
    }
    int rc = mb_phi_columns(m, A, m, tau, 2, V, m, W, m, phiwork);
    if (rc != MB_OK)
        return rc;
    /* z = z_n - P (x(tau) - x_n) - c tau + w(tau) */
    for (ptrdiff_t a = 0; a < m; a++) {
        ptrdiff_t i = (ptrdiff_t)idx[a];
        double v = y0[i] - ct[a] * tau + W[m + a];
        for (ptrdiff_t b = 0; b < nx; b++) {
            ptrdiff_t k = (ptrdiff_t)idx[m + b];
            v -= P[b * m + a] * (y[k] - y0[k]);
        }
        y[i] = v;
    }
    return MB_OK;
}

const mb_method mb_method_singular_perturbation = {
    .name = "singular_perturbation",
    .order = 1,
    .error_order = 2,
    .flags = MB_NEEDS_JAC | MB_EMBEDDED | MB_USES_F0 | MB_FSAL,
    .max_dense_degree = 0,
    .data = NULL,
    .work_size = sp_work_size,
    .init = sp_init,
    .step = sp_step,
    .accept = sp_accept,
    .dense_record_size = sp_record_size,
    .dense_record = sp_record,
    .dense_record_eval = sp_record_eval,
};
