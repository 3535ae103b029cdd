/* cli/cpu_pinning.c — pin PoCL's CPU worker threads, one to a core, before
 * OpenCL is opened.
 *
 * Why: PoCL's pthread driver runs a kernel's work-groups on one worker
 * thread per core and leaves their placement to the kernel's scheduler,
 * which now and then puts two workers on one core for part of a launch.
 * A kernel that should take 4.4 ms then takes 6-9 ms in a third of the
 * runs: measured here (2 cores, a 20M-index histogram), the median of 21
 * runs ranged 4.5-8.5 ms across processes unpinned and 4.44-4.46 ms pinned
 * (POCL_AFFINITY=1, thread i on CPU i). An exploration that ranks variants
 * by such medians ranks noise; a user timing a kernel sees it too.
 *
 * When: only where the process may run on every online CPU and they are
 * numbered 0..n-1. PoCL pins by index, so under `taskset` or a cpuset it
 * would widen the mask the user set, or pin to a CPU it may not use. Never
 * over POCL_AFFINITY the user set, whatever its value. */
#define _GNU_SOURCE
#include "cli.h"

#include <stdlib.h>
#include <unistd.h>
#ifdef __linux__
#include <sched.h>
#endif

void pin_cpu_workers(void) {
#ifdef __linux__
    cpu_set_t allowed;
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    if (getenv("POCL_AFFINITY") || online < 1 || online > CPU_SETSIZE) return;
    if (sched_getaffinity(0, sizeof allowed, &allowed) != 0 || CPU_COUNT(&allowed) != online) return;
    for (long cpu = 0; cpu < online; cpu++)
        if (!CPU_ISSET(cpu, &allowed)) return;
    setenv("POCL_AFFINITY", "1", 0);
#endif
}
