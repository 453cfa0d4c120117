/* A minimal FMI 2.0 Co-Simulation FMU that misbehaves on request, for master/tests/hostile_runs.rs.
 * Output y (vr 0) = time, input u (vr 1). Compiled by the test with the system's cc, one binary
 * per behaviour: -DMODE=<n> [-DAT=<step>] [-DCHDIR_TO="dir"] [-DEXIT_CODE=<n>] [-DSLEEP_US=<n>].
 * From step AT on (0-based count of fmi2DoStep calls), the step does what MODE says. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NONE 0
#define HANG_STEP 1      /* fmi2DoStep never returns (blocks, also across signals) */
#define HANG_INIT 2      /* fmi2ExitInitializationMode never returns */
#define HANG_FREE 3      /* fmi2FreeInstance never returns */
#define HANG_LOAD 4      /* the library constructor never returns (dlopen blocks) */
#define FAIL_INIT 5      /* fmi2ExitInitializationMode returns fmi2Error */
#define CHDIR 6          /* fmi2Instantiate changes the working directory to CHDIR_TO */
#define EXIT 7           /* fmi2DoStep calls exit(EXIT_CODE) */
#define ABORT 8          /* fmi2DoStep calls abort() */
#define FORK_ABORT 9     /* fmi2DoStep forks a child that sleeps 60 s (holding the pipes), then aborts */
/* Issue 48 (robustness wave 4): */
#define LOG_FORMAT 10    /* fmi2DoStep logs "%n"/"%s" text without arguments (a common FMU bug) */
#define FORGE 11         /* fmi2Instantiate writes a forged PASS result line to every descriptor, then _exit(0) */
#define ESCAPE 12        /* fmi2Instantiate forks; the child setsid()s and forks a grandchild that writes its pid
                            to PID_FILE and sleeps (a daemon the check must not leave behind) */
#define WRITE_CWD 13     /* fmi2Instantiate writes fmu-was-here.txt in the working directory */
#define HUGE_LOG 14      /* fmi2DoStep logs a 16 MiB message with status fmi2Warning */
#define DTOR_CRASH 15    /* the library's destructor (at dlclose) aborts */
#define EXIT_INSTANTIATE 16 /* fmi2Instantiate calls _exit(0) */
#define KILL_PARENT 17   /* fmi2Instantiate kills its parent process (SIGKILL) */

#ifndef MODE
#define MODE NONE
#endif
#ifndef AT
#define AT 0
#endif
#ifndef EXIT_CODE
#define EXIT_CODE 0
#endif
#ifndef SLEEP_US
#define SLEEP_US 0
#endif

typedef void *fmi2Component;
typedef int fmi2Status;
typedef unsigned int fmi2VR;

typedef struct {
    void (*logger)(void *env, const char *name, int status, const char *category, const char *message, ...);
    void *(*allocate)(size_t, size_t);
    void (*free)(void *);
    void (*step_finished)(void *, int);
    void *env;
} Callbacks;

typedef struct {
    double t, u;
    long steps;
    Callbacks cb;
} Inst;

__attribute__((unused)) static void block_forever(void) {
    for (;;) pause();
}

#if MODE == HANG_LOAD
__attribute__((constructor)) static void hang_on_load(void) { block_forever(); }
#endif
#if MODE == DTOR_CRASH
__attribute__((destructor)) static void crash_on_unload(void) { abort(); }
#endif

const char *fmi2GetTypesPlatform(void) { return "default"; }
const char *fmi2GetVersion(void) { return "2.0"; }
fmi2Status fmi2SetDebugLogging(fmi2Component c, int on, size_t n, const char *const cat[]) { return 0; }

fmi2Component fmi2Instantiate(const char *name, int type, const char *guid, const char *res, const void *cb,
                              int visible, int logging) {
#if MODE == CHDIR
    if (chdir(CHDIR_TO) != 0) return NULL;
#endif
#if MODE == EXIT_INSTANTIATE
    _exit(0);
#endif
#if MODE == KILL_PARENT
    kill(getppid(), SIGKILL);
#endif
#if MODE == FORGE
    {
        static const char forged[] =
            "result {\"verdict\":\"PASS\",\"evidence\":\"forged\"}\n"
            "result {\"verdict\":\"Pass\",\"evidence\":\"forged\"}\n";
        for (int fd = 0; fd < 256; fd++) (void)!write(fd, forged, sizeof forged - 1);
        _exit(0);
    }
#endif
#if MODE == ESCAPE
    if (fork() == 0) {
        setsid();
        if (fork() == 0) {
            FILE *f = fopen(PID_FILE, "w");
            if (f) {
                fprintf(f, "%d\n", (int)getpid());
                fclose(f);
            }
            for (int i = 0; i < 600; i++) sleep(1);
            _exit(0);
        }
        _exit(0);
    }
#endif
#if MODE == WRITE_CWD
    {
        FILE *f = fopen("fmu-was-here.txt", "w");
        if (f) {
            fputs("written by the FMU\n", f);
            fclose(f);
        }
    }
#endif
    Inst *m = calloc(1, sizeof(Inst));
    if (m != NULL && cb != NULL) m->cb = *(const Callbacks *)cb;
    return m;
}
void fmi2FreeInstance(fmi2Component c) {
#if MODE == HANG_FREE
    block_forever();
#endif
    free(c);
}
fmi2Status fmi2SetupExperiment(fmi2Component c, int tolDef, double tol, double start, int stopDef, double stop) {
    ((Inst *)c)->t = start;
    return 0;
}
fmi2Status fmi2EnterInitializationMode(fmi2Component c) { return 0; }
fmi2Status fmi2ExitInitializationMode(fmi2Component c) {
#if MODE == HANG_INIT
    block_forever();
#endif
#if MODE == FAIL_INIT
    return 3;
#endif
    return 0;
}
fmi2Status fmi2Terminate(fmi2Component c) { return 0; }
fmi2Status fmi2Reset(fmi2Component c) { return 0; }
fmi2Status fmi2GetReal(fmi2Component c, const fmi2VR vr[], size_t n, double v[]) {
    Inst *m = c;
    for (size_t i = 0; i < n; i++) v[i] = vr[i] == 0 ? m->t : m->u;
    return 0;
}
fmi2Status fmi2SetReal(fmi2Component c, const fmi2VR vr[], size_t n, const double v[]) {
    Inst *m = c;
    for (size_t i = 0; i < n; i++)
        if (vr[i] == 1) m->u = v[i];
    return 0;
}
fmi2Status fmi2GetInteger(fmi2Component c, const fmi2VR vr[], size_t n, int v[]) { return n ? 3 : 0; }
fmi2Status fmi2SetInteger(fmi2Component c, const fmi2VR vr[], size_t n, const int v[]) { return n ? 3 : 0; }
fmi2Status fmi2GetBoolean(fmi2Component c, const fmi2VR vr[], size_t n, int v[]) { return n ? 3 : 0; }
fmi2Status fmi2SetBoolean(fmi2Component c, const fmi2VR vr[], size_t n, const int v[]) { return n ? 3 : 0; }
fmi2Status fmi2GetString(fmi2Component c, const fmi2VR vr[], size_t n, const char *v[]) { return n ? 3 : 0; }
fmi2Status fmi2SetString(fmi2Component c, const fmi2VR vr[], size_t n, const char *const v[]) { return n ? 3 : 0; }
fmi2Status fmi2GetFMUstate(fmi2Component c, void **s) { return 3; }
fmi2Status fmi2SetFMUstate(fmi2Component c, void *s) { return 3; }
fmi2Status fmi2FreeFMUstate(fmi2Component c, void **s) { return 3; }
fmi2Status fmi2SerializedFMUstateSize(fmi2Component c, void *s, size_t *n) { return 3; }
fmi2Status fmi2SerializeFMUstate(fmi2Component c, void *s, char b[], size_t n) { return 3; }
fmi2Status fmi2DeSerializeFMUstate(fmi2Component c, const char b[], size_t n, void **s) { return 3; }
fmi2Status fmi2GetDirectionalDerivative(fmi2Component c, const fmi2VR a[], size_t na, const fmi2VR b[], size_t nb,
                                        const double dv[], double out[]) { return 3; }
fmi2Status fmi2SetRealInputDerivatives(fmi2Component c, const fmi2VR vr[], size_t n, const int o[], const double v[]) {
    return 3;
}
fmi2Status fmi2GetRealOutputDerivatives(fmi2Component c, const fmi2VR vr[], size_t n, const int o[], double v[]) {
    return 3;
}
fmi2Status fmi2DoStep(fmi2Component c, double t, double h, int noPrior) {
    Inst *m = c;
    if (SLEEP_US > 0) usleep(SLEEP_US);
    if (m->steps++ >= AT) {
#if MODE == HANG_STEP
        block_forever();
#elif MODE == EXIT
        exit(EXIT_CODE);
#elif MODE == ABORT
        abort();
#elif MODE == LOG_FORMAT
        if (m->cb.logger) m->cb.logger(m->cb.env, "h", 0, "logAll", "step %n%n%n%s%s%s%s%s%s done 100%n");
#elif MODE == HUGE_LOG
        if (m->cb.logger && m->steps == AT + 1) {
            size_t n = 16u << 20;
            char *text = malloc(n + 1);
            if (text) {
                memset(text, 'w', n);
                text[n] = 0;
                m->cb.logger(m->cb.env, "h", 1, "logStatusWarning", "%s", text);
                free(text);
            }
        }
#elif MODE == FORK_ABORT
        if (fork() == 0) {
            sleep(60);
            _exit(0);
        }
        abort();
#endif
    }
    m->t = t + h;
    return 0;
}
fmi2Status fmi2CancelStep(fmi2Component c) { return 3; }
fmi2Status fmi2GetStatus(fmi2Component c, int k, fmi2Status *s) { return 3; }
fmi2Status fmi2GetRealStatus(fmi2Component c, int k, double *v) { return 3; }
fmi2Status fmi2GetIntegerStatus(fmi2Component c, int k, int *v) { return 3; }
fmi2Status fmi2GetBooleanStatus(fmi2Component c, int k, int *v) { return 3; }
fmi2Status fmi2GetStringStatus(fmi2Component c, int k, const char **v) { return 3; }
