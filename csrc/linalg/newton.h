#ifndef MB_LINALG_NEWTON_H
#define MB_LINALG_NEWTON_H
#include <stddef.h>
/* Convergence control of simplified Newton iterations, shared by BDF, implicit
 * Runge-Kutta and the block methods (the role of Hairer's DECSOL drivers).
 *
 * The caller iterates Z_{k+1} = Z_k + dZ_k with a frozen, factored iteration
 * matrix and after each iteration reports ||dZ_k|| (in the weighted RMS norm of the
 * run, so tolerance 1 means "at the requested accuracy").  The monitor estimates
 * the contraction rate theta_k = ||dZ_k|| / ||dZ_{k-1}|| and
 *   converged when eta ||dZ_k|| <= kappa,  eta = theta / (1 - theta)
 *             (first iteration: eta from the previous step, Hairer & Wanner IV.8),
 *   failed    when theta >= 1, or when the predicted error after the remaining
 *             iterations theta^(max_iter-k)/(1-theta) ||dZ_k|| exceeds kappa.
 */
typedef struct mb_newton {
    double kappa;     /* stopping tolerance relative to 1 (e.g. 0.01 - 0.1) */
    int max_iter;
    int iter;         /* iterations done in this solve */
    double eta;       /* carried from step to step */
    double dz_prev;
    double theta;     /* last contraction rate estimate (0 before two iterations) */
} mb_newton;

enum { MB_NEWTON_CONVERGED = 0, MB_NEWTON_CONTINUE = 1, MB_NEWTON_FAILED = 2 };

/* Iteration matrix A = M - c J (M == NULL: the identity), n x n column-major with
 * leading dimension n, and its LU (ipiv: n).  Returns MB_OK or MB_ERR_LINALG. */
int mb_newton_matrix_factor(ptrdiff_t n, const double *M, const double *J, double c,
                            double *A, int *ipiv);

/* The iteration matrix of an s-stage implicit method (implicit Runge-Kutta, block
 * methods) with stage increments Z_i solving M Z_i = h sum_l A[i][l] f(Y_l) + ...:
 *     E = I_s (x) M - h (A (x) I_n) diag(J_1, ..., J_s)      (N = s n, leading dim N)
 * with A row-major s x s, J the s Jacobians n x n (column-major, consecutive) when
 * per_stage, else one J for every stage (the simplified-Newton matrix); M NULL: the
 * identity.  Then its LU (ipiv: N).  Returns MB_OK or MB_ERR_LINALG. */
int mb_newton_stage_factor(int s, ptrdiff_t n, const double *M, const double *A, double h,
                           const double *J, int per_stage, double *E, int *ipiv);

/* out = M x (a copy of x when M == NULL: the identity) */
void mb_mass_apply(ptrdiff_t n, const double *M, const double *x, double *out);

/* set parameters once per run */
void mb_newton_init(mb_newton *nw, double kappa, int max_iter);
/* begin a new nonlinear solve (keeps eta from the previous one) */
void mb_newton_begin(mb_newton *nw);
/* report ||dZ|| of the iteration just done: CONVERGED, CONTINUE or FAILED */
int mb_newton_check(mb_newton *nw, double dz_norm);
#endif
