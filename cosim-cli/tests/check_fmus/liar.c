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
#include "../cinclude/fmi2_common.h"

#define GUID "{liar}"
#define H_DEFAULT 0.1

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
    return ((State *)c)->mode == INSTANTIATED ? fmi2OK : fmi2Error;
}
FMI2_MODES(State, STEPPING)
EXPORT fmi2Status fmi2Reset(fmi2Component c) {
    State *s = c;
    s->u = 1.0; s->x = 0.0; s->du = 0.0; s->t = 0.0; s->mode = INSTANTIATED; s->h0 = 0.0;
    return fmi2OK;
}
EXPORT fmi2Status fmi2GetReal(fmi2Component c, const fmi2ValueReference vr[], size_t n, double v[]) {
    State *s = c;
    if (s->mode == INSTANTIATED) return fmi2Error;
    for (size_t i = 0; i < n; i++) {
        switch (vr[i]) {
        case 0: v[i] = s->u; break;
        case 1: v[i] = s->x; break;
        case 2: v[i] = y_of(s); break;
        case 3: v[i] = s->t; break;
        default: return fmi2Error;
        }
    }
    return fmi2OK;
}
EXPORT fmi2Status fmi2SetReal(fmi2Component c, const fmi2ValueReference vr[], size_t n, const double v[]) {
    State *s = c;
    if (s->mode == TERMINATED) return fmi2Error;
    for (size_t i = 0; i < n; i++) {
        if (vr[i] != 0) return fmi2Error; /* only the input can be set */
        s->u = v[i];
        s->du = 0.0;
    }
    return fmi2OK;
}
FMI2_NO_OTHER_TYPES(0)
FMI2_NO_DIRECTIONAL_DERIVATIVE
EXPORT fmi2Status fmi2SetRealInputDerivatives(fmi2Component c, const fmi2ValueReference vr[], size_t n,
                                              const int o[], const double v[]) {
    State *s = c;
    if (s->mode == TERMINATED) return fmi2Error;
    for (size_t i = 0; i < n; i++) {
        if (vr[i] != 0 || o[i] != 1) return fmi2Error;
#ifndef LIE_INTERP
        s->du = v[i];
#endif
    }
    return fmi2OK;
}
EXPORT fmi2Status fmi2GetRealOutputDerivatives(fmi2Component c, const fmi2ValueReference vr[], size_t n,
                                               const int o[], double v[]) {
    State *s = c;
    if (s->mode != STEPPING) return fmi2Error;
    for (size_t i = 0; i < n; i++) {
        if (o[i] != 1) return fmi2Error;
        switch (vr[i]) {
        case 1: v[i] = s->u; break;
        case 2: v[i] = 2.0 * s->u; break;
        case 3: v[i] = 1.0; break;
        default: return fmi2Error;
        }
    }
    return fmi2OK;
}
FMI2_CS_NO_STATUS

FMI2_STATE_COPIES(State)
EXPORT fmi2Status fmi2SetFMUstate(fmi2Component c, void *state) {
    if (!state) return fmi2Error;
#if defined(LIE_STATE_TIME)
    double t = ((State *)c)->t;
    memcpy(c, state, sizeof(State));
    ((State *)c)->t = t;
#elif !defined(LIE_STATE)
    memcpy(c, state, sizeof(State));
#else
    (void)c;
#endif
    return fmi2OK;
}
FMI2_STATE_SERIALIZED(State)

EXPORT fmi2Status fmi2DoStep(fmi2Component c, double t, double h, int noSet) {
    State *s = c;
    (void)t; (void)noSet;
    if (s->mode != STEPPING || h < 0) return fmi2Error;
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
    return fmi2OK;
}
