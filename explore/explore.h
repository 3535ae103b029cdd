/* explore/explore.h — the public interface of strata's explore stage.
 *
 *   spaces     a strategy with parameter ranges and `where` constraints,
 *              enumerated point by point as concrete strategy text
 *   json       the one JSON reader and writer of strata's records
 *   charts     SVG heat-maps and bar charts of an exploration
 *   driver     every point built, checked against the interpreter and timed,
 *              each in a child process so that a hang or a crash is a status
 *   records    results.jsonl (append-only, resumable), results.csv, merging
 *   export     the best variant's kernels, glue and record under results/
 *
 * Like the rest of the library nothing here prints or exits; progress comes
 * back through a callback.
 */
#ifndef STRATA_EXPLORE_H
#define STRATA_EXPLORE_H

#include "codegen/codegen.h"
#include "ir/ir.h"
#include "rewrite/rewrite.h"

#include <signal.h>

/* ------------------------------------------------------------------------ */
/* Spaces                                                                   */
/* ------------------------------------------------------------------------ */

/* A space is strategy text in which an argument's value may be a range,
 * followed by optional constraints:
 *
 *     parallel-scan(BS=[32..512 pow2], BF=2, SE=[1..16 pow2]) where BS % BF == 0
 *
 *   [1, 2, 4]          a list (values are integers or names: [global, local])
 *   [32..512 pow2]     every power of two from 32 to 512 (powK: of K)
 *   [1..16 step 3]     1, 4, 7, 10, 13, 16 (step 1 when left out)
 *
 * Each range is a dimension named by its parameter; a name that is given a
 * range again becomes NAME.2, NAME.3, … . `where` takes conditions separated
 * by commas (or several `where`s), in C's integer syntax over every
 * parameter given a value in the text, ranged or fixed:
 * `+ - * / % == != < <= > >= && || !` and parentheses.
 */
typedef struct st_space st_space;

typedef struct st_space_dim {
    const char *name;          /* "BS", or "BS.2" for a second range of BS */
    uint32_t nvalues;
    const char *const *values; /* as they go into the strategy text: "32" */
} st_space_dim;

/* Errors are located by column (loc.file `what`, line 1), like strategies'. */
st_space *st_space_parse(const char *what, const char *text, st_err *err);
void st_space_free(st_space *s);
/* The text as given. */
const char *st_space_text(const st_space *s);
uint32_t st_space_ndims(const st_space *s);
const st_space_dim *st_space_dim_at(const st_space *s, uint32_t i);
/* The number of points: the product of the dimensions' sizes (1 with none). */
uint64_t st_space_npoints(const st_space *s);
/* Those of shard `shard` of `nshards` (the indices % nshards == shard). */
uint64_t st_space_shard_points(const st_space *s, uint32_t shard, uint32_t nshards);
/* Point `index` (mixed radix over the dimensions, the last one fastest):
 * the value index per dimension into which[] (ndims entries, when not NULL),
 * its concrete strategy text appended to *strategy, and whether the `where`
 * conditions admit it (false with the failing condition's text in *why; a
 * division by zero in a condition is not admitted, with that reason).
 * Returns false only for an internal error (out of memory). */
bool st_space_point(const st_space *s, uint64_t index, uint32_t *which, st_buf *strategy,
                    bool *admitted, st_err *why);
/* A column of a point's strategy text mapped back to the column of the
 * space text it came from (a column inside a substituted value maps to the
 * start of its range), so that an error in a point names the space's text. */
int st_space_column(const st_space *s, uint64_t index, int col);

/* ------------------------------------------------------------------------ */
/* JSON                                                                     */
/* ------------------------------------------------------------------------ */

typedef enum st_json_kind {
    ST_JSON_NULL,
    ST_JSON_BOOL,
    ST_JSON_NUMBER,
    ST_JSON_STRING,
    ST_JSON_ARRAY,
    ST_JSON_OBJECT
} st_json_kind;

typedef struct st_json st_json;
struct st_json {
    st_json_kind kind;
    bool boolean;
    double number;
    const char *string;      /* STRING: NUL-terminated, UTF-8 (\u escapes decoded) */
    size_t len;              /* STRING: bytes; ARRAY, OBJECT: entries */
    const st_json *items;    /* ARRAY: elements; OBJECT: values */
    const char *const *keys; /* OBJECT: one per value, in order */
};

/* One JSON text (RFC 8259; nesting at most 64 deep), allocated in a.
 * Errors name `what`, the line and the column. Trailing whitespace is
 * allowed, anything else after the value is an error. */
const st_json *st_json_parse(st_arena *a, const char *what, const char *text, size_t len, st_err *err);
/* The value of key in an object (the last one if repeated); NULL when absent
 * or obj is not an object. */
const st_json *st_json_get(const st_json *obj, const char *key);
/* The string of key, or NULL when absent or not a string. */
const char *st_json_get_string(const st_json *obj, const char *key);
/* The number of key into *out; false when absent or not a number. */
bool st_json_get_number(const st_json *obj, const char *key, double *out);
/* The number of key into *out when it is a whole number from 0 to max (a
 * point, a count, a seed: what becomes an unsigned integer); false when
 * absent, not a number, or not such a number. */
bool st_json_get_whole(const st_json *obj, const char *key, uint64_t max, uint64_t *out);

/* Writing: a string quoted and escaped (control characters as \u00XX), and
 * a number in the shortest form that reads back to the same double
 * (integers without a point; NaN and infinities as null). */
void st_json_put_string(st_buf *b, const char *s);
void st_json_put_number(st_buf *b, double v);
/* A space's value as written in a strategy: a number when it is an
 * integer (`32`, `-1`), else a string (`"global"`). */
void st_json_put_space_value(st_buf *b, const char *value);
/* `SEP"key": ` — the start of an object's member, after the separator
 * (", " on one line, ",\n  " in a file people read). */
void st_json_put_key(st_buf *b, const char *sep, const char *key);

/* ------------------------------------------------------------------------ */
/* Charts                                                                   */
/* ------------------------------------------------------------------------ */

/* Values are shown as a colour scale (bright = larger: pass GB/s, not
 * times), each cell or bar labelled with its value; a point with no value
 * (NAN) is grey and labelled with its note (a status such as `wrong_answer`
 * or `constraint`). The best cell or bar is outlined. Every text is escaped
 * for XML. The output is a standalone SVG 1.1 document. */
typedef struct st_chart {
    const char *title;          /* "prefix_sum: GB/s over BS x SE" */
    const char *unit;           /* "GB/s" */
    const char *x_name;         /* "BS" */
    uint32_t nx;
    const char *const *x_labels;
    const char *y_name;         /* heat-maps only: "SE" */
    uint32_t ny;                /* 1 for bars */
    const char *const *y_labels;
    const double *values;       /* ny rows of nx: values[y * nx + x]; NAN for none */
    const char *const *notes;   /* the same shape, or NULL; shown where the value is NAN */
} st_chart;

/* A heat-map over x and y, like figure 3 of [Pizzuti et al. 2022]. */
bool st_svg_heatmap(const st_chart *c, st_buf *out, st_err *err);
/* Bars over x (y is ignored). */
bool st_svg_bars(const st_chart *c, st_buf *out, st_err *err);

/* ------------------------------------------------------------------------ */
/* Variants and their records                                               */
/* ------------------------------------------------------------------------ */

/* What became of one point of a space. */
typedef enum st_status {
    ST_STATUS_OK,
    ST_STATUS_CONSTRAINT,   /* `where`, a parameter's range or a rule's condition said no */
    ST_STATUS_RULE_ERROR,   /* a plugin's rule broke its contract there (the message names it and says how) */
    ST_STATUS_BUILD_ERROR,  /* codegen or the OpenCL compiler refused it */
    ST_STATUS_LAUNCH_ERROR, /* it built but did not run (resources, a failed enqueue) */
    ST_STATUS_WRONG_ANSWER, /* it ran and disagreed with the interpreter, or wrote out of bounds */
    ST_STATUS_TIMEOUT,      /* it ran past its time limit and was killed */
    ST_STATUS_CRASH         /* the process that ran it died */
} st_status;

const char *st_status_name(st_status s); /* "ok", "wrong_answer", … */
bool st_status_parse(const char *name, st_status *out);

/* One line of results.jsonl. Strings and arrays are malloc'ed and owned by
 * the record (st_record_clear frees them). */
typedef struct st_record {
    uint64_t point;       /* index in the space (st_space_point) */
    char *strategy;       /* the concrete strategy */
    uint32_t nvalues;
    char **values;        /* the value of each dimension, as in the strategy */
    st_status status;
    char *message;        /* why it is not ok ("" when it is) */
    double build_ms;      /* building and checking it (small from the build cache) */
    uint32_t nsamples;
    double *samples_ms;   /* every timed run, in order */
    double median_ms, min_ms, max_ms;
    uint64_t bytes;       /* the program's inputs read plus outputs written */
    double gb_per_s;      /* bytes / median */
    char kernels_sha256[65]; /* of the OpenCL source ("" before codegen) */
} st_record;

void st_record_clear(st_record *r);
/* dst (cleared first) as a deep copy of src; false when out of memory. */
bool st_record_copy(st_record *dst, const st_record *src);
/* The record as one JSON object, without a newline. */
void st_record_to_json(const st_record *r, st_buf *out);
/* Its timing figures (median_ms, min_ms, max_ms, gb_per_s, bytes,
 * samples_ms) as members of an object, each after sep: what a record and
 * an export's record.json say alike. */
void st_record_figures_to_json(const st_record *r, const char *sep, st_buf *out);
/* Read a record back from what st_record_to_json wrote. */
bool st_record_from_json(const st_json *j, st_record *out, st_err *err);

/* Every record of a results.jsonl, in file order; of a point recorded more
 * than once (measured again), the last. A last line cut short (an
 * exploration killed while writing it) is left out and counted in
 * *truncated; any other bad line is an error naming its line. A missing
 * file is no records. */
typedef struct st_records {
    st_record *items;
    size_t count, cap;
} st_records;

bool st_records_read(const char *path, st_records *out, size_t *truncated, st_err *err);
/* Move *r to the end of rs (false, r untouched, when out of memory). */
bool st_records_push(st_records *rs, st_record *r);
void st_records_free(st_records *rs);
/* Order the records by point, stably (records of one point keep their
 * order); then st_records_find finds a point's first record, or NULL. */
bool st_records_sort(st_records *rs);
const st_record *st_records_find(const st_records *rs, uint64_t point);
/* The ok record with the smallest median (NULL when none is ok). */
const st_record *st_records_best(const st_records *rs);
/* results.csv: a header, then one row per record ordered by point. The
 * columns: point, strategy, one per dimension, status, median_ms, min_ms,
 * max_ms, gb_per_s, runs, build_ms, kernels_sha256, message. */
bool st_records_write_csv(const st_records *rs, const st_space *space, const char *path, st_err *err);
/* The chart of GB/s: a heat-map over the two dimensions with the most
 * values (the best over any others), bars for one; false with nothing
 * written when the space has no dimension. */
bool st_records_write_svg(const st_records *rs, const st_space *space, const char *title, const char *path,
                          bool *written, st_err *err);

/* ------------------------------------------------------------------------ */
/* Explorations                                                             */
/* ------------------------------------------------------------------------ */

/* What an exploration explores: one def of a program on seeded inputs. */
/* The most builds and checks an exploration runs at once. */
enum { ST_EXPLORE_MAX_JOBS = 64 };
/* The most timed runs (and warm-up runs) per variant. */
enum { ST_EXPLORE_MAX_RUNS = 100000 };

typedef struct st_explore_setup {
    st_ctx *cx;
    const st_program *program;
    const st_def *def;
    const st_registry *reg;
    const char *program_path;   /* as given: for the records */
    const char *program_source; /* its text: copied into DIR/program.strata */
    const char *program_name;   /* "prefix_sum": what results/ files it under */
    const char *const *inputs;  /* NAME=VALUE: sizes, scalars, .npy files */
    uint32_t ninputs;
    uint64_t seed;              /* arrays not given are generated from it */
    const char *device;         /* as st_cl_open takes it; NULL: the default */
    const char *cache_dir;      /* the build cache (NULL: none) */
    uint32_t runs;              /* timed runs per variant (at least 7) */
    uint32_t warmups;
    double tolerance;           /* floats within tolerance·ε·scale of the reference (st_expected_agree) */
    double timeout_s;           /* per variant run, in its own process */
    double build_timeout_s;     /* per build and check */
    uint32_t jobs;              /* builds and checks in parallel */
    uint64_t max_points;        /* st_explore refuses a shard of more points (0: ST_EXPLORE_MAX_POINTS) */
    uint64_t batch;             /* points held as code at once (0: ST_EXPLORE_BATCH) */
    /* When not NULL and set (by the caller's SIGINT or SIGTERM handler), the
     * work stops soon: children are killed, what is recorded stays, and
     * st_explore fails with ST_EXPLORE_INTERRUPTED. */
    const volatile sig_atomic_t *stop;
} st_explore_setup;

/* The message of an exploration stopped through st_explore_setup.stop. */
#define ST_EXPLORE_INTERRUPTED "interrupted"

/* The most points st_explore takes on by default: each is made into code
 * before any is built, so a space of billions would only fill memory. */
#define ST_EXPLORE_MAX_POINTS UINT64_C(1000000)
/* Points made into code, checked and timed together: what an exploration
 * holds in memory at once, whatever the size of its space (variants with the
 * same kernel source share a build within a batch). */
#define ST_EXPLORE_BATCH UINT64_C(2048)

/* Where an exploration is, for a progress display. */
typedef struct st_explore_progress {
    const char *phase;       /* "check" (build and check, in parallel) or "time" */
    uint64_t done, total;    /* in this phase, of this batch */
    uint64_t batch, batches; /* which batch of points (from 1), of how many: a shard's points are
                                made into code, checked and timed a batch at a time */
    double elapsed_s;        /* since the exploration began */
    double eta_s;            /* to the end of this phase; < 0: unknown yet */
    const st_record *last;   /* time phase: the record just written, else NULL */
    const st_record *best;   /* the best ok record so far, or NULL */
} st_explore_progress;

typedef void (*st_explore_progress_fn)(void *data, const st_explore_progress *p);

typedef struct st_explore_summary {
    uint64_t points;       /* in this shard */
    uint64_t skipped;      /* already in results.jsonl (resumed) */
    uint64_t counts[ST_STATUS_CRASH + 1]; /* of every record in DIR, by status */
    st_device_info device;
    st_record best;        /* status ok; best.strategy NULL when nothing was ok */
    bool chart;            /* results.svg was written */
    st_buf warnings;       /* st_merge: lines for the user (shards that disagree about a point, records of
                              points outside the space, dropped) */
} st_explore_summary;

/* Explore every point of shard `shard` of `nshards` (points with index %
 * nshards == shard) into dir: explore.json (what was explored), program.strata,
 * results.jsonl (one line per point, appended as each finishes, so that an
 * interrupted exploration goes on where it stopped), then results.csv and
 * results.svg over every record. A dir holding another exploration is
 * refused. Variants are built and checked against the interpreter in
 * parallel child processes, then each is timed alone in a child process. Fails only for what stops the whole exploration (the device, the
 * directory, a space that does not parse as a strategy). */
bool st_explore(const st_explore_setup *setup, const st_space *space, const char *dir, uint32_t shard,
                uint32_t nshards, st_explore_progress_fn progress, void *progress_data, st_explore_summary *summary,
                st_err *err);
void st_explore_summary_free(st_explore_summary *s);

/* An exploration driven from outside, a point at a time (the autotuner,
 * explore/autotune.py, through `strata explore --serve`): the same
 * directory, records and statuses as st_explore, for the points asked for.
 * Each point is built and checked in a child process, then timed in
 * another, like the driver's. */
typedef struct st_session st_session;

/* Claim dir as st_explore does (or resume what it holds); *device is the
 * device the children see. A point a previous session died evaluating (its
 * mark, DIR/serve-evaluating, left behind) is recorded as `crash` first. */
st_session *st_session_open(const st_explore_setup *setup, const st_space *space, const char *dir,
                            st_device_info *device, st_err *err);
/* The record of point: the one in dir when there is one and `again` is
 * false (*recorded true), else measured now and appended. A point the
 * space's constraints reject is recorded as `constraint` without running.
 * false for a point outside the space, or what stops an exploration. */
bool st_session_evaluate(st_session *ss, uint64_t point, bool again, st_record *out, bool *recorded, st_err *err);
/* Write results.csv and results.svg over every record, *summary as
 * st_explore gives it (summary may be NULL); frees ss. */
bool st_session_close(st_session *ss, st_explore_summary *summary, st_err *err);

/* One request of `strata explore --serve`, a JSON line: {"point": P} or
 * {"point": P, "again": true} (measure it again). A client names points
 * and nothing else: statuses and times are the server's. */
#define ST_SERVE_REQUEST_MAX 4096 /* bytes in one request line */
typedef struct st_serve_request {
    uint64_t point; /* below the space's number of points */
    bool again;
} st_serve_request;

/* The request in line (len bytes, no newline) for a space of npoints
 * points (a holds the parsed JSON); false with why it is not one in *err. */
bool st_serve_request_parse(st_arena *a, const char *line, size_t len, uint64_t npoints, st_serve_request *out,
                            st_err *err);

/* Merge the records of explorations of the same thing (shards, say) into
 * out: explore.json and program.strata from the first, every point once
 * (the first record of it wins; where explorations disagree, a failure
 * wins over ok), then results.csv and results.svg. Dirs that explored
 * something else (program, entry, space, inputs, seed or device) are
 * refused by name, and so is an out that holds another exploration, or
 * that another strata is writing; an out holding this one keeps its
 * records. Disagreements and records outside the space (dropped) are
 * summary->warnings. *summary as st_explore gives it (device, points,
 * counts, best). */
bool st_merge(const char *const *dirs, uint32_t ndirs, const char *out, st_explore_summary *summary, st_err *err);

/* ------------------------------------------------------------------------ */
/* Export                                                                   */
/* ------------------------------------------------------------------------ */

/* What an exploration's directory says it explored (explore.json). */
typedef struct st_exploration {
    st_arena *arena;              /* owns everything here */
    const st_json *json;          /* explore.json */
    const char *program_source;   /* program.strata */
    const char *program_name, *entry, *space, *device;
    const char *const *inputs;
    uint32_t ninputs;
    uint64_t seed;
    uint32_t runs, warmups;
    double tolerance;
} st_exploration;

bool st_exploration_read(const char *dir, st_exploration *out, st_err *err);
void st_exploration_free(st_exploration *e);

/* Re-measure the best ok variants of an exploration (its top `top` by
 * median, each checked against the interpreter again, then timed), and
 * write the fastest into `into`/<device>/<program>/: kernels.cl, host.c,
 * program.strata (the lowered def) and record.json (device, vendor, driver,
 * program, inputs, strategy, parameters, figures, SHA-256 of the kernels);
 * then add it to `into`/index.json. The exploration's device must be here. */
typedef struct st_export_setup {
    const char *dir;          /* the exploration */
    const char *into;         /* "results" */
    uint32_t top;             /* variants re-measured */
    const char *cache_dir;    /* the build cache, or NULL */
    double timeout_s;         /* per variant, in its own process */
} st_export_setup;

typedef struct st_export_result {
    char path[4200];          /* the folder written */
    char program_name[256];
    st_device_info device;
    st_record best;           /* re-measured */
    uint32_t measured;        /* variants re-measured */
} st_export_result;

bool st_export(const st_export_setup *setup, const st_registry *reg, st_export_result *out, st_err *err);
void st_export_result_free(st_export_result *r);

/* results/index.json: device → program → the exported best. What `strata
 * run` uses without -s: the entry of this very device, else the fastest of
 * the devices of its vendor and type, else the default (the fastest on any
 * device of its type: a CPU's best never stands in for a GPU). *found false, without error, when the index or
 * the program is not there. strategy and from (where the entry came from,
 * e.g. "results/nvidia-h100/prefix_sum, exported for NVIDIA H100") are
 * written when found. */
bool st_results_lookup(const char *into, const st_device_info *dev, const char *program_name, bool *found,
                       st_buf *strategy, st_buf *from, st_err *err);
/* One export as results/index.json lists it; exported_at is its record's
 * date (record.json), "" where the record cannot be read. */
typedef struct st_results_entry {
    const char *device_key, *device, *vendor, *type, *program, *strategy, *path, *exported_at;
    double median_ms, gb_per_s;
} st_results_entry;
/* Every export of into/index.json, devices and programs in the index's
 * order (`strata results`); an error when there is no index. */
bool st_results_list(const char *into, st_arena *a, st_results_entry **out, size_t *n, st_err *err);
/* A name that becomes one folder of a path (a program's under results/, a
 * device's): 1 to ST_FOLDER_NAME_MAX letters, digits, `_` and `-`, not
 * starting with `-`, so never "", "." or "..", a slash or anything a shell
 * or a file system reads otherwise. false with a message naming `where` and
 * `what` (the file and its field) otherwise. Checked where such a name is
 * read: a program's file name, explore.json, index.json, and the device
 * folder before anything is written. */
enum { ST_FOLDER_NAME_MAX = 100 };
bool st_folder_name_check(const char *name, st_loc where, const char *what, st_err *err);
/* "pthread-skylake-avx512-intel-r-xeon-r-processor": a device's name as a
 * folder name (lowercase letters, digits and single dashes; "device" when
 * the name has none of them, so never empty, "." or ".."). */
void st_device_slug(const char *name, char *out, size_t cap);
/* The folder and index key of a device: its slug, and its backend's
 * folder_suffix after it, so that two backends of one GPU keep their own
 * results. */
void st_device_key(const st_device_info *dev, char *out, size_t cap);

#endif
