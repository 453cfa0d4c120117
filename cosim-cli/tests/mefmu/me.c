/* Small FMI 2.0 Model Exchange FMUs for the master's tests (built with the system's `cc`; the
 * modelDescription is written by tests/mefmu/mod.rs, which must agree on the value references).
 * They export the common and Model Exchange functions only (no fmi2DoStep: the entry points are
 * those of ../cinclude/fmi2_real_array.h, over the reals r). -DMODEL=1..4, the models of
 * models.h (ball, stair, robertson, stop); for the stop, fmi2CompletedIntegratorStep asks for an
 * event (a step event) once x fell below the threshold, and the event update sets
 * terminateSimulation.
 * -DHOSTILE= makes the ball misbehave (tests/model_exchange_hostile.rs):
 *   1 fmi2GetDerivatives crashes (SIGSEGV) from t = 0.2 on;
 *   2 fmi2GetDerivatives returns NaN for der(v) from t = 0.2 on;
 *   3 the event iteration never ends (newDiscreteStatesNeeded forever from the first bounce);
 *   4 the first bounce announces a time event in the past (nextEventTime = t - 0.5);
 *   5 fmi2GetDerivatives never returns from t = 0.2 on (blocks, also across signals). */
#include <unistd.h>

#include "../cinclude/fmi2_common.h"
#include "models.h"

#ifndef HOSTILE
#define HOSTILE 0
#endif

/* The event update (HOSTILE 3 and 4 for the ball); returns whether the continuous states changed. */
static int update(M *m, fmi2EventInfo *e) {
    if (MODEL == 1 && HOSTILE == 3 && m->time > 0.1) e->newDiscreteStatesNeeded = 1;
    if (MODEL == 1 && HOSTILE == 4 && m->time > 0.1) { e->nextEventTimeDefined = 1; e->nextEventTime = m->time - 0.5; }
    Update u = update_model(m);
    if (u.next_defined) { e->nextEventTimeDefined = 1; e->nextEventTime = u.next; }
    e->terminateSimulation = u.terminate;
    return u.changed;
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

#define FMI2_INDICATORS indicators

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
