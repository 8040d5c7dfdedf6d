/* Rosenbrock-Nystrom kernel (RN paper Theorem 2.1 and eqs 43-46) over the tables of
 * tableaus_rn.c, on the second-order view q'' = a(t, q, q') of an mb_problem
 * (y = (q, q'), n = 2 nq; here q, q' are written v, v').
 *
 * The problem may carry a mass: M(t, v, v') v'' = F with the hook acc_mjac giving M,
 * M J1, M J2 and M a_t (the state-space formulation: M^, the right-hand sides of RN
 * eqs 31 and 35, and eq 46).  Without it M = I and J1, J2, a_t are the blocks of the
 * first-order Jacobian and df/dt (mb_jac, mb_dfdt: the problem's or differences).
 * Each stage solves the multiplied system of RN eqs 43-45
 *   Pi z_i = r_i,  Pi = M/gamma^2 - (h/gamma) M J2 - h^2 M J1      (one LU per step)
 *   r_i = (1/gamma) M (h a_i + sum_{j<i} c_ij z_j)
 *         + (h^2/gamma) (gam_i (M a_t + M J1 v'_n) + M J1 sum_{j<i} delta_ij z_j)
 * with a_i = a(t + alpha_i h, V_i, V'_i) at the stage point of eqs 25c-25d.  Eq 45
 * prints Q^(t_i, V_i, V'_i) where M a_i stands here: the two agree only when M does
 * not change across the step; with M^(V_i) != M^(v_n) the printed form replaces
 * a_i = M^(V_i)^-1 Q^_i by M^(v_n)^-1 Q^_i, an O(h) change of every stage that lowers
 * the order (measured in tests/test_rosenbrock_nystrom.py).  Here a_i is the
 * problem's acceleration and M its mass at t_n, which is exact multiplication of
 * eq 25f by M/gamma^2.
 *   v_new  = v + h v' + h sum mu_i z_i,  v'_new = v' + sum m_i z_i     (25a, 25b)
 *   err    = (h sum (mu_i - muhat_i) z_i, sum (m_i - mhat_i) z_i)
 * or, with error_estimate = "scaled", err <- (I - h gamma J)^-1 err (RN section 5.1's
 * remedy; Shampine): with J = [0 I; J1 J2], err_v' <- Pi^-1 (M e_v' + h gamma M J1 e_v)
 * / gamma^2 and err_v <- e_v + h gamma err_v' (one more solve with Pi).
 *
 * Jacobian: rosenbrock_nystrom evaluates it once per start point (a rejected step
 * retried from the same point keeps it and refactors Pi); w_nystrom keeps it across
 * steps under the policy of rosenbrock.c's W-methods (mb_wjac, core/method.h:
 * re-evaluated after a rejection with a Jacobian from an earlier point, when h left
 * [h_jac/4, 4 h_jac], or when it no longer predicts the change of a between the last
 * two start points, in the residual of rn_secant).
 * jacobian = "fd": forward differences of a (2 nq evaluations) and M = I.
 *
 * Dense output: the first-order stages u_i = (h (gam_i v' + sum_{j<=i} delta_ij z_j), z_i)
 * (delta_ii = gamma) are those of the same method applied to y' = (v', a) with the
 * Jacobian [0 I; J1 J2] (Theorem 2.1 is an exact rewriting), so the continuous
 * extension of the first-order table (tableaus_ros.c) applies unchanged.
 *
 * Workspace (layout()): state | M, MJ1, MJ2, Pi (nq x nq each) | ipiv | Mat, g, V, V',
 * a_i, r, sums c, sums delta, e1, e2 (nq each) | Z (s x nq) | Jfull (n x n), ft (n) |
 * y_prev, f_prev (n each). */
#include <float.h>
#include <math.h>
#include <string.h>
#include "../linalg/dense.h"
#include "carve.h"
#include "rosenbrock.h" /* mb_ros_stability */
#include "rosenbrock_nystrom.h"
#include "status.h"

typedef struct rn_state {
    mb_wjac wj;  /* when the Jacobian is evaluated (method.h) */
    int lu_ok, ident, scaled, fd;
    double h_lu;
} rn_state;

typedef struct rn_work {
    rn_state *st;
    double *M, *MJ1, *MJ2, *Pi, *Mat, *g, *V, *Vd, *fa, *r, *sc, *sd, *e1, *e2, *Z, *Jf, *ft;
    double *prev;  /* y_prev, f_prev of the secant test (mb_wjac) */
    int *ipiv;
} rn_work;

/* The one layout of the workspace: counts it (c->base NULL) and carves it. */
static size_t layout(mb_carver *c, const mb_rn_tableau *T, ptrdiff_t nq, rn_work *w)
{
    size_t q = (size_t)nq, n = 2 * q;
    w->st = mb_carve_bytes(c, sizeof *w->st);
    w->M = mb_carve(c, q * q);
    w->MJ1 = mb_carve(c, q * q);
    w->MJ2 = mb_carve(c, q * q);
    w->Pi = mb_carve(c, q * q);
    w->ipiv = mb_carve_int(c, q);
    double **vec[] = {&w->Mat, &w->g, &w->V, &w->Vd, &w->fa, &w->r, &w->sc, &w->sd, &w->e1,
                      &w->e2};
    for (size_t k = 0; k < sizeof vec / sizeof vec[0]; k++)
        *vec[k] = mb_carve(c, q);
    w->Z = mb_carve(c, (size_t)T->s * q);
    w->Jf = mb_carve(c, n * n);
    w->ft = mb_carve(c, n);
    w->prev = mb_carve(c, 2 * n);
    return c->off;
}

static size_t rn_work_size(const mb_problem *p, const void *data)
{
    rn_work w;
    return layout(&(mb_carver){NULL, 0}, data, p->nq > 0 ? p->nq : 0, &w);
}

static void carve(const mb_stepper *s, rn_work *w)
{
    layout(&(mb_carver){s->work, 0}, s->m->data, s->p->nq, w);
}

static int rn_init(mb_stepper *s)
{
    const mb_rn_tableau *T = s->m->data;
    const mb_problem *p = s->p;
    if (p->nq <= 0 || 2 * p->nq != p->n)
        return mb_fail(s, MB_ERR_NOT_SUPPORTED,
                       "%s needs a second-order problem y = (q, q') with n = 2 nq (got n = %td, "
                       "nq = %td).", s->m->name, p->n, p->nq);
    if (p->mass)
        return mb_fail(s, MB_ERR_NOT_SUPPORTED,
                       "Method '%s' does not take a constant mass matrix of the first-order "
                       "system.", s->m->name);
    rn_work w;
    carve(s, &w);
    memset(w.st, 0, sizeof *w.st);
    const mb_rn_options *o = s->method_options;
    int ee = o ? o->error_estimate : MB_RN_DEFAULT, jm = o ? o->jacobian : MB_RN_DEFAULT;
    w.st->wj.w_method = T->w_method;
    w.st->scaled = ee == MB_RN_ERR_SCALED || (ee == MB_RN_DEFAULT && T->scaled_default);
    w.st->fd = jm == MB_RN_JAC_FD || (jm == MB_RN_DEFAULT && T->w_method);
    return MB_OK;
}

/* map a callback's code (mb_jac's convention) */
static int map_rc(mb_stepper *s, int rc, const char *what, double t)
{
    if (rc == 0) return MB_OK;
    if (rc == MB_ERR_CALLBACK) return rc;
    if (rc > 0) return MB_RECOVERABLE;
    return mb_fail(s, MB_ERR_RHS_FAIL, "%s returned failure code %d at t = %.17g", what, rc, t);
}

/* M, MJ1, MJ2, Mat at (t, y) with a(t, y) = s->f0[nq..] */
static int jacobian(mb_stepper *s, rn_work *w, double t, const double *y)
{
    const mb_problem *p = s->p;
    ptrdiff_t nq = p->nq, n = p->n;
    rn_state *st = w->st;
    const double *v = y, *vd = y + nq, *a0 = s->f0 + nq;
    int rc;
    if (!st->fd && p->acc_mjac) {
        s->stats->njev++;
        rc = p->acc_mjac(t, v, vd, w->M, w->MJ1, w->MJ2, w->Mat, p->ctx);
        if ((rc = map_rc(s, rc, "the Jacobian", t)) != MB_OK) return rc;
        st->ident = 0;
        return MB_OK;
    }
    st->ident = 1;
    memset(w->M, 0, (size_t)(nq * nq) * sizeof(double));
    for (ptrdiff_t i = 0; i < nq; i++) w->M[i + nq * i] = 1.0;
    if (!st->fd) {  /* blocks of the first-order Jacobian [0 I; J1 J2] and of df/dt */
        if ((rc = mb_jac(s, t, y, s->f0, w->Jf)) != MB_OK) return rc;
        if ((rc = mb_dfdt(s, t, y, s->f0, w->ft)) != MB_OK) return rc;
        for (ptrdiff_t j = 0; j < nq; j++) {
            memcpy(w->MJ1 + nq * j, w->Jf + n * j + nq, (size_t)nq * sizeof(double));
            memcpy(w->MJ2 + nq * j, w->Jf + n * (nq + j) + nq, (size_t)nq * sizeof(double));
        }
        memcpy(w->Mat, w->ft + nq, (size_t)nq * sizeof(double));
        return MB_OK;
    }
    /* forward differences of a(t, v, v') */
    s->stats->njev++;
    double *x = w->V, *xd = w->Vd, *fa = w->fa, *tmp = w->Jf;  /* Jf: 2n scratch of mb_acc */
    memcpy(x, v, (size_t)nq * sizeof(double));
    memcpy(xd, vd, (size_t)nq * sizeof(double));
    for (int blk = 0; blk < 2; blk++) {
        double *base = blk ? xd : x, *out = blk ? w->MJ2 : w->MJ1;
        for (ptrdiff_t j = 0; j < nq; j++) {
            double b0 = base[j], d = sqrt(DBL_EPSILON * fmax(1e-5, fabs(b0)));
            base[j] = b0 + d;
            d = base[j] - b0;
            rc = mb_acc(s, t, x, xd, fa, tmp);
            base[j] = b0;
            if (rc != MB_OK) return rc;
            for (ptrdiff_t i = 0; i < nq; i++) out[i + nq * j] = (fa[i] - a0[i]) / d;
        }
    }
    if (p->dfdt) {
        if ((rc = mb_dfdt(s, t, y, s->f0, w->ft)) != MB_OK) return rc;
        memcpy(w->Mat, w->ft + nq, (size_t)nq * sizeof(double));
    } else {
        double d = sqrt(DBL_EPSILON) * fmax(1.0, fabs(t));
        volatile double tp = t + d;
        d = tp - t;
        if ((rc = mb_acc(s, tp, v, vd, fa, tmp)) != MB_OK) return rc;
        for (ptrdiff_t i = 0; i < nq; i++) w->Mat[i] = (fa[i] - a0[i]) / d;
    }
    return MB_OK;
}

/* The secant test of w_nystrom (mb_wjac_secant_fn): does the kept Jacobian still
 * predict the change of a between the last two start points?  M-weighted residual
 * M (a_n - a_p) - MJ1 dv - MJ2 dv' - Mat dt against M (a_n - a_p); scratch: e1, e2. */
static void rn_secant(mb_stepper *s, const double *y, const double *y_prev,
                      const double *f_prev, double dt, double *rr, double *ff, void *ctx)
{
    const rn_work *w = ctx;
    ptrdiff_t nq = s->p->nq;
    double *da = w->e1, *r = w->e2, r2 = 0, f2 = 0;
    for (ptrdiff_t i = 0; i < nq; i++) da[i] = s->f0[nq + i] - f_prev[nq + i];
    mb_gemv(nq, nq, 1.0, w->M, nq, da, 0.0, r);
    for (ptrdiff_t i = 0; i < nq; i++) f2 += r[i] * r[i];
    for (ptrdiff_t i = 0; i < nq; i++) {
        da[i] = y[i] - y_prev[i];
        r[i] -= w->Mat[i] * dt;
    }
    mb_gemv(nq, nq, -1.0, w->MJ1, nq, da, 1.0, r);
    for (ptrdiff_t i = 0; i < nq; i++) da[i] = y[nq + i] - y_prev[nq + i];
    mb_gemv(nq, nq, -1.0, w->MJ2, nq, da, 1.0, r);
    for (ptrdiff_t i = 0; i < nq; i++) r2 += r[i] * r[i];
    *rr = r2;
    *ff = f2;
}

/* Pi = M/gamma^2 - (h/gamma) MJ2 - h^2 MJ1, factored */
static int factor(mb_stepper *s, const mb_rn_tableau *T, rn_work *w, double h)
{
    ptrdiff_t nq = s->p->nq;
    double g = T->gamma, c0 = 1.0 / (g * g), c1 = h / g, c2 = h * h;
    for (ptrdiff_t l = 0; l < nq * nq; l++)
        w->Pi[l] = c0 * w->M[l] - c1 * w->MJ2[l] - c2 * w->MJ1[l];
    s->stats->nlu++;
    w->st->lu_ok = 0;
    if (mb_lu_factor(nq, w->Pi, nq, w->ipiv) != MB_OK)
        return MB_RECOVERABLE;
    w->st->lu_ok = 1;
    w->st->h_lu = h;
    return MB_OK;
}

/* out = M x (M = I: a copy) */
static void mass_times(const rn_work *w, ptrdiff_t nq, const double *x, double *out)
{
    if (w->st->ident)
        memcpy(out, x, (size_t)nq * sizeof(double));
    else
        mb_gemv(nq, nq, 1.0, w->M, nq, x, 0.0, out);
}

/* The stages z_i of RN eqs 43-45, Pi z_i = r_i, into w->Z. */
static int stages(mb_stepper *s, const mb_rn_tableau *T, const rn_work *w, double t, double h,
                  const double *y)
{
    ptrdiff_t nq = s->p->nq;
    int ns = T->s, rc;
    const double *v = y, *vd = y + nq;
    double gam = T->gamma;
    /* g = M a_t + M J1 v'_n (the f_t + J1 y' term of eq 25f, multiplied by M) */
    memcpy(w->g, w->Mat, (size_t)nq * sizeof(double));
    mb_gemv(nq, nq, 1.0, w->MJ1, nq, vd, 1.0, w->g);

    const double *a = s->f0 + nq;
    double *tmp = w->Jf;  /* scratch of mb_acc (2n) */
    for (int i = 0; i < ns; i++) {
        const double *ai = T->a + (ptrdiff_t)i * ns, *ci = T->c + (ptrdiff_t)i * ns,
                     *di = T->delta + (ptrdiff_t)i * ns, *thi = T->theta + (ptrdiff_t)i * ns;
        double *zi = w->Z + (ptrdiff_t)i * nq;
        if (i > 0 && T->new_f[i]) {
            for (ptrdiff_t l = 0; l < nq; l++) {
                double sp = 0.0, sv = 0.0;
                for (int j = 0; j < i; j++) {
                    double zj = w->Z[(ptrdiff_t)j * nq + l];
                    sp += thi[j] * zj;
                    sv += ai[j] * zj;
                }
                w->V[l] = v[l] + h * (T->alpha[i] * vd[l] + sp);
                w->Vd[l] = vd[l] + sv;
            }
            if ((rc = mb_acc(s, t + T->alpha[i] * h, w->V, w->Vd, w->fa, tmp)) != MB_OK)
                return rc;
            a = w->fa;
        }
        /* r = (1/gamma) M (h a + sum c_ij z_j) + (h^2/gamma) (gam_i g + MJ1 sum delta_ij z_j) */
        for (ptrdiff_t l = 0; l < nq; l++) {
            double sc = h * a[l], sd = 0.0;
            for (int j = 0; j < i; j++) {
                double zj = w->Z[(ptrdiff_t)j * nq + l];
                sc += ci[j] * zj;
                sd += di[j] * zj;
            }
            w->sc[l] = sc;
            w->sd[l] = sd;
        }
        mass_times(w, nq, w->sc, w->r);
        double f1 = h * h / gam;
        for (ptrdiff_t l = 0; l < nq; l++)
            zi[l] = w->r[l] / gam + f1 * T->gam[i] * w->g[l];
        if (i > 0)
            mb_gemv(nq, nq, f1, w->MJ1, nq, w->sd, 1.0, zi);
        if (mb_lu_solve(nq, w->Pi, nq, w->ipiv, zi, 1) != MB_OK)
            return MB_RECOVERABLE;
    }
    return MB_OK;
}

/* y_new by eqs 25a-25b and err (scaled by (I - h gamma J)^-1 when st->scaled) */
static int combine(mb_stepper *s, const mb_rn_tableau *T, const rn_work *w, double h,
                   const double *y, double *y_new, double *err)
{
    ptrdiff_t nq = s->p->nq;
    int ns = T->s;
    const double *v = y, *vd = y + nq;
    double gam = T->gamma, *e1 = w->e1, *e2 = w->e2;
    for (ptrdiff_t l = 0; l < nq; l++) {
        double p = 0, pe = 0, u = 0, ue = 0;
        for (int j = 0; j < ns; j++) {
            double zj = w->Z[(ptrdiff_t)j * nq + l];
            p += T->mu[j] * zj;
            pe += (T->mu[j] - T->muhat[j]) * zj;
            u += T->m[j] * zj;
            ue += (T->m[j] - T->mhat[j]) * zj;
        }
        y_new[l] = v[l] + h * (vd[l] + p);
        y_new[nq + l] = vd[l] + u;
        e1[l] = h * pe;
        e2[l] = ue;
        if (!isfinite(y_new[l]) || !isfinite(y_new[nq + l]) || !isfinite(e1[l]) ||
            !isfinite(e2[l]))
            return MB_RECOVERABLE;
    }
    if (w->st->scaled) {  /* err <- (I - h gamma J)^-1 err, J = [0 I; J1 J2] */
        double hg = h * gam;
        mass_times(w, nq, e2, w->r);
        mb_gemv(nq, nq, hg, w->MJ1, nq, e1, 1.0, w->r);
        for (ptrdiff_t l = 0; l < nq; l++) w->r[l] /= gam * gam;
        if (mb_lu_solve(nq, w->Pi, nq, w->ipiv, w->r, 1) != MB_OK)
            return MB_RECOVERABLE;
        for (ptrdiff_t l = 0; l < nq; l++) {
            e2[l] = w->r[l];
            e1[l] += hg * w->r[l];
        }
    }
    memcpy(err, e1, (size_t)nq * sizeof(double));
    memcpy(err + nq, e2, (size_t)nq * sizeof(double));
    return MB_OK;
}

static int rn_step(mb_stepper *s, double t, double h, const double *y, double *y_new,
                   double *err)
{
    const mb_rn_tableau *T = s->m->data;
    int rc;
    rn_work w;
    carve(s, &w);
    rn_state *st = w.st;
    if (mb_wjac_due(s, &st->wj, t, y, h, w.prev, rn_secant, &w)) {
        st->lu_ok = 0;
        if ((rc = jacobian(s, &w, t, y)) != MB_OK)
            return rc;
        mb_wjac_taken(&st->wj, h);
    }
    if (!st->lu_ok || st->h_lu != h)
        if ((rc = factor(s, T, &w, h)) != MB_OK)
            return rc;
    if ((rc = stages(s, T, &w, t, h, y)) != MB_OK)
        return rc;
    return combine(s, T, &w, h, y, y_new, err);
}

static int rn_accept(mb_stepper *s, double t_new, const double *y_new)
{
    (void)t_new; (void)y_new;
    rn_work w;
    carve(s, &w);
    mb_wjac_accept(&w.st->wj);
    return MB_OK;
}

/* continuous extension of the first-order table on u_i (see the header comment) */
static int rn_dense(mb_stepper *s, double *C)
{
    const mb_rn_tableau *T = s->m->data;
    const mb_ros_tableau *R = T->ros;
    ptrdiff_t nq = s->p->nq, n = s->n;
    int ns = T->s, deg = R->dense_deg;
    rn_work w;
    carve(s, &w);
    const double *y = s->y_last, *vd = y + nq;
    double h = s->h_last;
    memcpy(C, y, (size_t)n * sizeof(double));
    for (int k = 1; k <= deg; k++) {
        const double *Pk = R->P + (ptrdiff_t)(k - 1) * ns;
        double *Ck = C + (ptrdiff_t)k * n;
        for (ptrdiff_t l = 0; l < nq; l++) {
            double cp = 0.0, cv = 0.0;
            for (int i = 0; i < ns; i++) {
                const double *di = T->delta + (ptrdiff_t)i * ns;
                double zi = w.Z[(ptrdiff_t)i * nq + l];
                double up = T->gam[i] * vd[l] + T->gamma * zi;
                for (int j = 0; j < i; j++) up += di[j] * w.Z[(ptrdiff_t)j * nq + l];
                cp += Pk[i] * h * up;
                cv += Pk[i] * zi;
            }
            Ck[l] = cp;
            Ck[nq + l] = cv;
        }
    }
    return MB_OK;
}

static int rn_dense_degree(const mb_stepper *s)
{
    const mb_rn_tableau *T = s->m->data;
    return T->ros->dense_deg;
}

/* R(z): the velocity update on v'' = lambda v' (J1 = 0, J2 = lambda) is the method on
 * y' = lambda y: (1/gamma - z) z_i = z (1 + sum a_ij z_j) + sum c_ij z_j, R = 1 + sum m_i z_i,
 * the R(z) of rosenbrock.c with this table's a, c, m */
static int rn_amplification(const mb_method *m, double zr, double zi, double *Rr, double *Ri)
{
    const mb_rn_tableau *T = m->data;
    return mb_ros_stability(T->s, T->gamma, T->a, T->c, T->m, zr, zi, Rr, Ri);
}

#define RN_FLAGS (MB_EMBEDDED | MB_USES_F0 | MB_NEEDS_JAC | MB_IMPLICIT | MB_SECOND_ORDER)
const mb_method mb_method_rosenbrock_nystrom = {
    "rosenbrock_nystrom", 4, 3, RN_FLAGS, 3, &mb_rn_rosenbrock_nystrom, rn_work_size, rn_init,
    rn_step, rn_accept, 0, rn_dense, rn_dense_degree, rn_amplification, 0, 0, 0, 0};
const mb_method mb_method_w_nystrom = {
    "w_nystrom", 2, 1, RN_FLAGS, 3, &mb_rn_w_nystrom, rn_work_size, rn_init, rn_step,
    rn_accept, 0, rn_dense, rn_dense_degree, rn_amplification, 0, 0, 0, 0};
