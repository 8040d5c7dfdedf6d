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

/* The Kronecker split of the iteration matrix (RADAU5's transformation, Hairer & Wanner
 * II, IV.8): with A = T Lambda T^{-1}, Lambda block diagonal (a real eigenvalue lambda:
 * a 1 x 1 block; a complex pair alpha +- i beta, beta > 0: the 2 x 2 block [[alpha,
 * beta], [-beta, alpha]] on the rows of the real and imaginary parts of its eigenvector),
 * the Newton system (I_s (x) M - h A (x) J) dZ = G becomes, with dZ = (T (x) I) dW and
 * G~ = (T^{-1} (x) I) G, one system of size n per block:
 *     real:  (a M - J) dW_i = a G~_i,                          a = 1 / (h lambda)
 *     pair:  (a M - J) (dW_i + i dW_i+1) = a (G~_i + i G~_i+1),  a = 1 / (h (alpha - i beta))
 * (dense: mb_lu_factor / mb_zlu_factor of n x n matrices; with the problem's linsys: its
 * slot k for block k).  The iterates are those of the full system up to rounding: Newton's
 * test and the norms stay on dZ.  The stage Jacobians' attempt (a block matrix that is
 * not a Kronecker product) keeps the full system. */
enum { MB_IRK_SPLIT_MAX = 6 };
typedef struct mb_irk_split {
    int s, nb;                      /* stages; blocks */
    int row[MB_IRK_SPLIT_MAX];      /* first row of block k in Lambda */
    int size[MB_IRK_SPLIT_MAX];     /* 1: a real eigenvalue; 2: a complex pair */
    double lr[MB_IRK_SPLIT_MAX], li[MB_IRK_SPLIT_MAX]; /* its eigenvalue alpha + i beta */
    double T[MB_IRK_SPLIT_MAX * MB_IRK_SPLIT_MAX];  /* row-major s x s */
    double TI[MB_IRK_SPLIT_MAX * MB_IRK_SPLIT_MAX]; /* its inverse, row-major */
    double cond;                    /* ||T||_inf ||T^{-1}||_inf */
    double resid;                   /* max |T Lambda T^{-1} - A| / max |A| */
} mb_irk_split;

/* T, Lambda of A (s x s row-major, s <= MB_IRK_SPLIT_MAX): eigenvalues from the real Schur
 * form (mb_schur), eigenvectors by inverse iteration.  MB_OK, or MB_ERR_LINALG when A has
 * a zero or a repeated eigenvalue, when T is ill-conditioned (cond > 1e8) or does not
 * reproduce A to 1e-10 relative (sp->cond, sp->resid tell; the block methods' B: cond(T)
 * 5-210 for lstable_block, up to 4e3 for astable_block r = 6, residuals <= 7e-12). */
int mb_irk_split_setup(int s, const double *A, mb_irk_split *sp);

/* the split's run-time state (mb_irk_work.split; carved by mb_irk_carve_split) */
typedef struct mb_irk_split_work {
    const mb_irk_split *sp;  /* NULL: the full system always */
    int active;              /* the factorization held is the split one (else: w->E) */
    double h;                /* the h it was factored for */
    double *E;               /* dense blocks: a M - J, n x n real or complex each */
    int *ipiv;               /* n per block */
    double *W;               /* N: transformed vectors */
    double *xi;              /* n: the imaginary part of a pair's right-hand side */
} mb_irk_split_work;

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
    mb_irk_split_work *split; /* NULL (mb_irk_carve): the full system; else the split one
                               * (mb_irk_carve_split) */
} mb_irk_work;

/* carve J, E, ipiv, Z, F, dZ, yt, v for up to s stages of size n */
void mb_irk_carve(mb_carver *c, int s, ptrdiff_t n, mb_irk_work *w);

/* as mb_irk_carve for up to s stages, plus the split's arrays into sw (kept by the caller
 * across steps: its sp, active and h are not touched; NULL when counting); dense = 0 (the
 * problem's linsys): no n x n or N x N array at all */
void mb_irk_carve_split(mb_carver *c, int s, ptrdiff_t n, int dense, mb_irk_work *w,
                        mb_irk_split_work *sw);

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
