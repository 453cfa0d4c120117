/* A small FMI 3.0 Co-Simulation FMU for the master's tests (master/tests/fmi3_cfmu.rs), built
 * at test time with the system's cc. Types and signatures as in fmi3FunctionTypes.h (FMI 3.0).
 *
 * Value references: 0 time, 1 u (Float64 input), 2 x (Float64 output, x' = u, explicit Euler),
 * 3 count (Int64 output: completed doSteps), 4 big (UInt64 parameter, start 5e9), 5 label
 * (String parameter), 6 small (Int8 parameter), 7 xf (Float32 output = (float)x), 8 positive
 * (Boolean output: x > 0.5), 9 early_allowed (Boolean output: earlyReturnAllowed of the
 * instantiation), 10 term_at (Float64 parameter: terminateSimulation at this time, if >= 0),
 * 11 blob (Binary parameter, start c0ffee, at most 16 bytes), 12 arr (Float64[3] output: (j + 1) x), 13 ain (Float64[2] input,
 * start 0.5 1.5), 14 flags (Boolean[2] output: x > 0, x > 1), 15 aout (Float64[2] output: 10 ain),
 * 16 bin_in (Binary input, start 0102, maxSize 8), 17 bin_out (Binary output: bin_in's bytes
 * reversed, then the low byte of count), 18 blob_arr (Binary[2] parameter: never called, the
 * master leaves Binary arrays out), 19 big_in (Int64 input, start 0), 20 big_echo (Int64 output = big_in),
 * 21 huge (UInt64 output = 2^63 + 1), 22 label_in (String input, start ""), 23 label_out (String output:
 * label "/" label_in), 24 label_len (Float64 output: the length of label_in).
 * -DALWAYS_EARLY: every step returns early at its midpoint, allowed or not.
 * -DEVENT_AT=k: step k sets eventHandlingNeeded. */
#include "fmi3_common.h"

typedef struct {
    double time, u, x, term_at, ain[2];
    int64_t count, big_in;
    uint64_t big;
    uint8_t blob[16], bin_in[8];
    size_t blob_n, bin_in_n;
    int8_t small;
    char label[64], label_in[64], label_out[130];
    bool early_allowed, terminated;
} State;

typedef struct {
    State s;
    void *env;
    Log log;
    uint8_t out[9]; /* bin_out, valid until the next call (as the standard allows) */
} Inst;

static void binary_starts(State *s) {
    s->blob[0] = 0xc0; s->blob[1] = 0xff; s->blob[2] = 0xee; s->blob_n = 3;
    s->bin_in[0] = 0x01; s->bin_in[1] = 0x02; s->bin_in_n = 2;
}

EXPORT void *fmi3InstantiateCoSimulation(const char *name, const char *token, const char *res, bool visible,
    bool logging, bool event_mode_used, bool early_return_allowed, const unsigned *req, size_t nreq, void *env,
    Log log, void *update) {
    if (strcmp(token, "{cfmu3}") != 0 || event_mode_used) return NULL;
    Inst *c = calloc(1, sizeof(Inst));
    c->env = env; c->log = log;
    c->s.big = 5000000000ULL; c->s.term_at = -1; c->s.small = 1;
    strcpy(c->s.label, "start");
    c->s.ain[0] = 0.5; c->s.ain[1] = 1.5;
    c->s.early_allowed = early_return_allowed;
    binary_starts(&c->s);
    return c;
}
EXPORT void *fmi3InstantiateModelExchange(void) { return NULL; }
EXPORT void *fmi3InstantiateScheduledExecution(void) { return NULL; }
FMI3_ENTER_INITIALIZATION(Inst, s.time)
FMI3_NOTHING(ExitInitializationMode)
FMI3_NOTHING(Terminate)
EXPORT S fmi3Reset(void *p) { Inst *c = p; bool e = c->s.early_allowed; memset(&c->s, 0, sizeof(State));
    c->s.big = 5000000000ULL; c->s.term_at = -1; c->s.small = 1; strcpy(c->s.label, "start"); c->s.early_allowed = e; binary_starts(&c->s); return OK; }

EXPORT S fmi3GetFloat64(void *p, const unsigned vr[], size_t n, double v[], size_t nv) {
    Inst *c = p; size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        switch (vr[i]) {
        case 0: v[k++] = c->s.time; break;
        case 1: v[k++] = c->s.u; break;
        case 2: v[k++] = c->s.x; break;
        case 10: v[k++] = c->s.term_at; break;
        case 12: for (int j = 0; j < 3; j++) v[k++] = (j + 1) * c->s.x; break;
        case 13: v[k++] = c->s.ain[0]; v[k++] = c->s.ain[1]; break;
        case 15: v[k++] = 10 * c->s.ain[0]; v[k++] = 10 * c->s.ain[1]; break;
        case 24: v[k++] = (double)strlen(c->s.label_in); break;
        default: CHECK(0);
        }
    }
    CHECK(k == nv);
    return OK;
}
EXPORT S fmi3SetFloat64(void *p, const unsigned vr[], size_t n, const double v[], size_t nv) {
    Inst *c = p;
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (vr[i] == 1) c->s.u = v[k++]; else if (vr[i] == 10) c->s.term_at = v[k++];
        else if (vr[i] == 13) { c->s.ain[0] = v[k++]; c->s.ain[1] = v[k++]; } else CHECK(0);
    }
    CHECK(k == nv);
    return OK;
}
EXPORT S fmi3GetFloat32(void *p, const unsigned vr[], size_t n, float v[], size_t nv) {
    Inst *c = p;
    for (size_t i = 0; i < n; i++) { CHECK(vr[i] == 7); v[i] = (float)c->s.x; }
    return OK;
}
EXPORT S fmi3SetFloat32(void *p, const unsigned vr[], size_t n, const float v[], size_t nv) { Inst *c = p; CHECK(n == 0); return OK; }
EXPORT S fmi3GetInt64(void *p, const unsigned vr[], size_t n, int64_t v[], size_t nv) {
    Inst *c = p;
    for (size_t i = 0; i < n; i++) {
        if (vr[i] == 3) v[i] = c->s.count; else if (vr[i] == 19 || vr[i] == 20) v[i] = c->s.big_in; else CHECK(0);
    }
    return OK;
}
EXPORT S fmi3SetInt64(void *p, const unsigned vr[], size_t n, const int64_t v[], size_t nv) {
    Inst *c = p;
    for (size_t i = 0; i < n; i++) { CHECK(vr[i] == 19); c->s.big_in = v[i]; }
    return OK;
}
EXPORT S fmi3GetUInt64(void *p, const unsigned vr[], size_t n, uint64_t v[], size_t nv) {
    Inst *c = p;
    for (size_t i = 0; i < n; i++) {
        if (vr[i] == 4) v[i] = c->s.big; else if (vr[i] == 21) v[i] = 9223372036854775809ULL; else CHECK(0);
    }
    return OK;
}
EXPORT S fmi3SetUInt64(void *p, const unsigned vr[], size_t n, const uint64_t v[], size_t nv) {
    Inst *c = p;
    for (size_t i = 0; i < n; i++) { CHECK(vr[i] == 4); c->s.big = v[i]; }
    return OK;
}
EXPORT S fmi3GetInt8(void *p, const unsigned vr[], size_t n, int8_t v[], size_t nv) {
    Inst *c = p;
    for (size_t i = 0; i < n; i++) { CHECK(vr[i] == 6); v[i] = c->s.small; }
    return OK;
}
EXPORT S fmi3SetInt8(void *p, const unsigned vr[], size_t n, const int8_t v[], size_t nv) {
    Inst *c = p;
    for (size_t i = 0; i < n; i++) { CHECK(vr[i] == 6); c->s.small = v[i]; }
    return OK;
}
NONE(uint8_t, UInt8)
NONE(int16_t, Int16)
NONE(uint16_t, UInt16)
NONE(int32_t, Int32)
NONE(uint32_t, UInt32)
EXPORT S fmi3GetBoolean(void *p, const unsigned vr[], size_t n, bool v[], size_t nv) {
    Inst *c = p; size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (vr[i] == 8) v[k++] = c->s.x > 0.5; else if (vr[i] == 9) v[k++] = c->s.early_allowed;
        else if (vr[i] == 14) { v[k++] = c->s.x > 0; v[k++] = c->s.x > 1; } else CHECK(0);
    }
    CHECK(k == nv);
    return OK;
}
EXPORT S fmi3SetBoolean(void *p, const unsigned vr[], size_t n, const bool v[], size_t nv) { Inst *c = p; CHECK(n == 0); return OK; }
EXPORT S fmi3GetString(void *p, const unsigned vr[], size_t n, const char *v[], size_t nv) {
    Inst *c = p;
    for (size_t i = 0; i < n; i++) {
        if (vr[i] == 5) v[i] = c->s.label;
        else if (vr[i] == 22) v[i] = c->s.label_in;
        else if (vr[i] == 23) {
            strcpy(c->s.label_out, c->s.label); strcat(c->s.label_out, "/"); strcat(c->s.label_out, c->s.label_in);
            v[i] = c->s.label_out;
        } else CHECK(0);
    }
    return OK;
}
EXPORT S fmi3SetString(void *p, const unsigned vr[], size_t n, const char *const v[], size_t nv) {
    Inst *c = p;
    for (size_t i = 0; i < n; i++) {
        CHECK((vr[i] == 5 || vr[i] == 22) && strlen(v[i]) < 63);
        strcpy(vr[i] == 5 ? c->s.label : c->s.label_in, v[i]);
    }
    return OK;
}
EXPORT S fmi3GetBinary(void *p, const unsigned vr[], size_t n, size_t sz[], const uint8_t *v[], size_t nv) {
    Inst *c = p;
    CHECK(n == nv);
    for (size_t i = 0; i < n; i++) {
        if (vr[i] == 11) { sz[i] = c->s.blob_n; v[i] = c->s.blob; }
        else if (vr[i] == 16) { sz[i] = c->s.bin_in_n; v[i] = c->s.bin_in; }
        else if (vr[i] == 17) {
            size_t m = c->s.bin_in_n;
            for (size_t j = 0; j < m; j++) c->out[j] = c->s.bin_in[m - 1 - j];
            c->out[m] = (uint8_t)c->s.count;
            sz[i] = m + 1; v[i] = c->out;
#ifdef BIN_OUT_SIZE /* a hostile FMU (issue 48 item 7): a size it does not have */
            if (c->s.count > 0) sz[i] = (size_t)BIN_OUT_SIZE;
#endif
#ifdef BIN_OUT_NULL /* ... or a NULL pointer with a nonzero size */
            if (c->s.count > 0) v[i] = NULL;
#endif
        } else CHECK(0);
    }
    return OK;
}
EXPORT S fmi3SetBinary(void *p, const unsigned vr[], size_t n, const size_t sz[], const uint8_t *const v[], size_t nv) {
    Inst *c = p;
    CHECK(n == nv);
    for (size_t i = 0; i < n; i++) {
        if (vr[i] == 11 && sz[i] <= 16) { memcpy(c->s.blob, v[i], sz[i]); c->s.blob_n = sz[i]; }
        else if (vr[i] == 16 && sz[i] <= 8) { memcpy(c->s.bin_in, v[i], sz[i]); c->s.bin_in_n = sz[i]; }
        else CHECK(0);
    }
    return OK;
}

FMI3_STATE_COPIES

EXPORT S fmi3DoStep(void *p, double t, double h, bool nsp, bool *event, bool *terminate, bool *early, double *last) {
    Inst *c = p;
    *event = false; *terminate = false; *early = false;
#ifdef ALWAYS_EARLY
    c->s.x += 0.5 * h * c->s.u; c->s.time = t + 0.5 * h; *early = true; *last = c->s.time; return OK;
#endif
    if (c->s.term_at >= 0 && t + h >= c->s.term_at - 1e-12) {
        double dt = c->s.term_at - t;
        c->s.x += dt * c->s.u; c->s.time = c->s.term_at; c->s.count++;
        *terminate = true; *last = c->s.term_at;
        say(c, OK, "terminating");
        return OK;
    }
    c->s.x += h * (c->s.u + c->s.ain[0] - 0.5);
    c->s.time = t + h;
    c->s.count++;
#ifdef EVENT_AT
    if (c->s.count == EVENT_AT) *event = true;
#endif
    *last = c->s.time;
    return OK;
}

/* The rest of the FMI 3.0 API, never called here (no event mode, clocks, Model Exchange or
 * configuration mode). */
STUB(GetOutputDerivatives) STUB(ActivateModelPartition) STUB(EnterEventMode) STUB(EnterStepMode)
STUB(UpdateDiscreteStates) STUB(GetDirectionalDerivative)
FMI3_STUB_MODEL_EXCHANGE
FMI3_STUB_CONFIGURATION
FMI3_STUB_EVALUATION
FMI3_STUB_CLOCKS
