#ifndef MB_MBS_INDEX1_H
#define MB_MBS_INDEX1_H
/* The index-1 formulation: y = (q, q'), y' = (q', q'') with q'' and lambda from
 *     [ M    Phi_q^T ] [ q''    ]   [ Q                          ]
 *     [ Phi_q   0    ] [ lambda ] = [ gamma - 2 a Phi' - b^2 Phi ]   (LLM eq 9,
 *                                               Baumgarte a, b optional)
 * solved by a dense LU; and the analytic Jacobian df/dy of LLM eqs 10-15
 * (d q''/dq and d q''/dq' from the differentiated saddle-point system).
 * mb_index1_problem() presents it as an mb_problem (rhs, jac, nq) for every
 * integrator; project() moves (q, q') back onto Phi = 0 and Phi_q q' = -Phi_t
 * (minimum-norm Newton correction). */
#include "mech.h"
#include "problem.h"

typedef struct mb_index1 {
    const mb_mech *mech;
    double alpha, beta;   /* Baumgarte parameters (0: off) */
    double *work;         /* workspace (allocated by mb_index1_init) */
    int *ipiv;
    double proj_tol;      /* projection tolerance on |Phi| and |Phi_q q' + Phi_t| */
    int proj_max_iter;
} mb_index1;

int mb_index1_init(mb_index1 *f, const mb_mech *mech, double alpha, double beta);
void mb_index1_free(mb_index1 *f);
/* fill p: n = 2 nq, nq, rhs, jac (analytic, eqs 10-15), ctx = f */
void mb_index1_problem(mb_index1 *f, mb_problem *p);
/* accelerations and multipliers at (t, q, q') */
int mb_index1_solve(mb_index1 *f, double t, const double *q, const double *qd, double *qdd,
                    double *lam);
/* project (q, q') onto the position and velocity constraints; residuals after */
int mb_index1_project(mb_index1 *f, double t, double *q, double *qd, double *res_pos,
                      double *res_vel);
#endif
