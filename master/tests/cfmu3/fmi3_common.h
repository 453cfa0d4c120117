/* What the small FMI 3.0 test FMUs written in C share (cfmu3.c, events3.c, se3.c, clocks3.c here,
 * cosim-cli/tests/mefmu/me3.c): the types they use (as in fmi3PlatformTypes.h and
 * fmi3FunctionTypes.h), the version function, fmi3SetDebugLogging (ignored), fmi3FreeInstance, the
 * logging of refusals, and the lists of entry points that the FMUs stub or implement alike, as
 * macros, so that each FMU names the ones it takes and holds only what its test is about.
 * Included by a path relative to the FMU's source (the tests compile that one file, without -I).
 * The FMUs with a logger keep it in an instance type `Inst` with the fields `State s` (what an FMU
 * state copies), `void *env` and `Log log`. */
#ifndef FMI3_COMMON_H
#define FMI3_COMMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define EXPORT __attribute__((visibility("default")))
typedef enum { OK, WARNING, DISCARD, ERROR, FATAL } S; /* fmi3Status */
typedef void (*Log)(void *env, S status, const char *category, const char *message);
typedef void *fmi3Instance;
typedef void *fmi3FMUState;
typedef unsigned int fmi3ValueReference;
typedef const char *fmi3String;

EXPORT const char *fmi3GetVersion(void) { return "3.0"; }
EXPORT S fmi3SetDebugLogging(void *c, bool on, size_t n, const char *const cats[]) {
    (void)c; (void)on; (void)n; (void)cats; return OK;
}
EXPORT void fmi3FreeInstance(void *c) { free(c); }

/* Logs the message m with the status st through the logger of the instance c (an Inst *). */
#define say(c, st, m) ((c)->log ? (c)->log((c)->env, (st), "logStatusError", (m)) : (void)0)
/* In an entry point with the instance `c`: refuses (logged, ERROR) unless cond. */
#define CHECK(cond) if (!(cond)) { say(c, ERROR, "wrong value reference or type"); return ERROR; }

/* An entry point that does nothing: OK. */
#define FMI3_NOTHING(name) EXPORT S fmi3##name(void *c) { (void)c; return OK; }
/* An entry point the FMU does not support: ERROR, whatever it is given. */
#define STUB(name) EXPORT S fmi3##name(void) { return ERROR; }

/* fmi3EnterInitializationMode, which sets the field TIME of the instance, of type T, to the start time. */
#define FMI3_ENTER_INITIALIZATION(T, TIME)                                                                      \
    EXPORT S fmi3EnterInitializationMode(void *p, bool td, double tol, double start, bool sd, double stop) {    \
        (void)td; (void)tol; (void)sd; (void)stop; ((T *)p)->TIME = start; return OK;                           \
    }

/* fmi3Get<NAME> and fmi3Set<NAME> for a type T the FMU has no variables of: OK for an empty list,
 * else ERROR after REFUSE (a statement, in which `p` is the instance). */
#define FMI3_NO_VARIABLES(T, NAME, REFUSE)                                                                      \
    EXPORT S fmi3Get##NAME(void *p, const fmi3ValueReference vr[], size_t n, T v[], size_t nv) {                \
        (void)p; (void)vr; (void)v; (void)nv;                                                                   \
        if (n) { REFUSE; return ERROR; }                                                                        \
        return OK;                                                                                              \
    }                                                                                                           \
    EXPORT S fmi3Set##NAME(void *p, const fmi3ValueReference vr[], size_t n, const T v[], size_t nv) {          \
        (void)p; (void)vr; (void)v; (void)nv;                                                                   \
        if (n) { REFUSE; return ERROR; }                                                                        \
        return OK;                                                                                              \
    }
/* The same for an FMU whose Inst has a logger: the refusal is logged. */
#define NONE(T, NAME) FMI3_NO_VARIABLES(T, NAME, say((Inst *)p, ERROR, "wrong value reference or type"))

/* X(C type, name) for each FMI 3.0 variable type but Float64, Int64 and Binary. */
#define FMI3_TYPES_BUT_FLOAT64_INT64_BINARY(X)                                                                  \
    X(float, Float32) X(int8_t, Int8) X(uint8_t, UInt8) X(int16_t, Int16) X(uint16_t, UInt16) X(int32_t, Int32) \
    X(uint32_t, UInt32) X(uint64_t, UInt64) X(bool, Boolean) X(fmi3String, String)

/* The getters and setters but fmi3GetFloat64, fmi3SetFloat64, fmi3GetInt64 (written by the FMU) and
 * the Binary ones, of an FMU with an Inst whose variables are Float64 and Int64 outputs. */
#define FMI3_FLOAT64_AND_INT64_OUTPUTS_ONLY                                                                     \
    FMI3_TYPES_BUT_FLOAT64_INT64_BINARY(NONE)                                                                   \
    EXPORT S fmi3SetInt64(void *p, const fmi3ValueReference vr[], size_t n, const int64_t v[], size_t nv) {    \
        Inst *c = p; CHECK(n == 0); return OK;                                                                  \
    }

/* The FMU states of an Inst: copies of its State s, serialized as their bytes. */
#define FMI3_STATE_COPIES                                                                                       \
    EXPORT S fmi3GetFMUState(void *p, void **state) {                                                           \
        Inst *c = p;                                                                                            \
        if (!*state) *state = malloc(sizeof(State));                                                            \
        memcpy(*state, &c->s, sizeof(State));                                                                   \
        return OK;                                                                                              \
    }                                                                                                           \
    EXPORT S fmi3SetFMUState(void *p, void *state) { memcpy(&((Inst *)p)->s, state, sizeof(State)); return OK; } \
    EXPORT S fmi3FreeFMUState(void *p, void **state) { (void)p; free(*state); *state = NULL; return OK; }       \
    EXPORT S fmi3SerializedFMUStateSize(void *p, void *state, size_t *size) {                                   \
        (void)p; (void)state; *size = sizeof(State); return OK;                                                 \
    }                                                                                                           \
    EXPORT S fmi3SerializeFMUState(void *p, void *state, uint8_t b[], size_t size) {                            \
        (void)p; (void)size; memcpy(b, state, sizeof(State)); return OK;                                        \
    }                                                                                                           \
    EXPORT S fmi3DeserializeFMUState(void *p, const uint8_t b[], size_t size, void **state) {                   \
        (void)p;                                                                                                \
        if (size != sizeof(State)) return ERROR;                                                                \
        if (!*state) *state = malloc(sizeof(State));                                                            \
        memcpy(*state, b, size);                                                                                \
        return OK;                                                                                              \
    }

/* Groups of unsupported entry points (the FMUs export every function of the API, since FMPy and
 * other loaders resolve them all when they load a binary). */
#define FMI3_STUB_STATE                                                                                         \
    STUB(GetFMUState) STUB(SetFMUState) STUB(FreeFMUState) STUB(SerializedFMUStateSize)                         \
    STUB(SerializeFMUState) STUB(DeserializeFMUState)
#define FMI3_STUB_MODEL_EXCHANGE                                                                                \
    STUB(CompletedIntegratorStep) STUB(EnterContinuousTimeMode) STUB(GetContinuousStateDerivatives)             \
    STUB(GetContinuousStates) STUB(GetEventIndicators) STUB(GetNominalsOfContinuousStates)                      \
    STUB(GetNumberOfContinuousStates) STUB(GetNumberOfEventIndicators) STUB(SetContinuousStates) STUB(SetTime)
#define FMI3_STUB_CONFIGURATION STUB(EnterConfigurationMode) STUB(ExitConfigurationMode)
/* fmi3EvaluateDiscreteStates, fmi3GetAdjointDerivative, the dependencies (not fmi3GetDirectionalDerivative). */
#define FMI3_STUB_EVALUATION                                                                                    \
    STUB(EvaluateDiscreteStates) STUB(GetAdjointDerivative) STUB(GetNumberOfVariableDependencies)               \
    STUB(GetVariableDependencies)
#define FMI3_STUB_BINARY STUB(GetBinary) STUB(SetBinary)
#define FMI3_STUB_CLOCKS                                                                                        \
    STUB(GetClock) STUB(SetClock) STUB(GetIntervalDecimal) STUB(GetIntervalFraction) STUB(SetIntervalDecimal)   \
    STUB(SetIntervalFraction) STUB(GetShiftDecimal) STUB(GetShiftFraction) STUB(SetShiftDecimal)                \
    STUB(SetShiftFraction)

#endif
