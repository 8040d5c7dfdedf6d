/* Standard test problems with fixed parameters (documented in mbint/problems.py,
 * which holds the same equations in Python). */
#include <math.h>
#include <string.h>
#include "problems.h"

/* Arenstorf orbit (Hairer-Norsett-Wanner I, II.0): restricted three-body problem,
 * mu = 0.012277471, y = (x, y, x', y'). */
static int arenstorf(double t, const double *y, double *f, void *ud)
{
    (void)t; (void)ud;
    const double mu = 0.012277471, mp = 1.0 - mu;
    double d1 = pow((y[0] + mu) * (y[0] + mu) + y[1] * y[1], 1.5);
    double d2 = pow((y[0] - mp) * (y[0] - mp) + y[1] * y[1], 1.5);
    f[0] = y[2];
    f[1] = y[3];
    f[2] = y[0] + 2.0 * y[3] - mp * (y[0] + mu) / d1 - mu * (y[0] - mp) / d2;
    f[3] = y[1] - 2.0 * y[2] - mp * y[1] / d1 - mu * y[1] / d2;
    return 0;
}

/* LN eq 7.7 with m = 1, k = 100, c = 1, g = 9.81: x'' = g - k/m x - c/m x' */
static int mass_spring_damper(double t, const double *y, double *f, void *ud)
{
    (void)t; (void)ud;
    f[0] = y[1];
    f[1] = 9.81 - 100.0 * y[0] - 1.0 * y[1];
    return 0;
}

/* undamped pendulum, L = 1, g = 9.81: theta'' = -g/L sin(theta) */
static int pendulum(double t, const double *y, double *f, void *ud)
{
    (void)t; (void)ud;
    f[0] = y[1];
    f[1] = -9.81 * sin(y[0]);
    return 0;
}

/* y' = -y */
static int exp_decay(double t, const double *y, double *f, void *ud)
{
    (void)t; (void)ud;
    f[0] = -y[0];
    return 0;
}

/* harmonic oscillator q'' = -q, y = (q, q') */
static int oscillator(double t, const double *y, double *f, void *ud)
{
    (void)t; (void)ud;
    f[0] = y[1];
    f[1] = -y[0];
    return 0;
}

int mb_vdp1000(double, const double *, double *, void *);
int mb_vdp1000_jac(double, const double *, double *, ptrdiff_t, void *);
int mb_vdp_scaled(double, const double *, double *, void *);
int mb_vdp_scaled_jac(double, const double *, double *, ptrdiff_t, void *);
int mb_robertson(double, const double *, double *, void *);
int mb_robertson_jac(double, const double *, double *, ptrdiff_t, void *);
int mb_hires(double, const double *, double *, void *);
int mb_hires_jac(double, const double *, double *, ptrdiff_t, void *);

static const struct {
    const char *name;
    mb_rhs_fn f;
    mb_jac_fn jac;
} table[] = {
    {"arenstorf", arenstorf, 0}, {"mass_spring_damper", mass_spring_damper, 0},
    {"pendulum", pendulum, 0}, {"exp_decay", exp_decay, 0}, {"oscillator", oscillator, 0},
    {"vdp1000", mb_vdp1000, mb_vdp1000_jac}, {"vdp_scaled", mb_vdp_scaled, mb_vdp_scaled_jac},
    {"robertson", mb_robertson, mb_robertson_jac}, {"hires", mb_hires, mb_hires_jac}};

mb_rhs_fn mb_test_problem_find(const char *name)
{
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
        if (strcmp(table[i].name, name) == 0)
            return table[i].f;
    return NULL;
}

mb_jac_fn mb_test_problem_jac(const char *name)
{
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
        if (strcmp(table[i].name, name) == 0)
            return table[i].jac;
    return NULL;
}
