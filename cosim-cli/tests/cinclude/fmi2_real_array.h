/* The FMI 2.0 Model Exchange entry points of a model over an array of reals (mefmu/me.c, lag.c):
 * the including file defines NR (reals: value references 0..NR-1), NX (states: r[0..NX-1], their
 * derivatives r[NX..2 NX-1]), NZ (event indicators), the instance type M with the fields
 * `double r[NR]` and `double time`, and before this header
 *   static void start(M *m)        the start values (after the instance is zeroed),
 *   static void derivatives(M *m)  the derivatives and the other computed reals in r,
 * and, optionally, as macros naming functions of the model:
 *   FMI2_EVENT_UPDATE  int f(M *m, fmi2EventInfo *e): the event update (e zeroed before); returns
 *                      whether the continuous states changed;
 *   FMI2_STEP_EVENT    int f(M *m): whether fmi2CompletedIntegratorStep asks for an event;
 *   FMI2_INDICATORS    void f(M *m, fmi2Real z[]): the NZ event indicators;
 *   FMI2_DERIVATIVES_READ  void f(M *m, fmi2Real dx[]): called after fmi2GetDerivatives filled dx.
 * The FMU is Model Exchange only (fmi2Instantiate refuses Co-Simulation; no fmi2DoStep), its FMU
 * states are copies of the instance (not serializable), every nominal is 1. */
#include "fmi2_common.h"

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
FMI2_NO_OTHER_TYPES(1)
FMI2_STATE_COPIES(M)
FMI2_STATE_RESTORE(M)
FMI2_STATE_NOT_SERIALIZED
FMI2_NO_DIRECTIONAL_DERIVATIVE

/* Model Exchange */
EXPORT fmi2Status fmi2EnterEventMode(fmi2Component c) { (void)c; return fmi2OK; }
EXPORT fmi2Status fmi2NewDiscreteStates(fmi2Component c, fmi2EventInfo *e) {
    memset(e, 0, sizeof *e);
#ifdef FMI2_EVENT_UPDATE
    e->valuesOfContinuousStatesChanged = FMI2_EVENT_UPDATE((M *)c, e);
#else
    (void)c;
#endif
    return fmi2OK;
}
EXPORT fmi2Status fmi2EnterContinuousTimeMode(fmi2Component c) { (void)c; return fmi2OK; }
EXPORT fmi2Status fmi2CompletedIntegratorStep(fmi2Component c, fmi2Boolean noPrior, fmi2Boolean *enterEventMode,
                                              fmi2Boolean *terminate) {
    (void)noPrior;
    *enterEventMode = 0;
    *terminate = 0;
#ifdef FMI2_STEP_EVENT
    *enterEventMode = FMI2_STEP_EVENT((M *)c);
#else
    (void)c;
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
#ifdef FMI2_DERIVATIVES_READ
    FMI2_DERIVATIVES_READ(m, dx);
#endif
    return fmi2OK;
}
EXPORT fmi2Status fmi2GetEventIndicators(fmi2Component c, fmi2Real z[], size_t n) {
    if (n != NZ) return fmi2Error;
#ifdef FMI2_INDICATORS
    FMI2_INDICATORS((M *)c, z);
#else
    (void)c; (void)z;
#endif
    return fmi2OK;
}
EXPORT fmi2Status fmi2GetContinuousStates(fmi2Component c, fmi2Real x[], size_t n) {
    if (n != NX) return fmi2Error;
    memcpy(x, ((M *)c)->r, n * sizeof(double));
    return fmi2OK;
}
FMI2_UNIT_NOMINALS
