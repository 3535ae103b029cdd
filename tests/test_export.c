/* tests/test_export.c — `strata export`, results/index.json and `strata
 * run` without -s: an exploration's best written where users and run find
 * it, with checksums that match, and the device → vendor → default
 * fallbacks of the index. */
#include "explore/explore.h"
#include "explore/index.h"
#include "harness.h"
#include "run_strata.h"

#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

extern char **environ;

typedef struct fixture {
    st_arena *a;
    char dir[256];
    const char *explored, *results, *cache, *program;
} fixture;

static int strata(fixture *f, const char *const *args, char **out, char **err) {
    return strata_spawn(f->a, f->dir, environ, args, out, err);
}

static void setup(fixture *f) {
    f->a = st_arena_new();
    scratch_make(f->dir, sizeof f->dir, "export");
    f->explored = arena_text(f->a, "%s/explored", f->dir);
    f->results = arena_text(f->a, "%s/results", f->dir);
    f->cache = arena_text(f->a, "%s/cache", f->dir);
    f->program = arena_text(f->a, "%s/prefix_sum.strata", getenv("STRATA_EXAMPLES"));
}

static void teardown(fixture *f) {
    scratch_remove(f->dir);
    st_arena_free(f->a);
}

/* A two-point exploration of the prefix sum, done. */
static void explore_small(fixture *f) {
    char *out, *err;
    int rc = strata(f, ARGS("explore", f->program, "--space", "parallel-scan(BS=[32, 64], BF=2, SE=2)", "--size",
                            "N=3001", "--runs", "7", "--out", f->explored, "--cache", f->cache),
                    &out, &err);
    ck_assert_msg(rc == 0, "explore failed:\n%s", err);
    ck_assert_has(out, "status: ok 2");
}

static const char *file_in(fixture *f, const char *dir, const char *name) {
    size_t len;
    const char *text = slurp_file(f->a, arena_text(f->a, "%s/%s", dir, name), &len);
    ck_assert_msg(text != NULL, "%s/%s was not written", dir, name);
    return text;
}

static void write_text(const char *dir, const char *name, const char *text);

START_TEST(export_writes_kernels_record_and_index) {
    fixture f;
    setup(&f);
    explore_small(&f);
    char *out, *err;
    int rc = strata(&f, ARGS("export", f.explored, "--into", f.results, "--top", "2", "--cache", f.cache), &out, &err);
    ck_assert_msg(rc == 0, "export failed:\n%s", err);
    ck_assert_has(out, "best of 2: parallel-scan(BS=");
    ck_assert_has(out, "kernels: ");
    /* the folder named by the device and the program */
    const char *folder = export_folder(f.a, f.results, "prefix_sum");
    const char *slug = arena_text(f.a, "%.*s", (int)(strlen(folder) - strlen(f.results) - strlen("//prefix_sum")),
                                  folder + strlen(f.results) + 1); /* results/<slug>/prefix_sum */
    st_err e = {0};
    ck_assert_has(out, folder);
    const char *kernels = file_in(&f, folder, "kernels.cl"), *record = file_in(&f, folder, "record.json");
    ck_assert_has(file_in(&f, folder, "host.c"), "strata_run");
    ck_assert_has(file_in(&f, folder, "program.strata"), "def main");
    /* the record's checksum is the kernels' */
    char sha[65];
    st_sha256_hex(kernels, strlen(kernels), sha);
    const st_json *j = st_json_parse(f.a, "record.json", record, strlen(record), &e);
    ck_assert_msg(j != NULL, "record.json: %s", e.message);
    ck_assert_str_eq(st_json_get_string(j, "kernels_sha256"), sha);
    /* and they are the kernels explored, byte for byte (one program, one text) */
    st_records explored;
    size_t truncated;
    ck_assert(st_records_read(arena_text(f.a, "%s/results.jsonl", f.explored), &explored, &truncated, &e));
    bool same = false;
    for (size_t i = 0; i < explored.count; i++)
        if (!strcmp(explored.items[i].strategy, st_json_get_string(j, "strategy")))
            same = !strcmp(explored.items[i].kernels_sha256, sha);
    st_records_free(&explored);
    ck_assert_msg(same, "the exported kernels are not the explored ones (SHA-256 %s)", sha);
    ck_assert_str_eq(st_json_get_string(j, "program"), "prefix_sum");
    ck_assert_ptr_nonnull(st_json_get_string(j, "driver"));
    ck_assert_ptr_nonnull(st_json_get(j, "parameters"));
    double gbs;
    ck_assert(st_json_get_number(j, "gb_per_s", &gbs) && gbs > 0);
    const st_json *samples = st_json_get(j, "samples_ms");
    ck_assert(samples && samples->kind == ST_JSON_ARRAY && samples->len == 7);
    /* the index names it */
    const char *index = file_in(&f, f.results, "index.json");
    ck_assert_has(index, slug);
    ck_assert_has(index, "\"vendors\"");
    ck_assert_has(index, "\"default\"");
    ck_assert_has(index, st_json_get_string(j, "strategy"));
    /* and run without -s uses it */
    rc = strata(&f, ARGS("run", f.program, "--size", "N=1000", "--check", "--results", f.results), &out, &err);
    ck_assert_msg(rc == 0, "run failed:\n%s", err);
    ck_assert_has(err, arena_text(f.a, "strategy: %s (", st_json_get_string(j, "strategy")));
    ck_assert_has(err, "exported for");
    ck_assert_has(err, "check: the results equal");
    /* with no export there, the built-in default */
    rc = strata(&f, ARGS("run", f.program, "--size", "N=1000", "--check", "--results", f.dir), &out, &err);
    ck_assert_msg(rc == 0, "run failed:\n%s", err);
    ck_assert_has(err, "(the default for a CPU: no export for this device; -s picks another)");
    /* -s wins over the index */
    rc = strata(&f, ARGS("run", f.program, "--size", "N=1000", "-s", "id", "--results", f.results), &out, &err);
    ck_assert_int_eq(rc, 0);
    ck_assert(!strstr(err, "exported for"));
    /* strata results lists it: a table, and JSON for scripts */
    rc = strata(&f, ARGS("results", f.results), &out, &err);
    ck_assert_msg(rc == 0, "results failed:\n%s", err);
    ck_assert_has(out, "device");
    ck_assert_has(out, slug);
    ck_assert_has(out, st_json_get_string(j, "strategy"));
    ck_assert_has(out, st_json_get_string(j, "exported_at"));
    rc = strata(&f, ARGS("results", f.results, "--json"), &out, &err);
    ck_assert_int_eq(rc, 0);
    const st_json *listed = st_json_parse(f.a, "results --json", out, strlen(out), &e);
    ck_assert_msg(listed != NULL, "results --json: %s\n%s", e.message, out);
    const st_json *exports = st_json_get(listed, "exports");
    ck_assert(exports && exports->kind == ST_JSON_ARRAY && exports->len == 1);
    ck_assert_str_eq(st_json_get_string(&exports->items[0], "program"), "prefix_sum");
    ck_assert_str_eq(st_json_get_string(&exports->items[0], "device"), slug);
    ck_assert_str_eq(st_json_get_string(&exports->items[0], "strategy"), st_json_get_string(j, "strategy"));
    /* a record removed by hand is a gap in the listing, not a failure */
    ck_assert_int_eq(unlink(arena_text(f.a, "%s/record.json", folder)), 0);
    rc = strata(&f, ARGS("results", f.results), &out, &err);
    ck_assert_int_eq(rc, 0);
    ck_assert_has(out, "  ?  ");
    /* a folder without an index says so */
    rc = strata(&f, ARGS("results", f.dir), &out, &err);
    ck_assert_int_eq(rc, 1);
    ck_assert_has(err, "holds no index.json");
    /* what the index says reaches the terminal without its control characters */
    write_text(f.dir, "index.json",
               "{\"devices\": {\"d\": {\"name\": \"D\", \"vendor\": \"V\", \"type\": \"GPU\", \"programs\": "
               "{\"p\": {\"strategy\": \"id\\u001b[2J\", \"path\": \"d/p\", \"median_ms\": 1, \"gb_per_s\": 2}}}}}");
    rc = strata(&f, ARGS("results", f.dir), &out, &err);
    ck_assert_msg(rc == 0, "results failed:\n%s", err);
    ck_assert_has(out, "id?[2J");
    ck_assert(!strchr(out, 0x1b));
    teardown(&f);
}
END_TEST

START_TEST(export_refuses_what_is_not_an_exploration) {
    fixture f;
    setup(&f);
    char *out, *err;
    int rc = strata(&f, ARGS("export", f.dir, "--into", f.results), &out, &err);
    ck_assert_int_eq(rc, 1);
    ck_assert_has(err, "explore.json");
    ck_assert_has(err, "strata explore wrote");
    rc = strata(&f, ARGS("export", f.dir, "--top", "0"), &out, &err);
    ck_assert_int_eq(rc, 1);
    ck_assert_has(err, "--top must be from 1");
    teardown(&f);
}
END_TEST

START_TEST(export_needs_a_correct_variant) {
    fixture f;
    setup(&f);
    char *out, *err;
    /* every point a constraint: SE must divide BS */
    int rc = strata(&f, ARGS("explore", f.program, "--space", "parallel-scan(BS=64, BF=2, SE=[3, 5])", "--size",
                             "N=100", "--runs", "7", "--out", f.explored, "--cache", f.cache),
                    &out, &err);
    ck_assert_msg(rc == 0, "explore failed:\n%s", err);
    ck_assert_has(out, "status: constraint 2");
    ck_assert_has(out, "best: none");
    rc = strata(&f, ARGS("export", f.explored, "--into", f.results), &out, &err);
    ck_assert_int_eq(rc, 1);
    ck_assert_has(err, "nothing to export");
    teardown(&f);
}
END_TEST

/* A CUDA exploration is exported on CUDA's device of its name, not looked
 * for among the OpenCL devices (which may list the same GPU, or not). */
START_TEST(a_cuda_exploration_names_its_device_to_cuda) {
    fixture f;
    setup(&f);
    explore_small(&f);
    const char *json = file_in(&f, f.explored, "explore.json");
    const char *at = strstr(json, "\"backend\": \"opencl\"");
    ck_assert_msg(at != NULL, "explore.json names no backend:\n%s", json);
    const char *cuda = arena_text(f.a, "%.*s\"backend\": \"cuda\"%s", (int)(at - json), json,
                            at + strlen("\"backend\": \"opencl\""));
    write_text(f.explored, "explore.json", cuda);
    st_exploration e;
    st_err err = {0};
    ck_assert_msg(st_exploration_read(f.explored, &e, &err), "%s", err.message);
    ck_assert_msg(!strncmp(e.device, "cuda:", 5) && strlen(e.device) > 5, "device `%s`", e.device);
    st_exploration_free(&e);
    teardown(&f);
}
END_TEST

/* ---- the index, in the library ---- */

static st_device_info device(const char *name, const char *vendor, const char *type) {
    st_device_info d = {0};
    snprintf(d.name, sizeof d.name, "%s", name);
    snprintf(d.vendor, sizeof d.vendor, "%s", vendor);
    d.type = type;
    return d;
}

/* An index with two exports, written by hand as export writes it. */
static void write_text(const char *dir, const char *name, const char *text) {
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    st_err err = {0};
    ck_assert_msg(st_write_file(path, text, strlen(text), &err), "%s", err.message);
}

static void write_index(const char *dir) {
    const char *text =
        "{\"strata_results\": 1, \"devices\": {\n"
        " \"gpu-a\": {\"name\": \"GPU A\", \"vendor\": \"V1\", \"type\": \"GPU\", \"programs\": {\n"
        "   \"p\": {\"strategy\": \"parallel-scan(BS=64, BF=2, SE=2)\", \"path\": \"gpu-a/p\", \"median_ms\": 1, \"gb_per_s\": 10}}},\n"
        " \"cpu-b\": {\"name\": \"CPU B\", \"vendor\": \"V2\", \"type\": \"CPU\", \"programs\": {\n"
        "   \"p\": {\"strategy\": \"parallel-scan(BS=32, BF=2, SE=1)\", \"path\": \"cpu-b/p\", \"median_ms\": 1, \"gb_per_s\": 90}}}\n"
        "}}\n";
    write_text(dir, "index.json", text);
}

static void lookup(const char *dir, st_device_info dev, const char *program, bool want_found, const char *strategy,
                   const char *from_part) {
    st_buf s = {0}, from = {0};
    bool found;
    st_err err = {0};
    ck_assert_msg(st_results_lookup(dir, &dev, program, &found, &s, &from, &err), "%s", err.message);
    ck_assert_int_eq(found, want_found);
    if (found) {
        ck_assert_str_eq(s.data, strategy);
        ck_assert_has(from.data, from_part);
    }
    st_buf_free(&s);
    st_buf_free(&from);
}

START_TEST(index_falls_back_from_device_to_vendor_to_default) {
    char dir[256];
    scratch_make(dir, sizeof dir, "index");
    write_index(dir);
    /* this very device */
    lookup(dir, device("CPU B", "V2", "CPU"), "p", true, "parallel-scan(BS=32, BF=2, SE=1)", "exported for CPU B");
    /* another device of vendor V1 */
    lookup(dir, device("GPU A2", "V1", "GPU"), "p", true, "parallel-scan(BS=64, BF=2, SE=2)", "vendor");
    /* an unknown vendor: the default is the GPU's, although the CPU's GB/s is higher */
    lookup(dir, device("Other", "V3", "GPU"), "p", true, "parallel-scan(BS=64, BF=2, SE=2)", "the default");
    /* a device type is never stood in for by another: a GPU of the CPU's
     * vendor gets the GPU default, a CPU of an unknown vendor the CPU's, and
     * a type nothing was exported for gets nothing */
    lookup(dir, device("GPU C", "V2", "GPU"), "p", true, "parallel-scan(BS=64, BF=2, SE=2)", "the default");
    lookup(dir, device("CPU D", "V9", "CPU"), "p", true, "parallel-scan(BS=32, BF=2, SE=1)", "the default");
    lookup(dir, device("FPGA", "V1", "accelerator"), "p", false, NULL, NULL);
    /* a program never exported, and a folder without an index */
    lookup(dir, device("CPU B", "V2", "CPU"), "q", false, NULL, NULL);
    lookup("/nonexistent-strata-results", device("CPU B", "V2", "CPU"), "p", false, NULL, NULL);
    /* a broken index is an error, not a silent default */
    st_err err = {0};
    write_text(dir, "index.json", "{\"devices\": [");
    st_device_info d = device("CPU B", "V2", "CPU");
    st_buf s = {0}, from = {0};
    bool found;
    ck_assert(!st_results_lookup(dir, &d, "p", &found, &s, &from, &err));
    ck_assert_has(err.message, "expected");
    st_buf_free(&s);
    st_buf_free(&from);
    scratch_remove(dir);
}
END_TEST

/* Many devices, one results folder: each device's export of a program is
 * its own entry, and exporting again replaces only that device's (what a
 * team exporting from several GPUs into one results/ relies on). */
static void add_export(const char *dir, st_device_info d, const char *strategy, double gbs) {
    char key[128], path[256];
    st_device_key(&d, key, sizeof key);
    snprintf(path, sizeof path, "%s/p", key);
    st_lock lock;
    st_err err = {0};
    ck_assert_msg(index_lock(dir, &lock, &err) && index_add(dir, &d, "p", strategy, path, 1, gbs, &err), "%s",
                  err.message);
    st_lock_release(&lock);
}

START_TEST(each_device_keeps_its_own_entry) {
    char dir[256];
    scratch_make(dir, sizeof dir, "devices");
    add_export(dir, device("GPU A", "V1", "GPU"), "lookback(M=12, WG=256)", 100);
    add_export(dir, device("GPU B", "V2", "GPU"), "lookback(M=32, WG=128)", 200);
    add_export(dir, device("CPU C", "V3", "CPU"), "lookback(M=4096, WG=1)", 10);
    add_export(dir, device("GPU A", "V1", "GPU"), "lookback(M=24, WG=256)", 150); /* A again */
    st_arena *a = st_arena_new();
    st_results_entry *es;
    size_t n;
    st_err err = {0};
    ck_assert_msg(st_results_list(dir, a, &es, &n, &err), "%s", err.message);
    ck_assert_uint_eq(n, 3);
    const char *want[][2] = {{"gpu-a", "lookback(M=24, WG=256)"}, {"gpu-b", "lookback(M=32, WG=128)"},
                             {"cpu-c", "lookback(M=4096, WG=1)"}};
    for (size_t k = 0; k < 3; k++) {
        bool seen = false;
        for (size_t i = 0; i < n; i++)
            if (!strcmp(es[i].device_key, want[k][0])) {
                ck_assert_str_eq(es[i].strategy, want[k][1]);
                ck_assert_str_eq(es[i].exported_at, ""); /* no record.json written here */
                seen = true;
            }
        ck_assert_msg(seen, "no entry for %s", want[k][0]);
    }
    st_arena_free(a);
    scratch_remove(dir);
}
END_TEST

/* Exports of different programs into one results folder at once (a
 * script exporting each of its explorations in the background): each
 * reads, adds to and writes the index under its lock, so all of them land. */
START_TEST(concurrent_exports_all_land_in_the_index) {
    enum { WRITERS = 6, EACH = 12 };
    char dir[256];
    scratch_make(dir, sizeof dir, "index");
    pid_t pids[WRITERS];
    for (int w = 0; w < WRITERS; w++) {
        ck_assert((pids[w] = fork()) >= 0);
        if (pids[w]) continue;
        st_device_info d = device("CPU B", "V2", "CPU");
        for (int i = 0; i < EACH; i++) {
            char program[64], path[128];
            snprintf(program, sizeof program, "p%d_%d", w, i);
            snprintf(path, sizeof path, "cpu-b/%s", program);
            st_err err = {0};
            st_lock lock;
            if (!index_lock(dir, &lock, &err) ||
                !index_add(dir, &d, program, "parallel-scan(BS=32, BF=2, SE=1)", path, 1, 1, &err))
                _exit(1);
            st_lock_release(&lock);
        }
        _exit(0);
    }
    for (int w = 0; w < WRITERS; w++) {
        int status;
        ck_assert(waitpid(pids[w], &status, 0) == pids[w]);
        ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "writer %d failed", w);
    }
    st_device_info d = device("CPU B", "V2", "CPU");
    faults f = {0};
    for (int w = 0; w < WRITERS; w++)
        for (int i = 0; i < EACH; i++) {
            char program[64];
            snprintf(program, sizeof program, "p%d_%d", w, i);
            st_buf s = {0}, from = {0};
            bool found = false;
            st_err err = {0};
            ck_assert_msg(st_results_lookup(dir, &d, program, &found, &s, &from, &err), "%s", err.message);
            if (!found) fault(&f, "the export of %s is lost", program);
            st_buf_free(&s);
            st_buf_free(&from);
        }
    scratch_remove(dir);
    no_faults(&f);
}
END_TEST

START_TEST(device_slugs_are_folder_names) {
    char slug[128];
    st_device_slug("pthread-skylake-avx512-Intel(R) Xeon(R) Processor", slug, sizeof slug);
    ck_assert_str_eq(slug, "pthread-skylake-avx512-intel-r-xeon-r-processor");
    st_device_slug("NVIDIA H100 80GB HBM3", slug, sizeof slug);
    ck_assert_str_eq(slug, "nvidia-h100-80gb-hbm3");
    st_device_slug("  ../..//  ", slug, sizeof slug);
    ck_assert_str_eq(slug, "device");
}
END_TEST

START_TEST(sha256_matches_the_standard) {
    char hex[65];
    st_sha256_hex("abc", 3, hex);
    ck_assert_str_eq(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    st_sha256_hex("", 0, hex);
    ck_assert_str_eq(hex, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    const char *two = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"; /* 56 bytes: two blocks of padding */
    st_sha256_hex(two, strlen(two), hex);
    ck_assert_str_eq(hex, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
}
END_TEST

int main(void) {
    Suite *s = suite_create("export");
    TCase *cli = tcase_create("cli");
    tcase_set_timeout(cli, 600);
    tcase_add_test(cli, export_writes_kernels_record_and_index);
    tcase_add_test(cli, export_refuses_what_is_not_an_exploration);
    tcase_add_test(cli, export_needs_a_correct_variant);
    tcase_add_test(cli, a_cuda_exploration_names_its_device_to_cuda);
    suite_add_tcase(s, cli);
    TCase *lib = tcase_create("library");
    tcase_add_test(lib, index_falls_back_from_device_to_vendor_to_default);
    tcase_add_test(lib, concurrent_exports_all_land_in_the_index);
    tcase_add_test(lib, each_device_keeps_its_own_entry);
    tcase_add_test(lib, device_slugs_are_folder_names);
    tcase_add_test(lib, sha256_matches_the_standard);
    suite_add_tcase(s, lib);
    return run_suite(s);
}
