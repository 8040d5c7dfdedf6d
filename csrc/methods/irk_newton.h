#ifndef MB_METHODS_IRK_NEWTON_H
#define MB_METHODS_IRK_NEWTON_H
/* Private to the implicit Runge-Kutta family: the stacked stage system of the fixed-step
 * methods (implicit_rk.c: Radau IA, Radau IIA, Lobatto IIIC) and of the block methods
 * (block_lstable.c), and its simplified-Newton solve.
 *
 * The stage increments Z = (Z_1, ..., Z_s) of a step from (t, y) with size h solve
 *     G(Z) = h (d (x) w) + h (A (x) I) F(Z) - (I_s (x) M) Z = 0,
 *     F_i = f(t + c_i h, y + Z_i),
 * (d = 0 for implicit_rk.c; the block methods' explicit first stage, w = f(t, y) in the
 * rows where M is not zero), by simplified Newton with the iteration matrix
 * E = I_s (x) M - h A (x) J (mb_newton_stage_factor, one LU of size s n) under the
 * shared monitor (newton.h), from the last step's interpolant extrapolated to
 * t + c_i h (zero on the first step and after a step cut short).
 *
 * Attempts (mb_irk_solve): the one J kept across steps while Newton converges fast
 * (rate theta <= 1e-3 when more than two iterations were needed, as RADAU5), a fresh J
 * at (t, y), then the stage Jacobians J_i = df/dy(t + c_i h, y + Z_i) at the starting
 * values (the exact block matrix I_s (x) M - h (A (x) I) diag(J_i), still factored once;
 * needed where J changes much within a step), which the next 20 steps start with.  The
 * LU is kept while J and h are unchanged (h of a fixed-step run varies in its last
 * bits: 1e-12 relative).  Norms: the run's weighted RMS norm over the s blocks
 * (mb_irk_norm; index-2/3 components of a DAE scaled by mb_norm).  On a problem with
 * index-3 components Newton takes at least two iterations (the rate of this solve, not
 * a carried one, decides convergence), and the iterate converged to the tolerance is
 * then polished until the positions (its index-1 components, the arguments of the
 * position constraint) are at round-off; an iterate whose polishing stalls with the
 * stage Jacobians too is not converged (MB_IRK_NO_CONV) (irk_newton.c: "Newton to
 * round-off on an index-3 DAE"). */
#include "carve.h"
#include "method.h"
#include "newton.h"

/* the stage system of a run */
typedef struct mb_irk_system {
    int s;              /* stages */
    const double *A;    /* s x s, row-major */
    const double *c;    /* the nodes c_i */
    const double *d;    /* the explicit term h d_i w of stage i (s), or NULL: none */
    int degree;         /* degree of the extrapolated interpolant (mb_irk_work.Q) */
    int iterate_rhs;    /* F through mb_rhs_iterate (a non-finite f fails the iteration,
                           not the run) instead of mb_rhs */
    int min_iter;       /* Newton iterations before convergence may be declared */
    int keep_need;      /* a request for a new J (a failed attempt's) outlives a
                           converged step (block methods); else the rate decides alone */
} mb_irk_system;

/* the state kept across steps (cleared by the method's init, then mb_newton_init) */
typedef struct mb_irk_state {
    mb_newton nw;
    mb_jac_reuse jr;  /* the one J across steps (method.h) */
    int lu_ok;        /* E holds the LU with the one J (not the stage Jacobians) for h_lu */
    int poly_ok;      /* Q holds the interpolant of the last accepted step */
    int stagewise;    /* steps left that start with the stage Jacobians */
    double h_lu;
    double h_old;     /* size of the last accepted step */
} mb_irk_state;

/* the workspace of the solve (carved by mb_irk_carve, but Q and w) */
typedef struct mb_irk_work {
    double *J;        /* s Jacobians n x n (one, or the stage Jacobians) */
    double *E;        /* N x N, N = s n: the iteration matrix and its LU */
    int *ipiv;        /* N */
    double *Z, *F, *dZ; /* N each: increments, f at the stages, corrections */
    double *yt, *v;   /* n each: scratch */
    const double *Q;  /* the coefficients of theta^1 .. theta^degree of the last
                         accepted step's interpolant u(theta) - y (n each, consecutive) */
    const double *w;  /* n: the vector of the explicit term (with d) */
} mb_irk_work;

/* carve J, E, ipiv, Z, F, dZ, yt, v for up to s stages of size n */
void mb_irk_carve(mb_carver *c, int s, ptrdiff_t n, mb_irk_work *w);

enum { MB_IRK_SINGULAR = 1, MB_IRK_NO_CONV = 2 };

/* The stage solve of the step from (t, y) (s->f0 = f(t, y)) with size h.  Returns MB_OK
 * with the converged increments in w->Z; MB_RECOVERABLE with s->h_fail_factor = 0.5 and
 * *why = MB_IRK_SINGULAR (a singular iteration matrix) or MB_IRK_NO_CONV (Newton failed
 * with the stage Jacobians; *gmax: the max-norm of its last residual); or the code of a
 * failed evaluation. */
int mb_irk_solve(mb_stepper *s, const mb_irk_system *sys, mb_irk_state *st,
                 const mb_irk_work *w, double t, double h, const double *y, int *why,
                 double *gmax);

/* after an accepted step that ends at t_new: J is no longer fresh, and the interpolant
 * of the step (the caller computes it when this returns 1) serves the next starting
 * values unless a terminal event cut the step short */
int mb_irk_accepted(mb_stepper *s, mb_irk_state *st, double t_new);

/* the weighted RMS norm over the ns stage blocks of x (scale from y): sqrt(sum_i
 * mb_norm(x_i)^2 / ns) */
double mb_irk_norm(const mb_stepper *s, int ns, const double *x, const double *y);

#endif
