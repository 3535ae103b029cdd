/* tests/test_devices.c — the OpenCL platforms and devices: the library's
 * list, and `strata devices` printing it. PoCL is installed wherever these
 * tests run, so there is always at least its CPU device. */
#define _GNU_SOURCE /* sched_setaffinity, CPU_SET */
#include "codegen/codegen.h"
#include "harness.h"

#include <fcntl.h>
#include <sched.h>
#include <spawn.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

#define ck_assert_has(text, part) \
    ck_assert_msg(strstr((text), (part)) != NULL, "expected \"%s\" in:\n%s", (part), (text))

/* The list, failing the test when there is none. */
static st_device_info *devices(size_t *n) {
    st_device_info *list = NULL;
    st_err err = {0};
    ck_assert_msg(st_devices_list(&list, n, &err), "no devices: %s", err.message);
    ck_assert(list != NULL);
    return list;
}

START_TEST(at_least_one_device) {
    size_t n;
    st_device_info *list = devices(&n);
    ck_assert_uint_ge(n, 1);
    bool cpu = false;
    for (size_t i = 0; i < n; i++) cpu |= !strcmp(list[i].type, "CPU");
    ck_assert_msg(cpu, "no CPU device (PoCL's) among %zu", n);
    free(list);
}
END_TEST

START_TEST(fields_filled) {
    size_t n;
    st_device_info *list = devices(&n);
    static const char *const types[] = {"GPU", "CPU", "accelerator", "other"};
    for (size_t i = 0; i < n; i++) {
        const st_device_info *d = &list[i];
        ck_assert_msg(d->platform[0] && d->platform_version[0], "device %zu: no platform name or version", i);
        ck_assert_msg(d->name[0] && d->vendor[0] && d->version[0] && d->driver[0], "device %zu: empty text", i);
        /* CL_DEVICE_VERSION is "OpenCL <major>.<minor> …" by the standard */
        ck_assert_msg(!strncmp(d->version, "OpenCL ", 7), "device %zu version `%s`", i, d->version);
        ck_assert_msg(!strncmp(d->platform_version, "OpenCL ", 7), "platform version `%s`", d->platform_version);
        bool known = false;
        for (int t = 0; t < 4; t++) known |= d->type && !strcmp(d->type, types[t]);
        ck_assert_msg(known, "device %zu type `%s`", i, d->type ? d->type : "(null)");
        ck_assert_uint_gt(d->compute_units, 0);
        ck_assert_uint_gt(d->global_mem_bytes, 0);
        ck_assert_uint_gt(d->local_mem_bytes, 0);
        ck_assert_uint_gt(d->max_work_group, 0);
    }
    free(list);
}
END_TEST

START_TEST(indices_consecutive) {
    size_t n;
    st_device_info *list = devices(&n);
    for (size_t i = 0; i < n; i++) {
        ck_assert_uint_eq(list[i].index, i);
        if (i == 0) continue;
        /* platforms in order; within one, devices counted from 0 */
        const st_device_info *a = &list[i - 1], *b = &list[i];
        ck_assert_uint_ge(b->platform_index, a->platform_index);
        if (b->platform_index == a->platform_index) ck_assert_uint_eq(b->device_index, a->device_index + 1);
        else ck_assert_uint_eq(b->device_index, 0);
    }
    ck_assert_uint_eq(list[0].device_index, 0);
    free(list);
}
END_TEST

START_TEST(listing_is_stable) {
    /* the index is how a user picks a device (--device), so two listings agree */
    size_t n1, n2;
    st_device_info *a = devices(&n1), *b = devices(&n2);
    ck_assert_uint_eq(n1, n2);
    for (size_t i = 0; i < n1; i++) {
        ck_assert_str_eq(a[i].name, b[i].name);
        ck_assert_str_eq(a[i].platform, b[i].platform);
    }
    free(a);
    free(b);
}
END_TEST

/* Run `$STRATA args…`; stdout comes back in out (a file, no pipes). Returns
 * the exit status; a signal fails the test. */
static int run(const char *const *args, char *out, size_t cap) {
    const char *bin = getenv("STRATA");
    ck_assert_msg(bin != NULL, "STRATA is not set (run through meson test)");
    const char *argv[8] = {bin};
    for (int i = 0; args[i]; i++) argv[i + 1] = args[i];
    char path[] = "/tmp/strata-devices-XXXXXX";
    int fd = mkstemp(path);
    ck_assert(fd >= 0);
    close(fd);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 1, path, O_WRONLY | O_TRUNC, 0);
    pid_t pid;
    int rc = posix_spawn(&pid, bin, &fa, NULL, (char *const *)argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    ck_assert_msg(rc == 0, "cannot start %s", bin);
    int status;
    ck_assert(waitpid(pid, &status, 0) == pid);
    FILE *f = fopen(path, "rb");
    size_t n = f ? fread(out, 1, cap - 1, f) : 0;
    out[n] = 0;
    if (f) fclose(f);
    unlink(path);
    ck_assert_msg(!WIFSIGNALED(status), "strata was killed by signal %d", WIFSIGNALED(status) ? WTERMSIG(status) : 0);
    return WEXITSTATUS(status);
}

START_TEST(cli_lists_devices) {
    static char out[1 << 16];
    ck_assert_int_eq(run((const char *const[]){"devices", NULL}, out, sizeof out), 0);
    ck_assert_has(out, "platform 0:");
    ck_assert_has(out, "device 0:");
    /* the same devices the library lists, by name */
    size_t n;
    st_device_info *list = devices(&n);
    for (size_t i = 0; i < n; i++) {
        ck_assert_has(out, list[i].platform);
        ck_assert_has(out, list[i].name);
    }
    free(list);
}
END_TEST

START_TEST(cli_devices_takes_no_arguments) {
    static char out[1 << 16];
    ck_assert_int_eq(run((const char *const[]){"devices", "extra", NULL}, out, sizeof out), 1);
    ck_assert_int_eq(run((const char *const[]){"devices", "--all", NULL}, out, sizeof out), 1);
    ck_assert_int_eq(out[0], 0);
}
END_TEST

/* The line `strata devices` gives PoCL's CPU device about its worker
 * threads (cli/cpu_pinning.c). */
static const char *pinning_line(void) {
    static char out[1 << 16];
    ck_assert_int_eq(run((const char *const[]){"devices", NULL}, out, sizeof out), 0);
    const char *line = strstr(out, "PoCL's worker threads: ");
    ck_assert_msg(line != NULL, "no line on PoCL's worker threads in:\n%s", out);
    return line;
}

/* strata pins PoCL's workers one to a core where this process may run on
 * every online CPU and nobody said otherwise; never over POCL_AFFINITY,
 * nor under a narrower CPU mask, which PoCL's pinning by index would
 * override. (Check runs each test in a child: the mask and the setting
 * changed here end with it.) */
START_TEST(cli_pins_pocl_workers_only_where_it_may) {
    ck_assert_int_eq(setenv("POCL_AFFINITY", "0", 1), 0);
    ck_assert_has(pinning_line(), "not pinned (POCL_AFFINITY=0)");
    ck_assert_int_eq(unsetenv("POCL_AFFINITY"), 0);
    cpu_set_t mine;
    ck_assert_int_eq(sched_getaffinity(0, sizeof mine, &mine), 0);
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    bool every = CPU_COUNT(&mine) == online;
    for (long cpu = 0; cpu < online && every; cpu++) every = CPU_ISSET(cpu, &mine);
    ck_assert_has(pinning_line(), every ? "pinned one to a core (POCL_AFFINITY=1)" : "not pinned: this process may not");
    if (CPU_COUNT(&mine) < 2) return; /* no narrower mask to try */
    cpu_set_t one;
    CPU_ZERO(&one);
    for (int cpu = CPU_SETSIZE - 1; cpu >= 0; cpu--)
        if (CPU_ISSET(cpu, &mine)) {
            CPU_SET(cpu, &one); /* the last CPU this process may use */
            break;
        }
    ck_assert_int_eq(sched_setaffinity(0, sizeof one, &one), 0);
    ck_assert_has(pinning_line(), "not pinned: this process may not run on every online CPU");
}
END_TEST

int main(void) {
    Suite *s = suite_create("devices");
    TCase *lib = tcase_create("list");
    tcase_set_timeout(lib, 60);
    tcase_add_test(lib, at_least_one_device);
    tcase_add_test(lib, fields_filled);
    tcase_add_test(lib, indices_consecutive);
    tcase_add_test(lib, listing_is_stable);
    suite_add_tcase(s, lib);
    TCase *cli = tcase_create("cli");
    tcase_set_timeout(cli, 60);
    tcase_add_test(cli, cli_lists_devices);
    tcase_add_test(cli, cli_devices_takes_no_arguments);
    tcase_add_test(cli, cli_pins_pocl_workers_only_where_it_may);
    suite_add_tcase(s, cli);
    return run_suite(s);
}
