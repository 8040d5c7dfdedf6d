/* The serial vector operations of csrc/methods/sundials_nvec.c (mb_sun_fast_ops)
 * against the library's own (libsundials_nvecserial, the oracle): every operation on
 * the same data gives the same bits.  The data hold the values where the library's
 * special cases differ from the general formula: equal entries (x - y = +0, not -0),
 * signed zeros, a subnormal, huge values whose sum overflows, infinities and NaN
 * (a NaN result must be NaN; its payload is not compared).  The coefficients cover
 * every case of N_VLinearSum (a, b = +-1, a = b, a = -b, 0, others) with z distinct,
 * z = x and z = y, and of N_VScale (c = +-1, other, z = x).  Through the generic
 * N_VLinearCombination and N_VScaleAddMulti (composed of these, as in CVODE's
 * interpolation and Nordsieck updates) the results agree too.  The dense solver of
 * mb_sun_fast_dense against SUNLinSol_Dense: the same factors, pivots, solutions and
 * flags, on matrices with ties of pivot magnitude, zero entries (skipped updates), a
 * zero pivot (singular: the same failure flag and column).
 * Prints one line per group of checks and "N passed, M failed". */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <nvector/nvector_serial.h>
#include <sunlinsol/sunlinsol_dense.h>
#include <sunmatrix/sunmatrix_dense.h>
#include "check.h"
#include "sundials_impl.h"

#define N 12

static const double X0[N] = {0.0, -0.0, 1.5, -2.25, 1e-310, INFINITY, NAN, 3.0, -1e308, 0.1,
                             7.0, -0.0};
static const double Y0[N] = {-0.0, 0.0, 1.5, 4.5, -1e-310, 1.0, 2.0, 3.0, -1e308, -0.3,
                             -INFINITY, -0.0};
static const double W0[N] = {1.0, 2.0, 0.5, 1e-3, 1e3, 0.25, 1.0, 3.0, 1e-300, 10.0, 1.0, 1.0};

static int same(const double *a, const double *b, int n)
{
    for (int i = 0; i < n; i++)
        if (!(isnan(a[i]) && isnan(b[i])) && memcmp(&a[i], &b[i], sizeof(double)) != 0)
            return 0;
    return 1;
}

typedef struct { N_Vector x, y, z, w; } vset;

static void fill(vset *v)
{
    memcpy(NV_DATA_S(v->x), X0, sizeof X0);
    memcpy(NV_DATA_S(v->y), Y0, sizeof Y0);
    for (int i = 0; i < N; i++)
        NV_Ith_S(v->z, i) = 42.0;
    memcpy(NV_DATA_S(v->w), W0, sizeof W0);
}

static void make(vset *v, SUNContext ctx, int fast)
{
    N_Vector *all[] = {&v->x, &v->y, &v->z, &v->w};
    for (int i = 0; i < 4; i++) {
        *all[i] = N_VNew_Serial(N, ctx);
        if (fast)
            mb_sun_fast_ops(*all[i]);
    }
    fill(v);
}

static void drop(vset *v)
{
    N_VDestroy(v->x);
    N_VDestroy(v->y);
    N_VDestroy(v->z);
    N_VDestroy(v->w);
}

/* both sets equal in every vector, and the scalars r equal */
static int agree(vset *lib, vset *fast, double rl, double rf)
{
    return same(NV_DATA_S(lib->x), NV_DATA_S(fast->x), N) &&
           same(NV_DATA_S(lib->y), NV_DATA_S(fast->y), N) &&
           same(NV_DATA_S(lib->z), NV_DATA_S(fast->z), N) && same(&rl, &rf, 1);
}

static const double COEF[] = {1.0, -1.0, 0.0, 2.0, -2.0, 0.1, -0.1, 0.5};
#define NC (sizeof COEF / sizeof COEF[0])

static void test_linear_sum_and_scale(vset *L, vset *F)
{
    int ok = 1, count = 0;
    for (size_t i = 0; i < NC; i++)
        for (size_t j = 0; j < NC; j++)
            for (int alias = 0; alias < 3; alias++) {
                fill(L);
                fill(F);
                N_VLinearSum(COEF[i], L->x, COEF[j], L->y, alias == 0 ? L->z : alias == 1 ? L->x : L->y);
                N_VLinearSum(COEF[i], F->x, COEF[j], F->y, alias == 0 ? F->z : alias == 1 ? F->x : F->y);
                if (!agree(L, F, 0.0, 0.0)) {
                    ok = 0;
                    printf("  linear sum differs: a = %g, b = %g, alias %d\n", COEF[i], COEF[j],
                           alias);
                }
                count++;
            }
    CHECK(ok, "N_VLinearSum: %d cases (a, b, z = new / x / y) bit for bit", count);
    ok = 1;
    for (size_t i = 0; i < NC; i++)
        for (int alias = 0; alias < 2; alias++) {
            fill(L);
            fill(F);
            N_VScale(COEF[i], L->x, alias ? L->x : L->z);
            N_VScale(COEF[i], F->x, alias ? F->x : F->z);
            ok &= agree(L, F, 0.0, 0.0);
        }
    CHECK(ok, "N_VScale: c in %zu values, z = new / x, bit for bit", NC);
}

static void test_the_rest(vset *L, vset *F)
{
    fill(L);
    fill(F);
    double rl = N_VWrmsNorm(L->y, L->w), rf = N_VWrmsNorm(F->y, F->w);
    double sl = N_VWSqrSumLocal(L->x, L->w), sf = N_VWSqrSumLocal(F->x, F->w);
    double ql = N_VWrmsNorm(L->w, L->w), qf = N_VWrmsNorm(F->w, F->w);
    CHECK(agree(L, F, rl, rf) && same(&sl, &sf, 1) && agree(L, F, ql, qf) && isfinite(qf),
          "N_VWrmsNorm %.17g, N_VWSqrSumLocal (with inf, NaN) bit for bit", rf);
    N_VConst(-0.0, L->z);
    N_VConst(-0.0, F->z);
    int ok = agree(L, F, 0.0, 0.0);
    N_VAbs(L->x, L->z);
    N_VAbs(F->x, F->z);
    ok &= agree(L, F, 0.0, 0.0);
    N_VInv(L->y, L->z);
    N_VInv(F->y, F->z);
    ok &= agree(L, F, 0.0, 0.0);
    N_VAddConst(L->x, 0.7, L->z);
    N_VAddConst(F->x, 0.7, F->z);
    ok &= agree(L, F, 0.0, 0.0);
    N_VProd(L->x, L->y, L->z);
    N_VProd(F->x, F->y, F->z);
    ok &= agree(L, F, N_VMin(L->w), N_VMin(F->w)) && agree(L, F, N_VMin(L->y), N_VMin(F->y));
    CHECK(ok, "N_VConst, N_VAbs, N_VInv, N_VAddConst, N_VProd, N_VMin bit for bit");
    /* the generic compositions CVODE uses (fused operations are off by default) */
    double c[4] = {1.0, -0.5, 2.0, 0.1};
    N_Vector XL[3] = {L->x, L->y, L->w}, XF[3] = {F->x, F->y, F->w};
    N_VLinearCombination(3, c, XL, L->z);
    N_VLinearCombination(3, c, XF, F->z);
    ok = agree(L, F, 0.0, 0.0);
    N_Vector YL[2] = {L->y, L->z}, YF[2] = {F->y, F->z};
    N_VScaleAddMulti(2, c + 1, L->w, YL, YL);
    N_VScaleAddMulti(2, c + 1, F->w, YF, YF);
    ok &= agree(L, F, 0.0, 0.0);
    CHECK(ok, "N_VLinearCombination, N_VScaleAddMulti (generic) bit for bit");
}

static void test_ops_replaced(SUNContext ctx)
{
    N_Vector s = N_VNew_Serial(N, ctx);
    void (*before)(realtype, N_Vector, realtype, N_Vector, N_Vector) = s->ops->nvlinearsum;
    mb_sun_fast_ops(s);
    int changed = s->ops->nvlinearsum != before;
    N_Vector c = N_VClone(s);  /* an integrator's clone inherits them */
    int inherited = c->ops->nvlinearsum == s->ops->nvlinearsum;
    mb_sun_fast_ops(NULL);      /* no vector: nothing to do */
    CHECK(changed && inherited, "mb_sun_fast_ops replaces the operations; clones inherit them");
    N_VDestroy(c);
    N_VDestroy(s);
}

/* a 6 x 6 matrix of kind k: 0 general, 1 ties in |pivot| and zeros, 2 singular */
static void dense_fill(SUNMatrix A, int k)
{
    for (sunindextype j = 0; j < 6; j++)
        for (sunindextype i = 0; i < 6; i++) {
            double v = sin(1.0 + 7.0 * (double)i + 3.0 * (double)(j * j));
            if (k == 1)
                v = (i + j) % 3 == 0 ? 0.0 : ((i * j) % 2 ? -2.0 : 2.0) + 0.125 * (double)i;
            if (k == 2 && j == 3)
                v = 0.0;  /* a zero column: an exact zero pivot at k = 3 */
            SM_ELEMENT_D(A, i, j) = v;
        }
}

static void test_dense_solver(SUNContext ctx)
{
    N_Vector x = N_VNew_Serial(6, ctx), b = N_VNew_Serial(6, ctx), xf = N_VNew_Serial(6, ctx);
    SUNMatrix AL = SUNDenseMatrix(6, 6, ctx), AF = SUNDenseMatrix(6, 6, ctx);
    SUNLinearSolver L = SUNLinSol_Dense(x, AL, ctx), F = SUNLinSol_Dense(x, AF, ctx);
    int (*before)(SUNLinearSolver, SUNMatrix) = F->ops->setup;
    mb_sun_fast_dense(F);
    int ok = F->ops->setup != before;
    for (int k = 0; k < 3; k++) {
        dense_fill(AL, k);
        dense_fill(AF, k);
        for (sunindextype i = 0; i < 6; i++)
            NV_Ith_S(b, i) = 1.0 / (double)(i + 1) - 0.3;
        int sl = SUNLinSolSetup(L, AL), sf = SUNLinSolSetup(F, AF);
        SUNLinearSolverContent_Dense cl = L->content, cf = F->content;
        ok &= sl == sf && cl->last_flag == cf->last_flag && (k < 2) == (sf == 0) &&
              (k < 2 || cf->last_flag == 4) &&
              same(SUNDenseMatrix_Data(AL), SUNDenseMatrix_Data(AF), 36) &&
              memcmp(cl->pivots, cf->pivots, 6 * sizeof(sunindextype)) == 0;
        if (!ok)
            printf("  kind %d: setup %d / %d, flag %ld / %ld\n", k, sl, sf, (long)cl->last_flag,
                   (long)cf->last_flag);
        if (sf != 0)
            continue;
        int rl = SUNLinSolSolve(L, AL, x, b, 0.0), rf = SUNLinSolSolve(F, AF, xf, b, 0.0);
        ok &= rl == rf && same(NV_DATA_S(x), NV_DATA_S(xf), 6);
    }
    CHECK(ok, "dense LU: factors, pivots, solutions, singular flag bit for bit");
    SUNLinSolFree(L);
    SUNLinSolFree(F);
    SUNMatDestroy(AL);
    SUNMatDestroy(AF);
    N_VDestroy(x);
    N_VDestroy(b);
    N_VDestroy(xf);
}

int main(void)
{
    SUNContext ctx;
    if (SUNContext_Create(NULL, &ctx) != 0)
        return 1;
    vset L, F;
    make(&L, ctx, 0);
    make(&F, ctx, 1);
    test_linear_sum_and_scale(&L, &F);
    test_the_rest(&L, &F);
    test_ops_replaced(ctx);
    test_dense_solver(ctx);
    drop(&L);
    drop(&F);
    SUNContext_Free(&ctx);
    return check_summary();
}
