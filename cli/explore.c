/* cli/explore.c — `strata explore`: a space explored on a device, with a
 * progress display, and what was found. */
#include "cli.h"

#include "explore/explore.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const option explore_options[] = {
    {"--space", NULL, "SPACE", false, "the strategy with parameter ranges, e.g. 'parallel-scan(BS=[32..512 pow2], BF=2, SE=[1..16 pow2])'"},
    {"--out", NULL, "DIR", false, "where the records go (an interrupted exploration resumes there)"},
    {"--size", NULL, "N=VALUE", true, "a size; arrays not given as --input are generated at random"},
    {"--input", NULL, "NAME=VALUE", true, "a parameter: a .npy file for an array, a number for a scalar"},
    {"--seed", NULL, "S", false, "the seed of generated arrays (default 1)"},
    {"--device", NULL, "D", false, "the device: its index in `strata devices`, or part of its name"},
    {"--backend", NULL, "B", false, "{backend-runs}"},
    {"--runs", NULL, "K", false, "timed runs per variant, after 2 warm-up runs (default 10, at least 7)"},
    {"--timeout", NULL, "SECONDS", false, "a variant's time limit to build, check and time it (default 60)"},
    {"--jobs", NULL, "J", false, "variants built and checked in parallel (default: the number of processors)"},
    {"--max-points", NULL, "N", false, "the most points one exploration (or shard) takes on (default 1000000)"},
    {"--shard", NULL, "I/N", false, "explore only the points whose index % N == I (0 <= I < N); see `strata merge`"},
    {"--cache", NULL, "DIR", false, "the build cache (default $STRATA_CACHE, else ~/.cache/strata); `none` for none"},
    {"--entry", NULL, "NAME", false, "the def to explore (default: main, or the only def)"},
    {"--serve", NULL, NULL, false, "evaluate the points asked for on standard input, a JSON line each (the autotuner's way)"},
    {0}};

static bool shard_option(const args *a, uint32_t *shard, uint32_t *nshards, st_err *err) {
    *shard = 0;
    *nshards = 1;
    const char *text = opt(a, "--shard");
    if (!text) return true;
    unsigned long i, n;
    int used = -1;
    if (sscanf(text, "%lu/%lu%n", &i, &n, &used) != 2 || used != (int)strlen(text) || n < 1 || n > 1000000 || i >= n)
        return st_fail(err, (st_loc){0}, "--shard takes I/N with 0 <= I < N, as in --shard 0/4, not `%s`", text);
    *shard = (uint32_t)i;
    *nshards = (uint32_t)n;
    return true;
}

/* "prefix_sum" from "examples/prefix_sum.strata"; "-ENTRY" added for an
 * entry other than main. */
void program_name(const char *path, const char *entry, char *out, size_t cap) {
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    size_t n = strcspn(base, ".");
    snprintf(out, cap, "%.*s%s%s", (int)n, base, entry && strcmp(entry, "main") ? "-" : "",
             entry && strcmp(entry, "main") ? entry : "");
}

/* ---- progress ---- */

typedef struct display {
    bool tty;
    bool bar_shown;
    char header[512]; /* said once the exploration is under way, not before an error */
} display;

static void clock_text(double s, char *out, size_t cap) {
    if (s < 0) snprintf(out, cap, "?");
    else snprintf(out, cap, "%d:%02d", (int)(s / 60), (int)s % 60);
}

static void show_progress(void *data, const st_explore_progress *p) {
    display *d = data;
    char eta[32], elapsed[32];
    clock_text(p->eta_s, eta, sizeof eta);
    clock_text(p->elapsed_s, elapsed, sizeof elapsed);
    bool building = !strcmp(p->phase, "check");
    char batch[64] = ""; /* a space of more than one batch says which */
    if (p->batches > 1)
        snprintf(batch, sizeof batch, "batch %llu/%llu ", (unsigned long long)p->batch, (unsigned long long)p->batches);
    if (d->header[0]) {
        fprintf(stderr, "%s\n", d->header);
        d->header[0] = 0;
    }
    if (d->tty) {
        int width = 24, filled = p->total ? (int)(width * p->done / p->total) : width;
        fprintf(stderr, "\r\033[K%s%s [%.*s%*s] %llu/%llu  %s, eta %s", batch, building ? "check" : "time ", filled,
                "########################", width - filled, "", (unsigned long long)p->done,
                (unsigned long long)p->total, elapsed, eta);
        if (p->best) say(stderr, "  best %.4g ms %.60s", p->best->median_ms, p->best->strategy);
        d->bar_shown = true;
        if (p->done == p->total) {
            fputc('\n', stderr);
            d->bar_shown = false;
        }
        fflush(stderr);
        return;
    }
    if (building) {
        if (p->done == 0) fprintf(stderr, "%sbuilding and checking %llu variants\n", batch, (unsigned long long)p->total);
        else if (p->done == p->total) fprintf(stderr, "built and checked in %s\n", elapsed);
        return;
    }
    if (!p->last) return;
    const st_record *r = p->last;
    fprintf(stderr, "[%llu/%llu] %-12s ", (unsigned long long)p->done, (unsigned long long)p->total,
            st_status_name(r->status));
    if (r->status == ST_STATUS_OK) fprintf(stderr, "%9.4f ms %8.3f GB/s  ", r->median_ms, r->gb_per_s);
    /* (a record's strategy and message: what a resumed exploration read
     * from results.jsonl, what a device compiler said) */
    say(stderr, "%s", r->strategy);
    if (r->status != ST_STATUS_OK && r->message && r->message[0]) {
        size_t n = strcspn(r->message, "\n");
        say(stderr, "\n    %.*s", (int)(n > 200 ? 200 : n), r->message);
    }
    fputc('\n', stderr);
}

static void print_summary(const st_explore_summary *sum, const char *dir);
static void cache_dir(const args *a, char *out, size_t cap);

/* ---- SIGINT and SIGTERM: the exploration ends cleanly ---- */

/* The signal that asked the exploration to stop, 0 before one did. Static
 * because a signal handler has nowhere else to put it; the library polls
 * it through st_explore_setup.stop. */
static volatile sig_atomic_t stop_signal;

static void ask_to_stop(int sig) { stop_signal = sig; }

/* Until the next call with false, SIGINT and SIGTERM set stop_signal
 * (without SA_RESTART: a wait ends early to look at it); then the actions
 * before are put back. */
static void catch_interrupts(bool on, struct sigaction saved[2]) {
    static const int sigs[2] = {SIGINT, SIGTERM};
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = ask_to_stop;
    sigemptyset(&sa.sa_mask);
    for (int i = 0; i < 2; i++) {
        if (on) sigaction(sigs[i], &sa, &saved[i]);
        else sigaction(sigs[i], &saved[i], NULL);
    }
}

/* ---- the command ---- */

int run_explore(const command *cmd, int argc, char **argv) {
    args a;
    loaded l;
    int rc = begin(cmd, argc, argv, true, &a, &l);
    if (rc >= 0) return rc;
    st_err err = {0};
    st_registry *reg = registry(&a, &rc);
    st_space *space = NULL;
    const char *inputs[MAX_VALUES];
    uint32_t ninputs = 0;
    const char *shown = NULL;
    if (!reg) goto done;
    if (!opt(&a, "--space") || !opt(&a, "--out")) {
        rc = usage_error(cmd, "%s", !opt(&a, "--space") ? "--space SPACE is needed (what to explore)"
                                                         : "--out DIR is needed (where the records go)");
        goto done;
    }
    int64_t max_points = (int64_t)ST_EXPLORE_MAX_POINTS;
    int64_t runs = 10, timeout = 60, jobs = sysconf(_SC_NPROCESSORS_ONLN) > 0 ? sysconf(_SC_NPROCESSORS_ONLN) : 1;
    uint64_t seed = 1;
    uint32_t shard, nshards;
    if (!number_option(&a, "--runs", 7, ST_EXPLORE_MAX_RUNS, &runs, &err) ||
        !number_option(&a, "--timeout", 1, 7 * 24 * 3600, &timeout, &err) ||
        !number_option(&a, "--jobs", 1, ST_EXPLORE_MAX_JOBS, &jobs, &err) || !shard_option(&a, &shard, &nshards, &err) ||
        !number_option(&a, "--max-points", 1, INT64_MAX, &max_points, &err))
        goto fail;
    if (opt(&a, "--seed")) {
        st_scalar s;
        if (!st_scalar_parse(ST_U64, opt(&a, "--seed"), "--seed", &s, &err)) goto fail;
        seed = s.u64;
    }
    char spec_buf[512];
    const char *spec;
    if (!device_option(&a, spec_buf, sizeof spec_buf, &spec, &err)) goto fail;
    for (int i = 0; i < a.nopts; i++)
        if (!strcmp(a.opt_name[i], "--size") || !strcmp(a.opt_name[i], "--input")) inputs[ninputs++] = a.opt_value[i];
    if (!(space = st_space_parse("space", opt(&a, "--space"), &err))) {
        shown = opt(&a, "--space");
        goto fail;
    }
    char cache[4096], name[256];
    cache_dir(&a, cache, sizeof cache);
    program_name(a.positional[0], opt(&a, "--entry"), name, sizeof name);
    st_explore_setup setup = {
        .cx = l.cx, .program = l.program, .def = l.def, .reg = reg, .program_path = a.positional[0],
        .program_source = l.source, .program_name = name, .inputs = inputs, .ninputs = ninputs, .seed = seed,
        .device = spec, .cache_dir = cache[0] ? cache : NULL, .runs = (uint32_t)runs, .warmups = 2,
        .tolerance = ST_TOLERANCE, .timeout_s = (double)timeout, .build_timeout_s = (double)timeout, .jobs = (uint32_t)jobs,
        .max_points = (uint64_t)max_points};
    if (opt(&a, "--serve")) {
        if (opt(&a, "--shard") || opt(&a, "--jobs")) {
            rc = usage_error(cmd, "%s", "--serve evaluates one point at a time: it takes no --shard or --jobs");
            goto done;
        }
        if (serve_points(&setup, space, opt(&a, "--out"), &err)) rc = 0;
        else rc = report(&err, st_err_in(&err, "space") ? opt(&a, "--space") : NULL);
        goto done;
    }
    display d = {.tty = isatty(STDERR_FILENO)};
    st_explore_summary sum;
    const char *dir = opt(&a, "--out");
    snprintf(d.header, sizeof d.header, "exploring %s (%s) over %llu points%s", name, l.def->name,
             (unsigned long long)st_space_npoints(space), nshards > 1 ? ", this shard's share" : "");
    struct sigaction saved[2];
    setup.stop = &stop_signal;
    catch_interrupts(true, saved);
    bool ok = st_explore(&setup, space, dir, shard, nshards, show_progress, &d, &sum, &err);
    catch_interrupts(false, saved);
    if (d.bar_shown) fputc('\n', stderr);
    if (!ok && stop_signal) { /* what is recorded stays: the same command goes on from there */
        uint64_t mine = st_space_shard_points(space, shard, nshards), recorded = 0;
        for (int k = 0; k <= ST_STATUS_CRASH; k++) recorded += sum.counts[k];
        fprintf(stderr, "strata: interrupted by %s: %llu of %llu points recorded in %s/results.jsonl; run the same command to go on\n",
                stop_signal == SIGINT ? "SIGINT" : "SIGTERM", (unsigned long long)recorded, (unsigned long long)mine, dir);
        st_explore_summary_free(&sum);
        rc = 128 + stop_signal;
        goto done;
    }
    if (!ok) {
        if (st_err_in(&err, "space")) shown = opt(&a, "--space");
        if (st_err_in(&err, l.program->file)) shown = l.source;
        st_explore_summary_free(&sum);
        goto fail;
    }
    say(stdout, "device: %s (%s)\n", sum.device.name, sum.device.platform);
    printf("points: %llu in this shard, %llu already recorded\n", (unsigned long long)sum.points,
           (unsigned long long)sum.skipped);
    print_summary(&sum, dir);
    st_explore_summary_free(&sum);
    rc = 0;
    goto done;
fail:
    rc = report(&err, shown);
done:
    st_space_free(space);
    st_registry_free(reg);
    unload_program(&l);
    return rc;
}

/* ---- merge ---- */

const option merge_options[] = {
    {"--out", NULL, "DIR", false, "where the merged records go"},
    {0}};

static void print_summary(const st_explore_summary *sum, const char *dir) {
    printf("status:");
    for (int s = 0; s <= ST_STATUS_CRASH; s++)
        if (sum->counts[s]) printf(" %s %llu", st_status_name((st_status)s), (unsigned long long)sum->counts[s]);
    printf("\n");
    if (sum->best.strategy)
        say(stdout, "best: %s\n      median %.4f ms (min %.4f, max %.4f over %u runs), %.3f GB/s\n", sum->best.strategy,
               sum->best.median_ms, sum->best.min_ms, sum->best.max_ms, sum->best.nsamples, sum->best.gb_per_s);
    else
        printf("best: none (no variant ran correctly)\n");
    printf("records: %s/results.jsonl, %s/results.csv%s%s%s\n", dir, dir, sum->chart ? ", " : "",
           sum->chart ? dir : "", sum->chart ? "/results.svg" : "");
    if (sum->best.strategy) printf("export: strata export %s --into results\n", dir);
}

int run_merge(const command *cmd, int argc, char **argv) {
    args a;
    int rc = parse_args(cmd, argc, argv, &a);
    if (rc >= 0) return rc;
    if (!opt(&a, "--out")) return usage_error(cmd, "%s", "--out DIR is needed (where the merged records go)");
    st_err err = {0};
    st_explore_summary sum;
    bool ok = st_merge(a.positional, (uint32_t)a.npositional, opt(&a, "--out"), &sum, &err);
    for (const char *w = sum.warnings.data; w && *w; w = strchr(w, '\n') + 1)
        say(stderr, "warning: %.*s\n", (int)strcspn(w, "\n"), w); /* (of records: their strategies) */
    if (!ok) {
        st_explore_summary_free(&sum);
        return report(&err, NULL);
    }
    printf("merged %d explorations: %llu points\n", a.npositional, (unsigned long long)sum.points);
    print_summary(&sum, opt(&a, "--out"));
    st_explore_summary_free(&sum);
    return 0;
}

/* ---- export ---- */

const option export_options[] = {
    {"--into", NULL, "DIR", false, "the results folder (default: results)"},
    {"--top", NULL, "K", false, "how many of the best variants to measure again (default 3)"},
    {"--timeout", NULL, "SECONDS", false, "a variant's time limit (default 60)"},
    {"--cache", NULL, "DIR", false, "the build cache (default $STRATA_CACHE, else ~/.cache/strata); `none` for none"},
    {0}};

static void cache_dir(const args *a, char *out, size_t cap) {
    const char *given = opt(a, "--cache");
    out[0] = 0;
    if (given && strcmp(given, "none")) snprintf(out, cap, "%s", given);
    else if (!given) st_default_cache_dir(out, cap);
}

int run_export(const command *cmd, int argc, char **argv) {
    args a;
    int rc = parse_args(cmd, argc, argv, &a);
    if (rc >= 0) return rc;
    st_err err = {0};
    int64_t top = 3, timeout = 60;
    if (!number_option(&a, "--top", 1, 1000, &top, &err) || !number_option(&a, "--timeout", 1, 7 * 24 * 3600, &timeout, &err))
        return report(&err, NULL);
    st_registry *reg = registry(&a, &rc);
    if (!reg) return rc;
    char cache[4096];
    cache_dir(&a, cache, sizeof cache);
    st_export_setup setup = {.dir = a.positional[0], .into = opt(&a, "--into") ? opt(&a, "--into") : "results",
                             .top = (uint32_t)top, .cache_dir = cache[0] ? cache : NULL, .timeout_s = (double)timeout};
    st_export_result res;
    fprintf(stderr, "measuring the best %lld variants of %s again\n", (long long)top, setup.dir);
    if (!st_export(&setup, reg, &res, &err)) {
        rc = report(&err, NULL);
    } else {
        say(stdout, "device: %s\n", res.device.name);
        say(stdout, "best of %u: %s\n      median %.4f ms (min %.4f, max %.4f over %u runs), %.3f GB/s\n", res.measured,
               res.best.strategy, res.best.median_ms, res.best.min_ms, res.best.max_ms, res.best.nsamples,
               res.best.gb_per_s);
        printf("kernels: %s/kernels.cl, %s/host.c\nrecord: %s/record.json\nindex: %s/index.json\n", res.path, res.path,
               res.path, setup.into);
        rc = 0;
    }
    st_export_result_free(&res);
    st_registry_free(reg);
    return rc;
}

/* ---- results ---- */

const option results_options[] = {
    {"--json", NULL, NULL, false, "one JSON object on standard output, for scripts"},
    {0}};

/* A cell of the table, one line, as a terminal should see it: index.json
 * is data from elsewhere (a device's name). */
static int put_cell(const char *text, int width, bool put) {
    st_buf b = {0};
    int n = (int)safe_text(&b, text, strlen(text), false);
    if (put && b.data) fwrite(b.data, 1, b.len, stdout);
    st_buf_free(&b);
    if (put) printf("%*s", width > n ? width - n : 0, "");
    return n;
}

/* A row's six cells; ms and gbs are the caller's buffers of 32 */
static void cells_of(const st_results_entry *e, char *ms, char *gbs, const char *cells[6]) {
    snprintf(ms, 32, "%.4f", e->median_ms);
    snprintf(gbs, 32, "%.1f", e->gb_per_s);
    const char *row[6] = {e->device_key, e->program, ms, gbs, e->exported_at[0] ? e->exported_at : "?", e->strategy};
    memcpy(cells, row, sizeof row);
}

static void put_table(const st_results_entry *es, size_t n) {
    /* the variant last: a composite strategy is long */
    static const char *const heads[6] = {"device", "program", "ms", "GB/s", "exported", "variant"};
    int w[6];
    char ms[32], gbs[32];
    const char *cells[6];
    for (int c = 0; c < 6; c++) w[c] = put_cell(heads[c], 0, false);
    for (size_t i = 0; i < n; i++) {
        cells_of(&es[i], ms, gbs, cells);
        for (int c = 0; c < 6; c++)
            if (put_cell(cells[c], 0, false) > w[c]) w[c] = put_cell(cells[c], 0, false);
    }
    for (int c = 0; c < 6; c++) put_cell(heads[c], c < 5 ? w[c] + 2 : 0, true);
    putchar('\n');
    for (size_t i = 0; i < n; i++) {
        cells_of(&es[i], ms, gbs, cells);
        for (int c = 0; c < 6; c++) put_cell(cells[c], c < 5 ? w[c] + 2 : 0, true);
        putchar('\n');
    }
}

static void put_json(const char *into, const st_results_entry *es, size_t n) {
    st_buf b = {0};
    st_buf_puts(&b, "{\"strata_results\": 1, \"into\": ");
    st_json_put_string(&b, into);
    st_buf_puts(&b, ", \"exports\": [");
    for (size_t i = 0; i < n; i++) {
        const st_results_entry *e = &es[i];
        const char *fields[][2] = {{"device", e->device_key}, {"name", e->device},     {"vendor", e->vendor},
                                   {"type", e->type},         {"program", e->program}, {"strategy", e->strategy},
                                   {"path", e->path},         {"exported_at", e->exported_at}};
        st_buf_puts(&b, i ? ",\n  {" : "\n  {");
        for (size_t f = 0; f < sizeof fields / sizeof *fields; f++) {
            st_json_put_key(&b, f ? ", " : "", fields[f][0]);
            st_json_put_string(&b, fields[f][1]);
        }
        st_buf_puts(&b, ", \"median_ms\": ");
        st_json_put_number(&b, e->median_ms);
        st_buf_puts(&b, ", \"gb_per_s\": ");
        st_json_put_number(&b, e->gb_per_s);
        st_buf_puts(&b, "}");
    }
    st_buf_puts(&b, n ? "\n]}\n" : "]}\n");
    fputs(b.data ? b.data : "", stdout);
    st_buf_free(&b);
}

int run_results(const command *cmd, int argc, char **argv) {
    args a;
    int rc = parse_args(cmd, argc, argv, &a);
    if (rc >= 0) return rc;
    const char *into = a.npositional ? a.positional[0] : "results";
    st_err err = {0};
    st_arena *arena = st_arena_new();
    st_results_entry *es;
    size_t n;
    if (!arena) return st_fail_internal(&err, "out of memory"), report(&err, NULL);
    if (!st_results_list(into, arena, &es, &n, &err)) {
        rc = report(&err, NULL);
    } else {
        if (opt(&a, "--json")) put_json(into, es, n);
        else put_table(es, n);
        rc = 0;
    }
    st_arena_free(arena);
    return rc;
}
