/* explore/child.c — work in a child process, with a pipe back and a deadline. */
#include "child.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

double child_now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

void child_write(int fd, const char *text, size_t len) {
    while (len) {
        ssize_t n = write(fd, text, len);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return; /* the parent is gone: nobody to tell */
        text += n;
        len -= (size_t)n;
    }
}

/* A child never outlives its parent, nor its deadline by much: a parent
 * killed with SIGKILL cannot kill its children, and a child spinning on a
 * hung kernel would otherwise spin on, orphaned, at full CPU. */
static void become_dependent(pid_t parent, double timeout_s) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(1); /* the parent died before the line above: nobody would notice it */
    /* the parent's handlers of these (the CLI's, which end an exploration
     * cleanly) are not the child's: an interrupt ends it outright */
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    /* its own deadline, a margin after the parent's (which kills it first
     * when it is there to): SIGALRM's default action ends the process */
    double own = timeout_s + CHILD_GRACE_S;
    alarm(own < 1 ? 1 : own > 1e9 ? 1000000000u : (unsigned)own + 1u);
}

bool child_start(child *c, void (*fn)(void *data, int fd), void *data, double timeout_s, st_err *err) {
    memset(c, 0, sizeof *c);
    c->fd = -1;
    int p[2];
    if (pipe(p) != 0) return st_fail(err, (st_loc){0}, "cannot make a pipe for a child process: %s", strerror(errno));
    fflush(NULL); /* nothing buffered may be written twice */
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid < 0) {
        close(p[0]);
        close(p[1]);
        return st_fail(err, (st_loc){0}, "cannot start a child process: %s", strerror(errno));
    }
    if (pid == 0) {
        close(p[0]);
        become_dependent(parent, timeout_s);
        fn(data, p[1]);
        close(p[1]);
        /* _exit: the parent's atexit handlers and buffers are the parent's */
        _exit(0);
    }
    close(p[1]);
    c->pid = pid;
    c->fd = p[0];
    c->started = child_now();
    c->deadline = c->started + timeout_s;
    c->timeout_s = timeout_s;
    c->end = CHILD_RUNNING;
    c->data = data;
    return true;
}

static void reap(child *c, bool block) {
    int status;
    pid_t r;
    do r = waitpid(c->pid, &status, block ? 0 : WNOHANG);
    while (r < 0 && errno == EINTR);
    if (r != c->pid) return;
    if (c->end == CHILD_TIMED_OUT) return;
    if (WIFSIGNALED(status)) {
        c->end = CHILD_SIGNALED;
        c->signal = WTERMSIG(status);
    } else {
        c->end = CHILD_EXITED;
        c->exit_code = WEXITSTATUS(status);
    }
}

int child_wait(child *cs, size_t n, double wait_s) {
    struct pollfd fds[CHILD_MAX];
    size_t idx[CHILD_MAX], m = 0;
    double now = child_now();
    for (size_t i = 0; i < n && m < CHILD_MAX; i++) {
        if (cs[i].end != CHILD_RUNNING) continue;
        if (now >= cs[i].deadline) { /* past its time: the kill is the status */
            kill(cs[i].pid, SIGKILL);
            cs[i].end = CHILD_TIMED_OUT;
            if (cs[i].fd >= 0) close(cs[i].fd);
            cs[i].fd = -1;
            reap(&cs[i], true);
            return (int)i;
        }
        if (cs[i].deadline - now < wait_s) wait_s = cs[i].deadline - now;
        fds[m] = (struct pollfd){.fd = cs[i].fd, .events = POLLIN};
        idx[m++] = i;
    }
    if (!m) return -1;
    int ready = poll(fds, (nfds_t)m, (int)(wait_s * 1000) + 1);
    if (ready <= 0) return -1;
    for (size_t k = 0; k < m; k++) {
        if (!(fds[k].revents & (POLLIN | POLLHUP | POLLERR))) continue;
        child *c = &cs[idx[k]];
        char buf[65536];
        ssize_t got = read(c->fd, buf, sizeof buf);
        if (got > 0) {
            st_buf_put(&c->out, buf, (size_t)got);
            continue;
        }
        if (got < 0 && errno == EINTR) continue;
        close(c->fd); /* end of file: it exited, or is about to */
        c->fd = -1;
        reap(c, true);
        return (int)idx[k];
    }
    return -1;
}

void child_kill(child *c) {
    if (c->end != CHILD_RUNNING) return;
    c->deadline = 0;
    child_wait(c, 1, 0);
}

bool child_finish(child *c, const volatile sig_atomic_t *stop) {
    while (c->end == CHILD_RUNNING && !(stop && *stop)) child_wait(c, 1, 1.0); /* a signal ends its poll early */
    child_kill(c);
    /* a child that ended as the interrupt came may have ended by it (^C
     * reaches the whole process group): its end is no outcome either */
    return !(stop && *stop);
}

void child_describe(const child *c, char *out, size_t cap) {
    switch (c->end) {
    case CHILD_SIGNALED: snprintf(out, cap, "was killed by signal %d (%s)", c->signal, strsignal(c->signal)); break;
    case CHILD_EXITED: snprintf(out, cap, "exited with status %d", c->exit_code); break;
    case CHILD_TIMED_OUT: snprintf(out, cap, "was killed at its time limit"); break;
    default: snprintf(out, cap, "still running"); break;
    }
}
