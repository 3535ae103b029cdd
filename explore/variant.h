/* explore/variant.h — one point of a space made into code (in the parent,
 * or with plugins loaded in a child), then built, checked and timed in
 * child processes, and the descriptions
 * of explorations (internal to explore/: the driver, merge and export share
 * it). */
#ifndef STRATA_EXPLORE_VARIANT_H
#define STRATA_EXPLORE_VARIANT_H

#include "child.h"
#include "explore.h"

/* What every child needs, read-only: inherited through fork. */
typedef struct bench {
    const st_explore_setup *setup;
    const st_value *args;
    const st_binding *env;
    size_t nenv;
    st_expected want; /* the interpreter's result, and its floats' scales */
} bench;

typedef struct variant {
    uint64_t point;
    char *strategy;       /* malloc'ed */
    const st_strategy *parsed; /* the strategy, parsed in the setup's context */
    st_status status;     /* ST_STATUS_OK until something says otherwise */
    char message[512];
    bool have_code;       /* the point made code: */
    st_code code;         /* all of it when code_here, else its sources alone (each backend's kernels, host) */
    const char *program;  /* the def rewritten and lowered, printed */
    char sha[65];         /* of code.opencl */
    bool code_here;       /* made in this process; else in a child (plugins loaded), and the check and time
                             children make it again for themselves */
    double build_ms;
} variant;

/* The inputs and the interpreter's result on them. */
bool bench_open(bench *b, const st_explore_setup *setup, st_arena *a, st_err *err);
/* The interpreter's result on b's inputs into b->want (allocated in a),
 * computed in a child process within setup->timeout_s: past it, an error
 * that says so. (explore/reference.c) */
bool bench_reference(bench *b, st_arena *a, st_err *err);

/* Rewrite the def with v->strategy, lower it and generate its code (into
 * arena a): in this process, or with plugins loaded in a child, whose
 * sources and program come back (variant.c says why). A strategy that a
 * range or a rule's condition rejects, or that does not apply, makes v a
 * constraint; a plugin rule that broke its contract a rule_error; code that
 * cannot be generated a build error; a child that dies or hangs a crash or
 * a timeout. false only for a strategy that is not well-formed text (err
 * located in it) or an internal error. */
bool variant_prepare(const bench *b, st_arena *a, variant *v, st_err *err);

/* The children's work: data is a `variant_job`. Each writes one JSON object
 * to fd: {"status": …, "message": …}, and the timing's figures
 * ("bytes", "samples_ms"). The check child builds, runs once and compares
 * with the interpreter (many run at once); the time child runs alone. */
typedef struct variant_job {
    const bench *bench;
    variant *variant;
} variant_job;

void variant_check_child(void *data, int fd);
void variant_time_child(void *data, int fd);
/* The device the children open, as they see it (this process never opens
 * OpenCL); an error when they cannot open it. */
bool bench_device(const bench *b, st_device_info *dev, st_err *err);
/* Its fields as members of a JSON object people read (explore.json,
 * record.json): device, vendor, device_type, device_version, driver,
 * platform, platform_version. */
void describe_device(st_buf *b, const st_device_info *dev);
/* Do two explore.json describe one exploration (program, entry, space,
 * device, inputs, seed)? When not, diff says where they differ first:
 * "it has seed=1, this one seed=7". (explore/merge.c) */
bool explorations_agree(const st_json *was, const st_json *now, char *diff, size_t cap);
/* One string member of such an object: `,\n  "key": "value"`. */
void describe_field(st_buf *b, const char *key, const char *value);
/* The plugins loaded into reg, as a member of such an object:
 * `,\n  "plugins": [{"path": …, "sha256": …}, …]` (the SHA-256 of each
 * module's file: a rebuilt plugin is another plugin). */
bool describe_plugins(st_buf *b, const st_registry *reg, st_err *err);
/* The same member, as an explore.json recorded it (for record.json). */
void describe_recorded_plugins(st_buf *b, const st_json *exploration);
/* Every plugin an explore.json names is loaded into reg (the same file
 * content, wherever it is now); else err says which to give with --plugin. */
bool plugins_loaded(const st_json *exploration, const st_registry *reg, st_err *err);

/* fn (a check or time child) run for v and waited for: its outcome into
 * v->status and v->message, the timing's figures into *figures when not
 * NULL. false only when no child process could start, or when
 * setup->stop was set (ST_EXPLORE_INTERRUPTED: the child is killed). */
bool variant_in_child(const bench *b, variant *v, void (*fn)(void *data, int fd), double timeout_s,
                      st_record *figures, st_err *err);

/* A variant alone, start to end: prepared (variant_prepare), built and
 * checked in a child, then timed in another, its status and message in v,
 * its figures in *figures when it ran correctly. false as variant_prepare
 * and variant_in_child. */
bool variant_measure(const bench *b, st_arena *a, variant *v, double build_timeout_s, double timeout_s,
                     st_record *figures, st_err *err);

/* Move the timing figures of *from (samples, median, min, max, bytes,
 * GB/s: what variant_in_child gives) into *to, replacing its own. */
void record_take_figures(st_record *to, st_record *from);

/* What a child said (or that it said nothing) into a status and message;
 * for a run, the record's figures too (r may be NULL for a build). */
void variant_outcome(const child *c, st_status *status, char *message, size_t cap, st_record *r);

#endif
