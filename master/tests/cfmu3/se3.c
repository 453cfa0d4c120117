/* An FMI 3.0 Scheduled Execution FMU for the master's tests (cosim-cli/tests/fmi3_scheduled.rs),
 * built at test time with the system's cc: two model partitions, `fast` (clock 1, constant
 * interval 0.1 s, priority 2) and `slow` (clock 2, fixed interval 0.2 s from
 * fmi3GetIntervalDecimal, priority 1: activated first when both tick).
 *
 * Value references: 0 time, 3 n_fast, 4 n_slow (Int64 outputs: activations), 5 wrong_order
 * (Int64 output: fast activated at a tick of slow before slow), 6 last_fast (Float64 output:
 * its last activation time), 7 x (Float64 output clocked by fast: x += u each activation),
 * 8 y (Float64 output clocked by slow: y = x when slow runs), 9 u (Float64 input, start 1),
 * 10 order (Int64 output: the last four activations as digits, newest last: 1 fast, 2 slow).
 * -DBAD_INTERVAL: fmi3GetIntervalDecimal answers 0. */
#include <math.h>
#include "fmi3_common.h"

typedef struct {
    double time, last_fast, last_slow, x, y, u;
    int64_t n_fast, n_slow, wrong, order;
} State;

typedef struct { State s; void *env; Log log; } Inst;

EXPORT void *fmi3InstantiateScheduledExecution(const char *name, const char *token, const char *res, bool visible,
    bool logging, void *env, Log log, void *clock_update, void *lock, void *unlock) {
    if (strcmp(token, "{se3}") != 0 || !clock_update || !lock || !unlock) return NULL;
    Inst *c = calloc(1, sizeof(Inst));
    c->env = env; c->log = log; c->s.u = 1; c->s.last_slow = -1; c->s.last_fast = -1;
    return c;
}
EXPORT void *fmi3InstantiateCoSimulation(void) { return NULL; }
EXPORT void *fmi3InstantiateModelExchange(void) { return NULL; }
FMI3_ENTER_INITIALIZATION(Inst, s.time)
FMI3_NOTHING(ExitInitializationMode)
FMI3_NOTHING(Terminate)
EXPORT S fmi3Reset(void *p) { return ERROR; }

EXPORT S fmi3GetIntervalDecimal(void *p, const unsigned vr[], size_t n, double interval[], int qualifier[]) {
    Inst *c = p;
    for (size_t i = 0; i < n; i++) {
        if (vr[i] != 2) { say(c, ERROR, "only clock 2 has an interval to ask"); return ERROR; }
        interval[i] = 0.2; qualifier[i] = 2;
#ifdef BAD_INTERVAL
        interval[i] = 0;
#endif
    }
    return OK;
}

EXPORT S fmi3ActivateModelPartition(void *p, unsigned clock, double t) {
    Inst *c = p;
    c->s.time = t;
    if (clock == 1) {
        double k = round(t / 0.2);
        if (fabs(t - k * 0.2) < 1e-9 && fabs(c->s.last_slow - t) > 1e-9) c->s.wrong++;
        c->s.n_fast++; c->s.last_fast = t; c->s.x += c->s.u;
        c->s.order = (c->s.order * 10 + 1) % 10000;
    } else if (clock == 2) {
        c->s.n_slow++; c->s.last_slow = t; c->s.y = c->s.x;
        c->s.order = (c->s.order * 10 + 2) % 10000;
    } else { say(c, ERROR, "no such clock"); return ERROR; }
    return OK;
}

EXPORT S fmi3GetFloat64(void *p, const unsigned vr[], size_t n, double v[], size_t nv) {
    Inst *c = p;
    CHECK(n == nv);
    for (size_t i = 0; i < n; i++) {
        switch (vr[i]) {
        case 0: v[i] = c->s.time; break;
        case 6: v[i] = c->s.last_fast; break;
        case 7: v[i] = c->s.x; break;
        case 8: v[i] = c->s.y; break;
        case 9: v[i] = c->s.u; break;
        default: CHECK(0);
        }
    }
    return OK;
}
EXPORT S fmi3SetFloat64(void *p, const unsigned vr[], size_t n, const double v[], size_t nv) {
    Inst *c = p;
    CHECK(n == nv);
    for (size_t i = 0; i < n; i++) { CHECK(vr[i] == 9); c->s.u = v[i]; }
    return OK;
}
EXPORT S fmi3GetInt64(void *p, const unsigned vr[], size_t n, int64_t v[], size_t nv) {
    Inst *c = p;
    CHECK(n == nv);
    for (size_t i = 0; i < n; i++) {
        switch (vr[i]) {
        case 3: v[i] = c->s.n_fast; break;
        case 4: v[i] = c->s.n_slow; break;
        case 5: v[i] = c->s.wrong; break;
        case 10: v[i] = c->s.order; break;
        default: CHECK(0);
        }
    }
    return OK;
}
FMI3_FLOAT64_AND_INT64_OUTPUTS_ONLY

/* The rest of the FMI 3.0 API, never called here. */
STUB(GetOutputDerivatives) STUB(DoStep) STUB(EnterEventMode) STUB(EnterStepMode) STUB(UpdateDiscreteStates)
STUB(GetDirectionalDerivative)
STUB(GetClock) STUB(SetClock) STUB(GetIntervalFraction) STUB(SetIntervalDecimal) STUB(SetIntervalFraction)
STUB(GetShiftDecimal) STUB(GetShiftFraction) STUB(SetShiftDecimal) STUB(SetShiftFraction)
FMI3_STUB_STATE
FMI3_STUB_MODEL_EXCHANGE
FMI3_STUB_CONFIGURATION
FMI3_STUB_EVALUATION
FMI3_STUB_BINARY
