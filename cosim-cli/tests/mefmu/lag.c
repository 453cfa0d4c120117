/* A first-order lag as an FMI 2.0 Model Exchange FMU for the strong-coupling tests
 * (tests/me_strong.rs, which writes its modelDescription and must agree on the value references):
 *   r0 x (state, x' = (u - x) / tau), r1 der(x), r2 tau (parameter), r3 u (input),
 *   r4 y = x + d u (output), r5 d (parameter: 0, no direct feedthrough, or 1).
 * It exports the common and Model Exchange functions only (no fmi2DoStep: the entry points are
 * those of ../cinclude/fmi2_real_array.h, over the reals r; no events). */
#include "../cinclude/fmi2_common.h"

#define NR 6
#define NX 1
#define NZ 0

typedef struct {
    double r[NR];
    double time;
} M;

static void start(M *m) {
    m->r[0] = 0.0; m->r[2] = 1.0; m->r[3] = 0.0; m->r[5] = 0.0;
}

static void derivatives(M *m) {
    double *r = m->r;
    r[1] = (r[3] - r[0]) / r[2];
    r[4] = r[0] + r[5] * r[3];
}

#include "../cinclude/fmi2_real_array.h"
