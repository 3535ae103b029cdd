/* ir/files.c — files that are never seen half-written, and locks that end
 * with the process holding them. Everything strata keeps (results indexes,
 * explorations' descriptions and reports, exports, the build cache) is
 * written through st_write_file, so that a full disk, a crash or a kill -9
 * leaves the old file or the new one, never a cut one. */
#include "ir.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The permissions a plain fopen would give a new file: 0666 less the
 * umask. umask() can only be read by setting it, which would race with
 * other threads creating files; /proc tells it without changing it. */
static mode_t new_file_mode(void) {
    mode_t mask = 022;
    FILE *f = fopen("/proc/self/status", "r");
    char line[128];
    while (f && fgets(line, sizeof line, f))
        if (!strncmp(line, "Umask:", 6)) {
            mask = (mode_t)strtoul(line + 6, NULL, 8);
            break;
        }
    if (f) fclose(f);
    return 0666 & ~mask;
}

static bool write_all(int fd, const char *text, size_t len) {
    while (len) {
        ssize_t n = write(fd, text, len);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            if (n == 0) errno = ENOSPC;
            return false;
        }
        text += n;
        len -= (size_t)n;
    }
    return true;
}

bool st_write_file(const char *path, const char *text, size_t len, st_err *err) {
    /* a fresh name beside it (mkstemp: O_EXCL, so no other writer's file
     * and no planted link is ever opened), written whole and synced, then
     * renamed over it: rename is atomic within a folder */
    size_t n = strlen(path);
    char *tmp = malloc(n + 16);
    if (!tmp) return st_fail_internal(err, "out of memory writing %s", path);
    const char *slash = strrchr(path, '/');
    size_t dir = slash ? (size_t)(slash - path) + 1 : 0;
    snprintf(tmp, n + 16, "%.*s.%s.XXXXXX", (int)dir, path, path + dir);
    int fd = mkstemp(tmp);
    int saved = errno;
    bool ok = fd >= 0;
    if (ok) {
        struct stat st;
        mode_t mode = stat(path, &st) == 0 ? st.st_mode & 07777 : new_file_mode();
        ok = fchmod(fd, mode) == 0 && write_all(fd, text, len) && fsync(fd) == 0;
        saved = errno;
        ok = close(fd) == 0 && ok;
        if (ok && rename(tmp, path) != 0) ok = false, saved = errno;
        if (!ok) unlink(tmp);
    }
    free(tmp);
    if (!ok) return st_fail(err, (st_loc){path, 0, 0}, "cannot write the file: %s", strerror(saved));
    /* the rename itself is durable once the folder is synced */
    char *folder = dir ? strndup(path, dir) : NULL;
    int dfd = open(folder ? folder : ".", O_RDONLY | O_CLOEXEC);
    if (dfd >= 0) {
        fsync(dfd);
        close(dfd);
    }
    free(folder);
    return true;
}

/* The holder's line: its pid and command (from /proc, where the library
 * has no argv). */
static void describe_holder(char *out, size_t cap) {
    int n = snprintf(out, cap, "pid %ld", (long)getpid());
    FILE *f = fopen("/proc/self/cmdline", "rb");
    if (!f || n < 0 || (size_t)n + 3 >= cap) {
        if (f) fclose(f);
        return;
    }
    size_t at = (size_t)n;
    out[at++] = ':';
    size_t got = fread(out + at + 1, 1, cap - at - 2, f);
    fclose(f);
    out[at++] = ' ';
    for (size_t i = 0; i < got; i++) {
        unsigned char c = (unsigned char)out[at + i];
        if (!c) out[at + i] = ' ';
        else if (c < 32 || c == 127) out[at + i] = '?';
    }
    at += got;
    while (at && out[at - 1] == ' ') at--;
    out[at] = 0;
}

bool st_lock_take(st_lock *l, const char *path, bool wait, st_err *err) {
    l->fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0666);
    if (l->fd < 0) return st_fail(err, (st_loc){path, 0, 0}, "cannot open the lock: %s", strerror(errno));
    /* a POSIX record lock, not flock(): it belongs to this process alone,
     * so the children an exploration forks do not keep holding it after a
     * kill -9 of their parent, and it ends with the process however it ends */
    struct flock whole = {.l_type = F_WRLCK, .l_whence = SEEK_SET};
    int rc;
    do rc = fcntl(l->fd, wait ? F_SETLKW : F_SETLK, &whole);
    while (rc != 0 && errno == EINTR);
    if (rc != 0) {
        int why = errno;
        char holder[512] = {0};
        ssize_t got = pread(l->fd, holder, sizeof holder - 1, 0);
        close(l->fd);
        l->fd = -1;
        holder[got > 0 ? got : 0] = 0;
        holder[strcspn(holder, "\n")] = 0;
        if (why == EACCES || why == EAGAIN)
            return st_fail(err, (st_loc){path, 0, 0}, "in use by another strata (%s); wait for it, or stop it",
                           holder[0] ? holder : "its pid is not written yet");
        return st_fail(err, (st_loc){path, 0, 0}, "cannot lock: %s", strerror(why));
    }
    char me[600];
    describe_holder(me, sizeof me - 1);
    strcat(me, "\n");
    /* who holds it, for the message of the next one that tries */
    if (ftruncate(l->fd, 0) != 0 || pwrite(l->fd, me, strlen(me), 0) < 0) {
        /* the lock holds without its note */
    }
    return true;
}

void st_lock_release(st_lock *l) {
    if (l->fd >= 0) close(l->fd); /* closing the file ends the lock */
    l->fd = -1;
}
