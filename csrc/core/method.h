#ifndef MB_CORE_METHOD_H
#define MB_CORE_METHOD_H
/* mb_method: the contract between the one driver (driver.c) and an integrator
 * family (csrc/methods).  A method supplies one step, its error estimate, its
 * order and its dense-output polynomial; it never loops over steps.
 *
 * THE STEP CONTRACT (stated here and nowhere else):
 *   step(s, t, h, y, y_new, err) advances y(t) to y_new ~ y(t + h).
 *   return 0 (MB_OK):   step computed; err (size n) holds the local error
 *                       estimate y_new - y_hat when the method has MB_EMBEDDED
 *                       (a method may skip it when s->err_wanted is 0: fixed
 *                       steps), otherwise err is untouched.  The driver applies
 *                       the weighted RMS norm and the step controller.
 *   return > 0:         recoverable failure: the driver shrinks h and retries.
 *   return < 0:         fatal failure: the run stops with that status.
 *   The step may use s->f0 = f(t, y) when s->f0_ok (the driver guarantees it
 *   for methods flagged MB_USES_F0), and may leave f(t + h, y_new) in s->f1 and
 *   set s->f1_ok (first same as last).  A step may be rejected: it must not
 *   change the method's history; commit history in accept().
 *
 * Order of calls per step: step(), then for variable-order methods after_step()
 * (adaptive runs only), then if accepted: dense() when output needs it, then
 * accept().  accept(t_end, y_end) may receive a time inside the step (a terminal
 * event cut it short); a multistep method must then restart its history.
 * s->order is set to m->order before init(); init() may lower it (a multistep
 * method starting at order 1) and the automatic initial step uses s->order.
 * Dense output: dense(s, C) writes the interpolant of the last computed step as
 *   a polynomial in theta = (t - t_n)/h,  y(theta) = sum_k C[k*n + i] theta^k,
 *   k = 0..dense_degree(s).  Methods with MB_DENSE_HERMITE have no interpolant of
 *   their own; the driver builds the cubic Hermite one from f0 and f1.
 * Dense records (a continuous output that is not a polynomial, e.g. the LLM's
 *   y(t_n + tau) = y_n + phi(t_n, y_n; tau), LLM eq 18): a method that sets all
 *   three hooks dense_record_size, dense_record and dense_record_eval has its
 *   dense output served by them instead of dense()/dense_degree():
 *   dense_record_size(n, data, &work) is the number of doubles of one step's
 *   record (the same for every step of a run) and writes into work the doubles
 *   of scratch that dense_record_eval needs; dense_record(s, rec) writes the
 *   record of the last computed step (called where dense() would be);
 *   dense_record_eval(m, n, rec, t0, h, theta, y, work) writes y(t0 + theta h)
 *   from a record alone (no stepper: it is also called after the run, from
 *   Python's DenseOutput through _core.dense_record_eval) and returns MB_OK or a
 *   status; theta = 1 must reproduce the step's y_new.  The result stores a
 *   record with degree -1 (mb_result.d_deg) and its length in d_rec_len; the
 *   driver locates events and serves t_eval on it like on a polynomial.
 * Restarts: at a switching event (mb_options.switching, driver.h) the step across
 *   the switch is cut at its root t* (through the dense output, like a terminal
 *   event) and the run continues from t*: after accept(t*, y*) the driver sets
 *   s->order = m->order and calls init() again, so init() must drop every
 *   history and cache (multistep history, kept Jacobians and LUs); f0 is
 *   evaluated afresh at t*, and the controller forgets its PI memory.
 */
#include <stddef.h>
#include "problem.h"

enum {
    MB_EMBEDDED   = 1u << 0, /* step() returns an error estimate */
    MB_FSAL       = 1u << 1, /* step() returns f1 = f(t+h, y_new) */
    MB_USES_F0    = 1u << 2, /* step() needs f0 = f(t, y) */
    MB_NEEDS_JAC  = 1u << 3, /* needs df/dy */
    MB_SECOND_ORDER = 1u << 4, /* works on the second-order view q'' = a(t,q,q') */
    MB_DENSE_HERMITE = 1u << 5, /* no own interpolant: cubic Hermite from f0, f1 */
    MB_VARIABLE_ORDER = 1u << 6, /* chooses its order and step size in after_step */
    MB_IMPLICIT   = 1u << 7,
    MB_FIXED_ONLY = 1u << 8,  /* fixed step only (no error estimate, no step doubling) */
    MB_MASS       = 1u << 9,  /* supports a constant mass matrix M y' = f */
    MB_LU_REUSE   = 1u << 10, /* reuses its LU while h is unchanged: the driver keeps h
                                 when the controller proposes a growth of less than 20 % */
    MB_DAE        = 1u << 11, /* solves semi-explicit DAEs of index 2 and 3 through a
                                 singular mass matrix (with MB_MASS; mb_problem.dae_index
                                 scales its norms, see mb_norm) */
    MB_LINSYS     = 1u << 12, /* uses the problem's structured iteration matrices
                                 (mb_problem.linsys, linsys.h) when it has them: the driver
                                 hides p->linsys from a method without this flag, and from
                                 every method when the problem has a mass matrix */
    MB_LINSYS_MASS = 1u << 13 /* with MB_LINSYS: also takes a linsys whose iteration
                                 matrices are a M - J with the diagonal mass matrix
                                 mb_problem.mass_diag (problem.h, linsys.h) and applies M
                                 through mass_diag */
};

typedef struct mb_stats {
    long nfev, njev, nlu, nsteps, nreject, nfail;
    long nrestart;   /* restarts at switching events */
    long nswitch;    /* switches between the sub-methods of a composite method (auto) */
} mb_stats;

typedef struct mb_stepper mb_stepper;

typedef struct mb_method {
    const char *name;
    int order;          /* order of y_new */
    int error_order;    /* order of the embedded solution (0 if none) */
    unsigned flags;
    int max_dense_degree; /* upper bound of dense_degree() */
    const void *data;   /* family data (e.g. a Butcher tableau) */
    /* doubles of workspace needed for a problem of size n (0 if none) */
    size_t (*work_size)(const mb_problem *p, const void *data);
    /* called before the first step (workspace s->work is allocated), and again
     * after a restart at a switching event: it must reset every history and cache */
    int (*init)(mb_stepper *s);
    int (*step)(mb_stepper *s, double t, double h, const double *y, double *y_new, double *err);
    /* optional: called after an accepted step (commit history) */
    int (*accept)(mb_stepper *s, double t_new, const double *y_new);
    /* optional (MB_VARIABLE_ORDER): after the norm err_norm of a step with size h
     * is known, the method may set its next order (s->order) and write the factor
     * h_next / h into *factor (> 0) instead of letting the controller decide. */
    int (*after_step)(mb_stepper *s, double h, double err_norm, int accepted, double *factor);
    /* dense-output polynomial of the last step; NULL with MB_DENSE_HERMITE */
    int (*dense)(mb_stepper *s, double *C);
    /* current degree of that polynomial */
    int (*dense_degree)(const mb_stepper *s);
    /* optional: stability function R(z) of a one-step method on y' = lambda y,
     * z = h lambda = zr + i zi; writes R = Rr + i Ri.  Returns MB_OK. */
    int (*amplification)(const struct mb_method *m, double zr, double zi, double *Rr,
                         double *Ri);
    /* optional dense record (see "Dense records" above); all three or none */
    size_t (*dense_record_size)(ptrdiff_t n, const void *data, size_t *work_size);
    int (*dense_record)(mb_stepper *s, double *rec);
    int (*dense_record_eval)(const struct mb_method *m, ptrdiff_t n, const double *rec,
                             double t0, double h, double theta, double *y, double *work);
    int controller;     /* preferred step-size controller (controller.h
                         * mb_controller_kind; 0: the PI controller), used when the
                         * run asks for MB_CONTROLLER_DEFAULT */
} mb_method;

struct mb_stepper {
    const mb_method *m;
    const mb_problem *p;
    ptrdiff_t n;
    double *f0;      /* f(t, y) at the start of the step, valid when f0_ok */
    int f0_ok;
    double *f1;      /* f(t + h, y_new) when f1_ok */
    int f1_ok;
    int order;       /* current order (variable-order methods change it) */
    int error_order; /* order of the error estimate of the current sub-method when it
                        differs from m->error_order (a composite method sets it in init
                        and accept); 0: m->error_order.  The controller uses it. */
    double *work;    /* method workspace (work_size doubles) */
    const double *atol; /* per-component absolute tolerance (size n) */
    double rtol;        /* relative tolerance (the smallest, when rtol_v is given) */
    const double *rtol_v; /* per-component relative tolerances (size n) or NULL */
    mb_stats *stats;
    char *msg;       /* message buffer of the run */
    size_t msg_len;
    double *jac_work; /* 3n scratch of mb_jac / mb_dfdt */
    const int *jac_groups; /* column groups for sparse finite differences (n) or NULL */
    int n_groups;
    double h_fail_factor; /* factor on h after a recoverable failure (method may set; default 0.25) */
    int err_wanted;  /* 0 in a fixed-step run: err is not used, a method may skip its estimate */
    const void *method_options; /* the run's options of this method (its own struct,
                                 * declared in its header), or NULL: its defaults */
    double safety_scale; /* set to 1 before each step; a method may lower it to scale the
                          * controller's safety factor for the next step size (RADAU5:
                          * (2 nit + 1) / (newt + 2 nit) after newt Newton iterations) */
    double h_index;  /* |h| of the current step attempt (set by the driver before each
                      * step): mb_norm scales the index-2/3 components of a DAE
                      * (mb_problem.dae_index) by h_index^(index - 1) */
    int rhs_singular; /* the last failure of mb_rhs/mb_acc was the problem's MB_ERR_LINALG:
                       * a singular linear system inside f (a singular configuration, or
                       * the stage state of a too-large step); the driver then retries
                       * the step smaller, as after a non-finite value */
    /* last step, for dense output */
    double t_last, h_last;
    const double *y_last;
};

/* Evaluate f through the stepper: counts nfev, checks the result is finite
 * (MB_ERR_NONFINITE otherwise) and maps callback codes (< 0 fatal -> that code
 * is returned as MB_ERR_RHS_FAIL unless it is MB_ERR_CALLBACK; s->rhs_singular
 * tells whether the code was MB_ERR_LINALG). */
int mb_rhs(mb_stepper *s, double t, const double *y, double *ydot);
/* mb_rhs at a Newton iterate: a non-finite f (or a singular system inside f) there
 * means the iteration failed, not the run, so MB_ERR_NONFINITE (and MB_ERR_RHS_FAIL
 * with s->rhs_singular) becomes MB_RECOVERABLE (and the message it wrote is cleared);
 * other codes pass through. */
int mb_rhs_iterate(mb_stepper *s, double t, const double *y, double *ydot);
/* Second-order view: qdd = a(t, q, qd); uses p->acc, else p->rhs on (q, qd)
 * with tmp (size 2n) as scratch. */
int mb_acc(mb_stepper *s, double t, const double *q, const double *qd, double *qdd, double *tmp);
/* Jacobian J = df/dy (n x n, column-major, leading dimension n) at (t, y) with
 * fy = f(t, y): the problem's jac, else forward finite differences with
 * increments sqrt(eps * max(1e-5, |y_j|)) (Hairer-Wanner), grouping structurally
 * independent columns when a sparsity pattern was given.  Counts njev (and the
 * evaluations in nfev). */
int mb_jac(mb_stepper *s, double t, const double *y, const double *fy, double *J);
/* The forward-difference increment of a component of size yj that mb_jac uses (also the
 * SUNDIALS adapters' difference Jacobians): RADAU5's sqrt(eps max(1e-5, |yj|)) up to
 * |yj| = 1, sqrt(eps) |yj| above (scale-invariant from 1e-300 to 1e300) */
double mb_fd_increment(double yj);
/* With a structured linear system (s->p->linsys, linsys.h) mb_jac and mb_jac_refresh
 * evaluate and keep the problem's own Jacobian instead (J is not touched and may be
 * NULL), and the method factors and solves through these two: mb_linsys_factor factors
 * a I - J (a = ar + i ai) into slot (0 or 1) and returns MB_OK, MB_ERR_LINALG for a
 * singular matrix (as mb_lu_factor) or a fatal status; mb_linsys_solve overwrites
 * x = xr (+ i xi) by (a I - J)^-1 x (xi NULL for a real slot) and returns MB_OK,
 * MB_RECOVERABLE or a fatal status (MB_ERR_LINALG with a message). */
int mb_linsys_factor(mb_stepper *s, int slot, double ar, double ai);
/* out = M x for the problem's mass matrix: the dense p->mass, the diagonal p->mass_diag
 * (a problem with a linsys whose matrices are a M - J; methods flagged MB_LINSYS_MASS),
 * or the identity */
void mb_stepper_mass_apply(const mb_stepper *s, const double *x, double *out);
int mb_linsys_solve(mb_stepper *s, int slot, double *xr, double *xi);
/* Greedy grouping of the columns of an n x n column-major sparsity pattern into
 * structurally orthogonal groups; writes groups[n], returns the number of groups
 * (-1: out of memory). */
int mb_jac_groups(ptrdiff_t n, const unsigned char *pattern, int *groups);
/* Jacobian reuse of implicit methods that keep J across steps while Newton
 * converges: ok = J holds a Jacobian, fresh = it was evaluated at the start of the
 * current step, need = evaluate a new one before the next attempt. */
typedef struct mb_jac_reuse {
    int ok, fresh, need;
} mb_jac_reuse;
/* Evaluate J at (t, y) (fy = f(t, y)) when none is held, or when a new one is needed
 * and the one held is not fresh; *evaluated tells whether it did. */
int mb_jac_refresh(mb_stepper *s, mb_jac_reuse *r, double t, const double *y, const double *fy,
                   double *J, int *evaluated);
/* Jacobian policy of the Rosenbrock-type methods (rosenbrock.c, rosenbrock_nystrom.c).
 * A Rosenbrock method needs the exact J at the step's start: J (and df/dt) are evaluated
 * once per start point, and a step retried from that point (after a rejection or a
 * failure) keeps them.  A W-method (w_method) keeps J across steps and re-evaluates it at
 * the step's start when
 *   - a step was rejected (or failed) and J is from an earlier point,
 *   - h / h_jac leaves [1/4, 4] (h_jac: the step size J was taken with), or
 *   - J no longer predicts the change of f between the last two start points (the
 *     secant test, on the first attempt from a new point): ||r|| > 0.2 ||df||, with the
 *     residual r of J's prediction and the change df of f from the method's secant
 *     function (2-norms in the method's own variables).
 * The method sets w_method after clearing the struct in init() and calls, per step:
 * mb_wjac_due at the start of every attempt (evaluate J when it returns 1, then
 * mb_wjac_taken), and mb_wjac_accept from accept(). */
typedef struct mb_wjac {
    int w_method;  /* keep J across steps (W-method), else once per start point */
    int ok;        /* J (and df/dt) hold an evaluation */
    int here;      /* ... taken at the start point of the current step */
    int pending;   /* a step was computed and not accepted (it was rejected or failed) */
    int have_prev; /* W: the previous start point is held (t_prev, prev) */
    double h_jac;  /* the step size J was taken with */
    double t_prev;
} mb_wjac;
/* The secant test's residual: from the start point (t, y) (f(t, y) = s->f0) and the
 * previous one (y_prev, f_prev, dt = t - t_prev), write ||r||^2 into *rr and ||df||^2
 * into *ff; ctx is the method's. */
typedef void (*mb_wjac_secant_fn)(mb_stepper *s, const double *y, const double *y_prev,
                                  const double *f_prev, double dt, double *rr, double *ff,
                                  void *ctx);
/* At an attempt from (t, y) with step h: marks the step pending and returns 1 when J
 * must be evaluated now (J then counts as gone until mb_wjac_taken), else 0.  A
 * W-method's first attempt from a new point runs the secant test and then keeps
 * (y, s->f0) in prev (2n doubles: y_prev, then f_prev) and t in t_prev. */
int mb_wjac_due(mb_stepper *s, mb_wjac *w, double t, const double *y, double h, double *prev,
                mb_wjac_secant_fn secant, void *ctx);
/* J (and df/dt) were evaluated at the step's start, for the step size h */
void mb_wjac_taken(mb_wjac *w, double h);
/* the step was accepted: the next attempt starts from a new point */
void mb_wjac_accept(mb_wjac *w);
/* df/dt at (t, y) with fy = f(t, y): the problem's dfdt, else a forward difference. */
int mb_dfdt(mb_stepper *s, double t, const double *y, const double *fy, double *ft);
/* The run's weighted RMS norm of e (RN eqs 13-14) with the run's tolerances (atol,
 * rtol or rtol_v); y_new may be NULL.  For a DAE with index-2/3 components
 * (p->dae_index) component i counts with the factor h_index^(dae_index[i] - 1)
 * (RADAU5's scaling of the index-2 and index-3 variables: their errors are
 * O(h^-1), O(h^-2) larger than the step's accuracy at no loss of the others). */
double mb_norm(const mb_stepper *s, const double *e, const double *y, const double *y_new);
/* Write a formatted message into the run's buffer; returns code. */
int mb_fail(mb_stepper *s, int code, const char *fmt, ...);

#endif
