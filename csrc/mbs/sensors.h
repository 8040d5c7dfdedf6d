#ifndef MB_MBS_SENSORS_H
#define MB_MBS_SENSORS_H
/* Sensors of a planar or spatial body model (mbint/mbs/sensors.py): quantities of the
 * motion evaluated at the output times of a trajectory from its (t, q, q', q'').
 *
 * A sensor is one row of a packed float64 table of MB_SENSOR_NCOL columns (the names
 * served to Python by _core.sensor_layout(), the order of enum mb_sensor_col).  Body
 * indices are 0-based, -1 the ground (r = 0, no rotation).  dim is 2 (a planar model,
 * q_k = (x, y, theta), nq = 3 nb) or 3 (a spatial model, q_k = (r, p), p the Euler
 * parameters, nq = 7 nb).  Body points si, sj and vectors ai, bi, aj are in body frames.
 *
 * Kinematics of a body point P = r + u, u = A s (A the rotation of the body):
 *   V = r' + w x u,  Acc = r'' + alpha x u + w x (w x u)
 * (planar: w x u = w perp(u), w x (w x u) = -w^2 u); spatial w = 2 E(p) p',
 * alpha = 2 E(p) p'' (E(p) = [-e, e~ + e0 I]; E(p') p' = 0).  A vector quantity "in
 * frame f" is its ground-frame vector resolved in the axes of body f, A_f^T v (the
 * inertial velocity or acceleration as a body-fixed sensor such as an accelerometer
 * without gravity reports it); a position in frame f is A_f^T (P - r_f).
 *
 * Kinds (components; unit):
 *   POSITION, VELOCITY, ACCELERATION of si on body i, in frame `frame` (dim; m, m/s, m/s^2)
 *   ANGULAR_VELOCITY, ANGULAR_ACCELERATION of body i (planar: 1, theta', theta'';
 *       spatial: 3, w or alpha in frame `frame`; rad/s, rad/s^2)
 *   RELATIVE_ANGLE, RELATIVE_RATE of body j relative to body i (1; rad, rad/s):
 *       planar theta_j - theta_i; spatial theta = atan2(a_j . b_i, a_j . a_i) about the
 *       axis a_i x b_i (the angle of a revolute joint or an RSDA), in (-pi, pi]
 *   DISTANCE, DISTANCE_RATE between si on i and sj on j (1; m, m/s): l = |P_j - P_i|, l'
 *   TSDA      axial force of a spring-damper-actuator (1; N, tension positive):
 *             k (l - L0) + c l' + fa(t); 0 at l = 0 (as the force element)
 *   RSDA      torque of a rotational spring-damper (1; N m): k x + c theta' + fa(t),
 *             x = theta - L0 (planar: theta_j - theta_i - L0, wrapped to (-pi, pi] when
 *             wrap; spatial: always wrapped)
 *   CONTACT_LINE, CONTACT_CIRCLES  normal force of a planar penalty contact (1; N >= 0):
 *             delta = r_i - (P_i - p0) . n or r_i + r_j - |P_j - P_i|,
 *             F = K delta^e + cd delta' for delta > 0, clamped to F >= 0 (contact.c)
 *   TIRE      vertical force of a spatial tire on its body (1; N):
 *             x = P_z - h(P_x) - L0, F_z = -(k x + c x') (0 when unilateral and F_z < 0)
 * Every law is the one of the force element the sensor reads (forces.c, contact.c,
 * spatial_forces.c), with the element's parameters copied into the row. */
#include <stddef.h>

enum mb_sensor_kind {
    MB_SENSOR_POSITION = 1,
    MB_SENSOR_VELOCITY = 2,
    MB_SENSOR_ACCELERATION = 3,
    MB_SENSOR_ANGULAR_VELOCITY = 4,
    MB_SENSOR_ANGULAR_ACCELERATION = 5,
    MB_SENSOR_RELATIVE_ANGLE = 6,
    MB_SENSOR_RELATIVE_RATE = 7,
    MB_SENSOR_DISTANCE = 8,
    MB_SENSOR_DISTANCE_RATE = 9,
    MB_SENSOR_TSDA = 10,
    MB_SENSOR_RSDA = 11,
    MB_SENSOR_CONTACT_LINE = 12,
    MB_SENSOR_CONTACT_CIRCLES = 13,
    MB_SENSOR_TIRE = 14,
    MB_SENSOR_NKIND = 15
};

/* the columns of a sensor row */
#define MB_SENSOR_COLUMNS(X) \
    X(KIND, "kind") X(DIM, "dim") X(I, "i") X(J, "j") X(FRAME, "frame") \
    X(SI, "si_x") X(SI1, "si_y") X(SI2, "si_z") X(SJ, "sj_x") X(SJ1, "sj_y") X(SJ2, "sj_z") \
    X(AI, "ai_x") X(AI1, "ai_y") X(AI2, "ai_z") X(BI, "bi_x") X(BI1, "bi_y") X(BI2, "bi_z") \
    X(AJ, "aj_x") X(AJ1, "aj_y") X(AJ2, "aj_z") \
    X(K, "k") X(C, "c") X(L0, "L0") \
    X(FA, "fa_c0") X(FA1, "fa_c1") X(FA2, "fa_c2") X(FA3, "fa_a") X(FA4, "fa_w") X(FA5, "fa_psi") \
    X(WRAP, "wrap") X(KC, "K") X(CD, "cd") X(EXP, "e") X(RI, "ri") X(RJ, "rj") \
    X(P0, "p0_x") X(P01, "p0_y") X(NRM, "nrm_x") X(NRM1, "nrm_y") \
    X(Z0, "z0") X(BUMP_X, "bump_x") X(BUMP_R, "bump_r") X(WHEEL_R, "wheel_r") \
    X(UNILATERAL, "unilateral")

enum mb_sensor_col {
#define MB_SENSOR_ENUM(id, name) MB_SC_COL_##id,
    MB_SENSOR_COLUMNS(MB_SENSOR_ENUM)
#undef MB_SENSOR_ENUM
    MB_SENSOR_NCOL
};

/* name of column c (NULL out of range) */
const char *mb_sensor_col_name(int c);
/* number of components of the sensor in row (a pointer to its MB_SENSOR_NCOL values),
 * or -1 when its kind or dim is not one of the above */
int mb_sensor_ncomp(const double *row);

/* doubles of work mb_sensors_eval needs for a model of nq coordinates in dimension dim:
 * (nb + 1) (sizeof(kin) / sizeof(double) + 1), nb = nq / 3 or nq / 7 */
ptrdiff_t mb_sensors_work(ptrdiff_t nq, int dim);

/* Evaluate ns sensors (table: ns rows of MB_SENSOR_NCOL, row-major, all of one dim) at m
 * output times.  t (m); q, qd, qdd component-major (nq, m): entry (c, k) at c m + k.
 * out, component-major (ncomp_total, m), receives the components of sensor 0, then
 * sensor 1, ... (ncomp_total = the sum of mb_sensor_ncomp).  work: mb_sensors_work(nq,
 * dim) doubles; the motion of each body a sensor reads is computed once per time.
 * Returns MB_OK, or MB_ERR_ILL_INPUT for a bad kind, a dim that differs between rows or
 * does not divide nq, a body or frame index outside [-1, nb) (checked before anything
 * is read or written). */
int mb_sensors_eval(ptrdiff_t ns, const double *table, ptrdiff_t m, const double *t,
                    ptrdiff_t nq, const double *q, const double *qd, const double *qdd,
                    double *out, double *work);

#endif
