#ifndef MB_MBS_MAT3_H
#define MB_MBS_MAT3_H
/* 3-vectors and row-major 3 x 3 matrices of the joint-tree kernels (joint_tree.c,
 * joint_tree_deriv.c): one definition, inlined.  The outputs may alias the inputs of
 * cross3, mv3, mtv3 (each result is formed before it is stored), not of the products
 * mm3, mtm3, mmt3 (C distinct from A and B).  Header only; no state. */

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

#endif
