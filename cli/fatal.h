/* cli/fatal.h — a fatal signal while a plugin loads names the plugin
 * (internal to cli/: the library never prints). */
#ifndef STRATA_CLI_FATAL_H
#define STRATA_CLI_FATAL_H

#include <signal.h>

enum { FATAL_NSIGNALS = 5 };

/* The actions the guard replaced, put back by fatal_guard_end. */
typedef struct fatal_guard {
    struct sigaction saved[FATAL_NSIGNALS];
} fatal_guard;

/* From here to fatal_guard_end, SIGSEGV, SIGBUS, SIGILL, SIGFPE or SIGABRT
 * writes a line naming plugin_path to stderr, then ends the process with
 * that signal (its default action: the exit status and core dump are what
 * they would have been). */
void fatal_guard_begin(fatal_guard *g, const char *plugin_path);
void fatal_guard_end(fatal_guard *g);

#endif
