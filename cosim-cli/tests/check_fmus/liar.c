/* A small FMI 2.0 Co-Simulation FMU for master/tests/check.rs: honest by default, or lying in one
 * way, chosen at compile time (the description, written by the test, always claims the honest
 * behaviour: no feedthrough, states that restore, independent instances, variable steps).
 * Real variables: 0 = u (input, start 1), 1 = x (output, x' = u, exact for a held u and for u
 * ramped by its first derivative, fmi2SetRealInputDerivatives), 2 = y (output, y = 2 x),
 * 3 = tau (output, the FMU's own time: the sum of its steps). Output derivatives of order 1.
 *   -DLIE_STATE        fmi2SetFMUstate returns fmi2OK but restores nothing
 *   -DLIE_FEEDTHROUGH  y = 2 x + u: direct feedthrough the description does not declare
 *   -DLIE_GLOBAL       every instance is the same global state
 *   -DLIE_STEP         every fmi2DoStep advances by the default step 0.1, whatever h it is given
 *   -DLIE_LATCH        every fmi2DoStep advances by the h of the instance's first step (evenly
 *                      split steps are then consistent; steps that vary within a run are not)
 *   -DLIE_LEAK         every fmi2Instantiate leaks 64 KiB (written, so that it is resident)
 *   -DLIE_STATE_TIME   fmi2SetFMUstate restores everything but the FMU's time
 *   -DLIE_INTERP       fmi2SetRealInputDerivatives returns fmi2OK and is ignored */
#include <stdlib.h>
#include <string.h>

typedef void *fmi2Component;
typedef unsigned int fmi2ValueReference;
typedef int fmi2Status; /* fmi2OK 0, fmi2Warning 1, fmi2Discard 2, fmi2Error 3 */
#define OK 0
#define ERR 3
#define EXPORT __attribute__((visibility("default")))
#define GUID "{liar}"
#define H_DEFAULT 0.1

enum { INSTANTIATED, INIT_MODE, STEPPING, TERMINATED };

typedef struct {
    double u, x;
    double du; /* the input's first derivative, until u is set again */
    double t;  /* the FMU's time */
    int mode;
    double h0; /* the first step size (LIE_LATCH) */
} State;

#ifdef LIE_GLOBAL
static State the_state;
#endif

static double y_of(const State *s) {
#ifdef LIE_FEEDTHROUGH
    return 2.0 * s->x + s->u;
#else
    return 2.0 * s->x;
#endif
}

EXPORT const char *fmi2GetTypesPlatform(void) { return "default"; }
EXPORT const char *fmi2GetVersion(void) { return "2.0"; }
EXPORT fmi2Status fmi2SetDebugLogging(fmi2Component c, int on, size_t n, const char *const cat[]) {
    (void)c; (void)on; (void)n; (void)cat; return OK;
}
EXPORT fmi2Component fmi2Instantiate(const char *name, int type, const char *guid, const char *res, const void *f,
                                     int vis, int log) {
    (void)name; (void)res; (void)f; (void)vis; (void)log;
    if (type != 1 || !guid || strcmp(guid, GUID) != 0) return NULL;
#ifdef LIE_GLOBAL
    State *s = &the_state;
#else
    State *s = calloc(1, sizeof(State));
    if (!s) return NULL;
#endif
    s->u = 1.0; s->x = 0.0; s->du = 0.0; s->t = 0.0; s->mode = INSTANTIATED; s->h0 = 0.0;
#ifdef LIE_LEAK
    /* Chained from a global, so that the compiler cannot drop the allocation. */
    static void *leaks;
    char *leak = malloc(65536);
    if (leak) {
        memset(leak, 1, 65536);
        *(void **)leak = leaks;
        leaks = leak;
    }
#endif
    return s;
}
EXPORT void fmi2FreeInstance(fmi2Component c) {
#ifndef LIE_GLOBAL
    free(c);
#else
    (void)c;
#endif
}
EXPORT fmi2Status fmi2SetupExperiment(fmi2Component c, int td, double tol, double t0, int sd, double t1) {
    (void)td; (void)tol; (void)t0; (void)sd; (void)t1;
    return ((State *)c)->mode == INSTANTIATED ? OK : ERR;
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
    s->mode = STEPPING;
    return OK;
}
EXPORT fmi2Status fmi2Terminate(fmi2Component c) {
    State *s = c;
    if (s->mode != STEPPING) return ERR;
    s->mode = TERMINATED;
    return OK;
}
EXPORT fmi2Status fmi2Reset(fmi2Component c) {
    State *s = c;
    s->u = 1.0; s->x = 0.0; s->du = 0.0; s->t = 0.0; s->mode = INSTANTIATED; s->h0 = 0.0;
    return OK;
}
EXPORT fmi2Status fmi2GetReal(fmi2Component c, const fmi2ValueReference vr[], size_t n, double v[]) {
    State *s = c;
    if (s->mode == INSTANTIATED) return ERR;
    for (size_t i = 0; i < n; i++) {
        switch (vr[i]) {
        case 0: v[i] = s->u; break;
        case 1: v[i] = s->x; break;
        case 2: v[i] = y_of(s); break;
        case 3: v[i] = s->t; break;
        default: return ERR;
        }
    }
    return OK;
}
EXPORT fmi2Status fmi2SetReal(fmi2Component c, const fmi2ValueReference vr[], size_t n, const double v[]) {
    State *s = c;
    if (s->mode == TERMINATED) return ERR;
    for (size_t i = 0; i < n; i++) {
        if (vr[i] != 0) return ERR; /* only the input can be set */
        s->u = v[i];
        s->du = 0.0;
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
NONE(fmi2GetDirectionalDerivative, fmi2Component c, const fmi2ValueReference u[], size_t nu,
     const fmi2ValueReference z[], size_t nz, const double dv[], double dz[])
EXPORT fmi2Status fmi2SetRealInputDerivatives(fmi2Component c, const fmi2ValueReference vr[], size_t n,
                                              const int o[], const double v[]) {
    State *s = c;
    if (s->mode == TERMINATED) return ERR;
    for (size_t i = 0; i < n; i++) {
        if (vr[i] != 0 || o[i] != 1) return ERR;
#ifndef LIE_INTERP
        s->du = v[i];
#endif
    }
    return OK;
}
EXPORT fmi2Status fmi2GetRealOutputDerivatives(fmi2Component c, const fmi2ValueReference vr[], size_t n,
                                               const int o[], double v[]) {
    State *s = c;
    if (s->mode != STEPPING) return ERR;
    for (size_t i = 0; i < n; i++) {
        if (o[i] != 1) return ERR;
        switch (vr[i]) {
        case 1: v[i] = s->u; break;
        case 2: v[i] = 2.0 * s->u; break;
        case 3: v[i] = 1.0; break;
        default: return ERR;
        }
    }
    return OK;
}
NONE(fmi2CancelStep, fmi2Component c)
NONE(fmi2GetStatus, fmi2Component c, int k, int *v)
NONE(fmi2GetRealStatus, fmi2Component c, int k, double *v)
NONE(fmi2GetIntegerStatus, fmi2Component c, int k, int *v)
NONE(fmi2GetBooleanStatus, fmi2Component c, int k, int *v)
NONE(fmi2GetStringStatus, fmi2Component c, int k, const char **v)

EXPORT fmi2Status fmi2GetFMUstate(fmi2Component c, void **state) {
    if (!*state) *state = malloc(sizeof(State));
    if (!*state) return ERR;
    memcpy(*state, c, sizeof(State));
    return OK;
}
EXPORT fmi2Status fmi2SetFMUstate(fmi2Component c, void *state) {
    if (!state) return ERR;
#if defined(LIE_STATE_TIME)
    double t = ((State *)c)->t;
    memcpy(c, state, sizeof(State));
    ((State *)c)->t = t;
#elif !defined(LIE_STATE)
    memcpy(c, state, sizeof(State));
#else
    (void)c;
#endif
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

EXPORT fmi2Status fmi2DoStep(fmi2Component c, double t, double h, int noSet) {
    State *s = c;
    (void)t; (void)noSet;
    if (s->mode != STEPPING || h < 0) return ERR;
#ifdef LIE_STEP
    if (h > 0) h = H_DEFAULT;
#endif
#ifdef LIE_LATCH
    if (h > 0 && s->h0 == 0.0) s->h0 = h;
    if (h > 0) h = s->h0;
#endif
    s->x += h * s->u + 0.5 * h * h * s->du;
    s->u += h * s->du;
    s->t += h;
    return OK;
}
