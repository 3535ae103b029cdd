/* tests/test_json.c — the JSON reader and writer: values, escapes, numbers,
 * every error with its line and column, the nesting limit, truncated and
 * random inputs (never a read past the given length), and round trips. */
#include "explore/explore.h"
#include "harness.h"

#include <math.h>
#include <stdint.h>

/* The text copied into a buffer of exactly its length, with no NUL after
 * it, so that AddressSanitizer catches any read past `len`. */
static const st_json *parse_exact(st_arena *a, const char *text, size_t len, st_err *err) {
    char *copy = malloc(len ? len : 1);
    ck_assert(copy != NULL);
    memcpy(copy, text, len);
    const st_json *v = st_json_parse(a, "rec.json", copy, len, err);
    free(copy);
    return v;
}

static const st_json *json_ok(st_arena *a, const char *text) {
    st_err err = {0};
    const st_json *v = parse_exact(a, text, strlen(text), &err);
    ck_assert_msg(v != NULL, "%d:%d: %s\n--- in ---\n%s", err.loc.line, err.loc.col, err.message, text);
    return v;
}

/* An error case: where it should be reported and a part of its message. */
typedef struct bad {
    const char *text;
    int line, col;
    const char *part;
} bad;

static void check_bad(faults *f, const bad *cases, size_t n) {
    st_arena *a = st_arena_new();
    for (size_t i = 0; i < n; i++) {
        const bad *c = &cases[i];
        st_err err = {0};
        const st_json *v = parse_exact(a, c->text, strlen(c->text), &err);
        if (v) {
            fault(f, "`%s`: parsed, expected an error", c->text);
            continue;
        }
        if (err.loc.line != c->line || err.loc.col != c->col)
            fault(f, "`%s`: error at %d:%d, expected %d:%d: %s", c->text, err.loc.line, err.loc.col, c->line, c->col,
                  err.message);
        if (!strstr(err.message, c->part)) fault(f, "`%s`: \"%s\" lacks \"%s\"", c->text, err.message, c->part);
        if (!err.loc.file || strcmp(err.loc.file, "rec.json"))
            fault(f, "`%s`: error names `%s`, not rec.json", c->text, err.loc.file ? err.loc.file : "(null)");
    }
    st_arena_free(a);
}

static const char *written_string(st_buf *b, const char *s) {
    b->len = 0;
    if (b->data) b->data[0] = 0;
    st_json_put_string(b, s);
    return b->data;
}

static const char *written_number(st_buf *b, double v) {
    b->len = 0;
    if (b->data) b->data[0] = 0;
    st_json_put_number(b, v);
    return b->data;
}

/* ------------------------------------------------------------------------ */

START_TEST(scalars) {
    st_arena *a = st_arena_new();
    ck_assert_int_eq(json_ok(a, "null")->kind, ST_JSON_NULL);
    const st_json *t = json_ok(a, " true "), *f = json_ok(a, "\n\tfalse\r\n");
    ck_assert(t->kind == ST_JSON_BOOL && t->boolean);
    ck_assert(f->kind == ST_JSON_BOOL && !f->boolean);
    const st_json *n = json_ok(a, "-12.5e1");
    ck_assert_int_eq(n->kind, ST_JSON_NUMBER);
    ck_assert(n->number == -125.0);
    const st_json *s = json_ok(a, "\"hi there\"");
    ck_assert_int_eq(s->kind, ST_JSON_STRING);
    ck_assert_str_eq(s->string, "hi there");
    ck_assert_uint_eq(s->len, 8);
    const st_json *e = json_ok(a, "\"\"");
    ck_assert_str_eq(e->string, "");
    ck_assert_uint_eq(e->len, 0);
    st_arena_free(a);
}
END_TEST

START_TEST(containers) {
    st_arena *a = st_arena_new();
    const st_json *v = json_ok(a, "{\"point\": {\"BS\": 32, \"SE\": [1, 2, 4]}, \"status\": \"ok\", \"e\": [], \"o\": {}}");
    ck_assert_int_eq(v->kind, ST_JSON_OBJECT);
    ck_assert_uint_eq(v->len, 4);
    ck_assert_str_eq(v->keys[0], "point");
    ck_assert_str_eq(v->keys[1], "status");
    ck_assert_str_eq(v->keys[2], "e");
    ck_assert_str_eq(v->keys[3], "o");
    const st_json *se = st_json_get(st_json_get(v, "point"), "SE");
    ck_assert(se && se->kind == ST_JSON_ARRAY && se->len == 3);
    ck_assert(se->items[0].number == 1 && se->items[1].number == 2 && se->items[2].number == 4);
    ck_assert(se->keys == NULL);
    const st_json *e = st_json_get(v, "e"), *o = st_json_get(v, "o");
    ck_assert(e->kind == ST_JSON_ARRAY && e->len == 0);
    ck_assert(o->kind == ST_JSON_OBJECT && o->len == 0);
    ck_assert(st_json_get(o, "x") == NULL);
    const st_json *mixed = json_ok(a, "[null, true, \"s\", 0, [[]], {\"k\": null}]");
    ck_assert_uint_eq(mixed->len, 6);
    static const st_json_kind kinds[] = {ST_JSON_NULL,   ST_JSON_BOOL,  ST_JSON_STRING,
                                         ST_JSON_NUMBER, ST_JSON_ARRAY, ST_JSON_OBJECT};
    for (int i = 0; i < 6; i++) ck_assert_int_eq(mixed->items[i].kind, kinds[i]);
    st_arena_free(a);
}
END_TEST

START_TEST(get_helpers) {
    st_arena *a = st_arena_new();
    const st_json *v = json_ok(a, "{\"name\": \"scan\", \"gbps\": 12.5, \"n\": null, \"name\": \"scan2\", \"s\": \"7\"}");
    /* a repeated key gives its last value */
    ck_assert_str_eq(st_json_get_string(v, "name"), "scan2");
    ck_assert_int_eq(st_json_get(v, "name")->kind, ST_JSON_STRING);
    double d = -1;
    ck_assert(st_json_get_number(v, "gbps", &d));
    ck_assert(d == 12.5);
    /* absent, and present with another kind */
    d = -1;
    ck_assert(!st_json_get_number(v, "missing", &d));
    ck_assert(!st_json_get_number(v, "s", &d));
    ck_assert(!st_json_get_number(v, "n", &d));
    ck_assert(d == -1);
    ck_assert_ptr_null(st_json_get_string(v, "gbps"));
    ck_assert_ptr_null(st_json_get_string(v, "missing"));
    ck_assert_ptr_nonnull(st_json_get(v, "n"));
    ck_assert_ptr_null(st_json_get(v, "Name"));
    /* not an object */
    const st_json *arr = json_ok(a, "[\"name\"]");
    ck_assert_ptr_null(st_json_get(arr, "name"));
    ck_assert_ptr_null(st_json_get(NULL, "name"));
    ck_assert_ptr_null(st_json_get_string(NULL, "name"));
    ck_assert(!st_json_get_number(NULL, "name", &d));
    st_arena_free(a);
}
END_TEST

START_TEST(string_escapes) {
    st_arena *a = st_arena_new();
    const st_json *s = json_ok(a, "\"q\\\" b\\\\ s\\/ \\b\\f\\n\\r\\t\"");
    ck_assert_str_eq(s->string, "q\" b\\ s/ \b\f\n\r\t");
    ck_assert_uint_eq(s->len, strlen("q\" b\\ s/ \b\f\n\r\t"));
    /* \u escapes to UTF-8 of one, two and three bytes, a pair to four */
    ck_assert_str_eq(json_ok(a, "\"\\u0041\\u00e9\\u20AC\"")->string, "A\xC3\xA9\xE2\x82\xAC");
    const st_json *pair = json_ok(a, "\"\\uD83D\\uDE00!\"");
    ck_assert_str_eq(pair->string, "\xF0\x9F\x98\x80!");
    ck_assert_uint_eq(pair->len, 5);
    ck_assert_str_eq(json_ok(a, "\"\\uDBFF\\uDFFF\"")->string, "\xF4\x8F\xBF\xBF");
    ck_assert_str_eq(json_ok(a, "\"\\u001f\\u007F\"")->string, "\x1F\x7F");
    /* raw UTF-8 goes through as it is */
    ck_assert_str_eq(json_ok(a, "\"GB/s \xC3\xA9 \xF0\x9F\x98\x80\"")->string, "GB/s \xC3\xA9 \xF0\x9F\x98\x80");
    /* keys are decoded too */
    const st_json *o = json_ok(a, "{\"a\\u0062c\": 1}");
    ck_assert_str_eq(o->keys[0], "abc");
    ck_assert_ptr_nonnull(st_json_get(o, "abc"));
    st_arena_free(a);
}
END_TEST

START_TEST(string_errors) {
    static const bad cases[] = {
        {"\"a\nb\"", 1, 3, "control character 0x0A"},
        {"\"a\tb\"", 1, 3, "control character 0x09"},
        {"\"\\x\"", 1, 3, "expected an escape"},
        {"\"\\'\"", 1, 3, "expected an escape"},
        {"\"\\u12G4\"", 1, 6, "four hex digits"},
        {"\"\\u12\"", 1, 6, "four hex digits"},
        {"\"\\uD800\"", 1, 2, "lone high surrogate"},
        {"\"\\uD800x\"", 1, 2, "lone high surrogate"},
        {"\"\\uDC00\"", 1, 2, "lone low surrogate"},
        {"\"\\uD800\\u0041\"", 1, 8, "expected a low surrogate"},
        {"\"\\uD800\\uD800\"", 1, 8, "expected a low surrogate"},
        {"\"\\u0000\"", 1, 2, "\\u0000"},
        {"\"abc", 1, 5, "unterminated string"},
        {"\"abc\\", 1, 6, "unterminated string"},
        {"\"abc\\u00", 1, 9, "four hex digits"},
        {"[\"ok\",\n  \"bad\\q\"]", 2, 8, "expected an escape"},
        {"{\"k\x01\": 1}", 1, 4, "control character 0x01"},
    };
    faults f = {0};
    check_bad(&f, cases, sizeof cases / sizeof cases[0]);
    no_faults(&f);
}
END_TEST

START_TEST(number_errors) {
    static const bad cases[] = {
        {"01", 1, 2, "leading zero"},
        {"-01", 1, 3, "leading zero"},
        {"[00]", 1, 3, "leading zero"},
        {"+1", 1, 1, "no leading `+`"},
        {".5", 1, 1, "digit before `.`"},
        {"1.", 1, 3, "digit after `.`"},
        {"1.e5", 1, 3, "digit after `.`"},
        {"1e", 1, 3, "exponent"},
        {"1e+", 1, 4, "exponent"},
        {"1E-x", 1, 4, "exponent"},
        {"-", 1, 2, "after `-`"},
        {"- 1", 1, 2, "after `-`"},
        {"NaN", 1, 1, "no NaN or Infinity"},
        {"[1, Infinity]", 1, 5, "no NaN or Infinity"},
        {"-Infinity", 1, 2, "after `-`"},
        {"1e999", 1, 1, "out of the range"},
        {"-1e400", 1, 1, "out of the range"},
        {"0x10", 1, 2, "end of the input"},
        {"1 2", 1, 3, "end of the input"},
    };
    faults f = {0};
    check_bad(&f, cases, sizeof cases / sizeof cases[0]);
    no_faults(&f);
}
END_TEST

START_TEST(structure_errors) {
    static const bad cases[] = {
        {"", 1, 1, "expected a value, found the end of the input"},
        {"   ", 1, 4, "expected a value"},
        {"\n\n", 3, 1, "expected a value"},
        {"]", 1, 1, "expected a value, found `]`"},
        {"{\n  \"a\": 1\n  \"b\": 2\n}", 3, 3, "expected `,` or `}` after an object member"},
        {"{\"a\": 1", 1, 8, "`,` or `}` after an object member, found the end"},
        {"[1 2]", 1, 4, "expected `,` or `]` after an array element"},
        {"[1", 1, 3, "`,` or `]`"},
        {"[1,]", 1, 4, "no trailing commas"},
        {"{\"a\":1,}", 1, 8, "no trailing commas"},
        {"{\"a\" 1}", 1, 6, "expected `:` after an object key"},
        {"{\"a\"", 1, 5, "`:`"},
        {"{1: 2}", 1, 2, "expected a string key or `}`"},
        {"{'a': 2}", 1, 2, "string key"},
        {"{\"a\": 1, b: 2}", 1, 10, "a string key after `,`"},
        {"{\"a\":}", 1, 6, "expected a value"},
        {"[1] x", 1, 5, "the end of the input after the JSON value"},
        {"{} {}", 1, 4, "end of the input"},
        {"tru", 1, 1, "unknown word `tru`"},
        {"nul", 1, 1, "unknown word"},
        {"True", 1, 1, "true, false or null"},
        {"truex", 1, 1, "unknown word"},
        {"[\x0b]", 1, 2, "byte 0x0B"},
        {"\xEF\xBB\xBF{}", 1, 1, "byte 0xEF"},
        /* a tab is one column, bytes are counted */
        {"[\n\t1,\n\t@]", 3, 2, "found `@`"},
        {"\r\n[\r\n1 x]", 3, 3, "`,` or `]`"},
    };
    faults f = {0};
    check_bad(&f, cases, sizeof cases / sizeof cases[0]);
    no_faults(&f);
}
END_TEST

/* Nesting: 64 levels read, the 65th is refused at its bracket. */
static char *nested(int depth, bool objects) {
    char *s = malloc((size_t)depth * 6 + 8);
    ck_assert(s != NULL);
    size_t n = 0;
    for (int i = 0; i < depth; i++) n += (size_t)sprintf(s + n, "%s", objects ? "{\"k\":" : "[");
    s[n++] = '1';
    for (int i = 0; i < depth; i++) s[n++] = objects ? '}' : ']';
    s[n] = 0;
    return s;
}

START_TEST(nesting_limit) {
    st_arena *a = st_arena_new();
    for (int objects = 0; objects < 2; objects++) {
        char *ok = nested(64, objects), *deep = nested(65, objects);
        const st_json *v = json_ok(a, ok);
        int depth = 0;
        while (v->kind == ST_JSON_ARRAY || v->kind == ST_JSON_OBJECT) {
            ck_assert_uint_eq(v->len, 1);
            v = &v->items[0];
            depth++;
        }
        ck_assert_int_eq(depth, 64);
        ck_assert(v->number == 1);
        st_err err = {0};
        ck_assert_ptr_null(parse_exact(a, deep, strlen(deep), &err));
        ck_assert_has(err.message, "nesting deeper than 64");
        ck_assert_int_eq(err.loc.line, 1);
        ck_assert_int_eq(err.loc.col, objects ? 64 * 5 + 1 : 65);
        free(ok);
        free(deep);
    }
    /* far deeper still fails cleanly, without running down the stack */
    char *very = nested(100000, false);
    st_err err = {0};
    ck_assert_ptr_null(parse_exact(a, very, strlen(very), &err));
    ck_assert_has(err.message, "nesting");
    free(very);
    st_arena_free(a);
}
END_TEST

START_TEST(number_values) {
    st_arena *a = st_arena_new();
    const st_json *z = json_ok(a, "-0");
    ck_assert(z->number == 0 && signbit(z->number));
    ck_assert(!signbit(json_ok(a, "0")->number));
    ck_assert(json_ok(a, "1e308")->number == 1e308);
    ck_assert(json_ok(a, "5e-324")->number == 5e-324);
    ck_assert(json_ok(a, "5e-324")->number > 0);
    ck_assert(json_ok(a, "0.1")->number == 0.1);
    ck_assert(json_ok(a, "1E2")->number == 100);
    ck_assert(json_ok(a, "1e+2")->number == 100);
    ck_assert(json_ok(a, "-1.5e-3")->number == -1.5e-3);
    ck_assert(json_ok(a, "1.7976931348623157e308")->number == 1.7976931348623157e308);
    ck_assert(json_ok(a, "9007199254740993")->number == 9007199254740992.0);
    /* too small for a double rounds to zero rather than fail */
    ck_assert(json_ok(a, "1e-400")->number == 0);
    /* longer than any buffer on the stack */
    char big[400];
    big[0] = '1';
    memset(big + 1, '0', 300);
    big[301] = 0;
    ck_assert(json_ok(a, big)->number == 1e300);
    /* the length given ends the number, not a NUL */
    st_err err = {0};
    const st_json *cut = st_json_parse(a, "rec.json", "1234", 2, &err);
    ck_assert(cut && cut->number == 12);
    cut = st_json_parse(a, "rec.json", "[1,2]garbage", 5, &err);
    ck_assert(cut && cut->len == 2);
    st_arena_free(a);
}
END_TEST

START_TEST(put_number_forms) {
    static const struct {
        double v;
        const char *text;
    } cases[] = {
        {42, "42"},
        {-7, "-7"},
        {0, "0"},
        {-0.0, "-0"},
        {0.1, "0.1"},
        {-2.5, "-2.5"},
        {1e308, "1e+308"},
        {5e-324, "5e-324"},
        {1e21, "1e+21"},
        {9007199254740991.0, "9007199254740991"},
        {9007199254740992.0, "9007199254740992"},
        {123456.789, "123456.789"},
        {1.0 / 3, "0.3333333333333333"},
        {NAN, "null"},
        {INFINITY, "null"},
        {-INFINITY, "null"},
    };
    faults f = {0};
    st_buf b = {0};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *got = written_number(&b, cases[i].v);
        if (strcmp(got, cases[i].text)) fault(&f, "%.17g: wrote `%s`, expected `%s`", cases[i].v, got, cases[i].text);
    }
    st_buf_free(&b);
    no_faults(&f);
}
END_TEST

/* A small deterministic generator, so that a failure repeats. */
static uint64_t next_random(uint64_t *s) {
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

START_TEST(number_round_trips) {
    st_arena *a = st_arena_new();
    st_buf b = {0};
    faults f = {0};
    uint64_t seed = 0x9E3779B97F4A7C15u;
    for (int i = 0; i < 20000; i++) {
        uint64_t bits = next_random(&seed);
        double v;
        if (i % 3 == 0) v = (double)(int64_t)(bits >> 11) * ((bits & 1) ? -1 : 1); /* integers */
        else if (i % 3 == 1) v = (double)(bits >> 11) / 9007199254740992.0 * 1000; /* fractions */
        else memcpy(&v, &bits, sizeof v);                                          /* any bits */
        if (!isfinite(v)) continue;
        const char *text = written_number(&b, v);
        st_err err = {0};
        const st_json *back = parse_exact(a, text, strlen(text), &err);
        if (!back) fault(&f, "%.17g wrote `%s`, which does not parse: %s", v, text, err.message);
        else if (memcmp(&back->number, &v, sizeof v)) fault(&f, "%.17g wrote `%s`, read back %.17g", v, text, back->number);
        else if (strlen(text) > 24) fault(&f, "%.17g wrote `%s`: longer than needed", v, text);
    }
    st_buf_free(&b);
    st_arena_free(a);
    no_faults(&f);
}
END_TEST

START_TEST(put_string_escapes) {
    st_buf b = {0};
    ck_assert_str_eq(written_string(&b, "plain"), "\"plain\"");
    ck_assert_str_eq(written_string(&b, ""), "\"\"");
    ck_assert_str_eq(written_string(&b, "a\"b\\c/d"), "\"a\\\"b\\\\c/d\"");
    ck_assert_str_eq(written_string(&b, "\n\t\r\b\f"), "\"\\n\\t\\r\\b\\f\"");
    ck_assert_str_eq(written_string(&b, "\x01x\x1f\x7f"), "\"\\u0001x\\u001F\x7f\"");
    ck_assert_str_eq(written_string(&b, "\xC3\xA9 \xF0\x9F\x98\x80"), "\"\xC3\xA9 \xF0\x9F\x98\x80\"");
    ck_assert_str_eq(written_string(&b, NULL), "null");
    /* appends to what is there */
    b.len = 0;
    st_buf_puts(&b, "{\"k\":");
    st_json_put_string(&b, "v");
    st_buf_puts(&b, "}");
    ck_assert_str_eq(b.data, "{\"k\":\"v\"}");
    st_buf_free(&b);
}
END_TEST

START_TEST(string_round_trips) {
    st_arena *a = st_arena_new();
    st_buf b = {0};
    /* every byte but NUL, then random strings of them */
    char all[256];
    for (int i = 1; i < 256; i++) all[i - 1] = (char)i;
    all[255] = 0;
    uint64_t seed = 12345;
    for (int round = 0; round < 2000; round++) {
        char s[64];
        const char *text = all;
        if (round > 0) {
            size_t n = next_random(&seed) % sizeof s;
            for (size_t i = 0; i < n; i++) s[i] = (char)(1 + next_random(&seed) % 255);
            s[n] = 0;
            text = s;
        }
        const char *w = written_string(&b, text);
        st_err err = {0};
        const st_json *v = parse_exact(a, w, strlen(w), &err);
        ck_assert_msg(v != NULL, "round %d: %s", round, err.message);
        ck_assert_int_eq(v->kind, ST_JSON_STRING);
        ck_assert_str_eq(v->string, text);
        ck_assert_uint_eq(v->len, strlen(text));
    }
    st_buf_free(&b);
    st_arena_free(a);
}
END_TEST

START_TEST(record_round_trip) {
    /* a record as the driver writes one: written piece by piece, read back */
    st_arena *a = st_arena_new();
    st_buf b = {0};
    st_buf_puts(&b, "{");
    st_json_put_string(&b, "strategy");
    st_buf_puts(&b, ": ");
    st_json_put_string(&b, "parallel-scan(BS=32, \"SE\"=1)\n");
    st_buf_puts(&b, ", ");
    st_json_put_string(&b, "gbps");
    st_buf_puts(&b, ": ");
    st_json_put_number(&b, 123.456);
    st_buf_puts(&b, ", ");
    st_json_put_string(&b, "time");
    st_buf_puts(&b, ": ");
    st_json_put_number(&b, NAN);
    st_buf_puts(&b, "}\n");
    const st_json *v = json_ok(a, b.data);
    ck_assert_str_eq(st_json_get_string(v, "strategy"), "parallel-scan(BS=32, \"SE\"=1)\n");
    double g;
    ck_assert(st_json_get_number(v, "gbps", &g) && g == 123.456);
    ck_assert_int_eq(st_json_get(v, "time")->kind, ST_JSON_NULL);
    st_buf_free(&b);
    st_arena_free(a);
}
END_TEST

static const char DOC[] =
    "{\"space\": \"parallel-scan(BS=[32..512 pow2])\", \"point\": {\"BS\": 64, \"SE\": [1, 2.5e-3, -0]},\n"
    " \"ok\": true, \"no\": false, \"n\": null, \"s\": \"a\\\"\\\\\\/\\b\\f\\n\\r\\t\\u00e9\\uD83D\\uDE00\"}";

/* Every proper prefix of an object is incomplete: each must fail, at a
 * place inside the text or just after it, and never read beyond. */
START_TEST(truncated_inputs) {
    st_arena *a = st_arena_new();
    size_t len = strlen(DOC);
    json_ok(a, DOC);
    for (size_t n = 0; n < len; n++) {
        st_err err = {0};
        const st_json *v = parse_exact(a, DOC, n, &err);
        ck_assert_msg(v == NULL, "prefix of %zu bytes parsed", n);
        ck_assert_msg(err.loc.line >= 1 && err.loc.line <= 2 && err.loc.col >= 1, "prefix %zu: at %d:%d", n,
                      err.loc.line, err.loc.col);
        ck_assert_msg(err.message[0] != 0, "prefix %zu: no message", n);
    }
    st_arena_free(a);
}
END_TEST

/* Random bytes and mutations of a valid text, parsed under the sanitizers:
 * each gives a value or an error placed inside the text, nothing else. */
START_TEST(fuzz) {
    static const char alphabet[] = "{}[]:,\"\\/ \n\tu0123456789abcdefABCDEF+-.eEtrunlsfxD8C\x01\x7f\xc3\xa9";
    st_arena *a = st_arena_new();
    uint64_t seed = 0xC0FFEE;
    size_t doc_len = strlen(DOC);
    char buf[512];
    int parsed = 0;
    for (int i = 0; i < 30000; i++) {
        size_t n;
        if (i % 2) {
            n = next_random(&seed) % 48;
            for (size_t k = 0; k < n; k++) {
                uint64_t r = next_random(&seed);
                buf[k] = r % 4 ? alphabet[r % (sizeof alphabet - 1)] : (char)(r >> 8);
            }
        } else {
            memcpy(buf, DOC, doc_len);
            n = doc_len;
            for (int m = (int)(next_random(&seed) % 3) + 1; m > 0; m--) {
                size_t at = next_random(&seed) % n;
                uint64_t r = next_random(&seed);
                switch (r % 3) {
                case 0: buf[at] = alphabet[(r >> 8) % (sizeof alphabet - 1)]; break;
                case 1:
                    memmove(buf + at, buf + at + 1, n - at - 1);
                    n--;
                    break;
                default:
                    memmove(buf + at + 1, buf + at, n - at);
                    buf[at] = alphabet[(r >> 8) % (sizeof alphabet - 1)];
                    n++;
                }
            }
        }
        st_arena_mark mark = st_arena_get_mark(a);
        st_err err = {0};
        const st_json *v = parse_exact(a, buf, n, &err);
        if (v) parsed++;
        else
            ck_assert_msg(err.loc.line >= 1 && err.loc.col >= 1 && err.message[0] && (size_t)err.loc.col <= n + 1,
                          "case %d: error at %d:%d: %s", i, err.loc.line, err.loc.col, err.message);
        st_arena_release(a, mark);
    }
    ck_assert_int_gt(parsed, 0); /* some mutations keep the text valid: the good path ran too */
    st_arena_free(a);
}
END_TEST

/* A number that becomes an unsigned integer (a point, a count, a seed) is
 * a whole number in range, or none: converting 1e300 or -5 to uint64_t is
 * undefined, and a fuzzer of results.jsonl found records doing it (issue 19). */
START_TEST(get_whole_numbers) {
    st_arena *a = st_arena_new();
    const st_json *v = json_ok(a, "{\"zero\": 0, \"n\": 7, \"big\": 1e300, \"neg\": -5, \"half\": 0.5, "
                                  "\"top\": 18446744073709549568, \"two64\": 18446744073709551616, "
                                  "\"u32\": 4294967296, \"s\": \"7\", \"minus_zero\": -0}");
    uint64_t u = 99;
    ck_assert(st_json_get_whole(v, "zero", UINT64_MAX, &u) && u == 0);
    ck_assert(st_json_get_whole(v, "n", 7, &u) && u == 7);
    ck_assert(st_json_get_whole(v, "minus_zero", 1, &u) && u == 0);
    ck_assert(st_json_get_whole(v, "top", UINT64_MAX, &u) && u == UINT64_C(18446744073709549568));
    u = 99;
    ck_assert(!st_json_get_whole(v, "n", 6, &u));          /* above max */
    ck_assert(!st_json_get_whole(v, "big", UINT64_MAX, &u));
    ck_assert(!st_json_get_whole(v, "neg", UINT64_MAX, &u));
    ck_assert(!st_json_get_whole(v, "half", UINT64_MAX, &u));
    ck_assert(!st_json_get_whole(v, "two64", UINT64_MAX, &u));
    ck_assert(!st_json_get_whole(v, "u32", UINT32_MAX, &u));
    ck_assert(!st_json_get_whole(v, "s", UINT64_MAX, &u));
    ck_assert(!st_json_get_whole(v, "missing", UINT64_MAX, &u));
    ck_assert(u == 99); /* untouched when false */
    st_arena_free(a);
}
END_TEST

int main(void) {
    Suite *s = suite_create("json");
    TCase *read = tcase_create("read");
    tcase_add_test(read, scalars);
    tcase_add_test(read, containers);
    tcase_add_test(read, get_helpers);
    tcase_add_test(read, get_whole_numbers);
    tcase_add_test(read, string_escapes);
    tcase_add_test(read, number_values);
    tcase_add_test(read, nesting_limit);
    suite_add_tcase(s, read);
    TCase *errors = tcase_create("errors");
    tcase_add_test(errors, string_errors);
    tcase_add_test(errors, number_errors);
    tcase_add_test(errors, structure_errors);
    suite_add_tcase(s, errors);
    TCase *write = tcase_create("write");
    tcase_add_test(write, put_number_forms);
    tcase_add_test(write, number_round_trips);
    tcase_add_test(write, put_string_escapes);
    tcase_add_test(write, string_round_trips);
    tcase_add_test(write, record_round_trip);
    suite_add_tcase(s, write);
    TCase *robust = tcase_create("robust");
    tcase_set_timeout(robust, 120);
    tcase_add_test(robust, truncated_inputs);
    tcase_add_test(robust, fuzz);
    suite_add_tcase(s, robust);
    return run_suite(s);
}
