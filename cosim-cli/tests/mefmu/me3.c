/* Small FMI 3.0 Model Exchange FMUs for the master's tests: the models of me.c (ball, stair) with
 * the FMI 3.0 API (built with the system's `cc`; the modelDescription is written by
 * tests/mefmu/mod.rs). ME only: no fmi3InstantiateCoSimulation, fmi3DoStep or
 * fmi3GetOutputDerivatives. Value reference 0 is the time; r[k] has value reference k + 1.
 *   -DMODEL=1 ball, -DMODEL=2 stair: the models of models.h.
 *   -DHOSTILE=1: fmi3GetNumberOfContinuousStates says one state more than the description.
 * The types and the entry points it shares with the other C FMUs of FMI 3.0 are those of
 * master/tests/cfmu3/fmi3_common.h. */
#include "../../../master/tests/cfmu3/fmi3_common.h"
#include "models.h"

#if MODEL > 2
#error "MODEL is 1..2"
#endif
#ifndef HOSTILE
#define HOSTILE 0
#endif

EXPORT fmi3Instance fmi3InstantiateModelExchange(const char *name, const char *token, const char *res, bool vis,
                                                 bool log, void *env, void *logger) {
    (void)name; (void)token; (void)res; (void)vis; (void)log; (void)env; (void)logger;
    M *m = calloc(1, sizeof(M));
    if (m) start(m);
    return m;
}
FMI3_ENTER_INITIALIZATION(M, time)
FMI3_NOTHING(ExitInitializationMode)
FMI3_NOTHING(EnterEventMode)
FMI3_NOTHING(Terminate)
EXPORT S fmi3Reset(fmi3Instance c) { M *m = c; memset(m, 0, sizeof *m); start(m); return OK; }

EXPORT S fmi3GetFloat64(fmi3Instance c, const fmi3ValueReference vr[], size_t n, double v[], size_t nv) {
    M *m = c;
    if (n != nv) return ERROR;
    derivatives(m);
    for (size_t i = 0; i < n; i++) {
        if (vr[i] == 0) v[i] = m->time;
        else if (vr[i] <= NR) v[i] = m->r[vr[i] - 1];
        else return ERROR;
    }
    return OK;
}
EXPORT S fmi3SetFloat64(fmi3Instance c, const fmi3ValueReference vr[], size_t n, const double v[], size_t nv) {
    M *m = c;
    if (n != nv) return ERROR;
    for (size_t i = 0; i < n; i++) {
        if (vr[i] == 0 || vr[i] > NR) return ERROR;
        m->r[vr[i] - 1] = v[i];
    }
    return OK;
}
/* No variables of the other types. */
#define EMPTY(T, NAME) FMI3_NO_VARIABLES(T, NAME, (void)0)
FMI3_TYPES_BUT_FLOAT64_INT64_BINARY(EMPTY)
EMPTY(int64_t, Int64)

EXPORT S fmi3GetFMUState(fmi3Instance c, fmi3FMUState *s) {
    M *copy = *s ? *s : malloc(sizeof(M));
    if (!copy) return ERROR;
    memcpy(copy, c, sizeof(M));
    *s = copy;
    return OK;
}
EXPORT S fmi3SetFMUState(fmi3Instance c, fmi3FMUState s) { memcpy(c, s, sizeof(M)); return OK; }
EXPORT S fmi3FreeFMUState(fmi3Instance c, fmi3FMUState *s) { (void)c; free(*s); *s = NULL; return OK; }
STUB(SerializedFMUStateSize) STUB(SerializeFMUState) STUB(DeserializeFMUState)

/* Model Exchange */
EXPORT S fmi3UpdateDiscreteStates(fmi3Instance c, bool *needUpdate, bool *terminate, bool *nominalsChanged,
                                  bool *valuesChanged, bool *nextDefined, double *next) {
    Update u = update_model(c);
    *needUpdate = false; *terminate = u.terminate; *nominalsChanged = false; *valuesChanged = u.changed;
    *nextDefined = u.next_defined; *next = u.next;
    return OK;
}
FMI3_NOTHING(EnterContinuousTimeMode)
EXPORT S fmi3CompletedIntegratorStep(fmi3Instance c, bool noPrior, bool *enterEventMode, bool *terminate) {
    (void)c; (void)noPrior; *enterEventMode = false; *terminate = false; return OK;
}
EXPORT S fmi3SetTime(fmi3Instance c, double t) { ((M *)c)->time = t; return OK; }
EXPORT S fmi3SetContinuousStates(fmi3Instance c, const double x[], size_t n) {
    if (n != NX) return ERROR;
    memcpy(((M *)c)->r, x, n * sizeof(double));
    return OK;
}
EXPORT S fmi3GetContinuousStateDerivatives(fmi3Instance c, double dx[], size_t n) {
    M *m = c;
    if (n != NX) return ERROR;
    derivatives(m);
    memcpy(dx, m->r + NX, n * sizeof(double));
    return OK;
}
EXPORT S fmi3GetEventIndicators(fmi3Instance c, double z[], size_t n) {
    if (n != NZ) return ERROR;
    indicators(c, z);
    return OK;
}
EXPORT S fmi3GetContinuousStates(fmi3Instance c, double x[], size_t n) {
    if (n != NX) return ERROR;
    memcpy(x, ((M *)c)->r, n * sizeof(double));
    return OK;
}
EXPORT S fmi3GetNominalsOfContinuousStates(fmi3Instance c, double x[], size_t n) {
    (void)c;
    for (size_t i = 0; i < n; i++) x[i] = 1.0;
    return OK;
}
EXPORT S fmi3GetNumberOfEventIndicators(fmi3Instance c, size_t *n) { (void)c; *n = NZ; return OK; }
EXPORT S fmi3GetNumberOfContinuousStates(fmi3Instance c, size_t *n) {
    (void)c;
    *n = NX + (HOSTILE == 1 ? 1 : 0);
    return OK;
}

/* The rest of the FMI 3.0 API, unsupported (ERROR; instantiation NULL): FMPy resolves every
 * function of the API when it loads a binary. -DME_ONLY leaves out those of Co-Simulation and
 * Scheduled Execution, as an ME-only binary may (cosim stubs them). */
FMI3_STUB_CONFIGURATION
FMI3_STUB_EVALUATION
FMI3_STUB_BINARY
FMI3_STUB_CLOCKS
#ifdef DIRECTIONAL
/* -DDIRECTIONAL=k (ball): the partial derivatives of the unknowns by the knowns, times k for
 * d der(h)/dv (1 honest, 2 a liar): der(h) = v, der(v) = -g, the outputs h and v are states. */
EXPORT S fmi3GetDirectionalDerivative(fmi3Instance c, const fmi3ValueReference unknowns[], size_t nu,
                                      const fmi3ValueReference knowns[], size_t nk, const double seed[],
                                      size_t ns, double sensitivity[], size_t nsens) {
    (void)c;
    if (nk != ns || nu != nsens) return ERROR;
    for (size_t i = 0; i < nu; i++) {
        double s = 0.0;
        for (size_t j = 0; j < nk; j++) {
            if (unknowns[i] == knowns[j]) s += seed[j];
            else if (unknowns[i] == 3 && knowns[j] == 2) s += DIRECTIONAL * seed[j];
        }
        sensitivity[i] = s;
    }
    return OK;
}
#else
STUB(GetDirectionalDerivative)
#endif
#ifndef ME_ONLY
STUB(DoStep)
STUB(EnterStepMode)
STUB(GetOutputDerivatives)
STUB(ActivateModelPartition)
EXPORT void *fmi3InstantiateCoSimulation(void) { return NULL; }
EXPORT void *fmi3InstantiateScheduledExecution(void) { return NULL; }
#endif
