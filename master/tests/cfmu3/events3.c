/* An FMI 3.0 Co-Simulation FMU with event mode for the master's tests (cosim-cli/tests/fmi3_events.rs),
 * built at test time with the system's cc: a bouncing ball integrated inside the FMU (closed-form
 * ballistic steps of at most DT, its own event location: the root of the height inside the step,
 * refined by bisection to TOL) and an optional periodic time event announced with nextEventTime.
 *
 * Value references: 0 time, 1 h (Float64 output, height, start 1), 2 v (Float64 output,
 * velocity), 3 g (parameter, 9.81), 4 e (parameter, coefficient of restitution, 0.7), 5 bounces
 * (Int64 output), 6 steps (Int64 output: fmi3DoStep calls), 7 updates (Int64 output:
 * fmi3UpdateDiscreteStates calls), 8 period (parameter: a time event every `period` s, 0: none),
 * 9 ticks (Int64 output: time events handled), 10 tick_miss (Float64 output: the largest
 * |time - k period| at a tick: 0 when the master lands on the announced times exactly),
 * 11 bounce_time (Float64 output: the time of the last bounce).
 *
 * With eventModeUsed and earlyReturnAllowed the FMU returns early at each bounce
 * (eventHandlingNeeded, lastSuccessfulTime = the located time) and bounces in
 * fmi3UpdateDiscreteStates; otherwise it bounces inside fmi3DoStep and goes on.
 * -DBAD_LAST: an early return reports lastSuccessfulTime = t + 2 h.
 * -DNEVER_CONVERGES: fmi3UpdateDiscreteStates always answers discreteStatesNeedUpdate = true.
 * -DEARLY_ANYWAY: returns early at a bounce even when earlyReturnAllowed is false. */
#include <math.h>
#include "fmi3_common.h"

#define DT 1e-3
#define TOL 1e-12
#define V_MIN 0.1

typedef struct {
    double time, h, v, g, e, period, tick_miss, bounce_time;
    int64_t bounces, steps, updates, ticks;
    bool pending_bounce, resting;
} State;

typedef struct {
    State s;
    void *env;
    Log log;
    bool event_mode, early_allowed;
} Inst;

static void starts(State *s) {
    memset(s, 0, sizeof(State));
    s->h = 1; s->g = 9.81; s->e = 0.7;
}

EXPORT void *fmi3InstantiateCoSimulation(const char *name, const char *token, const char *res, bool visible,
    bool logging, bool event_mode_used, bool early_return_allowed, const unsigned *req, size_t nreq, void *env,
    Log log, void *update) {
    if (strcmp(token, "{events3}") != 0) return NULL;
    Inst *c = calloc(1, sizeof(Inst));
    c->env = env; c->log = log;
    c->event_mode = event_mode_used; c->early_allowed = early_return_allowed;
    starts(&c->s);
    return c;
}
FMI3_ENTER_INITIALIZATION(Inst, s.time)
FMI3_NOTHING(ExitInitializationMode)
FMI3_NOTHING(Terminate)
EXPORT S fmi3Reset(void *p) { starts(&((Inst *)p)->s); return OK; }

EXPORT S fmi3GetFloat64(void *p, const unsigned vr[], size_t n, double v[], size_t nv) {
    Inst *c = p;
    CHECK(n == nv);
    for (size_t i = 0; i < n; i++) {
        switch (vr[i]) {
        case 0: v[i] = c->s.time; break;
        case 1: v[i] = c->s.h; break;
        case 2: v[i] = c->s.v; break;
        case 3: v[i] = c->s.g; break;
        case 4: v[i] = c->s.e; break;
        case 8: v[i] = c->s.period; break;
        case 10: v[i] = c->s.tick_miss; break;
        case 11: v[i] = c->s.bounce_time; break;
        default: CHECK(0);
        }
    }
    return OK;
}
EXPORT S fmi3SetFloat64(void *p, const unsigned vr[], size_t n, const double v[], size_t nv) {
    Inst *c = p;
    CHECK(n == nv);
    for (size_t i = 0; i < n; i++) {
        if (vr[i] == 1) c->s.h = v[i]; else if (vr[i] == 3) c->s.g = v[i]; else if (vr[i] == 4) c->s.e = v[i];
        else if (vr[i] == 8) c->s.period = v[i]; else CHECK(0);
    }
    return OK;
}
EXPORT S fmi3GetInt64(void *p, const unsigned vr[], size_t n, int64_t v[], size_t nv) {
    Inst *c = p;
    CHECK(n == nv);
    for (size_t i = 0; i < n; i++) {
        switch (vr[i]) {
        case 5: v[i] = c->s.bounces; break;
        case 6: v[i] = c->s.steps; break;
        case 7: v[i] = c->s.updates; break;
        case 9: v[i] = c->s.ticks; break;
        default: CHECK(0);
        }
    }
    return OK;
}
FMI3_FLOAT64_AND_INT64_OUTPUTS_ONLY

FMI3_STATE_COPIES

/* Height after dt from (h, v). */
static double height(const State *s, double dt) { return s->h + s->v * dt - 0.5 * s->g * dt * dt; }

static void bounce(State *s) {
    s->h = 0;
    s->v = -s->e * s->v;
    s->bounces++;
    s->bounce_time = s->time;
    if (s->v < V_MIN) { s->v = 0; s->resting = true; }
}

/* Advances by at most dt; true when the ball reached the ground inside (then at the located time). */
static bool advance(State *s, double dt) {
    if (s->resting) { s->time += dt; return false; }
    if (height(s, dt) >= 0) {
        s->h = height(s, dt); s->v -= s->g * dt; s->time += dt;
        return false;
    }
    double lo = 0, hi = dt; /* h(lo) >= 0 > h(hi) */
    while (hi - lo > TOL) {
        double mid = 0.5 * (lo + hi);
        if (height(s, mid) >= 0) lo = mid; else hi = mid;
    }
    s->h = 0; s->v -= s->g * hi; s->time += hi;
    return true;
}

EXPORT S fmi3DoStep(void *p, double t, double step, bool nsp, bool *event, bool *terminate, bool *early, double *last) {
    Inst *c = p;
    *event = false; *terminate = false; *early = false;
    c->s.steps++;
    c->s.time = t;
    double end = t + step;
    while (c->s.time < end) {
        double dt = end - c->s.time < DT ? end - c->s.time : DT;
        if (!advance(&c->s, dt)) continue;
#ifdef EARLY_ANYWAY
        c->early_allowed = true;
#endif
        if (c->event_mode && c->early_allowed) {
            c->s.pending_bounce = true;
            *event = true; *early = true; *last = c->s.time;
#ifdef BAD_LAST
            *last = t + 2 * step;
#endif
            return OK;
        }
        bounce(&c->s);
    }
    c->s.time = end;
    *last = end;
    return OK;
}

FMI3_NOTHING(EnterEventMode)
FMI3_NOTHING(EnterStepMode)
EXPORT S fmi3UpdateDiscreteStates(void *p, bool *need, bool *terminate, bool *nominals, bool *values, bool *defined, double *next) {
    Inst *c = p;
    c->s.updates++;
    *need = false; *terminate = false; *nominals = false; *values = false; *defined = false; *next = 0;
#ifdef NEVER_CONVERGES
    *need = true;
#endif
    if (c->s.pending_bounce) { bounce(&c->s); c->s.pending_bounce = false; *values = true; }
    if (c->s.period > 0) {
        double k = round(c->s.time / c->s.period);
        if (k >= 1 && fabs(c->s.time - k * c->s.period) < 1e-6) {
            double miss = fabs(c->s.time - k * c->s.period);
            if (miss > c->s.tick_miss) c->s.tick_miss = miss;
            c->s.ticks++;
        }
        *defined = true;
        *next = (floor(c->s.time / c->s.period + 1e-9) + 1) * c->s.period;
    }
    return OK;
}

/* The rest of the FMI 3.0 API, never called here. */
EXPORT void *fmi3InstantiateModelExchange(void) { return NULL; }
EXPORT void *fmi3InstantiateScheduledExecution(void) { return NULL; }
STUB(GetOutputDerivatives) STUB(ActivateModelPartition) STUB(GetDirectionalDerivative)
FMI3_STUB_MODEL_EXCHANGE
FMI3_STUB_CONFIGURATION
FMI3_STUB_EVALUATION
FMI3_STUB_BINARY
FMI3_STUB_CLOCKS
