/* A bouncing ball as an FMI 2.0 Co-Simulation FMU for cosim-cli/tests/check.rs: the model and the
 * variables of the modelica Reference FMU BouncingBall 2.0, whose ModelStructure declares the
 * derivative der(v) dependent on the parameter g (against the letter of FMI 2.0 §2.2.8, harmless:
 * `cosim check` WARNs, as docs/check.md explains). Written here (the Reference FMUs are not on a
 * registry); the description is written by the test.
 *   der(h) = v, der(v) = g; when h <= 0: v := -e v (the ball stops below v_min).
 * Every step is integrated in closed form (free fall between impacts, the impact time solved
 * exactly), so any partition of a span into steps gives the same trajectory up to round-off.
 * Value references: 0 time, 1 h, 2 der(h), 3 v, 4 der(v), 5 g, 6 e, 7 v_min. */
#include <math.h>

#include "../cinclude/fmi2_common.h"

#define GUID "{8c4e810f-3df3-4a00-8276-176fa3c9f003}"

typedef struct {
    double time, h, v, g, e;
    int mode;
} Ball;

static const double V_MIN = 0.1;

static void defaults(Ball *b) {
    b->time = 0.0; b->h = 1.0; b->v = 0.0; b->g = -9.81; b->e = 0.7; b->mode = INSTANTIATED;
}

EXPORT fmi2Component fmi2Instantiate(const char *name, int type, const char *guid, const char *res, const void *f,
                                     int vis, int log) {
    (void)name; (void)res; (void)f; (void)vis; (void)log;
    if (type != 1 || !guid || strcmp(guid, GUID) != 0) return NULL;
    Ball *b = calloc(1, sizeof(Ball));
    if (b) defaults(b);
    return b;
}
EXPORT void fmi2FreeInstance(fmi2Component c) { free(c); }
FMI2_SETUP_EXPERIMENT(Ball, time)
FMI2_MODES(Ball, STEPPING)
EXPORT fmi2Status fmi2Reset(fmi2Component c) { defaults(c); return fmi2OK; }
EXPORT fmi2Status fmi2GetReal(fmi2Component c, const fmi2ValueReference vr[], size_t n, double v[]) {
    Ball *b = c;
    if (b->mode == INSTANTIATED) return fmi2Error;
    for (size_t i = 0; i < n; i++) {
        switch (vr[i]) {
        case 0: v[i] = b->time; break;
        case 1: v[i] = b->h; break;
        case 2: v[i] = b->v; break;
        case 3: v[i] = b->v; break;
        case 4: v[i] = b->g; break;
        case 5: v[i] = b->g; break;
        case 6: v[i] = b->e; break;
        case 7: v[i] = V_MIN; break;
        default: return fmi2Error;
        }
    }
    return fmi2OK;
}
EXPORT fmi2Status fmi2SetReal(fmi2Component c, const fmi2ValueReference vr[], size_t n, const double v[]) {
    Ball *b = c;
    for (size_t i = 0; i < n; i++) {
        if (vr[i] == 5 && (b->mode == INSTANTIATED || b->mode == INIT_MODE)) b->g = v[i];
        else if (vr[i] == 6 && b->mode != TERMINATED) b->e = v[i];
        else if ((vr[i] == 1 || vr[i] == 3) && (b->mode == INSTANTIATED || b->mode == INIT_MODE))
            *(vr[i] == 1 ? &b->h : &b->v) = v[i];
        else return fmi2Error;
    }
    return fmi2OK;
}
FMI2_NO_OTHER_TYPES(0)
FMI2_NO_STATE
FMI2_NO_DIRECTIONAL_DERIVATIVE
FMI2_CS_NO_DERIVATIVES
FMI2_CS_NO_STATUS

EXPORT fmi2Status fmi2DoStep(fmi2Component c, double t, double dt, int noSet) {
    Ball *b = c;
    (void)t; (void)noSet;
    if (b->mode != STEPPING || dt < 0) return fmi2Error;
    double left = dt;
    /* At most a few impacts per step; each is solved exactly. */
    for (int impacts = 0; left > 0 && impacts < 100; impacts++) {
        if (b->h <= 0 && b->v == 0) break; /* at rest */
        double h1 = b->h + b->v * left + 0.5 * b->g * left * left;
        if (h1 > 0 || b->g >= 0) {
            b->h = h1;
            b->v += b->g * left;
            break;
        }
        /* The impact: h + v s + g s^2 / 2 = 0, the root in (0, left]. */
        double disc = b->v * b->v - 2.0 * b->g * b->h;
        double s = (-b->v - sqrt(disc > 0 ? disc : 0)) / b->g;
        if (!(s >= 0)) s = 0;
        if (s > left) s = left;
        double v_impact = b->v + b->g * s;
        b->h = 0;
        b->v = -b->e * v_impact;
        if (b->v < V_MIN) b->v = 0;
        left -= s;
    }
    b->time += dt;
    return fmi2OK;
}
