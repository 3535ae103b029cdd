/* explore/child.h — work done in a child process (internal to explore/), so
 * that a variant that hangs or crashes is a status and not the end of the
 * exploration. The parent must not have opened OpenCL: drivers start
 * threads, and a fork keeps only the one that forked. */
#ifndef STRATA_EXPLORE_CHILD_H
#define STRATA_EXPLORE_CHILD_H

#include "explore.h"

#include <signal.h>
#include <sys/types.h>

typedef enum child_end {
    CHILD_RUNNING,
    CHILD_EXITED,   /* exit_code is valid */
    CHILD_SIGNALED, /* signal is valid */
    CHILD_TIMED_OUT /* killed at its deadline */
} child_end;

typedef struct child {
    pid_t pid;
    int fd;           /* the read end of its pipe, -1 once at its end */
    double started, deadline; /* seconds on the monotonic clock */
    double timeout_s;
    st_buf out;       /* what it wrote */
    child_end end;
    int exit_code, signal;
    void *data;       /* the caller's */
} child;

/* The monotonic clock in seconds. */
double child_now(void);
/* Start fn(data, fd) in a child process that exits when fn returns; what fn
 * writes to fd comes back in c->out. false (with err) when it cannot fork.
 * The child dies with this process (PR_SET_PDEATHSIG), ends itself
 * CHILD_GRACE_S after its deadline, and takes SIGINT and SIGTERM's default
 * actions. */
bool child_start(child *c, void (*fn)(void *data, int fd), void *data, double timeout_s, st_err *err);
/* The most children child_wait watches at once. */
enum { CHILD_MAX = ST_EXPLORE_MAX_JOBS };
/* Wait at most wait_s for any of the n (at most CHILD_MAX) children to make progress: read what
 * they wrote, reap those that ended, kill those past their deadline.
 * Returns the index of a child that has just ended, or -1. */
int child_wait(child *cs, size_t n, double wait_s);
/* Kill a running child now and reap it (its end: CHILD_TIMED_OUT). */
void child_kill(child *c);
/* Wait for c to end; false when *stop (when not NULL) is set, before or
 * as it ends: then the child is killed if it still runs. */
bool child_finish(child *c, const volatile sig_atomic_t *stop);
/* Seconds past its deadline after which a child ends itself (SIGALRM),
 * should its parent not be there to kill it. */
enum { CHILD_GRACE_S = 5 };
/* Write all of text to fd (the child's side). */
void child_write(int fd, const char *text, size_t len);
/* "was killed by signal 11 (Segmentation fault)", "exited with status 3", … */
void child_describe(const child *c, char *out, size_t cap);

#endif
