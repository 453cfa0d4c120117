/* A small FMI 2.0 Model Exchange and Co-Simulation FMU for cosim-cli/tests/check.rs: honest by
 * default, or lying in one way in its Model Exchange interface, chosen at compile time (the
 * description, written by the test, always claims the honest behaviour).
 * States x (vr 0, output, start 0) and v (vr 2, output, start 1); der(x) (vr 1), der(v) (vr 3):
 *   x' = a v,  v' = -v,  a = 1 before the event, 2 after it;
 * the event: x reaches 0.5 (t = ln 2), event indicator z = x - 0.5; a is a discrete state that
 * changes in fmi2NewDiscreteStates. The Co-Simulation interface integrates the same equations in
 * closed form (v = v0 e^-t, x = x0 + a v0 (1 - e^-t), the event located exactly).
 * fmi2GetDirectionalDerivative gives the exact Jacobian of (der(x), der(v), x, v) by (x, v).
 *   -DLIE_FACTOR     fmi2GetDerivatives returns twice the derivatives (der(x), der(v) read with
 *                    fmi2GetReal stay right)
 *   -DLIE_INDICATOR  the event indicator is 1 for ever, and a switches inside fmi2GetDerivatives
 *                    when x passes 0.5 (in Continuous-Time Mode, without an event) */
#include <math.h>

#include "../cinclude/fmi2_common.h"

#define GUID "{meliar}"
#define SWITCH 0.5

typedef struct {
    double t, x, v;
    int above; /* the discrete state: a = 2 once x reached 0.5 */
    int mode;
    int cs;
} State;

static double a_of(const State *s) {
#ifdef LIE_INDICATOR
    return s->x >= SWITCH ? 2.0 : 1.0;
#else
    return s->above ? 2.0 : 1.0;
#endif
}

static void start(State *s) {
    s->t = 0.0; s->x = 0.0; s->v = 1.0; s->above = 0; s->mode = INSTANTIATED;
}

/* The closed form over h, the event located exactly. */
static void advance(State *s, double h) {
    if (!s->above && s->v > 0) {
        double frac = (SWITCH - s->x) / s->v; /* 1 - e^-tau with a = 1 */
        if (frac < 1.0) {
            double tau = -log1p(-frac);
            if (tau <= h) {
                s->x = SWITCH;
                s->v *= exp(-tau);
                s->above = 1;
                h -= tau;
            }
        }
    }
    double a = s->above ? 2.0 : 1.0;
    s->x += a * s->v * -expm1(-h);
    s->v *= exp(-h);
}

EXPORT fmi2Component fmi2Instantiate(const char *name, int type, const char *guid, const char *res, const void *f,
                                     int vis, int log) {
    (void)name; (void)res; (void)f; (void)vis; (void)log;
    if ((type != 0 && type != 1) || !guid || strcmp(guid, GUID) != 0) return NULL;
    State *s = calloc(1, sizeof(State));
    if (!s) return NULL;
    start(s);
    s->cs = type == 1;
    return s;
}
EXPORT void fmi2FreeInstance(fmi2Component c) { free(c); }
FMI2_SETUP_EXPERIMENT(State, t)
FMI2_MODES(State, s->cs ? STEPPING : EVENT_MODE)
EXPORT fmi2Status fmi2Reset(fmi2Component c) {
    start(c);
    return fmi2OK;
}
EXPORT fmi2Status fmi2GetReal(fmi2Component c, const fmi2ValueReference vr[], size_t n, double v[]) {
    State *s = c;
    if (s->mode == INSTANTIATED) return fmi2Error;
    for (size_t i = 0; i < n; i++) {
        switch (vr[i]) {
        case 0: v[i] = s->x; break;
        case 1: v[i] = a_of(s) * s->v; break;
        case 2: v[i] = s->v; break;
        case 3: v[i] = -s->v; break;
        default: return fmi2Error;
        }
    }
    return fmi2OK;
}
EXPORT fmi2Status fmi2SetReal(fmi2Component c, const fmi2ValueReference vr[], size_t n, const double v[]) {
    State *s = c;
    if (s->mode != INSTANTIATED && s->mode != INIT_MODE) return fmi2Error; /* only start values */
    for (size_t i = 0; i < n; i++) {
        if (vr[i] == 0) s->x = v[i];
        else if (vr[i] == 2) s->v = v[i];
        else return fmi2Error;
    }
    return fmi2OK;
}
FMI2_NO_OTHER_TYPES(0)
FMI2_CS_NO_DERIVATIVES
FMI2_CS_NO_STATUS

/* d(unknown)/d(known) for the value references 0..3 (known: x = 0, v = 2). */
static int jacobian(const State *s, fmi2ValueReference u, fmi2ValueReference k, double *out) {
    if (k != 0 && k != 2) return fmi2Error;
    switch (u) {
    case 0: *out = k == 0 ? 1.0 : 0.0; break;
    case 1: *out = k == 2 ? a_of(s) : 0.0; break;
    case 2: *out = k == 2 ? 1.0 : 0.0; break;
    case 3: *out = k == 2 ? -1.0 : 0.0; break;
    default: return fmi2Error;
    }
    return fmi2OK;
}
EXPORT fmi2Status fmi2GetDirectionalDerivative(fmi2Component c, const fmi2ValueReference u[], size_t nu,
                                               const fmi2ValueReference z[], size_t nz, const double dv[],
                                               double du[]) {
    State *s = c;
    for (size_t i = 0; i < nu; i++) {
        du[i] = 0.0;
        for (size_t j = 0; j < nz; j++) {
            double d;
            if (jacobian(s, u[i], z[j], &d) != fmi2OK) return fmi2Error;
            du[i] += d * dv[j];
        }
    }
    return fmi2OK;
}

FMI2_STATE_COPIES(State)
FMI2_STATE_RESTORE(State)
FMI2_STATE_SERIALIZED(State)

/* Co-Simulation */
EXPORT fmi2Status fmi2DoStep(fmi2Component c, double t, double h, int noSet) {
    State *s = c;
    (void)noSet;
    if (!s->cs || s->mode != STEPPING || h < 0) return fmi2Error;
    s->t = t;
    advance(s, h);
    s->t = t + h;
    return fmi2OK;
}

/* Model Exchange */
EXPORT fmi2Status fmi2EnterEventMode(fmi2Component c) {
    State *s = c;
    if (s->cs || s->mode != CONTINUOUS) return fmi2Error;
    s->mode = EVENT_MODE;
    return fmi2OK;
}
EXPORT fmi2Status fmi2NewDiscreteStates(fmi2Component c, fmi2EventInfo *info) {
    State *s = c;
    if (s->mode != EVENT_MODE) return fmi2Error;
    s->above = s->x >= SWITCH - 1e-9;
    memset(info, 0, sizeof *info);
    return fmi2OK;
}
EXPORT fmi2Status fmi2EnterContinuousTimeMode(fmi2Component c) {
    State *s = c;
    if (s->mode != EVENT_MODE) return fmi2Error;
    s->mode = CONTINUOUS;
    return fmi2OK;
}
EXPORT fmi2Status fmi2CompletedIntegratorStep(fmi2Component c, int noSet, int *enterEventMode, int *terminate) {
    State *s = c;
    (void)noSet;
    if (s->mode != CONTINUOUS) return fmi2Error;
    *enterEventMode = 0;
    *terminate = 0;
    return fmi2OK;
}
EXPORT fmi2Status fmi2SetTime(fmi2Component c, double t) {
    ((State *)c)->t = t;
    return fmi2OK;
}
EXPORT fmi2Status fmi2SetContinuousStates(fmi2Component c, const double x[], size_t n) {
    State *s = c;
    if (n != 2) return fmi2Error;
    s->x = x[0];
    s->v = x[1];
    return fmi2OK;
}
EXPORT fmi2Status fmi2GetDerivatives(fmi2Component c, double d[], size_t n) {
    State *s = c;
    if (n != 2) return fmi2Error;
#ifdef LIE_FACTOR
    const double k = 2.0;
#else
    const double k = 1.0;
#endif
    d[0] = k * a_of(s) * s->v;
    d[1] = k * -s->v;
    return fmi2OK;
}
EXPORT fmi2Status fmi2GetEventIndicators(fmi2Component c, double z[], size_t n) {
    State *s = c;
    if (n != 1) return fmi2Error;
#ifdef LIE_INDICATOR
    (void)s;
    z[0] = 1.0;
#else
    z[0] = s->x - SWITCH;
#endif
    return fmi2OK;
}
EXPORT fmi2Status fmi2GetContinuousStates(fmi2Component c, double x[], size_t n) {
    State *s = c;
    if (n != 2) return fmi2Error;
    x[0] = s->x;
    x[1] = s->v;
    return fmi2OK;
}
FMI2_UNIT_NOMINALS
