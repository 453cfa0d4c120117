/* A minimal FMI 2.0 co-simulation FMU for the master's tests (built with the system's `cc`).
 * Real variables by value reference: 0 = u (input), 1 = x (output, x' = u, explicit Euler over
 * each fmi2DoStep), 2 = n (output, number of fmi2DoStep calls), 3 = t (output, the FMU's time),
 * 4 .. NREAL-1 = outputs holding their value reference (with -DPASS, y4 = u: a direct
 * feedthrough). -DSTATES: FMU states (get, set, free). The modelDescription is written by the
 * test (tests/cfmu/mod.rs); this file only has to agree on the value references. */
#include <stdlib.h>
#include <string.h>

#ifndef NREAL
#define NREAL 4
#endif

typedef void *fmi2Component;
typedef void *fmi2ComponentEnvironment;
typedef void *fmi2FMUstate;
typedef unsigned int fmi2ValueReference;
typedef double fmi2Real;
typedef int fmi2Integer;
typedef int fmi2Boolean;
typedef char fmi2Char;
typedef const fmi2Char *fmi2String;
typedef char fmi2Byte;
typedef enum { fmi2OK, fmi2Warning, fmi2Discard, fmi2Error, fmi2Fatal, fmi2Pending } fmi2Status;
typedef int fmi2Type;
typedef int fmi2StatusKind;
typedef struct {
    void *logger, *allocateMemory, *freeMemory, *stepFinished;
    fmi2ComponentEnvironment componentEnvironment;
} fmi2CallbackFunctions;

typedef struct {
    double r[NREAL];
} State;

#define EXPORT __attribute__((visibility("default")))

EXPORT const char *fmi2GetTypesPlatform(void) { return "default"; }
EXPORT const char *fmi2GetVersion(void) { return "2.0"; }
EXPORT fmi2Status fmi2SetDebugLogging(fmi2Component c, fmi2Boolean on, size_t n, const fmi2String cat[]) {
    (void)c; (void)on; (void)n; (void)cat; return fmi2OK;
}
EXPORT fmi2Component fmi2Instantiate(fmi2String name, fmi2Type type, fmi2String guid, fmi2String res,
                                     const fmi2CallbackFunctions *f, fmi2Boolean vis, fmi2Boolean log) {
    (void)name; (void)type; (void)guid; (void)res; (void)f; (void)vis; (void)log;
    State *s = calloc(1, sizeof(State));
    if (!s) return NULL;
    for (int i = 4; i < NREAL; i++) s->r[i] = i;
    return s;
}
EXPORT void fmi2FreeInstance(fmi2Component c) { free(c); }
EXPORT fmi2Status fmi2SetupExperiment(fmi2Component c, fmi2Boolean td, fmi2Real tol, fmi2Real t0,
                                      fmi2Boolean sd, fmi2Real t1) {
    (void)td; (void)tol; (void)sd; (void)t1;
    if (NREAL > 3) ((State *)c)->r[3] = t0;
    return fmi2OK;
}
EXPORT fmi2Status fmi2EnterInitializationMode(fmi2Component c) { (void)c; return fmi2OK; }
EXPORT fmi2Status fmi2ExitInitializationMode(fmi2Component c) { (void)c; return fmi2OK; }
EXPORT fmi2Status fmi2Terminate(fmi2Component c) { (void)c; return fmi2OK; }
EXPORT fmi2Status fmi2Reset(fmi2Component c) { (void)c; return fmi2OK; }
EXPORT fmi2Status fmi2GetReal(fmi2Component c, const fmi2ValueReference vr[], size_t n, fmi2Real v[]) {
    State *s = c;
    for (size_t i = 0; i < n; i++) {
        if (vr[i] >= NREAL) return fmi2Error;
        v[i] = s->r[vr[i]];
#ifdef PASS
        /* -DPASS: y4 is a direct feedthrough of u (y4 = u at every instant). */
        if (vr[i] == 4) v[i] = s->r[0];
#endif
    }
    return fmi2OK;
}
EXPORT fmi2Status fmi2SetReal(fmi2Component c, const fmi2ValueReference vr[], size_t n, const fmi2Real v[]) {
    State *s = c;
    for (size_t i = 0; i < n; i++) {
        if (vr[i] >= NREAL) return fmi2Error;
        s->r[vr[i]] = v[i];
    }
    return fmi2OK;
}
#define NONE(name, ...) EXPORT fmi2Status name(__VA_ARGS__) { return fmi2Error; }
NONE(fmi2GetInteger, fmi2Component c, const fmi2ValueReference vr[], size_t n, fmi2Integer v[])
NONE(fmi2GetBoolean, fmi2Component c, const fmi2ValueReference vr[], size_t n, fmi2Boolean v[])
NONE(fmi2GetString, fmi2Component c, const fmi2ValueReference vr[], size_t n, fmi2String v[])
NONE(fmi2SetInteger, fmi2Component c, const fmi2ValueReference vr[], size_t n, const fmi2Integer v[])
NONE(fmi2SetBoolean, fmi2Component c, const fmi2ValueReference vr[], size_t n, const fmi2Boolean v[])
NONE(fmi2SetString, fmi2Component c, const fmi2ValueReference vr[], size_t n, const fmi2String v[])
#ifdef STATES
/* -DSTATES: FMU states are copies of the variables (canGetAndSetFMUstate). */
EXPORT fmi2Status fmi2GetFMUstate(fmi2Component c, fmi2FMUstate *s) {
    State *copy = *s ? *s : malloc(sizeof(State));
    if (!copy) return fmi2Error;
    memcpy(copy, c, sizeof(State));
    *s = copy;
    return fmi2OK;
}
EXPORT fmi2Status fmi2SetFMUstate(fmi2Component c, fmi2FMUstate s) {
    if (!s) return fmi2Error;
    memcpy(c, s, sizeof(State));
    return fmi2OK;
}
EXPORT fmi2Status fmi2FreeFMUstate(fmi2Component c, fmi2FMUstate *s) {
    (void)c;
    free(*s);
    *s = NULL;
    return fmi2OK;
}
#else
NONE(fmi2GetFMUstate, fmi2Component c, fmi2FMUstate *s)
NONE(fmi2SetFMUstate, fmi2Component c, fmi2FMUstate s)
NONE(fmi2FreeFMUstate, fmi2Component c, fmi2FMUstate *s)
#endif
NONE(fmi2SerializedFMUstateSize, fmi2Component c, fmi2FMUstate s, size_t *n)
NONE(fmi2SerializeFMUstate, fmi2Component c, fmi2FMUstate s, fmi2Byte b[], size_t n)
NONE(fmi2DeSerializeFMUstate, fmi2Component c, const fmi2Byte b[], size_t n, fmi2FMUstate *s)
NONE(fmi2GetDirectionalDerivative, fmi2Component c, const fmi2ValueReference u[], size_t nu,
     const fmi2ValueReference z[], size_t nz, const fmi2Real dv[], fmi2Real dz[])
NONE(fmi2GetRealOutputDerivatives, fmi2Component c, const fmi2ValueReference vr[], size_t n,
     const fmi2Integer o[], fmi2Real v[])
NONE(fmi2CancelStep, fmi2Component c)
NONE(fmi2GetStatus, fmi2Component c, const fmi2StatusKind k, fmi2Status *v)
NONE(fmi2GetRealStatus, fmi2Component c, const fmi2StatusKind k, fmi2Real *v)
NONE(fmi2GetIntegerStatus, fmi2Component c, const fmi2StatusKind k, fmi2Integer *v)
NONE(fmi2GetBooleanStatus, fmi2Component c, const fmi2StatusKind k, fmi2Boolean *v)
NONE(fmi2GetStringStatus, fmi2Component c, const fmi2StatusKind k, fmi2String *v)

/* Input derivatives are accepted (canInterpolateInputs) and ignored: u is held over the step. */
EXPORT fmi2Status fmi2SetRealInputDerivatives(fmi2Component c, const fmi2ValueReference vr[], size_t n,
                                              const fmi2Integer o[], const fmi2Real v[]) {
    (void)c; (void)vr; (void)n; (void)o; (void)v; return fmi2OK;
}
#ifndef OMIT_DOSTEP
EXPORT fmi2Status fmi2DoStep(fmi2Component c, fmi2Real t, fmi2Real h, fmi2Boolean noSet) {
    State *s = c;
    (void)noSet;
    if (NREAL > 3) {
        s->r[1] += h * s->r[0];
        s->r[2] += 1.0;
        s->r[3] = t + h;
    }
    return fmi2OK;
}
#endif
