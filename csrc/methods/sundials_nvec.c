/* The serial N_Vector operations SUNDIALS spends its steps in, compiled with the
 * kernels (sundials_impl.h, mb_sun_fast_ops).  The libsundials this project links
 * (Debian's 6.4.1 package) is built without optimization: a copy of 12 doubles there
 * takes ~195 instructions, and CVODE's vector operations were about half of its
 * instructions on the RN double pendulum.  Each operation here computes, entry by
 * entry, the same IEEE expression as nvector_serial.c of SUNDIALS 6.4 in each of its
 * special cases (a = 1, b = -1, a = b, z = x, ...: e.g. a (x + y) when a = b, which
 * is not a x + a y), so every result is the same to the last bit, signed zeros and
 * NaN included; products are not contracted into fused multiply-adds (which the
 * library's unoptimized build does not use).  The fused and vector-array operations
 * stay NULL, as in the library's default: SUNDIALS then composes them from these.
 * The same for the dense linear solver (SUNLinSol_Dense: LU with partial pivoting,
 * SUNDlsMat_denseGETRF / GETRS), about a fifth of CVODE's instructions there:
 * mb_sun_fast_dense sets a setup and a solve with the same pivots and the same
 * operations in the same order. */
#include <math.h>
#include <sunlinsol/sunlinsol_dense.h>
#include "sundials_impl.h"

#if defined(__clang__)
#pragma clang fp contract(off)
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#endif

#define LEN(v) NV_LENGTH_S(v)
#define DAT(v) NV_DATA_S(v)

/* y <- a x + y */
static void axpy(double a, N_Vector x, N_Vector y)
{
    sunindextype n = LEN(x);
    const double *xd = DAT(x);
    double *yd = DAT(y);
    if (a == 1.0)
        for (sunindextype i = 0; i < n; i++)
            yd[i] += xd[i];
    else if (a == -1.0)
        for (sunindextype i = 0; i < n; i++)
            yd[i] -= xd[i];
    else
        for (sunindextype i = 0; i < n; i++)
            yd[i] += a * xd[i];
}

/* z = a x + s y, s = +1 or -1 (a x + y, a x - y; a = 1: x + y, x - y) */
static void lin(double a, N_Vector x, int s, N_Vector y, N_Vector z)
{
    sunindextype n = LEN(x);
    const double *xd = DAT(x), *yd = DAT(y);
    double *zd = DAT(z);
    if (a == 1.0 && s > 0)
        for (sunindextype i = 0; i < n; i++)
            zd[i] = xd[i] + yd[i];
    else if (a == 1.0)
        for (sunindextype i = 0; i < n; i++)
            zd[i] = xd[i] - yd[i];
    else if (s > 0)
        for (sunindextype i = 0; i < n; i++)
            zd[i] = a * xd[i] + yd[i];
    else
        for (sunindextype i = 0; i < n; i++)
            zd[i] = a * xd[i] - yd[i];
}

/* z = c (x + s y) */
static void scaled(double c, N_Vector x, int s, N_Vector y, N_Vector z)
{
    sunindextype n = LEN(x);
    const double *xd = DAT(x), *yd = DAT(y);
    double *zd = DAT(z);
    if (s > 0)
        for (sunindextype i = 0; i < n; i++)
            zd[i] = c * (xd[i] + yd[i]);
    else
        for (sunindextype i = 0; i < n; i++)
            zd[i] = c * (xd[i] - yd[i]);
}

/* z = a x + b y, by the library's cases in the library's order */
static void linear_sum(realtype a, N_Vector x, realtype b, N_Vector y, N_Vector z)
{
    if (b == 1.0 && z == y) {
        axpy(a, x, y);
    } else if (a == 1.0 && z == x) {
        axpy(b, y, x);
    } else if (a == 1.0 && b == 1.0) {
        lin(1.0, x, 1, y, z);
    } else if (a == 1.0 && b == -1.0) {
        lin(1.0, x, -1, y, z);
    } else if (a == -1.0 && b == 1.0) {
        lin(1.0, y, -1, x, z);
    } else if (a == 1.0) {
        lin(b, y, 1, x, z);
    } else if (b == 1.0) {
        lin(a, x, 1, y, z);
    } else if (a == -1.0) {
        lin(b, y, -1, x, z);
    } else if (b == -1.0) {
        lin(a, x, -1, y, z);
    } else if (a == b) {
        scaled(a, x, 1, y, z);
    } else if (a == -b) {
        scaled(a, x, -1, y, z);
    } else {
        sunindextype n = LEN(x);
        const double *xd = DAT(x), *yd = DAT(y);
        double *zd = DAT(z);
        for (sunindextype i = 0; i < n; i++)
            zd[i] = (a * xd[i]) + (b * yd[i]);
    }
}

static void scale(realtype c, N_Vector x, N_Vector z)
{
    sunindextype n = LEN(x);
    const double *xd = DAT(x);
    double *zd = DAT(z);
    if (z == x)
        for (sunindextype i = 0; i < n; i++)
            zd[i] *= c;
    else if (c == 1.0)
        for (sunindextype i = 0; i < n; i++)
            zd[i] = xd[i];
    else if (c == -1.0)
        for (sunindextype i = 0; i < n; i++)
            zd[i] = -xd[i];
    else
        for (sunindextype i = 0; i < n; i++)
            zd[i] = c * xd[i];
}

static realtype wsqrsum(N_Vector x, N_Vector w)
{
    sunindextype n = LEN(x);
    const double *xd = DAT(x), *wd = DAT(w);
    double sum = 0.0;
    for (sunindextype i = 0; i < n; i++) {
        double p = xd[i] * wd[i];
        sum += p * p;
    }
    return sum;
}

static realtype wrmsnorm(N_Vector x, N_Vector w)
{
    double s = wsqrsum(x, w) / (double)LEN(x);
    return s <= 0.0 ? 0.0 : sqrt(s);
}

static void vconst(realtype c, N_Vector z)
{
    sunindextype n = LEN(z);
    double *zd = DAT(z);
    for (sunindextype i = 0; i < n; i++)
        zd[i] = c;
}

static void vabs(N_Vector x, N_Vector z)
{
    sunindextype n = LEN(x);
    const double *xd = DAT(x);
    double *zd = DAT(z);
    for (sunindextype i = 0; i < n; i++)
        zd[i] = fabs(xd[i]);
}

static void vinv(N_Vector x, N_Vector z)
{
    sunindextype n = LEN(x);
    const double *xd = DAT(x);
    double *zd = DAT(z);
    for (sunindextype i = 0; i < n; i++)
        zd[i] = 1.0 / xd[i];
}

static void addconst(N_Vector x, realtype b, N_Vector z)
{
    sunindextype n = LEN(x);
    const double *xd = DAT(x);
    double *zd = DAT(z);
    for (sunindextype i = 0; i < n; i++)
        zd[i] = xd[i] + b;
}

static void prod(N_Vector x, N_Vector y, N_Vector z)
{
    sunindextype n = LEN(x);
    const double *xd = DAT(x), *yd = DAT(y);
    double *zd = DAT(z);
    for (sunindextype i = 0; i < n; i++)
        zd[i] = xd[i] * yd[i];
}

static realtype vmin(N_Vector x)
{
    sunindextype n = LEN(x);
    const double *xd = DAT(x);
    double m = xd[0];
    for (sunindextype i = 1; i < n; i++)
        if (xd[i] < m)
            m = xd[i];
    return m;
}

void mb_sun_fast_ops(N_Vector v)
{
    if (!v || N_VGetVectorID(v) != SUNDIALS_NVEC_SERIAL)
        return;
    v->ops->nvlinearsum = linear_sum;
    v->ops->nvscale = scale;
    v->ops->nvwrmsnorm = wrmsnorm;
    v->ops->nvwsqrsumlocal = wsqrsum;
    v->ops->nvconst = vconst;
    v->ops->nvabs = vabs;
    v->ops->nvinv = vinv;
    v->ops->nvaddconst = addconst;
    v->ops->nvprod = prod;
    v->ops->nvmin = vmin;
    v->ops->nvminlocal = vmin;
}

/* ------------------------------------------------------------------ dense LU */

/* LU of the m x n column-major a (columns cols[j]) with row pivots p, in place: the
 * library's elimination order (pivot: first largest |entry| at or below the diagonal;
 * multipliers times the pivot's reciprocal; columns updated left to right, skipped
 * where the pivot row's entry is 0).  0, or k + 1 at a zero pivot in column k. */
static sunindextype lu_factor(double **cols, sunindextype m, sunindextype n, sunindextype *p)
{
    for (sunindextype k = 0; k < n; k++) {
        double *ck = cols[k];
        sunindextype l = k;
        for (sunindextype i = k + 1; i < m; i++)
            if (fabs(ck[i]) > fabs(ck[l]))
                l = i;
        p[k] = l;
        if (ck[l] == 0.0)
            return k + 1;
        if (l != k)
            for (sunindextype j = 0; j < n; j++) {
                double t = cols[j][l];
                cols[j][l] = cols[j][k];
                cols[j][k] = t;
            }
        double mult = 1.0 / ck[k];
        for (sunindextype i = k + 1; i < m; i++)
            ck[i] *= mult;
        for (sunindextype j = k + 1; j < n; j++) {
            double *cj = cols[j], akj = cj[k];
            if (akj != 0.0)
                for (sunindextype i = k + 1; i < m; i++)
                    cj[i] -= akj * ck[i];
        }
    }
    return 0;
}

/* b <- A^-1 b from lu_factor's factors: permute, forward (unit L), backward (U) */
static void lu_solve(double **cols, sunindextype n, const sunindextype *p, double *b)
{
    for (sunindextype k = 0; k < n; k++)
        if (p[k] != k) {
            double t = b[k];
            b[k] = b[p[k]];
            b[p[k]] = t;
        }
    for (sunindextype k = 0; k < n - 1; k++) {
        const double *ck = cols[k];
        for (sunindextype i = k + 1; i < n; i++)
            b[i] -= ck[i] * b[k];
    }
    for (sunindextype k = n - 1; k > 0; k--) {
        const double *ck = cols[k];
        b[k] /= ck[k];
        for (sunindextype i = 0; i < k; i++)
            b[i] -= ck[i] * b[k];
    }
    b[0] /= cols[0][0];
}

#define DENSE(S) ((SUNLinearSolverContent_Dense)(S)->content)

static int dense_setup(SUNLinearSolver S, SUNMatrix A)
{
    if (!A || !S)
        return SUNLS_MEM_NULL;
    if (SUNMatGetID(A) != SUNMATRIX_DENSE) {
        DENSE(S)->last_flag = SUNLS_ILL_INPUT;
        return SUNLS_ILL_INPUT;
    }
    double **cols = SUNDenseMatrix_Cols(A);
    if (!cols || !DENSE(S)->pivots) {
        DENSE(S)->last_flag = SUNLS_MEM_FAIL;
        return SUNLS_MEM_FAIL;
    }
    DENSE(S)->last_flag = lu_factor(cols, SUNDenseMatrix_Rows(A), SUNDenseMatrix_Columns(A),
                                    DENSE(S)->pivots);
    return DENSE(S)->last_flag > 0 ? SUNLS_LUFACT_FAIL : SUNLS_SUCCESS;
}

static int dense_solve(SUNLinearSolver S, SUNMatrix A, N_Vector x, N_Vector b, realtype tol)
{
    (void)tol;
    if (!A || !S || !x || !b)
        return SUNLS_MEM_NULL;
    N_VScale(1.0, b, x);
    double **cols = SUNDenseMatrix_Cols(A), *xd = N_VGetArrayPointer(x);
    if (!cols || !xd || !DENSE(S)->pivots) {
        DENSE(S)->last_flag = SUNLS_MEM_FAIL;
        return SUNLS_MEM_FAIL;
    }
    lu_solve(cols, SUNDenseMatrix_Rows(A), DENSE(S)->pivots, xd);
    DENSE(S)->last_flag = SUNLS_SUCCESS;
    return SUNLS_SUCCESS;
}

void mb_sun_fast_dense(SUNLinearSolver LS)
{
    if (!LS || SUNLinSolGetType(LS) != SUNLINEARSOLVER_DIRECT ||
        LS->ops->setup != SUNLinSolSetup_Dense)
        return;
    LS->ops->setup = dense_setup;
    LS->ops->solve = dense_solve;
}
