/*
 * The fmi2CallbackLogger handed to every FMU instance.
 *
 * FMI 2.0 declares the logger variadic: `message` is a printf format and the arguments follow.
 * Rust cannot define variadic functions on stable, so this shim formats the message with
 * vsnprintf (growing the buffer when the text is longer than the stack buffer) and passes the
 * finished text to a non-variadic sink written in Rust.
 *
 * The sink is found through the componentEnvironment: the importer points it at a struct whose
 * first member is the sink (struct cosim_log_env below, `InstanceEnv` on the Rust side).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

typedef void (*cosim_log_sink)(void *env, const char *instance_name, int status, const char *category,
                               const char *message);

/* The first member of the Rust `InstanceEnv` (#[repr(C)]). */
struct cosim_log_env {
    cosim_log_sink sink;
};

void cosim_fmi2_logger(void *env, const char *instance_name, int status, const char *category,
                       const char *message, ...) {
    char stack[1024];
    char *text = stack;
    char *heap = NULL;
    va_list args;
    int n;

    if (message == NULL) {
        message = "";
    }
    va_start(args, message);
    n = vsnprintf(stack, sizeof stack, message, args);
    va_end(args);
    if (n < 0) {
        /* An encoding error in the format: pass the format itself rather than nothing. */
        text = (char *)message;
    } else if ((size_t)n >= sizeof stack) {
        heap = malloc((size_t)n + 1);
        if (heap != NULL) {
            va_start(args, message);
            vsnprintf(heap, (size_t)n + 1, message, args);
            va_end(args);
            text = heap;
        }
        /* Out of memory: keep the truncated (NUL-terminated) stack text. */
    }

    const struct cosim_log_env *e = (const struct cosim_log_env *)env;
    if (e != NULL && e->sink != NULL) {
        e->sink(env, instance_name, status, category, text);
    } else {
        /* An FMU that does not pass back our componentEnvironment: still show the message. */
        fprintf(stderr, "[%s] %s: %s\n", instance_name ? instance_name : "?", category ? category : "", text);
    }
    free(heap);
}
