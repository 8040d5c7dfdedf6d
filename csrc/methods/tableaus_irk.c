/* Implicit Runge-Kutta tableaus (see tableaus_irk.h): Radau IA, Radau IIA and
 * Lobatto IIIC with 2, 3 and 4 stages, and the RADAU5 transformation.
 *
 * Computed from the node sets in 50-digit arithmetic and written with 21
 * significant digits (or as exact fractions).  Radau IIA s = 3 agrees with
 * Hairer & Wanner II, Table IV.5.6 ((88 - 7 sqrt 6)/360, ...); Lobatto IIIC
 * with Table IV.5.11.  References: E. Hairer, G. Wanner, Solving Ordinary
 * Differential Equations II, 2nd ed., Springer 1996, Sec. IV.5 and IV.8;
 * RADAU5 (radau5.f) for the transformation T, TI and the error estimate.
 */
#include "tableaus_irk.h"

/* radau_ia2 */
static const double radau_ia2_c[] = {0.0, 2.0 / 3};
static const double radau_ia2_A[] = {
    1.0 / 4, -1.0 / 4,
    1.0 / 4, 5.0 / 12};
static const double radau_ia2_b[] = {1.0 / 4, 3.0 / 4};
static const double radau_ia2_d[] = {-1.0 / 2, 3.0 / 2};
static const int radau_ia2_dense_stage[] = {1, -1};
static const double radau_ia2_P[] = {
    9.0 / 2, -9.0 / 2,
    -2.0, 3.0};
/* radau_ia3 */
static const double radau_ia3_c[] = {0.0, 0.35505102572168219018, 0.84494897427831780982};
static const double radau_ia3_A[] = {
    1.0 / 9, -0.191638319043509894344, 0.0805272079323987832332,
    1.0 / 9, 0.292073411665228463021, -0.0481334970546573839513,
    1.0 / 9, 0.53702238594354627284, 0.196815477223660425868};
static const double radau_ia3_b[] = {1.0 / 9, 0.512485826188421613839, 0.37640306270046727505};
static const double radau_ia3_d[] = {1.0 / 3, -0.891411538058255715765, 1.55807820472492238243};
static const int radau_ia3_dense_stage[] = {1, 2, -1};
static const double radau_ia3_P[] = {
    7.53197264742180826186, -16.4460880280043654195, 8.91411538058255715765,
    -5.53197264742180826186, 21.1127546946710320862, -15.5807820472492238243,
    3.0, -12.0, 10.0};
/* radau_ia4 */
static const double radau_ia4_c[] = {
    0.0, 0.212340538239152943975, 0.590533135559265289135, 0.911412040487296052604};
static const double radau_ia4_A[] = {
    1.0 / 16, -0.127234365463552539926, 0.0996720756040732911675, -0.0349377101405207512414,
    1.0 / 16, 0.189036518170056342473, -0.0564942844296699093122, 0.017298304498766510814,
    1.0 / 16, 0.344032909498801431383, 0.206892573935358900105, -0.0228923478748950423525,
    1.0 / 16, 0.323205386248104141431, 0.41270717491603572518, 0.112999479323156185994};
static const double radau_ia4_b[] = {
    1.0 / 16, 0.328844319980059743944, 0.38819346884317188078, 0.220462211176768375275};
static const double radau_ia4_d[] = {
    -1.0 / 4, 0.646138955426826565706, -0.973676595201022400699, 1.57753763977419583499};
static const int radau_ia4_dense_stage[] = {1, 2, 3, -1};
static const double radau_ia4_P[] = {
    12.1717494131826893899, -46.1380344637507091222, 56.581148490506949532, -22.6148634399389297997,
    -6.59523766962814389844, 44.8912431342239646794, -72.3746862966316048054, 34.0786808320357840245,
    6.92348825644545450854, -51.2532086704732555572, 99.5435378061246552734, -55.2138173920968542248,
    -4.0, 30.0, -60.0, 35.0};
/* radau_iia2 */
static const double radau_iia2_c[] = {1.0 / 3, 1.0};
static const double radau_iia2_A[] = {
    5.0 / 12, -1.0 / 12,
    3.0 / 4, 1.0 / 4};
static const double radau_iia2_b[] = {3.0 / 4, 1.0 / 4};
static const double radau_iia2_d[] = {0.0, 1.0};
static const int radau_iia2_dense_stage[] = {0, -1};
static const double radau_iia2_P[] = {
    9.0 / 2, -9.0 / 2,
    -1.0 / 2, 3.0 / 2};
/* radau_iia3 */
static const double radau_iia3_c[] = {0.15505102572168219018, 0.64494897427831780982, 1.0};
static const double radau_iia3_A[] = {
    0.196815477223660425868, -0.0655354258501983881085, 0.0237709743482201524204,
    0.394424314739087276997, 0.292073411665228463021, -0.0415487521259979301982,
    0.37640306270046727505, 0.512485826188421613839, 1.0 / 9};
static const double radau_iia3_b[] = {0.37640306270046727505, 0.512485826188421613839, 1.0 / 9};
static const double radau_iia3_d[] = {0.0, 0.0, 1.0};
static const int radau_iia3_dense_stage[] = {0, 1, -1};
static const double radau_iia3_P[] = {
    10.0488093998274155625, -25.6295914470766393868, 15.5807820472492238243,
    -1.38214273316074889579, 10.2962581137433060534, -8.91411538058255715765,
    1.0 / 3, -8.0 / 3, 10.0 / 3};
/* radau_iia4 */
static const double radau_iia4_c[] = {
    0.0885879595127039473955, 0.409466864440734710865, 0.787659461760847056025, 1.0};
static const double radau_iia4_A[] = {
    0.112999479323156185994, -0.0403092207235222057355, 0.0258023774203363910359, -0.00990467650726642389869,
    0.234383995747400256574, 0.206892573935358900105, -0.04785712804854071885, 0.0160474228065162730366,
    0.216681784623250341844, 0.406123263867373311225, 0.189036518170056342473, -0.0241821048998329395169,
    0.220462211176768375275, 0.38819346884317188078, 0.328844319980059743944, 1.0 / 16};
static const double radau_iia4_b[] = {
    0.220462211176768375275, 0.38819346884317188078, 0.328844319980059743944, 1.0 / 16};
static const double radau_iia4_d[] = {0.0, 0.0, 0.0, 1.0};
static const int radau_iia4_dense_stage[] = {0, 1, 2, -1};
static const double radau_iia4_P[] = {
    17.8075852345145076847, -83.9054996046804150856, 121.311731762262761626, -55.2138173920968542248,
    -2.37791303706810714199, 32.23926923654385441, -63.9400370315115312925, 34.0786808320357840245,
    0.820327802553599457314, -12.0837696318634393244, 33.8783052692487696668, -22.6148634399389297997,
    -1.0 / 4, 15.0 / 4, -45.0 / 4, 35.0 / 4};
/* lobatto_iiic2 */
static const double lobatto_iiic2_c[] = {0.0, 1.0};
static const double lobatto_iiic2_A[] = {
    1.0 / 2, -1.0 / 2,
    1.0 / 2, 1.0 / 2};
static const double lobatto_iiic2_b[] = {1.0 / 2, 1.0 / 2};
static const double lobatto_iiic2_d[] = {0.0, 1.0};
static const int lobatto_iiic2_dense_stage[] = {-1};
static const double lobatto_iiic2_P[] = {
    1.0};
/* lobatto_iiic3 */
static const double lobatto_iiic3_c[] = {0.0, 1.0 / 2, 1.0};
static const double lobatto_iiic3_A[] = {
    1.0 / 6, -1.0 / 3, 1.0 / 6,
    1.0 / 6, 5.0 / 12, -1.0 / 12,
    1.0 / 6, 2.0 / 3, 1.0 / 6};
static const double lobatto_iiic3_b[] = {1.0 / 6, 2.0 / 3, 1.0 / 6};
static const double lobatto_iiic3_d[] = {0.0, 0.0, 1.0};
static const int lobatto_iiic3_dense_stage[] = {1, -1};
static const double lobatto_iiic3_P[] = {
    4.0, -4.0,
    -1.0, 2.0};
/* lobatto_iiic4 */
static const double lobatto_iiic4_c[] = {
    0.0, 0.276393202250021030359, 0.723606797749978969641, 1.0};
static const double lobatto_iiic4_A[] = {
    1.0 / 12, -0.186338998124982474701, 0.186338998124982474701, -1.0 / 12,
    1.0 / 12, 1.0 / 4, -0.0942079307083087979144, 0.0372677996249964949402,
    1.0 / 12, 0.427541264041642131248, 1.0 / 4, -0.0372677996249964949402,
    1.0 / 12, 5.0 / 12, 5.0 / 12, 1.0 / 12};
static const double lobatto_iiic4_b[] = {1.0 / 12, 5.0 / 12, 5.0 / 12, 1.0 / 12};
static const double lobatto_iiic4_d[] = {0.0, 0.0, 0.0, 1.0};
static const int lobatto_iiic4_dense_stage[] = {1, 2, -1};
static const double lobatto_iiic4_P[] = {
    8.09016994374947424102, -19.2705098312484227231, 11.180339887498948482,
    -3.09016994374947424102, 14.2705098312484227231, -11.180339887498948482,
    1.0, -5.0, 5.0};

/* name, family, s, order p, C(q), D(r), dense degree m */
#define IRK_TABLEAU(nm, fam, s, p, q, r, m)                                              \
    const mb_irk_tableau mb_irk_##nm = {#nm, fam, s, p, q, r, nm##_c, nm##_A, nm##_b, nm##_d, \
                                        m, nm##_dense_stage, nm##_P}

IRK_TABLEAU(radau_ia2, MB_IRK_RADAU_IA, 2, 3, 1, 2, 2);
IRK_TABLEAU(radau_ia3, MB_IRK_RADAU_IA, 3, 5, 2, 3, 3);
IRK_TABLEAU(radau_ia4, MB_IRK_RADAU_IA, 4, 7, 3, 4, 4);
IRK_TABLEAU(radau_iia2, MB_IRK_RADAU_IIA, 2, 3, 2, 1, 2);
IRK_TABLEAU(radau_iia3, MB_IRK_RADAU_IIA, 3, 5, 3, 2, 3);
IRK_TABLEAU(radau_iia4, MB_IRK_RADAU_IIA, 4, 7, 4, 3, 4);
IRK_TABLEAU(lobatto_iiic2, MB_IRK_LOBATTO_IIIC, 2, 2, 1, 1, 1);
IRK_TABLEAU(lobatto_iiic3, MB_IRK_LOBATTO_IIIC, 3, 4, 2, 2, 2);
IRK_TABLEAU(lobatto_iiic4, MB_IRK_LOBATTO_IIIC, 4, 6, 3, 3, 3);

/* RADAU5: gamma = 3 + 3^(2/3) - 3^(1/3); mu = 3 + (3^(1/3) - 3^(2/3))/2
 * - i (3^(5/6) + 3^(7/6))/2; T normalized so that its last row is (1, 1, 0)
 * (Z_3 = W_0 + W_1); E_i = -P[i][0] = -(13 + 7 sqrt 6)/3, (-13 + 7 sqrt 6)/3, -1/3. */
static const double radau5_T[] = {
    0.0944387624889752414875, -0.141255295020954208428, 0.0300291941051474244919,
    0.250213122965333311377, 0.204129352293799931996, -0.382942112757261937795,
    1.0, 1.0, 0.0};
static const double radau5_TI[] = {
    4.17871859155190472735, 0.327682820761062387083, 0.52337644549944954804,
    -4.17871859155190472735, -0.327682820761062387083, 0.47662355450055045196,
    0.502872634945786875951, -2.57192694985560542919, 0.596039204828224924969};
static const double radau5_E[] = {-10.0488093998274155625, 1.38214273316074889579, -1.0 / 3};

const mb_radau5_constants mb_radau5_constants_iia3 = {
    &mb_irk_radau_iia3, 3.63783425274449573221, 2.6810828736277521339,
    -3.05043019924741056943, radau5_T, radau5_TI, radau5_E};
