/* Stiff test problems with analytic Jacobians (Hairer & Wanner, Solving ODEs II,
 * IV.10 and the Test Set for IVP Solvers): Van der Pol, Robertson, HIRES.
 * Jacobians are column-major: J[j * ld + i] = df_i / dy_j. */
#include "problems.h"

#define JAC(i, j) J[(j) * ld + (i)]

/* Van der Pol, y1' = y2, y2' = mu ((1 - y1^2) y2 - y1), mu = 1000 */
int mb_vdp1000(double t, const double *y, double *f, void *ud)
{
    (void)t; (void)ud;
    const double mu = 1000.0;
    f[0] = y[1];
    f[1] = mu * ((1.0 - y[0] * y[0]) * y[1] - y[0]);
    return 0;
}

int mb_vdp1000_jac(double t, const double *y, double *J, ptrdiff_t ld, void *ud)
{
    (void)t; (void)ud;
    const double mu = 1000.0;
    JAC(0, 0) = 0.0;
    JAC(0, 1) = 1.0;
    JAC(1, 0) = mu * (-2.0 * y[0] * y[1] - 1.0);
    JAC(1, 1) = mu * (1.0 - y[0] * y[0]);
    return 0;
}

/* scaled Van der Pol (Hairer-Wanner II, IV.10): y1' = y2, y2' = ((1 - y1^2) y2 - y1)/eps,
 * eps = 1e-6 (i.e. mu = 1000 after t -> t/mu; 1e6 in the unscaled form) */
int mb_vdp_scaled(double t, const double *y, double *f, void *ud)
{
    (void)t; (void)ud;
    const double eps = 1e-6;
    f[0] = y[1];
    f[1] = ((1.0 - y[0] * y[0]) * y[1] - y[0]) / eps;
    return 0;
}

int mb_vdp_scaled_jac(double t, const double *y, double *J, ptrdiff_t ld, void *ud)
{
    (void)t; (void)ud;
    const double eps = 1e-6;
    JAC(0, 0) = 0.0;
    JAC(0, 1) = 1.0;
    JAC(1, 0) = (-2.0 * y[0] * y[1] - 1.0) / eps;
    JAC(1, 1) = (1.0 - y[0] * y[0]) / eps;
    return 0;
}

/* Robertson's chemical kinetics */
int mb_robertson(double t, const double *y, double *f, void *ud)
{
    (void)t; (void)ud;
    f[0] = -0.04 * y[0] + 1e4 * y[1] * y[2];
    f[2] = 3e7 * y[1] * y[1];
    f[1] = -f[0] - f[2];
    return 0;
}

int mb_robertson_jac(double t, const double *y, double *J, ptrdiff_t ld, void *ud)
{
    (void)t; (void)ud;
    JAC(0, 0) = -0.04;
    JAC(0, 1) = 1e4 * y[2];
    JAC(0, 2) = 1e4 * y[1];
    JAC(2, 0) = 0.0;
    JAC(2, 1) = 6e7 * y[1];
    JAC(2, 2) = 0.0;
    JAC(1, 0) = 0.04;
    JAC(1, 1) = -1e4 * y[2] - 6e7 * y[1];
    JAC(1, 2) = -1e4 * y[1];
    return 0;
}

/* HIRES (Schafer 1975; Hairer-Wanner II, IV.10), 8 components, t in [0, 321.8122] */
int mb_hires(double t, const double *y, double *f, void *ud)
{
    (void)t; (void)ud;
    f[0] = -1.71 * y[0] + 0.43 * y[1] + 8.32 * y[2] + 0.0007;
    f[1] = 1.71 * y[0] - 8.75 * y[1];
    f[2] = -10.03 * y[2] + 0.43 * y[3] + 0.035 * y[4];
    f[3] = 8.32 * y[1] + 1.71 * y[2] - 1.12 * y[3];
    f[4] = -1.745 * y[4] + 0.43 * y[5] + 0.43 * y[6];
    f[5] = -280.0 * y[5] * y[7] + 0.69 * y[3] + 1.71 * y[4] - 0.43 * y[5] + 0.69 * y[6];
    f[6] = 280.0 * y[5] * y[7] - 1.81 * y[6];
    f[7] = -f[6];
    return 0;
}

int mb_hires_jac(double t, const double *y, double *J, ptrdiff_t ld, void *ud)
{
    (void)t; (void)ud;
    for (int j = 0; j < 8; j++)
        for (int i = 0; i < 8; i++)
            JAC(i, j) = 0.0;
    JAC(0, 0) = -1.71; JAC(0, 1) = 0.43; JAC(0, 2) = 8.32;
    JAC(1, 0) = 1.71; JAC(1, 1) = -8.75;
    JAC(2, 2) = -10.03; JAC(2, 3) = 0.43; JAC(2, 4) = 0.035;
    JAC(3, 1) = 8.32; JAC(3, 2) = 1.71; JAC(3, 3) = -1.12;
    JAC(4, 4) = -1.745; JAC(4, 5) = 0.43; JAC(4, 6) = 0.43;
    JAC(5, 3) = 0.69; JAC(5, 4) = 1.71; JAC(5, 5) = -0.43 - 280.0 * y[7]; JAC(5, 6) = 0.69;
    JAC(5, 7) = -280.0 * y[5];
    JAC(6, 5) = 280.0 * y[7]; JAC(6, 6) = -1.81; JAC(6, 7) = 280.0 * y[5];
    JAC(7, 5) = -280.0 * y[7]; JAC(7, 6) = 1.81; JAC(7, 7) = -280.0 * y[5];
    return 0;
}
