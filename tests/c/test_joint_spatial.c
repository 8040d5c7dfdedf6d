/* mb_jspatial (csrc/mbs/joint_spatial.c) against closed forms: a rod on a ball joint held
 * horizontal at rest (its angular acceleration m g l/2 / (J + m l^2/4) and p'' of the
 * ball), a hanging chain of n rods on ball joints at rest (an equilibrium: z'' = 0, the
 * tip at -n l), the inverse map of the forward kinematics, and the refusal of ball joints
 * by the URDF engine.  Work arrays are exactly mb_jspatial_work_size(n) doubles at n = 1
 * and n = 200 (ASan sees an overrun). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "check.h"
#include "joint_spatial.h"
#include "status.h"

static const double G0 = 9.81, M = 0.3, LEN = 0.4, JA = 1e-4, JT = 0.004;

/* a chain of n rods on ball joints, rod axis along `along` (0: x, 2: z) in its body
 * frame, each joint at the previous rod's end, the centre of mass at `sign` l/2 */
static void chain(ptrdiff_t n, int along, double sign, int *parent, int *type,
                  double *frame, double *axis, double *inertia)
{
    for (ptrdiff_t i = 0; i < n; i++) {
        parent[i] = (int)i - 1, type[i] = MB_JT_BALL;
        double *f = frame + 12 * i, *in = inertia + 10 * i;
        memset(f, 0, 12 * sizeof(double));
        f[0] = f[4] = f[8] = 1.0;
        if (i > 0)
            f[9 + along] = sign * LEN;  /* the parent's end in its link frame */
        axis[3 * i] = 1.0, axis[3 * i + 1] = axis[3 * i + 2] = 0.0;
        memset(in, 0, 10 * sizeof(double));
        in[0] = M, in[1 + along] = sign * LEN / 2;
        in[4] = along == 0 ? JA : JT, in[5] = JT, in[6] = along == 2 ? JA : JT;
    }
}

static void gravity_Q(ptrdiff_t n, double *Q)
{
    memset(Q, 0, (size_t)(7 * n) * sizeof(double));
    for (ptrdiff_t b = 0; b < n; b++) Q[7 * b + 2] = -M * G0;
}

static void horizontal_rod(void)
{
    int parent[1], type[1], body[1] = {0};
    double frame[12], axis[3], inertia[10], z[4] = {1, 0, 0, 0}, zd[4] = {0}, zdd[4], q[7],
           qd[7], Q[7];
    ptrdiff_t off[2];
    chain(1, 0, 1.0, parent, type, frame, axis, inertia);
    mb_jtree T = {1, parent, type, frame, axis, inertia, NULL, NULL, {0, 0, 0}, 1};
    double *w = malloc((size_t)mb_jspatial_work_size(1) * sizeof(double));
    CHECK(mb_jspatial_offsets(&T, off) == 4 && off[1] == 4, "a ball joint has 4 coordinates");
    mb_jspatial S = {&T, body, off, w};
    gravity_Q(1, Q);
    int rc = mb_jspatial_kin(&S, z, zd, q, qd);
    CHECK(rc == MB_OK && fabs(q[0] - LEN / 2) < 1e-15 && fabs(q[3] - 1) < 1e-15,
          "the centre of mass at l/2 along x, p = (1, 0, 0, 0)");
    rc = mb_jspatial_accel(&S, q, qd, Q, z, zd, zdd);
    double alpha = M * G0 * LEN / 2 / (JT + M * LEN * LEN / 4);
    /* torque (l/2 x) x (-m g z) = +y m g l/2: w'_y = alpha, p'' = G(p)^T w' / 2 */
    CHECK(rc == MB_OK && fabs(zdd[2] - alpha / 2) < 1e-12 * alpha && fabs(zdd[0]) < 1e-15 &&
          fabs(zdd[1]) < 1e-15 && fabs(zdd[3]) < 1e-15,
          "p'' = (0, 0, alpha/2, 0) of alpha = m g l/2 / (J + m l^2/4) (%.15g vs %.15g)",
          zdd[2], alpha / 2);
    double qdd[7];
    mb_jspatial_body_acc(&S, q, qd, qdd);
    CHECK(fabs(qdd[2] + alpha * LEN / 2) < 1e-12 && fabs(qdd[0]) < 1e-15,
          "the centre of mass accelerates down by alpha l/2");
    free(w);
    int rev[1] = {MB_JT_REVOLUTE};
    T.type = type, T.mech_forces = 0;
    char msg[256];
    CHECK(mb_jtree_check(&T, msg, sizeof msg) == MB_ERR_ILL_INPUT,
          "a ball joint outside a SpatialModel's tree is refused: %s", msg);
    T.mech_forces = 1;
    double *we = malloc((size_t)mb_jtree_work_size(1) * sizeof(double)), qq = 0, qdd1;
    CHECK(mb_jtree_aba(&T, &qq, &qq, NULL, &qdd1, we) == MB_ERR_NOT_SUPPORTED,
          "the URDF engine's ABA refuses a ball joint");
    T.type = rev;
    CHECK(mb_jtree_check(&T, msg, sizeof msg) == MB_OK, "a revolute SpatialModel tree is valid");
    free(we);
}

static void hanging_chain(ptrdiff_t n)
{
    int *ints = malloc((size_t)(3 * n) * sizeof(int)), *parent = ints, *type = ints + n,
        *body = ints + 2 * n;
    double *frame = malloc((size_t)(12 * n) * sizeof(double)),
           *axis = malloc((size_t)(3 * n) * sizeof(double)),
           *inertia = malloc((size_t)(10 * n) * sizeof(double)),
           *v = malloc((size_t)(4 * 4 * n + 3 * 7 * n) * sizeof(double)),
           *z = v, *zd = z + 4 * n, *zdd = zd + 4 * n, *z2 = zdd + 4 * n, *q = z2 + 4 * n,
           *qd = q + 7 * n, *Q = qd + 7 * n;
    ptrdiff_t *off = malloc((size_t)(n + 1) * sizeof(ptrdiff_t));
    chain(n, 2, -1.0, parent, type, frame, axis, inertia);
    for (ptrdiff_t i = 0; i < n; i++) body[i] = (int)(n - 1 - i);  /* any order of bodies */
    mb_jtree T = {n, parent, type, frame, axis, inertia, NULL, NULL, {0, 0, 0}, 1};
    double *w = malloc((size_t)mb_jspatial_work_size(n) * sizeof(double));
    mb_jspatial S = {&T, body, off, w};
    mb_jspatial_offsets(&T, off);
    memset(z, 0, (size_t)(8 * n) * sizeof(double));
    for (ptrdiff_t i = 0; i < n; i++) z[4 * i] = 1.0;
    gravity_Q(n, Q);
    int rc = mb_jspatial_kin(&S, z, zd, q, qd);
    CHECK(rc == MB_OK && fabs(q[2] + (n - 0.5) * LEN) < 1e-12 * n,
          "n = %td: the last rod's centre of mass at -(n - 1/2) l", n);
    rc = mb_jspatial_accel(&S, q, qd, Q, z, zd, zdd);
    double mx = 0;
    for (ptrdiff_t k = 0; k < 4 * n; k++) mx = fmax(mx, fabs(zdd[k]));
    CHECK(rc == MB_OK && mx < 1e-12, "n = %td: hanging at rest is an equilibrium (|z''| %.1e)",
          n, mx);
    /* a bent, moving state: the inverse map returns it */
    for (ptrdiff_t i = 0; i < n; i++) {
        double a = 0.3 + 0.005 * (double)(i % 100), p[4] = {cos(a), sin(a) * 0.6, 0.0, sin(a) * 0.8};
        memcpy(z + 4 * i, p, sizeof p);
        double wv[3] = {0.2, -0.1 * (double)(i % 3), 0.5};  /* p' = G^T w / 2 */
        double G[12] = {-p[1], p[0], p[3], -p[2], -p[2], -p[3], p[0], p[1], -p[3], p[2], -p[1], p[0]};
        for (int k = 0; k < 4; k++) zd[4 * i + k] = 0.5 * (G[k] * wv[0] + G[4 + k] * wv[1] + G[8 + k] * wv[2]);
    }
    rc = mb_jspatial_kin(&S, z, zd, q, qd);
    double *zd2 = zdd;
    if (rc == MB_OK)
        rc = mb_jspatial_joints(&S, q, qd, z2, zd2);
    double e = 0;
    for (ptrdiff_t k = 0; k < 4 * n; k++) e = fmax(e, fmax(fabs(z2[k] - z[k]), fabs(zd2[k] - zd[k])));
    CHECK(rc == MB_OK && e < 1e-9, "n = %td: the inverse map of the forward kinematics (%.1e)",
          n, e);
    free(w), free(off), free(v), free(inertia), free(axis), free(frame), free(ints);
}

int main(void)
{
    horizontal_rod();
    hanging_chain(1);
    hanging_chain(200);
    return check_summary();
}
