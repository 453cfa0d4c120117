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
#include <stdlib.h>
#include <string.h>

typedef void *fmi2Component;
typedef unsigned int fmi2ValueReference;
typedef int fmi2Status;
#define OK 0
#define ERR 3
#define EXPORT __attribute__((visibility("default")))
#define GUID "{meliar}"
#define SWITCH 0.5

enum { INSTANTIATED, INIT_MODE, EVENT_MODE, CONTINUOUS, STEPPING, TERMINATED };

typedef struct {
    double t, x, v;
    int above; /* the discrete state: a = 2 once x reached 0.5 */
    int mode;
    int cs;
} State;

typedef struct {
    int newDiscreteStatesNeeded, terminateSimulation, nominalsOfContinuousStatesChanged,
        valuesOfContinuousStatesChanged, nextEventTimeDefined;
    double nextEventTime;
} fmi2EventInfo;

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

EXPORT const char *fmi2GetTypesPlatform(void) { return "default"; }
EXPORT const char *fmi2GetVersion(void) { return "2.0"; }
EXPORT fmi2Status fmi2SetDebugLogging(fmi2Component c, int on, size_t n, const char *const cat[]) {
    (void)c; (void)on; (void)n; (void)cat; return OK;
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
EXPORT fmi2Status fmi2SetupExperiment(fmi2Component c, int td, double tol, double t0, int sd, double t1) {
    State *s = c;
    (void)td; (void)tol; (void)sd; (void)t1;
    if (s->mode != INSTANTIATED) return ERR;
    s->t = t0;
    return OK;
}
EXPORT fmi2Status fmi2EnterInitializationMode(fmi2Component c) {
    State *s = c;
    if (s->mode != INSTANTIATED) return ERR;
    s->mode = INIT_MODE;
    return OK;
}
EXPORT fmi2Status fmi2ExitInitializationMode(fmi2Component c) {
    State *s = c;
    if (s->mode != INIT_MODE) return ERR;
    s->mode = s->cs ? STEPPING : EVENT_MODE;
    return OK;
}
EXPORT fmi2Status fmi2Terminate(fmi2Component c) {
    State *s = c;
    if (s->mode == INSTANTIATED || s->mode == INIT_MODE || s->mode == TERMINATED) return ERR;
    s->mode = TERMINATED;
    return OK;
}
EXPORT fmi2Status fmi2Reset(fmi2Component c) {
    start(c);
    return OK;
}
EXPORT fmi2Status fmi2GetReal(fmi2Component c, const fmi2ValueReference vr[], size_t n, double v[]) {
    State *s = c;
    if (s->mode == INSTANTIATED) return ERR;
    for (size_t i = 0; i < n; i++) {
        switch (vr[i]) {
        case 0: v[i] = s->x; break;
        case 1: v[i] = a_of(s) * s->v; break;
        case 2: v[i] = s->v; break;
        case 3: v[i] = -s->v; break;
        default: return ERR;
        }
    }
    return OK;
}
EXPORT fmi2Status fmi2SetReal(fmi2Component c, const fmi2ValueReference vr[], size_t n, const double v[]) {
    State *s = c;
    if (s->mode != INSTANTIATED && s->mode != INIT_MODE) return ERR; /* only start values */
    for (size_t i = 0; i < n; i++) {
        if (vr[i] == 0) s->x = v[i];
        else if (vr[i] == 2) s->v = v[i];
        else return ERR;
    }
    return OK;
}
#define NONE(name, ...) EXPORT fmi2Status name(__VA_ARGS__) { return ERR; }
NONE(fmi2GetInteger, fmi2Component c, const fmi2ValueReference vr[], size_t n, int v[])
NONE(fmi2GetBoolean, fmi2Component c, const fmi2ValueReference vr[], size_t n, int v[])
NONE(fmi2GetString, fmi2Component c, const fmi2ValueReference vr[], size_t n, const char *v[])
NONE(fmi2SetInteger, fmi2Component c, const fmi2ValueReference vr[], size_t n, const int v[])
NONE(fmi2SetBoolean, fmi2Component c, const fmi2ValueReference vr[], size_t n, const int v[])
NONE(fmi2SetString, fmi2Component c, const fmi2ValueReference vr[], size_t n, const char *const v[])
NONE(fmi2SetRealInputDerivatives, fmi2Component c, const fmi2ValueReference vr[], size_t n, const int o[],
     const double v[])
NONE(fmi2GetRealOutputDerivatives, fmi2Component c, const fmi2ValueReference vr[], size_t n, const int o[], double v[])
NONE(fmi2CancelStep, fmi2Component c)
NONE(fmi2GetStatus, fmi2Component c, int k, int *v)
NONE(fmi2GetRealStatus, fmi2Component c, int k, double *v)
NONE(fmi2GetIntegerStatus, fmi2Component c, int k, int *v)
NONE(fmi2GetBooleanStatus, fmi2Component c, int k, int *v)
NONE(fmi2GetStringStatus, fmi2Component c, int k, const char **v)

/* d(unknown)/d(known) for the value references 0..3 (known: x = 0, v = 2). */
static int jacobian(const State *s, fmi2ValueReference u, fmi2ValueReference k, double *out) {
    if (k != 0 && k != 2) return ERR;
    switch (u) {
    case 0: *out = k == 0 ? 1.0 : 0.0; break;
    case 1: *out = k == 2 ? a_of(s) : 0.0; break;
    case 2: *out = k == 2 ? 1.0 : 0.0; break;
    case 3: *out = k == 2 ? -1.0 : 0.0; break;
    default: return ERR;
    }
    return OK;
}
EXPORT fmi2Status fmi2GetDirectionalDerivative(fmi2Component c, const fmi2ValueReference u[], size_t nu,
                                               const fmi2ValueReference z[], size_t nz, const double dv[],
                                               double du[]) {
    State *s = c;
    for (size_t i = 0; i < nu; i++) {
        du[i] = 0.0;
        for (size_t j = 0; j < nz; j++) {
            double d;
            if (jacobian(s, u[i], z[j], &d) != OK) return ERR;
            du[i] += d * dv[j];
        }
    }
    return OK;
}

EXPORT fmi2Status fmi2GetFMUstate(fmi2Component c, void **state) {
    if (!*state) *state = malloc(sizeof(State));
    if (!*state) return ERR;
    memcpy(*state, c, sizeof(State));
    return OK;
}
EXPORT fmi2Status fmi2SetFMUstate(fmi2Component c, void *state) {
    if (!state) return ERR;
    memcpy(c, state, sizeof(State));
    return OK;
}
EXPORT fmi2Status fmi2FreeFMUstate(fmi2Component c, void **state) {
    (void)c;
    if (state && *state) {
        free(*state);
        *state = NULL;
    }
    return OK;
}
EXPORT fmi2Status fmi2SerializedFMUstateSize(fmi2Component c, void *state, size_t *n) {
    (void)c; (void)state;
    *n = sizeof(State);
    return OK;
}
EXPORT fmi2Status fmi2SerializeFMUstate(fmi2Component c, void *state, char b[], size_t n) {
    (void)c;
    if (n < sizeof(State)) return ERR;
    memcpy(b, state, sizeof(State));
    return OK;
}
EXPORT fmi2Status fmi2DeSerializeFMUstate(fmi2Component c, const char b[], size_t n, void **state) {
    (void)c;
    if (n != sizeof(State)) return ERR;
    *state = malloc(sizeof(State));
    if (!*state) return ERR;
    memcpy(*state, b, sizeof(State));
    return OK;
}

/* Co-Simulation */
EXPORT fmi2Status fmi2DoStep(fmi2Component c, double t, double h, int noSet) {
    State *s = c;
    (void)noSet;
    if (!s->cs || s->mode != STEPPING || h < 0) return ERR;
    s->t = t;
    advance(s, h);
    s->t = t + h;
    return OK;
}

/* Model Exchange */
EXPORT fmi2Status fmi2EnterEventMode(fmi2Component c) {
    State *s = c;
    if (s->cs || s->mode != CONTINUOUS) return ERR;
    s->mode = EVENT_MODE;
    return OK;
}
EXPORT fmi2Status fmi2NewDiscreteStates(fmi2Component c, fmi2EventInfo *info) {
    State *s = c;
    if (s->mode != EVENT_MODE) return ERR;
    s->above = s->x >= SWITCH - 1e-9;
    memset(info, 0, sizeof *info);
    return OK;
}
EXPORT fmi2Status fmi2EnterContinuousTimeMode(fmi2Component c) {
    State *s = c;
    if (s->mode != EVENT_MODE) return ERR;
    s->mode = CONTINUOUS;
    return OK;
}
EXPORT fmi2Status fmi2CompletedIntegratorStep(fmi2Component c, int noSet, int *enterEventMode, int *terminate) {
    State *s = c;
    (void)noSet;
    if (s->mode != CONTINUOUS) return ERR;
    *enterEventMode = 0;
    *terminate = 0;
    return OK;
}
EXPORT fmi2Status fmi2SetTime(fmi2Component c, double t) {
    ((State *)c)->t = t;
    return OK;
}
EXPORT fmi2Status fmi2SetContinuousStates(fmi2Component c, const double x[], size_t n) {
    State *s = c;
    if (n != 2) return ERR;
    s->x = x[0];
    s->v = x[1];
    return OK;
}
EXPORT fmi2Status fmi2GetDerivatives(fmi2Component c, double d[], size_t n) {
    State *s = c;
    if (n != 2) return ERR;
#ifdef LIE_FACTOR
    const double k = 2.0;
#else
    const double k = 1.0;
#endif
    d[0] = k * a_of(s) * s->v;
    d[1] = k * -s->v;
    return OK;
}
EXPORT fmi2Status fmi2GetEventIndicators(fmi2Component c, double z[], size_t n) {
    State *s = c;
    if (n != 1) return ERR;
#ifdef LIE_INDICATOR
    (void)s;
    z[0] = 1.0;
#else
    z[0] = s->x - SWITCH;
#endif
    return OK;
}
EXPORT fmi2Status fmi2GetContinuousStates(fmi2Component c, double x[], size_t n) {
    State *s = c;
    if (n != 2) return ERR;
    x[0] = s->x;
    x[1] = s->v;
    return OK;
}
EXPORT fmi2Status fmi2GetNominalsOfContinuousStates(fmi2Component c, double x[], size_t n) {
    (void)c;
    for (size_t i = 0; i < n; i++) x[i] = 1.0;
    return OK;
}
