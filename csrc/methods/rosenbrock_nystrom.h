#ifndef MB_METHODS_ROSENBROCK_NYSTROM_H
#define MB_METHODS_ROSENBROCK_NYSTROM_H
/* Rosenbrock-Nystrom methods for q'' = a(t, q, q') (RN paper, Theorem 2.1, eqs 25a-25f,
 * stage solves of eqs 43-46): rosenbrock_nystrom (the paper's 4-stage, order-4,
 * L-stable method with its order-3 embedded formula, 3 evaluations of a per step) and
 * w_nystrom (the paper's order-2 W-method in the same form, with a Jacobian that may
 * be approximate and is kept across steps).  See rosenbrock_nystrom.c. */
#include "method.h"
#include "tableaus_ros.h"

/* Coefficients in the Nystrom form of Theorem 2.1 (s x s matrices row-major, strictly
 * lower triangular; delta's diagonal is gamma and is not stored):
 *   Y_i  = y + h alpha_i y' + h sum_{j<i} theta_ij z_j            (25c)
 *   Y'_i = y' + sum_{j<i} a_ij z_j                                (25d)
 *   S z_i = h gamma f(t + alpha_i h, Y_i, Y'_i) + h^2 gamma gam_i (f_t + J1 y')
 *           + gamma sum_{j<i} c_ij z_j + h^2 gamma J1 sum_{j<i} delta_ij z_j   (25f)
 *   S = I - h gamma J2 - h^2 gamma^2 J1                           (25e)
 *   y_new = y + h y' + h sum mu_i z_i,   y'_new = y' + sum m_i z_i   (25a, 25b)
 * and the embedded pair (muhat, mhat).  new_f[i] = 0: stage i reuses the evaluation
 * of stage i - 1 (same alpha, theta and a rows: eq 39).  ros: the first-order
 * Rosenbrock table of the same method, whose continuous extension (ros->P,
 * ros->dense_deg) the kernel uses on the first-order stages
 * u_i = (h (gam_i y' + sum_{j<=i} delta_ij z_j), z_i). */
typedef struct mb_rn_tableau {
    const char *name;
    int s, order, error_order;
    double gamma;
    const double *alpha, *gam;              /* s each */
    const double *a, *c, *delta, *theta;    /* s x s */
    const double *m, *mhat, *mu, *muhat;    /* s each */
    const unsigned char *new_f;             /* s */
    int w_method;                           /* order holds with any J: keep J across steps */
    int scaled_default;                     /* error estimate filtered by default */
    const mb_ros_tableau *ros;
    const char *reference;
} mb_rn_tableau;

extern const mb_rn_tableau mb_rn_rosenbrock_nystrom, mb_rn_w_nystrom;

/* Options (mbint: rosenbrock_nystrom(error_estimate=..., jacobian=...)); a NULL
 * method_options means every default. */
enum { MB_RN_DEFAULT = 0 };
enum { MB_RN_ERR_PLAIN = 1, MB_RN_ERR_SCALED = 2 };   /* error_estimate */
enum { MB_RN_JAC_EXACT = 1, MB_RN_JAC_FD = 2 };       /* jacobian */
typedef struct mb_rn_options {
    int error_estimate;  /* plain: (y_new - y_hat) (RN eqs 13-16); scaled: (I - h gamma J)^-1
                          * (y_new - y_hat) (RN section 5.1, Shampine).  Default: plain for
                          * rosenbrock_nystrom, scaled for w_nystrom */
    int jacobian;        /* exact: the problem's (acc_mjac, or jac); fd: forward differences of
                          * the acceleration (M = I).  Default: exact for rosenbrock_nystrom,
                          * fd for w_nystrom */
} mb_rn_options;

extern const mb_method mb_method_rosenbrock_nystrom, mb_method_w_nystrom;
#endif
