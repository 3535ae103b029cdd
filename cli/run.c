/* cli/run.c — `strata run`: rewrite, lower, generate, build, run on OpenCL,
 * and optionally check against the interpreter and time. */
#include "cli.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const option run_options[] = {
    {"--strategy", "-s", "STRATEGY", false, "the strategy to apply before lowering (default: the best exported for the device, else the look-back scan shaped for the device type)"},
    {"--results", NULL, "DIR", false, "where `strata export` wrote the best variants (default: results)"},
    {"--input", NULL, "NAME=VALUE", true, "a parameter: a .npy file for an array, a number for a scalar"},
    {"--size", NULL, "N=VALUE", true, "a size; arrays not given as --input are generated at random"},
    {"--seed", NULL, "S", false, "the seed of generated arrays (default 1)"},
    {"--output", NULL, "DIR", false, "write the results as DIR/0.npy, DIR/1.npy, …"},
    {"--device", NULL, "D", false, "the device: its index in `strata devices`, or part of its name"},
    {"--backend", NULL, "B", false, "{backend-runs}"},
    {"--check", NULL, NULL, false, "compare the results with the reference interpreter's"},
    {"--time", NULL, NULL, false, "time the kernels: warm-up runs, then --runs runs; median, min, max and GB/s"},
    {"--runs", NULL, "K", false, "timed runs for --time (default 10)"},
    {"--emit", NULL, "DIR", false, "write the lowered program, the kernels ({kernel-files}) and the host glue (host.c) to DIR"},
    {"--entry", NULL, "NAME", false, "the def to run (default: main, or the only def)"},
    {"--verbose", "-v", NULL, false, "also print the program that ran: the strategy's rewriting, lowered"},
    {0}};

static bool write_file(const char *dir, const char *name, const char *text, st_err *err) {
    char path[4200];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    /* a FIFO or a device at path is refused, not waited on */
    int fd = st_open_regular(path, O_WRONLY | O_CREAT | O_TRUNC, NULL, err);
    if (fd < 0) return false;
    FILE *f = fdopen(fd, "w");
    if (!f) {
        close(fd);
        return st_fail(err, (st_loc){path, 0, 0}, "cannot write the file");
    }
    bool ok = fputs(text, f) >= 0;
    ok = fclose(f) == 0 && ok;
    if (!ok) return st_fail(err, (st_loc){path, 0, 0}, "cannot write the file");
    printf("%s\n", path);
    return true;
}

/* Every backend's kernels into dir, each in its own file. */
static bool write_kernels(const char *dir, const st_code *code, st_err *err) {
    size_t n;
    const st_backend *const *backends = st_backends(&n);
    for (size_t i = 0; i < n; i++)
        if (!write_file(dir, backends[i]->kernel_file, st_backend_kernels(backends[i], code), err)) return false;
    return true;
}

/* The strategy, then the default lowering (which leaves what the user
 * lowered alone). */
static const st_def *lowered(const char *text, const loaded *l, const st_registry *reg, st_err *err) {
    st_rw *rw = st_rw_new(l->cx, reg);
    if (!rw) return st_fail_internal(err, "out of memory"), NULL;
    const st_def *def = l->def;
    {
        const st_strategy *s = st_strategy_parse(l->cx, reg, "strategy", text, err);
        if (!s) {
            st_rw_free(rw);
            return NULL;
        }
        def = st_rewrite_def(rw, s, def, err);
        if (!def) *err = not_applied(err, l, s);
    }
    if (def) def = st_rewrite_def(rw, st_default_lowering(l->cx, reg), def, err);
    st_rw_free(rw);
    return def;
}

/* --runs, checked before anything runs. */
static bool timed_runs(const args *a, int64_t *runs, st_err *err) {
    *runs = 10;
    if (!opt(a, "--runs")) return true;
    if (!opt(a, "--time")) return st_fail(err, (st_loc){0}, "--runs says how often --time runs the program; give --time too");
    return number_option(a, "--runs", 1, 100000, runs, err);
}

/* -v's breakdown: each kernel's median over the runs, and its share of
 * the program's median, so that a user sees which kernel to work on. */
static void print_kernel_times(const st_code *code, const double *kernel_ms, int64_t runs, double total_ms) {
    double *mine = malloc((size_t)runs * sizeof *mine);
    if (!mine) return;
    printf("kernels (median of each; a kernel in a loop: its last turn):\n");
    for (uint32_t k = 0; k < code->nkernels; k++) {
        size_t n = 0;
        for (int64_t r = 0; r < runs; r++)
            if (kernel_ms[(size_t)r * code->nkernels + k] >= 0) mine[n++] = kernel_ms[(size_t)r * code->nkernels + k];
        if (!n) {
            printf("  %-24s did not run\n", code->kernel_names[k]);
            continue;
        }
        st_timing t = st_timing_of(mine, n);
        printf("  %-24s %10.4f ms  %5.1f %%\n", code->kernel_names[k], t.median_ms,
               total_ms > 0 ? 100 * t.median_ms / total_ms : 0.0);
    }
    free(mine);
}

static bool time_runs(st_launch *launch, const st_code *code, int64_t runs, bool per_kernel, st_err *err) {
    double *ms = malloc((size_t)runs * sizeof *ms);
    double *kernel_ms = per_kernel ? malloc((size_t)runs * (code->nkernels + 1) * sizeof *kernel_ms) : NULL;
    if (!ms || (per_kernel && !kernel_ms)) return free(ms), free(kernel_ms), st_fail_internal(err, "out of memory");
    if (!st_launch_time(launch, 2, (uint32_t)runs, ms, kernel_ms, err)) return free(ms), free(kernel_ms), false;
    st_timing t = st_timing_of(ms, (size_t)runs);
    double bytes = (double)st_launch_bytes(launch);
    printf("time: median %.4f ms, min %.4f ms, max %.4f ms over %lld runs; %.3f GB/s (%.0f bytes read and written)\n",
           t.median_ms, t.min_ms, t.max_ms, (long long)runs, t.median_ms > 0 ? bytes / (t.median_ms * 1e6) : 0.0,
           bytes);
    if (per_kernel) print_kernel_times(code, kernel_ms, runs, t.median_ms);
    free(ms);
    free(kernel_ms);
    return true;
}

/* Without -s: the variant `strata export` found best for this device (or
 * its vendor, or anywhere), else the default. An exported strategy that no
 * longer applies (the program changed) gives way to the default. */
static const st_def *lowered_best(const args *a, const loaded *l, const st_registry *reg, const st_device_info *dev,
                                  st_err *err) {
    if (opt(a, "--strategy")) return lowered(opt(a, "--strategy"), l, reg, err);
    char name[256];
    program_name(a->positional[0], opt(a, "--entry"), name, sizeof name);
    st_buf strategy = {0}, from = {0};
    bool found = false;
    const st_def *def = NULL;
    if (!st_results_lookup(opt(a, "--results") ? opt(a, "--results") : "results", dev, name, &found, &strategy,
                           &from, err))
        return NULL;
    if (found) {
        /* (index.json's words: the strategy, the device's name) */
        say(stderr, "strategy: %s (%s; -s picks another)\n", strategy.data, from.data);
        st_err why = {0};
        if (!(def = lowered(strategy.data, l, reg, &why)))
            say(stderr, "warning: the exported strategy does not apply (%s%s); using the default\n", why.message,
                    strstr(why.message, "unknown rule") ? "; was it exported with rules from a plugin? give it with --plugin"
                                                        : "");
    }
    st_buf_free(&strategy);
    st_buf_free(&from);
    if (def) return def;
    const char *text = st_default_strategy(dev->type);
    fprintf(stderr, "strategy: %s (the default for a %s: no export for this device; -s picks another)\n", text,
            dev->type && !strcmp(dev->type, "CPU") ? "CPU" : "GPU");
    return lowered(text, l, reg, err);
}

int run_run(const command *cmd, int argc, char **argv) {
    args a;
    loaded l;
    int rc = begin(cmd, argc, argv, true, &a, &l);
    if (rc >= 0) return rc;
    st_err err = {0};
    st_arena *arena = st_arena_new();
    st_registry *reg = registry(&a, &rc);
    st_cl *cl = NULL;
    st_exe *exe = NULL;
    st_launch *launch = NULL;
    const char *shown = NULL; /* the text an error's location is in */
    if (!reg) goto done_rc;
    if (!arena) {
        st_fail_internal(&err, "out of memory");
        goto fail;
    }
    int64_t runs;
    if (!timed_runs(&a, &runs, &err)) goto fail;
    char spec_buf[512];
    const char *spec;
    if (!device_option(&a, spec_buf, sizeof spec_buf, &spec, &err)) goto fail;
    /* an unusable output directory is found before the work, not after */
    if (opt(&a, "--output") && !st_make_dirs(opt(&a, "--output"), &err)) goto fail;
    const st_value *values;
    const st_binding *env;
    size_t nenv;
    if (!gather_inputs(&a, &l, arena, &values, &env, &nenv, &err)) {
        shown = l.source;
        goto fail;
    }
    if (!(cl = st_cl_open(spec, &err))) goto fail;
    const st_device_info *dev = st_cl_device(cl);
    const st_def *def = lowered_best(&a, &l, reg, dev, &err);
    if (!def) {
        shown = st_err_in(&err, "strategy") ? opt(&a, "--strategy") : NULL;
        goto fail;
    }
    st_code code;
    if (!st_codegen(l.cx, def, arena, &code, &err)) goto fail;
    const char *emit = opt(&a, "--emit");
    if (emit) {
        st_buf prog = {0};
        st_print_def(def, &prog);
        bool ok = st_make_dirs(emit, &err) && write_file(emit, "program.strata", prog.data ? prog.data : "", &err) &&
                  write_kernels(emit, &code, &err) && write_file(emit, "host.c", code.host, &err);
        st_buf_free(&prog);
        if (!ok) goto fail;
    }
    if (opt(&a, "--verbose")) {
        st_buf prog = {0};
        st_print_def(def, &prog);
        fprintf(stderr, "program, rewritten and lowered:\n%s", prog.data ? prog.data : "");
        st_buf_free(&prog);
    }
    say(stderr, "device %u: %s (%s); %u kernels\n", dev->index, dev->name, dev->platform, code.nkernels);
    if (!(exe = st_exe_build(cl, &code, &err))) goto fail;
    if (!(launch = st_launch_new(exe, values, env, nenv, &err))) goto fail;
    if (!st_launch_run(launch, NULL, &err)) goto fail;
    st_value result;
    if (!st_launch_read(launch, arena, &result, &err)) goto fail;
    if (opt(&a, "--check")) {
        st_expected want;
        if (!st_eval_expected(l.cx, l.def, values, env, nenv, arena, &want, &err)) goto fail;
        if (!st_expected_agree(&result, &want, ST_TOLERANCE, &err)) {
            st_err why = err;
            st_fail(&err, (st_loc){0}, "check: the device disagrees with the interpreter: %s", why.message);
            goto fail;
        }
        fprintf(stderr, "check: the results equal the interpreter's (integers exactly, floats within "
                        "%g·ε·(1 + √c)·m: docs/checking.md)\n", ST_TOLERANCE);
    }
    if (!write_results(opt(&a, "--output"), arena, &result, &err)) goto fail;
    if (opt(&a, "--time") && !time_runs(launch, &code, runs, opt(&a, "--verbose") != NULL, &err)) goto fail;
    rc = 0;
    goto done_rc;
fail:
    rc = report(&err, shown);
done_rc:
    st_launch_free(launch);
    st_exe_free(exe);
    st_cl_close(cl);
    st_registry_free(reg);
    st_arena_free(arena);
    unload_program(&l);
    return rc;
}
