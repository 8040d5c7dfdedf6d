#include <float.h>
#include <math.h>
#include "events.h"
#include "status.h"

int mb_event_active(double g_old, double g_new, int dir)
{
    int up = g_old <= 0.0 && g_new >= 0.0 && !(g_old == 0.0 && g_new == 0.0);
    int down = g_old >= 0.0 && g_new <= 0.0 && !(g_old == 0.0 && g_new == 0.0);
    if (dir > 0) return up;
    if (dir < 0) return down;
    return up || down;
}

static int gval(mb_event_fn g, void *ctx, ptrdiff_t i, mb_dense_fn y_at, void *dctx,
                double t0, double h, double th, double *gbuf, double *ybuf, double *out)
{
    int rc = y_at(th, ybuf, dctx);
    if (rc != 0)
        return rc;
    rc = g(t0 + th * h, ybuf, gbuf, ctx);
    *out = gbuf[i];
    if (rc == 0 && !isfinite(*out))
        return MB_ERR_EVENT_FAIL;
    return rc;
}

int mb_event_locate(mb_event_fn g, void *ctx, ptrdiff_t i, mb_dense_fn y_at, void *dctx,
                    double t0, double h, double th_hi, double g_lo, double g_hi, double *gbuf,
                    double *ybuf, double *theta)
{
    /* Brent's zero finder (Brent 1973, ch. 4) in the variable theta */
    double a = 0.0, b = th_hi, fa = g_lo, fb = g_hi;
    double scale = fmax(fabs(t0), fabs(t0 + h));
    double tol_t = 4.0 * DBL_EPSILON * fmax(scale, fabs(h)) + 1e-300;
    double tol = tol_t / fabs(h);
    if (fa == 0.0) { *theta = a; return 0; }
    if (fb == 0.0) { *theta = b; return 0; }
    double c = a, fc = fa, d = b - a, e = d;
    for (int it = 0; it < 200; it++) {
        if ((fb > 0) == (fc > 0)) {
            c = a; fc = fa; d = b - a; e = d;
        }
        if (fabs(fc) < fabs(fb)) {
            a = b; b = c; c = a;
            fa = fb; fb = fc; fc = fa;
        }
        double m = 0.5 * (c - b);
        if (fabs(m) <= tol || fb == 0.0)
            break;
        if (fabs(e) >= tol && fabs(fa) > fabs(fb)) {
            double p, q, r, s = fb / fa;
            if (a == c) {
                p = 2.0 * m * s;
                q = 1.0 - s;
            } else {
                q = fa / fc;
                r = fb / fc;
                p = s * (2.0 * m * q * (q - r) - (b - a) * (r - 1.0));
                q = (q - 1.0) * (r - 1.0) * (s - 1.0);
            }
            if (p > 0) q = -q; else p = -p;
            if (2.0 * p < fmin(3.0 * m * q - fabs(tol * q), fabs(e * q))) {
                e = d;
                d = p / q;
            } else {
                d = m;
                e = m;
            }
        } else {
            d = m;
            e = m;
        }
        a = b;
        fa = fb;
        b += fabs(d) > tol ? d : (m > 0 ? tol : -tol);
        int rc = gval(g, ctx, i, y_at, dctx, t0, h, b, gbuf, ybuf, &fb);
        if (rc != 0)
            return rc;
    }
    /* report the end of the final bracket on the far side of the sign change (g
     * there has g_hi's sign, or is 0): the state reported is past the event, which
     * a switching event needs to restart in the new regime */
    if (fb != 0.0 && (fb > 0) != (g_hi > 0) && (fc > 0) == (g_hi > 0))
        b = c;
    *theta = b;
    return 0;
}
