/* One Rosenbrock / W-method kernel over the tables of tableaus_ros.c.
 *
 * Form: the transformed stages of Hairer & Wanner (Solving ODEs II, IV.7, eq. 7.25),
 * i.e. RN paper Theorem 2.1 with J2 = J, J1 = 0 (a first-order system):
 *
 *   E = M/(h gamma) - J                       (M = I without a mass matrix)
 *   E u_i = f(t + alpha_i h, y + sum_{j<i} a_ij u_j) + M sum_{j<i} (c_ij/h) u_j
 *           + gam_i h df/dt(t, y)
 *   y_new = y + sum m_i u_i,   err = y_new - y_hat = sum (m_i - mhat_i) u_i
 *
 * so each stage costs one f evaluation (none when new_f[i] = 0) and one LU solve,
 * and no product with J.  J = df/dy and df/dt come from mb_jac / mb_dfdt (the
 * user's or finite differences) at (t, y), with f(t, y) = s->f0 (MB_USES_F0).
 *
 * Jacobian and LU reuse.  A Rosenbrock method needs the exact J at the step's start:
 * J (and df/dt) are evaluated once per start point; a rejected or failed step retried
 * from the same (t, y) reuses them and only refactors E with the new h.  A W-method
 * (table flag w_method) keeps J (and df/dt) across steps and re-evaluates them at the
 * step's start under the policy it shares with w_nystrom (mb_wjac, core/method.h):
 *   - a step was rejected (or failed) and J is from an earlier point,
 *   - h differs from the step size J was taken with by more than a factor 4, or
 *   - J no longer predicts the change of f between the last two start points:
 *     ||f_n - f_{n-1} - J (y_n - y_{n-1}) - df/dt (t_n - t_{n-1})|| > 0.2
 *     ||f_n - f_{n-1}|| (2-norms; one product with J per step, no f evaluation).
 * The first two rules alone (the RN paper's description) let a stale J ruin the damping
 * of stiff components: on HIRES at rtol 1e-3..1e-7 the global error was 170-520 times
 * the tolerance with ~1e4 steps whatever the tolerance; with the third rule w2 stays
 * within 7x of the tolerance with 860-10400 steps and one J per 6-13 steps.  E is
 * refactored whenever J or h changed.  njev and nlu count evaluations and factorizations.
 *
 * Error estimate: err = y_new - y_hat, filtered by (I - h gamma J)^-1 for tables with
 * filter_err (w2, whose embedded formula is not L-stable; see tableaus_ros.h).  w2_mid
 * (w2 with a midpoint stage for an order-2 estimate, tableaus_ros.c) is not filtered.
 *
 * Mass matrices: the kernel handles a constant M (possibly singular) as above; ros4
 * and rodas4 have MB_MASS (R(inf) ~ 0, so index-1 DAEs are damped; rodas4 is stiffly
 * accurate as RODAS).  ros4's embedded formula is not damped (R^(inf) = -0.367), so on
 * a DAE whose algebraic variables carry a global error its estimate does not shrink
 * with h: mbint.simulate does not offer it for the index-1 DAE formulation of a
 * mechanism (mbint/mbs/formulations.py); algebraic equations linear in y (Robertson's
 * conservation row) are solved exactly each step, and there it works.  ros2 is ode23s, whose order-3 error estimate is not damped at
 * infinity (MATLAB's ode23s takes no singular M either), and w2 filters its estimate
 * with (I - h gamma J)^-1, defined for M = I: neither takes a mass matrix.
 *
 * Dense output: every table has its own continuous extension, a combination of the
 * stages u_i (tableaus_ros.h); the driver's Hermite interpolant is not used.
 *
 * Stage solves in the variables of the error control.  E is factored as S^-1 E S with
 * S = diag(s_i), s_i the power of two at or below atol_i + rtol (|y_i| + |h f_i|) (y and
 * f at the step's start: the size of y_i across the step), and E u = b is solved as
 * u = S (S^-1 E S)^-1 S^-1 b.  Scaling by powers of two is exact, so this is the LU of E
 * with the pivot of column k chosen by max_i |E_ik| / s_i (scaled partial pivoting); with
 * equal s_i it is bit for bit the unscaled LU.
 * Why: if w.f(t, y) = 0 for all (t, y) (a conservation law of a reaction network), then
 * w.J = 0 and w.df/dt = 0, so w E = w M/(h gamma) and, stage by stage, w M u_i = 0 and
 * w M y_new = w M y in exact arithmetic (for a W-method too: w.J(y) = 0 at every y).  In
 * floating point a solve has the backward error |dE| <= c u P^T |L||U|, and unscaled
 * partial pivoting compares rows of different units: with a trace species C (y_C ~ 1e-22)
 * bound by an O(1) species A (2A + C <-> X: |df_A/dC| = 2 |df_C/dC|) the pivot of column C
 * was the row of A, the trace rows of L U were differences of O(1)-scale numbers, and
 * every stage put rounding of the O(1) increments into u_C and u_X.  At rtol 1e-4 rodas4
 * lost 7e-3 of y_C + y_X = 1e-22 and w2 1.5e3 times it, and the noise in the error
 * estimate of C and X cost rodas4 5.8e5 steps where 87 suffice (test_trace_invariant in
 * tests/test_rosenbrock.py).  With the scaled pivots |dE| <= c u S P^T |L~||U~| S^-1
 * (L~, U~ the factors of S^-1 E S, |L~| <= 1): the rounding of row i is s_i times the size
 * of the scaled system, so the defect w M u_i/(h gamma) - w b_i involves only the
 * tolerance scales of the components with w_i != 0; the invariant then holds to 1e-15 of
 * its value whatever the order of the unknowns.  The scales only choose the pivots, but
 * they must not understate a row: a row whose s_i is q times too small can be taken as
 * pivot with unscaled multipliers up to q (Robertson at t = 0 with atol 1e-30 and s_i
 * from |y_i| alone: the first stage lost 8 digits of u_1; with |h f_i| it is exact).
 * Cost: a pass over E per factorization and 2n multiplications per solve, no f
 * evaluation: 7-13 % more instructions per step on Van der Pol (n = 2), Robertson (3) and
 * HIRES (8) with f and J in C, less for larger n.  (One step of iterative refinement per
 * stage instead, with the residual from the unfactored E, costs 15-47 % there and leaves
 * 1e-10 of the invariant: each solve becomes componentwise backward stable, but the rows
 * of a trace species are stiff, h gamma |E| >> 1, and that rounding remains.)
 *
 * Rounding the error estimate cannot see.  The scaled pivots keep the solve's own rounding
 * at the scale of each row; the Jacobian's rounding remains.  With w.f = 0 for all (t, y)
 * the exact J has w.J = 0, but the J a step is given is rounded entry by entry:
 * |w.dJ| <= eps |w| |J| (E5, the test set's pyrolysis problem with the invariant
 * y2 - y3 - y4 = 0: w.J = 5e-21 in column 1 from J_31 = A - B y3, 4e-13 in column 3 from
 * J_33 = -B y1 - M C y2, where w.J = 0 would need them exact).  A stage solves with that
 * J, w M u_i = h gamma (w.(rhs of stage i) + w.dJ u_i), and through the stages (with
 * (I - gamma C)^-1 gamma = Gamma) the step moves the invariant by h sum_k b_k w.dJ u_k,
 * b = m^T Gamma the weights of the defining form (tableaus_ros.h); the stage solves'
 * rounding enters the same way.  So |move| <= sum_i |w_i| nu_i with
 *   nu_i = eps |h| sum_j |J_ij| v_j,   v = sum_k |b_k| |u_k|   (rounding_bound).
 * A method that iterates Newton to convergence (radau_iia, bdf) has J only in its
 * corrections and moves invariants by the rounding of f alone; a linearly implicit step
 * depends on J itself.  y_new and y_hat share J and the stages, so their difference, the
 * error estimate, cannot see this; and nu is far below rtol |y| (E5 at t ~ 1e4, h = 2000:
 * nu ~ 1e-21 in y2 ~ 1e-10).  But nothing damps a move off an invariant: it stays, in
 * absolute size, when the components decay.  E5's y2 - y3 - y4 ended at 2e-22 with
 * rodas4 (rtol 1e-4, atol 1e-26), and y2 + y3 = 1.8e-22 at t = 1e13 came out 49 %, 25 %
 * and 3.9 % off at rtol 1e-4, 1e-6, 1e-8 with status 0 (exact arithmetic with the same
 * rounded J moves the invariant as much: the solve is not the cause).
 * So a step holds the move of every linear invariant of J to that invariant's tolerance,
 * sum_i |w_i| sigma_i with sigma_i = atol_i + eps max(|y_i|, |y_new_i|) (below the rounding
 * of y_i itself a bound is moot) (hold_rounding): its error norm is the larger of the
 * truncation estimate's and theta^((q+1)/2), theta = max over the invariants of
 * sum |w_i| nu_i / sum |w_i| sigma_i.  nu ~ h^2, so the controller's factor
 * (1/norm)^(1/(q+1)) is the step that meets it.  The invariants are the left null space
 * of J, found by elimination (invariant_ratio) only when max_i nu_i / sigma_i (>= theta)
 * could matter, and nu itself only when its bound from the row sums of |J| (kept by
 * factor()) could.  Per invariant, not per row: a fast row's rounding is far above a tiny
 * atol of its own component in most stiff problems (ROBER's y2 ~ 1e-13 with atol 1e-30),
 * but it lands in an invariant whose other components are large (y1 + y2 + y3 = 1) or in
 * none, where the flow damps it like any local error; held per row, ROBER at atol 1e-26
 * took over 2e5 steps instead of 714.  Where theta stays below the norm of the truncation
 * estimate, every problem of tests/testset.py but E5 and every run of tools/golden.py,
 * nothing changes; on E5 at atol 1e-26 rodas4 takes 7300-13300 steps (420-8000 before)
 * and ends with y2 + y3 within 6e-5 and y2 - y3 - y4 ~ 2e-24 (the rounding of the state
 * itself over that many steps).  Cost where nothing changes: 40-110 ns a step (the bound
 * and one norm; n = 2..8 with f and J in C: 5-12 % of a step of w2 or ros4).  Not with the
 * problem's linsys (no J is held).
 *
 * Workspace (layout()): state | J (n x n) | E = LU (n x n) | ipiv | df/dt | U (s x n)
 * | f of the current stage | stage argument | mass product | scales s_i
 * and 1/s_i | W-methods: y_prev, f_prev | the invariants' elimination (n x n, 2n ints) |
 * row sums of |J|. */
#include <complex.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <string.h>
#include "../linalg/dense.h" /* LU */
#include "carve.h"
#include "rosenbrock.h"
#include "status.h"

/* scales s_i below SCALE_MIN max_j s_j (or zero: atol_i = 0, y_i = 0, f_i = 0) are raised
 * to it, so S^-1 E S stays far from overflow */
static const double SCALE_MIN = 0x1p-300;

typedef struct ros_state {
    mb_wjac wj;    /* when J and df/dt are evaluated (method.h) */
    double b[MB_ROS_MAX_STAGES]; /* the weights of the defining form, b^T = m^T Gamma */
    int lu_ok;     /* E holds the factorization for (J, h_lu) */
    int scaled;    /* E holds S^-1 E S with scales sc that are not all 1 */
    double h_lu;
} ros_state;

typedef struct ros_work {
    ros_state *st;
    double *J, *E, *ft, *U, *fk, *yt, *cs, *sc, *isc;
    double *prev;  /* W-methods: y_prev, f_prev of the secant test (mb_wjac) */
    double *A;     /* n x n scratch of the invariants' elimination (invariant_ratio) */
    double *jr;    /* row sums sum_j |J_ij| of the J factored (factor()) */
    int *ipiv, *perm;
} ros_work;

/* The one layout of the workspace: counts it (c->base NULL) and carves it.  With the
 * problem's linsys (linsys.h) there is no J, E or pivots. */
static size_t layout(mb_carver *c, const mb_problem *p, const mb_ros_tableau *T, ros_work *w)
{
    size_t n = (size_t)p->n, nn = p->linsys ? 0 : n * n;
    w->st = mb_carve_bytes(c, sizeof *w->st);
    w->J = mb_carve(c, nn);
    w->E = mb_carve(c, nn);
    w->ipiv = mb_carve_int(c, nn ? n : 0);
    w->ft = mb_carve(c, n);
    w->U = mb_carve(c, (size_t)T->s * n);
    w->fk = mb_carve(c, n);
    w->yt = mb_carve(c, n);
    w->cs = mb_carve(c, n);
    w->sc = mb_carve(c, n);
    w->isc = mb_carve(c, n);
    w->prev = mb_carve(c, T->w_method ? 2 * n : 0);
    w->A = mb_carve(c, nn);
    w->jr = mb_carve(c, nn ? n : 0);
    w->perm = mb_carve_int(c, nn ? 2 * n : 0);
    return c->off;
}

static size_t ros_work_size(const mb_problem *p, const void *data)
{
    ros_work w;
    return layout(&(mb_carver){NULL, 0}, p, data, &w);
}

static void carve(const mb_stepper *s, ros_work *w)
{
    layout(&(mb_carver){s->work, 0}, s->p, s->m->data, w);
}

/* b^T = m^T Gamma with Gamma = (diag(1/gamma) - C)^-1 (tableaus_ros.h): solve
 * (I/gamma - C)^T b = m, upper triangular, by back substitution */
static void defining_weights(const mb_ros_tableau *T, double *b)
{
    int ns = T->s;
    for (int k = ns - 1; k >= 0; k--) {
        double acc = T->m[k];
        for (int i = k + 1; i < ns; i++)
            acc += T->c[(ptrdiff_t)i * ns + k] * b[i];
        b[k] = acc * T->gamma;
    }
}

static int ros_init(mb_stepper *s)
{
    const mb_ros_tableau *T = s->m->data;
    if (s->p->mass && !(s->m->flags & MB_MASS))
        return mb_fail(s, MB_ERR_NOT_SUPPORTED,
                       "Method '%s' does not take a mass matrix (use rodas4).", s->m->name);
    if (T->s > MB_ROS_MAX_STAGES)
        return mb_fail(s, MB_ERR_ILL_INPUT, "Rosenbrock table '%s' has too many stages.", T->name);
    ros_work w;
    carve(s, &w);
    memset(w.st, 0, sizeof *w.st);
    w.st->wj.w_method = T->w_method;
    defining_weights(T, w.st->b);
    return MB_OK;
}

/* The secant test of a W-method (mb_wjac_secant_fn): does the kept J still predict the
 * change of f since the previous start point?  r = f(t, y) - f_prev - J (y - y_prev) -
 * ft (t - t_prev) against f(t, y) - f_prev; scratch: yt, cs. */
static void ros_secant(mb_stepper *s, const double *y, const double *y_prev,
                       const double *f_prev, double dt, double *rr, double *ff, void *ctx)
{
    const ros_work *w = ctx;
    ptrdiff_t n = s->n;
    double *d = w->yt, *r = w->cs, r2 = 0.0, f2 = 0.0;
    for (ptrdiff_t l = 0; l < n; l++) {
        d[l] = y[l] - y_prev[l];
        r[l] = s->f0[l] - f_prev[l] - w->ft[l] * dt;
        f2 += (s->f0[l] - f_prev[l]) * (s->f0[l] - f_prev[l]);
    }
    mb_gemv(n, n, -1.0, w->J, n, d, 1.0, r);
    for (ptrdiff_t l = 0; l < n; l++)
        r2 += r[l] * r[l];
    *rr = r2;
    *ff = f2;
}

/* Powers of two by their bits (IEEE double): the power of two at or below t (t positive
 * and normal) is t with its mantissa cleared; the inverse of 2^e (-1022 <= e <= 1022) has
 * the biased exponent 2 * 1023 - (e + 1023).  No division, no libm call. */
static const uint64_t MANT_BITS = ((uint64_t)1 << (DBL_MANT_DIG - 1)) - 1;

static double pow2_floor(double t)
{
    uint64_t bits;
    memcpy(&bits, &t, sizeof bits);
    bits &= ~MANT_BITS;
    memcpy(&t, &bits, sizeof bits);
    return t;
}

static double pow2_inverse(double p)
{
    uint64_t bits;
    memcpy(&bits, &p, sizeof bits);
    bits = ((uint64_t)(2 * (DBL_MAX_EXP - 1)) << (DBL_MANT_DIG - 1)) - bits;
    memcpy(&p, &bits, sizeof bits);
    return p;
}

/* sc_i = 2^e_i <= atol_i + rtol (|y_i| + |h f0_i|) < 2^(e_i + 1), raised to at least
 * SCALE_MIN times the largest and divided by the largest, so SCALE_MIN <= sc_i <= 1 (all 1
 * when every tolerance scale is zero); isc_i = 1/sc_i.  Returns whether they differ. */
static int scales(const mb_stepper *s, const double *y, double h, double *sc, double *isc)
{
    ptrdiff_t n = s->n;
    double tmax = 0.0;
    for (ptrdiff_t i = 0; i < n; i++) {
        double t = s->atol[i] + s->rtol * (fabs(y[i]) + fabs(h * s->f0[i]));
        sc[i] = t <= 0x1p1022 ? t : 0x1p1022;  /* and not NaN */
        if (sc[i] > tmax)
            tmax = sc[i];
    }
    if (!(tmax >= DBL_MIN))
        tmax = 1.0;
    double inv = pow2_inverse(pow2_floor(tmax)), lo = tmax * SCALE_MIN;
    if (lo < DBL_MIN)
        lo = DBL_MIN;
    int differ = 0;
    for (ptrdiff_t i = 0; i < n; i++) {
        sc[i] = pow2_floor(sc[i] > lo ? sc[i] : lo) * inv;
        isc[i] = pow2_inverse(sc[i]);
        differ |= sc[i] != 1.0;
    }
    return differ;
}

/* E = M/(h gamma) - J in the scaled variables, S^-1 E S, factored in place */
static int factor(mb_stepper *s, const mb_ros_tableau *T, ros_work *w, double h,
                  const double *y)
{
    ptrdiff_t n = s->n;
    const double *M = (s->m->flags & MB_MASS) ? s->p->mass : NULL;
    double d = 1.0 / (h * T->gamma);
    if (s->p->linsys) {  /* the problem's own a I - J (linsys.h), unscaled */
        w->st->scaled = 0;
        s->stats->nlu++;
        w->st->lu_ok = 0;
        int rc = mb_linsys_factor(s, 0, d, 0.0);
        if (rc != MB_OK)
            return rc == MB_ERR_LINALG ? MB_RECOVERABLE : rc;
        w->st->lu_ok = 1;
        w->st->h_lu = h;
        return MB_OK;
    }
    int scaled = w->st->scaled = scales(s, y, h, w->sc, w->isc);
    const double *J = w->J, *sc = w->sc, *isc = w->isc;
    double *E = w->E, *jr = w->jr;  /* and the row sums of |J| (rounding_bound) */
    for (ptrdiff_t i = 0; i < n; i++)
        jr[i] = 0.0;
    /* (S^-1 E S)_ij = E_ij s_j / s_i: exact, and 1 on the diagonal */
    for (ptrdiff_t j = 0; j < n; j++)
        for (ptrdiff_t i = 0; i < n; i++) {
            ptrdiff_t k = j * n + i;
            double e = (M ? d * M[k] : 0.0) - J[k];
            E[k] = scaled ? e * (sc[j] * isc[i]) : e;
            jr[i] += fabs(J[k]);
        }
    if (!M)
        for (ptrdiff_t i = 0; i < n; i++)
            w->E[i * n + i] += d;
    s->stats->nlu++;
    w->st->lu_ok = 0;
    if (mb_lu_factor(n, w->E, n, w->ipiv) != MB_OK)
        return MB_RECOVERABLE;  /* singular iteration matrix: retry with a smaller h */
    w->st->lu_ok = 1;
    w->st->h_lu = h;
    return MB_OK;
}

/* E x = b in place through the scaled factorization: x = S (S^-1 E S)^-1 S^-1 b */
static inline int solve(const mb_stepper *s, const ros_work *w, double *x)
{
    ptrdiff_t n = s->n;
    int scaled = w->st->scaled;
    if (scaled)
        for (ptrdiff_t i = 0; i < n; i++)
            x[i] *= w->isc[i];
    if (s->p->linsys) {
        return mb_linsys_solve((mb_stepper *)s, 0, x, NULL);
    }
    if (mb_lu_solve(n, w->E, n, w->ipiv, x, 1) != MB_OK)
        return MB_RECOVERABLE;
    if (scaled)
        for (ptrdiff_t i = 0; i < n; i++)
            x[i] *= w->sc[i];
    return MB_OK;
}

/* The stages u_i: E u_i = f(t + alpha_i h, y + sum_{j<i} a_ij u_j) + M sum_{j<i} (c_ij/h)
 * u_j + gam_i h df/dt, into w->U (an FSAL table's last argument is y_new). */
static int stages(mb_stepper *s, const mb_ros_tableau *T, const ros_work *w, double t,
                  double h, const double *y, double *y_new)
{
    ptrdiff_t n = s->n;
    int ns = T->s, rc;
    const double *M = (s->m->flags & MB_MASS) ? s->p->mass : NULL;
    const double *F = s->f0;
    double hinv = 1.0 / h;
    for (int i = 0; i < ns; i++) {
        const double *ai = T->a + (ptrdiff_t)i * ns, *ci = T->c + (ptrdiff_t)i * ns;
        double *ui = w->U + (ptrdiff_t)i * n;
        if (i > 0 && T->new_f[i]) {
            int last_fsal = T->fsal && i == ns - 1;
            const double *wt = last_fsal ? T->m : ai;
            double *arg = last_fsal ? y_new : w->yt;
            for (ptrdiff_t l = 0; l < n; l++) {
                double acc = 0.0;
                for (int j = 0; j < i; j++)
                    acc += wt[j] * w->U[(ptrdiff_t)j * n + l];
                arg[l] = y[l] + acc;
            }
            if ((rc = mb_rhs(s, t + T->alpha[i] * h, arg, w->fk)) != MB_OK)
                return rc;
            F = w->fk;
        }
        double *cs = M ? w->cs : ui;
        for (ptrdiff_t l = 0; l < n; l++) {
            double acc = 0.0;
            for (int j = 0; j < i; j++)
                acc += ci[j] * w->U[(ptrdiff_t)j * n + l];
            cs[l] = acc * hinv;
        }
        if (M) {
            memcpy(ui, F, (size_t)n * sizeof(double));
            if (i > 0)
                mb_gemv(n, n, 1.0, M, n, cs, 1.0, ui);
        } else {
            for (ptrdiff_t l = 0; l < n; l++)
                ui[l] += F[l];
        }
        double gh = T->gam[i] * h;
        if (gh != 0.0)
            for (ptrdiff_t l = 0; l < n; l++)
                ui[l] += gh * w->ft[l];
        if ((rc = solve(s, w, ui)) != MB_OK)
            return rc;
    }
    return MB_OK;
}

/* y_new = y + sum m_i u_i and err = sum (m_i - mhat_i) u_i (filtered for filter_err
 * tables); an FSAL table leaves f(t + h, y_new) in s->f1 */
static int combine(mb_stepper *s, const mb_ros_tableau *T, const ros_work *w, double h,
                   const double *y, double *y_new, double *err)
{
    ptrdiff_t n = s->n;
    int ns = T->s, rc;
    double e[MB_ROS_MAX_STAGES];
    for (int j = 0; j < ns; j++)
        e[j] = T->m[j] - T->mhat[j];
    for (ptrdiff_t l = 0; l < n; l++) {
        double acc = 0.0, ea = 0.0;
        for (int j = 0; j < ns; j++) {
            double u = w->U[(ptrdiff_t)j * n + l];
            acc += T->m[j] * u;
            ea += e[j] * u;
        }
        if (!T->fsal)
            y_new[l] = y[l] + acc;
        err[l] = ea;
        if (!isfinite(y_new[l]) || !isfinite(ea))
            return MB_RECOVERABLE;
    }
    if (T->filter_err) {  /* err <- (I - h gamma J)^-1 err = E^-1 err / (h gamma) */
        if ((rc = solve(s, w, err)) != MB_OK)
            return rc;
        double sc = 1.0 / h / T->gamma;
        for (ptrdiff_t l = 0; l < n; l++)
            err[l] *= sc;
    }
    if (T->fsal) {
        memcpy(s->f1, w->fk, (size_t)n * sizeof(double));
        s->f1_ok = 1;
    }
    return MB_OK;
}

/* A bound below this norm is not weighed against the truncation estimate (the controller
 * treats any norm below 1e-10 alike) */
static const double NEGLIGIBLE = 1e-10;

/* x^(k2/2) for an integer k2 >= 0 */
static double pow_half(double x, int k2)
{
    double r = (k2 & 1) ? sqrt(x) : 1.0;
    for (int i = 0; i < k2 / 2; i++)
        r *= x;
    return r;
}

/* The rounding bound of the step (header: "Rounding the error estimate cannot see"):
 * nu_i = eps |h| sum_j |J_ij| v_j with v = sum_k |b_k| |u_k|, into nu, and sigma_i =
 * atol_i + eps max(|y_i|, |y_new_i|) into sig (infinite for atol_i = 0: relative control
 * only, nothing held); returns max_i nu_i / sigma_i, or 0 when the upper bound
 * eps |h| (sum_j |J_ij|) max_j v_j for nu_i makes it negligible (then nu is not set).
 * Scratch: v in w->yt. */
static double rounding_bound(const mb_stepper *s, const mb_ros_tableau *T, const ros_work *w,
                             double h, const double *y, const double *y_new, int k2,
                             double *nu, double *sig)
{
    ptrdiff_t n = s->n;
    const double *U = w->U, *J = w->J, *jr = w->jr, *atol = s->atol;
    double *v = w->yt, vmax = 0.0, quick = 0.0, worst = 0.0, c = DBL_EPSILON * fabs(h);
    double b[MB_ROS_MAX_STAGES];
    for (int k = 0; k < T->s; k++)
        b[k] = fabs(w->st->b[k]);
    for (ptrdiff_t l = 0; l < n; l++) {
        double acc = 0.0;
        for (int k = 0; k < T->s; k++)
            acc += b[k] * fabs(U[(ptrdiff_t)k * n + l]);
        v[l] = acc;
        vmax = fmax(vmax, acc);
    }
    for (ptrdiff_t i = 0; i < n; i++) {
        double sg = atol[i] > 0 ? atol[i] + DBL_EPSILON * fmax(fabs(y[i]), fabs(y_new[i]))
                                : INFINITY;
        sig[i] = sg;
        if (jr[i] > quick * sg)
            quick = jr[i] / sg;
    }
    if (!(pow_half(c * vmax * quick, k2) > NEGLIGIBLE))
        return 0.0;
    for (ptrdiff_t i = 0; i < n; i++)
        nu[i] = 0.0;
    for (ptrdiff_t j = 0; j < n; j++)
        for (ptrdiff_t i = 0; i < n; i++)
            nu[i] += fabs(J[j * n + i]) * v[j];
    for (ptrdiff_t i = 0; i < n; i++) {
        nu[i] *= c;
        if (nu[i] > worst * sig[i])
            worst = nu[i] / sig[i];
    }
    return worst;
}

/* A pivot of the elimination below INV_TOL (the rows of J scaled to max |J_ij| = 1) is a
 * zero: what is left of a row of J after eliminating the others is its rounding. */
static const double INV_TOL = 256.0 * DBL_EPSILON;

static void swap(double *a, double *b)
{
    double t = *a;
    *a = *b;
    *b = t;
}

/* The linear invariants of J, w^T J = 0, and the largest ratio over them of the move bound
 * sum_i |w_i| nu_i to the invariant's tolerance sum_i |w_i| sig_i.  Gauss-Jordan with
 * complete pivoting on A = (J^T with column i divided by max_j |J_ij|): rank r, and each
 * free column f gives w' (w'_f = 1, w'_p(k) = -A_kf over the pivot columns p(k)), w_i =
 * w'_i / d_i.  Scratch: w->A (n x n), w->perm (2n). */
static double invariant_ratio(ptrdiff_t n, const ros_work *w, const double *nu, const double *sig)
{
    double *A = w->A;
    int *col = w->perm, *piv = w->perm + n;  /* column order; piv[k]: pivot column of row k */
    for (ptrdiff_t i = 0; i < n; i++) {
        double d = 0.0;
        for (ptrdiff_t j = 0; j < n; j++)
            d = fmax(d, fabs(w->J[j * n + i]));
        for (ptrdiff_t j = 0; j < n; j++)  /* A_ji = J_ij / d_i, column-major */
            A[i * n + j] = d > 0 ? w->J[j * n + i] / d : 0.0;
        w->yt[i] = d > 0 ? d : 1.0;
        col[i] = (int)i;
    }
    ptrdiff_t r = 0;
    for (; r < n; r++) {
        ptrdiff_t pi = r, pj = r;
        for (ptrdiff_t j = r; j < n; j++)
            for (ptrdiff_t i = r; i < n; i++)
                if (fabs(A[j * n + i]) > fabs(A[pj * n + pi])) {
                    pi = i;
                    pj = j;
                }
        if (!(fabs(A[pj * n + pi]) > INV_TOL))
            break;
        for (ptrdiff_t j = 0; j < n; j++)  /* rows r <-> pi */
            swap(A + j * n + r, A + j * n + pi);
        for (ptrdiff_t i = 0; i < n; i++)  /* columns r <-> pj */
            swap(A + r * n + i, A + pj * n + i);
        int c = col[r];
        col[r] = col[pj];
        col[pj] = c;
        double p = A[r * n + r];
        for (ptrdiff_t j = r; j < n; j++)
            A[j * n + r] /= p;
        for (ptrdiff_t i = 0; i < n; i++)
            if (i != r && A[r * n + i] != 0.0) {
                double m = A[r * n + i];
                for (ptrdiff_t j = r; j < n; j++)
                    A[j * n + i] -= m * A[j * n + r];
            }
        piv[r] = col[r];
    }
    double worst = 0.0;
    for (ptrdiff_t f = r; f < n; f++) {  /* one invariant per free column */
        ptrdiff_t i0 = col[f];
        double move = nu[i0] / w->yt[i0], tol = sig[i0] / w->yt[i0];
        for (ptrdiff_t k = 0; k < r; k++) {
            double wk = fabs(A[f * n + k]) / w->yt[piv[k]];
            move += wk * nu[piv[k]];
            tol += wk * sig[piv[k]];
        }
        if (move > worst * tol)
            worst = move / tol;
    }
    return worst;
}

/* The step's error is the larger of the truncation estimate err and the rounding bound,
 * in the run's norm: theta = the largest ratio over the invariants of J (invariant_ratio;
 * it is at most max_i nu_i / sigma_i, so the elimination is skipped when that cannot
 * matter); when theta^((q+1)/2) (q: the order the controller uses) exceeds the norm of
 * err, err becomes nu scaled to that norm.  nu ~ h^2, so the controller's factor
 * (1/norm)^(1/(q+1)) is the step that brings theta to 1.  Scratch (free after
 * combine()): nu in w->cs, sigma in w->fk. */
static void hold_rounding(mb_stepper *s, const mb_ros_tableau *T, const ros_work *w, double h,
                          const double *y, const double *y_new, double *err)
{
    double *nu = w->cs, *sig = w->fk;
    int eo = s->error_order > 0 ? s->error_order : s->m->error_order;
    int k2 = (eo < s->m->order ? eo : s->m->order) + 1;
    double bound = pow_half(rounding_bound(s, T, w, h, y, y_new, k2, nu, sig), k2);
    if (!(bound > NEGLIGIBLE))
        return;
    double en = mb_norm(s, err, y, y_new);
    if (!(bound > en))
        return;
    double target = pow_half(invariant_ratio(s->n, w, nu, sig), k2);
    if (!(target > en) || !isfinite(target))
        return;
    double nn = mb_norm(s, nu, y, y_new);
    if (!(nn > 0) || !isfinite(nn))
        return;
    for (ptrdiff_t i = 0; i < s->n; i++)
        err[i] = nu[i] * (target / nn);
}

static int ros_step(mb_stepper *s, double t, double h, const double *y, double *y_new,
                    double *err)
{
    const mb_ros_tableau *T = s->m->data;
    int rc;
    ros_work w;
    carve(s, &w);
    ros_state *st = w.st;
    if (mb_wjac_due(s, &st->wj, t, y, h, w.prev, ros_secant, &w)) {
        st->lu_ok = 0;
        if ((rc = mb_jac(s, t, y, s->f0, w.J)) != MB_OK)
            return rc;
        if ((rc = mb_dfdt(s, t, y, s->f0, w.ft)) != MB_OK)
            return rc;
        mb_wjac_taken(&st->wj, h);
    }
    if (!st->lu_ok || st->h_lu != h)
        if ((rc = factor(s, T, &w, h, y)) != MB_OK)
            return rc;
    if ((rc = stages(s, T, &w, t, h, y, y_new)) != MB_OK)
        return rc;
    if ((rc = combine(s, T, &w, h, y, y_new, err)) != MB_OK)
        return rc;
    if (s->err_wanted && !s->p->linsys)
        hold_rounding(s, T, &w, h, y, y_new, err);
    return MB_OK;
}

static int ros_accept(mb_stepper *s, double t_new, const double *y_new)
{
    (void)t_new; (void)y_new;
    ros_work w;
    carve(s, &w);
    mb_wjac_accept(&w.st->wj);
    return MB_OK;
}

const double *mb_ros_jacobian(const mb_stepper *s)
{
    ros_work w;
    carve(s, &w);
    return w.st->wj.ok && !s->p->linsys ? w.J : NULL;
}

/* Monomial form: C_k = sum_i P[k-1][i] u_i.  Hairer's form:
 * y(theta) = (1 - theta) y + theta (y_new + (1 - theta)(H2 + theta H3))
 *          = y + theta (D + H2) + theta^2 (H3 - H2) - theta^3 H3,  D = y_new - y */
static int ros_dense(mb_stepper *s, double *C)
{
    const mb_ros_tableau *T = s->m->data;
    ptrdiff_t n = s->n;
    int ns = T->s, deg = T->dense_deg;
    ros_work w;
    carve(s, &w);
    memcpy(C, s->y_last, (size_t)n * sizeof(double));
    if (T->P) {
        for (int k = 1; k <= deg; k++) {
            const double *Pk = T->P + (ptrdiff_t)(k - 1) * ns;
            double *Ck = C + (ptrdiff_t)k * n;
            for (ptrdiff_t l = 0; l < n; l++) {
                double acc = 0.0;
                for (int j = 0; j < ns; j++)
                    acc += Pk[j] * w.U[(ptrdiff_t)j * n + l];
                Ck[l] = acc;
            }
        }
        return MB_OK;
    }
    double *C1 = C + n, *C2 = C + 2 * n, *C3 = deg >= 3 ? C + 3 * n : NULL;
    for (ptrdiff_t l = 0; l < n; l++) {
        double D = 0.0, H2 = 0.0, H3 = 0.0;
        for (int j = 0; j < ns; j++) {
            double u = w.U[(ptrdiff_t)j * n + l];
            D += T->m[j] * u;
            H2 += T->d2[j] * u;
            H3 += T->d3[j] * u;
        }
        C1[l] = D + H2;
        C2[l] = H3 - H2;
        if (C3)
            C3[l] = -H3;
    }
    return MB_OK;
}

static int ros_dense_degree(const mb_stepper *s)
{
    const mb_ros_tableau *T = s->m->data;
    return T->dense_deg;
}

/* R(z) on y' = lambda y, z = h lambda: (1/gamma - z) u_i = z (1 + sum a_ij u_j)
 * + sum c_ij u_j,  R = 1 + sum m_i u_i  (= 1 + z b^T (I - z (alpha + Gamma))^-1 1) */
int mb_ros_stability(int s, double gamma, const double *a, const double *c, const double *m,
                     double zr, double zi, double *Rr, double *Ri)
{
    double complex z = zr + zi * I, u[MB_ROS_MAX_STAGES], R = 1.0;
    double complex den = 1.0 / gamma - z;
    for (int i = 0; i < s && i < MB_ROS_MAX_STAGES; i++) {
        double complex arg = 1.0, cu = 0.0;
        for (int j = 0; j < i; j++) {
            arg += a[i * s + j] * u[j];
            cu += c[i * s + j] * u[j];
        }
        u[i] = (z * arg + cu) / den;
        R += m[i] * u[i];
    }
    *Rr = creal(R);
    *Ri = cimag(R);
    return MB_OK;
}

static int ros_amplification(const mb_method *m, double zr, double zi, double *Rr, double *Ri)
{
    const mb_ros_tableau *T = m->data;
    return mb_ros_stability(T->s, T->gamma, T->a, T->c, T->m, zr, zi, Rr, Ri);
}

#define ROS_FLAGS (MB_EMBEDDED | MB_USES_F0 | MB_NEEDS_JAC | MB_IMPLICIT)
#define ROS_METHOD(var, T, name, p, q, extra)                                             \
    const mb_method var = {name, p, q, ROS_FLAGS | (extra), 3, &T,                        \
                           ros_work_size, ros_init, ros_step, ros_accept, 0, ros_dense,   \
                           ros_dense_degree, ros_amplification, 0, 0, 0, 0}

/* the W-method w2 checks its kept J by products with it (secant_stale): no MB_LINSYS */
ROS_METHOD(mb_method_ros4, mb_ros_ros4, "ros4", 4, 3, MB_MASS | MB_LINSYS);
ROS_METHOD(mb_method_ros2, mb_ros_ros2, "ros2", 2, 3, MB_FSAL | MB_LINSYS);
ROS_METHOD(mb_method_rodas4, mb_ros_rodas4, "rodas4", 4, 3, MB_MASS | MB_LINSYS);
ROS_METHOD(mb_method_w2, mb_ros_w2, "w2", 2, 1, 0);
/* w2 with the order-2 estimate of a midpoint stage (tableaus_ros.c): C only, not in
 * methods.def (its global errors exceed the tolerance far more than w2's) */
ROS_METHOD(mb_method_w2_mid, mb_ros_w2_mid, "w2_mid", 2, 2, 0);
