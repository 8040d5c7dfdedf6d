/* Rosenbrock-Nystrom coefficient tables (Nystrom form of RN Theorem 2.1; see
 * rosenbrock_nystrom.h).  Derived from the defining Rosenbrock coefficients with the
 * matrix formulas of Theorem 2.1 in tests/test_rosenbrock_nystrom.py (exact rational
 * arithmetic) and checked against the order conditions in
 * tests/c/test_rosenbrock_nystrom.c. */
#include "rosenbrock_nystrom.h"

/* ---- rosenbrock_nystrom: RN paper section 4, the second table (theta, a, c, delta,
 * m, mhat, mu, muhat, gamma_i, alpha_i), as printed except a_21: printed 0.2, it is
 * alpha_21 / gamma = 1.14563212 / 0.57281606 = 2 (the misprint also found for ros4,
 * tableaus_ros.c).  Every other printed value agrees with Theorem 2.1 applied to the
 * first table (with gamma_21 = -2.3419..., whose printed + sign is the other
 * misprint) to the 24-25 printed digits. */
static const double rn_alpha[] = {0.0, 1.14563212, 0.655214975973133829477748,
                                  0.655214975973133829477748};
static const double rn_gam[] = {0.57281606, -1.769177067112013949170520,
                                0.759293964293209853670967, -0.104894621490955803206743};
static const double rn_a[] = {
    0.0, 0.0, 0.0, 0.0,
    2.0, 0.0, 0.0, 0.0,
    1.86794814949823713234476, 0.23444556851723885002322, 0.0, 0.0,
    1.86794814949823713234476, 0.23444556851723885002322, 0.0, 0.0};
static const double rn_c[] = {
    0.0, 0.0, 0.0, 0.0,
    -7.137649943349979830369260, 0.0, 0.0, 0.0,
    2.580923666509657714488050, 0.651629887302032023387417, 0.0, 0.0,
    -2.137115266506619116806370, -0.321469531339951070769241, -0.694966049282445225157329, 0.0};
static const double rn_delta[] = {
    0.0, 0.0, 0.0, 0.0,
    -1.196361007112013949170520, 0.0, 0.0, 0.0,
    1.470280254409780714633870, 0.348105837679204490016704, 0.0, 0.0,
    0.003765094355556165798974, -0.109762486758103255675398, -0.228031035973133829477744, 0.0};
static const double rn_theta[] = {
    0.0, 0.0, 0.0, 0.0,
    1.14563212, 0.0, 0.0, 0.0,
    0.789509162815638629626980, 0.134294186842504800149232, 0.0, 0.0,
    0.789509162815638629626980, 0.134294186842504800149232, 0.0, 0.0};
static const double rn_m[] = {2.255566228604565243728840, 0.287055063194157607662630,
                              0.435311963379983213402707, 1.093507656403247803214820};
static const double rn_mhat[] = {2.068399160527583734258670, 0.238681352067532797956493,
                                 0.363373345435391708261747, 0.366557127936155144309163};
static const double rn_mu[] = {1.592750819409585342074900, 0.195938266310250609693329, 0.0,
                               0.626378747320742177841171};
static const double rn_muhat[] = {1.434903971848209472627100, 0.222978672588698369045153,
                                  0.124559686414702049774897, 0.209969809789304321311906};
static const unsigned char rn_new_f[] = {1, 1, 1, 0};
const mb_rn_tableau mb_rn_rosenbrock_nystrom = {
    "rosenbrock_nystrom", 4, 4, 3, 0.57281606, rn_alpha, rn_gam, rn_a, rn_c, rn_delta,
    rn_theta, rn_m, rn_mhat, rn_mu, rn_muhat, rn_new_f, 0, 0, &mb_ros_ros4,
    "Sandu, Negrut, Haug, Potra, Sandu, Rosenbrock-Nystrom integrators for SODE of "
    "multibody dynamics (2001), Theorem 2.1 and section 4"};

/* ---- w_nystrom: the order-2 W-method of the RN paper's third table (Verwer, Spee,
 * Blom, Hundsdorfer 1999, 'ROS2'), gamma = 1 + 1/sqrt 2; printed with 14 digits, here
 * the closed forms: alpha = (0, 1), gamma_i = (gamma, -gamma), a_21 = 1/gamma = 2 - sqrt 2,
 * c_21 = -2/gamma, delta_21 = 1 - 2 gamma = -(1 + sqrt 2), theta_21 = 1,
 * m = (3/(2 gamma), 1/(2 gamma)), mhat = (2/gamma, 1/gamma), mu = (1/2 + 1/(2 gamma), 1/2),
 * muhat = (1/gamma, 1) (defining form b = (1/2, 1/2), bhat = (0, 1), gamma_21 = -2 gamma,
 * alpha_21 = 1; all printed values agree).  Its embedded formula is not L-stable:
 * the error estimate is filtered by default (scaled_default). */
static const double wn_alpha[] = {0.0, 1.0};
static const double wn_gam[] = {1.7071067811865475244, -1.7071067811865475244};
static const double wn_a[] = {0.0, 0.0, 0.58578643762690495120, 0.0};
static const double wn_c[] = {0.0, 0.0, -1.1715728752538099024, 0.0};
static const double wn_delta[] = {0.0, 0.0, -2.4142135623730950488, 0.0};
static const double wn_theta[] = {0.0, 0.0, 1.0, 0.0};
static const double wn_m[] = {0.87867965644035742680, 0.29289321881345247560};
static const double wn_mhat[] = {1.1715728752538099024, 0.58578643762690495120};
static const double wn_mu[] = {0.79289321881345247560, 0.5};
static const double wn_muhat[] = {0.58578643762690495120, 1.0};
static const unsigned char wn_new_f[] = {1, 1};
const mb_rn_tableau mb_rn_w_nystrom = {
    "w_nystrom", 2, 2, 1, 1.7071067811865475244, wn_alpha, wn_gam, wn_a, wn_c, wn_delta,
    wn_theta, wn_m, wn_mhat, wn_mu, wn_muhat, wn_new_f, 1, 1, &mb_ros_w2,
    "Sandu et al. (2001), section 4 (W-method of Verwer et al. 1999) in the Nystrom form"};
