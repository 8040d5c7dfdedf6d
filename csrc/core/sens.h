#ifndef MB_CORE_SENS_H
#define MB_CORE_SENS_H
/* mb_sens: forward parameter sensitivities as one wrapper problem (issue 26).
 *
 * For y' = f(t, y, p) (or M y' = f), y(t0) = y0(p), the sensitivities s_k = dy/dp_k
 * solve the forward sensitivity equations
 *
 *     s_k' = J(t, y, p) s_k + df/dp_k,      s_k(t0) = dy0/dp_k,   k = 0 .. np-1
 *
 * (M s_k' = ... with a constant mass matrix).  mb_sens presents (y, s_0, .., s_{np-1})
 * as ONE mb_problem (`aug`), so that every integrator of the driver (and the SUNDIALS
 * adapters) integrates the sensitivities with the same method, the same steps and, by
 * default, the sensitivities in the error test (CVODES' errconS: the caller gives
 * atol over the whole augmented state; a huge atol on the s components takes them out).
 *
 * Parameters.  Parameter k is a double that the base problem's callbacks read at every
 * call, given by its address p[k] (as CVODES' CVodeSetSensParams: the model's table
 * entry, the Python callable's parameter array); the wrapper perturbs *p[k] and always
 * restores it before it returns.  p[k] == NULL: the parameter enters only y0 (an
 * initial condition); then df/dp_k = 0.  pbar[k] > 0 is its scale (|p_k|, or 1 when
 * p_k = 0).
 *
 * The right-hand side of s_k is J s_k + df/dp_k = d/de f(t, y + e s_k, p + e e_k) at
 * e = 0: one directional difference of f (CVODES' "simultaneous" DQ), centred by default
 * (two f a parameter, error O(eps^(2/3))), or forward (one f; O(eps^(1/2))).  The step
 * e = c / max(1/pbar_k, rms(s_k / ysc)), ysc_i = |y_i| + atol_i, c = eps^(1/3)
 * (centred) or eps^(1/2) (forward).  s_k = 0 and p[k] == NULL: the rhs is 0, no f.
 * When the step along s_k, c / rms(s_k / ysc), is more than 100 times shorter than the
 * step in p, c pbar_k (a component of y near 0 with a tiny atol), the two directions
 * are differenced separately (CVODES' rhomax; two more f), so that the p increment never
 * drowns in the round-off of p.  atol (mb_sens_init) is the floor of ysc, the typical
 * magnitude below which a component's scale is not trusted (solve_ivp passes
 * max(atol, 1e-6 max|y0|)).
 * An optional analytic dfdp replaces the p-part: then the difference is along (s_k, 0)
 * and dfdp adds its column.  With opts.jac_rhs the s part is J s_k with the base's J
 * (one jac a rhs) and only the p-part is differenced (or dfdp): exact with dfdp.
 * Round-off: a difference quotient keeps about eps^(2/3) of f's terms, which the Newton
 * methods' convergence test on s (about sqrt(rtol) rtol) cannot see through at tight
 * tolerances (rtol <~ 1e-7 on Robertson): there give jac and dfdp.
 *
 * Layout of the augmented state Y (N = n (1 + np)):
 *   first-order base (nq == 0):  Y = (y, s_0, .., s_{np-1})
 *   second-order base (nq > 0, n = 2 nq, y = (q, q')):
 *       Y = (q, s_0^q, .., s_{np-1}^q,  q', s_0^q', .., s_{np-1}^q')
 *   so that aug is again a second-order problem with nq (1 + np) coordinates (the
 *   Nystrom and Rosenbrock-Nystrom methods integrate it as such).  mb_sens_index maps
 *   (block b: 0 = y, 1 + k = s_k; component i of y) to the index in Y.
 *
 * Jacobian of aug.  The exact one is block lower triangular:
 *   [ J        0 ]      B_k = d/de J(t, y + e s_k, p + e e_k) at e = 0
 *   [ B_k      J ]      (the directional derivative of J, by a centred difference of J)
 * `aug.jac` writes it dense (N x N), from the base jac (B_k by centred differences of
 * it) or, without one, from centred differences of the base rhs (B_k by the mixed
 * second differences of f, steps eps^(1/4): error O(eps^(1/2))): the Rosenbrock
 * methods, the LLM and every method that needs the true Jacobian take this.  With opts.block_newton, aug also carries a linsys
 * (linsys.h) whose iteration matrices are block diagonal, diag(a M - J, .., a M - J):
 * one n x n factorization shared by y and every s_k (CVODES' simultaneous corrector;
 * the Newton methods bdf, radau_iia, lstable_block, cvode_bdf converge on it since
 * the sensitivity equations are linear in s_k); over the base's own linsys when it has
 * one (the sparse formulations), else a dense LU (real or complex, as linsys.h).
 *
 * Mass matrices: base->mass (dense) gives aug a block-diagonal dense mass (N x N);
 * base->mass_diag gives aug its repetition; dae_index is repeated block-wise.
 * Not supported (mb_sens_init returns MB_ERR_NOT_SUPPORTED): a base with project,
 * check (they change y after a step; the sensitivities would need the same
 * projection), acc_mjac or a residual view (res).  step_bound is passed on, on y.
 *
 * Counts: nf_base and njac_base count the base's f and J calls made by the wrapper.
 * No global state; the work block is sized by mb_sens_work_size and carved once. */
#include <stddef.h>
#include "problem.h"
#include "linsys.h"

enum { MB_SENS_CENTERED = 0, MB_SENS_FORWARD = 1 };

typedef int (*mb_dfdp_fn)(double t, const double *y, int k, double *fp, void *ctx);

typedef struct mb_sens_options {
    int dq;            /* MB_SENS_CENTERED (default) or MB_SENS_FORWARD */
    int block_newton;  /* 1: aug.linsys = the block-diagonal iteration matrices;
                        * 2: with the B_k blocks too (the exact a M - J_aug, block lower
                        * triangular: solved by forward substitution over the one n x n LU;
                        * the B_k kept at each linsys jac: np n x n; dense, and not over a
                        * base linsys, else as 1) */
    mb_dfdp_fn dfdp;   /* optional: column k of df/dp at (t, y) into fp (n); ctx as base */
    int jac_rhs;       /* 1 (with base->jac and dense): s_k' = J s_k + df/dp_k with the base's
                        * J (one jac a rhs, shared by every k) and a difference in p alone:
                        * no round-off amplified by |s_k| / |y| (the directional difference
                        * loses eps^(2/3) |f| rms(s_k / ysc), which can exceed a tight
                        * tolerance on s: Robertson at rtol 1e-9) */
} mb_sens_options;

typedef struct mb_sens mb_sens;  /* opaque; lives in the work block */

/* Doubles of the work block for a base of size n (nq coordinates), np parameters,
 * has_mass = (base->mass != NULL); dense: 1 for the n x n parts (aug.jac, the dense LU of
 * the block linsys, block_newton 2's B_k, jac_rhs); 0: none of them (aug.jac NULL; the
 * block linsys then needs the base's linsys; a base with a dense mass needs dense). */
size_t mb_sens_work_size(ptrdiff_t n, ptrdiff_t nq, int np, int has_mass, int dense);

/* Set up the wrapper in work (mb_sens_work_size doubles) over base (kept by address,
 * must outlive it): np parameters at p (pointers, entries may be NULL), scales pbar,
 * atol (n) for the difference steps.  Returns the wrapper (in work) through *out, or a
 * status.  The augmented problem is *mb_sens_problem(s). */
int mb_sens_init(const mb_problem *base, int np, double *const *p, const double *pbar,
                 const double *atol, const mb_sens_options *opts, int dense,
                 double *work, mb_sens **out);
const mb_problem *mb_sens_problem(const mb_sens *s);

/* The index in Y of component i (0 <= i < n) of block b (0: y; 1 + k: s_k). */
ptrdiff_t mb_sens_index(const mb_sens *s, int b, ptrdiff_t i);
/* Y from y (n) and S (n x np, column-major: column k = s_k), and back (S may be NULL). */
void mb_sens_pack(const mb_sens *s, const double *y, const double *S, double *Y);
void mb_sens_unpack(const mb_sens *s, const double *Y, double *y, double *S);

/* Base calls made so far (f, J) by the wrapper. */
long mb_sens_nf_base(const mb_sens *s);
long mb_sens_njac_base(const mb_sens *s);

#endif
