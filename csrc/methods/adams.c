/* Variable-step, variable-order Adams-Bashforth-Moulton PECE, orders k = 1..12,
 * in the formulation of Shampine and Gordon (DE/STEP; MATLAB's ode113).
 *
 * Formulation.  Past points t_n, t_{n-1}, ... (accepted steps only) carry the
 * modified divided differences of f
 *     phi_i(n) = psi_1(n-1) ... psi_{i-1}(n-1) f[t_n, ..., t_{n-i+1}],
 *     psi_j(n) = t_{n+1} - t_{n+1-j},
 * kept for i = 1..12.  With h = t_{n+1} - t_n, theta = (t - t_n)/h and
 *     a_j = (t_n - t_{n+1-j}) / h  (a_1 = 0),    B_1 = 1,
 *     B_{i+1}(theta) = B_i(theta) (theta + a_i) / (1 + a_i),
 *     beta_i = prod_{j<i} psi_j(n) / psi_j(n-1),  phi*_i = beta_i phi_i(n),
 * the polynomial interpolating f at the k most recent points is
 * sum_{i<=k} phi*_i B_i(theta); it is exact on the actual (variable) abscissae,
 * no fixed-step coefficient is used.  With g_i = int_0^1 B_i:
 *   P  (Adams-Bashforth, order k)  y_p = y_n + h sum_{i=1..k} g_i phi*_i
 *   E                              f_p = f(t_{n+1}, y_p)
 *   C  (Adams-Moulton, order k+1)  phi_{k+1}^p = f_p - sum_{i=1..k} phi*_i
 *                                  y_{n+1} = y_p + h g_{k+1} phi_{k+1}^p
 *   E                              f_{n+1} = f(t_{n+1}, y_{n+1})  (FSAL, history)
 * i.e. the corrector is the order-k Adams-Moulton formula with local
 * extrapolation (= Adams-Moulton of order k+1 on the points t_{n+1}, t_n, ...,
 * t_{n-k+1}).
 *
 * Error estimate (err), two parts per component:
 *   e = h (g_{k+1} - g_k) phi_{k+1}^p   DE/STEP's estimate for the order-k
 *                                       corrector (order-k minus order-(k+1));
 *   q = h g_{k+1} (f_p - f_{n+1})       the predictor's share of the PECE error:
 *                                       the corrector used f at y_p, not at the
 *                                       solution (h g_{k+1} J (y_p - y), first order);
 *   err = sign(e) sqrt(e^2 + q^2).
 * DE/STEP leaves q out; it dominates at high order once |h lambda| is not small
 * (undamped oscillator, rtol = atol = 1e-4 / 1e-6 / 1e-10: error at t = 10 of
 * 19 / 17 / 20x the tolerance without q, 0.5 / 1.8 / 9x with it, for 6-28%
 * more f evaluations).  The estimates at orders j = k-2, k-1 (with
 * phi_{j+1}^p) and k+1 (with the corrected f_{n+1}, phi_{k+2}) get the same
 * share, a factor sqrt(1 + r_j^2), r_j = |h| |J| g_{j+1}^2 / |g_{j+1} - g_j|,
 * |h| |J| ~ ||q|| / (g_{k+1} ||y_{n+1} - y_p||): high orders, whose stability
 * regions are small, pay for a large h lambda.
 *
 * Order and step (after_step): lower when the lower-order estimates are no
 * larger, raise only after k+1 steps of constant size when the order-(k+1)
 * estimate is smaller.  The run starts at order 1 in a starting phase that
 * raises the order and doubles the step after every accepted step until a
 * rejection, a lowering or order 12.  Step sizes follow DE/STEP: the target
 * error is 1/2 (in the driver's norm), the step is doubled when that allows
 * it, kept when the error is between 2^-(k+1)/2 and 1/2, and otherwise reduced
 * by a factor in [0.5, 0.9]; it does not grow right after a rejection.  A
 * rejection halves it (and from the third rejection in a row drops to order 1
 * with the factor min(0.5, sqrt(0.5 / err)), at least 0.1).
 *
 * Dense output is the corrector polynomial y_n + h int_0^theta (sum_{i<=k}
 * phi*_i B_i + phi_{k+1}^p B_{k+1}) of degree k + 1, exactly y_n at theta = 0
 * and y_{n+1} at theta = 1.
 *
 * Two f evaluations per step, at every order.  The history is committed only
 * in accept(): step() writes the new differences into a second buffer that
 * accept() makes current.  If the driver hands in a step start that is not the
 * last accepted point, or accepts a point other than the step's end (a terminal
 * event), the history restarts at order 1 from f0.  When after_step is not
 * called (fixed steps), accept() still selects the order by the same rules.
 *
 * Workspace (layout()): a state struct (scalars, abscissae, coefficient tables), then
 * 2 x 12 difference vectors, y_n, f_p and phi_{k+1}^p (27 n doubles).
 *
 * Reference: L. F. Shampine, M. K. Gordon, Computer Solution of Ordinary
 * Differential Equations: the Initial Value Problem, Freeman, 1975, ch. 5-10.
 */
#include <float.h>
#include <math.h>
#include <string.h>
#include "adams.h"
#include "carve.h"
#include "status.h"

enum { KMAX = 12, NB = KMAX + 2 };

typedef struct adams_state {
    int nh;        /* past points in the committed history (<= KMAX) */
    int cur;       /* committed difference buffer (0 or 1) */
    int k;         /* order of the last computed step */
    int phase1;    /* starting phase: raise the order and double the step */
    int ns;        /* accepted steps in a row with the same step size */
    int nfail;     /* rejections in a row */
    int pending;   /* a computed step waits for accept() */
    int selected;  /* after_step has chosen the order for the pending step */
    int stepped;   /* a step has been computed since init (dense output valid) */
    int has_kp1;   /* err_kp1 was computed */
    int nh_new, ns_new; /* nh and ns if the pending step is accepted */
    int buf;       /* buffer holding phi_i(n) of the last computed step */
    double t, h;   /* start and size of the last computed step */
    double h_acc;  /* size of the last accepted step */
    double err_km2, err_km1, err_k, err_kp1; /* weighted RMS norms of the estimates */
    double t_hist[KMAX];     /* t_n, t_{n-1}, ... */
    double a[NB], beta[NB], g[NB + 1];
    double B[NB][NB];        /* B[i][m]: theta^m coefficient of B_i, i = 1..k+2 */
} adams_state;

typedef struct adams_work {
    adams_state *st;
    ptrdiff_t n;
    double *phi[2];         /* phi_1 .. phi_KMAX of the two buffers (KMAX n each) */
    double *yn, *fp, *pk1;  /* y_n, f_p, phi_{k+1}^p (n each) */
} adams_work;

/* The one layout of the workspace: counts it (c->base NULL) and carves it. */
static size_t layout(mb_carver *c, ptrdiff_t n, adams_work *w)
{
    size_t nn = (size_t)n;
    w->n = n;
    w->st = mb_carve_bytes(c, sizeof *w->st);
    for (int b = 0; b < 2; b++)
        w->phi[b] = mb_carve(c, KMAX * nn);
    w->yn = mb_carve(c, nn);
    w->fp = mb_carve(c, nn);
    w->pk1 = mb_carve(c, nn);
    return c->off;
}

static size_t adams_work_size(const mb_problem *p, const void *data)
{
    (void)data;
    adams_work w;
    return layout(&(mb_carver){NULL, 0}, p->n, &w);
}

static adams_work workspace(mb_stepper *s)
{
    adams_work w;
    layout(&(mb_carver){s->work, 0}, s->n, &w);
    return w;
}

static adams_state *state(mb_stepper *s)
{
    return workspace(s).st;
}

static const adams_state *cstate(const mb_stepper *s)
{
    return (const adams_state *)(const void *)s->work;  /* the first part of the layout */
}

/* phi_{i+1}(.) of buffer b, i = 0..KMAX-1 */
static double *phi(const adams_work *w, int b, int i)
{
    return w->phi[b] + (ptrdiff_t)i * w->n;
}

static double weight(const mb_stepper *s, ptrdiff_t i, double y, double y_new)
{
    double ay = fmax(fabs(y), fabs(y_new));
    double sc = (s->atol ? s->atol[i] : 0.0) + (s->rtol_v ? s->rtol_v[i] : s->rtol) * ay;
    return sc > 0.0 ? 1.0 / sc : 1.0 / DBL_MIN;
}

static void reset(mb_stepper *s, adams_state *st)
{
    st->nh = 0;
    st->phase1 = 1;
    st->ns = 0;
    st->nfail = 0;
    st->pending = 0;
    st->h_acc = 0.0;
    s->order = 1;
}

static int adams_init(mb_stepper *s)
{
    adams_state *st = state(s);
    memset(st, 0, sizeof *st);
    reset(s, st);
    st->k = 1;
    return MB_OK;
}

/* history of one point (t, f(t, y)) in the committed buffer */
static int start_history(mb_stepper *s, const adams_work *wk, double t, const double *y)
{
    adams_state *st = wk->st;
    double *f = phi(wk, st->cur, 0);
    reset(s, st);
    if (s->f0_ok) {
        memcpy(f, s->f0, (size_t)s->n * sizeof(double));
    } else {
        int rc = mb_rhs(s, t, y, f);
        if (rc != MB_OK)
            return rc;
    }
    st->t_hist[0] = t;
    st->nh = 1;
    return MB_OK;
}

/* a_j, beta_j (j = 1..nh), the basis B_i and g_i = int_0^1 B_i (i = 1..kb) */
static void coefficients(adams_state *st, int kb, double h)
{
    int nh = st->nh;
    st->a[1] = 0.0;
    st->beta[1] = 1.0;
    for (int j = 2; j <= nh; j++) {
        st->a[j] = (st->t_hist[0] - st->t_hist[j - 1]) / h;
        st->beta[j] = st->beta[j - 1] * (1.0 + st->a[j - 1]) / st->a[j];
    }
    memset(st->B, 0, sizeof st->B);
    st->B[1][0] = 1.0;
    for (int i = 1; i < kb; i++) {
        double c = 1.0 / (1.0 + st->a[i]);
        for (int m = 0; m <= i; m++) {
            double lo = m > 0 ? st->B[i][m - 1] : 0.0;
            double hi = m < i ? st->B[i][m] : 0.0;
            st->B[i + 1][m] = c * (lo + st->a[i] * hi);
        }
    }
    for (int i = 1; i <= kb; i++) {
        double gi = 0.0;
        for (int m = i - 1; m >= 0; m--)
            gi += st->B[i][m] / (double)(m + 1);
        st->g[i] = gi;
    }
}

/* sqrt(1 + r_j^2): the order-j estimate grown by the predictor's share */
static double predictor_factor(const double *g, int j, double hJ)
{
    double d = fabs(g[j + 1] - g[j]);
    double r = d > 0.0 ? hJ * g[j + 1] * g[j + 1] / d : 0.0;
    return sqrt(1.0 + r * r);
}

/* weighted sums of squares of a step's estimates, for their norms */
typedef struct adams_sums {
    double sk, skm1, skm2, skp1;  /* the estimates at orders k, k-1, k-2, k+1 */
    double sd, sq;                /* the correction h g_{k+1} phi_{k+1}^p, the predictor's
                                     share h g_{k+1} (f_p - f_{n+1}) */
} adams_sums;

/* P (Adams-Bashforth of order k) into y_new, E (f_p), C (Adams-Moulton of order k + 1)
 * into y_new with the estimate err and the sums of the estimates at orders k, k-1, k-2;
 * ph[1..k]: the differences of the committed buffer */
static int predict_correct(mb_stepper *s, const adams_work *wk, const double *const *ph,
                           int k, double t, double h, const double *y, double *y_new,
                           double *err, adams_sums *sm)
{
    const adams_state *st = wk->st;
    ptrdiff_t n = s->n;
    const double *beta = st->beta, *g = st->g;
    double *yn = wk->yn, *fp = wk->fp, *pk1 = wk->pk1;
    double gb[KMAX + 1];
    int rc;
    for (int i = 1; i <= k; i++)
        gb[i] = g[i] * beta[i];
    /* P: Adams-Bashforth of order k */
    for (ptrdiff_t c = 0; c < n; c++) {
        double acc = 0.0;
        for (int i = k; i >= 1; i--)
            acc += gb[i] * ph[i][c];
        yn[c] = y[c];
        y_new[c] = y[c] + h * acc;
    }
    /* E */
    if ((rc = mb_rhs(s, t + h, y_new, fp)) != MB_OK)
        return rc;
    /* C: Adams-Moulton of order k + 1; estimates at orders k, k-1, k-2 */
    double ck = h * (g[k + 1] - g[k]);
    double ckm1 = k >= 2 ? h * (g[k] - g[k - 1]) : 0.0;
    double ckm2 = k >= 3 ? h * (g[k - 1] - g[k - 2]) : 0.0;
    double hg = h * g[k + 1];
    double sk = 0.0, skm1 = 0.0, skm2 = 0.0, sd = 0.0;
    for (ptrdiff_t c = 0; c < n; c++) {
        double v = fp[c], pkm1 = 0.0, pk = 0.0;
        for (int i = 1; i <= k; i++) {
            if (i == k - 1) pkm1 = v;
            if (i == k) pk = v;
            v -= beta[i] * ph[i][c];
        }
        pk1[c] = v;
        double yc = y_new[c] + hg * v;
        double w = weight(s, c, y[c], yc);
        double e = ck * v;
        err[c] = e;
        y_new[c] = yc;
        sk += (e * w) * (e * w);
        sd += (hg * v * w) * (hg * v * w);
        skm1 += (ckm1 * pk * w) * (ckm1 * pk * w);
        skm2 += (ckm2 * pkm1 * w) * (ckm2 * pkm1 * w);
    }
    sm->sk = sk;
    sm->skm1 = skm1;
    sm->skm2 = skm2;
    sm->sd = sd;
    return MB_OK;
}

/* E at the corrected point, the new differences phi_i(n+1) into the other buffer (nh_new
 * of them), the predictor's share of the local error into err and the sums sq and (with
 * has_kp1) skp1 */
static int new_differences(mb_stepper *s, const adams_work *wk, const double *const *ph,
                           int k, int has_kp1, int nh_new, double t, double h,
                           const double *y, const double *y_new, double *err, adams_sums *sm)
{
    const adams_state *st = wk->st;
    ptrdiff_t n = s->n;
    const double *beta = st->beta, *g = st->g, *fp = wk->fp;
    double hg = h * g[k + 1];
    int rc, nb = 1 - st->cur;
    double *fc = phi(wk, nb, 0);
    if ((rc = mb_rhs(s, t + h, y_new, fc)) != MB_OK)
        return rc;
    if (s->f1) {
        memcpy(s->f1, fc, (size_t)n * sizeof(double));
        s->f1_ok = 1;
    }
    int jmax = nh_new - 1;
    if (has_kp1 && k + 1 > jmax) jmax = k + 1;
    double *pn[KMAX + 1];
    for (int i = 1; i <= nh_new; i++)
        pn[i] = phi(wk, nb, i - 1);
    double ckp1 = has_kp1 ? h * (g[k + 2] - g[k + 1]) : 0.0;
    double skp1 = 0.0, sq = 0.0;
    for (ptrdiff_t c = 0; c < n; c++) {
        /* the predictor's share of the local error: h g_{k+1} (f_p - f_{n+1}) */
        double q = hg * (fp[c] - fc[c]);
        double qw = q * weight(s, c, y[c], y_new[c]);
        sq += qw * qw;
        err[c] = copysign(hypot(err[c], q), err[c]);  /* no overflow of e^2 beyond 1e154 */
        double v = fc[c];
        for (int j = 1; j <= jmax; j++) {
            v -= beta[j] * ph[j][c];
            if (j + 1 <= nh_new)
                pn[j + 1][c] = v;
            if (j == k + 1 && has_kp1) {
                double e = ckp1 * v * weight(s, c, y[c], y_new[c]);
                skp1 += e * e;
            }
        }
    }
    sm->skp1 = skp1;
    sm->sq = sq;
    return MB_OK;
}

static int adams_step(mb_stepper *s, double t, double h, const double *y, double *y_new,
                      double *err)
{
    adams_work wk = workspace(s);
    adams_state *st = wk.st;
    ptrdiff_t n = s->n;
    int rc;

    st->pending = 0;
    if (st->nh == 0 ||
        fabs(t - st->t_hist[0]) > 4.0 * DBL_EPSILON * (fabs(t) + fabs(h))) {
        if ((rc = start_history(s, &wk, t, y)) != MB_OK)
            return rc;
    }
    int nh = st->nh, cur = st->cur;
    int k = s->order < 1 ? 1 : s->order;
    if (k > nh) k = nh;
    if (k > KMAX) k = KMAX;
    int has_kp1 = k < KMAX && nh >= k + 1;
    int kb = has_kp1 ? k + 2 : k + 1;
    coefficients(st, kb, h);
    const double *g = st->g;
    const double *ph[KMAX + 1];
    for (int i = 1; i <= nh; i++)
        ph[i] = phi(&wk, cur, i - 1);

    adams_sums sm;
    if ((rc = predict_correct(s, &wk, ph, k, t, h, y, y_new, err, &sm)) != MB_OK)
        return rc;
    int nh_new = nh + 1 > KMAX ? KMAX : nh + 1;
    rc = new_differences(s, &wk, ph, k, has_kp1, nh_new, t, h, y, y_new, err, &sm);
    if (rc != MB_OK)
        return rc;
    /* |h| ||J|| ~ ||f_{n+1} - f_p|| / ||y_{n+1} - y_p||; the predictor term at order
     * j relative to the order-j estimate is r_j = |h| ||J|| g_{j+1}^2 / |g_{j+1} - g_j| */
    double hJ = sm.sd > 0.0 ? sqrt(sm.sq / sm.sd) / g[k + 1] : 0.0;
    double dn = n > 0 ? (double)n : 1.0;
    st->err_k = sqrt((sm.sk + sm.sq) / dn);
    st->err_km1 = k >= 2 ? sqrt(sm.skm1 / dn) * predictor_factor(g, k - 1, hJ) : 0.0;
    st->err_km2 = k >= 3 ? sqrt(sm.skm2 / dn) * predictor_factor(g, k - 2, hJ) : 0.0;
    st->err_kp1 = has_kp1 ? sqrt(sm.skp1 / dn) * predictor_factor(g, k + 1, hJ) : 0.0;
    st->has_kp1 = has_kp1;
    st->k = k;
    st->t = t;
    st->h = h;
    st->buf = cur;
    st->nh_new = nh_new;
    /* "same step size" up to 1e-6: t + h rounding changes h by ~eps |t| */
    st->ns_new = (st->h_acc != 0.0 && fabs(h - st->h_acc) <= 1e-6 * fabs(h)) ? st->ns + 1 : 1;
    if (st->ns_new > KMAX + 1) st->ns_new = KMAX + 1;
    st->pending = 1;
    st->selected = 0;
    st->stepped = 1;
    s->order = k;
    return MB_OK;
}

/* Order and step-size choice after a step with error norm err (driver's norm of
 * the order-k estimate).  Sets s->order; returns h_next / h. */
static double choose(mb_stepper *s, adams_state *st, double err, int accepted)
{
    int k = st->k;
    double sc = st->err_k > 0.0 ? err / st->err_k : 1.0;
    double ek = err, ekm1 = sc * st->err_km1, ekm2 = sc * st->err_km2;
    double ekp1 = sc * st->err_kp1;
    int knew = k;
    if (k == 2 && ekm1 <= 0.5 * ek)
        knew = 1;
    else if (k > 2 && fmax(ekm1, ekm2) <= ek)
        knew = k - 1;

    if (!accepted) {
        double fac = 0.5;
        st->phase1 = 0;
        st->nfail++;
        if (st->nfail >= 3) {
            knew = 1;
            fac = isfinite(ek) && ek > 0.0 ? sqrt(0.5 / ek) : 0.1;
            fac = fmax(0.1, fmin(0.5, fac));
        }
        s->order = knew;
        return fac;
    }
    int after_fail = st->nfail > 0;
    st->nfail = 0;
    if (st->phase1) {
        if (knew == k && k < KMAX) {
            s->order = k + 1;
            return 2.0;
        }
        st->phase1 = 0;
    }
    double e = ek;
    if (knew == k - 1) {
        e = ekm1;
    } else if (st->has_kp1 && st->ns_new >= k + 1) {
        if (k == 1) {
            if (ekp1 < 0.5 * ek) { knew = 2; e = ekp1; }
        } else if (ekm1 <= fmin(ek, ekp1)) {
            knew = k - 1; e = ekm1;
        } else if (ekp1 < ek) {
            knew = k + 1; e = ekp1;
        }
    }
    s->order = knew;
    /* DE/STEP: aim at half the tolerance, keep h unless it may double or must shrink */
    double rho = e > 0.0 ? pow(0.5 / e, 1.0 / (knew + 1)) : INFINITY;
    if (after_fail && rho > 1.0)
        return 1.0;   /* no growth right after a rejection */
    if (rho >= 2.0)
        return 2.0;
    if (rho >= 1.0)
        return 1.0;
    return fmax(0.5, fmin(0.9, rho));
}

static int adams_after_step(mb_stepper *s, double h, double err_norm, int accepted,
                            double *factor)
{
    adams_state *st = state(s);
    (void)h;
    if (!st->pending) {
        *factor = accepted ? 1.0 : 0.5;
        return MB_OK;
    }
    *factor = choose(s, st, err_norm, accepted);
    st->selected = 1;
    return MB_OK;
}

static int adams_accept(mb_stepper *s, double t_new, const double *y_new)
{
    adams_state *st = state(s);
    (void)y_new;
    if (!st->pending)
        return MB_OK;
    st->pending = 0;
    double t_end = st->t + st->h;
    if (fabs(t_new - t_end) > 4.0 * DBL_EPSILON * (fabs(t_end) + fabs(st->h))) {
        /* the driver accepted a point inside the step: restart there */
        reset(s, st);
        return MB_OK;
    }
    if (!st->selected)
        (void)choose(s, st, st->err_k, 1);
    for (int j = KMAX - 1; j >= 1; j--)
        st->t_hist[j] = st->t_hist[j - 1];
    st->t_hist[0] = t_new;
    st->cur = 1 - st->cur;
    st->nh = st->nh_new;
    st->ns = st->ns_new;
    st->h_acc = st->h;
    return MB_OK;
}

static int adams_dense_degree(const mb_stepper *s)
{
    const adams_state *st = cstate(s);
    return st->stepped ? st->k + 1 : 1;
}

static int adams_dense(mb_stepper *s, double *C)
{
    adams_work wk = workspace(s);
    adams_state *st = wk.st;
    ptrdiff_t n = s->n;
    const double *yn = wk.yn, *pk1 = wk.pk1;
    if (!st->stepped)
        return mb_fail(s, MB_ERR_ILL_INPUT, "adams: dense output requested before any step.");
    int k = st->k;
    double h = st->h;
    const double *ph[KMAX + 1];
    for (int i = 1; i <= k; i++)
        ph[i] = phi(&wk, st->buf, i - 1);
    memcpy(C, yn, (size_t)n * sizeof(double));
    for (int m = 1; m <= k + 1; m++) {
        /* y' = sum_i phi*_i B_i + phi_{k+1}^p B_{k+1}; theta^m gets h B_i[m-1] / m */
        double w[KMAX + 1];
        for (int i = m; i <= k; i++)
            w[i] = h * st->beta[i] * st->B[i][m - 1] / (double)m;
        double wk1 = h * st->B[k + 1][m - 1] / (double)m;
        double *Cm = C + (ptrdiff_t)m * n;
        for (ptrdiff_t c = 0; c < n; c++) {
            double acc = wk1 * pk1[c];
            for (int i = k; i >= m; i--)
                acc += w[i] * ph[i][c];
            Cm[c] = acc;
        }
    }
    return MB_OK;
}

const mb_method mb_method_adams = {
    .name = "adams",
    .order = KMAX,
    .error_order = KMAX,
    .flags = MB_EMBEDDED | MB_FSAL | MB_USES_F0 | MB_VARIABLE_ORDER,
    .max_dense_degree = KMAX + 1,
    .data = NULL,
    .work_size = adams_work_size,
    .init = adams_init,
    .step = adams_step,
    .accept = adams_accept,
    .after_step = adams_after_step,
    .dense = adams_dense,
    .dense_degree = adams_dense_degree,
};
