/* mb_jtree_d_derivatives (csrc/mbs/joint_tree_deriv.c), the O(n^2) exact derivatives of a
 * fixed-base tree's forward dynamics, against independent oracles: central differences
 * of x'' = ABA(q, q', input(t, q') + tau) (the ABA of joint_tree.c, with dampers and
 * time-function inputs) on a small chain of rods with a prismatic joint and on a random
 * 3-D tree of 25 bodies; M^-1 of the articulated-body factorization times CRBA's M = I;
 * mb_jtree_d_solve(M b) = b; a single body (n = 1); a floating base refused.  Work
 * arrays are exactly mb_jtree_d_work_size(n) doubles (ASan sees an overrun). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "check.h"
#include "joint_tree.h"
#include "joint_tree_deriv.h"
#include "status.h"

static double urand(unsigned *s)
{
    *s = *s * 1103515245u + 12345u;
    return ((*s >> 8) & 0xffffff) / (double)0x1000000;
}

/* a random tree (chain: parent i - 1) of n bodies: random joint frames, axes, inertias */
static void make_tree(int n, int chain, unsigned s, int *parent, int *type, double *frame,
                      double *axis, double *inertia)
{
    for (int i = 0; i < n; i++) {
        parent[i] = chain ? i - 1 : (i == 0 ? -1 : (int)(urand(&s) * i) - (urand(&s) < 0.1 ? i : 0));
        if (parent[i] < -1) parent[i] = -1;
        type[i] = (chain ? i == 1 : urand(&s) < 0.25) ? MB_JT_PRISMATIC : MB_JT_REVOLUTE;
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
}

/* the derivatives of one tree against central differences, M^-1 against CRBA */
static void check_tree(const char *name, int n, int chain, unsigned seed)
{
    int *parent = malloc(n * sizeof(int)), *type = malloc(n * sizeof(int));
    double *tab = malloc((size_t)n * (12 + 3 + 10 + 1 + 6) * sizeof(double));
    double *frame = tab, *axis = frame + 12 * n, *inertia = axis + 3 * n, *damping = inertia + 10 * n,
           *input = damping + n;
    make_tree(n, chain, seed, parent, type, frame, axis, inertia);
    unsigned s = seed + 1;
    for (int i = 0; i < n; i++) {
        damping[i] = 0.5 * urand(&s);
        double f[6] = {urand(&s) - .5, 0.2, 0.0, 1.0, 2.0, 0.1};
        memcpy(input + 6 * i, f, sizeof f);
    }
    mb_jtree T = {n, parent, type, frame, axis, inertia, damping, input, {0.3, -1.0, -9.81}, 0};
    char msg[256];
    CHECK(mb_jtree_check(&T, msg, sizeof msg) == MB_OK, "%s: the table is valid", name);
    double *v = malloc((size_t)(3 * n * n + 10 * n) * sizeof(double));
    double *Aq = v, *Av = Aq + n * n, *Mi = Av + n * n, *q = Mi + n * n, *qd = q + n,
           *tau = qd + n, *qdd = tau + n, *ap = qdd + n, *am = ap + n, *u = am + n, *y = u + n;
    for (int i = 0; i < n; i++)
        q[i] = 4 * urand(&s) - 2, qd[i] = 2 * urand(&s) - 1, tau[i] = 10 * urand(&s) - 5;
    double *wd = malloc((size_t)mb_jtree_d_work_size(n) * sizeof(double));
    double *w = malloc((size_t)mb_jtree_work_size(n) * sizeof(double)), t = 0.3;
    CHECK(mb_jtree_d_derivatives(&T, t, q, qd, tau, qdd, Aq, Av, Mi, n, wd) == MB_OK,
          "%s: the derivatives", name);
    /* central differences, h = 1e-6: their own error ~1e-9 relative */
    double h = 1e-6, worst = 0, big = 0, errq = 0;
    memcpy(y, q, n * sizeof(double));
    memcpy(y + n, qd, n * sizeof(double));
    mb_jtree_input(&T, t, qd, u);
    for (int i = 0; i < n; i++) u[i] += tau[i];
    mb_jtree_aba(&T, q, qd, u, ap, w);
    for (int i = 0; i < n; i++) errq = fmax(errq, fabs(ap[i] - qdd[i]));
    CHECK(errq == 0.0, "%s: x'' out is the ABA's", name);
    for (int j = 0; j < 2 * n; j++) {
        double yj = y[j];
        for (int sgn = 1; sgn >= -1; sgn -= 2) {
            y[j] = yj + sgn * h;
            mb_jtree_input(&T, t, y + n, u);
            for (int i = 0; i < n; i++) u[i] += tau[i];
            mb_jtree_aba(&T, y, y + n, u, sgn > 0 ? ap : am, w);
        }
        y[j] = yj;
        const double *col = j < n ? Aq + j * n : Av + (j - n) * n;
        for (int i = 0; i < n; i++) {
            double fd = (ap[i] - am[i]) / (2 * h);
            worst = fmax(worst, fabs(col[i] - fd));
            big = fmax(big, fabs(fd));
        }
    }
    CHECK(worst <= 1e-6 * big, "%s: dq''/dq, dq''/dq' = central differences (%.1e of %.1e)",
          name, worst, big);
    double *M = malloc((size_t)n * n * sizeof(double)), eI = 0;
    mb_jtree_crba(&T, q, M, n, w);
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            double sij = 0;
            for (int k = 0; k < n; k++) sij += Mi[k * n + i] * M[j * n + k];
            eI = fmax(eI, fabs(sij - (i == j)));
        }
    CHECK(eI <= 1e-10, "%s: dq''/dtau CRBA's M = I (%.1e)", name, eI);
    for (int i = 0; i < n; i++) {  /* solve(M b) = b */
        double s2 = 0;
        for (int k = 0; k < n; k++) s2 += M[k * n + i] * tau[k];
        u[i] = s2;
    }
    mb_jtree_d_solve(&T, u, u, wd);
    errq = 0;
    for (int i = 0; i < n; i++) errq = fmax(errq, fabs(u[i] - tau[i]));
    CHECK(errq <= 1e-10 * 5, "%s: the ABA solve inverts M, in place (%.1e)", name, errq);
    free(M), free(w), free(wd), free(v), free(tab), free(type), free(parent);
}

static void refusals(void)
{
    int parent[2] = {-1, 0}, type[2] = {MB_JT_FREE, MB_JT_REVOLUTE};
    double frame[24] = {1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, -1};
    double axis[6] = {1, 0, 0, 0, 1, 0}, inertia[20] = {1, 0, 0, 0, 1, 1, 1, 0, 0, 0,
                                                        1, 0, 0, 0, 1, 1, 1, 0, 0, 0};
    mb_jtree T = {2, parent, type, frame, axis, inertia, NULL, NULL, {0, 0, -9.81}, 0};
    double *wd = malloc((size_t)mb_jtree_d_work_size(2) * sizeof(double)), q[2] = {0}, A[4];
    CHECK(mb_jtree_d_derivatives(&T, 0.0, q, q, NULL, NULL, A, A, NULL, 2, wd) ==
              MB_ERR_NOT_SUPPORTED, "a floating base is refused (the formulation differences)");
    double zero[10] = {0};  /* a massless single body: no factorization */
    type[0] = MB_JT_REVOLUTE;
    T.n = 1, T.inertia = zero;
    CHECK(mb_jtree_d_derivatives(&T, 0.0, q, q, NULL, NULL, A, A, NULL, 1, wd) != MB_OK,
          "a joint moving no mass is an error, not a NaN Jacobian");
    free(wd);
}

int main(void)
{
    check_tree("one body", 1, 1, 3);
    check_tree("chain of 6 with a prismatic joint", 6, 1, 11);
    check_tree("random tree of 25", 25, 0, 7);
    refusals();
    return check_summary();
}
