/* ir/files.c — files read only when they are files, files that are never
 * seen half-written, and locks that end with the process holding them.
 * Everything strata reads (programs, .npy inputs, explorations, results,
 * records, plugins, the build cache) is opened through st_open_regular, so
 * that a FIFO or a device put where a file should be is refused, never
 * waited on. Everything strata keeps (results indexes, explorations'
 * descriptions and reports, exports, the build cache) is written through
 * st_write_file, so that a full disk, a crash or a kill -9 leaves the old
 * file or the new one, never a cut one. */
/* renameat2's RENAME_EXCHANGE (glibc 2.28, Linux 3.15): a folder swapped
 * for another in one step */
#define _GNU_SOURCE
#include "ir.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The process's umask. umask() can only be read by setting it, which
 * would race with other threads creating files; /proc tells it without
 * changing it. A new file gets 0666 less it, as fopen would give; a new
 * folder 0777 less it, as mkdir would. */
static mode_t current_umask(void) {
    mode_t mask = 022;
    FILE *f = fopen("/proc/self/status", "r");
    char line[128];
    while (f && fgets(line, sizeof line, f))
        if (!strncmp(line, "Umask:", 6)) {
            mask = (mode_t)strtoul(line + 6, NULL, 8);
            break;
        }
    if (f) fclose(f);
    return mask;
}

/* The name of a fresh file or folder beside path: ".NAME.XXXXXX" in
 * path's folder, for mkstemp or mkdtemp; false when it does not fit. */
static bool name_beside(const char *path, char *tmp, size_t cap) {
    const char *slash = strrchr(path, '/');
    size_t dir = slash ? (size_t)(slash - path) + 1 : 0;
    int n = snprintf(tmp, cap, "%.*s.%s.XXXXXX", (int)dir, path, path + dir);
    return n >= 0 && (size_t)n < cap;
}

/* path's folder synced: the renames in it are durable */
static void sync_folder_of(const char *path) {
    const char *slash = strrchr(path, '/');
    char *folder = slash ? strndup(path, (size_t)(slash - path) + 1) : NULL;
    int dfd = open(folder ? folder : ".", O_RDONLY | O_CLOEXEC);
    if (dfd >= 0) {
        fsync(dfd);
        close(dfd);
    }
    free(folder);
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


/* ---- reading ---- */

/* What a file of this mode is, for the message that refuses it. */
static const char *kind_of(mode_t mode) {
    if (S_ISDIR(mode)) return "a directory";
    if (S_ISFIFO(mode)) return "a FIFO (a named pipe)";
    if (S_ISCHR(mode)) return "a character device";
    if (S_ISBLK(mode)) return "a block device";
    if (S_ISSOCK(mode)) return "a socket";
    return "something else";
}

int st_open_regular(const char *path, int flags, bool *absent, st_err *err) {
    if (absent) *absent = false;
    /* O_NONBLOCK: a FIFO without a writer (or, for writing, without a
     * reader), or a device that waits for a carrier, opens or fails at
     * once; then the descriptor's own fstat decides, so nothing can be
     * put at path between a check and the open */
    int fd;
    do fd = open(path, flags | O_NONBLOCK | O_NOCTTY | O_CLOEXEC, 0666);
    while (fd < 0 && errno == EINTR);
    if (fd < 0) {
        int why = errno;
        if (absent) *absent = why == ENOENT;
        if (why == EISDIR) return st_fail(err, (st_loc){path, 0, 0}, "is a directory, not a regular file"), -1;
        /* for writing, a FIFO without a reader or a device without one */
        if (why == ENXIO)
            return st_fail(err, (st_loc){path, 0, 0}, "is a FIFO (a named pipe) or a device, not a regular file"), -1;
        return st_fail(err, (st_loc){path, 0, 0}, "cannot %s the file: %s",
                       (flags & O_ACCMODE) == O_RDONLY ? "read" : "open", strerror(why)),
               -1;
    }
    struct stat st;
    if (fstat(fd, &st) != 0) {
        int why = errno;
        close(fd);
        return st_fail(err, (st_loc){path, 0, 0}, "cannot open the file: %s", strerror(why)), -1;
    }
    if (!S_ISREG(st.st_mode)) {
        close(fd);
        return st_fail(err, (st_loc){path, 0, 0}, "is %s, not a regular file: strata %s only regular files",
                       kind_of(st.st_mode), (flags & O_ACCMODE) == O_RDONLY ? "reads" : "writes"),
               -1;
    }
    /* a regular file never blocks; the flag goes, so that it reads as any file does */
    int now = fcntl(fd, F_GETFL);
    if (now != -1) fcntl(fd, F_SETFL, now & ~O_NONBLOCK);
    return fd;
}

/* "16 MiB", "1 GiB": a limit as people read it. */
static void size_text(size_t bytes, char *out, size_t cap) {
    if (bytes >= ((size_t)1 << 30) && bytes % ((size_t)1 << 30) == 0) snprintf(out, cap, "%zu GiB", bytes >> 30);
    else if (bytes >= ((size_t)1 << 20) && bytes % ((size_t)1 << 20) == 0) snprintf(out, cap, "%zu MiB", bytes >> 20);
    else snprintf(out, cap, "%zu bytes", bytes);
}

static char *too_large(const char *path, size_t max, const char *kind, st_err *err) {
    char limit[32];
    size_text(max, limit, sizeof limit);
    st_fail(err, (st_loc){path, 0, 0}, "is larger than %s, the most strata reads of %s", limit, kind);
    return NULL;
}

char *st_read_file_if_any(const char *path, size_t max, const char *kind, size_t *len, bool *absent, st_err *err) {
    int fd = st_open_regular(path, O_RDONLY, absent, err);
    if (fd < 0) return NULL;
    struct stat st;
    /* its size is known before reading; a file that grows meanwhile is
     * read up to the limit and no further */
    if (fstat(fd, &st) == 0 && (uint64_t)st.st_size > max) {
        close(fd);
        return too_large(path, max, kind, err);
    }
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap + 1);
    bool over = false, failed = false;
    while (buf) {
        ssize_t got = read(fd, buf + n, cap - n);
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0) {
            failed = got < 0;
            break;
        }
        n += (size_t)got;
        if (n < cap) continue;
        if (n > max) {
            over = true;
            break;
        }
        size_t next = cap > max / 2 ? max + 1 : 2 * cap; /* one byte past the limit tells a longer file */
        char *bigger = realloc(buf, next + 1);
        if (!bigger) free(buf);
        buf = bigger;
        cap = next;
    }
    int why = errno;
    over = over || n > max; /* a limit below the first buffer's size */
    close(fd);
    if (over) {
        free(buf);
        return too_large(path, max, kind, err);
    }
    if (!buf) return st_fail_internal(err, "out of memory reading %s", path), NULL;
    if (failed) {
        free(buf);
        return st_fail(err, (st_loc){path, 0, 0}, "cannot read the file: %s", strerror(why)), NULL;
    }
    buf[n] = 0;
    *len = n;
    return buf;
}

char *st_read_file_at_most(const char *path, size_t max, const char *kind, size_t *len, st_err *err) {
    return st_read_file_if_any(path, max, kind, len, NULL, err);
}

char *st_read_file(const char *path, size_t *len, st_err *err) {
    return st_read_file_at_most(path, ST_FILE_MAX, "a file", len, err);
}

/* ---- writing ---- */

bool st_write_file(const char *path, const char *text, size_t len, st_err *err) {
    /* a fresh name beside it (mkstemp: O_EXCL, so no other writer's file
     * and no planted link is ever opened), written whole and synced, then
     * renamed over it: rename is atomic within a folder */
    size_t cap = strlen(path) + 16;
    char *tmp = malloc(cap);
    if (!tmp) return st_fail_internal(err, "out of memory writing %s", path);
    name_beside(path, tmp, cap);
    int fd = mkstemp(tmp);
    int saved = errno;
    bool ok = fd >= 0;
    if (ok) {
        struct stat st;
        mode_t mode = stat(path, &st) == 0 ? st.st_mode & 07777 : 0666 & ~current_umask();
        ok = fchmod(fd, mode) == 0 && write_all(fd, text, len) && fsync(fd) == 0;
        saved = errno;
        ok = close(fd) == 0 && ok;
        if (ok && rename(tmp, path) != 0) ok = false, saved = errno;
        if (!ok) unlink(tmp);
    }
    free(tmp);
    if (!ok) return st_fail(err, (st_loc){path, 0, 0}, "cannot write the file: %s", strerror(saved));
    /* the rename itself is durable once the folder is synced */
    sync_folder_of(path);
    return true;
}

bool st_folder_fresh(const char *path, char *tmp, size_t cap, st_err *err) {
    if (!name_beside(path, tmp, cap)) return st_fail(err, (st_loc){path, 0, 0}, "the folder's name is too long");
    if (!mkdtemp(tmp)) return st_fail(err, (st_loc){path, 0, 0}, "cannot make a folder beside it: %s", strerror(errno));
    chmod(tmp, 0777 & ~current_umask()); /* mkdtemp makes it 0700 */
    return true;
}

/* A folder of files (no folders in it) removed. */
static void remove_flat_folder(const char *path) {
    DIR *d = opendir(path);
    for (struct dirent *e; d && (e = readdir(d));) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        char file[4400];
        snprintf(file, sizeof file, "%s/%s", path, e->d_name);
        unlink(file);
    }
    if (d) closedir(d);
    rmdir(path);
}

void st_folder_discard(const char *tmp) { remove_flat_folder(tmp); }

void st_remove_leftovers(const char *path) {
    const char *slash = strrchr(path, '/'), *base = slash ? slash + 1 : path;
    char *folder = slash ? strndup(path, (size_t)(slash - path)) : NULL;
    size_t n = strlen(base);
    DIR *d = opendir(folder ? folder : ".");
    for (struct dirent *e; d && (e = readdir(d));) {
        /* exactly name_beside's ".NAME.XXXXXX" */
        const char *m = e->d_name;
        if (m[0] != '.' || strncmp(m + 1, base, n) || m[1 + n] != '.' || strlen(m + 2 + n) != 6) continue;
        char leftover[4400];
        snprintf(leftover, sizeof leftover, "%s/%s", folder ? folder : ".", m);
        if (unlink(leftover) != 0) remove_flat_folder(leftover);
    }
    if (d) closedir(d);
    free(folder);
}

bool st_folder_replace(const char *tmp, const char *path, st_err *err) {
    /* swapped in one step where the file system can (then the old files,
     * now in tmp, are removed); else the old folder moved aside first, a
     * moment with no folder at path */
    if (renameat2(AT_FDCWD, tmp, AT_FDCWD, path, RENAME_EXCHANGE) == 0) {
        sync_folder_of(path);
        remove_flat_folder(tmp);
        return true;
    }
    int why = errno;
    if (why != ENOENT && why != EINVAL && why != ENOSYS)
        return st_fail(err, (st_loc){path, 0, 0}, "cannot put the new files in place: %s", strerror(why));
    char old[4400];
    snprintf(old, sizeof old, "%s.old", tmp);
    bool had = why != ENOENT && rename(path, old) == 0;
    if (rename(tmp, path) != 0) {
        why = errno;
        if (had) rename(old, path);
        return st_fail(err, (st_loc){path, 0, 0}, "cannot put the new files in place: %s", strerror(why));
    }
    sync_folder_of(path);
    if (had) remove_flat_folder(old);
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
    /* (a lock file is read too: its holder's note) */
    l->fd = st_open_regular(path, O_RDWR | O_CREAT, NULL, err);
    if (l->fd < 0) return false;
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
