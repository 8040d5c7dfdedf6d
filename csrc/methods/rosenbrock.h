#ifndef MB_METHODS_ROSENBROCK_H
#define MB_METHODS_ROSENBROCK_H
#include "method.h"
#include "tableaus_ros.h"
/* The Jacobian J = df/dy (n x n, column-major) a Rosenbrock stepper holds: after an
 * accepted step of a Rosenbrock method, J at that step's start point (for a W-method
 * the one it kept); NULL before the first evaluation.  s->m and s->work are the
 * method's and its workspace. */
const double *mb_ros_jacobian(const mb_stepper *s);
/* R(z) of an s-stage Rosenbrock method (s <= MB_ROS_MAX_STAGES) in the transformed form
 * (a, c s x s row-major, m, gamma) on y' = lambda y, z = h lambda = zr + i zi:
 * (1/gamma - z) u_i = z (1 + sum a_ij u_j) + sum c_ij u_j, R = 1 + sum m_i u_i.  The
 * Rosenbrock-Nystrom tables (rosenbrock_nystrom.c) have the same R(z) on the velocity
 * update of v'' = lambda v'.  Writes R = Rr + i Ri, returns MB_OK. */
int mb_ros_stability(int s, double gamma, const double *a, const double *c, const double *m,
                     double zr, double zi, double *Rr, double *Ri);
/* Rosenbrock and W-methods over the tables of tableaus_ros.c (one kernel, see
 * rosenbrock.c): ros4 (RN paper, order 4(3), L-stable), ros2 (ode23s, order 2(3)),
 * rodas4 (Hairer-Wanner RODAS, order 4(3), stiffly accurate, mass matrices) and
 * w2 (RN paper's order-2 W-method, keeps its Jacobian across steps, order-1 estimate);
 * w2_mid (w2 with a third stage for an order-2 estimate; not registered). */
extern const mb_method mb_method_ros4, mb_method_ros2, mb_method_rodas4, mb_method_w2,
    mb_method_w2_mid;
#endif
