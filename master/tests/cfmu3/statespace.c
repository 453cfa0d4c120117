/* A state-space FMI 3.0 Co-Simulation FMU whose size follows a structural parameter, for the
 * master's tests (cosim-cli/tests/fmi3_structural.rs), built at test time with the system's cc.
 *
 * x' = A x + B u, y = C x with A = diag(-k_i), k_i = i, B = 1, C = 1 (i = 1…n): each step is the
 * exact solution over h, x_i(t + h) = u/k_i + (x_i(t) - u/k_i) e^{-k_i h}, so that x_i(t) =
 * u/k_i + (x0 - u/k_i) e^{-k_i t} for a constant u.
 *
 * Value references: 0 time, 1 n (UInt64 structural parameter: set in configuration mode only,
 * start 3, 1…5), 2 u (Float64 input, start 1), 3 x0 (Float64 parameter, start 1), 4 x (Float64[n]
 * output), 5 A (Float64[n, n] output, row-major), 6 y (Float64 output: the sum of x).
 * The state is allocated when configuration mode ends (n known); every getter checks that the
 * caller's count matches n. -DTRACE: each doStep's t and h on stderr (hexadecimal). */
#include <math.h>
#include <stdio.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define EXPORT __attribute__((visibility("default")))
typedef int S;
enum { OK, WARNING, DISCARD, ERROR, FATAL };
typedef void (*Log)(void *env, S status, const char *category, const char *message);
enum Mode { INSTANTIATED, CONFIGURATION, INITIALIZATION, STEP };

typedef struct {
    enum Mode mode;
    uint64_t n;
    double time, u, x0, *x;
    void *env;
    Log log;
} Inst;

static S fail(Inst *c, const char *m) { if (c->log) c->log(c->env, ERROR, "logStatusError", m); return ERROR; }
static S alloc(Inst *c) {
    free(c->x);
    c->x = calloc(c->n, sizeof(double));
    return c->x ? OK : fail(c, "out of memory");
}

EXPORT const char *fmi3GetVersion(void) { return "3.0"; }
EXPORT S fmi3SetDebugLogging(void *c, bool on, size_t n, const char *const cats[]) { return OK; }
EXPORT void *fmi3InstantiateCoSimulation(const char *name, const char *token, const char *res, bool visible,
    bool logging, bool event_mode_used, bool early_return_allowed, const unsigned *req, size_t nreq, void *env,
    Log log, void *update) {
    if (strcmp(token, "{statespace}") != 0 || event_mode_used) return NULL;
    Inst *c = calloc(1, sizeof(Inst));
    c->env = env; c->log = log; c->n = 3; c->u = 1; c->x0 = 1;
    if (alloc(c) != OK) { free(c); return NULL; }
    return c;
}
EXPORT void fmi3FreeInstance(void *p) { Inst *c = p; if (c) { free(c->x); free(c); } }
EXPORT S fmi3EnterConfigurationMode(void *p) {
    Inst *c = p;
    if (c->mode != INSTANTIATED) return fail(c, "fmi3EnterConfigurationMode: not in Instantiated");
    c->mode = CONFIGURATION; return OK;
}
EXPORT S fmi3ExitConfigurationMode(void *p) {
    Inst *c = p;
    if (c->mode != CONFIGURATION) return fail(c, "fmi3ExitConfigurationMode: not in ConfigurationMode");
    c->mode = INSTANTIATED; return alloc(c);
}
EXPORT S fmi3EnterInitializationMode(void *p, bool td, double tol, double start, bool sd, double stop) {
    Inst *c = p;
    if (c->mode != INSTANTIATED) return fail(c, "fmi3EnterInitializationMode: not in Instantiated");
    c->mode = INITIALIZATION; c->time = start; return OK;
}
EXPORT S fmi3ExitInitializationMode(void *p) {
    Inst *c = p;
    for (uint64_t i = 0; i < c->n; i++) c->x[i] = c->x0;
    c->mode = STEP; return OK;
}
EXPORT S fmi3Terminate(void *c) { return OK; }
EXPORT S fmi3Reset(void *p) { Inst *c = p; c->mode = INSTANTIATED; c->n = 3; c->u = 1; c->x0 = 1; c->time = 0; return alloc(c); }

EXPORT S fmi3GetFloat64(void *p, const unsigned vr[], size_t nvr, double v[], size_t nv) {
    Inst *c = p; size_t k = 0; uint64_t n = c->n;
    for (size_t i = 0; i < nvr; i++) {
        switch (vr[i]) {
        case 0: if (k + 1 > nv) return fail(c, "too few values"); v[k++] = c->time; break;
        case 2: if (k + 1 > nv) return fail(c, "too few values"); v[k++] = c->u; break;
        case 3: if (k + 1 > nv) return fail(c, "too few values"); v[k++] = c->x0; break;
        case 4:
            if (k + n > nv) return fail(c, "fmi3GetFloat64: fewer values than n for x");
            for (uint64_t j = 0; j < n; j++) v[k++] = c->mode == STEP ? c->x[j] : c->x0;
            break;
        case 5:
            if (k + n * n > nv) return fail(c, "fmi3GetFloat64: fewer values than n*n for A");
            for (uint64_t r = 0; r < n; r++)
                for (uint64_t s = 0; s < n; s++) v[k++] = r == s ? -(double)(r + 1) : 0.0;
            break;
        case 6: {
            if (k + 1 > nv) return fail(c, "too few values");
            double y = 0;
            for (uint64_t j = 0; j < n; j++) y += c->mode == STEP ? c->x[j] : c->x0;
            v[k++] = y;
            break;
        }
        default: return fail(c, "fmi3GetFloat64: unknown value reference");
        }
    }
    return k == nv ? OK : fail(c, "fmi3GetFloat64: the number of values does not match");
}
EXPORT S fmi3SetFloat64(void *p, const unsigned vr[], size_t nvr, const double v[], size_t nv) {
    Inst *c = p;
    if (nvr != nv) return fail(c, "fmi3SetFloat64: scalars only");
    for (size_t i = 0; i < nvr; i++) {
        if (vr[i] == 2) c->u = v[i];
        else if (vr[i] == 3 && c->mode != STEP) c->x0 = v[i];
        else return fail(c, "fmi3SetFloat64: not settable");
    }
    return OK;
}
EXPORT S fmi3GetUInt64(void *p, const unsigned vr[], size_t nvr, uint64_t v[], size_t nv) {
    Inst *c = p;
    for (size_t i = 0; i < nvr; i++) { if (vr[i] != 1 || nvr != nv) return fail(c, "fmi3GetUInt64: only n"); v[i] = c->n; }
    return OK;
}
EXPORT S fmi3SetUInt64(void *p, const unsigned vr[], size_t nvr, const uint64_t v[], size_t nv) {
    Inst *c = p;
    for (size_t i = 0; i < nvr; i++) {
        if (vr[i] != 1 || nvr != nv) return fail(c, "fmi3SetUInt64: only n");
        if (c->mode != CONFIGURATION) return fail(c, "fmi3SetUInt64: n is set in configuration mode only");
        if (v[i] < 1 || v[i] > 5) return fail(c, "fmi3SetUInt64: n outside 1..5");
        c->n = v[i];
    }
    return OK;
}
#define NONE(T, name) \
    EXPORT S fmi3Get##name(void *p, const unsigned vr[], size_t n, T v[], size_t nv) { return n == 0 ? OK : fail(p, "no such variable"); } \
    EXPORT S fmi3Set##name(void *p, const unsigned vr[], size_t n, const T v[], size_t nv) { return n == 0 ? OK : fail(p, "no such variable"); }
NONE(float, Float32)
NONE(int8_t, Int8)
NONE(uint8_t, UInt8)
NONE(int16_t, Int16)
NONE(uint16_t, UInt16)
NONE(int32_t, Int32)
NONE(uint32_t, UInt32)
NONE(int64_t, Int64)
NONE(bool, Boolean)
NONE(const char *, String)

EXPORT S fmi3DoStep(void *p, double t, double h, bool nsp, bool *event, bool *terminate, bool *early, double *last) {
    Inst *c = p;
    *event = false; *terminate = false; *early = false;
    if (c->mode != STEP) return fail(c, "fmi3DoStep: not in step mode");
    for (uint64_t i = 0; i < c->n; i++) {
        double k = (double)(i + 1), eq = c->u / k;
        c->x[i] = eq + (c->x[i] - eq) * exp(-k * h);
    }
    c->time = t + h;
    *last = c->time;
#ifdef TRACE
    fprintf(stderr, "doStep %a %a\n", t, h);
#endif
    return OK;
}

/* Not used by these tests: refused. */
EXPORT S fmi3GetFMUState(void *p, void **s) { return fail(p, "no FMU state"); }
EXPORT S fmi3SetFMUState(void *p, void *s) { return fail(p, "no FMU state"); }
EXPORT S fmi3FreeFMUState(void *p, void **s) { return OK; }
EXPORT S fmi3SerializedFMUStateSize(void *p, void *s, size_t *size) { return fail(p, "no FMU state"); }
EXPORT S fmi3SerializeFMUState(void *p, void *s, uint8_t b[], size_t size) { return fail(p, "no FMU state"); }
EXPORT S fmi3DeserializeFMUState(void *p, const uint8_t b[], size_t size, void **s) { return fail(p, "no FMU state"); }
EXPORT S fmi3GetOutputDerivatives(void *p, const unsigned vr[], size_t n, const int32_t o[], double v[], size_t nv) { return ERROR; }
EXPORT S fmi3GetBinary(void *p, const unsigned vr[], size_t n, size_t sz[], const uint8_t *v[], size_t nv) { return n == 0 ? OK : ERROR; }
EXPORT S fmi3SetBinary(void *p, const unsigned vr[], size_t n, const size_t sz[], const uint8_t *const v[], size_t nv) { return n == 0 ? OK : ERROR; }

/* The rest of the FMI 3.0 API, exported because FMPy loads every fmi3 function. */
EXPORT void *fmi3InstantiateModelExchange(void) { return NULL; }
EXPORT void *fmi3InstantiateScheduledExecution(void) { return NULL; }
#define STUB(name) EXPORT S fmi3##name(void) { return ERROR; }
STUB(ActivateModelPartition) STUB(CompletedIntegratorStep) STUB(EnterContinuousTimeMode)
STUB(EnterEventMode) STUB(EnterStepMode) STUB(EvaluateDiscreteStates)
STUB(GetAdjointDerivative) STUB(GetClock) STUB(GetContinuousStateDerivatives) STUB(GetContinuousStates)
STUB(GetDirectionalDerivative) STUB(GetEventIndicators) STUB(GetIntervalDecimal) STUB(GetIntervalFraction)
STUB(GetNominalsOfContinuousStates) STUB(GetNumberOfContinuousStates) STUB(GetNumberOfEventIndicators) STUB(GetNumberOfVariableDependencies)
STUB(GetShiftDecimal) STUB(GetShiftFraction) STUB(GetVariableDependencies) STUB(SetClock)
STUB(SetContinuousStates) STUB(SetIntervalDecimal) STUB(SetIntervalFraction) STUB(SetShiftDecimal)
STUB(SetShiftFraction) STUB(SetTime) STUB(UpdateDiscreteStates)
