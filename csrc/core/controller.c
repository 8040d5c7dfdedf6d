#include <math.h>
#include "controller.h"

void mb_controller_init(mb_controller *c, mb_controller_kind kind, double safety,
                        double fac_min, double fac_max)
{
    c->kind = kind;
    c->safety = safety > 0 ? safety : 0.9;
    c->fac_min = fac_min > 0 ? fac_min : 0.2;
    c->fac_max = fac_max > 0 ? fac_max : 10.0;
    c->err_prev = 1.0;
    c->h_prev = 0.0;
    c->safety_scale = 1.0;
    c->has_prev = 0;
}

double mb_controller_factor(mb_controller *c, double h, double err, double k, int accepted,
                            int after_reject)
{
    const double tiny = 1e-10;          /* err == 0: grow by fac_max */
    double e = err > tiny ? err : tiny;
    double fac;

    if (!isfinite(err))
        return c->fac_min;
    h = fabs(h);
    double safety = c->safety * (c->safety_scale > 0 ? c->safety_scale : 1.0);
    if (c->kind == MB_CONTROLLER_PI && accepted && c->has_prev) {
        /* LLM eq 40 with tol = 1: (1/r_{n+1})^kI (r_n/r_{n+1})^kP */
        double kI = 0.3 / k, kP = 0.4 / k;
        fac = safety * pow(1.0 / e, kI) * pow(c->err_prev / e, kP);
    } else {
        /* LLM eq 38 / RN eq 15-16 */
        fac = safety * pow(1.0 / e, 1.0 / k);
        if (c->kind == MB_CONTROLLER_PREDICTIVE && accepted && c->has_prev && c->h_prev > 0) {
            /* Gustafsson's predictive step (RADAU5: FACGUS) */
            double g = safety * (h / c->h_prev) * pow(c->err_prev / (e * e), 1.0 / k);
            if (g < fac) fac = g;
        }
    }
    if (accepted) {
        /* as Hairer: keep the memory bounded (PI: 1e-4, RADAU5's predictive: 1e-2) */
        double floor = c->kind == MB_CONTROLLER_PREDICTIVE ? 1e-2 : 1e-4;
        c->err_prev = e > floor ? e : floor;
        c->h_prev = h;
        c->has_prev = 1;
    }
    /* RN eq 16: facmin <= factor <= facmax; no growth right after a rejection */
    double hi = (after_reject || !accepted) ? 1.0 : c->fac_max;
    if (fac > hi) fac = hi;
    if (fac < c->fac_min) fac = c->fac_min;
    return fac;
}
