#ifndef MB_METHODS_BLOCK_LSTABLE_H
#define MB_METHODS_BLOCK_LSTABLE_H
/* The r-node block implicit one-step method of the LS paper (Li, Ding, Li 2019,
 * eqs 5-16): lstable_block (R(lambda) a subdiagonal Pade approximant: L-stable) and
 * astable_block (a diagonal one: A-stable).  See block_lstable.c for the method, the
 * computation of B and d and the step.
 *
 * Options (mb_stepper.method_options; NULL: the defaults):
 *   r          nodes per step, 2..MB_BLOCK_RMAX (default 4, the paper's section 4)
 *   nodes      MB_BLOCK_EQUIDISTANT (c_i = t_k + i h / r, section 3.2), MB_BLOCK_CHEBYSHEV
 *              (the zeros of T_{r-1} on [t_k, t_k+1] and t_k+1, eq 12) or MB_BLOCK_LEGENDRE
 *              (the zeros of P_{r-1} and t_k+1, section 3.3)
 *   pade_k, pade_j  the (k, j) Pade approximant R(lambda) is matched to; pade_j <= 0: the
 *              rule of mb_block_default_pade
 *   newton_tol the simplified-Newton tolerance (<= 0: 1e-3, the paper's), relative to the
 *              run's weighted RMS norm
 *   newton_full  0 (default): the Newton system split by the eigen-decomposition of B into
 *              n x n systems (irk_newton.h, mb_irk_split); 1: the full r n x r n system
 *              (the same iterates up to rounding; for comparison)
 */
#include <stddef.h>
#include "method.h"

enum { MB_BLOCK_RMAX = 6 };

typedef enum {
    MB_BLOCK_EQUIDISTANT = 0,
    MB_BLOCK_CHEBYSHEV = 1,
    MB_BLOCK_LEGENDRE = 2
} mb_block_nodes;

typedef enum {
    MB_BLOCK_LSTABLE = 0,  /* subdiagonal Pade: k < j <= k + 2 */
    MB_BLOCK_ASTABLE = 1   /* diagonal Pade: k = j */
} mb_block_variant;

typedef struct mb_block_options {
    int r;
    int nodes;
    int pade_k, pade_j;
    double newton_tol;
    int newton_full;
} mb_block_options;

/* B, d of LS eq 5 for one node set and Pade approximant */
typedef struct mb_block_coeffs {
    int r, nodes, k, j;
    double c[MB_BLOCK_RMAX];                 /* (c_i - t_k) / h, c[r-1] = 1 */
    double B[MB_BLOCK_RMAX * MB_BLOCK_RMAX]; /* row-major r x r, for h = 1 */
    double d[MB_BLOCK_RMAX];
    double mu[MB_BLOCK_RMAX];                /* the constants of LS eq 8 */
    int order;        /* classical order of the (r+1)-stage Runge-Kutta form (lower bound
                       * min(p_B, eta + zeta + 1, 2 eta + 2) of B(p_B), C(eta), D(zeta)) */
    int stage_order;  /* eta: the stages are exact for polynomials of degree eta */
} mb_block_coeffs;

/* The default Pade approximant (k, j) for r nodes: lstable_block (r - 2, r), the one the
 * paper computes with: (2, 4) for r = 4 (section 4, Tables 1-6) and (1, 3) for r = 3
 * (eqs 14, 15, the Runge-Kutta table 17 and Tables 2, 7, whose numbers the (1, 3) method
 * reproduces to the printed digits; the text of sections 3.2-3.3 says (2, 3), which eq 11
 * uses and Table 2 does not match); astable_block (r, r) (eq 16, section 6).  MB_OK, or
 * MB_ERR_ILL_INPUT for r outside 2..MB_BLOCK_RMAX. */
int mb_block_default_pade(int variant, int r, int *k, int *j);

/* The nodes (c_i - t_k)/h, i = 1..r, of a family (ascending, c[r-1] = 1). */
int mb_block_nodes_fill(int r, int nodes, double *c);

/* B, d and mu of LS eqs 5, 8, 9 for r nodes of the family `nodes`, with mu chosen so
 * that R(lambda) of eq 7 equals the (k, j) Pade approximant of e^lambda.  Returns MB_OK,
 * or MB_ERR_ILL_INPUT with a message in msg (r, k, j out of range; an approximant the
 * node set cannot reach, or one that leaves mu undetermined). */
int mb_block_coefficients(int r, int nodes, int k, int j, mb_block_coeffs *co, char *msg,
                          size_t msg_len);

/* R(z) = e_r^T (I - z B)^{-1} (e + z d) (LS eq 7) at z = zr + i zi.  MB_OK, or
 * MB_ERR_LINALG at a pole. */
int mb_block_stability(const mb_block_coeffs *co, double zr, double zi, double *Rr, double *Ri);

/* The options of a run resolved against the defaults and checked (variant: the
 * method's); MB_OK or MB_ERR_ILL_INPUT with a message. */
int mb_block_resolve(int variant, const mb_block_options *opt, mb_block_coeffs *co,
                     double *newton_tol, char *msg, size_t msg_len);

extern const mb_method mb_method_lstable_block, mb_method_astable_block;

#endif
