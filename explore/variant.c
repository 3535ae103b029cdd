/* explore/variant.c — a point of a space as code, and the child processes
 * that build, check and time it. */
#include "variant.h"

#include "strategies/strategies.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

bool bench_open(bench *b, const st_explore_setup *s, st_arena *a, st_err *err) {
    memset(b, 0, sizeof *b);
    b->setup = s;
    st_inputs *in = st_inputs_new(s->cx, s->def, a);
    if (!in) return st_fail_internal(err, "out of memory");
    for (uint32_t i = 0; i < s->ninputs; i++)
        if (!st_inputs_set(in, s->inputs[i], err)) return false;
    return st_inputs_generate(in, s->seed, err) && st_inputs_finish(in, &b->args, &b->env, &b->nenv, err) &&
           bench_reference(b, a, err);
}

static void set_message(variant *v, st_status status, const char *fmt, const char *detail) {
    v->status = status;
    snprintf(v->message, sizeof v->message, fmt, detail);
}

/* The point's strategy text parsed into v->parsed (in the setup's context,
 * where the children find it too). A value that a range or a rule's check
 * refuses makes v a constraint. false for text that is not well-formed
 * (every point would fail: err located in it) or an internal error. */
static bool parse_point(const bench *b, variant *v, st_err *err) {
    const st_explore_setup *s = b->setup;
    st_err why = {0};
    v->parsed = st_strategy_parse(s->cx, s->reg, "space", v->strategy, &why);
    if (v->parsed) return true;
    if (why.arg < 0) return *err = why, false; /* the text, not its values: every point would fail */
    set_message(v, ST_STATUS_CONSTRAINT, "%.500s", why.message);
    return true;
}

/* v's code made in this process, into a: rewritten with v->parsed, lowered
 * and generated, the program printed. A strategy that does not apply makes
 * v a constraint, a plugin rule that broke its contract a rule_error, code
 * that cannot be generated a build_error. false only for an internal error. */
static bool make_code(const bench *b, st_arena *a, variant *v, st_err *err) {
    const st_explore_setup *s = b->setup;
    st_err why = {0};
    st_rw *rw = st_rw_new(s->cx, s->reg);
    if (!rw) return st_fail_internal(err, "out of memory");
    const st_def *def = st_rewrite_def(rw, v->parsed, s->def, &why);
    if (def) def = st_rewrite_def(rw, st_default_lowering(s->cx, s->reg), def, &why);
    st_rw_free(rw);
    if (!def) {
        if (why.kind == ST_ERR_INTERNAL) return *err = why, false;
        if (why.kind == ST_ERR_RULE) set_message(v, ST_STATUS_RULE_ERROR, "%.500s", why.message);
        else set_message(v, ST_STATUS_CONSTRAINT, "does not apply: %.480s", why.message);
        return true;
    }
    if (!st_codegen(s->cx, def, a, &v->code, &why)) {
        if (why.kind == ST_ERR_INTERNAL) return *err = why, false;
        set_message(v, ST_STATUS_BUILD_ERROR, "codegen: %.490s", why.message);
        return true;
    }
    st_buf program = {0};
    st_print_def(def, &program);
    size_t len = program.data ? program.len + 1 : 1;
    char *text = program.failed ? NULL : st_arena_alloc(a, len);
    if (text) memcpy(text, program.data ? program.data : "", len);
    st_buf_free(&program);
    if (!text) return st_fail_internal(err, "out of memory");
    v->program = text;
    v->have_code = v->code_here = true;
    st_sha256_hex(v->code.opencl, strlen(v->code.opencl), v->sha);
    return true;
}

/* ---- in the children ---- */

static void reply_status(int fd, st_status status, const char *message);
static void put_reply(int fd, st_buf *b);

/* ", KEY: TEXT" into a reply; nothing without a text. */
static void put_text(st_buf *b, const char *key, const char *text) {
    if (!text) return;
    st_json_put_key(b, ", ", key);
    st_json_put_string(b, text);
}

/* The point made into code in a child (a plugin's rules run there, never
 * in the exploration's process), and what the parent needs of it back:
 * the status, and with code its sources and the program. An internal
 * error says so ("internal"). */
static void make_code_child(void *data, int fd) {
    const variant_job *job = data;
    variant v = *job->variant;
    st_arena *a = st_arena_new();
    st_err err = {0};
    if (!a || !make_code(job->bench, a, &v, &err)) {
        st_buf b = {0};
        st_buf_puts(&b, "{\"status\": \"crash\", \"message\": ");
        st_json_put_string(&b, a ? err.message : "out of memory");
        st_buf_puts(&b, ", \"internal\": true}");
        put_reply(fd, &b);
    } else if (v.status != ST_STATUS_OK) {
        reply_status(fd, v.status, v.message);
    } else {
        st_buf b = {0};
        st_buf_puts(&b, "{\"status\": \"ok\", \"message\": \"\"");
        size_t nbackends;
        const st_backend *const *backends = st_backends(&nbackends);
        for (size_t i = 0; i < nbackends; i++) put_text(&b, backends[i]->name, st_backend_kernels(backends[i], &v.code));
        put_text(&b, "host", v.code.host);
        put_text(&b, "program", v.program);
        st_buf_puts(&b, "}");
        put_reply(fd, &b);
    }
    st_arena_free(a);
}

/* v made into code in a child: its status, and with code its sources and
 * program (read into a, where they stay; v->code_here stays false: the
 * check and time children make the code again). false as variant_prepare. */
static bool code_from_child(const bench *b, st_arena *a, variant *v, st_err *err) {
    child c;
    variant_job job = {b, v};
    if (!child_start(&c, make_code_child, &job, b->setup->build_timeout_s, err)) return false;
    if (!child_finish(&c, b->setup->stop)) {
        st_buf_free(&c.out);
        return st_fail(err, (st_loc){0}, ST_EXPLORE_INTERRUPTED);
    }
    char said[sizeof v->message];
    variant_outcome(&c, &v->status, said, sizeof said, NULL);
    st_err why = {0};
    const st_json *j = c.out.len ? st_json_parse(a, "child", c.out.data, c.out.len, &why) : NULL;
    const st_json *internal = j ? st_json_get(j, "internal") : NULL;
    bool ok = true;
    if (c.out.len && !j) {
        ok = st_fail_internal(err, "reading what the process making a point's code said: %s", why.message);
    } else if (c.end == CHILD_EXITED && internal && internal->kind == ST_JSON_BOOL && internal->boolean) {
        ok = st_fail_internal(err, "%s", st_json_get_string(j, "message") ? st_json_get_string(j, "message") : "?");
    } else if (v->status == ST_STATUS_CRASH || v->status == ST_STATUS_TIMEOUT) {
        snprintf(v->message, sizeof v->message, "rewriting and generating code: %.470s", said);
    } else if (v->status != ST_STATUS_OK) {
        snprintf(v->message, sizeof v->message, "%s", said);
    } else {
        size_t nbackends;
        const st_backend *const *backends = st_backends(&nbackends);
        for (size_t i = 0; i < nbackends; i++)
            st_backend_set_kernels(backends[i], &v->code, st_json_get_string(j, backends[i]->name));
        v->code.host = st_json_get_string(j, "host");
        v->program = st_json_get_string(j, "program");
        if (!v->code.opencl || !v->code.host || !v->program) {
            v->status = ST_STATUS_CRASH;
            snprintf(v->message, sizeof v->message, "rewriting and generating code: the process making it sent no code");
        } else {
            v->have_code = true;
            st_sha256_hex(v->code.opencl, strlen(v->code.opencl), v->sha);
        }
    }
    st_buf_free(&c.out);
    return ok;
}

/* A plugin's rules run in this very process, and one that crashes, hangs or
 * scribbles over the context (a node changed after it was built) would end
 * or spoil the whole exploration (or the autotuner's session). So with
 * plugins loaded a point is made into code in a child, and only its
 * sources come back: one that dies or passes the time limit makes the point
 * a crash or a timeout, and no rule ever runs here. The check and time
 * children make the code again for themselves. The built-in rules are
 * trusted (and cheap to fork for, but a space of thousands of points need
 * not pay it). */
bool variant_prepare(const bench *b, st_arena *a, variant *v, st_err *err) {
    if (!parse_point(b, v, err)) return false;
    if (v->status != ST_STATUS_OK) return true;
    if (st_registry_plugin_count(b->setup->reg) > 0) return code_from_child(b, a, v, err);
    return make_code(b, a, v, err);
}

/* The variant's code, whole, in this child: v's own when it was made in
 * the parent, else made again here into *local (in a). NULL, with the
 * status and message to reply, when it cannot be made, or comes out other
 * than it did the first time (a rule that is not deterministic). */
static const st_code *code_here(const variant_job *job, st_arena *a, variant *local, st_status *status, st_err *err) {
    const variant *v = job->variant;
    if (v->code_here) return &v->code;
    *local = *v;
    local->status = ST_STATUS_OK;
    *status = ST_STATUS_CRASH;
    if (!make_code(job->bench, a, local, err)) return NULL;
    if (local->status != ST_STATUS_OK || strcmp(local->sha, v->sha)) {
        *status = ST_STATUS_RULE_ERROR;
        if (local->status == ST_STATUS_OK)
            st_fail(err, (st_loc){0}, "made into code again, this point gave other kernels than the first time: a rule "
                    "that is not deterministic (a rule's result depends on its node and its arguments alone)");
        else
            st_fail(err, (st_loc){0}, "made into code again, this point gave another outcome than the first time (%.300s): "
                    "a rule that is not deterministic", local->message);
        return NULL;
    }
    return &local->code;
}

static void put_reply(int fd, st_buf *b) {
    st_buf_puts(b, "\n");
    child_write(fd, b->data, b->len);
    st_buf_free(b);
}

static void reply_status(int fd, st_status status, const char *message) {
    st_buf b = {0};
    st_buf_puts(&b, "{\"status\": ");
    st_json_put_string(&b, st_status_name(status));
    st_buf_puts(&b, ", \"message\": ");
    st_json_put_string(&b, message);
    st_buf_puts(&b, "}");
    put_reply(fd, &b);
}



/* The variant built on the device, its inputs uploaded and run once; on
 * failure *status says which step failed. */
typedef struct loaded_variant {
    st_cl *cl;
    st_exe *exe;
    st_launch *launch;
} loaded_variant;

static bool load_and_run(const variant_job *job, st_arena *a, loaded_variant *lv, st_status *status, st_err *err) {
    const bench *b = job->bench;
    memset(lv, 0, sizeof *lv);
    variant *local = st_arena_alloc(a, sizeof *local); /* (what st_exe may keep pointers into lives as long as a) */
    *status = ST_STATUS_CRASH;
    const st_code *code = local ? code_here(job, a, local, status, err) : NULL;
    if (!local) st_fail_internal(err, "out of memory");
    if (!code) return false;
    *status = ST_STATUS_LAUNCH_ERROR;
    if (!(lv->cl = st_cl_open(b->setup->device, err))) return false;
    st_cl_set_cache(lv->cl, b->setup->cache_dir);
    *status = ST_STATUS_BUILD_ERROR;
    if (!(lv->exe = st_exe_build(lv->cl, code, err))) return false;
    *status = ST_STATUS_LAUNCH_ERROR;
    return (lv->launch = st_launch_new(lv->exe, b->args, b->env, b->nenv, err)) && st_launch_run(lv->launch, NULL, err);
}

static void unload(loaded_variant *lv) {
    st_launch_free(lv->launch);
    st_exe_free(lv->exe);
    st_cl_close(lv->cl);
}

/* Build and check, many at a time: this is where the compiler's time goes
 * (PoCL compiles a kernel for its work-group size at its first launch), and
 * where a wrong answer is found; the driver caches what was built. */
void variant_check_child(void *data, int fd) {
    const variant_job *job = data;
    st_err err = {0};
    st_status status;
    loaded_variant lv = {0};
    st_arena *a = st_arena_new();
    st_value got;
    if (!a) {
        reply_status(fd, ST_STATUS_CRASH, "out of memory");
    } else if (!load_and_run(job, a, &lv, &status, &err)) {
        reply_status(fd, status, err.message);
    } else if (!st_launch_read(lv.launch, a, &got, &err) ||
               !st_expected_agree(&got, &job->bench->want, job->bench->setup->tolerance, &err)) {
        reply_status(fd, ST_STATUS_WRONG_ANSWER, err.message); /* a guard region overwritten is one too */
    } else {
        reply_status(fd, ST_STATUS_OK, "");
    }
    unload(&lv);
    st_arena_free(a);
}

/* Time a checked variant, alone on the device. */
void variant_time_child(void *data, int fd) {
    const variant_job *job = data;
    const st_explore_setup *s = job->bench->setup;
    st_err err = {0};
    st_status status;
    loaded_variant lv;
    double *ms = calloc(s->runs + 1, sizeof *ms);
    st_arena *a = st_arena_new();
    if (!ms || !a) {
        reply_status(fd, ST_STATUS_CRASH, "out of memory");
        free(ms);
        st_arena_free(a);
        return;
    }
    bool ok = load_and_run(job, a, &lv, &status, &err);
    if (ok && !(ok = st_launch_time(lv.launch, s->warmups, s->runs, ms, NULL, &err))) status = ST_STATUS_LAUNCH_ERROR;
    if (ok) {
        st_buf reply = {0};
        st_buf_printf(&reply, "{\"status\": \"ok\", \"bytes\": %llu, \"samples_ms\": [",
                      (unsigned long long)st_launch_bytes(lv.launch));
        for (uint32_t i = 0; i < s->runs; i++) {
            st_buf_puts(&reply, i ? ", " : "");
            st_json_put_number(&reply, ms[i]);
        }
        st_buf_puts(&reply, "]}");
        put_reply(fd, &reply);
    } else {
        reply_status(fd, status, err.message);
    }
    free(ms);
    unload(&lv);
    st_arena_free(a);
}

static void device_probe_child(void *data, int fd) {
    const bench *b = data;
    st_err err = {0};
    st_cl *cl = st_cl_open(b->setup->device, &err);
    if (!cl) {
        reply_status(fd, ST_STATUS_LAUNCH_ERROR, err.message);
        return;
    }
    /* the struct as bytes: the parent is the same program */
    child_write(fd, (const char *)st_cl_device(cl), sizeof(st_device_info));
    st_cl_close(cl);
}

void variant_outcome(const child *c, st_status *status, char *message, size_t cap, st_record *r) {
    st_arena *a = st_arena_new();
    st_err err = {0};
    const st_json *j = a && c->out.len ? st_json_parse(a, "child", c->out.data, c->out.len, &err) : NULL;
    const char *said = j ? st_json_get_string(j, "status") : NULL, *m = j ? st_json_get_string(j, "message") : NULL;
    bool reported = said && st_status_parse(said, status);
    if (c->end == CHILD_TIMED_OUT) {
        *status = ST_STATUS_TIMEOUT;
        snprintf(message, cap, "killed at its time limit of %g s", c->timeout_s);
    } else if (!reported || c->end != CHILD_EXITED || c->exit_code != 0) {
        char how[160];
        child_describe(c, how, sizeof how);
        *status = ST_STATUS_CRASH;
        snprintf(message, cap, "the process running it %s%s%s", how, m ? "; it said: " : "", m ? m : "");
    } else {
        snprintf(message, cap, "%s", m ? m : "");
    }
    const st_json *samples = j ? st_json_get(j, "samples_ms") : NULL;
    size_t n = samples && samples->kind == ST_JSON_ARRAY ? samples->len : 0;
    if (r && *status == ST_STATUS_OK && (!n || !(r->samples_ms = calloc(n, sizeof *r->samples_ms)))) {
        *status = ST_STATUS_CRASH;
        snprintf(message, cap, "%s", n ? "out of memory" : "the process running it reported no timings");
    } else if (r && *status == ST_STATUS_OK) {
        double bytes = 0;
        st_json_get_number(j, "bytes", &bytes);
        for (size_t i = 0; i < n; i++) r->samples_ms[i] = samples->items[i].number;
        r->nsamples = (uint32_t)n;
        st_timing t = st_timing_of(r->samples_ms, n);
        r->median_ms = t.median_ms, r->min_ms = t.min_ms, r->max_ms = t.max_ms;
        r->bytes = (uint64_t)bytes;
        r->gb_per_s = r->median_ms > 0 ? (double)r->bytes / (r->median_ms * 1e6) : 0;
    }
    st_arena_free(a);
}

bool variant_in_child(const bench *b, variant *v, void (*fn)(void *data, int fd), double timeout_s,
                      st_record *figures, st_err *err) {
    child c;
    variant_job job = {b, v};
    if (!child_start(&c, fn, &job, timeout_s, err)) return false;
    if (!child_finish(&c, b->setup->stop)) {
        st_buf_free(&c.out);
        return st_fail(err, (st_loc){0}, ST_EXPLORE_INTERRUPTED);
    }
    variant_outcome(&c, &v->status, v->message, sizeof v->message, figures);
    st_buf_free(&c.out);
    return true;
}

bool variant_measure(const bench *b, st_arena *a, variant *v, double build_timeout_s, double timeout_s,
                     st_record *figures, st_err *err) {
    if (!variant_prepare(b, a, v, err)) return false;
    double started = child_now();
    if (v->status == ST_STATUS_OK && !variant_in_child(b, v, variant_check_child, build_timeout_s, NULL, err)) return false;
    if (v->have_code) v->build_ms = (child_now() - started) * 1e3;
    return v->status != ST_STATUS_OK || variant_in_child(b, v, variant_time_child, timeout_s, figures, err);
}

bool bench_device(const bench *b, st_device_info *dev, st_err *err) {
    child c;
    if (!child_start(&c, device_probe_child, (void *)b, 120, err)) return false;
    if (!child_finish(&c, b->setup->stop)) {
        st_buf_free(&c.out);
        return st_fail(err, (st_loc){0}, ST_EXPLORE_INTERRUPTED);
    }
    bool ok = c.end == CHILD_EXITED && c.out.len == sizeof *dev;
    if (ok) {
        memcpy(dev, c.out.data, sizeof *dev);
    } else { /* it said why, or died */
        st_status status;
        char message[512];
        variant_outcome(&c, &status, message, sizeof message, NULL);
        st_fail(err, (st_loc){0}, "%s", message);
    }
    st_buf_free(&c.out);
    return ok;
}

void describe_field(st_buf *b, const char *key, const char *value) {
    st_json_put_key(b, ",\n  ", key);
    st_json_put_string(b, value ? value : "");
}

static bool file_sha256(const char *path, char sha[65], st_err *err) {
    size_t len;
    char *bytes = st_read_file(path, &len, err);
    if (!bytes) return false;
    st_sha256_hex(bytes, len, sha);
    free(bytes);
    return true;
}

/* One entry of a "plugins" list. */
static void put_plugin(st_buf *b, bool first, const char *path, const char *sha) {
    st_buf_puts(b, first ? "{\"path\": " : ", {\"path\": ");
    st_json_put_string(b, path ? path : "");
    st_buf_puts(b, ", \"sha256\": ");
    st_json_put_string(b, sha ? sha : "");
    st_buf_puts(b, "}");
}

bool describe_plugins(st_buf *b, const st_registry *reg, st_err *err) {
    st_buf_puts(b, ",\n  \"plugins\": [");
    for (size_t i = 0; i < st_registry_plugin_count(reg); i++) {
        char sha[65];
        if (!file_sha256(st_registry_plugin_path(reg, i), sha, err)) return false;
        put_plugin(b, i == 0, st_registry_plugin_path(reg, i), sha);
    }
    st_buf_puts(b, "]");
    return true;
}

void describe_recorded_plugins(st_buf *b, const st_json *exploration) {
    const st_json *plugins = st_json_get(exploration, "plugins");
    st_buf_puts(b, ",\n  \"plugins\": [");
    for (size_t i = 0; plugins && plugins->kind == ST_JSON_ARRAY && i < plugins->len; i++)
        put_plugin(b, i == 0, st_json_get_string(&plugins->items[i], "path"),
                   st_json_get_string(&plugins->items[i], "sha256"));
    st_buf_puts(b, "]");
}

bool plugins_loaded(const st_json *exploration, const st_registry *reg, st_err *err) {
    const st_json *plugins = st_json_get(exploration, "plugins");
    size_t nloaded = st_registry_plugin_count(reg);
    char (*loaded)[65] = calloc(nloaded + 1, sizeof *loaded); /* each module hashed once */
    if (!loaded) return st_fail_internal(err, "out of memory");
    bool ok = true;
    for (size_t k = 0; ok && k < nloaded; k++) ok = file_sha256(st_registry_plugin_path(reg, k), loaded[k], err);
    for (size_t i = 0; ok && plugins && plugins->kind == ST_JSON_ARRAY && i < plugins->len; i++) {
        const char *path = st_json_get_string(&plugins->items[i], "path");
        const char *want = st_json_get_string(&plugins->items[i], "sha256");
        bool found = false;
        for (size_t k = 0; !found && want && k < nloaded; k++) found = !strcmp(loaded[k], want);
        if (!found)
            ok = st_fail(err, (st_loc){0}, "the exploration used rules from the plugin %s (SHA-256 %.12s…); give it with --plugin %s (the same build of it)",
                         path ? path : "?", want ? want : "?", path ? path : "PATH.so");
    }
    free(loaded);
    return ok;
}

void describe_device(st_buf *b, const st_device_info *dev) {
    describe_field(b, "device", dev->name);
    describe_field(b, "vendor", dev->vendor);
    describe_field(b, "device_type", dev->type);
    describe_field(b, "device_version", dev->version);
    describe_field(b, "driver", dev->driver);
    describe_field(b, "platform", dev->platform);
    describe_field(b, "platform_version", dev->platform_version);
    describe_field(b, "backend", st_device_backend(dev)->name);
}

void record_take_figures(st_record *to, st_record *from) {
    free(to->samples_ms);
    to->samples_ms = from->samples_ms;
    to->nsamples = from->nsamples;
    from->samples_ms = NULL;
    from->nsamples = 0;
    to->median_ms = from->median_ms, to->min_ms = from->min_ms, to->max_ms = from->max_ms;
    to->bytes = from->bytes, to->gb_per_s = from->gb_per_s;
}
