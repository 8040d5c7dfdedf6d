/* mb_jtree (csrc/mbs/joint_tree.c) against closed forms and against its own other
 * algorithms: the mass matrix of a planar double pendulum of rods (the textbook
 * closed form) by CRBA and by RNEA columns; ABA = M^-1 (tau - C) and RNEA(ABA(tau)) =
 * tau on a random 3-D tree of 40 bodies with revolute and prismatic joints; the
 * forward kinematics of the pendulum's tip; the exact derivatives of the forward
 * dynamics (with dampers and inputs) against central differences on the random tree;
 * table errors.  Work arrays are exactly
 * mb_jtree_work_size(n) doubles (ASan sees an overrun). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "check.h"
#include "joint_tree.h"
#include "status.h"

static double *work_for(ptrdiff_t n)
{
    return malloc((size_t)mb_jtree_work_size(n) * sizeof(double));
}

/* a rod of mass m and length l hanging along -z from its joint, as a 10-entry inertia */
static void rod(double m, double l, double *p)
{
    double I = m * l * l / 12;
    double v[10] = {m, 0, 0, -l / 2, I, I, 1e-9, 0, 0, 0};
    memcpy(p, v, sizeof v);
}

static void double_pendulum(void)
{
    const double m1 = 1.3, l1 = 0.8, m2 = 0.7, l2 = 0.5, th2 = 0.9;
    int parent[2] = {-1, 0}, type[2] = {MB_JT_REVOLUTE, MB_JT_REVOLUTE};
    double frame[24] = {1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0,
                        1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, -l1};
    double axis[6] = {0, 1, 0, 0, 1, 0}, inertia[20];
    rod(m1, l1, inertia);
    rod(m2, l2, inertia + 10);
    mb_jtree T = {2, parent, type, frame, axis, inertia, NULL, NULL, {0, 0, -9.81}, 0};
    char msg[256];
    CHECK(mb_jtree_check(&T, msg, sizeof msg) == MB_OK, "the double pendulum's table is valid");
    double *w = work_for(2), q[2] = {0.3, th2}, M[4], Mr[4];
    mb_jtree_crba(&T, q, M, 2, w);
    double lc1 = l1 / 2, lc2 = l2 / 2, I1 = m1 * l1 * l1 / 12, I2 = m2 * l2 * l2 / 12;
    double M11 = m1 * lc1 * lc1 + I1 + m2 * (l1 * l1 + lc2 * lc2 + 2 * l1 * lc2 * cos(th2)) + I2;
    double M12 = m2 * (lc2 * lc2 + l1 * lc2 * cos(th2)) + I2, M22 = m2 * lc2 * lc2 + I2;
    double err = fabs(M[0] - M11) + fabs(M[1] - M12) + fabs(M[2] - M12) + fabs(M[3] - M22);
    CHECK(err <= 1e-14, "CRBA: the closed-form mass matrix of two rods (error %.1e)", err);
    for (int j = 0; j < 2; j++) {  /* M e_j = RNEA(q, 0, e_j) without gravity */
        double e[2] = {j == 0, j == 1};
        mb_jtree_rnea(&T, q, NULL, e, 0, Mr + 2 * j, w);
    }
    err = fabs(Mr[0] - M11) + fabs(Mr[1] - M12) + fabs(Mr[2] - M12) + fabs(Mr[3] - M22);
    CHECK(err <= 1e-14, "RNEA columns: the same mass matrix (error %.1e)", err);
    /* gravity torques: -g (m1 lc1 + m2 l1) sin th1 - g m2 lc2 sin(th1 + th2), ... */
    double g0[2], th1 = q[0];
    mb_jtree_rnea(&T, q, NULL, NULL, 1, g0, w);
    double G1 = 9.81 * ((m1 * lc1 + m2 * l1) * sin(th1) + m2 * lc2 * sin(th1 + th2));
    double G2 = 9.81 * m2 * lc2 * sin(th1 + th2);
    CHECK(fabs(g0[0] - G1) + fabs(g0[1] - G2) <= 1e-13, "RNEA: the gravity torques (%g, %g)",
          g0[0], g0[1]);
    /* the tip of link 2: the rotation about +y takes -z to (-sin, 0, -cos) */
    double fk[2 * MB_JT_FK];
    mb_jtree_fk(&T, q, NULL, NULL, fk, w);
    double ox = -l1 * sin(th1), oz = -l1 * cos(th1);
    CHECK(fabs(fk[MB_JT_FK + 9] - ox) + fabs(fk[MB_JT_FK + 11] - oz) <= 1e-15,
          "FK: the second joint's origin at (%g, %g)", fk[MB_JT_FK + 9], fk[MB_JT_FK + 11]);
    free(w);
}

static double urand(unsigned *s)
{
    *s = *s * 1103515245u + 12345u;
    return ((*s >> 8) & 0xffffff) / (double)0x1000000;
}

/* Cholesky solve of the SPD n x n M (column-major, overwritten) for b (in place) */
static int chol_solve(ptrdiff_t n, double *M, double *b)
{
    for (ptrdiff_t j = 0; j < n; j++) {
        double d = M[j * n + j];
        for (ptrdiff_t k = 0; k < j; k++) d -= M[k * n + j] * M[k * n + j];
        if (!(d > 0))
            return -1;
        d = sqrt(d);
        M[j * n + j] = d;
        for (ptrdiff_t i = j + 1; i < n; i++) {
            double s = M[j * n + i];
            for (ptrdiff_t k = 0; k < j; k++) s -= M[k * n + i] * M[k * n + j];
            M[j * n + i] = s / d;
        }
    }
    for (ptrdiff_t i = 0; i < n; i++) {
        for (ptrdiff_t k = 0; k < i; k++) b[i] -= M[k * n + i] * b[k];
        b[i] /= M[i * n + i];
    }
    for (ptrdiff_t i = n - 1; i >= 0; i--) {
        for (ptrdiff_t k = i + 1; k < n; k++) b[i] -= M[i * n + k] * b[k];
        b[i] /= M[i * n + i];
    }
    return 0;
}

static void random_tree(void)
{
    enum { N = 40 };
    unsigned s = 7;
    int parent[N], type[N];
    double frame[12 * N], axis[3 * N], inertia[10 * N];
    for (int i = 0; i < N; i++) {
        parent[i] = i == 0 ? -1 : (int)(urand(&s) * i) - (urand(&s) < 0.1 ? i : 0);
        if (parent[i] < -1) parent[i] = -1;
        type[i] = urand(&s) < 0.25 ? MB_JT_PRISMATIC : MB_JT_REVOLUTE;
        /* a rotation about a random axis by a random angle (Rodrigues) */
        double k[3] = {urand(&s) - .5, urand(&s) - .5, urand(&s) - .5}, a = 3 * urand(&s);
        double nk = sqrt(k[0] * k[0] + k[1] * k[1] + k[2] * k[2]);
        for (int e = 0; e < 3; e++) k[e] /= nk;
        double K[9] = {0, -k[2], k[1], k[2], 0, -k[0], -k[1], k[0], 0};
        for (int r = 0; r < 3; r++)
            for (int c = 0; c < 3; c++)
                frame[12 * i + 3 * r + c] = (r == c) + sin(a) * K[3 * r + c] +
                                            (1 - cos(a)) * (k[r] * k[c] - (r == c));
        for (int e = 0; e < 3; e++) frame[12 * i + 9 + e] = urand(&s) - .5;
        double ax[3] = {urand(&s) - .5, urand(&s) - .5, urand(&s) - .5};
        double na = sqrt(ax[0] * ax[0] + ax[1] * ax[1] + ax[2] * ax[2]);
        for (int e = 0; e < 3; e++) axis[3 * i + e] = ax[e] / na;
        double *p = inertia + 10 * i;
        p[0] = 0.5 + urand(&s);
        for (int e = 1; e < 4; e++) p[e] = 0.3 * (urand(&s) - .5);
        double d0 = 0.05 + 0.1 * urand(&s), d1 = 0.05 + 0.1 * urand(&s);  /* triangle */
        p[4] = d0 + d1, p[5] = d0 + 0.08, p[6] = d1 + 0.08;
        p[7] = 0.01 * (urand(&s) - .5), p[8] = 0.01 * (urand(&s) - .5), p[9] = 0.01 * (urand(&s) - .5);
    }
    mb_jtree T = {N, parent, type, frame, axis, inertia, NULL, NULL, {0.3, -1.0, -9.81}, 0};
    char msg[256];
    CHECK(mb_jtree_check(&T, msg, sizeof msg) == MB_OK, "the random tree is valid (%s)",
          mb_jtree_check(&T, msg, sizeof msg) ? msg : "ok");
    double q[N], qd[N], tau[N], qdd[N], c[N], b[N], back[N], *M = malloc(N * N * sizeof(double));
    for (int i = 0; i < N; i++)
        q[i] = 4 * urand(&s) - 2, qd[i] = 2 * urand(&s) - 1, tau[i] = 10 * urand(&s) - 5;
    double *w = work_for(N);
    CHECK(mb_jtree_aba(&T, q, qd, tau, qdd, w) == MB_OK, "ABA on the random tree");
    mb_jtree_rnea(&T, q, qd, NULL, 1, c, w);
    mb_jtree_crba(&T, q, M, N, w);
    for (int i = 0; i < N; i++) b[i] = tau[i] - c[i];
    CHECK(chol_solve(N, M, b) == 0, "CRBA's M is positive definite");
    double err = 0, scale = 0;
    for (int i = 0; i < N; i++) err = fmax(err, fabs(b[i] - qdd[i])), scale = fmax(scale, fabs(qdd[i]));
    CHECK(err <= 1e-10 * scale, "ABA = CRBA^-1 (tau - RNEA(q, q', 0)) (error %.1e of %.1e)",
          err, scale);
    mb_jtree_rnea(&T, q, qd, qdd, 1, back, w);
    err = 0;
    for (int i = 0; i < N; i++) err = fmax(err, fabs(back[i] - tau[i]));
    CHECK(err <= 1e-10 * 5, "RNEA(ABA(tau)) = tau (error %.1e)", err);
    /* derivatives with dampers and time-function inputs, against central differences of
     * x'' = ABA(q, q', input(t, q') + tau) (h = 1e-6: their own error ~1e-9 relative) */
    double damping[N], input[6 * N], t = 0.3;
    for (int i = 0; i < N; i++) {
        damping[i] = 0.5 * urand(&s);
        double f[6] = {urand(&s) - .5, 0.2, 0.0, 1.0, 2.0, 0.1};
        memcpy(input + 6 * i, f, sizeof f);
    }
    T.damping = damping, T.input = input;
    double *wd = malloc((size_t)mb_jtree_deriv_work_size(N) * sizeof(double));
    double *Aq = malloc(2 * N * N * sizeof(double)), *Av = Aq + N * N, ap[N], am[N], u[N], y[2 * N];
    CHECK(mb_jtree_aba_derivatives(&T, t, q, qd, tau, NULL, Aq, Av, N, wd) == MB_OK,
          "the derivatives on the random tree");
    double h = 1e-6, worst = 0, big = 0;
    memcpy(y, q, sizeof q);
    memcpy(y + N, qd, sizeof qd);
    for (int j = 0; j < 2 * N; j++) {
        double yj = y[j];
        y[j] = yj + h;
        mb_jtree_input(&T, t, y + N, u);
        for (int i = 0; i < N; i++) u[i] += tau[i];
        mb_jtree_aba(&T, y, y + N, u, ap, w);
        y[j] = yj - h;
        mb_jtree_input(&T, t, y + N, u);
        for (int i = 0; i < N; i++) u[i] += tau[i];
        mb_jtree_aba(&T, y, y + N, u, am, w);
        y[j] = yj;
        const double *col = j < N ? Aq + j * N : Av + (j - N) * N;
        for (int i = 0; i < N; i++) {
            double fd = (ap[i] - am[i]) / (2 * h);
            worst = fmax(worst, fabs(col[i] - fd));
            big = fmax(big, fabs(fd));
        }
    }
    CHECK(worst <= 1e-6 * big, "exact dq''/dq, dq''/dq' = central differences (%.1e of %.1e)",
          worst, big);
    free(Aq);
    free(wd);
    free(M);
    free(w);
}

static void bad_tables(void)
{
    int parent[2] = {-1, 1}, type[2] = {0, 0};
    double frame[24] = {0}, axis[6] = {0, 0, 1, 0, 0, 1}, inertia[20] = {1, 0, 0, 0, 1, 1, 1};
    inertia[10] = 1, inertia[14] = inertia[15] = inertia[16] = 1;
    mb_jtree T = {2, parent, type, frame, axis, inertia, NULL, NULL, {0, 0, 0}, 0};
    char msg[256];
    CHECK(mb_jtree_check(&T, msg, sizeof msg) == MB_ERR_ILL_INPUT && strstr(msg, "parents"),
          "a parent after its child is refused: %s", msg);
    parent[1] = 0;
    axis[5] = 2;
    CHECK(mb_jtree_check(&T, msg, sizeof msg) == MB_ERR_ILL_INPUT && strstr(msg, "unit"),
          "a non-unit axis is refused: %s", msg);
    axis[5] = 1;
    type[0] = 5;
    CHECK(mb_jtree_check(&T, msg, sizeof msg) == MB_ERR_ILL_INPUT && strstr(msg, "type"),
          "an unknown joint type is refused: %s", msg);
}

/* a free body alone (a floating base with no joints): its centre of mass falls with
 * gravity and it turns by Euler's equations I_c alpha + omega x I_c omega = 0 */
static void free_body(void)
{
    int parent[1] = {-1}, type[1] = {MB_JT_FREE};
    double frame[12] = {1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0}, axis[3] = {1, 0, 0};
    double inertia[10] = {2.0, 0.1, -0.2, 0.3, 0.5, 0.7, 0.9, 0.05, -0.02, 0.03};
    mb_jtree T = {1, parent, type, frame, axis, inertia, NULL, NULL, {0.1, -0.3, -9.81}, 0};
    char msg[256];
    CHECK(mb_jtree_check(&T, msg, sizeof msg) == MB_OK, "a free root is a valid table");
    double c = cos(0.7), sn = sin(0.7);  /* a rotation about z by 0.7 rad */
    mb_jtree_root R = {{c, -sn, 0, sn, c, 0, 0, 0, 1}, {1, 2, 3}, {0.4, -1.1, 0.8, 0.3, 0.2, -0.5}};
    double *w = work_for(1), q = 0, qd = 0, qdd, a0[6];
    CHECK(mb_jtree_aba_free(&T, &R, &q, &qd, NULL, a0, &qdd, w) == MB_OK, "ABA of a free body");
    const double *wb = R.v, *vb = R.v + 3, *cc = inertia + 1, *J = inertia + 4;
    double Ic[9] = {J[0], J[3], J[4], J[3], J[1], J[5], J[4], J[5], J[2]}, Iw[3], Ia[3], wIw[3];
    for (int k = 0; k < 3; k++) {
        Iw[k] = Ic[3 * k] * wb[0] + Ic[3 * k + 1] * wb[1] + Ic[3 * k + 2] * wb[2];
        Ia[k] = Ic[3 * k] * a0[0] + Ic[3 * k + 1] * a0[1] + Ic[3 * k + 2] * a0[2];
    }
    wIw[0] = wb[1] * Iw[2] - wb[2] * Iw[1], wIw[1] = wb[2] * Iw[0] - wb[0] * Iw[2],
    wIw[2] = wb[0] * Iw[1] - wb[1] * Iw[0];
    double eul = fabs(Ia[0] + wIw[0]) + fabs(Ia[1] + wIw[1]) + fabs(Ia[2] + wIw[2]);
    CHECK(eul <= 1e-13, "Euler's equations (residual %.1e)", eul);
    /* centre of mass: a_o + alpha x c + w x (w x c), a_o = a0_lin + w x v, = A^T g */
    double wv[3], ac[3], wc[3], wwc[3], g[3];
    wv[0] = wb[1] * vb[2] - wb[2] * vb[1], wv[1] = wb[2] * vb[0] - wb[0] * vb[2],
    wv[2] = wb[0] * vb[1] - wb[1] * vb[0];
    ac[0] = a0[1] * cc[2] - a0[2] * cc[1], ac[1] = a0[2] * cc[0] - a0[0] * cc[2],
    ac[2] = a0[0] * cc[1] - a0[1] * cc[0];
    wc[0] = wb[1] * cc[2] - wb[2] * cc[1], wc[1] = wb[2] * cc[0] - wb[0] * cc[2],
    wc[2] = wb[0] * cc[1] - wb[1] * cc[0];
    wwc[0] = wb[1] * wc[2] - wb[2] * wc[1], wwc[1] = wb[2] * wc[0] - wb[0] * wc[2],
    wwc[2] = wb[0] * wc[1] - wb[1] * wc[0];
    double err = 0;
    for (int k = 0; k < 3; k++) {
        g[k] = R.A[k] * T.gravity[0] + R.A[3 + k] * T.gravity[1] + R.A[6 + k] * T.gravity[2];
        err += fabs(a0[3 + k] + wv[k] + ac[k] + wwc[k] - g[k]);
    }
    CHECK(err <= 1e-13, "the centre of mass falls with gravity (error %.1e)", err);
    CHECK(mb_jtree_aba(&T, &q, &qd, NULL, &qdd, w) == MB_ERR_ILL_INPUT &&
          mb_jtree_crba(&T, &q, &qdd, 1, w) == MB_ERR_NOT_SUPPORTED,
          "the fixed-base calls refuse a free root");
    free(w);
}

int main(void)
{
    free_body();
    double_pendulum();
    random_tree();
    bad_tables();
    return check_summary();
}
