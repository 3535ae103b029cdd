/* tests/test_hostile.c — input written to attack strata (docs/security.md):
 *
 *   code        a program under a directory whose name closes a comment
 *               and holds C code, run and exported through a doctored
 *               explore.json: the code does not run, and the generated
 *               texts carry the path escaped only
 *   folders     names that become folders (explore.json's program_name,
 *               index.json's keys, a program file's name, a device's slug)
 *               that would leave --into or be empty are refused by name,
 *               and nothing is written outside
 *
 * On the default device (PoCL on CI). */
#include "explore/explore.h"
#include "harness.h"
#include "run_strata.h"

#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* C that takes over strata_run when it reaches the glue raw (after a `*` `/`
 * that ends the glue's first comment): its own strata_run fails with a
 * message of its own, and the real one is renamed out of the way. In the
 * kernels it is skipped, so that they still build. One folder name: no `/`. */
#define INJECTED                                                                                                   \
    "\n#ifndef __OPENCL_VERSION__\nint snprintf();int strata_run(void*a,void*b,void*c,void*d,void*e,void*f,void*g,"   \
    "char*m,long n){snprintf(m,n,\"INJECTED CODE RAN\");return -5;}\n#define strata_run strata_run_x\n#endif\n"
/* the same as a JSON string's inside */
#define INJECTED_JSON                                                                                              \
    "\\n#ifndef __OPENCL_VERSION__\\nint snprintf();int strata_run(void*a,void*b,void*c,void*d,void*e,void*f,"      \
    "void*g,char*m,long n){snprintf(m,n,\\\"INJECTED CODE RAN\\\");return -5;}\\n#define strata_run strata_run_x\\n" \
    "#endif\\n"

static const char *example_path(cli *c, const char *name) {
    return arena_text(c->a, "%s/%s", getenv("STRATA_EXAMPLES"), name);
}

/* A generated text: no raw piece of the injected path, and the first line
 * (the comment that names the program) shows it escaped. */
static void carries_the_path_escaped(cli *c, const char *dir, const char *name) {
    const char *text = slurp_file(c->a, arena_text(c->a, "%s/%s", dir, name), NULL);
    ck_assert_msg(text != NULL, "%s/%s was not written", dir, name);
    ck_assert_msg(!strstr(text, "A*/") && !strstr(text, "INJECTED CODE RAN\");") && !strstr(text, "/*p.strata"),
                  "%s carries the path raw:\n%.600s", name, text);
    const char *line_end = strchr(text, '\n');
    ck_assert(line_end != NULL);
    const char *first = arena_text(c->a, "%.*s", (int)(line_end - text), text);
    ck_assert_msg(strstr(first, "A\\052/\\n#ifndef __OPENCL_VERSION__\\nint snprintf();") &&
                      strstr(first, "\\\"INJECTED CODE RAN\\\"") && strstr(first, "\\057*p.strata\""),
                  "%s does not name the program escaped:\n%s", name, first);
}

START_TEST(code_in_a_directory_name_does_not_run) {
    cli c;
    cli_open(&c, "hostile");
    const char *outer = arena_text(c.a, "%s/A*", c.dir), *inner = arena_text(c.a, "%s/" INJECTED, outer);
    ck_assert(mkdir(outer, 0700) == 0 && mkdir(inner, 0700) == 0);
    const char *program = arena_text(c.a, "%s/*p.strata", inner), *emit = arena_text(c.a, "%s/emit", c.dir);
    const char *source = slurp_file(c.a, example_path(&c, "dot.strata"), NULL);
    ck_assert(st_write_file(program, source, strlen(source), NULL));
    char *out, *err;
    int rc = cli_strata(&c,
                        ARGS("run", program, "--size", "N=1000", "--check", "--emit", emit, "--results",
                             arena_text(c.a, "%s/no-results", c.dir)),
                        &out, &err);
    ck_assert_msg(!strstr(err, "INJECTED CODE RAN"), "the path's code ran:\n%s", err);
    ck_assert_msg(rc == 0, "strata run failed:\n%s", err);
    ck_assert_has(err, "check: the results equal the interpreter's");
    carries_the_path_escaped(&c, emit, "host.c");
    carries_the_path_escaped(&c, emit, "kernels.cl");
    carries_the_path_escaped(&c, emit, "kernels.cu");
    cli_close(&c);
}
END_TEST

/* A two-point exploration of the prefix sum into c->dir/explored. */
static const char *explored(cli *c) {
    const char *dir = arena_text(c->a, "%s/explored", c->dir);
    char *out, *err;
    int rc = cli_strata(c,
                        ARGS("explore", example_path(c, "prefix_sum.strata"), "--space",
                             "parallel-scan(BS=[32, 64], BF=2, SE=2)", "--size", "N=3001", "--runs", "7", "--out", dir,
                             "--cache", arena_text(c->a, "%s/cache", c->dir)),
                        &out, &err);
    ck_assert_msg(rc == 0, "explore failed:\n%s", err);
    return dir;
}

/* dir/explore.json with the text value of `field` replaced by `json` (a
 * JSON string's inside). */
static void doctor(cli *c, const char *dir, const char *field, const char *json) {
    const char *path = arena_text(c->a, "%s/explore.json", dir);
    const char *text = slurp_file(c->a, path, NULL);
    ck_assert(text != NULL);
    const char *key = arena_text(c->a, "\"%s\": \"", field), *at = strstr(text, key);
    ck_assert_msg(at != NULL, "explore.json has no %s:\n%s", field, text);
    const char *value = at + strlen(key), *end = strchr(value, '"');
    const char *now = arena_text(c->a, "%.*s%s%s", (int)(value - text), text, json, end);
    ck_assert(st_write_file(path, now, strlen(now), NULL));
}

static int export_to(cli *c, const char *dir, const char *into, char **out, char **err) {
    return cli_strata(c,
                      ARGS("export", dir, "--into", into, "--top", "1", "--cache",
                           arena_text(c->a, "%s/cache", c->dir)),
                      out, err);
}

START_TEST(code_in_explore_json_does_not_run_at_export) {
    cli c;
    cli_open(&c, "hostile");
    const char *dir = explored(&c), *into = arena_text(c.a, "%s/results", c.dir);
    doctor(&c, dir, "program", "A*/" INJECTED_JSON "/*p.strata");
    char *out, *err;
    int rc = export_to(&c, dir, into, &out, &err);
    ck_assert_msg(!strstr(err, "INJECTED CODE RAN"), "the path's code ran:\n%s", err);
    ck_assert_msg(rc == 0, "export failed:\n%s", err);
    const char *folder = export_folder(c.a, into, "prefix_sum");
    carries_the_path_escaped(&c, folder, "host.c");
    carries_the_path_escaped(&c, folder, "kernels.cl");
    cli_close(&c);
}
END_TEST

START_TEST(a_program_name_that_leaves_into_is_refused) {
    cli c;
    cli_open(&c, "hostile");
    const char *dir = explored(&c), *into = arena_text(c.a, "%s/a/results", c.dir);
    const char *names[] = {"../../escaped", "", "..", "a/b", "-rf", "a b"};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        doctor(&c, dir, "program_name", names[i]);
        char *out, *err;
        int rc = export_to(&c, dir, into, &out, &err);
        ck_assert_msg(rc == 1, "program_name `%s`: exit %d\n%s", names[i], rc, err);
        ck_assert_has(err, arena_text(c.a, "%s: error: explore.json's \"program_name\" is ", dir));
        ck_assert_has(err, "cannot name a folder: a name here is 1 to 100 of the letters A-Z and a-z, the digits 0-9");
        ck_assert_int_ne(access(arena_text(c.a, "%s/escaped", c.dir), F_OK), 0);
        ck_assert_int_ne(access(into, F_OK), 0); /* nothing written at all */
        /* merge reads explore.json the same way */
        rc = cli_strata(&c, ARGS("merge", dir, "--out", arena_text(c.a, "%s/merged", c.dir)), &out, &err);
        ck_assert_int_eq(rc, 1);
        ck_assert_has(err, "cannot name a folder");
    }
    cli_close(&c);
}
END_TEST

/* `.strata` is named "", which would file its export in the device's folder
 * itself: refused before the exploration's folder is made. */
START_TEST(a_program_file_without_a_name_is_refused) {
    cli c;
    cli_open(&c, "hostile");
    const char *program = arena_text(c.a, "%s/.strata", c.dir), *dir = arena_text(c.a, "%s/explored", c.dir);
    const char *source = slurp_file(c.a, example_path(&c, "prefix_sum.strata"), NULL);
    ck_assert(st_write_file(program, source, strlen(source), NULL));
    char *out, *err;
    int rc = cli_strata(&c,
                        ARGS("explore", program, "--space", "parallel-scan(BS=32, BF=2, SE=2)", "--size", "N=100",
                             "--out", dir),
                        &out, &err);
    ck_assert_int_eq(rc, 1);
    ck_assert_has(err, ".strata");
    ck_assert_has(err, "the program's name (its file's name up to the first `.`) is \"\", which cannot name a folder");
    ck_assert_int_ne(access(dir, F_OK), 0);
    cli_close(&c);
}
END_TEST

/* index.json's keys are folders too: a key that is not one is refused,
 * naming the file, as is a path that is not the key's own. */
START_TEST(an_index_that_names_other_folders_is_refused) {
    cli c;
    cli_open(&c, "hostile");
    const char *results = arena_text(c.a, "%s/results", c.dir), *index = arena_text(c.a, "%s/index.json", results);
    ck_assert(mkdir(results, 0700) == 0);
    const char *bad[] = {
        "{\"strata_results\": 1, \"devices\": {\"..\": {\"name\": \"x\", \"vendor\": \"v\", \"type\": \"CPU\", "
        "\"programs\": {\"dot\": {\"strategy\": \"map\", \"path\": \"../dot\"}}}}}",
        "{\"strata_results\": 1, \"devices\": {\"cpu\": {\"name\": \"x\", \"vendor\": \"v\", \"type\": \"CPU\", "
        "\"programs\": {\"../../dot\": {\"strategy\": \"map\", \"path\": \"cpu/../../dot\"}}}}}",
        "{\"strata_results\": 1, \"devices\": {\"cpu\": {\"name\": \"x\", \"vendor\": \"v\", \"type\": \"CPU\", "
        "\"programs\": {\"dot\": {\"strategy\": \"map\", \"path\": \"../../etc\"}}}}}",
    };
    const char *why[] = {"index.json's key of \"devices\" is \"..\"", "index.json's key of \"programs\" is \"../../dot\"",
                         "index.json's \"path\" of dot on cpu is not \"cpu/dot\""};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        ck_assert(st_write_file(index, bad[i], strlen(bad[i]), NULL));
        char *out, *err;
        int rc = cli_strata(&c, ARGS("run", example_path(&c, "dot.strata"), "--size", "N=10", "--results", results),
                            &out, &err);
        ck_assert_msg(rc == 1, "index %zu: exit %d\n%s", i, rc, err);
        ck_assert_has(err, arena_text(c.a, "%s: error: %s", results, why[i]));
    }
    cli_close(&c);
}
END_TEST

/* A device's folder: never "", "." or "..", never a slash, whatever its name. */
START_TEST(device_folders_and_names_are_one_safe_component) {
    const char *names[] = {"", ".", "..", "../../etc", "/", "NVIDIA H200", "\n*/", "-"};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        char slug[128];
        st_device_slug(names[i], slug, sizeof slug);
        st_err err = {0};
        ck_assert_msg(st_folder_name_check(slug, (st_loc){0}, "slug", &err), "`%s` → `%s`: %s", names[i], slug,
                      err.message);
    }
    char slug[128];
    st_device_slug("../../etc", slug, sizeof slug);
    ck_assert_str_eq(slug, "etc");
    st_device_slug("..", slug, sizeof slug);
    ck_assert_str_eq(slug, "device");
    char longest[ST_FOLDER_NAME_MAX + 2];
    memset(longest, 'a', sizeof longest);
    longest[ST_FOLDER_NAME_MAX] = 0;
    ck_assert(st_folder_name_check(longest, (st_loc){0}, "n", NULL));
    longest[ST_FOLDER_NAME_MAX] = 'a';
    longest[ST_FOLDER_NAME_MAX + 1] = 0;
    const char *refused[] = {longest, "", ".", "..", "a/b", "-x", "a.b", "é", "a\nb"};
    for (size_t i = 0; i < sizeof refused / sizeof *refused; i++) {
        st_err err = {0};
        ck_assert_msg(!st_folder_name_check(refused[i], (st_loc){"f.json", 0, 0}, "\"x\"", &err), "`%s` accepted",
                      refused[i]);
        ck_assert_str_eq(err.loc.file, "f.json");
        ck_assert_has(err.message, "\"x\" is ");
    }
    st_err err = {0};
    ck_assert(!st_folder_name_check("a\nb", (st_loc){0}, "\"x\"", &err));
    ck_assert_has(err.message, "\"x\" is \"a\\nb\", which"); /* shown escaped, never raw */
}
END_TEST

/* A record's strategy is its point's in the space: a results.jsonl edited
 * to name another strategy (here one from outside the space, as the best)
 * is refused by export, which names the record. */
START_TEST(a_record_whose_strategy_is_not_its_points_is_refused) {
    cli c;
    cli_open(&c, "hostile");
    const char *dir = explored(&c), *into = arena_text(c.a, "%s/results", c.dir);
    const char *path = arena_text(c.a, "%s/results.jsonl", dir);
    const char *text = slurp_file(c.a, path, NULL);
    const char *from = "parallel-scan(BS=32, BF=2, SE=2)", *at = strstr(text, from);
    ck_assert_msg(at != NULL, "no record of %s:\n%s", from, text);
    const char *now = arena_text(c.a, "%.*s%s%s", (int)(at - text), text, "parallel-scan(BS=16, BF=2, SE=2)", at + strlen(from));
    ck_assert(st_write_file(path, now, strlen(now), NULL));
    char *out, *err;
    /* --top 2: both records are measured again, the doctored one among them */
    int rc = cli_strata(&c, ARGS("export", dir, "--into", into, "--top", "2", "--cache", arena_text(c.a, "%s/cache", c.dir)),
                        &out, &err);
    ck_assert_msg(rc == 1, "export took a doctored record:\n%s", err);
    ck_assert_has(err, "results.jsonl: error: the record of point 0 says `parallel-scan(BS=16, BF=2, SE=2)`, but the "
                       "space's point 0 is `parallel-scan(BS=32, BF=2, SE=2)`");
    ck_assert_int_ne(access(into, F_OK), 0);
    cli_close(&c);
}
END_TEST

/* ---- files that are not files ---- */

/* A FIFO put where strata reads a file (`at`, relative to c's folder; its
 * folder is made and a file there kept aside), then strata run with args
 * ("@" in an argument is c's folder): it is refused at once, naming the
 * path, exit 1, never waited on (a watchdog). The file is put back. */
static void refuses_a_fifo_at(cli *c, const char *at, const char *const *args) {
    const char *path = arena_text(c->a, "%s/%s", c->dir, at);
    size_t len = 0;
    const char *kept = access(path, F_OK) == 0 ? slurp_file(c->a, path, &len) : NULL;
    for (char *slash = strchr(path + strlen(c->dir) + 1, '/'); slash; slash = strchr(slash + 1, '/')) {
        *slash = 0;
        mkdir(path, 0700);
        *slash = '/';
    }
    unlink(path);
    ck_assert_msg(mkfifo(path, 0600) == 0, "mkfifo %s", path);
    const char *argv[32];
    size_t n = 0;
    for (; args[n]; n++) {
        ck_assert(n < 31);
        const char *mark = strchr(args[n], '@');
        argv[n] = mark ? arena_text(c->a, "%.*s%s%s", (int)(mark - args[n]), args[n], c->dir, mark + 1) : args[n];
    }
    argv[n] = NULL;
    char *out, *err;
    int rc;
    if (argv[0][0] == '/') { /* a command of its own (a shell that runs strata) */
        int status = end_within(c, program_start(c->dir, environ, argv[0], argv + 1, "/dev/null"), 60, argv[0], &out, &err);
        ck_assert(WIFEXITED(status));
        rc = WEXITSTATUS(status);
    } else {
        rc = strata_within(c, argv, 60, &out, &err);
    }
    ck_assert_msg(rc == 1, "`%s` with a FIFO at %s: exit %d\n%s", strata_command_line(c->a, argv), at, rc, err);
    ck_assert_msg(strstr(err, arena_text(c->a, "%s: error: ", at)) &&
                      strstr(err, "is a FIFO (a named pipe)") && strstr(err, "not a regular file"),
                  "`%s` with a FIFO at %s says:\n%s", strata_command_line(c->a, argv), at, err);
    unlink(path);
    if (kept) ck_assert(st_write_file(path, kept, len, NULL));
}

#define PSUM_SPACE "parallel-scan(BS=[32, 64], BF=2, SE=2)"
/* (the command explored() ran, to go on with its exploration) */
#define EXPLORE_AGAIN(...)                                                                                          \
    ARGS("explore", example_path(&c, "prefix_sum.strata"), "--space", PSUM_SPACE, "--size", "N=3001", "--runs", "7", "--out",       \
         "@/explored", "--cache", "@/cache", __VA_ARGS__)

/* Every file strata reads, a FIFO in its place: programs, arrays, plugins,
 * results (index, records), explorations (description, program, records,
 * the serve mark, the lock); and the files `run` writes (--output, --emit). */
START_TEST(a_fifo_where_a_file_is_read_is_refused) {
    cli c;
    cli_open(&c, "hostile");
    const char *source = slurp_file(c.a, example_path(&c, "prefix_sum.strata"), NULL);
    const char *program = arena_text(c.a, "%s/prefix_sum.strata", c.dir);
    ck_assert(st_write_file(program, source, strlen(source), NULL));
    explored(&c);
    const char *index = "{\"strata_results\": 1, \"devices\": {\"cpu\": {\"name\": \"x\", \"vendor\": \"v\", "
                        "\"type\": \"CPU\", \"programs\": {\"dot\": {\"strategy\": \"map\", \"path\": \"cpu/dot\"}}}}}";
    ck_assert(mkdir(arena_text(c.a, "%s/listed", c.dir), 0700) == 0);
    ck_assert(st_write_file(arena_text(c.a, "%s/listed/index.json", c.dir), index, strlen(index), NULL));
    /* the issue's: `strata results R` and `strata run` (./results by default) */
    refuses_a_fifo_at(&c, "R/index.json", ARGS("results", "@/R"));
    refuses_a_fifo_at(&c, "R/index.json", ARGS("run", "@/prefix_sum.strata", "--size", "N=10", "--results", "@/R"));
    /* ./results, in the folder strata runs in */
    refuses_a_fifo_at(&c, "results/index.json",
                      ARGS("/bin/sh", "-c", "cd @ && exec \"$0\" run prefix_sum.strata --size N=10", getenv("STRATA")));
    refuses_a_fifo_at(&c, "listed/cpu/dot/record.json", ARGS("results", "@/listed"));
    refuses_a_fifo_at(&c, "fifo.strata", ARGS("check", "@/fifo.strata"));
    refuses_a_fifo_at(&c, "xs.npy", ARGS("eval", "@/prefix_sum.strata", "--input", "xs=@/xs.npy"));
    refuses_a_fifo_at(&c, "rules.so", ARGS("check", "@/prefix_sum.strata", "--plugin", "@/rules.so"));
    /* and where it writes one: the results and the emitted files */
    refuses_a_fifo_at(&c, "out/0.npy", ARGS("run", "@/prefix_sum.strata", "--size", "N=10", "--output", "@/out"));
    refuses_a_fifo_at(&c, "emitted/kernels.cl", ARGS("run", "@/prefix_sum.strata", "--size", "N=10", "--emit", "@/emitted"));
    const char *kept[] = {"explored/explore.json", "explored/results.jsonl", "explored/program.strata"};
    for (size_t i = 0; i < sizeof kept / sizeof *kept; i++) {
        refuses_a_fifo_at(&c, kept[i], ARGS("export", "@/explored", "--into", "@/results", "--cache", "@/cache"));
        refuses_a_fifo_at(&c, kept[i], ARGS("merge", "@/explored", "--out", "@/merged"));
    }
    refuses_a_fifo_at(&c, "explored/explore.json", EXPLORE_AGAIN("--jobs", "1"));
    refuses_a_fifo_at(&c, "explored/results.jsonl", EXPLORE_AGAIN("--jobs", "1"));
    refuses_a_fifo_at(&c, "explored/explore.lock", EXPLORE_AGAIN("--jobs", "1"));
    refuses_a_fifo_at(&c, "explored/serve-evaluating", EXPLORE_AGAIN("--serve"));
    cli_close(&c);
}
END_TEST

/* The build cache's entries are checked, and one that is not right is
 * built again and replaced: a FIFO among them is not waited on, and a
 * regular entry takes its place. */
START_TEST(a_fifo_in_the_build_cache_is_replaced) {
    cli c;
    cli_open(&c, "hostile");
    explored(&c);
    const char *cache = arena_text(c.a, "%s/cache", c.dir);
    DIR *d = opendir(cache);
    ck_assert(d != NULL);
    int fifos = 0;
    for (struct dirent *e; (e = readdir(d));) {
        const char *entry = arena_text(c.a, "%s/%s", cache, e->d_name);
        struct stat st;
        if (e->d_name[0] == '.' || stat(entry, &st) != 0 || !S_ISREG(st.st_mode)) continue;
        ck_assert(unlink(entry) == 0 && mkfifo(entry, 0600) == 0);
        fifos++;
    }
    closedir(d);
    ck_assert_int_gt(fifos, 0);
    char *out, *err;
    const char *again = arena_text(c.a, "%s/again", c.dir);
    int rc = strata_within(&c,
                           ARGS("explore", example_path(&c, "prefix_sum.strata"), "--space", PSUM_SPACE, "--size",
                                "N=3001", "--runs", "7", "--out", again, "--cache", cache),
                           120, &out, &err);
    ck_assert_msg(rc == 0, "explore with FIFOs in the cache: exit %d\n%s", rc, err);
    ck_assert_has(out, "status: ok 2");
    d = opendir(cache);
    for (struct dirent *e; d && (e = readdir(d));) {
        struct stat st;
        ck_assert(lstat(arena_text(c.a, "%s/%s", cache, e->d_name), &st) == 0);
        ck_assert_msg(!S_ISFIFO(st.st_mode), "the cache's %s is still a FIFO", e->d_name);
    }
    if (d) closedir(d);
    cli_close(&c);
}
END_TEST

/* ---- terminal escapes ---- */

/* No control character but line breaks, and no C1 control (U+009B, CSI, in
 * UTF-8), in what strata printed. */
static void prints_no_escapes(const char *what, const char *text) {
    for (const unsigned char *p = (const unsigned char *)text; *p; p++)
        ck_assert_msg((*p >= 0x20 && *p != 0x7f && !(p[0] == 0xc2 && p[1] >= 0x80 && p[1] < 0xa0)) || *p == '\n' ||
                          *p == '\t',
                      "%s printed the byte 0x%02x raw:\n%s", what, *p, text);
}

/* index.json's device name and strategy with ESC, CR, BEL and CSI in them
 * (a doctored index): `strata run --results` and `strata results` show
 * them with `?` for each, as does an error that quotes an exploration's
 * doctored device. */
START_TEST(text_from_files_reaches_the_terminal_without_escapes) {
    cli c;
    cli_open(&c, "hostile");
    st_device_info *list;
    size_t n;
    st_err e = {0};
    ck_assert_msg(st_devices_list(&list, &n, &e), "%s", e.message);
    const char *results = arena_text(c.a, "%s/R", c.dir);
    const char *index = arena_text(c.a,
                                   "{\"strata_results\": 1, \"devices\": {\"cpu\": {\"name\": "
                                   "\"dev\\u001b[31mRED\\r\\u0007\\u009b\", \"vendor\": \"v\", \"type\": \"%s\", \"programs\": "
                                   "{\"prefix_sum\": {\"strategy\": \"parallel-scan(BS=32, BF=2, SE=2)\\u001b]0;pwned\\u0007\", "
                                   "\"path\": \"cpu/prefix_sum\"}}}}}",
                                   list[0].type); /* the type of the device the test runs on: run takes it */
    free(list);
    ck_assert(mkdir(results, 0700) == 0);
    ck_assert(st_write_file(arena_text(c.a, "%s/index.json", results), index, strlen(index), NULL));
    char *out, *err;
    int rc = cli_strata(&c, ARGS("run", example_path(&c, "prefix_sum.strata"), "--size", "N=100", "--results", results),
                        &out, &err);
    ck_assert_msg(rc == 0, "strata run: exit %d\n%s", rc, err);
    prints_no_escapes("strata run", err);
    ck_assert_has(err, "strategy: parallel-scan(BS=32, BF=2, SE=2)?]0;pwned? (");
    ck_assert_has(err, "exported for dev?[31mRED???, the default for its type");
    rc = cli_strata(&c, ARGS("results", results), &out, &err);
    ck_assert_msg(rc == 0, "strata results: exit %d\n%s", rc, err);
    prints_no_escapes("strata results", out);
    ck_assert_has(out, "parallel-scan(BS=32, BF=2, SE=2)?]0;pwned?\n");
    /* an error that quotes a file: two explorations, one of a doctored device */
    const char *a = explored(&c), *b = arena_text(c.a, "%s/other", c.dir);
    ck_assert(mkdir(b, 0700) == 0);
    const char *files[] = {"explore.json", "program.strata", "results.jsonl"};
    for (size_t i = 0; i < 3; i++) {
        size_t len;
        const char *text = slurp_file(c.a, arena_text(c.a, "%s/%s", a, files[i]), &len);
        ck_assert(st_write_file(arena_text(c.a, "%s/%s", b, files[i]), text, len, NULL));
    }
    doctor(&c, b, "device", "x\\u001b[2J\\r\\u0007");
    rc = cli_strata(&c, ARGS("merge", a, b, "--out", arena_text(c.a, "%s/merged", c.dir)), &out, &err);
    ck_assert_msg(rc == 1, "merge of two devices' explorations: exit %d\n%s", rc, err);
    prints_no_escapes("strata merge", err);
    ck_assert_has(err, "device=x?[2J?" "?)"); /* (split: no trigraph) */
    cli_close(&c);
}
END_TEST

static Suite *hostile_suite(void) {
    Suite *s = suite_create("hostile");
    TCase *code = tcase_create("code");
    tcase_set_timeout(code, 300);
    tcase_add_test(code, code_in_a_directory_name_does_not_run);
    tcase_add_test(code, code_in_explore_json_does_not_run_at_export);
    suite_add_tcase(s, code);
    TCase *folders = tcase_create("folders");
    tcase_set_timeout(folders, 300);
    tcase_add_test(folders, a_program_name_that_leaves_into_is_refused);
    tcase_add_test(folders, a_program_file_without_a_name_is_refused);
    tcase_add_test(folders, an_index_that_names_other_folders_is_refused);
    tcase_add_test(folders, device_folders_and_names_are_one_safe_component);
    tcase_add_test(folders, a_record_whose_strategy_is_not_its_points_is_refused);
    suite_add_tcase(s, folders);
    TCase *files = tcase_create("not files");
    tcase_set_timeout(files, 300);
    tcase_add_test(files, a_fifo_where_a_file_is_read_is_refused);
    tcase_add_test(files, a_fifo_in_the_build_cache_is_replaced);
    suite_add_tcase(s, files);
    TCase *terminal = tcase_create("terminal");
    tcase_set_timeout(terminal, 300);
    tcase_add_test(terminal, text_from_files_reaches_the_terminal_without_escapes);
    suite_add_tcase(s, terminal);
    return s;
}

int main(void) { return run_suite(hostile_suite()); }
