#ifndef MB_CORE_LINSYS_H
#define MB_CORE_LINSYS_H
/* mb_linsys: structured linear algebra of the implicit methods, supplied by a
 * problem whose Jacobian is too large to hold dense (a sparse mechanism: the index-1
 * formulation of a 1000-body chain has n = 6000 and a dense J that couples every
 * body with every other through the constraints, but a factored representation that
 * is O(n); csrc/mbs/index1_sparse.c).  The problem keeps its own Jacobian and factors
 * the iteration matrix  a I - J  itself (no mass matrix: M = I); a method that
 * supports it (radau_iia, bdf, rodas4 and the other Rosenbrock methods, cvode_bdf)
 * then never forms an n x n array.  Methods that do not support it use the problem's
 * dense jac (or finite differences) as before.
 *
 *   jac(t, y, fy, ctx):          evaluate and keep J = df/dy at (t, y), fy = f(t, y)
 *                                (one Jacobian evaluation: counted in njev)
 *   factor(slot, ar, ai, ctx):   factor a I - J, a = ar + i ai, with the kept J into
 *                                slot 0 or 1 (ai == 0: a real factorization; ai != 0:
 *                                a complex one, radau_iia's complex pair); counted in nlu
 *   solve(slot, xr, xi, ctx):    x <- (a I - J)^-1 x in place for the factorization
 *                                held in slot (xi NULL for a real slot; for a complex
 *                                slot x = xr + i xi, both of size n)
 *
 * A DAE formulation with a constant diagonal mass matrix M (its sparse mode,
 * csrc/mbs/dae_sparse.c) supplies a linsys whose matrices are a M - J with its own M,
 * and gives diag(M) as mb_problem.mass_diag (M = I above for the ODE formulations:
 * nothing changes for them); factor(a) then factors a M - J and solve applies its
 * inverse; only the methods flagged MB_LINSYS_MASS (bdf, radau_iia, lstable_block with
 * r <= 4, ida) take it.
 *
 * Each returns 0 (MB_OK), > 0 for a recoverable failure (a singular iteration matrix:
 * the method shrinks the step) or < 0 for a fatal one.  ctx is the linsys's own. */
#include <stddef.h>

typedef struct mb_linsys {
    int (*jac)(double t, const double *y, const double *fy, void *ctx);
    int (*factor)(int slot, double a_re, double a_im, void *ctx);
    int (*solve)(int slot, double *x_re, double *x_im, void *ctx);
    void *ctx;
} mb_linsys;

#endif
