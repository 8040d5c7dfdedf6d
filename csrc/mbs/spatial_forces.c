/* Spatial force elements (spatial.h): gravity, the quadratic velocity terms of the
 * Euler-parameter equations, pair elements (TSDA, RSDA, bushing components), the tire
 * against a road profile, point forces of callbacks; their derivatives in q and q'
 * and the potential energies.
 *
 * Scalar laws.  TSDA, RSDA and the bushing components act along the gradient of a
 * scalar s(ql) (l = |d|, theta = atan2(a_j.b_i, a_j.a_i), a_i.d, (b_i.a_j - a_i.b_j)/2):
 *     x = s - L0 (wrapped for the RSDA),  F = k x + c s' + fa(t),  s' = g . q',
 *     Q = -F g,  Q_q = -g (k g + c H q')^T - F H,  Q_q' = -c g g^T,  V = k x^2 / 2,
 * with g, H the gradient and Hessian of s (H q' = d s'/dq).
 *   l:      g = g_r / l, H = (H_r - g g^T) / l, with r = d.d/2 (a primitive row);
 *   theta:  g = (b g_a - a g_b) / rho, rho = a^2 + b^2, and
 *           H = [g_a g_b^T - g_b g_a^T + b H_a - a H_b] / rho - g (2 a g_a + 2 b g_b)^T / rho
 *           (a = a_j.b_i, b = a_j.a_i; H is symmetric).
 * At l = 0 the TSDA has no direction and contributes nothing (with L0 = 0 its elastic
 * force -k d is smooth there: Q_q = -k J_d^T J_d).
 *
 * Tire: P = r + A s on body i, x = P_z - h(P_x) - L0, x' = P_z' - h'(P_x) P_x',
 *     F = -(k x + c x')  (0 when unilateral and F < 0),  Q = F grad P_z,
 *     Q_q = grad P_z (dF/dq)^T + F H_z,  dF/dq = -(k x_q + c x'_q),
 *     x_q = grad P_z - h' grad P_x,
 *     x'_q = H_z q' - h'' P_x' grad P_x - h' H_x q',   Q_q' = -c grad P_z x_q^T,
 *     V = k x^2 / 2 (the potential of the vertical spring on a flat road; over the bump
 *     the force stays vertical and is not the gradient of V).
 * Road: h(x) = z0 + b(x), b the half-cylinder bump of radius r centred at x_b with its
 * axis at road level, as traced by the centre of a wheel of radius R_w rolling over it:
 *     b(x) = sqrt((R_w + r)^2 - (x - x_b)^2) - R_w   for |x - x_b| < sqrt((R_w + r)^2 - R_w^2),
 * else 0 (continuous, with a kink where the wheel first touches the bump; R_w = 0 is the
 * bare profile, whose slope is infinite at the edges).
 *
 * Callbacks: (F, n) = fn(t, q, q') at the point s of a body: Q_r += F,
 * Q_p += 2 (K_c(s) p) F_c + 2 E(p)^T n; their derivatives by central differences of
 * the callback contribution (the slow path). */
#include <float.h>
#include <math.h>
#include <string.h>
#include "assemble.h" /* mb_timefn_eval */
#include "spatial_elem.h"
#include "status.h"

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

static double wrap_pi(double x)
{
    return x - 2 * M_PI * ceil((x - M_PI) / (2 * M_PI));
}

void mb_spatial_road(const mb_spatial_force *F, double x, double *h, double *h1, double *h2)
{
    double b = 0, b1 = 0, b2 = 0;
    if (F->bump_r > 0) {
        double R = F->wheel_r + F->bump_r, dx = x - F->bump_x;
        double half = sqrt(R * R - F->wheel_r * F->wheel_r);
        if (fabs(dx) < half) {
            double s = sqrt(R * R - dx * dx);
            b = s - F->wheel_r;
            b1 = -dx / s;
            b2 = -R * R / (s * s * s);
        }
    }
    if (h) *h = F->z0 + b;
    if (h1) *h1 = b1;
    if (h2) *h2 = b2;
}

/* F = k x + c s' + fa(t), Q = -F g, ... for a scalar s with rate s' = g.q', gradient
 * s->g, Hessian s->H (with SP_FQQ) and s->Hw = H q' */
static void scalar_law(const mb_spatial_force *Fe, double t, double x, double rate,
                       const sp_row *s, unsigned what, sp_flocal *out)
{
    double fa;
    mb_timefn_eval(&Fe->fa, t, &fa, NULL, NULL);
    double F = Fe->k * x + Fe->c * rate + fa;
    if (what & SP_FQ)
        for (int a = 0; a < SP_NL; a++) out->Q[a] = -F * s->g[a];
    if (what & SP_FQQ)
        for (int a = 0; a < SP_NL; a++)
            for (int b = 0; b < SP_NL; b++)
                out->Qq[a][b] = -s->g[a] * (Fe->k * s->g[b] + Fe->c * s->Hw[b]) - F * s->H[a][b];
    if (what & SP_FQQD)
        for (int a = 0; a < SP_NL; a++)
            for (int b = 0; b < SP_NL; b++) out->Qqd[a][b] = -Fe->c * s->g[a] * s->g[b];
    if (what & SP_FV) out->V = 0.5 * Fe->k * x * x;
}

/* the row flags a force evaluation needs */
static unsigned row_flags(unsigned what)
{
    unsigned f = SP_G | SP_W;  /* g and H q' (rate s' = g.q') */
    if (what & SP_FQQ) f |= SP_H;
    return f;
}

static double dotw(const double g[SP_NL], const double w[SP_NL])
{
    double s = 0;
    for (int k = 0; k < SP_NL; k++) s += g[k] * w[k];
    return s;
}

static int tsda(const mb_spatial_force *Fe, double t, const sp_pair *p, unsigned what,
                sp_flocal *out)
{
    unsigned rf = row_flags(what);
    sp_vec Pi, Pj, d;
    sp_row r;
    sp_vec_body(p, 0, Fe->si, 1, &Pi);
    sp_vec_body(p, 1, Fe->sj, 1, &Pj);
    sp_vec_sub(&Pj, &Pi, &d);
    sp_row_zero(&r, rf);
    sp_row_dot(&r, 0.5, &d, &d, rf);
    double l = sqrt(d.v[0] * d.v[0] + d.v[1] * d.v[1] + d.v[2] * d.v[2]);
    if (!(l > 0)) {
        if ((what & SP_FQQ) && Fe->L0 == 0.0)  /* -k d is smooth: Q_q = -k J_d^T J_d */
            for (int a = 0; a < SP_NL; a++)
                for (int b = 0; b < SP_NL; b++) {
                    double s = 0;
                    for (int c = 0; c < 3; c++) s += d.J[c][a] * d.J[c][b];
                    out->Qq[a][b] = -Fe->k * s;
                }
        if (what & SP_FV) out->V = 0.5 * Fe->k * Fe->L0 * Fe->L0;
        return MB_OK;
    }
    /* s = l: g = g_r / l, H = (H_r - g g^T) / l, H q' = (H_r q' - g (g.q')) / l */
    sp_row s;
    for (int k = 0; k < SP_NL; k++) s.g[k] = r.g[k] / l;
    double rate = dotw(s.g, p->w);
    for (int k = 0; k < SP_NL; k++) s.Hw[k] = (r.Hw[k] - s.g[k] * rate) / l;
    if (what & SP_FQQ)
        for (int a = 0; a < SP_NL; a++)
            for (int b = 0; b < SP_NL; b++) s.H[a][b] = (r.H[a][b] - s.g[a] * s.g[b]) / l;
    scalar_law(Fe, t, l - Fe->L0, rate, &s, what, out);
    return MB_OK;
}

static int rsda(const mb_spatial_force *Fe, double t, const sp_pair *p, unsigned what,
                sp_flocal *out)
{
    unsigned rf = row_flags(what);
    sp_vec ai, bi, aj;
    sp_row ra, rb, s;
    sp_vec_body(p, 0, Fe->ai, 0, &ai);
    sp_vec_body(p, 0, Fe->bi, 0, &bi);
    sp_vec_body(p, 1, Fe->aj, 0, &aj);
    sp_row_zero(&ra, rf);
    sp_row_zero(&rb, rf);
    sp_row_dot(&ra, 1.0, &aj, &bi, rf);  /* a = a_j . b_i */
    sp_row_dot(&rb, 1.0, &aj, &ai, rf);  /* b = a_j . a_i */
    double a = ra.phi, b = rb.phi, rho = a * a + b * b;
    if (!(rho > 0)) return MB_OK;  /* a_j parallel to the axis: no angle */
    double theta = atan2(a, b);
    double ad = dotw(ra.g, p->w), bd = dotw(rb.g, p->w);
    for (int k = 0; k < SP_NL; k++) s.g[k] = (b * ra.g[k] - a * rb.g[k]) / rho;
    double rate = dotw(s.g, p->w), drho = 2 * (a * ad + b * bd);
    for (int k = 0; k < SP_NL; k++)
        s.Hw[k] = (ra.g[k] * bd - rb.g[k] * ad + b * ra.Hw[k] - a * rb.Hw[k]) / rho -
                  s.g[k] * drho / rho;
    if (what & SP_FQQ)
        for (int x = 0; x < SP_NL; x++)
            for (int y = 0; y < SP_NL; y++) {
                double h = (ra.g[x] * rb.g[y] - rb.g[x] * ra.g[y] + b * ra.H[x][y] -
                            a * rb.H[x][y]) / rho -
                           s.g[x] * 2 * (a * ra.g[y] + b * rb.g[y]) / rho;
                s.H[x][y] = h;
            }
    if (what & SP_FQQ)  /* symmetric in exact arithmetic: remove the rounding asymmetry */
        for (int x = 0; x < SP_NL; x++)
            for (int y = 0; y < x; y++) {
                double h = 0.5 * (s.H[x][y] + s.H[y][x]);
                s.H[x][y] = s.H[y][x] = h;
            }
    scalar_law(Fe, t, wrap_pi(theta - Fe->L0), rate, &s, what, out);
    return MB_OK;
}

static int bushing(const mb_spatial_force *Fe, double t, const sp_pair *p, unsigned what,
                   sp_flocal *out)
{
    unsigned rf = row_flags(what);
    sp_row s;
    sp_row_zero(&s, rf);
    if (Fe->type == MB_SF_BUSHING_T) {
        sp_vec u, Pi, Pj, d;
        sp_vec_body(p, 0, Fe->ai, 0, &u);
        sp_vec_body(p, 0, Fe->si, 1, &Pi);
        sp_vec_body(p, 1, Fe->sj, 1, &Pj);
        sp_vec_sub(&Pj, &Pi, &d);
        sp_row_dot(&s, 1.0, &u, &d, rf);
    } else {
        sp_vec ai, bi, aj, bj;
        sp_vec_body(p, 0, Fe->ai, 0, &ai);
        sp_vec_body(p, 0, Fe->bi, 0, &bi);
        sp_vec_body(p, 1, Fe->aj, 0, &aj);
        sp_vec_body(p, 1, Fe->bj, 0, &bj);
        sp_row_dot(&s, 0.5, &bi, &aj, rf);
        sp_row_dot(&s, -0.5, &ai, &bj, rf);
    }
    scalar_law(Fe, t, s.phi - Fe->L0, dotw(s.g, p->w), &s, what, out);
    return MB_OK;
}

static int tire(const mb_spatial_force *Fe, const sp_pair *p, unsigned what, sp_flocal *out)
{
    sp_vec P;
    sp_vec_body(p, 0, Fe->si, 1, &P);
    double h, h1, h2;
    mb_spatial_road(Fe, P.v[0], &h, &h1, &h2);
    double x = P.v[2] - h - Fe->L0;
    double xd = P.Jw[2] - h1 * P.Jw[0];
    double F = -(Fe->k * x + Fe->c * xd);
    if (what & SP_FV) out->V = 0.5 * Fe->k * x * x;
    if (Fe->unilateral && !(F > 0)) return MB_OK;
    const double *gz = P.J[2], *gx = P.J[0];
    if (what & SP_FQ)
        for (int a = 0; a < SP_NL; a++) out->Q[a] = F * gz[a];
    if (what & SP_FQQ) {
        double dF[SP_NL], Hz[SP_NL][SP_NL];
        for (int b = 0; b < SP_NL; b++) {
            double xq = gz[b] - h1 * gx[b];
            double xdq = P.Hw[2][b] - h2 * P.Jw[0] * gx[b] - h1 * P.Hw[0][b];
            dF[b] = -(Fe->k * xq + Fe->c * xdq);
        }
        memset(Hz, 0, sizeof Hz);
        for (int a = 0; a < 4; a++)
            for (int b = 0; b < 4; b++) Hz[3 + a][3 + b] = P.K[0][2][a][b];
        for (int a = 0; a < SP_NL; a++)
            for (int b = 0; b < SP_NL; b++) out->Qq[a][b] = gz[a] * dF[b] + F * Hz[a][b];
    }
    if (what & SP_FQQD)
        for (int a = 0; a < SP_NL; a++)
            for (int b = 0; b < SP_NL; b++) out->Qqd[a][b] = -Fe->c * gz[a] * (gz[b] - h1 * gx[b]);
    return MB_OK;
}

int sp_force_at(const mb_spatial_model *m, int k, double t, const double *q, const double *qd,
                unsigned what, sp_flocal *out)
{
    const mb_spatial_force *Fe = &m->forces[k];
    sp_pair p;
    int rc = sp_pair_gather(m, Fe->i, Fe->j, q, qd, &p);
    if (rc != MB_OK) return rc;
    memset(out, 0, sizeof *out);
    switch (Fe->type) {
    case MB_SF_TSDA: return tsda(Fe, t, &p, what, out);
    case MB_SF_RSDA: return rsda(Fe, t, &p, what, out);
    case MB_SF_BUSHING_T:
    case MB_SF_BUSHING_R: return bushing(Fe, t, &p, what, out);
    case MB_SF_TIRE: return tire(Fe, &p, what, out);
    default: return MB_ERR_ILL_INPUT;
    }
}

/* ---------------------------------------------------------------- callbacks */

/* Q += generalized force of the callback forces at (t, q, q') */
static int callbacks_add(const mb_spatial_model *m, double t, const double *q, const double *qd,
                         double *Q)
{
    for (int k = 0; k < m->ncb; k++) {
        const mb_spatial_cbforce *cb = &m->cb[k];
        double out[6];
        int rc = cb->fn(cb->ud, t, q, qd, out);
        if (rc != 0) return rc;
        for (int c = 0; c < 6; c++)
            if (!isfinite(out[c])) return MB_ERR_NONFINITE;
        int o = 7 * cb->body;
        sp_pair p;
        sp_vec P;
        sp_pair_gather(m, cb->body, -1, q, NULL, &p);
        sp_vec_body(&p, 0, cb->s, 1, &P);
        double E[3][4];
        sp_E(q + o + 3, E);
        for (int c = 0; c < 3; c++) Q[o + c] += out[c];
        for (int a = 0; a < 4; a++) {
            double s = 0;
            for (int c = 0; c < 3; c++) s += P.J[c][3 + a] * out[c] + 2 * E[c][a] * out[3 + c];
            Q[o + 3 + a] += s;
        }
    }
    return MB_OK;
}

/* central differences of the callback forces in q (wrt 0) or q' (wrt 1), added to out */
static int callbacks_fd(const mb_spatial_model *m, double t, const double *q, const double *qd,
                        int wrt, double *out, ptrdiff_t ld)
{
    ptrdiff_t nq = 7 * (ptrdiff_t)m->nb;
    double buf[3 * nq + 1];  /* VLA: keeps the kernel allocation-free */
    double *x = buf, *Qp = buf + nq, *Qm = buf + 2 * nq;
    const double *base = wrt == 0 ? q : qd;
    memcpy(x, base, (size_t)nq * sizeof(double));
    for (ptrdiff_t c = 0; c < nq; c++) {
        double h = cbrt(DBL_EPSILON) * fmax(1.0, fabs(base[c]));
        int rc;
        memset(Qp, 0, (size_t)nq * sizeof(double));
        memset(Qm, 0, (size_t)nq * sizeof(double));
        x[c] = base[c] + h;
        rc = callbacks_add(m, t, wrt == 0 ? x : q, wrt == 0 ? qd : x, Qp);
        if (rc != 0) return rc;
        x[c] = base[c] - h;
        rc = callbacks_add(m, t, wrt == 0 ? x : q, wrt == 0 ? qd : x, Qm);
        if (rc != 0) return rc;
        x[c] = base[c];
        for (ptrdiff_t r = 0; r < nq; r++) out[r + ld * c] += (Qp[r] - Qm[r]) / (2 * h);
    }
    return MB_OK;
}

/* ---------------------------------------------------------------- kernels */

int mb_spatial_forces(double t, const double *q, const double *qd,
                      double *Q, void *ctx)
{
    const mb_spatial_model *m = ctx;
    sp_flocal L;
    for (int b = 0; b < m->nb; b++) {
        double mass = m->body[7 * b], Qp[4];
        for (int c = 0; c < 3; c++) Q[7 * b + c] = mass * m->g[c];
        sp_body_qv(m, b, q, qd, Qp, NULL, NULL);
        for (int a = 0; a < 4; a++) Q[7 * b + 3 + a] = Qp[a];
    }
    for (int k = 0; k < m->nf; k++) {
        const mb_spatial_force *Fe = &m->forces[k];
        int rc = sp_force_at(m, k, t, q, qd, SP_FQ, &L);
        if (rc != MB_OK) return rc;
        for (int c = 0; c < SP_NL; c++) {
            int gc = sp_gcol(Fe->i, Fe->j, c);
            if (gc >= 0) Q[gc] += L.Q[c];
        }
    }
    if (m->ncb > 0) return callbacks_add(m, t, q, qd, Q);
    return MB_OK;
}

static int forces_deriv(const mb_spatial_model *m, double t, const double *q, const double *qd,
                        int wrt, double *out, ptrdiff_t ld)
{
    sp_flocal L;
    ptrdiff_t nq = 7 * (ptrdiff_t)m->nb;
    sp_zero_block(nq, nq, out, ld);
    for (int b = 0; b < m->nb; b++) {
        double D[4][4];
        ptrdiff_t o = 7 * b + 3;
        if (wrt == 0)
            sp_body_qv(m, b, q, qd, NULL, D, NULL);
        else
            sp_body_qv(m, b, q, qd, NULL, NULL, D);
        for (int a = 0; a < 4; a++)
            for (int c = 0; c < 4; c++) out[o + a + ld * (o + c)] = D[a][c];
    }
    for (int k = 0; k < m->nf; k++) {
        const mb_spatial_force *Fe = &m->forces[k];
        int rc = sp_force_at(m, k, t, q, qd, wrt == 0 ? SP_FQQ : SP_FQQD, &L);
        if (rc != MB_OK) return rc;
        for (int b = 0; b < SP_NL; b++) {
            int gb = sp_gcol(Fe->i, Fe->j, b);
            if (gb < 0) continue;
            for (int a = 0; a < SP_NL; a++) {
                int ga = sp_gcol(Fe->i, Fe->j, a);
                if (ga >= 0) out[ga + ld * gb] += wrt == 0 ? L.Qq[a][b] : L.Qqd[a][b];
            }
        }
    }
    if (m->ncb > 0) return callbacks_fd(m, t, q, qd, wrt, out, ld);
    return MB_OK;
}

int mb_spatial_forces_q(double t, const double *q, const double *qd,
                        double *out, ptrdiff_t ld, void *ctx)
{
    const mb_spatial_model *m = ctx;
    return forces_deriv(m, t, q, qd, 0, out, ld);
}

int mb_spatial_forces_qd(double t, const double *q, const double *qd,
                         double *out, ptrdiff_t ld, void *ctx)
{
    const mb_spatial_model *m = ctx;
    return forces_deriv(m, t, q, qd, 1, out, ld);
}

int mb_spatial_energy(double t, const double *q, const double *qd,
                      double *kinetic, double *potential, void *ctx)
{
    const mb_spatial_model *m = ctx;
    double T = 0, V = 0;
    sp_flocal L;
    for (int b = 0; b < m->nb; b++) {
        const double *x = m->body + 7 * b, *r = q + 7 * b, *v = qd + 7 * b;
        double G[3][4], w[3], J[3][3];
        J[0][0] = x[1]; J[1][1] = x[2]; J[2][2] = x[3];
        J[0][1] = J[1][0] = x[4];
        J[0][2] = J[2][0] = x[5];
        J[1][2] = J[2][1] = x[6];
        sp_G(r + 3, G);
        for (int c = 0; c < 3; c++)  /* w = omega' / 2 = G p' */
            w[c] = G[c][0] * v[3] + G[c][1] * v[4] + G[c][2] * v[5] + G[c][3] * v[6];
        double rot = 0;
        for (int c = 0; c < 3; c++)
            rot += w[c] * (J[c][0] * w[0] + J[c][1] * w[1] + J[c][2] * w[2]);
        T += 0.5 * x[0] * (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]) + 2 * rot;
        V -= x[0] * (m->g[0] * r[0] + m->g[1] * r[1] + m->g[2] * r[2]);
    }
    for (int k = 0; k < m->nf; k++) {
        int rc = sp_force_at(m, k, t, q, qd, SP_FV, &L);
        if (rc != MB_OK) return rc;
        V += L.V;
    }
    if (kinetic) *kinetic = T;
    if (potential) *potential = V;
    return MB_OK;
}

/* ---------------------------------------------------------------- step bound */

/* h > 0 with v h + a h^2 / 2 = d (d > 0): the time to travel d at speed v >= 0 under
 * the acceleration a (> -v^2 / (2 d): it arrives); +inf when it never arrives */
static double reach_time(double d, double v, double a)
{
    double disc = v * v + 2.0 * a * d;
    if (disc < 0.0) return INFINITY;
    double den = v + sqrt(disc);
    return den > 0 ? 2.0 * d / den : INFINITY;
}

/* A step must not carry a wheel over the whole bump unseen (the road is flat on both
 * sides, so a method that samples only the ends of a step, and whose error estimate
 * sees nothing there, would step across it): with x, v, a the position, velocity and
 * acceleration along x of the tire's point and [x_b - w, x_b + w] the bump, a step
 * that starts before the bump (moving towards it) ends at most a quarter of the bump
 * into it, and a step that starts on the bump covers at most a quarter of it.  After
 * the bump (moving away) there is no bound.  The bound is the continuous-collision
 * idea of the planar contacts (contact.c) for a road feature. */
static double tire_step_bound(const mb_spatial_force *Fe, const sp_pair *p, const double *acc)
{
    if (!(Fe->bump_r > 0)) return INFINITY;
    sp_vec P;
    sp_vec_body(p, 0, Fe->si, 1, &P);
    double x = P.v[0], v = P.Jw[0], a = P.wHw[0];
    for (int k = 0; k < SP_NL; k++) a += P.J[0][k] * acc[k];
    double R = Fe->wheel_r + Fe->bump_r;
    double w = sqrt(R * R - Fe->wheel_r * Fe->wheel_r);
    double lo = Fe->bump_x - w, hi = Fe->bump_x + w, quarter = 0.5 * w;
    if (v < 0) {  /* mirror: moving towards -x */
        double t_ = lo;
        lo = -hi;
        hi = -t_;
        x = -x;
        v = -v;
        a = -a;
    }
    if (x >= hi) return INFINITY;                      /* past the bump */
    double d = x < lo ? lo - x + quarter : quarter;    /* to a quarter into it */
    return reach_time(d, v, a);
}

int mb_spatial_step_bound(double t, const double *q, const double *qd,
                          const double *qdd, double *h_max, void *ctx)
{
    const mb_spatial_model *m = ctx;
    (void)t;
    double h = INFINITY;
    for (int k = 0; k < m->nf; k++) {
        const mb_spatial_force *Fe = &m->forces[k];
        if (Fe->type != MB_SF_TIRE || !(Fe->bump_r > 0)) continue;
        sp_pair p, pa;
        int rc = sp_pair_gather(m, Fe->i, Fe->j, q, qd, &p);
        if (rc == MB_OK) rc = sp_pair_gather(m, Fe->i, Fe->j, q, qdd, &pa);
        if (rc != MB_OK) return rc;
        double hk = tire_step_bound(Fe, &p, pa.w);
        if (hk < h) h = hk;
    }
    *h_max = h;
    return MB_OK;
}
