/* The test models of me.c (FMI 2.0) and me3.c (FMI 3.0, ball and stair), over an array of reals
 * r (the value references are tests/mefmu/mod.rs's): -DMODEL=
 *   1 ball:      r0 h, r1 v (states), r2 der(h), r3 der(v), r4 g, r5 e; indicator h; a bounce
 *                (h <= 0, v < 0) sets h = 0, v = -e v (the continuous states change);
 *   2 stair:     r0 x (state), r1 der(x) = k, r2 k (discrete): k += 1 at every whole second
 *                (time events through the next event time);
 *   3 robertson: r0..r2 the concentrations (states), r3..r5 their derivatives (stiff);
 *   4 stop:      r0 x (state, x' = u - x), r1 der(x), r2 threshold, r3 u (input): once x falls
 *                below the threshold (`below`, set by the FMU's step event), the event update
 *                ends the simulation. */
#include <math.h>

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

/* What an event update did. */
typedef struct {
    int changed;      /* the continuous states changed */
    int next_defined; /* a time event at `next` */
    double next;
    int terminate;
} Update;

static Update update_model(M *m) {
    Update u = {0, 0, 0.0, 0};
#if MODEL == 1
    if (m->r[0] <= 0 && m->r[1] < 0) { m->r[0] = 0; m->r[1] = -m->r[5] * m->r[1]; u.changed = 1; }
#elif MODEL == 2
    double k = floor(m->time + 1e-9);
    if (k > m->r[2]) m->r[2] = k;
    u.next_defined = 1;
    u.next = m->r[2] + 1.0;
#elif MODEL == 4
    u.terminate = m->below;
#else
    (void)m;
#endif
    return u;
}

/* The NZ event indicators. */
static void indicators(M *m, double z[]) {
#if MODEL == 1
    z[0] = m->r[0];
#else
    (void)m; (void)z;
#endif
}
