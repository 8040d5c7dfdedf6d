#ifndef MB_MBS_MAT3_H
#define MB_MBS_MAT3_H
#include <string.h>
/* 3-vectors and row-major 3 x 3 matrices of the joint-tree kernels (joint_tree.c,
 * joint_tree_deriv.c) and their 6 x 6 spatial inertias: one definition, inlined.  The outputs may alias the inputs of
 * cross3, mv3, mtv3 (each result is formed before it is stored), not of the products
 * mm3, mtm3, mmt3 (C distinct from A and B), nor of mb_congruence_add.  Header only; no state. */

static inline void cross3(const double *a, const double *b, double *c)
{
    double x = a[1] * b[2] - a[2] * b[1], y = a[2] * b[0] - a[0] * b[2],
           z = a[0] * b[1] - a[1] * b[0];
    c[0] = x, c[1] = y, c[2] = z;
}

static inline double dot3(const double *a, const double *b)
{
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}

/* y = A x */
static inline void mv3(const double *A, const double *x, double *y)
{
    double a = A[0] * x[0] + A[1] * x[1] + A[2] * x[2], b = A[3] * x[0] + A[4] * x[1] + A[5] * x[2],
           c = A[6] * x[0] + A[7] * x[1] + A[8] * x[2];
    y[0] = a, y[1] = b, y[2] = c;
}

/* y = A^T x */
static inline void mtv3(const double *A, const double *x, double *y)
{
    double a = A[0] * x[0] + A[3] * x[1] + A[6] * x[2], b = A[1] * x[0] + A[4] * x[1] + A[7] * x[2],
           c = A[2] * x[0] + A[5] * x[1] + A[8] * x[2];
    y[0] = a, y[1] = b, y[2] = c;
}

/* C = A B */
static inline void mm3(const double *A, const double *B, double *C)
{
    for (int a = 0; a < 3; a++)
        for (int e = 0; e < 3; e++)
            C[3 * a + e] = A[3 * a] * B[e] + A[3 * a + 1] * B[3 + e] + A[3 * a + 2] * B[6 + e];
}

/* C = A^T B */
static inline void mtm3(const double *A, const double *B, double *C)
{
    for (int a = 0; a < 3; a++)
        for (int e = 0; e < 3; e++)
            C[3 * a + e] = A[a] * B[e] + A[3 + a] * B[3 + e] + A[6 + a] * B[6 + e];
}

/* C = A B^T */
static inline void mmt3(const double *A, const double *B, double *C)
{
    for (int a = 0; a < 3; a++)
        for (int e = 0; e < 3; e++)
            C[3 * a + e] = A[3 * a] * B[3 * e] + A[3 * a + 1] * B[3 * e + 1] + A[3 * a + 2] * B[3 * e + 2];
}

/* P += X^T I X for the symmetric 6 x 6 I (row-major, child coordinates) by 3 x 3 blocks,
 * X = [E 0; -E r~ E] (joint_tree.c explains the block formula) */
static inline void mb_congruence_add(const double *E, const double *r, const double *I, double *P)
{
    double A[9], B[9], C[9], t[9], Ab[9], Bb[9], Cb[9], H[9], T1[9], T2[9];
    for (int a = 0; a < 3; a++)
        for (int e = 0; e < 3; e++) {
            A[3 * a + e] = I[6 * a + e];
            B[3 * a + e] = I[6 * a + e + 3];
            C[3 * a + e] = I[6 * (a + 3) + e + 3];
        }
    mm3(A, E, t), mtm3(E, t, Ab);
    mm3(B, E, t), mtm3(E, t, Bb);
    mm3(C, E, t), mtm3(E, t, Cb);
    double rx[9] = {0, -r[2], r[1], r[2], 0, -r[0], -r[1], r[0], 0};
    mm3(rx, Cb, H);
    for (int k = 0; k < 9; k++) H[k] += Bb[k];
    mmt3(rx, Bb, T1);
    mm3(H, rx, T2);
    for (int a = 0; a < 3; a++)
        for (int e = 0; e < 3; e++) {
            P[6 * a + e] += Ab[3 * a + e] + T1[3 * a + e] - T2[3 * a + e];
            P[6 * a + e + 3] += H[3 * a + e];
            P[6 * (a + 3) + e] += H[3 * e + a];
            P[6 * (a + 3) + e + 3] += Cb[3 * a + e];
        }
}

/* the rigid body's spatial inertia at its link origin from joint_tree.h's 10 numbers
 * (m, c, J), 6 x 6 row-major:
 *   [Ic + m c~ c~^T, m c~; m c~^T, m 1] */
static inline void mb_rigid_inertia(const double *p, double *I)
{
    double m = p[0];
    const double *c = p + 1, *J = p + 4;
    double Ic[9] = {J[0], J[3], J[4], J[3], J[1], J[5], J[4], J[5], J[2]};
    double cx[9] = {0, -c[2], c[1], c[2], 0, -c[0], -c[1], c[0], 0};
    memset(I, 0, 36 * sizeof(double));
    for (int a = 0; a < 3; a++)
        for (int e = 0; e < 3; e++) {
            double cc = 0;  /* (c~ c~^T)_ae = sum_k c~_ak c~_ek */
            for (int k = 0; k < 3; k++) cc += cx[3 * a + k] * cx[3 * e + k];
            I[6 * a + e] = Ic[3 * a + e] + m * cc;
            I[6 * a + e + 3] = m * cx[3 * a + e];
            I[6 * (a + 3) + e] = m * cx[3 * e + a];
        }
    for (int a = 3; a < 6; a++) I[6 * a + a] = m;
}

#endif
