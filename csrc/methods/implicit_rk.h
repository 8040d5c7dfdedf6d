#ifndef MB_METHODS_IMPLICIT_RK_H
#define MB_METHODS_IMPLICIT_RK_H
/* Implicit Runge-Kutta methods from node sets (tableaus_irk.h).
 *
 * implicit_rk.c: one fixed-step kernel for Radau IA, Radau IIA and Lobatto IIIC
 *   with s = 2, 3, 4 stages (radau_ia2 ... lobatto_iiic4): simplified Newton on the
 *   full s n system with one real LU of (I_s (x) M - h A (x) J).
 * radau5.c: the adaptive 3-stage Radau IIA method of order 5 as in Hairer's RADAU5
 *   (radau_iia): transformed Newton system, embedded error estimate, collocation
 *   dense output, constant (possibly singular) mass matrix.
 */
#include "method.h"
#include "tableaus_irk.h"

extern const mb_method mb_method_radau_ia2, mb_method_radau_ia3, mb_method_radau_ia4,
    mb_method_radau_iia2, mb_method_radau_iia3, mb_method_radau_iia4, mb_method_lobatto_iiic2,
    mb_method_lobatto_iiic3, mb_method_lobatto_iiic4;
extern const mb_method mb_method_radau_iia;

/* Stability function R(z) = 1 + z b^T (I - z A)^{-1} 1 of tableau T at
 * z = zr + i zi, written to Rr + i Ri (complex Gaussian elimination with partial
 * pivoting).  Returns MB_OK, or MB_ERR_LINALG when I - z A is singular (z is a
 * pole of R). */
int mb_irk_stability(const mb_irk_tableau *T, double zr, double zi, double *Rr, double *Ri);

/* Dense output of an implicit Runge-Kutta step (see tableaus_irk.h): writes the
 * coefficients C ((T->m + 1) x n, C[k*n + i] of theta^k) of the polynomial through
 * y at theta = 0, y + Z_i at the interior nodes and y_new at theta = 1.
 * Z: stage increments (s x n, stage-major), y, y_new: size n. */
void mb_irk_dense_coeffs(const mb_irk_tableau *T, ptrdiff_t n, const double *y,
                         const double *y_new, const double *Z, double *C);

#endif
