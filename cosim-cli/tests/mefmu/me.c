/* Small FMI 2.0 Model Exchange FMUs for the master's tests (built with the system's `cc`; the
 * modelDescription is written by tests/mefmu/mod.rs, which must agree on the value references).
 * They export the common and Model Exchange functions only (no fmi2DoStep). -DMODEL=
 *   1 ball:      r0 h, r1 v (states), r2 der(h), r3 der(v), r4 g, r5 e; indicator h; a bounce
 *                (h <= 0, v < 0) sets h = 0, v = -e v (valuesOfContinuousStatesChanged);
 *   2 stair:     r0 x (state), r1 der(x) = k, r2 k (discrete): k += 1 at every whole second
 *                (time events through nextEventTime);
 *   3 robertson: r0..r2 the concentrations (states), r3..r5 their derivatives (stiff);
 *   4 stop:      r0 x (state, x' = u - x), r1 der(x), r2 threshold, r3 u (input): once x falls
 *                below the threshold, fmi2CompletedIntegratorStep asks for an event (a step
 *                event) and the event update sets terminateSimulation.
 * -DHOSTILE= makes the ball misbehave (tests/model_exchange_hostile.rs):
 *   1 fmi2GetDerivatives crashes (SIGSEGV) from t = 0.2 on;
 *   2 fmi2GetDerivatives returns NaN for der(v) from t = 0.2 on;
 *   3 the event iteration never ends (newDiscreteStatesNeeded forever from the first bounce);
 *   4 the first bounce announces a time event in the past (nextEventTime = t - 0.5);
 *   5 fmi2GetDerivatives never returns from t = 0.2 on (blocks, also across signals). */
#include <math.h>
#include <unistd.h>
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

#if MODEL == 1
#define NR 6
#define NX 2
#define NZ 1
#elif MODEL == 2
#define NR 3
#define NX 1
#define NZ 0
#elif MODEL == 3
#define NR 6
#define NX 3
#define NZ 0
#elif MODEL == 4
#define NR 4
#define NX 1
#define NZ 0
#else
#error "MODEL is 1..4"
#endif

#ifndef HOSTILE
#define HOSTILE 0
#endif

typedef struct {
    double r[NR];
    double time;
    int below; /* MODEL 4: x fell below the threshold */
} M;

#define EXPORT __attribute__((visibility("default")))

static void start(M *m) {
#if MODEL == 1
    m->r[0] = 1.0; m->r[1] = 0.0; m->r[4] = 9.81; m->r[5] = 0.7;
#elif MODEL == 2
    m->r[0] = 0.0; m->r[2] = 0.0;
#elif MODEL == 3
    m->r[0] = 1.0; m->r[1] = 0.0; m->r[2] = 0.0;
#else
    m->r[0] = 1.0; m->r[2] = 0.5; m->r[3] = 0.0;
#endif
}

static void derivatives(M *m) {
    double *r = m->r;
#if MODEL == 1
    r[2] = r[1]; r[3] = -r[4];
#elif MODEL == 2
    r[1] = r[2];
#elif MODEL == 3
    r[3] = -0.04 * r[0] + 1e4 * r[1] * r[2];
    r[5] = 3e7 * r[1] * r[1];
    r[4] = -r[3] - r[5];
#else
    r[1] = r[3] - r[0];
#endif
}

/* The event update; returns whether the continuous states changed. */
static int update(M *m, fmi2EventInfo *e) {
    int changed = 0;
    e->nextEventTimeDefined = 0;
#if MODEL == 1
    if (HOSTILE == 3 && m->time > 0.1) e->newDiscreteStatesNeeded = 1;
    if (HOSTILE == 4 && m->time > 0.1) { e->nextEventTimeDefined = 1; e->nextEventTime = m->time - 0.5; }
    if (m->r[0] <= 0 && m->r[1] < 0) { m->r[0] = 0; m->r[1] = -m->r[5] * m->r[1]; changed = 1; }
#elif MODEL == 2
    double k = floor(m->time + 1e-9);
    if (k > m->r[2]) m->r[2] = k;
    e->nextEventTimeDefined = 1;
    e->nextEventTime = m->r[2] + 1.0;
#elif MODEL == 4
    if (m->below) e->terminateSimulation = 1;
#endif
    return changed;
}

EXPORT const char *fmi2GetTypesPlatform(void) { return "default"; }
EXPORT const char *fmi2GetVersion(void) { return "2.0"; }
EXPORT fmi2Status fmi2SetDebugLogging(fmi2Component c, fmi2Boolean on, size_t n, const fmi2String cat[]) {
    (void)c; (void)on; (void)n; (void)cat; return fmi2OK;
}
EXPORT fmi2Component fmi2Instantiate(fmi2String name, int type, fmi2String guid, fmi2String res,
                                     const void *f, fmi2Boolean vis, fmi2Boolean log) {
    (void)name; (void)guid; (void)res; (void)f; (void)vis; (void)log;
    if (type != 0) return NULL; /* fmi2ModelExchange only */
    M *m = calloc(1, sizeof(M));
    if (m) start(m);
    return m;
}
EXPORT void fmi2FreeInstance(fmi2Component c) { free(c); }
EXPORT fmi2Status fmi2SetupExperiment(fmi2Component c, fmi2Boolean td, fmi2Real tol, fmi2Real t0,
                                      fmi2Boolean sd, fmi2Real t1) {
    (void)td; (void)tol; (void)sd; (void)t1; ((M *)c)->time = t0; return fmi2OK;
}
EXPORT fmi2Status fmi2EnterInitializationMode(fmi2Component c) { (void)c; return fmi2OK; }
EXPORT fmi2Status fmi2ExitInitializationMode(fmi2Component c) { (void)c; return fmi2OK; }
EXPORT fmi2Status fmi2Terminate(fmi2Component c) { (void)c; return fmi2OK; }
EXPORT fmi2Status fmi2Reset(fmi2Component c) { M *m = c; memset(m, 0, sizeof *m); start(m); return fmi2OK; }
EXPORT fmi2Status fmi2GetReal(fmi2Component c, const fmi2ValueReference vr[], size_t n, fmi2Real v[]) {
    M *m = c;
    derivatives(m);
    for (size_t i = 0; i < n; i++) { if (vr[i] >= NR) return fmi2Error; v[i] = m->r[vr[i]]; }
    return fmi2OK;
}
EXPORT fmi2Status fmi2SetReal(fmi2Component c, const fmi2ValueReference vr[], size_t n, const fmi2Real v[]) {
    M *m = c;
    for (size_t i = 0; i < n; i++) { if (vr[i] >= NR) return fmi2Error; m->r[vr[i]] = v[i]; }
    return fmi2OK;
}
EXPORT fmi2Status fmi2GetInteger(fmi2Component c, const fmi2ValueReference vr[], size_t n, fmi2Integer v[]) {
    (void)c; (void)vr; (void)v; return n ? fmi2Error : fmi2OK;
}
EXPORT fmi2Status fmi2SetInteger(fmi2Component c, const fmi2ValueReference vr[], size_t n, const fmi2Integer v[]) {
    (void)c; (void)vr; (void)v; return n ? fmi2Error : fmi2OK;
}
EXPORT fmi2Status fmi2GetBoolean(fmi2Component c, const fmi2ValueReference vr[], size_t n, fmi2Boolean v[]) {
    (void)c; (void)vr; (void)v; return n ? fmi2Error : fmi2OK;
}
EXPORT fmi2Status fmi2SetBoolean(fmi2Component c, const fmi2ValueReference vr[], size_t n, const fmi2Boolean v[]) {
    (void)c; (void)vr; (void)v; return n ? fmi2Error : fmi2OK;
}
EXPORT fmi2Status fmi2GetString(fmi2Component c, const fmi2ValueReference vr[], size_t n, fmi2String v[]) {
    (void)c; (void)vr; (void)v; return n ? fmi2Error : fmi2OK;
}
EXPORT fmi2Status fmi2SetString(fmi2Component c, const fmi2ValueReference vr[], size_t n, const fmi2String v[]) {
    (void)c; (void)vr; (void)v; return n ? fmi2Error : fmi2OK;
}
EXPORT fmi2Status fmi2GetFMUstate(fmi2Component c, fmi2FMUstate *s) {
    M *copy = *s ? *s : malloc(sizeof(M));
    if (!copy) return fmi2Error;
    memcpy(copy, c, sizeof(M));
    *s = copy;
    return fmi2OK;
}
EXPORT fmi2Status fmi2SetFMUstate(fmi2Component c, fmi2FMUstate s) { memcpy(c, s, sizeof(M)); return fmi2OK; }
EXPORT fmi2Status fmi2FreeFMUstate(fmi2Component c, fmi2FMUstate *s) { (void)c; free(*s); *s = NULL; return fmi2OK; }
EXPORT fmi2Status fmi2SerializedFMUstateSize(fmi2Component c, fmi2FMUstate s, size_t *n) {
    (void)c; (void)s; (void)n; return fmi2Error;
}
EXPORT fmi2Status fmi2SerializeFMUstate(fmi2Component c, fmi2FMUstate s, fmi2Byte b[], size_t n) {
    (void)c; (void)s; (void)b; (void)n; return fmi2Error;
}
EXPORT fmi2Status fmi2DeSerializeFMUstate(fmi2Component c, const fmi2Byte b[], size_t n, fmi2FMUstate *s) {
    (void)c; (void)b; (void)n; (void)s; return fmi2Error;
}
EXPORT fmi2Status fmi2GetDirectionalDerivative(fmi2Component c, const fmi2ValueReference u[], size_t nu,
                                               const fmi2ValueReference z[], size_t nz, const fmi2Real dv[],
                                               fmi2Real dz[]) {
    (void)c; (void)u; (void)nu; (void)z; (void)nz; (void)dv; (void)dz; return fmi2Error;
}

/* Model Exchange */
EXPORT fmi2Status fmi2EnterEventMode(fmi2Component c) { (void)c; return fmi2OK; }
EXPORT fmi2Status fmi2NewDiscreteStates(fmi2Component c, fmi2EventInfo *e) {
    M *m = c;
    memset(e, 0, sizeof *e);
    e->valuesOfContinuousStatesChanged = update(m, e);
    return fmi2OK;
}
EXPORT fmi2Status fmi2EnterContinuousTimeMode(fmi2Component c) { (void)c; return fmi2OK; }
EXPORT fmi2Status fmi2CompletedIntegratorStep(fmi2Component c, fmi2Boolean noPrior, fmi2Boolean *enterEventMode,
                                              fmi2Boolean *terminate) {
    M *m = c;
    (void)noPrior;
    *enterEventMode = 0;
    *terminate = 0;
#if MODEL == 4
    if (!m->below && m->r[0] < m->r[2]) { m->below = 1; *enterEventMode = 1; }
#else
    (void)m;
#endif
    return fmi2OK;
}
EXPORT fmi2Status fmi2SetTime(fmi2Component c, fmi2Real t) { ((M *)c)->time = t; return fmi2OK; }
EXPORT fmi2Status fmi2SetContinuousStates(fmi2Component c, const fmi2Real x[], size_t n) {
    if (n != NX) return fmi2Error;
    memcpy(((M *)c)->r, x, n * sizeof(double));
    return fmi2OK;
}
EXPORT fmi2Status fmi2GetDerivatives(fmi2Component c, fmi2Real dx[], size_t n) {
    M *m = c;
    if (n != NX) return fmi2Error;
    derivatives(m);
    memcpy(dx, m->r + NX, n * sizeof(double));
    if (m->time >= 0.2) {
        if (HOSTILE == 1) *(volatile int *)0 = 1;
        if (HOSTILE == 2) dx[NX - 1] = NAN;
        if (HOSTILE == 5) for (;;) pause();
    }
    return fmi2OK;
}
EXPORT fmi2Status fmi2GetEventIndicators(fmi2Component c, fmi2Real z[], size_t n) {
    M *m = c;
    if (n != NZ) return fmi2Error;
#if MODEL == 1
    z[0] = m->r[0];
#else
    (void)m; (void)z;
#endif
    return fmi2OK;
}
EXPORT fmi2Status fmi2GetContinuousStates(fmi2Component c, fmi2Real x[], size_t n) {
    if (n != NX) return fmi2Error;
    memcpy(x, ((M *)c)->r, n * sizeof(double));
    return fmi2OK;
}
EXPORT fmi2Status fmi2GetNominalsOfContinuousStates(fmi2Component c, fmi2Real x[], size_t n) {
    (void)c;
    for (size_t i = 0; i < n; i++) x[i] = 1.0;
    return fmi2OK;
}
