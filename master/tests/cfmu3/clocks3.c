/* An FMI 3.0 Co-Simulation FMU with clocks for the master's tests (cosim-cli/tests/fmi3_clocks.rs),
 * built at test time with the system's cc. Event mode is required (hasEventMode).
 *
 * Clocks: 1 tick (input, time-based: the description says constant 0.25 s, or fixed and then
 * fmi3GetIntervalDecimal answers 0.25), 2 every3 (output, triggered: ticks at every third
 * activation of tick), 3 trig (input, triggered: activated from a connected output clock),
 * 4 cd (input, countdown: fmi3GetIntervalDecimal answers 0.3 s, fmi3IntervalChanged, after
 * initialization and after each of its activations; otherwise fmi3IntervalNotYetKnown).
 *
 * Value references: 0 time, 5 n_tick, 6 n_trig, 7 n_cd (Int64 outputs: activations), 8 y
 * (Float64 output clocked by every3: n_tick at its tick), 9 u (Float64 input clocked by trig,
 * start 0), 10 got (Float64 output: the sum of u at trig's activations), 11 order (Int64
 * output: the last six activations as digits, newest last: 1 tick, 2 every3, 3 trig, 4 cd),
 * 12 tick_miss (the largest |time - k 0.25| at a tick), 13 cd_miss (|time - k 0.3| at cd),
 * 14 steps (fmi3DoStep calls), 15 bad_access (Int64 output: clocks set outside event mode,
 * clocked variables read or set while their clock is not active: 0 when the master keeps the
 * rules), 16 last_trig (Float64 output: the time of trig's last activation, -1 before).
 *
 * -DCD_NEVER: the countdown interval is answered as +inf (a clock that never fires).
 * fmi3GetIntervalFraction answers 1/4 s for tick (a description with supportsFraction="true").
 * -DZERO_INTERVAL: tick's interval is answered as 0 (when the description says fixed). */
#include <math.h>
#include "fmi3_common.h"

typedef struct {
    double time, y, u, got, tick_miss, cd_miss, last_trig;
    int64_t n_tick, n_trig, n_cd, order, steps, bad;
    bool in_event, processed, tick, every3, trig, cd, cd_armed, tick_asked;
} State;

typedef struct { State s; void *env; Log log; } Inst;

static void digit(State *s, int d) { s->order = (s->order * 10 + d) % 1000000; }
static double miss(double t, double period) { return fabs(t - round(t / period) * period); }

EXPORT void *fmi3InstantiateCoSimulation(const char *name, const char *token, const char *res, bool visible,
    bool logging, bool event_mode_used, bool early_return_allowed, const unsigned *req, size_t nreq, void *env,
    Log log, void *update) {
    if (strcmp(token, "{clocks3}") != 0 || !event_mode_used) return NULL;
    Inst *c = calloc(1, sizeof(Inst));
    c->env = env; c->log = log; c->s.last_trig = -1; c->s.cd_armed = true;
    return c;
}
FMI3_ENTER_INITIALIZATION(Inst, s.time)
/* With eventModeUsed the FMU is in event mode after initialization. */
EXPORT S fmi3ExitInitializationMode(void *p) { ((Inst *)p)->s.in_event = true; return OK; }
FMI3_NOTHING(Terminate)
EXPORT S fmi3Reset(void *p) { return ERROR; }
EXPORT S fmi3EnterEventMode(void *p) { ((Inst *)p)->s.in_event = true; return OK; }
EXPORT S fmi3EnterStepMode(void *p) {
    State *s = &((Inst *)p)->s;
    s->in_event = false; s->processed = false;
    s->tick = s->every3 = s->trig = s->cd = false;
    return OK;
}

EXPORT S fmi3SetClock(void *p, const unsigned vr[], size_t n, const bool v[]) {
    Inst *c = p;
    State *s = &c->s;
    if (!s->in_event) { s->bad++; say(c, ERROR, "fmi3SetClock outside event mode"); return ERROR; }
    for (size_t i = 0; i < n; i++) {
        switch (vr[i]) {
        case 1: s->tick = v[i]; break;
        case 3: s->trig = v[i]; break;
        case 4: s->cd = v[i]; break;
        default: say(c, ERROR, "fmi3SetClock: not an input clock"); return ERROR;
        }
    }
    return OK;
}
EXPORT S fmi3GetClock(void *p, const unsigned vr[], size_t n, bool v[]) {
    Inst *c = p;
    for (size_t i = 0; i < n; i++) {
        if (vr[i] != 2) { say(c, ERROR, "fmi3GetClock: not an output clock"); return ERROR; }
        v[i] = c->s.every3;
    }
    return OK;
}

EXPORT S fmi3UpdateDiscreteStates(void *p, bool *need, bool *term, bool *nom, bool *val, bool *defined, double *next) {
    Inst *c = p;
    State *s = &c->s;
    *need = false; *term = false; *nom = false; *val = false; *defined = false; *next = 0;
    if (s->processed) return OK;
    s->processed = true;
    if (s->tick) {
        s->n_tick++; digit(s, 1);
        double m = miss(s->time, 0.25);
        if (m > s->tick_miss) s->tick_miss = m;
        if (s->n_tick % 3 == 0) { s->every3 = true; s->y = (double)s->n_tick; digit(s, 2); }
    }
    if (s->trig) { s->n_trig++; s->got += s->u; s->last_trig = s->time; digit(s, 3); }
    if (s->cd) {
        s->n_cd++; s->cd_armed = true; digit(s, 4);
        double m = miss(s->time, 0.3);
        if (m > s->cd_miss) s->cd_miss = m;
    }
    return OK;
}

EXPORT S fmi3GetIntervalDecimal(void *p, const unsigned vr[], size_t n, double interval[], int qualifier[]) {
    Inst *c = p;
    State *s = &c->s;
    for (size_t i = 0; i < n; i++) {
        if (vr[i] == 1) {
            interval[i] = 0.25; qualifier[i] = s->tick_asked ? 1 : 2; s->tick_asked = true;
#ifdef ZERO_INTERVAL
            interval[i] = 0;
#endif
        } else if (vr[i] == 4) {
            if (s->cd_armed) {
                interval[i] = 0.3; qualifier[i] = 2; s->cd_armed = false;
#ifdef CD_NEVER
                interval[i] = INFINITY;
#endif
            } else { interval[i] = 0; qualifier[i] = 0; }
        } else { say(c, ERROR, "fmi3GetIntervalDecimal: no such clock"); return ERROR; }
    }
    return OK;
}

/* The same interval as a fraction (for a description that says supportsFraction="true"). */
EXPORT S fmi3GetIntervalFraction(void *p, const unsigned vr[], size_t n, uint64_t counter[], uint64_t resolution[],
    int qualifier[]) {
    Inst *c = p;
    for (size_t i = 0; i < n; i++) {
        if (vr[i] != 1) { say(c, ERROR, "fmi3GetIntervalFraction: no such clock"); return ERROR; }
        counter[i] = 1; resolution[i] = 4; qualifier[i] = 2;
#ifdef ZERO_INTERVAL
        counter[i] = 0;
#endif
    }
    return OK;
}
EXPORT S fmi3GetShiftFraction(void *p, const unsigned vr[], size_t n, uint64_t counter[], uint64_t resolution[]) {
    Inst *c = p;
    for (size_t i = 0; i < n; i++) {
        if (vr[i] != 1) { say(c, ERROR, "fmi3GetShiftFraction: no such clock"); return ERROR; }
        counter[i] = 0; resolution[i] = 1;
    }
    return OK;
}

EXPORT S fmi3GetShiftDecimal(void *p, const unsigned vr[], size_t n, double shift[]) {
    Inst *c = p;
    for (size_t i = 0; i < n; i++) {
        if (vr[i] != 1) { say(c, ERROR, "fmi3GetShiftDecimal: no such clock"); return ERROR; }
        shift[i] = 0;
    }
    return OK;
}

EXPORT S fmi3DoStep(void *p, double t, double h, bool no_prior, bool *event_needed, bool *terminate,
    bool *early, double *last) {
    Inst *c = p;
    if (c->s.in_event) { say(c, ERROR, "fmi3DoStep in event mode"); return ERROR; }
    c->s.steps++;
    c->s.time = t + h;
    *event_needed = false; *terminate = false; *early = false; *last = t + h;
    return OK;
}

EXPORT S fmi3GetFloat64(void *p, const unsigned vr[], size_t n, double v[], size_t nv) {
    Inst *c = p;
    State *s = &c->s;
    CHECK(n == nv);
    for (size_t i = 0; i < n; i++) {
        switch (vr[i]) {
        case 0: v[i] = s->time; break;
        case 8: if (!(s->in_event && s->every3)) s->bad++; v[i] = s->y; break;
        case 9: if (!(s->in_event && s->trig)) s->bad++; v[i] = s->u; break;
        case 10: v[i] = s->got; break;
        case 12: v[i] = s->tick_miss; break;
        case 13: v[i] = s->cd_miss; break;
        case 16: v[i] = s->last_trig; break;
        default: CHECK(0);
        }
    }
    return OK;
}
EXPORT S fmi3SetFloat64(void *p, const unsigned vr[], size_t n, const double v[], size_t nv) {
    Inst *c = p;
    State *s = &c->s;
    CHECK(n == nv);
    for (size_t i = 0; i < n; i++) {
        CHECK(vr[i] == 9);
        if (!(s->in_event && s->trig)) s->bad++;
        s->u = v[i];
    }
    return OK;
}
EXPORT S fmi3GetInt64(void *p, const unsigned vr[], size_t n, int64_t v[], size_t nv) {
    Inst *c = p;
    State *s = &c->s;
    CHECK(n == nv);
    for (size_t i = 0; i < n; i++) {
        switch (vr[i]) {
        case 5: v[i] = s->n_tick; break;
        case 6: v[i] = s->n_trig; break;
        case 7: v[i] = s->n_cd; break;
        case 11: v[i] = s->order; break;
        case 14: v[i] = s->steps; break;
        case 15: v[i] = s->bad; break;
        default: CHECK(0);
        }
    }
    return OK;
}
FMI3_FLOAT64_AND_INT64_OUTPUTS_ONLY

/* The rest of the FMI 3.0 API, never called here. */
STUB(GetOutputDerivatives) STUB(GetDirectionalDerivative) STUB(SetIntervalDecimal) STUB(SetIntervalFraction)
STUB(SetShiftDecimal) STUB(SetShiftFraction) STUB(InstantiateModelExchange) STUB(InstantiateScheduledExecution)
STUB(ActivateModelPartition)
FMI3_STUB_STATE
FMI3_STUB_MODEL_EXCHANGE
FMI3_STUB_CONFIGURATION
FMI3_STUB_EVALUATION
FMI3_STUB_BINARY
