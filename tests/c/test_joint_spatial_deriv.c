/* mb_jsderiv_jac (csrc/mbs/joint_spatial_deriv.c) against central differences of
 * z'' = f(z, z') computed by joint_spatial.c (mb_jspatial_kin, the forces, mb_jspatial_accel)
 * on chains whose joints cycle ball, revolute, prismatic, at a bent moving state with
 * |p| != 1, under gravity and a spring-damper pulling each centre of mass to a point (a
 * mock mechanism whose forces_q, forces_qd are -k and -c on the position rows).  Work
 * arrays are exactly mb_jsderiv_work_size(n, 7 n, m) doubles at n = 1 and n = 120 (ASan
 * sees an overrun). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "check.h"
#include "joint_spatial_deriv.h"
#include "status.h"

static const double G0 = 9.81, M = 0.3, LEN = 0.4, KS = 7.0, CD = 0.4;

typedef struct mock { ptrdiff_t nq; } mock;

static int forces(double t, const double *q, const double *qd, double *Q, void *ctx)
{
    ptrdiff_t nq = ((mock *)ctx)->nq;
    memset(Q, 0, (size_t)nq * sizeof(double));
    for (ptrdiff_t b = 0; b < nq / 7; b++)
        for (int e = 0; e < 3; e++)
            Q[7 * b + e] = -KS * (q[7 * b + e] - 0.1 * e) - CD * qd[7 * b + e] - (e == 2 ? M * G0 : 0.0);
    return MB_OK;
}

static int forces_d(double t, const double *q, const double *qd, double *J, ptrdiff_t ld,
                    void *ctx, double v)
{
    ptrdiff_t nq = ((mock *)ctx)->nq;
    for (ptrdiff_t c = 0; c < nq; c++)
        for (ptrdiff_t r = 0; r < nq; r++) J[c * ld + r] = (r == c && r % 7 < 3) ? v : 0.0;
    return MB_OK;
}

static int forces_q(double t, const double *q, const double *qd, double *J, ptrdiff_t ld, void *ctx)
{
    return forces_d(t, q, qd, J, ld, ctx, -KS);
}

static int forces_qd(double t, const double *q, const double *qd, double *J, ptrdiff_t ld, void *ctx)
{
    return forces_d(t, q, qd, J, ld, ctx, -CD);
}

/* f(z, z') as form_joint.c's spatial_accel */
static int f_of(const mb_jspatial *S, const mb_mech *me, const double *z, const double *zd,
                double *q, double *qd, double *Q, double *zdd)
{
    int rc = mb_jspatial_kin(S, z, zd, q, qd);
    if (rc == MB_OK)
        rc = me->forces(0.0, q, qd, Q, me->ctx);
    return rc == MB_OK ? mb_jspatial_accel(S, q, qd, Q, z, zd, zdd) : rc;
}

static void chain_jac(ptrdiff_t n)
{
    ptrdiff_t nq = 7 * n;
    int *parent = malloc((size_t)(3 * n) * sizeof(int)), *type = parent + n, *body = type + n;
    double *frame = calloc((size_t)(25 * n), sizeof(double)), *axis = frame + 12 * n,
           *inertia = axis + 3 * n;
    ptrdiff_t *off = malloc((size_t)(n + 1) * sizeof(ptrdiff_t));
    for (ptrdiff_t i = 0; i < n; i++) {
        parent[i] = (int)i - 1, type[i] = i % 3 == 0 ? MB_JT_BALL : i % 3 == 1 ? MB_JT_REVOLUTE
                                                                                : MB_JT_PRISMATIC;
        body[i] = (int)(n - 1 - i);
        double *fr = frame + 12 * i, *in = inertia + 10 * i, s = 1 / sqrt(3.0);
        fr[0] = fr[4] = fr[8] = 1.0;
        fr[11] = i > 0 ? -LEN : 0.0;
        axis[3 * i] = s, axis[3 * i + 1] = -s, axis[3 * i + 2] = s;
        in[0] = M, in[3] = -LEN / 2, in[4] = 0.004, in[5] = 0.005, in[6] = 1e-4, in[7] = 1e-4;
    }
    mb_jtree T = {n, parent, type, frame, axis, inertia, NULL, NULL, {0, 0, 0}, 1};
    ptrdiff_t m = mb_jspatial_offsets(&T, off);
    double *v = malloc((size_t)(9 * m + 6 * nq + 2 * m * m) * sizeof(double)), *z = v,
           *zd = z + m, *zdd = zd + m, *zp = zdd + m, *zm = zp + 2 * m, *fp = zm + 2 * m,
           *fm = fp + m, *q = fm + m, *qd = q + nq, *Q = qd + nq, *q2 = Q + nq, *qd2 = q2 + nq,
           *Q2 = qd2 + nq, *J = Q2 + nq;
    double *w = malloc((size_t)mb_jspatial_work_size(n) * sizeof(double));
    double *wd = malloc((size_t)mb_jsderiv_work_size(n, nq, m) * sizeof(double));
    mock ctx = {nq};
    mb_mech me;
    memset(&me, 0, sizeof me);
    me.nq = nq, me.ctx = &ctx, me.forces = forces, me.forces_q = forces_q, me.forces_qd = forces_qd;
    mb_jspatial S = {&T, body, off, w};
    for (ptrdiff_t i = 0; i < n; i++) {  /* a bent, moving state, |p| = 1.2 */
        double *zi = z + off[i], *zdi = zd + off[i], a = 0.3 + 0.01 * (double)(i % 50);
        if (type[i] == MB_JT_BALL) {
            double p[4] = {1.2 * cos(a), 1.2 * sin(a) * 0.6, 0.0, 1.2 * sin(a) * 0.8};
            double pd[4] = {0.1, -0.2, 0.3, 0.05 * (double)(i % 4)};
            memcpy(zi, p, sizeof p), memcpy(zdi, pd, sizeof pd);
        } else {
            zi[0] = a, zdi[0] = 0.4 - a;
        }
    }
    int rc = f_of(&S, &me, z, zd, q, qd, Q, zdd);
    mb_jsderiv D = {&T, body, off, &me, q, qd, Q};
    if (rc == MB_OK)
        rc = mb_jsderiv_jac(&D, 0.0, z, zd, J, J + m * m, m, wd);
    CHECK(rc == MB_OK, "n = %td: the Jacobian (status %d)", n, rc);
    double err[2] = {0, 0}, big[2] = {0, 0};
    ptrdiff_t stride = n > 10 ? 7 : 1;  /* a sample of the columns at large n */
    for (int rate = 0; rate < 2 && rc == MB_OK; rate++)
        for (ptrdiff_t k = 0; k < m && rc == MB_OK; k += stride) {
            const double *y = rate ? zd : z;
            double h = 1e-5 * fmax(1.0, fabs(y[k]));
            memcpy(zp, z, (size_t)m * sizeof(double)), memcpy(zp + m, zd, (size_t)m * sizeof(double));
            memcpy(zm, zp, (size_t)(2 * m) * sizeof(double));
            zp[rate * m + k] += h, zm[rate * m + k] -= h;
            rc = f_of(&S, &me, zp, zp + m, q2, qd2, Q2, fp);
            if (rc == MB_OK)
                rc = f_of(&S, &me, zm, zm + m, q2, qd2, Q2, fm);
            for (ptrdiff_t i = 0; i < m; i++) {
                double c = (fp[i] - fm[i]) / (2 * h), e = J[rate * m * m + k * m + i];
                err[rate] = fmax(err[rate], fabs(e - c)), big[rate] = fmax(big[rate], fabs(c));
            }
        }
    CHECK(rc == MB_OK && err[0] <= 1e-6 * big[0] && err[1] <= 1e-6 * big[1],
          "n = %td: df/dz, df/dz' against central differences (%.1e, %.1e relative)", n,
          err[0] / big[0], err[1] / big[1]);
    free(wd), free(w), free(v), free(off), free(frame), free(parent);
}

int main(void)
{
    chain_jac(1);
    chain_jac(4);
    chain_jac(120);
    return check_summary();
}
