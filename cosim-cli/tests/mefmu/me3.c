/* Small FMI 3.0 Model Exchange FMUs for the master's tests: the models of me.c (ball, stair) with
 * the FMI 3.0 API (built with the system's `cc`; the modelDescription is written by
 * tests/mefmu/mod.rs). ME only: no fmi3InstantiateCoSimulation, fmi3DoStep or
 * fmi3GetOutputDerivatives. Value reference 0 is the time; r[k] has value reference k + 1.
 *   -DMODEL=1 ball:  r0 h, r1 v (states), r2 der(h), r3 der(v), r4 g, r5 e; indicator h;
 *   -DMODEL=2 stair: r0 x (state), r1 der(x) = k, r2 k (time events every whole second).
 *   -DHOSTILE=1: fmi3GetNumberOfContinuousStates says one state more than the description. */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef void *fmi3Instance;
typedef void *fmi3FMUState;
typedef unsigned int fmi3ValueReference;
typedef enum { fmi3OK, fmi3Warning, fmi3Discard, fmi3Error, fmi3Fatal } fmi3Status;

#if MODEL == 1
#define NR 6
#define NX 2
#define NZ 1
#elif MODEL == 2
#define NR 3
#define NX 1
#define NZ 0
#else
#error "MODEL is 1..2"
#endif
#ifndef HOSTILE
#define HOSTILE 0
#endif

typedef struct {
    double r[NR];
    double time;
} M;

#define EXPORT __attribute__((visibility("default")))

static void start(M *m) {
#if MODEL == 1
    m->r[0] = 1.0; m->r[1] = 0.0; m->r[4] = 9.81; m->r[5] = 0.7;
#else
    m->r[0] = 0.0; m->r[2] = 0.0;
#endif
}

static void derivatives(M *m) {
    double *r = m->r;
#if MODEL == 1
    r[2] = r[1]; r[3] = -r[4];
#else
    r[1] = r[2];
#endif
}

EXPORT const char *fmi3GetVersion(void) { return "3.0"; }
EXPORT fmi3Status fmi3SetDebugLogging(fmi3Instance c, bool on, size_t n, const char *const cat[]) {
    (void)c; (void)on; (void)n; (void)cat; return fmi3OK;
}
EXPORT fmi3Instance fmi3InstantiateModelExchange(const char *name, const char *token, const char *res, bool vis,
                                                 bool log, void *env, void *logger) {
    (void)name; (void)token; (void)res; (void)vis; (void)log; (void)env; (void)logger;
    M *m = calloc(1, sizeof(M));
    if (m) start(m);
    return m;
}
EXPORT void fmi3FreeInstance(fmi3Instance c) { free(c); }
EXPORT fmi3Status fmi3EnterInitializationMode(fmi3Instance c, bool td, double tol, double t0, bool sd, double t1) {
    (void)td; (void)tol; (void)sd; (void)t1; ((M *)c)->time = t0; return fmi3OK;
}
EXPORT fmi3Status fmi3ExitInitializationMode(fmi3Instance c) { (void)c; return fmi3OK; }
EXPORT fmi3Status fmi3EnterEventMode(fmi3Instance c) { (void)c; return fmi3OK; }
EXPORT fmi3Status fmi3Terminate(fmi3Instance c) { (void)c; return fmi3OK; }
EXPORT fmi3Status fmi3Reset(fmi3Instance c) { M *m = c; memset(m, 0, sizeof *m); start(m); return fmi3OK; }

EXPORT fmi3Status fmi3GetFloat64(fmi3Instance c, const fmi3ValueReference vr[], size_t n, double v[], size_t nv) {
    M *m = c;
    if (n != nv) return fmi3Error;
    derivatives(m);
    for (size_t i = 0; i < n; i++) {
        if (vr[i] == 0) v[i] = m->time;
        else if (vr[i] <= NR) v[i] = m->r[vr[i] - 1];
        else return fmi3Error;
    }
    return fmi3OK;
}
EXPORT fmi3Status fmi3SetFloat64(fmi3Instance c, const fmi3ValueReference vr[], size_t n, const double v[], size_t nv) {
    M *m = c;
    if (n != nv) return fmi3Error;
    for (size_t i = 0; i < n; i++) {
        if (vr[i] == 0 || vr[i] > NR) return fmi3Error;
        m->r[vr[i] - 1] = v[i];
    }
    return fmi3OK;
}
/* No variables of the other types. */
#define NONE(name, T)                                                                                        \
    EXPORT fmi3Status name(fmi3Instance c, const fmi3ValueReference vr[], size_t n, T v, size_t nv) {          \
        (void)c; (void)vr; (void)v; (void)nv; return n ? fmi3Error : fmi3OK;                                  \
    }
NONE(fmi3GetFloat32, float *)
NONE(fmi3SetFloat32, const float *)
NONE(fmi3GetInt8, int8_t *)
NONE(fmi3SetInt8, const int8_t *)
NONE(fmi3GetUInt8, uint8_t *)
NONE(fmi3SetUInt8, const uint8_t *)
NONE(fmi3GetInt16, int16_t *)
NONE(fmi3SetInt16, const int16_t *)
NONE(fmi3GetUInt16, uint16_t *)
NONE(fmi3SetUInt16, const uint16_t *)
NONE(fmi3GetInt32, int32_t *)
NONE(fmi3SetInt32, const int32_t *)
NONE(fmi3GetUInt32, uint32_t *)
NONE(fmi3SetUInt32, const uint32_t *)
NONE(fmi3GetInt64, int64_t *)
NONE(fmi3SetInt64, const int64_t *)
NONE(fmi3GetUInt64, uint64_t *)
NONE(fmi3SetUInt64, const uint64_t *)
NONE(fmi3GetBoolean, bool *)
NONE(fmi3SetBoolean, const bool *)
NONE(fmi3GetString, const char **)
NONE(fmi3SetString, const char *const *)

EXPORT fmi3Status fmi3GetFMUState(fmi3Instance c, fmi3FMUState *s) {
    M *copy = *s ? *s : malloc(sizeof(M));
    if (!copy) return fmi3Error;
    memcpy(copy, c, sizeof(M));
    *s = copy;
    return fmi3OK;
}
EXPORT fmi3Status fmi3SetFMUState(fmi3Instance c, fmi3FMUState s) { memcpy(c, s, sizeof(M)); return fmi3OK; }
EXPORT fmi3Status fmi3FreeFMUState(fmi3Instance c, fmi3FMUState *s) { (void)c; free(*s); *s = NULL; return fmi3OK; }
EXPORT fmi3Status fmi3SerializedFMUStateSize(fmi3Instance c, fmi3FMUState s, size_t *n) {
    (void)c; (void)s; (void)n; return fmi3Error;
}
EXPORT fmi3Status fmi3SerializeFMUState(fmi3Instance c, fmi3FMUState s, char b[], size_t n) {
    (void)c; (void)s; (void)b; (void)n; return fmi3Error;
}
EXPORT fmi3Status fmi3DeserializeFMUState(fmi3Instance c, const char b[], size_t n, fmi3FMUState *s) {
    (void)c; (void)b; (void)n; (void)s; return fmi3Error;
}

/* Model Exchange */
EXPORT fmi3Status fmi3UpdateDiscreteStates(fmi3Instance c, bool *needUpdate, bool *terminate, bool *nominalsChanged,
                                           bool *valuesChanged, bool *nextDefined, double *next) {
    M *m = c;
    *needUpdate = false; *terminate = false; *nominalsChanged = false; *valuesChanged = false;
    *nextDefined = false; *next = 0.0;
#if MODEL == 1
    if (m->r[0] <= 0 && m->r[1] < 0) { m->r[0] = 0; m->r[1] = -m->r[5] * m->r[1]; *valuesChanged = true; }
#else
    double k = floor(m->time + 1e-9);
    if (k > m->r[2]) m->r[2] = k;
    *nextDefined = true;
    *next = m->r[2] + 1.0;
#endif
    return fmi3OK;
}
EXPORT fmi3Status fmi3EnterContinuousTimeMode(fmi3Instance c) { (void)c; return fmi3OK; }
EXPORT fmi3Status fmi3CompletedIntegratorStep(fmi3Instance c, bool noPrior, bool *enterEventMode, bool *terminate) {
    (void)c; (void)noPrior; *enterEventMode = false; *terminate = false; return fmi3OK;
}
EXPORT fmi3Status fmi3SetTime(fmi3Instance c, double t) { ((M *)c)->time = t; return fmi3OK; }
EXPORT fmi3Status fmi3SetContinuousStates(fmi3Instance c, const double x[], size_t n) {
    if (n != NX) return fmi3Error;
    memcpy(((M *)c)->r, x, n * sizeof(double));
    return fmi3OK;
}
EXPORT fmi3Status fmi3GetContinuousStateDerivatives(fmi3Instance c, double dx[], size_t n) {
    M *m = c;
    if (n != NX) return fmi3Error;
    derivatives(m);
    memcpy(dx, m->r + NX, n * sizeof(double));
    return fmi3OK;
}
EXPORT fmi3Status fmi3GetEventIndicators(fmi3Instance c, double z[], size_t n) {
    M *m = c;
    if (n != NZ) return fmi3Error;
#if MODEL == 1
    z[0] = m->r[0];
#else
    (void)m; (void)z;
#endif
    return fmi3OK;
}
EXPORT fmi3Status fmi3GetContinuousStates(fmi3Instance c, double x[], size_t n) {
    if (n != NX) return fmi3Error;
    memcpy(x, ((M *)c)->r, n * sizeof(double));
    return fmi3OK;
}
EXPORT fmi3Status fmi3GetNominalsOfContinuousStates(fmi3Instance c, double x[], size_t n) {
    (void)c;
    for (size_t i = 0; i < n; i++) x[i] = 1.0;
    return fmi3OK;
}
EXPORT fmi3Status fmi3GetNumberOfEventIndicators(fmi3Instance c, size_t *n) { (void)c; *n = NZ; return fmi3OK; }
EXPORT fmi3Status fmi3GetNumberOfContinuousStates(fmi3Instance c, size_t *n) {
    (void)c;
    *n = NX + (HOSTILE == 1 ? 1 : 0);
    return fmi3OK;
}

/* The rest of the FMI 3.0 API, unsupported (fmi3Error; instantiation NULL): FMPy resolves every
 * function of the API when it loads a binary. -DME_ONLY leaves out those of Co-Simulation and
 * Scheduled Execution, as an ME-only binary may (cosim stubs them). */
#define UNSUPPORTED(name) EXPORT fmi3Status name(void) { return fmi3Error; }
UNSUPPORTED(fmi3EnterConfigurationMode)
UNSUPPORTED(fmi3ExitConfigurationMode)
UNSUPPORTED(fmi3EvaluateDiscreteStates)
UNSUPPORTED(fmi3GetAdjointDerivative)
#ifdef DIRECTIONAL
/* -DDIRECTIONAL=k (ball): the partial derivatives of the unknowns by the knowns, times k for
 * d der(h)/dv (1 honest, 2 a liar): der(h) = v, der(v) = -g, the outputs h and v are states. */
EXPORT fmi3Status fmi3GetDirectionalDerivative(fmi3Instance c, const fmi3ValueReference unknowns[], size_t nu,
                                               const fmi3ValueReference knowns[], size_t nk, const double seed[],
                                               size_t ns, double sensitivity[], size_t nsens) {
    (void)c;
    if (nk != ns || nu != nsens) return fmi3Error;
    for (size_t i = 0; i < nu; i++) {
        double s = 0.0;
        for (size_t j = 0; j < nk; j++) {
            if (unknowns[i] == knowns[j]) s += seed[j];
            else if (unknowns[i] == 3 && knowns[j] == 2) s += DIRECTIONAL * seed[j];
        }
        sensitivity[i] = s;
    }
    return fmi3OK;
}
#else
UNSUPPORTED(fmi3GetDirectionalDerivative)
#endif
UNSUPPORTED(fmi3GetBinary)
UNSUPPORTED(fmi3SetBinary)
UNSUPPORTED(fmi3GetClock)
UNSUPPORTED(fmi3SetClock)
UNSUPPORTED(fmi3GetIntervalDecimal)
UNSUPPORTED(fmi3GetIntervalFraction)
UNSUPPORTED(fmi3SetIntervalDecimal)
UNSUPPORTED(fmi3SetIntervalFraction)
UNSUPPORTED(fmi3GetShiftDecimal)
UNSUPPORTED(fmi3GetShiftFraction)
UNSUPPORTED(fmi3SetShiftDecimal)
UNSUPPORTED(fmi3SetShiftFraction)
UNSUPPORTED(fmi3GetNumberOfVariableDependencies)
UNSUPPORTED(fmi3GetVariableDependencies)
#ifndef ME_ONLY
UNSUPPORTED(fmi3DoStep)
UNSUPPORTED(fmi3EnterStepMode)
UNSUPPORTED(fmi3GetOutputDerivatives)
UNSUPPORTED(fmi3ActivateModelPartition)
EXPORT void *fmi3InstantiateCoSimulation(void) { return NULL; }
EXPORT void *fmi3InstantiateScheduledExecution(void) { return NULL; }
#endif
