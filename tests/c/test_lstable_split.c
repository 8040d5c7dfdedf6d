/* C tests of the Kronecker split of the block Newton system (irk_newton.c,
 * mb_irk_split_setup; used by lstable_block / astable_block, block_lstable.c):
 *   - T Lambda T^{-1} reproduces B to round-off (64 cond(T) eps) and T T^{-1} = I, for
 *     every r = 2..6, node family and variant (the matrix product recomputed here);
 *   - every eigenvalue lambda of B is the reciprocal of a zero of the denominator of the
 *     (k, j) Pade approximant of e^z (R(z) = e_r^T (I - z B)^{-1} (e + z d) has the poles
 *     1 / eig(B); the denominator's coefficients computed here from the closed form);
 *   - the real and complex blocks: r odd has one real eigenvalue, r even none (the Pade
 *     denominators of degree j = r have at most one real zero);
 *   - Radau IIA with 3 stages: 1 / eig(A) are RADAU5's constants gamma and alpha +- i beta
 *     (Hairer's RADAU5: U1, ALPH, BETA, printed to 20 digits);
 *   - a matrix without an eigenvector basis (a Jordan block) is refused. */
#include <complex.h>
#include <math.h>
#include <string.h>
#include "block_lstable.h"
#include "check.h"
#include "implicit_rk.h"
#include "irk_newton.h"
#include "status.h"

static double fact(int n)
{
    double f = 1.0;
    for (int i = 2; i <= n; i++) f *= i;
    return f;
}

/* |D(z)| / sum_i |D_i| |z|^i for the denominator of the (k, j) Pade approximant of e^z:
 * D_i = (-1)^i (k + j - i)! j! / ((k + j)! i! (j - i)!) */
static double pade_den_rel(int k, int j, double complex z)
{
    double complex s = 0.0;
    double a = 0.0;
    for (int i = 0; i <= j; i++) {
        double c = (i % 2 ? -1.0 : 1.0) * fact(k + j - i) * fact(j) / (fact(k + j) * fact(i) * fact(j - i));
        s += c * cpow(z, i);
        a += fabs(c) * pow(cabs(z), i);
    }
    return cabs(s) / a;
}

/* max |T Lambda T^{-1} - A| / max |A| and max |T T^{-1} - I|, recomputed */
static void reproduce(const mb_irk_split *sp, const double *A, double *res, double *id)
{
    int s = sp->s;
    double L[36] = {0}, amax = 0.0;
    for (int k = 0; k < sp->nb; k++) {
        int r = sp->row[k];
        L[r * s + r] = sp->lr[k];
        if (sp->size[k] == 2) {
            L[r * s + r + 1] = sp->li[k];
            L[(r + 1) * s + r] = -sp->li[k];
            L[(r + 1) * s + r + 1] = sp->lr[k];
        }
    }
    *res = *id = 0.0;
    for (int i = 0; i < s * s; i++) amax = fmax(amax, fabs(A[i]));
    for (int i = 0; i < s; i++)
        for (int j = 0; j < s; j++) {
            double tl = 0.0, tt = 0.0;
            for (int a = 0; a < s; a++) {
                tt += sp->T[i * s + a] * sp->TI[a * s + j];
                for (int b = 0; b < s; b++) tl += sp->T[i * s + a] * L[a * s + b] * sp->TI[b * s + j];
            }
            *res = fmax(*res, fabs(tl - A[i * s + j]) / amax);
            *id = fmax(*id, fabs(tt - (i == j)));
        }
}

static void block_cases(void)
{
    static const char *fam[] = {"equidistant", "chebyshev", "legendre"};
    for (int variant = 0; variant < 2; variant++)
        for (int r = 2; r <= MB_BLOCK_RMAX; r++)
            for (int nodes = 0; nodes < 3; nodes++) {
                mb_block_options o = {r, nodes, -1, -1, 0.0, 0};
                mb_block_coeffs co;
                char msg[256];
                if (mb_block_resolve(variant, &o, &co, NULL, msg, sizeof msg) != MB_OK) {
                    CHECK(0, "coefficients r = %d %s: %s", r, fam[nodes], msg);
                    continue;
                }
                mb_irk_split sp;
                int rc = mb_irk_split_setup(r, co.B, &sp);
                double res, id, den = 0.0;
                reproduce(&sp, co.B, &res, &id);
                int nreal = 0, rows = 0;
                for (int k = 0; k < sp.nb; k++) {
                    double complex lam = sp.lr[k] + I * sp.li[k];
                    den = fmax(den, pade_den_rel(co.k, co.j, 1.0 / lam));
                    nreal += sp.size[k] == 1;
                    rows += sp.size[k];
                }
                /* round-off: cond(T) eps times a small factor (astable r = 6: cond 4e3) */
                double tol = 64.0 * sp.cond * 2.220446049250313e-16;
                CHECK(rc == MB_OK && res <= tol && id <= tol && rows == r,
                      "%s r = %d %s: T Lambda T^-1 = B to %.1e, T T^-1 = I to %.1e, cond(T) %.1f",
                      variant ? "astable" : "lstable", r, fam[nodes], res, id, sp.cond);
                CHECK(den <= 1e-13, "%s r = %d %s: 1 / eig(B) are zeros of the (%d, %d) Pade "
                      "denominator (rel. residual %.1e)", variant ? "astable" : "lstable", r,
                      fam[nodes], co.k, co.j, den);
                CHECK(nreal == r % 2, "%s r = %d %s: %d real eigenvalue(s)",
                      variant ? "astable" : "lstable", r, fam[nodes], nreal);
            }
}

static void radau_case(void)
{
    /* Hairer's RADAU5 (radau5.f): U1, ALPH, BETA of the inverse of A */
    const double u1 = 3.6378342527444957322, al = 2.6810828736277521339,
                 be = 3.0504301992474105694;
    mb_irk_split sp;
    const mb_irk_tableau *T = &mb_irk_radau_iia3;
    int rc = mb_irk_split_setup(3, T->A, &sp);
    double res, id, eg = INFINITY, ep = INFINITY;
    reproduce(&sp, T->A, &res, &id);
    for (int k = 0; k < sp.nb; k++) {
        double complex inv = 1.0 / (sp.lr[k] + I * sp.li[k]);
        if (sp.size[k] == 1)
            eg = fabs(creal(inv) - u1) / u1;
        else  /* lambda = alpha + i beta, beta > 0: 1 / lambda = (alpha - i beta)/|.|^2 */
            ep = cabs(conj(inv) - (al + I * be)) / cabs(al + I * be);
    }
    CHECK(rc == MB_OK && sp.nb == 2 && res <= 1e-13, "Radau IIA 3: split, residual %.1e", res);
    CHECK(eg <= 1e-14 && ep <= 1e-14, "Radau IIA 3: 1/eig(A) = RADAU5's gamma (%.1e), "
          "alpha + i beta (%.1e)", eg, ep);
}

int main(void)
{
    block_cases();
    radau_case();
    const double jordan[4] = {0.5, 1.0, 0.0, 0.5}, zero[4] = {0.0, 1.0, 0.0, 0.0};
    mb_irk_split sp;
    CHECK(mb_irk_split_setup(2, jordan, &sp) == MB_ERR_LINALG,
          "a Jordan block (repeated eigenvalue) is refused");
    CHECK(mb_irk_split_setup(2, zero, &sp) == MB_ERR_LINALG, "a singular A is refused");
    CHECK(mb_irk_split_setup(7, jordan, &sp) == MB_ERR_ILL_INPUT, "s > 6 is refused");
    return check_summary();
}
