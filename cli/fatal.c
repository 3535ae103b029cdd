/* cli/fatal.c — naming the plugin that crashed strata while it was being
 * loaded. A plugin is code run in this process (its constructors, its
 * register function); one that dies there would end strata with a bare
 * signal. While a plugin loads, a handler of the fatal signals says which
 * plugin it was, then lets the signal end the process as it would have. */
#include "fatal.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static const int fatal_signals[FATAL_NSIGNALS] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT};

/* The one piece of static state in strata, and why: a signal handler has
 * no argument to carry data in, and may call only async-signal-safe
 * functions, so the message is composed before the plugin runs (by
 * fatal_guard_begin) and the handler only write(2)s it. */
static char fatal_message[2 * 4096 + 512]; /* the path, twice, and the words around it */
static size_t fatal_message_len;

static void say_and_die(int sig) {
    ssize_t ignored = write(STDERR_FILENO, fatal_message, fatal_message_len);
    (void)ignored;
    /* SA_RESETHAND put the default action back; the signal is blocked
     * while this runs, so it ends the process as soon as this returns */
    raise(sig);
}

void fatal_guard_begin(fatal_guard *g, const char *plugin_path) {
    int n = snprintf(fatal_message, sizeof fatal_message,
                     "strata: error: the plugin %s crashed strata while it was being loaded (a fatal signal in its "
                     "constructors or its register function); fix the plugin or leave out --plugin %s\n",
                     plugin_path, plugin_path);
    fatal_message_len = n < 0 ? 0 : (size_t)n < sizeof fatal_message ? (size_t)n : sizeof fatal_message - 1;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = say_and_die;
    sa.sa_flags = SA_RESETHAND;
    sigemptyset(&sa.sa_mask);
    for (int i = 0; i < FATAL_NSIGNALS; i++) sigaction(fatal_signals[i], &sa, &g->saved[i]);
}

void fatal_guard_end(fatal_guard *g) {
    for (int i = 0; i < FATAL_NSIGNALS; i++) sigaction(fatal_signals[i], &g->saved[i], NULL);
}
