#ifndef MB_CORE_CONTROLLER_H
#define MB_CORE_CONTROLLER_H
/* Step-size controllers: one Soderlind-type form, I and PI as parameter sets, and
 * Gustafsson's predictive controller of RADAU5.
 *   elementary (I):  h* = safety * (1/err)^(1/k) h          (LLM eq 38, RN eq 16)
 *   PI (Gustafsson): h* = safety * (1/err)^kI (err_prev/err)^kP h  (LLM eq 40)
 *                    kI = 0.3/k, kP = 0.4/k
 *   predictive (Gustafsson 1994, as RADAU5 and SciPy's Radau): after an accepted
 *                    step also h_g = safety h (h / h_acc) (err_acc / err^2)^(1/k),
 *                    h* = min(h*_I, h_g), with h_acc, err_acc = max(1e-2, err) of
 *                    the previous accepted step.  At a steady error it is the
 *                    elementary controller (err -> safety^k); the PI settles at
 *                    err = safety^(k/0.3), 0.25 for k = 4.
 * err is the normalized error (tol = 1); k = q + 1 for error per step (EPS) and
 * k = q for error per unit step (EPUS), q the order of the error estimate.
 * The factor is bounded to [fac_min, fac_max] (RN eq 16); after a rejection the
 * growth is capped at 1. */
typedef enum {
    MB_CONTROLLER_DEFAULT = 0,    /* the method's preferred one (mb_method.controller), else PI */
    MB_CONTROLLER_I = 1,
    MB_CONTROLLER_PI = 2,
    MB_CONTROLLER_PREDICTIVE = 3
} mb_controller_kind;

typedef struct mb_controller {
    mb_controller_kind kind;
    double safety, fac_min, fac_max;
    double err_prev;   /* last accepted error norm (PI and predictive memory) */
    double h_prev;     /* |h| of the last accepted step (predictive) */
    double safety_scale; /* multiplies safety in the next factor (the driver sets it
                          * from the step: mb_stepper.safety_scale), 1 by default */
    int has_prev;
} mb_controller;

void mb_controller_init(mb_controller *c, mb_controller_kind kind, double safety,
                        double fac_min, double fac_max);
/* Factor h_new / h after a step of size h (|h| used) with normalized error err; k as
 * above.  accepted: whether err <= 1 (then the memory is updated);
 * after_reject: the previous attempt at this step was rejected (cap growth at 1). */
double mb_controller_factor(mb_controller *c, double h, double err, double k, int accepted,
                            int after_reject);

#endif
