#ifndef MB_METHODS_TABLEAUS_H
#define MB_METHODS_TABLEAUS_H
/* Butcher tableaus of the explicit Runge-Kutta family, as data (tableaus.c).
 *
 * s stages k_1..k_s with k_i = f(t + c_i h, y + h sum_j A[i][j] k_j) (A row-major
 * s x s, strictly lower triangular), y_new = y + h sum_i b_i k_i.
 * fsal: k_{s+1} = f(t + h, y_new) is also evaluated (and reused as the next k_1).
 * e (s + fsal entries): local error estimate err = h sum_i e_i k_i = y_new - y_hat.
 * P ((s + fsal) x dense_deg, row-major): dense output
 *   y(theta) = y + h sum_i k_i sum_j P[i][j] theta^(j+1).
 */
typedef struct mb_erk_tableau {
    const char *name;
    int s, order, error_order, fsal, dense_deg;
    const double *c, *A, *b, *e, *P;
    const char *reference;
} mb_erk_tableau;

extern const mb_erk_tableau mb_erk_euler, mb_erk_heun, mb_erk_rk4, mb_erk_rk23,
    mb_erk_dopri5;

#endif
