/* Rosenbrock and W-method tables (transformed form, see tableaus_ros.h).
 * Order conditions, L-stability and the agreement with the printed defining
 * coefficients are checked in tests/c/test_rosenbrock.c and tests/test_rosenbrock.py. */
#include "tableaus_ros.h"

/* ---- ros4: RN paper, section 4 (Sandu, Negrut, Haug, Potra, Sandu 2001) ----
 * 4 stages, order 4, L-stable, embedded order 3, gamma = 0.57281606 (Hairer &
 * Wanner's L-stable choice: 1/gamma is close to a root of the Laguerre polynomial
 * L_4), alpha_4j = alpha_3j so stage 4 reuses the f of stage 3.
 * Coefficients as printed in the paper's second table (a_ij, c_ij, m_i, mhat_i,
 * gamma_i, alpha_i of Theorem 2.1), with two misprints corrected (both verified
 * in tests/c/test_rosenbrock.c by recomputing the table from the paper's
 * defining coefficients and checking eqs 36a-36h to 1e-12):
 *   a_21 is printed 0.2; it is alpha_21 / gamma = 1.14563212 / 0.57281606 = 2;
 *   gamma_21 (first table) is printed +2.3419931...; it is -2.3419931..., as the
 *   printed gamma_2 = gamma + gamma_21 = -1.7691770... and delta_21 =
 *   alpha_21 + gamma_21 = -1.1963610... show (with + the order conditions fail). */
static const double ros4_alpha[] = {0.0, 1.14563212, 0.655214975973133829477748,
                                    0.655214975973133829477748};
static const double ros4_gam[] = {0.57281606, -1.769177067112013949170520,
                                  0.759293964293209853670967, -0.104894621490955803206743};
static const double ros4_a[] = {
    0.0, 0.0, 0.0, 0.0,
    2.0, 0.0, 0.0, 0.0,
    1.86794814949823713234476, 0.23444556851723885002322, 0.0, 0.0,
    1.86794814949823713234476, 0.23444556851723885002322, 0.0, 0.0};
static const double ros4_c[] = {
    0.0, 0.0, 0.0, 0.0,
    -7.137649943349979830369260, 0.0, 0.0, 0.0,
    2.580923666509657714488050, 0.651629887302032023387417, 0.0, 0.0,
    -2.137115266506619116806370, -0.321469531339951070769241, -0.694966049282445225157329, 0.0};
static const double ros4_m[] = {2.255566228604565243728840, 0.287055063194157607662630,
                                0.435311963379983213402707, 1.093507656403247803214820};
static const double ros4_mhat[] = {2.068399160527583734258670, 0.238681352067532797956493,
                                   0.363373345435391708261747, 0.366557127936155144309163};
static const unsigned char ros4_new_f[] = {1, 1, 1, 0};
/* Continuous extension (ours; the paper gives none): y(theta) = y + sum b_i(theta) k_i
 * with cubic b_i(theta) fixed by, for every theta,
 *   sum b_i = theta,  sum b_i beta'_i = theta^2/2 - gamma theta,  sum b_i alpha_i^2 =
 *   theta^3/3  (order 2 and one of the two order-3 conditions; the other, the analogue
 *   of 36d, cannot hold as well: the matrix of eq. 37 is singular by construction),
 *   and b(theta)^T (alpha + Gamma)^-1 1 = theta (1 - R(inf)): the stiff part decays
 *   like 1 - theta across the step.  b(1) = b.  Computed in 40-digit arithmetic from
 *   the paper's coefficients and transformed to u (P = [b(theta) coefficients] Gamma^-1);
 *   checked in tests/c/test_rosenbrock.c. */
static const double ros4_P[] = {
    6.3692580493121494949, 1.0317038715562091049, -0.12143100378007317432,
    6.9683710440491461843,
    -3.7040516322120409196, -0.81482339401915426132, 0.23348878622353620026,
    -4.7942093340685467678,
    -0.40964018849554333157, 0.070174585657102764092, 0.32325418093652018746,
    -1.0806540535773516132};
const mb_ros_tableau mb_ros_ros4 = {
    "ros4", 4, 4, 3, 0.57281606, ros4_alpha, ros4_gam, ros4_a, ros4_c, ros4_m, ros4_mhat,
    ros4_new_f, 0, 0, 0, 3, ros4_P, 0, 0,
    "Sandu, Negrut, Haug, Potra, Sandu, Rosenbrock-Nystrom integrators for SODE of "
    "multibody dynamics (2001), section 4; Hairer & Wanner II, IV.7 (gamma)"};

/* ---- ros2: the modified Rosenbrock formula of MATLAB's ode23s ----
 * Shampine & Reichelt, The MATLAB ODE suite, SIAM J. Sci. Comput. 18 (1997), 3.1:
 *   W = I - h d J, d = 1/(2 + sqrt 2), e32 = 6 + sqrt 2, T = h d df/dt,
 *   k1 = W \ (F0 + T), F1 = f(t + h/2, y + h k1/2), k2 = W \ (F1 - k1) + k1,
 *   y_new = y + h k2, F2 = f(t + h, y_new),
 *   k3 = W \ (F2 - e32 (k2 - F1) - 2 (k1 - F0) + T),
 *   error = h/6 (k1 - 2 k2 + k3) = y_hat - y_new with y_hat of order 3,
 *   dense output (ntrp23s): y + h (theta (1 - theta) k1 + theta (theta - 2d) k2) / (1 - 2d).
 * It is a 3-stage Rosenbrock method (K_i = h k_i): gamma = d,
 *   Gamma = [d 0 0; -d d 0; d (e32 - 2)  -d e32  d], alpha_21 = 1/2, alpha_32 = 1,
 *   b = (0, 1, 0), bhat = (1/6, 2/3, 1/6);
 * transformed exactly (closed forms in the comments; 1/d = 2 + sqrt 2).  The third
 * stage is evaluated at y_new (first same as last).  Dense output: H2 = (K1 - K2)/(1 - 2d)
 * = -(4 + 3 sqrt 2) u_2, H3 = 0. */
static const double ros2_alpha[] = {0.0, 0.5, 1.0};
static const double ros2_gam[] = {0.292893218813452475599, 0.0, -0.292893218813452475599};
static const double ros2_a[] = {
    0.0, 0.0, 0.0,
    1.7071067811865475244, 0.0, 0.0,                 /* 1 + 1/sqrt 2 */
    3.4142135623730950488, 3.4142135623730950488, 0.0}; /* 2 + sqrt 2 */
static const double ros2_c[] = {
    0.0, 0.0, 0.0,
    -3.4142135623730950488, 0.0, 0.0,                /* -(2 + sqrt 2) */
    -6.8284271247461900976, -25.3137084989847603904, 0.0}; /* -(4 + 2 sqrt 2), -(14 + 8 sqrt 2) */
static const double ros2_m[] = {3.4142135623730950488, 3.4142135623730950488, 0.0};
static const double ros2_mhat[] = {3.9832491561019442236,  /* 7 (2 + sqrt 2)/6 */
                                   6.49509379141285676427, /* 11/3 + 2 sqrt 2 */
                                   0.5690355937288491748}; /* (2 + sqrt 2)/6 */
static const unsigned char ros2_new_f[] = {1, 1, 1};
static const double ros2_d2[] = {0.0, -8.24264068711928514641, 0.0}; /* -(4 + 3 sqrt 2) */
static const double ros2_d3[] = {0.0, 0.0, 0.0};
const mb_ros_tableau mb_ros_ros2 = {
    "ros2", 3, 2, 3, 0.292893218813452475599, ros2_alpha, ros2_gam, ros2_a, ros2_c, ros2_m,
    ros2_mhat, ros2_new_f, 1, 0, 0, 2, 0, ros2_d2, ros2_d3,
    "Shampine & Reichelt, The MATLAB ODE suite, SIAM J. Sci. Comput. 18 (1997) (ode23s)"};

/* ---- rodas4: RODAS of Hairer & Wanner (II, section IV.7; code rodas.f,
 * version of October 28, 1996, coefficient set METH = 1), 6 stages, order 4,
 * embedded order 3, stiffly accurate (y_new = argument of stage 6 + u_6, y_hat =
 * argument of stage 6, error = u_6), L-stable, continuous extension of order 3
 * (D21..D35 of rodas.f).  Digits as in rodas.f. */
static const double rodas4_alpha[] = {0.0, 0.386, 0.21, 0.63, 1.0, 1.0};
static const double rodas4_gam[] = {0.25, -0.1043, 0.1035, -0.3620000000000023e-01, 0.0, 0.0};
static const double rodas4_a[] = {
    0.0, 0.0, 0.0, 0.0, 0.0, 0.0,
    0.1544000000000000e+01, 0.0, 0.0, 0.0, 0.0, 0.0,
    0.9466785280815826e+00, 0.2557011698983284e+00, 0.0, 0.0, 0.0, 0.0,
    0.3314825187068521e+01, 0.2896124015972201e+01, 0.9986419139977817e+00, 0.0, 0.0, 0.0,
    0.1221224509226641e+01, 0.6019134481288629e+01, 0.1253708332932087e+02,
    -0.6878860361058950e+00, 0.0, 0.0,
    0.1221224509226641e+01, 0.6019134481288629e+01, 0.1253708332932087e+02,
    -0.6878860361058950e+00, 1.0, 0.0};
static const double rodas4_c[] = {
    0.0, 0.0, 0.0, 0.0, 0.0, 0.0,
    -0.5668800000000000e+01, 0.0, 0.0, 0.0, 0.0, 0.0,
    -0.2430093356833875e+01, -0.2063599157091915e+00, 0.0, 0.0, 0.0, 0.0,
    -0.1073529058151375e+00, -0.9594562251023355e+01, -0.2047028614809616e+02, 0.0, 0.0, 0.0,
    0.7496443313967647e+01, -0.1024680431464352e+02, -0.3399990352819905e+02,
    0.1170890893206160e+02, 0.0, 0.0,
    0.8083246795921522e+01, -0.7981132988064893e+01, -0.3152159432874371e+02,
    0.1631930543123136e+02, -0.6058818238834054e+01, 0.0};
static const double rodas4_m[] = {0.1221224509226641e+01, 0.6019134481288629e+01,
                                  0.1253708332932087e+02, -0.6878860361058950e+00, 1.0, 1.0};
static const double rodas4_mhat[] = {0.1221224509226641e+01, 0.6019134481288629e+01,
                                     0.1253708332932087e+02, -0.6878860361058950e+00, 1.0, 0.0};
static const unsigned char rodas4_new_f[] = {1, 1, 1, 1, 1, 1};
static const double rodas4_d2[] = {0.1012623508344586e+02, -0.7487995877610167e+01,
                                   -0.3480091861555747e+02, -0.7992771707568823e+01,
                                   0.1025137723295662e+01, 0.0};
static const double rodas4_d3[] = {-0.6762803392801253e+00, 0.6087714651680015e+01,
                                   0.1643084320892478e+02, 0.2476722511418386e+02,
                                   -0.6594389125716872e+01, 0.0};
const mb_ros_tableau mb_ros_rodas4 = {
    "rodas4", 6, 4, 3, 0.25, rodas4_alpha, rodas4_gam, rodas4_a, rodas4_c, rodas4_m,
    rodas4_mhat, rodas4_new_f, 0, 0, 0, 3, 0, rodas4_d2, rodas4_d3,
    "Hairer & Wanner, Solving ODEs II (2nd ed. 1996), IV.7; rodas.f (METH = 1)"};

/* ---- w2: the order-2 W-method of the RN paper (section 4, after Algorithm 1's
 * table; Verwer, Spee, Blom, Hundsdorfer, SIAM J. Sci. Comput. 20 (1999), 'ROS2'):
 * gamma = 1 + 1/sqrt 2, alpha = (0, 1), gamma_i = (gamma, -gamma), a_21 = 1/gamma,
 * c_21 = -2/gamma, m = (3/(2 gamma), 1/(2 gamma)), mhat = (2/gamma, 1/gamma)
 * (the paper prints 14 digits of these closed forms).  Defining form: b = (1/2, 1/2),
 * gamma_21 = -2 gamma, alpha_21 = 1: sum b_i = 1, sum b_i alpha_ij = 1/2 and
 * sum b_i gamma_ij = 0 hold, so the order is 2 with any matrix in place of J;
 * bhat = (0, 1) is of order 1.  Its stability function tends to -(sqrt 2 - 1) at
 * infinity, so the raw estimate y_new - y_hat of a stiff component does not vanish and
 * forces tiny steps on stiff problems (1.8e6 steps on Van der Pol mu = 1000, t in
 * [0, 2], rtol 1e-6): the estimate is filtered (filter_err, see tableaus_ros.h). */
static const double w2_alpha[] = {0.0, 1.0};
static const double w2_gam[] = {1.7071067811865475244, -1.7071067811865475244};
static const double w2_a[] = {0.0, 0.0,
                              0.585786437626904951198, 0.0}; /* 2 - sqrt 2 */
static const double w2_c[] = {0.0, 0.0,
                              -1.1715728752538099024, 0.0};  /* -(4 - 2 sqrt 2) */
static const double w2_m[] = {0.878679656440357426797, 0.292893218813452475599};
static const double w2_mhat[] = {1.1715728752538099024, 0.585786437626904951198};
static const unsigned char w2_new_f[] = {1, 1};
/* Continuous extension (ours): b(theta) with sum b_i = theta and sum b_i beta'_i =
 * theta^2/2 - gamma theta (order 2 with the exact J), i.e. b_2 = theta/sqrt 2 -
 * theta^2 (sqrt 2 - 1)/2, b_1 = theta - b_2, b(1) = (1/2, 1/2); in u (Gamma^-1 =
 * [1/gamma 0; 2/gamma 1/gamma]): theta (u_1 + (sqrt 2 - 1) u_2)
 * - theta^2 (3 sqrt 2 - 4)/2 (u_1 + u_2).  Its stiff part 1 - b(theta)^T B^-1 1 stays
 * in [0, 1]. */
static const double w2_P[] = {1.0, 0.41421356237309504880,
                              -0.12132034355964257320, -0.12132034355964257320};
const mb_ros_tableau mb_ros_w2 = {
    "w2", 2, 2, 1, 1.7071067811865475244, w2_alpha, w2_gam, w2_a, w2_c, w2_m, w2_mhat,
    w2_new_f, 0, 1, 1, 2, w2_P, 0, 0,
    "Sandu et al. (2001), section 4 (W-method of Verwer et al. 1999)"};

/* ---- w2_mid: the table above plus a third stage for an error estimate of order 2
 * (ours; issue 13).  Why w2's steps go like tol^-1/2: with two stages there is no second
 * order-2 formula.  The W-method order-2 conditions (sum b = 1, sum b alpha = 1/2,
 * sum b gamma = 0) have the unique solution b = (1/2, 1/2) for alpha_21 = 1, gamma_21 =
 * -2 gamma, so the paper's bhat = (0, 1) (no misprint: it is Verwer's closed form) is
 * of order 1, y_new - y_hat = O(h^2) estimates the error of the order-1 formula, and the
 * controller (q = 1) keeps that at the tolerance: on the RN stiff double pendulum
 * 904 / 28193 / 282034 steps at tol 1e-3 / 1e-6 / 1e-8.
 *
 * Third stage (defining form): the midpoint (t + h/2, (y + y_new)/2), alpha_31 =
 * alpha_32 = 1/4, with gamma_31 = -(1 + sqrt 2)/4, gamma_32 = -(3 + sqrt 2)/4,
 * gamma_33 = gamma (so gamma_3 = 0: no df/dt term), and bhat = (1/6, 1/6, 2/3)
 * (Simpson's weights).  y_new (m_3 = 0), R(z) and the continuous extension are those of
 * the two-stage table.  bhat satisfies
 *   - the W-method order-2 conditions (order 2 for any matrix in place of J),
 *   - with the exact J, the Rosenbrock conditions of order 3 (RN eqs 36a-36d;
 *     sum bhat alpha^2 = 1/3 needs alpha_3 = 1/2 with these weights), and
 *     sum bhat alpha_ij alpha_jk = 1/6 (this fixes alpha_31 = alpha_32),
 * so err = y_new - y_hat = O(h^3) for any J and, with the exact J, equals the local
 * error of y_new up to O(h^4): q = 2, steps ~ tol^-1/3 (301 / 3085 / 14363 steps on the
 * pendulum).  Cost: one f evaluation and one LU solve more per step.
 * Limits (why it is not the table of the method w2):
 *   - y_new is unchanged, so fewer steps mean larger errors: the pendulum's final error
 *     is 6.7e-2 / 9.3e-4 / 3.8e-5 at tol 1e-3 / 1e-6 / 1e-8 (two-stage w2: 8.1e-3 /
 *     1.6e-5 / 6.5e-7), about 9000 steps for 1e-4 either way.  With error-per-step
 *     control the global error of this order-2 method with a large error constant
 *     (R(z) - e^z = (1/3 - gamma) z^3 + ..., -1.37) grows like tol^(2/3): at rtol
 *     1e-3..1e-6 up to 9 (VdP), 111 (Robertson) and 44 (HIRES) times the tolerance
 *     (tests/test_rosenbrock.py, test_stiff_accuracy), where w2 stays within 7;
 *   - in the stiff limit (Prothero-Robinson, y' = lambda (y - phi) + phi', z -> -inf)
 *     the local error of y_new is -(sqrt 2/4) phi'' h^2 and this estimate sees 0.138 of it
 *     (-(2 - sqrt 2)/12 phi'' h^2); every choice of the third stage that keeps the
 *     nonstiff terms exact leaves y_hat's stiff error at -(2 sqrt 2 - 1)/6 phi'' h^2;
 *   - Rhat(inf) = -2 (sqrt 2 - 1)/3 for every such stage.  The estimate is not filtered:
 *     (I - h gamma J)^-1 would also divide the stiff error above by h gamma |lambda|
 *     (on HIRES the true local error reached 300 times the filtered estimate).
 * The coefficients in closed form: a_31 = m_1/2, a_32 = m_2/2, c_31 = (5 sqrt 2 - 9)/2,
 * c_32 = (3 sqrt 2 - 5)/2, mhat = (4 - 13 sqrt 2/6, 2 - 7 sqrt 2/6, (4 - 2 sqrt 2)/3). */
static const double w2m_alpha[] = {0.0, 1.0, 0.5};
static const double w2m_gam[] = {1.7071067811865475244, -1.7071067811865475244, 0.0};
static const double w2m_a[] = {0.0, 0.0, 0.0,
                               0.585786437626904951198, 0.0, 0.0,
                               0.439339828220178713399, 0.146446609406726237800, 0.0};
static const double w2m_c[] = {0.0, 0.0, 0.0,
                               -1.1715728752538099024, 0.0, 0.0,
                               -0.964466094067262377996, -0.378679656440357426797, 0.0};
static const double w2m_m[] = {0.878679656440357426797, 0.292893218813452475599, 0.0};
static const double w2m_mhat[] = {0.935870614858294060930, 0.350084177231389109731,
                                  0.390524291751269967466};
static const unsigned char w2m_new_f[] = {1, 1, 1};
static const double w2m_P[] = {1.0, 0.41421356237309504880, 0.0,
                               -0.12132034355964257320, -0.12132034355964257320, 0.0};
const mb_ros_tableau mb_ros_w2_mid = {
    "w2_mid", 3, 2, 2, 1.7071067811865475244, w2m_alpha, w2m_gam, w2m_a, w2m_c, w2m_m, w2m_mhat,
    w2m_new_f, 0, 1, 0, 2, w2m_P, 0, 0,
    "Sandu et al. (2001), section 4 (W-method of Verwer et al. 1999); the third stage "
    "for an order-2 estimate is ours"};
