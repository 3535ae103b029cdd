/* cli/cpu_pinning.c — pin PoCL's CPU worker threads, one to a core, before
 * OpenCL is opened.
 *
 * Why: PoCL's pthread driver runs a kernel's work-groups on one worker
 * thread per core and leaves their placement to the kernel's scheduler,
 * which now and then puts two workers on one core for part of a launch.
 * A kernel then takes up to twice its time in some runs, and the median of
 * many runs moves from process to process, where pinned (POCL_AFFINITY=1,
 * thread i on CPU i) it holds (docs/performance.md has the figures). An
 * exploration that ranks variants by such medians ranks noise; a user
 * timing a kernel sees it too.
 *
 * When: only where the process may run on every online CPU and they are
 * numbered 0..n-1. PoCL pins by index, so under `taskset` or a cpuset it
 * would widen the mask the user set, or pin to a CPU it may not use. Never
 * over POCL_AFFINITY the user set, whatever its value. `strata devices`
 * says which under PoCL's CPU device (cpu_pinning_state). */
#define _GNU_SOURCE
#include "cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#ifdef __linux__
#include <sched.h>
#endif

/* May this process run on every online CPU, and are they numbered 0..n-1? */
static bool every_cpu_is_ours(void) {
#ifdef __linux__
    cpu_set_t allowed;
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    if (online < 1 || online > CPU_SETSIZE) return false;
    if (sched_getaffinity(0, sizeof allowed, &allowed) != 0 || CPU_COUNT(&allowed) != online) return false;
    for (long cpu = 0; cpu < online; cpu++)
        if (!CPU_ISSET(cpu, &allowed)) return false;
    return true;
#else
    return false;
#endif
}

void pin_cpu_workers(void) {
    if (!getenv("POCL_AFFINITY") && every_cpu_is_ours()) setenv("POCL_AFFINITY", "1", 0);
}

const char *cpu_pinning_state(char *buf, size_t cap) {
    const char *setting = getenv("POCL_AFFINITY");
    if (setting && setting[0] == '1' && !setting[1]) return "pinned one to a core (POCL_AFFINITY=1)";
    if (setting) {
        snprintf(buf, cap, "not pinned (POCL_AFFINITY=%s)", setting);
        return buf;
    }
    return "not pinned: this process may not run on every online CPU (taskset or a cpuset), and PoCL pins by index";
}
