#ifndef MB_CORE_CONTROLLER_H
#define MB_CORE_CONTROLLER_H
/* Step-size controllers: one Soderlind-type form, I and PI as parameter sets.
 *   elementary (I):  h* = safety * (1/err)^(1/k) h          (LLM eq 38, RN eq 16)
 *   PI (Gustafsson): h* = safety * (1/err)^kI (err_prev/err)^kP h  (LLM eq 40)
 *                    kI = 0.3/k, kP = 0.4/k
 * err is the normalized error (tol = 1); k = q + 1 for error per step (EPS) and
 * k = q for error per unit step (EPUS), q the order of the error estimate.
 * The factor is bounded to [fac_min, fac_max] (RN eq 16); after a rejection the
 * growth is capped at 1. */
typedef enum { MB_CONTROLLER_I = 0, MB_CONTROLLER_PI = 1 } mb_controller_kind;

typedef struct mb_controller {
    mb_controller_kind kind;
    double safety, fac_min, fac_max;
    double err_prev;   /* last accepted error norm (PI memory) */
    int has_prev;
} mb_controller;

void mb_controller_init(mb_controller *c, mb_controller_kind kind, double safety,
                        double fac_min, double fac_max);
/* Factor h_new / h after a step with normalized error err; k as above.
 * accepted: whether err <= 1 (then the PI memory is updated);
 * after_reject: the previous attempt at this step was rejected (cap growth at 1). */
double mb_controller_factor(mb_controller *c, double err, double k, int accepted,
                            int after_reject);

#endif
