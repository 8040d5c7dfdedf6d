#ifndef MB_METHODS_TABLEAUS_ROS_H
#define MB_METHODS_TABLEAUS_ROS_H
/* Rosenbrock and W-method coefficient tables, as data (tableaus_ros.c).
 *
 * Every table is written in the transformed form of Hairer & Wanner (Solving ODEs
 * II, IV.7, eq. 7.25), which is also the form of Theorem 2.1 of the RN paper
 * (a_ij, c_ij, m_i): with u_i = sum_{j<=i} gamma_ij k_j the s stages are
 *
 *   (M/(h gamma) - J) u_i = f(t + alpha_i h, y + sum_{j<i} a_ij u_j)
 *                           + M sum_{j<i} (c_ij / h) u_j + gam_i h df/dt(t, y),
 *   y_new = y + sum_i m_i u_i,     y_hat = y + sum_i mhat_i u_i,
 *
 * (M = I without a mass matrix).  In the defining coefficients of RN eqs 11a-11b
 * (alpha_ij, gamma_ij, b_i, bhat_i; Gamma = (gamma_ij) lower triangular with
 * diagonal gamma):  A = (alpha_ij) Gamma^-1,  C = diag(1/gamma) - Gamma^-1,
 * m = b^T Gamma^-1, mhat = bhat^T Gamma^-1, gam_i = sum_j gamma_ij,
 * alpha_i = sum_j alpha_ij.  The tests convert back and check the order
 * conditions of the defining form (tests/c/test_rosenbrock.c).
 *
 * a, c: s x s row-major, strictly lower triangular.
 * new_f[i] = 0: stage i has the same argument as stage i - 1 (same row of a, same
 *   alpha) and reuses its f (the saved evaluation of the RN method, alpha_4j = alpha_3j).
 * fsal: the argument of the last stage is y_new (row s of a equals m, m_s = 0,
 *   alpha_s = 1), so that stage's f is f(t + h, y_new), handed to the next step.
 * w_method: the order holds for any matrix in place of J (a W-method): the kernel
 *   keeps J across steps.
 * filter_err: the error estimate is filtered, err <- (I - h gamma J)^-1 (y_new - y_hat)
 *   (Shampine 1982; Hairer & Wanner IV.8 eq. 8.20; the remedy named in the RN
 *   paper, section 5.1), for embedded formulas that are not L-stable: it damps the
 *   O(1) estimate of stiff components (one more LU solve per step; M = I only).
 * dense_deg: degree of the continuous extension, given either
 *   - as monomials (P != NULL, dense_deg x s row-major):
 *       y(theta) = y + sum_k theta^k sum_i P[k-1][i] u_i,   or
 *   - in Hairer's RODAS form (P == NULL; rodas.f, CONTRO):
 *       y(theta) = (1 - theta) y + theta (y_new + (1 - theta)(H2 + theta H3)),
 *       H2 = sum_i d2_i u_i,  H3 = sum_i d3_i u_i.
 *   Both are combinations of the stages, never of h f: the driver's cubic Hermite
 *   interpolant (h f at both ends) multiplies the error of a stiff component by
 *   h |lambda| and is useless for stiff problems with large steps (on Robertson,
 *   ros4 + Hermite missed the tolerance by 1e5 at t_eval points).
 */

typedef struct mb_ros_tableau {
    const char *name;
    int s, order, error_order;
    double gamma;
    const double *alpha, *gam;      /* s each */
    const double *a, *c;            /* s x s */
    const double *m, *mhat;         /* s each */
    const unsigned char *new_f;     /* s */
    int fsal, w_method, filter_err, dense_deg;
    const double *P;                /* dense_deg x s, or NULL */
    const double *d2, *d3;          /* s each (P == NULL) */
    const char *reference;
} mb_ros_tableau;

#define MB_ROS_MAX_STAGES 8

/* mb_ros_w2: the RN paper's two-stage table, the method w2 (order-1 embedded formula;
 * also the continuous extension of w_nystrom); mb_ros_w2_mid: the same y_new with a third
 * stage at the midpoint for an error estimate of order 2 (tableaus_ros.c) */
extern const mb_ros_tableau mb_ros_ros4, mb_ros_ros2, mb_ros_rodas4, mb_ros_w2, mb_ros_w2_mid;

#endif
