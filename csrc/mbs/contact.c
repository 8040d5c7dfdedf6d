/* Penalty contact (LLM paper section 3, eqs 17-21) as a pair element (assemble.h).
 *
 * Gap functions (delta > 0: penetration, the LLM's Psi of eq 19):
 *   MB_FORCE_CONTACT_LINE     circle of radius ri (0: a point) at si on body i against
 *                             the ground line through p0 with unit normal nrm:
 *                             delta = ri - (P_i - p0) . nrm.
 *                             (If i is the ground and j a body, the circle (sj, rj)
 *                             on body j is used instead.)
 *   MB_FORCE_CONTACT_CIRCLES  circles (si, ri) on i and (sj, rj) on j (either may be
 *                             the ground): delta = ri + rj - |P_j - P_i|.
 * Law:  F = K delta^e + cd delta'  for delta > 0, else 0,
 *       clamped to F >= 0: when the damping term would make the contact pull
 *       (F < 0, separating fast) the force is zero, as are its derivatives.
 * The force acts along the gap gradient, Q = -F d(delta)/dq (it pushes the bodies
 * apart); potential V = K delta^(e+1) / (e+1) for delta > 0 (damping is not part of it).
 * Derivatives:  Q_q = -g (K e delta^(e-1) g + cd H qd)' - F H,  Q_qd = -cd g g',
 * with g = d(delta)/dql and H = d^2(delta)/dql^2.
 * At delta = 0 the law is continuous (e > 0) but Q_q jumps; exponents e < 1
 * make Q_q unbounded at first contact.
 */
#include <math.h>
#include <string.h>
#include "assemble.h"
#include "status.h"

/* gap, its gradient g and (when H != NULL) Hessian H in local coordinates */
static void gap_geom(const mb_planar_force *F, const mb_pair *p, double *delta, double g[6],
                     double H[6][6])
{
    memset(g, 0, 6 * sizeof(double));
    if (H) memset(H, 0, 36 * sizeof(double));
    if (F->type == MB_FORCE_CONTACT_LINE) {
        int o = (F->i >= 0 || F->j < 0) ? 0 : 3;
        const double *s = o == 0 ? F->si : F->sj;
        double rad = o == 0 ? F->ri : F->rj;
        double c = o == 0 ? p->ci : p->cj, sn = o == 0 ? p->si : p->sj;
        double u[2] = {c * s[0] - sn * s[1], sn * s[0] + c * s[1]};
        const double *n = F->nrm;
        double P[2] = {p->q[o] + u[0], p->q[o + 1] + u[1]};
        *delta = rad - ((P[0] - F->p0[0]) * n[0] + (P[1] - F->p0[1]) * n[1]);
        g[o] = -n[0];
        g[o + 1] = -n[1];
        g[o + 2] = -(n[0] * -u[1] + n[1] * u[0]);  /* -n . perp(u) */
        if (H) H[o + 2][o + 2] = n[0] * u[0] + n[1] * u[1];
    } else {
        double l, gl[6], Hl[6][6];
        mb_point_pair_geom(p, F->si, F->sj, &l, gl, H ? Hl : NULL);
        *delta = F->ri + F->rj - l;
        for (int a = 0; a < 6; a++) g[a] = -gl[a];
        if (H)
            for (int a = 0; a < 6; a++)
                for (int b = 0; b < 6; b++) H[a][b] = -Hl[a][b];
    }
}

double mb_contact_gap(const mb_planar_force *F, const mb_pair *p)
{
    double delta, g[6];
    gap_geom(F, p, &delta, g, NULL);
    return delta;
}

int mb_contact_eval(const mb_planar_force *F, double t, const mb_pair *p, unsigned what,
                    mb_force_local *out)
{
    double delta, g[6], H[6][6];
    int need_h = (what & MB_FL_QQ) != 0;
    gap_geom(F, p, &delta, g, need_h ? H : NULL);
    if (!(delta > 0))
        return MB_OK;
    double dd = 0;
    for (int m = 0; m < 6; m++) dd += g[m] * p->qd[m];
    double e = F->e > 0 ? F->e : 1.0;
    double de = pow(delta, e);
    if (what & MB_FL_V)
        out->V = F->K * de * delta / (e + 1);
    double f = F->K * de + F->cd * dd;
    if (!(f > 0))
        return MB_OK;  /* damping would pull: clamped to zero */
    if (what & MB_FL_Q)
        for (int a = 0; a < 6; a++) out->Q[a] = -f * g[a];
    if (what & MB_FL_QQ) {
        double ks = F->K * e * pow(delta, e - 1), dF[6];
        for (int b = 0; b < 6; b++) {
            double s = 0;
            for (int m = 0; m < 6; m++) s += H[b][m] * p->qd[m];
            dF[b] = ks * g[b] + F->cd * s;
        }
        for (int a = 0; a < 6; a++)
            for (int b = 0; b < 6; b++) out->Qq[a][b] = -g[a] * dF[b] - f * H[a][b];
    }
    if (what & MB_FL_QQD)
        for (int a = 0; a < 6; a++)
            for (int b = 0; b < 6; b++) out->Qqd[a][b] = -F->cd * g[a] * g[b];
    return MB_OK;
}

/* ---- continuous collision detection: the step bound of one contact ----
 *
 * A penalty contact is a switching event located from the sign of its gap at the
 * ends of a step (driver.h).  A step that enters a contact and leaves it again
 * has the same sign at both ends and passes through unseen: two circles whose
 * centres pass each other within one step (the gap R - |P_j - P_i| changes sign
 * twice), or a point that dips below a line and comes back.  The bound keeps
 * every step short enough that the end of the step lies inside the contact
 * whenever the contact is entered, but not deep inside.
 *
 * Model: over the step the relative motion of the two contact points is taken
 * with constant acceleration, d(tau) = d0 + v tau + a tau^2 / 2 (velocity
 * r' + omega perp(A s), acceleration r'' + alpha perp(A s) - omega^2 A s of each
 * point, from q, q', q'' at the start).  The computed step of a method that does
 * not see the contact is a free flight, which this model follows to O(tau^3)
 * (exactly for bodies under gravity alone).  The acceleration bends the path in or
 * out of the contact and is part of the model, not a margin.
 *
 * Circles (R = ri + rj > 0), separated: the local minima of |d(tau)|^2 are the
 * zeros of the cubic d . d' where it turns from negative to positive (at most
 * two, found by bisection on the cubic's increasing branches).  The first one,
 * tau*, at which |d| < (1 + MARGIN) R is the closest point of the first pass
 * through the contact; until tau* the distance decreases.  The step ends at tau*,
 * or earlier where |d| has fallen to (1 - DEPTH) R: a step ending before the entry
 * touches nothing, one ending after it ends inside, at most DEPTH R deep.  (Without
 * acceleration and the depth limit tau* = -d0.v / v.v, the middle (tau1 + tau2) / 2
 * of the entry and exit times of the straight path.  The depth limit keeps a step
 * from ending at the centres' crossing of a head-on pass, where the contact force
 * has no direction: an integrator without switching events, whose error test sees
 * only f at the step's end (BDF), accepted such steps, and the balls passed.)  The
 * margin catches near misses: a pass within MARGIN R of the contact also ends a
 * step at its closest point.  The bound is never below the time the points need to
 * cover half the clearance c = |d0| - R at speed |v| + |a| tau (nothing can be
 * touched before), so that repeated near misses cannot shrink the steps towards
 * zero.  No contact ahead: no bound.  Circles in contact: the relative displacement
 * per step is at most IN_CONTACT max(|d|, DEPTH R), so that no step jumps through
 * the centre (to the far side of the gap) unseen.
 *
 * Lines (a circle or point against the half-plane): the half-plane has no far
 * side, and a point that moves into it under an acceleration towards it (or none)
 * stays in: it cannot pass through.  A circle's step still ends at most DEPTH r
 * deep (the first time the clearance c0 + vn tau + an tau^2 / 2 reaches -DEPTH r):
 * an implicit step far into a stiff contact can come back out with its velocity
 * reversed (the trapezoidal rule did, losing 2.7 J unseen).  Otherwise (a point,
 * r = 0, has no depth scale; or a shallower dip) only a point whose normal velocity
 * reverses within the step (approaching the line, accelerating away from it: a point
 * on a rotating body, or a body pushed back by a spring) can dip in and out, and
 * then the step ends at its lowest point tau* = -vn / an when the clearance there is
 * below MARGIN r.  In contact: no bound.
 *
 * Cost: a few dozen flops per contact and step (a bisection of up to 200 steps on
 * a cubic when a pass is ahead), without evaluations of f. */

static const double CCD_MARGIN = 0.1;     /* near misses within MARGIN R end a step */
static const double CCD_DEPTH = 0.25;     /* a step ends at most DEPTH R deep in a contact */
static const double CCD_IN_CONTACT = 0.5; /* relative displacement per step in contact, as a
                                           * fraction of max(|d|, DEPTH R) */

static double dot2(const double a[2], const double b[2]) { return a[0] * b[0] + a[1] * b[1]; }

/* h > 0 with v h + a h^2 / 2 = c (v, a >= 0, c > 0); +inf when v = a = 0 */
static double travel_time(double c, double v, double a)
{
    double den = v + sqrt(v * v + 2.0 * a * c);
    return den > 0 ? 2.0 * c / den : INFINITY;
}

static double cubic(const double k[4], double x) { return k[0] + x * (k[1] + x * (k[2] + x * k[3])); }

/* the zero of the cubic k in [lo, hi] where it increases from negative to positive */
static double bisect(const double k[4], double lo, double hi)
{
    for (int it = 0; it < 200 && hi - lo > 1e-12 * hi; it++) {
        double mid = 0.5 * (lo + hi);
        if (cubic(k, mid) < 0.0)
            lo = mid;
        else
            hi = mid;
    }
    return 0.5 * (lo + hi);
}

/* times tau > 0 of the local minima of |d0 + v tau + a tau^2 / 2|^2, in increasing
 * order: the zeros of p = d . d' where p turns from negative to positive; returns
 * their number (0, 1 or 2) */
static int distance_minima(const double d0[2], const double v[2], const double a[2], double tm[2])
{
    double k[4] = {dot2(d0, v), dot2(v, v) + dot2(d0, a), 1.5 * dot2(v, a), 0.5 * dot2(a, a)};
    int n = 0;
    if (!(k[3] > 0.0)) {  /* no acceleration: p is linear */
        if (k[0] < 0.0 && k[1] > 0.0)
            tm[n++] = -k[0] / k[1];
        return n;
    }
    /* all real zeros lie within Fujiwara's bound */
    double hi = 2.0 * fmax(fabs(k[2] / k[3]), fmax(sqrt(fabs(k[1] / k[3])),
                                                   cbrt(fabs(k[0] / (2.0 * k[3])))));
    /* p increases on (-inf, c1] and [c2, inf), c1 < c2 the zeros of p' (when real) */
    double disc = k[2] * k[2] - 3.0 * k[1] * k[3], c1 = -INFINITY, c2 = -INFINITY;
    if (disc > 0.0) {
        double w = -(k[2] + copysign(sqrt(disc), k[2]));
        double x1 = w / (3.0 * k[3]), x2 = k[1] / w;
        c1 = fmin(x1, x2);
        c2 = fmax(x1, x2);
    }
    if (c1 > 0.0 && k[0] < 0.0 && cubic(k, c1) > 0.0)
        tm[n++] = bisect(k, 0.0, c1);
    double lo = fmax(0.0, c2);
    if (cubic(k, lo) < 0.0 && hi > lo)
        tm[n++] = bisect(k, lo, hi);
    return n;
}

/* the first root tau > 0 of a tau^2 + b tau + c (c > 0); +inf when there is none */
static double first_root(double a, double b, double c)
{
    if (a == 0.0)
        return b < 0.0 ? c / -b : INFINITY;
    double disc = b * b - 4.0 * a * c;
    if (disc < 0.0)
        return INFINITY;
    double w = -0.5 * (b + copysign(sqrt(disc), b));  /* roots w / a and c / w */
    double r1 = w / a, r2 = w != 0.0 ? c / w : INFINITY;
    double lo = fmin(r1, r2), hi = fmax(r1, r2);
    return lo > 0.0 ? lo : hi > 0.0 ? hi : INFINITY;
}

/* d = d0 + v tau + a tau^2 / 2 */
static void displaced(const double d0[2], const double v[2], const double a[2], double tau,
                      double d[2])
{
    d[0] = d0[0] + tau * (v[0] + 0.5 * tau * a[0]);
    d[1] = d0[1] + tau * (v[1] + 0.5 * tau * a[1]);
}

/* The time in (0, tm] at which |d(tau)| first falls to rho, tm a local minimum of
 * |d| with the first entry into |d| < (1 + MARGIN) R on its way (|d| decreases from
 * the last local maximum before tm, and nowhere before is it as small): tm when
 * |d(tm)| >= rho, else the crossing, by bisection. */
static double depth_time(const double d0[2], const double v[2], const double a[2], double tm,
                         double rho)
{
    double d[2];
    displaced(d0, v, a, tm, d);
    if (dot2(d, d) >= rho * rho)
        return tm;
    double lo = 0.0, hi = tm;
    for (int it = 0; it < 200 && hi - lo > 1e-12 * hi; it++) {
        double mid = 0.5 * (lo + hi);
        displaced(d0, v, a, mid, d);
        if (dot2(d, d) > rho * rho)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

/* world position, velocity and acceleration of the point s on pair member o (0: i,
 * 3: j); p holds q and q', acc the local q'' */
static void point_motion(const mb_pair *p, const double acc[6], int o, const double s[2],
                         double P[2], double V[2], double A[2])
{
    double c = o == 0 ? p->ci : p->cj, sn = o == 0 ? p->si : p->sj;
    double u[2] = {c * s[0] - sn * s[1], sn * s[0] + c * s[1]};
    double w = p->qd[o + 2], al = acc[o + 2];
    P[0] = p->q[o] + u[0];
    P[1] = p->q[o + 1] + u[1];
    V[0] = p->qd[o] - w * u[1];
    V[1] = p->qd[o + 1] + w * u[0];
    A[0] = acc[o] - al * u[1] - w * w * u[0];
    A[1] = acc[o + 1] + al * u[0] - w * w * u[1];
}

double mb_contact_step_bound(const mb_planar_force *F, const mb_pair *p, const double acc[6])
{
    if (F->type == MB_FORCE_CONTACT_LINE) {
        int o = (F->i >= 0 || F->j < 0) ? 0 : 3;
        double r = o == 0 ? F->ri : F->rj, P[2], V[2], A[2];
        point_motion(p, acc, o, o == 0 ? F->si : F->sj, P, V, A);
        double x[2] = {P[0] - F->p0[0], P[1] - F->p0[1]};
        double c0 = dot2(x, F->nrm) - r, vn = dot2(V, F->nrm), an = dot2(A, F->nrm);
        if (!(c0 > 0.0))
            return INFINITY;  /* in contact */
        double h_safe = travel_time(0.5 * c0, fabs(vn), fabs(an));
        /* a circle: reaching the depth DEPTH r */
        double td = r > 0.0 ? first_root(0.5 * an, vn, c0 + CCD_DEPTH * r) : INFINITY;
        if (td < INFINITY)
            return fmax(td, h_safe);
        /* a point dipping in and out: its lowest clearance c0 - vn^2 / (2 an) */
        if (vn < 0.0 && an > 0.0 && c0 + 0.5 * vn * (-vn / an) < CCD_MARGIN * r)
            return fmax(-vn / an, h_safe);
        return INFINITY;
    }
    double R = F->ri + F->rj;
    if (!(R > 0.0))
        return INFINITY;  /* two points never touch */
    double Pi[2], Vi[2], Ai[2], Pj[2], Vj[2], Aj[2];
    point_motion(p, acc, 0, F->si, Pi, Vi, Ai);
    point_motion(p, acc, 3, F->sj, Pj, Vj, Aj);
    double d0[2] = {Pj[0] - Pi[0], Pj[1] - Pi[1]}, v[2] = {Vj[0] - Vi[0], Vj[1] - Vi[1]},
           a[2] = {Aj[0] - Ai[0], Aj[1] - Ai[1]};
    double dist = sqrt(dot2(d0, d0)), vs = sqrt(dot2(v, v)), as = sqrt(dot2(a, a));
    if (!(dist > R))
        return travel_time(CCD_IN_CONTACT * fmax(dist, CCD_DEPTH * R), vs, as);
    double tm[2];
    int nm = distance_minima(d0, v, a, tm);
    for (int k = 0; k < nm; k++) {
        double d[2];
        displaced(d0, v, a, tm[k], d);
        if (!(dot2(d, d) < (1.0 + CCD_MARGIN) * (1.0 + CCD_MARGIN) * R * R))
            continue;
        /* end no deeper than DEPTH R: a step must not end near the centres' crossing
         * (where the direction of the contact force is undefined) */
        double te = depth_time(d0, v, a, tm[k], R * (1.0 - CCD_DEPTH));
        return fmax(te, travel_time(0.5 * (dist - R), vs, as));
    }
    return INFINITY;
}
