/* Small FMI 2.0 Model Exchange FMUs for the master's tests (built with the system's `cc`; the
 * modelDescription is written by tests/mefmu/mod.rs, which must agree on the value references).
 * They export the common and Model Exchange functions only (no fmi2DoStep: the entry points are
 * those of ../cinclude/fmi2_real_array.h, over the reals r). -DMODEL=
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

#include "../cinclude/fmi2_common.h"

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
#define FMI2_EVENT_UPDATE update

/* MODEL 4: a step event once x fell below the threshold. */
static int step_event(M *m) {
#if MODEL == 4
    if (!m->below && m->r[0] < m->r[2]) { m->below = 1; return 1; }
#else
    (void)m;
#endif
    return 0;
}
#define FMI2_STEP_EVENT step_event

#if MODEL == 1
static void indicators(M *m, fmi2Real z[]) { z[0] = m->r[0]; }
#define FMI2_INDICATORS indicators
#endif

/* The misbehaviours of fmi2GetDerivatives (HOSTILE 1, 2, 5) from t = 0.2 on. */
static void derivatives_read(M *m, fmi2Real dx[]) {
    volatile int *volatile null = 0; /* a store the compiler cannot prove undefined and drop */
    if (m->time >= 0.2) {
        if (HOSTILE == 1) *null = 1;
        if (HOSTILE == 2) dx[NX - 1] = NAN;
        if (HOSTILE == 5) for (;;) pause();
    }
}
#define FMI2_DERIVATIVES_READ derivatives_read

#include "../cinclude/fmi2_real_array.h"
