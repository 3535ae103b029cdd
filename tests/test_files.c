/* tests/test_files.c — ir/files.c: a file replaced whole or not at all
 * (a full disk, simulated by RLIMIT_FSIZE, leaves the old one), and the
 * lock that keeps two strata out of one folder: refused with the holder's
 * pid, ended by a kill -9 of the holder, never held by its children. */
#include "harness.h"

#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>

static char dir[256];
static st_arena *ar;

static void setup(void) {
    ar = st_arena_new();
    scratch_make(dir, sizeof dir, "files");
}

static void teardown(void) {
    scratch_remove(dir);
    st_arena_free(ar);
}

static int entries_in(const char *d) {
    int n = 0;
    DIR *h = opendir(d);
    for (struct dirent *e; h && (e = readdir(h));) n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
    if (h) closedir(h);
    return n;
}

static char *filled(size_t n, char c) {
    char *s = st_arena_alloc(ar, n + 1);
    memset(s, c, n);
    s[n] = 0;
    return s;
}

static void write_ok(const char *path, const char *text) {
    st_err err = {0};
    ck_assert_msg(st_write_file(path, text, strlen(text), &err), "%s", err.message);
}

/* The full disk: the index cut at 4096 bytes. */
START_TEST(a_full_disk_leaves_the_old_file_whole) {
    const char *path = arena_text(ar, "%s/index.json", dir), *old = filled(8000, 'a');
    write_ok(path, old);
    pid_t pid = fork();
    ck_assert(pid >= 0);
    if (pid == 0) {
        /* writes past 4096 bytes fail (EFBIG), as on a full disk */
        signal(SIGXFSZ, SIG_IGN);
        struct rlimit lim = {4096, 4096};
        setrlimit(RLIMIT_FSIZE, &lim);
        st_err err = {0};
        const char *now = filled(10000, 'b');
        bool ok = st_write_file(path, now, strlen(now), &err);
        _exit(ok ? 3 : strstr(err.message, "cannot write") && err.loc.file ? 0 : 4);
    }
    int status;
    ck_assert(waitpid(pid, &status, 0) == pid);
    ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0,
                  "the write did not fail with a message naming the file (status %d)", status);
    ck_assert_str_eq(slurp_file(ar, path, NULL), old);
    ck_assert_int_eq(entries_in(dir), 1); /* nothing left beside it */
}
END_TEST

START_TEST(a_replaced_file_keeps_its_permissions) {
    const char *path = arena_text(ar, "%s/record.json", dir);
    mode_t was = umask(022);
    write_ok(path, "one");
    struct stat st;
    ck_assert(stat(path, &st) == 0);
    ck_assert_int_eq(st.st_mode & 0777, 0644); /* as fopen would make it */
    ck_assert(chmod(path, 0640) == 0);
    write_ok(path, "two");
    ck_assert(stat(path, &st) == 0);
    ck_assert_int_eq(st.st_mode & 0777, 0640);
    ck_assert_str_eq(slurp_file(ar, path, NULL), "two");
    umask(was);
}
END_TEST

/* A link planted where a predictable temporary name would be is never
 * written through (mkstemp's O_EXCL). */
START_TEST(a_planted_link_is_not_followed) {
    const char *path = arena_text(ar, "%s/entry.bin", dir), *victim = arena_text(ar, "%s/victim", dir);
    write_ok(victim, "untouched");
    const char *links[] = {arena_text(ar, "%s/entry.bin.tmp", dir),
                           arena_text(ar, "%s/entry.bin.%ld.tmp", dir, (long)getpid()),
                           arena_text(ar, "%s/.entry.bin.tmp", dir)};
    for (size_t i = 0; i < sizeof links / sizeof *links; i++) ck_assert(symlink(victim, links[i]) == 0);
    write_ok(path, "the entry");
    ck_assert_str_eq(slurp_file(ar, victim, NULL), "untouched");
    ck_assert_str_eq(slurp_file(ar, path, NULL), "the entry");
}
END_TEST

/* ---- locks ---- */

/* A child that takes the lock, says so on a pipe, and waits to be killed.
 * With grandchild, the holder first forks a child that outlives it,
 * whose pid comes through the pipe too. */
static pid_t holder(const char *path, bool grandchild, pid_t *gpid) {
    int p[2];
    ck_assert(pipe(p) == 0);
    pid_t pid = fork();
    ck_assert(pid >= 0);
    if (pid == 0) {
        close(p[0]);
        st_lock l;
        st_err err = {0};
        if (!st_lock_take(&l, path, false, &err)) _exit(5);
        pid_t g = 0;
        if (grandchild && (g = fork()) == 0) {
            close(p[1]);
            for (;;) pause();
        }
        if (write(p[1], &g, sizeof g) != sizeof g) _exit(6);
        for (;;) pause();
    }
    close(p[1]);
    pid_t g = 0;
    ck_assert_msg(read(p[0], &g, sizeof g) == sizeof g, "the holder did not take the lock");
    close(p[0]);
    if (gpid) *gpid = g;
    return pid;
}

static void kill_and_reap(pid_t pid) {
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
}

START_TEST(a_held_lock_is_refused_naming_the_holder) {
    const char *path = arena_text(ar, "%s/explore.lock", dir);
    pid_t pid = holder(path, false, NULL);
    st_lock l;
    st_err err = {0};
    bool taken = st_lock_take(&l, path, false, &err);
    kill_and_reap(pid);
    ck_assert_msg(!taken, "a held lock was taken again");
    ck_assert_has(err.message, "in use by another strata");
    ck_assert_has(err.message, arena_text(ar, "pid %ld: ", (long)pid));
    ck_assert_has(err.message, "test_files"); /* its command */
    ck_assert_str_eq(err.loc.file, path);
    /* a kill -9 ends it */
    ck_assert_msg(st_lock_take(&l, path, false, &err), "%s", err.message);
    st_lock_release(&l);
}
END_TEST

/* An exploration forks children: they must not keep its folder locked
 * once it is killed. */
START_TEST(the_children_of_a_killed_holder_do_not_hold_it) {
    const char *path = arena_text(ar, "%s/explore.lock", dir);
    pid_t g;
    pid_t pid = holder(path, true, &g);
    ck_assert_int_gt(g, 0);
    kill_and_reap(pid);
    st_lock l;
    st_err err = {0};
    bool taken = st_lock_take(&l, path, false, &err);
    kill(g, SIGKILL);
    ck_assert_msg(taken, "the holder's child still holds it: %s", err.message);
    st_lock_release(&l);
}
END_TEST

START_TEST(waiting_for_a_lock_takes_it_once_free) {
    const char *path = arena_text(ar, "%s/.index.lock", dir);
    pid_t pid = holder(path, false, NULL);
    pid_t killer = fork();
    ck_assert(killer >= 0);
    if (killer == 0) {
        nanosleep(&(struct timespec){0, 200 * 1000 * 1000}, NULL);
        kill(pid, SIGKILL);
        _exit(0);
    }
    st_lock l;
    st_err err = {0};
    ck_assert_msg(st_lock_take(&l, path, true, &err), "%s", err.message);
    st_lock_release(&l);
    waitpid(pid, NULL, 0);
    waitpid(killer, NULL, 0);
}
END_TEST

/* An error names its file after the buffer the name was in is gone (a
 * reader's local path, a child's memory): it keeps a copy, and so does
 * every copy of the error. */
START_TEST(an_error_keeps_the_name_of_its_file) {
    st_err err = {0}, copy;
    {
        char path[64];
        snprintf(path, sizeof path, "%s", "shard-0/explore.json");
        st_fail(&err, (st_loc){path, 3, 7}, "not an exploration's description");
        memset(path, 'x', sizeof path - 1);
        path[sizeof path - 1] = 0;
        copy = err;
    }
    ck_assert_str_eq(st_err_file(&copy), "shard-0/explore.json");
    st_buf b = {0};
    st_err_format(&copy, NULL, 0, &b);
    ck_assert_str_eq(b.data, "shard-0/explore.json:3:7: error: not an exploration's description\n");
    st_buf_free(&b);
    st_fail(&copy, (st_loc){0}, "nowhere");
    ck_assert_ptr_null(st_err_file(&copy));
}
END_TEST

/* A folder's files replaced as a set: the new set in place, none of the
 * old files left (a file the new set lacks included), no folder left
 * beside it; the same where nothing was there before. */
START_TEST(a_folder_is_replaced_as_a_set) {
    const char *path = arena_text(ar, "%s/export", dir);
    st_err err = {0};
    for (int round = 0; round < 2; round++) {
        char fresh[4400];
        ck_assert_msg(st_folder_fresh(path, fresh, sizeof fresh, &err), "%s", err.message);
        char file[4600];
        snprintf(file, sizeof file, "%s/kernels.cl", fresh);
        write_ok(file, round ? "new kernels" : "old kernels");
        if (!round) { /* a file only the old set has */
            snprintf(file, sizeof file, "%s/kernels.cu", fresh);
            write_ok(file, "old");
        }
        ck_assert_msg(st_folder_replace(fresh, path, &err), "%s", err.message);
        ck_assert_int_ne(access(fresh, F_OK), 0);
    }
    ck_assert_str_eq(slurp_file(ar, arena_text(ar, "%s/kernels.cl", path), NULL), "new kernels");
    ck_assert_int_ne(access(arena_text(ar, "%s/kernels.cu", path), F_OK), 0);
    ck_assert_int_eq(entries_in(path), 1);
    ck_assert_int_eq(entries_in(dir), 1); /* export alone: nothing left beside it */
}
END_TEST

/* What killed writes left beside a file or folder (".NAME.XXXXXX") is
 * removed; nothing else is, not even names close to it. */
START_TEST(leftovers_of_killed_writes_are_removed) {
    const char *keep[] = {".index.json.ab12", ".index.json.abcdefg", ".other.abc123", "index.json", ".index.jsonx.abc123"};
    for (size_t i = 0; i < sizeof keep / sizeof *keep; i++) write_ok(arena_text(ar, "%s/%s", dir, keep[i]), "kept");
    write_ok(arena_text(ar, "%s/.index.json.Qx81zA", dir), "left");
    ck_assert_int_eq(mkdir(arena_text(ar, "%s/.export.k9XyZ1", dir), 0777), 0);
    write_ok(arena_text(ar, "%s/.export.k9XyZ1/kernels.cl", dir), "left");
    st_remove_leftovers(arena_text(ar, "%s/index.json", dir));
    st_remove_leftovers(arena_text(ar, "%s/export", dir));
    ck_assert_int_eq(entries_in(dir), (int)(sizeof keep / sizeof *keep));
    for (size_t i = 0; i < sizeof keep / sizeof *keep; i++)
        ck_assert_str_eq(slurp_file(ar, arena_text(ar, "%s/%s", dir, keep[i]), NULL), "kept");
}
END_TEST

int main(void) {
    Suite *s = suite_create("files");
    TCase *tc = tcase_create("files");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, a_full_disk_leaves_the_old_file_whole);
    tcase_add_test(tc, an_error_keeps_the_name_of_its_file);
    tcase_add_test(tc, a_folder_is_replaced_as_a_set);
    tcase_add_test(tc, leftovers_of_killed_writes_are_removed);
    tcase_add_test(tc, a_replaced_file_keeps_its_permissions);
    tcase_add_test(tc, a_planted_link_is_not_followed);
    tcase_add_test(tc, a_held_lock_is_refused_naming_the_holder);
    tcase_add_test(tc, the_children_of_a_killed_holder_do_not_hold_it);
    tcase_add_test(tc, waiting_for_a_lock_takes_it_once_free);
    suite_add_tcase(s, tc);
    return run_suite(s);
}
