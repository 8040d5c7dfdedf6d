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
 *
 * Fields after `reference` (zero for the tableaus above; DOP853 uses them):
 * e3 (s + fsal entries): a second, lower-order estimate err3 = h sum_i e3_i k_i;
 *   with it the step returns err5 * |err5| / sqrt(|err5|^2 + 0.01 |err3|^2) (erk.c),
 *   |.| the driver's weighted RMS norm (Hairer's DOP853 error).
 * s_extra: stages evaluated for the dense output only, after a step:
 *   k_{m+r} = f(t + c_extra[r] h, y + h sum_{j < m+r} A_extra[r][j] k_j),
 *   m = s + fsal, r = 0..s_extra-1; A_extra is s_extra x (m + s_extra), row-major.
 * D (4 x (m + s_extra), row-major): Hairer's DOP853 dense form (then P is NULL):
 *   with delta = y_new - y, F0 = delta, F1 = h k_1 - delta, F2 = 2 delta - h (k_1 +
 *   k_{s+1}) (k_{s+1} = f(t + h, y_new), fsal), F_{3+j} = h sum_i D[j][i] k_i,
 *   y(theta) = y + theta (F0 + (1-theta) (F1 + theta (F2 + (1-theta) (F3 + theta (F4 +
 *   (1-theta) (F5 + theta F6)))))),  degree 7 (dense_deg = 7).
 */
typedef struct mb_erk_tableau {
    const char *name;
    int s, order, error_order, fsal, dense_deg;
    const double *c, *A, *b, *e, *P;
    const char *reference;
    const double *e3;
    int s_extra;
    const double *c_extra, *A_extra, *D;
} mb_erk_tableau;

extern const mb_erk_tableau mb_erk_euler, mb_erk_heun, mb_erk_rk4, mb_erk_rk23,
    mb_erk_dopri5, mb_erk_dop853;

#endif
