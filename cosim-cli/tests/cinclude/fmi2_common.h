/* What the small FMI 2.0 test FMUs written in C share (mefmu/me.c and lag.c through
 * fmi2_real_array.h, check_fmus/liar.c, meliar.c, bouncing.c): the types of fmi2TypesPlatform.h and
 * fmi2FunctionTypes.h they use, the version functions, fmi2SetDebugLogging (ignored), and the
 * lists of entry points that the FMUs stub or implement alike, as macros, so that each FMU names
 * the ones it takes and holds only what its test is about. Included by a path relative to the FMU's
 * source (the tests compile that one file, without -I). */
#ifndef FMI2_COMMON_H
#define FMI2_COMMON_H

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

typedef void *fmi2Component;
typedef void *fmi2FMUstate;
typedef unsigned int fmi2ValueReference;
typedef double fmi2Real;
typedef int fmi2Integer;
typedef int fmi2Boolean;
typedef const char *fmi2String;
typedef char fmi2Byte;
typedef enum { fmi2OK, fmi2Warning, fmi2Discard, fmi2Error, fmi2Fatal, fmi2Pending } fmi2Status;
typedef struct {
    fmi2Boolean newDiscreteStatesNeeded, terminateSimulation, nominalsOfContinuousStatesChanged,
        valuesOfContinuousStatesChanged, nextEventTimeDefined;
    fmi2Real nextEventTime;
} fmi2EventInfo;

#define EXPORT __attribute__((visibility("default")))

EXPORT const char *fmi2GetTypesPlatform(void) { return "default"; }
EXPORT const char *fmi2GetVersion(void) { return "2.0"; }
EXPORT fmi2Status fmi2SetDebugLogging(fmi2Component c, fmi2Boolean on, size_t n, const fmi2String cat[]) {
    (void)c; (void)on; (void)n; (void)cat; return fmi2OK;
}

/* An entry point the FMU does not support: it answers fmi2Error. */
#define FMI2_UNSUPPORTED(name, ...) \
    EXPORT fmi2Status name(__VA_ARGS__) { return fmi2Error; }

/* fmi2Get/Set Integer, Boolean and String of an FMU without such variables: fmi2Error, but fmi2OK
 * for an empty list when EMPTY_OK is 1. */
#define FMI2_NO_OTHER_TYPES(EMPTY_OK)                                                                            \
    EXPORT fmi2Status fmi2GetInteger(fmi2Component c, const fmi2ValueReference vr[], size_t n, fmi2Integer v[]) {   \
        return (EMPTY_OK) && !n ? fmi2OK : fmi2Error;                                                            \
    }                                                                                                            \
    EXPORT fmi2Status fmi2SetInteger(fmi2Component c, const fmi2ValueReference vr[], size_t n,                    \
                                     const fmi2Integer v[]) {                                                     \
        return (EMPTY_OK) && !n ? fmi2OK : fmi2Error;                                                            \
    }                                                                                                            \
    EXPORT fmi2Status fmi2GetBoolean(fmi2Component c, const fmi2ValueReference vr[], size_t n, fmi2Boolean v[]) {   \
        return (EMPTY_OK) && !n ? fmi2OK : fmi2Error;                                                            \
    }                                                                                                            \
    EXPORT fmi2Status fmi2SetBoolean(fmi2Component c, const fmi2ValueReference vr[], size_t n,                    \
                                     const fmi2Boolean v[]) {                                                     \
        return (EMPTY_OK) && !n ? fmi2OK : fmi2Error;                                                            \
    }                                                                                                            \
    EXPORT fmi2Status fmi2GetString(fmi2Component c, const fmi2ValueReference vr[], size_t n, fmi2String v[]) {     \
        return (EMPTY_OK) && !n ? fmi2OK : fmi2Error;                                                            \
    }                                                                                                            \
    EXPORT fmi2Status fmi2SetString(fmi2Component c, const fmi2ValueReference vr[], size_t n,                     \
                                    const fmi2String v[]) {                                                       \
        return (EMPTY_OK) && !n ? fmi2OK : fmi2Error;                                                            \
    }

/* fmi2GetFMUstate and fmi2FreeFMUstate over copies of the whole instance, of type T. */
#define FMI2_STATE_COPIES(T)                                                                                     \
    EXPORT fmi2Status fmi2GetFMUstate(fmi2Component c, fmi2FMUstate *s) {                                        \
        if (!*s) *s = malloc(sizeof(T));                                                                         \
        if (!*s) return fmi2Error;                                                                               \
        memcpy(*s, c, sizeof(T));                                                                                \
        return fmi2OK;                                                                                           \
    }                                                                                                            \
    EXPORT fmi2Status fmi2FreeFMUstate(fmi2Component c, fmi2FMUstate *s) {                                       \
        (void)c;                                                                                                 \
        if (s && *s) {                                                                                           \
            free(*s);                                                                                            \
            *s = NULL;                                                                                           \
        }                                                                                                        \
        return fmi2OK;                                                                                           \
    }

/* fmi2SetFMUstate restoring such a copy. */
#define FMI2_STATE_RESTORE(T)                                                                                    \
    EXPORT fmi2Status fmi2SetFMUstate(fmi2Component c, fmi2FMUstate s) {                                         \
        if (!s) return fmi2Error;                                                                                \
        memcpy(c, s, sizeof(T));                                                                                 \
        return fmi2OK;                                                                                           \
    }

/* The serialization of such copies: their bytes. */
#define FMI2_STATE_SERIALIZED(T)                                                                                 \
    EXPORT fmi2Status fmi2SerializedFMUstateSize(fmi2Component c, fmi2FMUstate s, size_t *n) {                   \
        (void)c; (void)s;                                                                                        \
        *n = sizeof(T);                                                                                          \
        return fmi2OK;                                                                                           \
    }                                                                                                            \
    EXPORT fmi2Status fmi2SerializeFMUstate(fmi2Component c, fmi2FMUstate s, fmi2Byte b[], size_t n) {           \
        (void)c;                                                                                                 \
        if (n < sizeof(T)) return fmi2Error;                                                                     \
        memcpy(b, s, sizeof(T));                                                                                 \
        return fmi2OK;                                                                                           \
    }                                                                                                            \
    EXPORT fmi2Status fmi2DeSerializeFMUstate(fmi2Component c, const fmi2Byte b[], size_t n, fmi2FMUstate *s) {  \
        (void)c;                                                                                                 \
        if (n != sizeof(T)) return fmi2Error;                                                                    \
        *s = malloc(sizeof(T));                                                                                  \
        if (!*s) return fmi2Error;                                                                               \
        memcpy(*s, b, sizeof(T));                                                                                \
        return fmi2OK;                                                                                           \
    }

/* No serialization (fmi2Error). */
#define FMI2_STATE_NOT_SERIALIZED                                                                                \
    FMI2_UNSUPPORTED(fmi2SerializedFMUstateSize, fmi2Component c, fmi2FMUstate s, size_t *n)                     \
    FMI2_UNSUPPORTED(fmi2SerializeFMUstate, fmi2Component c, fmi2FMUstate s, fmi2Byte b[], size_t n)             \
    FMI2_UNSUPPORTED(fmi2DeSerializeFMUstate, fmi2Component c, const fmi2Byte b[], size_t n, fmi2FMUstate *s)

/* No FMU state at all. */
#define FMI2_NO_STATE                                                                                            \
    FMI2_UNSUPPORTED(fmi2GetFMUstate, fmi2Component c, fmi2FMUstate *s)                                          \
    FMI2_UNSUPPORTED(fmi2SetFMUstate, fmi2Component c, fmi2FMUstate s)                                           \
    FMI2_UNSUPPORTED(fmi2FreeFMUstate, fmi2Component c, fmi2FMUstate *s)                                         \
    FMI2_STATE_NOT_SERIALIZED

/* No partial derivatives. */
#define FMI2_NO_DIRECTIONAL_DERIVATIVE                                                                           \
    FMI2_UNSUPPORTED(fmi2GetDirectionalDerivative, fmi2Component c, const fmi2ValueReference u[], size_t nu,     \
                     const fmi2ValueReference z[], size_t nz, const fmi2Real dv[], fmi2Real dz[])

/* Co-Simulation without input or output derivatives. */
#define FMI2_CS_NO_DERIVATIVES                                                                                   \
    FMI2_UNSUPPORTED(fmi2SetRealInputDerivatives, fmi2Component c, const fmi2ValueReference vr[], size_t n,      \
                     const fmi2Integer o[], const fmi2Real v[])                                                  \
    FMI2_UNSUPPORTED(fmi2GetRealOutputDerivatives, fmi2Component c, const fmi2ValueReference vr[], size_t n,     \
                     const fmi2Integer o[], fmi2Real v[])

/* Co-Simulation without asynchronous steps: fmi2CancelStep and the status queries. */
#define FMI2_CS_NO_STATUS                                                                                        \
    FMI2_UNSUPPORTED(fmi2CancelStep, fmi2Component c)                                                            \
    FMI2_UNSUPPORTED(fmi2GetStatus, fmi2Component c, int k, int *v)                                              \
    FMI2_UNSUPPORTED(fmi2GetRealStatus, fmi2Component c, int k, fmi2Real *v)                                     \
    FMI2_UNSUPPORTED(fmi2GetIntegerStatus, fmi2Component c, int k, fmi2Integer *v)                               \
    FMI2_UNSUPPORTED(fmi2GetBooleanStatus, fmi2Component c, int k, fmi2Boolean *v)                               \
    FMI2_UNSUPPORTED(fmi2GetStringStatus, fmi2Component c, int k, fmi2String *v)

/* fmi2GetNominalsOfContinuousStates: every nominal is 1. */
#define FMI2_UNIT_NOMINALS                                                                                       \
    EXPORT fmi2Status fmi2GetNominalsOfContinuousStates(fmi2Component c, fmi2Real x[], size_t n) {               \
        (void)c;                                                                                                 \
        for (size_t i = 0; i < n; i++) x[i] = 1.0;                                                               \
        return fmi2OK;                                                                                           \
    }

/* The states of the FMI 2.0 state machine, for FMUs that track theirs in a field `mode`. */
enum { INSTANTIATED, INIT_MODE, EVENT_MODE, CONTINUOUS, STEPPING, TERMINATED };

/* fmi2EnterInitializationMode (from Instantiated), fmi2ExitInitializationMode (into AFTER, an
 * expression of the instance `s`) and fmi2Terminate (from a state after initialization) of an
 * instance of type T with a field `mode`: each refuses (fmi2Error) in another state. */
#define FMI2_MODES(T, AFTER)                                                                                     \
    EXPORT fmi2Status fmi2EnterInitializationMode(fmi2Component c) {                                             \
        T *s = c;                                                                                                \
        if (s->mode != INSTANTIATED) return fmi2Error;                                                           \
        s->mode = INIT_MODE;                                                                                     \
        return fmi2OK;                                                                                           \
    }                                                                                                            \
    EXPORT fmi2Status fmi2ExitInitializationMode(fmi2Component c) {                                              \
        T *s = c;                                                                                                \
        if (s->mode != INIT_MODE) return fmi2Error;                                                              \
        s->mode = (AFTER);                                                                                       \
        return fmi2OK;                                                                                           \
    }                                                                                                            \
    EXPORT fmi2Status fmi2Terminate(fmi2Component c) {                                                           \
        T *s = c;                                                                                                \
        if (s->mode == INSTANTIATED || s->mode == INIT_MODE || s->mode == TERMINATED) return fmi2Error;          \
        s->mode = TERMINATED;                                                                                    \
        return fmi2OK;                                                                                           \
    }

/* fmi2SetupExperiment (in Instantiated only) of such an instance, whose field TIME takes t0. */
#define FMI2_SETUP_EXPERIMENT(T, TIME)                                                                           \
    EXPORT fmi2Status fmi2SetupExperiment(fmi2Component c, fmi2Boolean td, fmi2Real tol, fmi2Real t0,           \
                                          fmi2Boolean sd, fmi2Real t1) {                                         \
        T *s = c;                                                                                                \
        if (s->mode != INSTANTIATED) return fmi2Error;                                                           \
        s->TIME = t0;                                                                                            \
        return fmi2OK;                                                                                           \
    }

#endif
