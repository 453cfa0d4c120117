/*
 * The fmi2CallbackLogger handed to every FMU instance.
 *
 * FMI 2.0 declares the logger variadic: `message` is a printf format and the arguments follow.
 * Rust cannot define variadic functions on stable, so this shim formats the message and passes
 * the finished text to a non-variadic sink written in Rust.
 *
 * The format is the FMU's, and FMUs get it wrong: a message holding "100%n" or "%s" as text,
 * with no argument behind it, is a common bug. Handing such a message to vsnprintf lets the FMU
 * make cosim write through (%n) or read from (%s) whatever happens to be in the argument slot.
 * So the shim interprets the format itself, one conversion at a time (each formatted by
 * snprintf with the single argument it takes), and guarantees, whatever the format:
 *   - nothing is ever written through an argument: %n is printed as written, its argument skipped;
 *   - a %s argument is read only where the memory is readable (checked page by page with
 *     process_vm_readv on our own process, or a pipe where that call is refused), at most
 *     COSIM_LOG_MAX_STRING bytes of it; an unreadable pointer prints "(unreadable)";
 *   - at most COSIM_LOG_MAX_ARGS arguments are taken from the va_list (C cannot tell how many the
 *     FMU passed; with too few, the missing ones are whatever the registers and the caller's stack
 *     hold: printed as garbage numbers, never dereferenced unchecked); later conversions are
 *     printed as written;
 *   - positional (%1$d), wide (%ls, %lc) and unknown conversions are printed as written, and stop
 *     the taking of arguments (their types are unknown);
 *   - the text is at most COSIM_LOG_MAX_TEXT bytes (cut with a note).
 *
 * The sink is found through the componentEnvironment: the importer points it at a struct whose
 * first member is the sink (struct cosim_log_env below, `InstanceEnv` on the Rust side).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#define COSIM_LOG_MAX_ARGS 32
#define COSIM_LOG_MAX_STRING (1u << 20)
#define COSIM_LOG_MAX_TEXT (4u << 20)
#define COSIM_LOG_PAGE 4096u

typedef void (*cosim_log_sink)(void *env, const char *instance_name, int status, const char *category,
                               const char *message);

/* The first member of the Rust `InstanceEnv` (#[repr(C)]). */
struct cosim_log_env {
    cosim_log_sink sink;
};

/* A growing text, cut at COSIM_LOG_MAX_TEXT. */
struct text {
    char *p;
    size_t len, cap;
    int cut, oom;
};

static void put(struct text *t, const char *s, size_t n) {
    if (t->cut || t->oom) return;
    if (t->len + n > COSIM_LOG_MAX_TEXT) {
        n = COSIM_LOG_MAX_TEXT - t->len;
        t->cut = 1;
    }
    if (t->len + n + 1 > t->cap) {
        size_t cap = t->cap ? t->cap : 256;
        while (cap < t->len + n + 1) cap *= 2;
        char *p = realloc(t->p, cap);
        if (p == NULL) {
            t->oom = 1;
            return;
        }
        t->p = p;
        t->cap = cap;
    }
    memcpy(t->p + t->len, s, n);
    t->len += n;
    t->p[t->len] = '\0';
}

/* Copies up to `n` bytes at `src` into `dst` where readable, stopping at a NUL; returns the bytes
 * copied (without a NUL), or -1 when the first byte is not readable. */
static long copy_readable(char *dst, const char *src, size_t n) {
    size_t done = 0;
    int pipefd[2] = {-1, -1};
    int use_pipe = 0;
    while (done < n) {
        uintptr_t at = (uintptr_t)(src + done);
        size_t chunk = COSIM_LOG_PAGE - (size_t)(at % COSIM_LOG_PAGE);
        if (chunk > n - done) chunk = n - done;
        ssize_t got = -1;
        if (!use_pipe) {
            struct iovec l = {dst + done, chunk}, r = {(void *)at, chunk};
            got = process_vm_readv(getpid(), &l, 1, &r, 1, 0);
            if (got < 0 && (errno == ENOSYS || errno == EPERM)) {
                if (pipe2(pipefd, O_CLOEXEC | O_NONBLOCK) != 0) break;
                use_pipe = 1;
            }
        }
        if (use_pipe) {
            /* write() copies from our memory and fails with EFAULT where it is not readable. */
            got = write(pipefd[1], (const void *)at, chunk);
            if (got > 0 && read(pipefd[0], dst + done, (size_t)got) != got) got = -1;
        }
        if (got <= 0) break;
        void *nul = memchr(dst + done, '\0', (size_t)got);
        if (nul != NULL) {
            done = (size_t)((char *)nul - dst);
            if (use_pipe) {
                close(pipefd[0]);
                close(pipefd[1]);
            }
            return (long)done;
        }
        done += (size_t)got;
        if ((size_t)got < chunk) break;
    }
    if (use_pipe) {
        close(pipefd[0]);
        close(pipefd[1]);
    }
    return done == 0 && n > 0 ? -1 : (long)done;
}

/* printf-formats one value with the conversion `spec` (NUL-terminated) into `t`. */
#define PUT_FORMATTED(t, spec, value)                                                                              \
    do {                                                                                                           \
        char small_[128];                                                                                          \
        int n_ = snprintf(small_, sizeof small_, spec, value);                                                     \
        if (n_ >= 0 && (size_t)n_ < sizeof small_) {                                                               \
            put(t, small_, (size_t)n_);                                                                            \
        } else if (n_ >= 0) {                                                                                      \
            size_t want_ = (size_t)n_ + 1;                                                                         \
            if (want_ > COSIM_LOG_MAX_TEXT + 1) want_ = COSIM_LOG_MAX_TEXT + 1;                                    \
            char *big_ = malloc(want_);                                                                            \
            if (big_ != NULL) {                                                                                    \
                snprintf(big_, want_, spec, value);                                                                \
                put(t, big_, strlen(big_));                                                                        \
                free(big_);                                                                                        \
            }                                                                                                      \
        }                                                                                                          \
    } while (0)

/* Formats `format` with `args` under the guarantees above; returns a malloc'd text or NULL. */
static char *format_safely(const char *format, va_list args) {
    struct text t = {NULL, 0, 0, 0, 0};
    int saved_errno = errno;
    int taken = 0, stop_taking = 0;
    const char *p = format;
    put(&t, "", 0);
    while (*p != '\0' && !t.cut && !t.oom) {
        const char *pct = strchr(p, '%');
        if (pct == NULL) {
            put(&t, p, strlen(p));
            break;
        }
        put(&t, p, (size_t)(pct - p));
        const char *q = pct + 1;
        if (*q == '%') {
            put(&t, "%", 1);
            p = q + 1;
            continue;
        }
        /* %[flags][width][.precision][length]conversion; `*` becomes the number it takes. */
        char spec[96];
        size_t sl = 0;
        int literal = stop_taking, width_arg = 0, prec_arg = 0, width = 0, prec = 0;
        spec[sl++] = '%';
        while (*q != '\0' && strchr("-+ #0'", *q) != NULL && sl < 32) spec[sl++] = *q++;
        if (*q == '*') {
            width_arg = 1;
            q++;
        } else {
            const char *digits = q;
            while (*q >= '0' && *q <= '9' && sl < 48) spec[sl++] = *q++;
            if (q - digits > 5) literal = 1; /* a width of a million spaces is not a message */
        }
        if (*q == '$') literal = 1; /* positional arguments: not interpreted */
        if (*q == '.') {
            q++;
            if (*q == '*') {
                prec_arg = 1;
                q++;
            } else {
                const char *digits = q;
                spec[sl++] = '.';
                while (*q >= '0' && *q <= '9' && sl < 64) spec[sl++] = *q++;
                if (q - digits > 5) literal = 1;
            }
        }
        char length[3] = {0, 0, 0};
        if (*q == 'h' || *q == 'l') {
            length[0] = *q++;
            if (*q == length[0]) length[1] = *q++;
        } else if (*q != '\0' && strchr("Ljztq", *q) != NULL) {
            length[0] = *q++;
        }
        char conv = *q;
        if (conv == '\0' || (*q >= '0' && *q <= '9') || *q == '$' || *q == '.' || *q == '*') literal = 1;
        int args_needed = width_arg + prec_arg + (strchr("diouxXeEfFgGaAcspn", conv) != NULL ? 1 : 0);
        if (strchr("diouxXeEfFgGaAcspnm", conv) == NULL) literal = 1;
        if (!literal && taken + args_needed > COSIM_LOG_MAX_ARGS) literal = 1;
        if (literal) {
            /* Printed as written; arguments are no longer taken (their types are unknown). */
            if (conv != 'm') stop_taking = 1;
            size_t n = conv == '\0' ? strlen(pct) : (size_t)(q + 1 - pct);
            put(&t, pct, n);
            p = pct + n;
            continue;
        }
        /* A width or precision taken from the arguments beyond 99999 is garbage (too few
         * arguments, most likely): left out rather than formatted into megabytes. */
        if (width_arg) {
            width = va_arg(args, int);
            taken++;
            if (width >= -99999 && width <= 99999) sl += (size_t)snprintf(spec + sl, sizeof spec - sl, "%d", width);
        }
        if (prec_arg) {
            prec = va_arg(args, int);
            taken++;
            if (prec >= 0 && prec <= 99999) sl += (size_t)snprintf(spec + sl, sizeof spec - sl, ".%d", prec);
        }
        for (int i = 0; length[i] != 0 && sl < sizeof spec - 3; i++) spec[sl++] = length[i];
        spec[sl++] = conv;
        spec[sl] = '\0';
        p = q + 1;
        switch (conv) {
        case 'd':
        case 'i':
            taken++;
            if (length[0] == 'l' && length[1] == 'l') PUT_FORMATTED(&t, spec, va_arg(args, long long));
            else if (length[0] == 'l') PUT_FORMATTED(&t, spec, va_arg(args, long));
            else if (length[0] == 'q') PUT_FORMATTED(&t, spec, va_arg(args, long long));
            else if (length[0] == 'j') PUT_FORMATTED(&t, spec, va_arg(args, intmax_t));
            else if (length[0] == 'z') PUT_FORMATTED(&t, spec, va_arg(args, ssize_t));
            else if (length[0] == 't') PUT_FORMATTED(&t, spec, va_arg(args, ptrdiff_t));
            else PUT_FORMATTED(&t, spec, va_arg(args, int));
            break;
        case 'o':
        case 'u':
        case 'x':
        case 'X':
            taken++;
            if (length[0] == 'l' && length[1] == 'l') PUT_FORMATTED(&t, spec, va_arg(args, unsigned long long));
            else if (length[0] == 'l') PUT_FORMATTED(&t, spec, va_arg(args, unsigned long));
            else if (length[0] == 'q') PUT_FORMATTED(&t, spec, va_arg(args, unsigned long long));
            else if (length[0] == 'j') PUT_FORMATTED(&t, spec, va_arg(args, uintmax_t));
            else if (length[0] == 'z') PUT_FORMATTED(&t, spec, va_arg(args, size_t));
            else if (length[0] == 't') PUT_FORMATTED(&t, spec, va_arg(args, ptrdiff_t));
            else PUT_FORMATTED(&t, spec, va_arg(args, unsigned int));
            break;
        case 'e':
        case 'E':
        case 'f':
        case 'F':
        case 'g':
        case 'G':
        case 'a':
        case 'A':
            taken++;
            if (length[0] == 'L') PUT_FORMATTED(&t, spec, va_arg(args, long double));
            else PUT_FORMATTED(&t, spec, va_arg(args, double));
            break;
        case 'c':
            taken++;
            if (length[0] == 'l') {
                (void)va_arg(args, int); /* wint_t: printed as written */
                put(&t, pct, (size_t)(p - pct));
            } else {
                PUT_FORMATTED(&t, spec, va_arg(args, int));
            }
            break;
        case 'p':
            taken++;
            PUT_FORMATTED(&t, spec, va_arg(args, void *));
            break;
        case 'n':
            /* Never written through: printed as written, its argument skipped. */
            taken++;
            (void)va_arg(args, void *);
            put(&t, pct, (size_t)(p - pct));
            break;
        case 'm':
            PUT_FORMATTED(&t, "%s", strerror(saved_errno));
            break;
        case 's': {
            taken++;
            const char *s = va_arg(args, const char *);
            if (length[0] == 'l') {
                put(&t, pct, (size_t)(p - pct)); /* wide strings: printed as written */
                break;
            }
            if (s == NULL) {
                PUT_FORMATTED(&t, spec, "(null)");
                break;
            }
            size_t limit = prec_arg ? (prec >= 0 ? (size_t)prec : COSIM_LOG_MAX_STRING) : COSIM_LOG_MAX_STRING;
            const char *dot = strchr(spec, '.');
            if (!prec_arg && dot != NULL) limit = (size_t)strtoul(dot + 1, NULL, 10);
            if (limit > COSIM_LOG_MAX_STRING) limit = COSIM_LOG_MAX_STRING;
            char *copy = malloc(limit + 1);
            if (copy == NULL) break;
            long n = copy_readable(copy, s, limit);
            if (n < 0) {
                PUT_FORMATTED(&t, spec, "(unreadable)");
            } else {
                copy[n] = '\0';
                PUT_FORMATTED(&t, spec, copy);
            }
            free(copy);
            break;
        }
        default:
            break;
        }
    }
    if (t.cut) {
        t.cut = 0;
        static const char note[] = " [message cut at 4 MiB]";
        t.len = t.len > sizeof note ? t.len - sizeof note : 0;
        put(&t, note, sizeof note - 1);
    }
    if (t.oom) {
        free(t.p);
        return NULL;
    }
    return t.p;
}

void cosim_fmi2_logger(void *env, const char *instance_name, int status, const char *category,
                       const char *message, ...) {
    va_list args;
    const char *text;
    char *formatted;

    if (message == NULL) {
        message = "";
    }
    va_start(args, message);
    formatted = format_safely(message, args);
    va_end(args);
    /* Out of memory: the format itself, rather than nothing. */
    text = formatted != NULL ? formatted : message;

    const struct cosim_log_env *e = (const struct cosim_log_env *)env;
    if (e != NULL && e->sink != NULL) {
        e->sink(env, instance_name, status, category, text);
    } else {
        /* An FMU that does not pass back our componentEnvironment: still show the message. */
        fprintf(stderr, "[%s] %s: %s\n", instance_name ? instance_name : "?", category ? category : "", text);
    }
    free(formatted);
}
