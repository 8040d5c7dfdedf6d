/* The matrix exponential: scaling and squaring with diagonal Pade approximants,
 * after Al-Mohy & Higham, "A new scaling and squaring algorithm for the matrix
 * exponential", SIAM J. Matrix Anal. Appl. 31 (2009) 970-989 (their Algorithm 6.1),
 * which builds on Higham, SIAM J. Matrix Anal. Appl. 26 (2005) 1179-1193.
 *
 * r_m(x) = p_m(x) / p_m(-x) is the [m/m] Pade approximant of e^x.  With the even
 * and odd parts of p_m evaluated at A, V = sum b_2j A^2j and U = sum b_2j+1 A^2j+1,
 * r_m(A) = (V - U)^-1 (V + U): one LU factorization and one solve with n right-hand
 * sides.  exp(A) = r_m(2^-s A)^(2^s).
 *
 * Choice of m and s.  The backward error of r_m is h(A) = log(e^-A r_m(A)), an odd
 * power series starting at x^(2m+1), so ||h(A)|| / ||A|| <= sum_k |c_k| ||A^(k-1)||
 * over odd k >= 2m+1.  Every even k - 1 >= 2m is a sum of multiples of 2p and 2q for
 * the pairs (p, q) used below, hence ||A^(k-1)|| <= max(d_2p, d_2q)^(k-1) with
 * d_j = ||A^j||_1^(1/j), and eta = max(d_2p, d_2q) <= theta_m makes the backward error
 * at most the unit roundoff u = 2^-53 (theta_m: the largest theta with
 * sum_k |c_k| theta^(k-1) <= u, Higham 2005 Table 2.3; recomputed from the series of
 * h to 17 digits for the table below).
 *   m = 3, 5:  eta = max(d_4, d_6)      m = 7, 9:  eta = max(d_6, d_8)
 *   m = 13:    eta = min(max(d_6, d_8), max(d_8, d_10)), s = ceil(log2(eta / theta_13))
 * The norms: d_4 and d_6 are exact 1-norms of the powers A^4, A^6 computed anyway.
 * Before A^4 (A^6) exists, d_4 and d_6 are replaced by the upper bounds
 * ||A^2||^(1/2) and (||A^2|| ||A^4||)^(1/6), so a degree is never accepted on an
 * underestimate (at worst one product more than the paper, which estimates them).
 * d_8 and d_10 are bounded by products of the computed norms, and only when that
 * bound is not already small enough to decide are they estimated with the
 * Hager-Higham 1-norm estimator applied to A^4 A^4 and A^4 A^6 as operators
 * (matrix-vector products, O(n^2), the powers are never formed), as in the paper.
 *
 * Rounding in the evaluation of r_m: ell(A, m) = max(ceil(log2(alpha / u) / (2m)), 0)
 * with alpha = |c_2m+1| || |A|^(2m+1) ||_1 / ||A||_1 extra squarings (Al-Mohy &
 * Higham, section 5).  || |A|^(2m+1) ||_1 is computed exactly as the largest entry of
 * e^T |A|^(2m+1) (2m+1 vector-matrix products, renormalized at every step so that no
 * power overflows).  A degree m < 13 is taken only if ell(A, m) = 0; for m = 13,
 * s += ell(2^-s A, 13).
 *
 * theta_13 = 4.25 is the value used with this algorithm (Al-Mohy & Higham's Algorithm
 * 6.1, as in SciPy's expm); the truncation bound alone allows 5.3719.
 *
 * Matrices whose entries exceed 2^100 / n are first scaled by an exact power of two
 * 2^-s0 (so that A^6 cannot overflow) and s0 is added to the squarings. */
#include <math.h>
#include <string.h>
#include "carve.h"
#include "dense.h"
#include "expm.h"
#include "status.h"

/* p_m(x) = sum_k b_k x^k scaled so that b_m = 1: b_k = (2m-k)! / (k! (m-k)!) */
static const double pade3[] = {120.0, 60.0, 12.0, 1.0};
static const double pade5[] = {30240.0, 15120.0, 3360.0, 420.0, 30.0, 1.0};
static const double pade7[] = {17297280.0, 8648640.0, 1995840.0, 277200.0,
                               25200.0,    1512.0,    56.0,      1.0};
static const double pade9[] = {17643225600.0, 8821612800.0, 2075673600.0, 302702400.0,
                               30270240.0,    2162160.0,    110880.0,     3960.0,
                               90.0,          1.0};
static const double pade13[] = {64764752532480000.0, 32382376266240000.0, 7771770303897600.0,
                                1187353796428800.0,  129060195264000.0,   10559470521600.0,
                                670442572800.0,      33522128640.0,       1323241920.0,
                                40840800.0,          960960.0,            16380.0,
                                182.0,               1.0};

typedef struct pade_degree {
    int m;
    double theta;  /* eta <= theta: backward error of r_m at most u = 2^-53 */
    double c;      /* |c_2m+1| = (m!)^2 / ((2m)! (2m+1)!), leading coefficient of h */
    const double *b;
} pade_degree;

static const pade_degree PADE[] = {
    {3, 1.4955852179582915e-2, 9.9206349206349206e-6, pade3},
    {5, 2.5393983300632321e-1, 9.9413128513657614e-11, pade5},
    {7, 9.5041789961629319e-1, 2.2281945605535596e-16, pade7},
    {9, 2.0978479612570675e0, 1.6907929343118737e-22, pade9},
    {13, 4.25, 8.8299616020186779e-36, pade13},
};
enum { P3, P5, P7, P9, P13 };

#define LOG2_U (-53.0)
#define PRESCALE_LOG2 100  /* entries above 2^100 / n are scaled down first */

static double norm1(ptrdiff_t n, const double *M, ptrdiff_t ld)
{
    double nrm = 0.0;
    for (ptrdiff_t j = 0; j < n; j++) {
        double c = 0.0;
        for (ptrdiff_t i = 0; i < n; i++)
            c += fabs(M[j * ld + i]);
        nrm = c > nrm ? c : nrm;
    }
    return nrm;
}

/* sum_i x_i y_i and sum_i x_i |y_i|, with four partial sums (the loops below are
 * bound by the latency of one addition chain otherwise) */
static double dot(ptrdiff_t n, const double *x, const double *y)
{
    double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0;
    ptrdiff_t i = 0;
    for (; i + 4 <= n; i += 4) {
        s0 += x[i] * y[i];
        s1 += x[i + 1] * y[i + 1];
        s2 += x[i + 2] * y[i + 2];
        s3 += x[i + 3] * y[i + 3];
    }
    for (; i < n; i++)
        s0 += x[i] * y[i];
    return (s0 + s1) + (s2 + s3);
}

static double dot_abs(ptrdiff_t n, const double *x, const double *y)
{
    double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0;
    ptrdiff_t i = 0;
    for (; i + 4 <= n; i += 4) {
        s0 += x[i] * fabs(y[i]);
        s1 += x[i + 1] * fabs(y[i + 1]);
        s2 += x[i + 2] * fabs(y[i + 2]);
        s3 += x[i + 3] * fabs(y[i + 3]);
    }
    for (; i < n; i++)
        s0 += x[i] * fabs(y[i]);
    return (s0 + s1) + (s2 + s3);
}

/* y = M x, M n x n with leading dimension n */
static void matvec(ptrdiff_t n, const double *M, const double *x, double *y)
{
    for (ptrdiff_t i = 0; i < n; i++)
        y[i] = 0.0;
    for (ptrdiff_t j = 0; j < n; j++) {
        double xj = x[j];
        const double *mj = M + j * n;
        if (xj != 0.0)
            for (ptrdiff_t i = 0; i < n; i++)
                y[i] += mj[i] * xj;
    }
}

/* y = M^T x */
static void matvec_t(ptrdiff_t n, const double *M, const double *x, double *y)
{
    for (ptrdiff_t j = 0; j < n; j++)
        y[j] = dot(n, M + j * n, x);
}

static double asum(ptrdiff_t n, const double *x)
{
    double s = 0.0;
    for (ptrdiff_t i = 0; i < n; i++)
        s += fabs(x[i]);
    return s;
}

static ptrdiff_t iamax(ptrdiff_t n, const double *x)
{
    ptrdiff_t j = 0;
    for (ptrdiff_t i = 1; i < n; i++)
        if (fabs(x[i]) > fabs(x[j]))
            j = i;
    return j;
}

/* Lower estimate of ||P Q||_1 (n >= 2, P and Q with leading dimension n) by the
 * Hager-Higham method (Higham, ACM TOMS 14 (1988) 381-396, Algorithm 4.1): ascent on
 * ||B x||_1 over the unit 1-norm ball through sign vectors, at most 5 steps, plus the
 * alternating test vector.  Every value returned is ||B x||_1 / ||x||_1 for some x.
 * vec: 5n doubles. */
static double normest_prod(ptrdiff_t n, const double *P, const double *Q, double *vec)
{
    double *x = vec, *y = x + n, *xi = y + n, *z = xi + n, *t = z + n;
    for (ptrdiff_t i = 0; i < n; i++)
        x[i] = 1.0 / (double)n;
    matvec(n, Q, x, t);
    matvec(n, P, t, y);
    double est = asum(n, y);
    for (ptrdiff_t i = 0; i < n; i++)
        xi[i] = y[i] >= 0.0 ? 1.0 : -1.0;
    matvec_t(n, P, xi, t);
    matvec_t(n, Q, t, z);
    ptrdiff_t j = iamax(n, z);
    double ztx = 0.0;
    for (ptrdiff_t i = 0; i < n; i++)
        ztx += z[i] * x[i];
    if (fabs(z[j]) > ztx) {
        for (int iter = 0; iter < 4; iter++) {
            matvec(n, P, Q + j * n, y);  /* B e_j */
            double est_new = asum(n, y);
            int same = 1;
            for (ptrdiff_t i = 0; i < n; i++)
                if ((y[i] >= 0.0 ? 1.0 : -1.0) != xi[i]) {
                    same = 0;
                    break;
                }
            if (same || est_new <= est) {
                est = fmax(est, est_new);
                break;
            }
            est = est_new;
            for (ptrdiff_t i = 0; i < n; i++)
                xi[i] = y[i] >= 0.0 ? 1.0 : -1.0;
            matvec_t(n, P, xi, t);
            matvec_t(n, Q, t, z);
            ptrdiff_t jn = iamax(n, z);
            if (fabs(z[jn]) <= z[j])  /* ||z||_inf <= z^T e_j: a local maximum */
                break;
            j = jn;
        }
    }
    for (ptrdiff_t i = 0; i < n; i++)
        x[i] = (i % 2 ? -1.0 : 1.0) * (1.0 + (double)i / (double)(n - 1));
    matvec(n, Q, x, t);
    matvec(n, P, t, y);
    return fmax(est, 2.0 * asum(n, y) / (3.0 * (double)n));
}

/* ell(2^-s X, m): extra squarings that keep the rounding errors of evaluating r_m
 * small (see the file comment).  normX = ||X||_1 > 0.  vec: 2n doubles. */
static int ell(ptrdiff_t n, const double *X, ptrdiff_t ldx, double normX, int s,
               const pade_degree *pd, double *vec)
{
    double *v = vec, *w = vec + n, wmax = 0.0;
    long expo = 0;  /* || |X|^p ||_1 = max_j v_j 2^expo */
    for (ptrdiff_t i = 0; i < n; i++)
        v[i] = 1.0;
    for (int p = 0; p < 2 * pd->m + 1; p++) {  /* v <- v^T |X| */
        wmax = 0.0;
        for (ptrdiff_t j = 0; j < n; j++) {
            double sum = dot_abs(n, v, X + j * ldx);
            w[j] = sum;
            wmax = sum > wmax ? sum : wmax;
        }
        if (wmax == 0.0)  /* |X|^(p+1) = 0 */
            return 0;
        double *tmp = v;
        v = w;
        w = tmp;
        /* one step multiplies by at most ||X||_1 < 2^(PRESCALE_LOG2 + 1): rescale by an
         * exact power of two well before overflow or underflow */
        if (wmax > 0x1p300 || wmax < 0x1p-300) {
            int e;
            (void)frexp(wmax, &e);
            expo += e;
            double f = ldexp(1.0, -e);
            for (ptrdiff_t j = 0; j < n; j++)
                v[j] *= f;
            wmax = ldexp(wmax, -e);
        }
    }
    double log2_pow = (double)expo + log2(wmax);
    double log2_alpha = log2(pd->c) + log2_pow - log2(normX) - 2.0 * pd->m * s;
    double t = (log2_alpha - LOG2_U) / (2.0 * pd->m);
    return t > 0.0 ? (int)ceil(t) : 0;
}

static void scale(ptrdiff_t nn, double *M, double f)
{
    for (ptrdiff_t i = 0; i < nn; i++)
        M[i] *= f;
}

/* V = b_0 I + sum_j b_2j P_j and T = b_1 I + sum_j b_2j+1 P_j over the even powers
 * P_j = A^2j, j = 1..h (h = (m-1)/2 <= 4).  T may be the storage of P_h (written
 * entry by entry after it is read). */
static void pade_even_odd(ptrdiff_t n, const double *b, int h, double *const *P, double *V,
                          double *T)
{
    for (ptrdiff_t col = 0; col < n; col++)
        for (ptrdiff_t i = 0; i < n; i++) {
            ptrdiff_t k = col * n + i;
            double v = col == i ? b[0] : 0.0, t = col == i ? b[1] : 0.0;
            for (int j = 1; j <= h; j++) {
                double p = P[j - 1][k];
                v += b[2 * j] * p;
                t += b[2 * j + 1] * p;
            }
            V[k] = v;
            T[k] = t;
        }
}

/* dst = c6 A6 + c4 A4 + c2 A2 + c0 I */
static void lincomb13(ptrdiff_t n, double c6, const double *A6, double c4, const double *A4,
                      double c2, const double *A2, double c0, double *dst)
{
    for (ptrdiff_t col = 0; col < n; col++)
        for (ptrdiff_t i = 0; i < n; i++) {
            ptrdiff_t k = col * n + i;
            dst[k] = c6 * A6[k] + c4 * A4[k] + c2 * A2[k] + (col == i ? c0 : 0.0);
        }
}

/* mb_expm's workspace: the even powers A^2, A^4, A^6, W, V (the Pade parts), S (the
 * prescaled A), each n x n, and 5n for the norm estimates */
typedef struct expm_ws {
    double *A2, *A4, *A6, *W, *V, *S, *vec;
} expm_ws;

/* The one layout of the workspace: counts it (c->base NULL) and carves it. */
static size_t layout(mb_carver *c, ptrdiff_t n, expm_ws *w)
{
    size_t nn = (size_t)(n * n);
    w->A2 = mb_carve(c, nn);
    w->A4 = mb_carve(c, nn);
    w->A6 = mb_carve(c, nn);
    w->W = mb_carve(c, nn);
    w->V = mb_carve(c, nn);
    w->S = mb_carve(c, nn);
    w->vec = mb_carve(c, 5 * (size_t)n);
    return c->off;
}

size_t mb_expm_work_size(ptrdiff_t n)
{
    expm_ws w;
    return n > 0 ? layout(&(mb_carver){NULL, 0}, n, &w) : 0;
}

void mb_expm_carve(mb_carver *c, ptrdiff_t n, mb_expm_scratch *x)
{
    x->M = mb_carve(c, (size_t)(n * n));
    x->work = mb_carve(c, mb_expm_work_size(n));
    x->ipiv = mb_carve_int(c, (size_t)n);
}

/* One evaluation: the matrix X the algorithm works on, its workspace and what it found
 * on the way (1-norms of the powers, their roots d_j, the statistics). */
typedef struct expm_run {
    ptrdiff_t n, nn;
    const double *X;  /* A or 2^-s0 A */
    ptrdiff_t ldx;
    int s0;           /* squarings of the prescaling */
    double normX;     /* ||X||_1 */
    expm_ws w;
    double n2, n4, n6, d4, d6, d8, eta3;
    int d8_estimated;
    mb_expm_stats st;
} expm_run;

/* X = A, or 2^-s0 A in S when the entries exceed 2^100 / n (amax: the largest |a_ij|) */
static void prescale(expm_run *r, const double *A, ptrdiff_t lda, double amax)
{
    ptrdiff_t n = r->n;
    int e2, log2n = 0;
    while (((ptrdiff_t)1 << log2n) < n)
        log2n++;
    (void)frexp(amax, &e2);  /* amax < 2^e2 */
    r->X = A;
    r->ldx = lda;
    r->s0 = 0;
    if (e2 + log2n > PRESCALE_LOG2) {
        r->s0 = e2 + log2n - PRESCALE_LOG2;
        for (ptrdiff_t j = 0; j < n; j++)
            for (ptrdiff_t i = 0; i < n; i++)
                r->w.S[j * n + i] = ldexp(A[j * lda + i], -r->s0);
        r->X = r->w.S;
        r->ldx = n;
    }
    r->normX = norm1(n, r->X, r->ldx);
}

/* The degrees 3, 5, 7, 9 that need no squaring: the first whose bound eta <= theta_m
 * and ell = 0, or NULL (then m = 13).  Forms A^2, and A^4, A^6 as far as needed. */
static const pade_degree *low_degree(expm_run *r)
{
    ptrdiff_t n = r->n;
    const double *X = r->X;
    ptrdiff_t ldx = r->ldx;
    double *A2 = r->w.A2, *A4 = r->w.A4, *A6 = r->w.A6, *vec = r->w.vec;

    /* degree 3: eta_1 = max(d_4, d_6) <= ||A^2||^(1/2) */
    mb_gemm(n, n, n, 1.0, X, ldx, X, ldx, 0.0, A2, n);
    r->st.products = 1;
    const double n2 = r->n2 = norm1(n, A2, n);
    if (sqrt(n2) <= PADE[P3].theta && ell(n, X, ldx, r->normX, 0, &PADE[P3], vec) == 0)
        return &PADE[P3];

    /* degree 5: eta_2 = max(d_4, d_6), d_4 exact, d_6 <= (||A^2|| ||A^4||)^(1/6) */
    mb_gemm(n, n, n, 1.0, A2, n, A2, n, 0.0, A4, n);
    r->st.products++;
    double n4 = r->n4 = norm1(n, A4, n);
    double d4 = r->d4 = pow(n4, 0.25);
    double d6b = fmin(sqrt(n2), pow(n2, 1.0 / 6) * pow(n4, 1.0 / 6));
    if (fmax(d4, d6b) <= PADE[P5].theta && ell(n, X, ldx, r->normX, 0, &PADE[P5], vec) == 0)
        return &PADE[P5];

    /* degrees 7, 9: eta_3 = max(d_6, d_8), d_6 exact, d_8 bounded or estimated */
    mb_gemm(n, n, n, 1.0, A2, n, A4, n, 0.0, A6, n);
    r->st.products++;
    double n6 = r->n6 = norm1(n, A6, n);
    double d6 = r->d6 = pow(n6, 1.0 / 6);
    double d8 = fmin(d4, pow(n2, 1.0 / 8) * pow(n6, 1.0 / 8));
    if (fmax(d6, d8) > PADE[P7].theta) {
        d8 = fmin(d8, pow(normest_prod(n, A4, A4, vec), 1.0 / 8));
        r->d8_estimated = 1;
    }
    r->d8 = d8;
    double eta3 = r->eta3 = fmax(d6, d8);
    for (int k = P7; k <= P9; k++)
        if (eta3 <= PADE[k].theta && ell(n, X, ldx, r->normX, 0, &PADE[k], vec) == 0)
            return &PADE[k];
    return NULL;
}

/* m = 3, 5, 7, 9: V and U = A T from the even powers A^2 .. A^(m-1) (A^8 in W); returns
 * U (in A2) */
static double *evaluate_low(expm_run *r, const pade_degree *pd)
{
    ptrdiff_t n = r->n;
    expm_ws *w = &r->w;
    int h = (pd->m - 1) / 2;
    double *P[4] = {w->A2, w->A4, w->A6, w->W};
    if (pd->m == 9) {
        mb_gemm(n, n, n, 1.0, w->A4, n, w->A4, n, 0.0, w->W, n);
        r->st.products++;
    }
    pade_even_odd(n, pd->b, h, P, w->V, w->W);  /* V, and T = odd part / A in W */
    mb_gemm(n, n, n, 1.0, r->X, r->ldx, w->W, n, 0.0, w->A2, n);  /* U = A T */
    r->st.products++;
    return w->A2;
}

/* m = 13: the squarings s (*s), then V and U of 2^-s A; returns U (in A4) */
static double *evaluate13(expm_run *r, const pade_degree *pd, int *s_out)
{
    ptrdiff_t n = r->n;
    expm_ws *w = &r->w;
    double *A2 = w->A2, *A4 = w->A4, *A6 = w->A6, *W = w->W, *V = w->V;
    double d8 = r->d8, eta3 = r->eta3;
    double eta4 = fmax(d8, pow(r->n4, 0.1) * pow(r->n6, 0.1));
    double eta5 = fmin(eta3, eta4);
    if (eta5 > pd->theta) {  /* the bounds do not give s = 0: estimate d_8, d_10 */
        if (!r->d8_estimated) {
            d8 = fmin(d8, pow(normest_prod(n, A4, A4, w->vec), 1.0 / 8));
            eta3 = fmax(r->d6, d8);
        }
        double d10 = fmin(pow(r->n4, 0.1) * pow(r->n6, 0.1),
                          pow(normest_prod(n, A4, A6, w->vec), 0.1));
        eta4 = fmax(d8, d10);
        eta5 = fmin(eta3, eta4);
    }
    int s = eta5 > pd->theta ? (int)ceil(log2(eta5 / pd->theta)) : 0;
    s += ell(n, r->X, r->ldx, r->normX, s, pd, w->vec);
    *s_out = s;
    const double *b = pd->b;
    double sig = ldexp(1.0, -s);
    if (s > 0) {  /* A^2j <- (2^-s A)^2j, exact */
        scale(r->nn, A2, ldexp(1.0, -2 * s));
        scale(r->nn, A4, ldexp(1.0, -4 * s));
        scale(r->nn, A6, ldexp(1.0, -6 * s));
    }
    /* V = A6 (b12 A6 + b10 A4 + b8 A2) + b6 A6 + b4 A4 + b2 A2 + b0 I */
    lincomb13(n, b[6], A6, b[4], A4, b[2], A2, b[0], V);
    lincomb13(n, b[12], A6, b[10], A4, b[8], A2, 0.0, W);
    mb_gemm(n, n, n, 1.0, A6, n, W, n, 1.0, V, n);
    /* U = A [A6 (b13 A6 + b11 A4 + b9 A2) + b7 A6 + b5 A4 + b3 A2 + b1 I] */
    lincomb13(n, b[13], A6, b[11], A4, b[9], A2, 0.0, W);
    lincomb13(n, b[7], A6, b[5], A4, b[3], A2, b[1], A2);
    mb_gemm(n, n, n, 1.0, A6, n, W, n, 1.0, A2, n);
    mb_gemm(n, n, n, sig, r->X, r->ldx, A2, n, 0.0, A4, n);
    r->st.products += 3;
    return A4;
}

/* r_m = (V - U)^-1 (V + U), squared s times, into E; MB_ERR_LINALG when the
 * denominator is singular or the result is not finite (E then untouched) */
static int solve_and_square(expm_run *r, const double *U, int s, int *ipiv, double *E,
                            ptrdiff_t lde)
{
    ptrdiff_t n = r->n, nn = r->nn;
    double *V = r->w.V, *W = r->w.W;
    for (ptrdiff_t k = 0; k < nn; k++) {
        double v = V[k], u = U[k];
        W[k] = v + u;
        V[k] = v - u;
    }
    if (mb_lu_factor(n, V, n, ipiv) != MB_OK || mb_lu_solve(n, V, n, ipiv, W, n) != MB_OK)
        return MB_ERR_LINALG;

    /* squarings, between W and A2 (free now) */
    double *cur = W, *other = r->w.A2;
    for (int k = 0; k < s; k++) {
        mb_gemm(n, n, n, 1.0, cur, n, cur, n, 0.0, other, n);
        double *tmp = cur;
        cur = other;
        other = tmp;
    }
    r->st.products += s;
    for (ptrdiff_t k = 0; k < nn; k++)
        if (!isfinite(cur[k]))
            return MB_ERR_LINALG;
    for (ptrdiff_t j = 0; j < n; j++)
        memcpy(E + j * lde, cur + j * n, (size_t)n * sizeof *E);
    return MB_OK;
}

int mb_expm_ex(ptrdiff_t n, const double *A, ptrdiff_t lda, double *E, ptrdiff_t lde,
               double *work, int *ipiv, mb_expm_stats *stats)
{
    mb_expm_stats st0 = {0, 0, 0};
    if (stats)
        *stats = st0;
    if (n < 0 || (n > 0 && (lda < n || lde < n)))
        return MB_ERR_ILL_INPUT;
    if (n == 0)
        return MB_OK;

    double amax = 0.0;
    for (ptrdiff_t j = 0; j < n; j++)
        for (ptrdiff_t i = 0; i < n; i++) {
            double a = A[j * lda + i];
            if (!isfinite(a))
                return MB_ERR_LINALG;
            amax = fmax(amax, fabs(a));
        }
    if (n == 1 || amax == 0.0) {
        double e1 = exp(A[0]);
        if (!isfinite(e1))
            return MB_ERR_LINALG;
        for (ptrdiff_t j = 0; j < n; j++)
            for (ptrdiff_t i = 0; i < n; i++)
                E[j * lde + i] = i == j ? e1 : 0.0;
        return MB_OK;
    }

    expm_run r = {.n = n, .nn = n * n};
    layout(&(mb_carver){work, 0}, n, &r.w);
    prescale(&r, A, lda, amax);
    const pade_degree *pd = low_degree(&r);
    int s = 0;
    const double *U;
    if (pd) {
        U = evaluate_low(&r, pd);
    } else {
        pd = &PADE[P13];
        U = evaluate13(&r, pd, &s);
    }
    s += r.s0;
    int rc = solve_and_square(&r, U, s, ipiv, E, lde);
    if (rc != MB_OK)
        return rc;
    r.st.m = pd->m;
    r.st.s = s;
    if (stats)
        *stats = r.st;
    return MB_OK;
}

int mb_expm(ptrdiff_t n, const double *A, ptrdiff_t lda, double *E, ptrdiff_t lde, double *work,
            int *ipiv, int *squarings)
{
    mb_expm_stats st;
    int status = mb_expm_ex(n, A, lda, E, lde, work, ipiv, &st);
    if (squarings)
        *squarings = st.s;
    return status;
}
