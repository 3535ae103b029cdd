/* tests/test_space.c — parameter spaces: ranges, dimensions, enumeration
 * order, `where` conditions, errors with their columns, and the mapping of
 * a point's columns back to the space's text. */
#include "explore/explore.h"
#include "harness.h"

#include <inttypes.h>

static const char *const paper = "parallel-scan(BS=[32..512 pow2], BF=2, SE=[1..16 pow2])";

static st_space *space_ok(const char *text) {
    st_err err = {0};
    st_space *s = st_space_parse("space", text, &err);
    ck_assert_msg(s != NULL, "space:1:%d: %s\n--- in ---\n%s", err.loc.col, err.message, text);
    return s;
}

static st_err space_fails(const char *text) {
    st_err err = {0};
    st_space *s = st_space_parse("space", text, &err);
    ck_assert_msg(s == NULL, "expected an error from: %s", text);
    return err;
}

/* The error of text: at column col, its message containing part. */
static void check_error(faults *f, const char *text, int col, const char *part) {
    st_err err = {0};
    st_space *s = st_space_parse("space", text, &err);
    if (s) {
        fault(f, "%s: parsed, expected an error at %d (%s)", text, col, part);
        st_space_free(s);
        return;
    }
    if (err.kind != ST_ERR_USER || err.loc.line != 1 || err.loc.col != col || !strstr(err.message, part))
        fault(f, "%s: expected `%s` at 1:%d, got %d:%d: %s", text, part, col, err.loc.line, err.loc.col, err.message);
    if (!err.loc.file || strcmp(err.loc.file, "space")) fault(f, "%s: the error does not name the space", text);
}

/* Point i's text (malloc'd), whether it is admitted and why not. */
static char *point(const st_space *s, uint64_t i, bool *admitted, st_err *why) {
    st_buf b = {0};
    bool adm = false;
    st_err w = {0};
    ck_assert_msg(st_space_point(s, i, NULL, &b, &adm, &w), "point %" PRIu64 ": %s", i, w.message);
    ck_assert(!b.failed);
    if (admitted) *admitted = adm;
    if (why) *why = w;
    char *text = b.data ? b.data : strdup("");
    ck_assert(text != NULL);
    return text;
}

static void check_point(const st_space *s, uint64_t i, const char *want) {
    char *text = point(s, i, NULL, NULL);
    ck_assert_msg(!strcmp(text, want), "point %" PRIu64 ": `%s`, expected `%s`", i, text, want);
    free(text);
}

/* Dimension d is named name with the values `want`, space-separated. */
static void check_dim(const st_space *s, uint32_t d, const char *name, const char *want) {
    const st_space_dim *dim = st_space_dim_at(s, d);
    ck_assert_msg(dim != NULL, "no dimension %u", d);
    ck_assert_str_eq(dim->name, name);
    st_buf b = {0};
    for (uint32_t k = 0; k < dim->nvalues; k++) st_buf_printf(&b, "%s%s", k ? " " : "", dim->values[k]);
    ck_assert_msg(b.data && !strcmp(b.data, want), "%s: `%s`, expected `%s`", name, b.data ? b.data : "", want);
    st_buf_free(&b);
}

static bool admitted(const st_space *s, uint64_t i) {
    bool a = false;
    char *text = point(s, i, &a, NULL);
    free(text);
    return a;
}

START_TEST(paper_space) {
    st_space *s = space_ok(paper);
    ck_assert_str_eq(st_space_text(s), paper);
    ck_assert_uint_eq(st_space_ndims(s), 2);
    check_dim(s, 0, "BS", "32 64 128 256 512");
    check_dim(s, 1, "SE", "1 2 4 8 16");
    ck_assert_ptr_null(st_space_dim_at(s, 2));
    ck_assert_uint_eq(st_space_npoints(s), 25);
    /* a shard's share: indices 0, 4, …, 24 (7); 3, 7, …, 23 (6); none past the end */
    ck_assert_uint_eq(st_space_shard_points(s, 0, 1), 25);
    ck_assert_uint_eq(st_space_shard_points(s, 0, 4), 7);
    ck_assert_uint_eq(st_space_shard_points(s, 3, 4), 6);
    ck_assert_uint_eq(st_space_shard_points(s, 24, 100), 1);
    ck_assert_uint_eq(st_space_shard_points(s, 25, 100), 0);
    check_point(s, 0, "parallel-scan(BS=32, BF=2, SE=1)");
    check_point(s, 4, "parallel-scan(BS=32, BF=2, SE=16)");
    check_point(s, 5, "parallel-scan(BS=64, BF=2, SE=1)");
    check_point(s, 24, "parallel-scan(BS=512, BF=2, SE=16)");
    /* mixed radix, the last dimension fastest */
    uint32_t which[2];
    bool adm = false;
    st_buf b = {0};
    st_err why = {0};
    ck_assert(st_space_point(s, 13, which, &b, &adm, &why));
    ck_assert_uint_eq(which[0], 2);
    ck_assert_uint_eq(which[1], 3);
    ck_assert(adm);
    ck_assert_str_eq(b.data, "parallel-scan(BS=128, BF=2, SE=8)");
    st_buf_free(&b);
    /* appended, not overwritten */
    st_buf_puts(&b, "-s ");
    ck_assert(st_space_point(s, 1, NULL, &b, NULL, NULL));
    ck_assert_str_eq(b.data, "-s parallel-scan(BS=32, BF=2, SE=2)");
    st_buf_free(&b);
    st_space_free(s);
}
END_TEST

START_TEST(lists_with_names) {
    st_space *s = space_ok("lower(MEM=[global, local], WG=[ 64 ,128 ]) ; try(fuse)");
    ck_assert_uint_eq(st_space_npoints(s), 4);
    check_dim(s, 0, "MEM", "global local");
    check_dim(s, 1, "WG", "64 128");
    check_point(s, 0, "lower(MEM=global, WG=64) ; try(fuse)");
    check_point(s, 3, "lower(MEM=local, WG=128) ; try(fuse)");
    st_space_free(s);
    /* kept as written */
    s = space_ok("r(X=[007, -0, a_1])");
    check_dim(s, 0, "X", "007 -0 a_1");
    st_space_free(s);
}
END_TEST

START_TEST(step_ranges) {
    static const struct { const char *range, *values; } cases[] = {
        {"[1..16 step 3]", "1 4 7 10 13 16"},
        {"[1..15 step 3]", "1 4 7 10 13"},
        {"[1..4]", "1 2 3 4"},
        {"[5..5]", "5"},
        {"[ 2 .. 10  step  4 ]", "2 6 10"},
        {"[0..3 step 100]", "0"},
        {"[-9223372036854775807..9223372036854775807 step 9223372036854775807]",
         "-9223372036854775807 0 9223372036854775807"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char text[200];
        snprintf(text, sizeof text, "r(N=%s)", cases[i].range);
        st_space *s = space_ok(text);
        check_dim(s, 0, "N", cases[i].values);
        st_space_free(s);
    }
}
END_TEST

START_TEST(pow_ranges) {
    static const struct { const char *range, *values; } cases[] = {
        {"[32..512 pow2]", "32 64 128 256 512"},
        {"[3..40 pow2]", "4 8 16 32"},
        {"[1..100 pow3]", "1 3 9 27 81"},
        {"[-10..1 pow2]", "1"},
        {"[2..1000 pow10]", "10 100 1000"},
        {"[1..9223372036854775807 pow2]", NULL}, /* 63 powers, no overflow */
        {"[2..9223372036854775807 pow3037000500]", "3037000500"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char text[200];
        snprintf(text, sizeof text, "r(N=%s)", cases[i].range);
        st_space *s = space_ok(text);
        if (cases[i].values) check_dim(s, 0, "N", cases[i].values);
        else {
            ck_assert_uint_eq(st_space_dim_at(s, 0)->nvalues, 63);
            ck_assert_str_eq(st_space_dim_at(s, 0)->values[62], "4611686018427387904");
        }
        st_space_free(s);
    }
}
END_TEST

START_TEST(negative_values) {
    st_space *s = space_ok("r(A=[-4..4 step 4], B=[-1, 0, 2], C=[-3..-1])");
    check_dim(s, 0, "A", "-4 0 4");
    check_dim(s, 1, "B", "-1 0 2");
    check_dim(s, 2, "C", "-3 -2 -1");
    ck_assert_uint_eq(st_space_npoints(s), 27);
    check_point(s, 0, "r(A=-4, B=-1, C=-3)");
    st_space_free(s);
    s = space_ok("r(A=[-4..4 step 4], K=-2) where A < K");
    ck_assert(admitted(s, 0));
    ck_assert(!admitted(s, 1));
    st_space_free(s);
}
END_TEST

START_TEST(repeated_names) {
    st_space *s = space_ok("a(BS=[1,2]) ; b(BS=[3, 4, 5]) ; c(BS=[7]) ; d(SE=[1]) where BS.2 > BS + 2, BS.3 == 7");
    ck_assert_uint_eq(st_space_ndims(s), 4);
    check_dim(s, 0, "BS", "1 2");
    check_dim(s, 1, "BS.2", "3 4 5");
    check_dim(s, 2, "BS.3", "7");
    check_dim(s, 3, "SE", "1");
    ck_assert_uint_eq(st_space_npoints(s), 6);
    check_point(s, 4, "a(BS=2) ; b(BS=4) ; c(BS=7) ; d(SE=1)");
    /* BS.2 > BS + 2: (1,4) (1,5) (2,5) */
    const bool want[6] = {false, true, true, false, false, true};
    for (uint64_t i = 0; i < 6; i++) ck_assert_msg(admitted(s, i) == want[i], "point %" PRIu64, i);
    st_space_free(s);
}
END_TEST

/* A condition over X in [-6..6] against the same in C, for every X. */
static void check_condition(faults *f, const char *cond, bool (*c)(int64_t x, int64_t two)) {
    char text[300];
    snprintf(text, sizeof text, "r(X=[-6..6], TWO=2) where %s", cond);
    st_space *s = space_ok(text);
    for (int64_t x = -6; x <= 6; x++)
        if (admitted(s, (uint64_t)(x + 6)) != c(x, 2)) fault(f, "where %s, X = %" PRId64 ": wrong", cond, x);
    st_space_free(s);
}

static bool c1(int64_t x, int64_t two) { return 1 + two * x == 7; }
static bool c2(int64_t x, int64_t two) { return x - 1 - two == 0; }
static bool c3(int64_t x, int64_t two) { return (!(x > two) && x != 1) || x == 5; }
static bool c4(int64_t x, int64_t two) { return -x * two < -5; }
static bool c5(int64_t x, int64_t two) { return x % 3 == two - 2 || x / two == -2; }
static bool c6(int64_t x, int64_t two) { return (x + 1) * (x - 1) >= 8 && x <= two + 2; }
static bool c7(int64_t x, int64_t two) { return (x < 0) == (two > 3); }
static bool c8(int64_t x, int64_t two) { return !!x + - -two == 3; }
static bool c9(int64_t x, int64_t two) { return x || two == 0; }

START_TEST(where_precedence) {
    faults f = {0};
    check_condition(&f, "1 + TWO * X == 7", c1);
    check_condition(&f, "X - 1 - TWO == 0", c2);
    check_condition(&f, "!(X > TWO) && X != 1 || X == 5", c3);
    check_condition(&f, "-X * TWO < -5", c4);
    check_condition(&f, "X % 3 == TWO - 2 || X / TWO == -2", c5);
    check_condition(&f, "(X + 1) * (X - 1) >= 8 && X <= TWO + 2", c6);
    check_condition(&f, "X < 0 == TWO > 3", c7);
    check_condition(&f, "!!X + - -TWO == 3", c8);
    check_condition(&f, "X || TWO == 0", c9);
    no_faults(&f);
}
END_TEST

START_TEST(where_fixed_and_why) {
    /* BF is fixed anywhere in the text; the first of two values counts */
    st_space *s = space_ok("a(BF=3) ; parallel-scan(BS=[30, 32, 33], BF=2)   where BS % BF == 0");
    ck_assert_uint_eq(st_space_npoints(s), 3);
    bool adm = true;
    st_err why = {0};
    char *text = point(s, 1, &adm, &why);
    ck_assert_str_eq(text, "a(BF=3) ; parallel-scan(BS=32, BF=2)");
    free(text);
    ck_assert(!adm);
    ck_assert_str_eq(why.message, "where BS % BF == 0 fails (BS = 32, BF = 3)");
    ck_assert_int_eq(why.loc.col, 56);
    ck_assert(admitted(s, 0) && admitted(s, 2));
    st_space_free(s);
    /* a condition that names no parameter */
    s = space_ok("r(A=[1]) where 1 > 2");
    text = point(s, 0, &adm, &why);
    free(text);
    ck_assert(!adm);
    ck_assert_str_eq(why.message, "where 1 > 2 fails");
    st_space_free(s);
}
END_TEST

START_TEST(several_where) {
    st_space *s = space_ok("r(A=[1..4], B=[1..4]) where A < B, A > 1 where B != 4");
    for (uint64_t i = 0; i < 16; i++) {
        int a = (int)(i / 4) + 1, b = (int)(i % 4) + 1;
        bool adm = false;
        st_err why = {0};
        char *text = point(s, i, &adm, &why);
        free(text);
        ck_assert_msg(adm == (a < b && a > 1 && b != 4), "A = %d, B = %d", a, b);
        /* the first condition that fails is the one named */
        const char *first = !(a < b) ? "where A < B fails" : !(a > 1) ? "where A > 1 fails" : "where B != 4 fails";
        if (!adm) ck_assert_has(why.message, first);
    }
    st_space_free(s);
}
END_TEST

START_TEST(division_by_zero) {
    st_space *s = space_ok("r(D=[0, 2], N=8) where N / D >= 1");
    bool adm = true;
    st_err why = {0};
    free(point(s, 0, &adm, &why));
    ck_assert(!adm);
    ck_assert_str_eq(why.message, "where N / D >= 1: division by zero (N = 8, D = 0)");
    ck_assert(admitted(s, 1));
    st_space_free(s);
    s = space_ok("r(D=[0, 2], N=8) where N % D == 0");
    free(point(s, 0, &adm, &why));
    ck_assert(!adm);
    ck_assert_has(why.message, "modulo by zero");
    ck_assert(admitted(s, 1));
    st_space_free(s);
    /* && stops before the division, as in C */
    s = space_ok("r(D=[0, 2], N=8) where D != 0 && N % D == 0");
    free(point(s, 0, &adm, &why));
    ck_assert(!adm);
    ck_assert_str_eq(why.message, "where D != 0 && N % D == 0 fails (D = 0, N = 8)");
    st_space_free(s);
    s = space_ok("r(D=[0, 2], N=8) where D == 0 || N / D == 4");
    ck_assert(admitted(s, 0) && admitted(s, 1));
    st_space_free(s);
}
END_TEST

START_TEST(overflow) {
    static const char *const conds[] = {
        "X * 2 > 0", "X + X > 0", "-X - X - X < 0", "-M > 0", "M / -1 > 0", "M - 1 < 0", "X * X * X > 0",
    };
    for (size_t i = 0; i < sizeof conds / sizeof *conds; i++) {
        char text[200];
        snprintf(text, sizeof text, "r(X=[4611686018427387904, 1], M=-9223372036854775808) where %s", conds[i]);
        st_space *s = space_ok(text);
        bool adm = true;
        st_err why = {0};
        free(point(s, 0, &adm, &why));
        ck_assert_msg(!adm, "%s", conds[i]);
        ck_assert_has(why.message, "integer overflow");
        ck_assert_has(why.message, conds[i]);
        st_space_free(s);
    }
    /* the remainder by -1 of the smallest number is 0, not a trap */
    st_space *s = space_ok("r(X=[1], M=-9223372036854775808) where M % -1 == 0");
    ck_assert(admitted(s, 0));
    st_space_free(s);
}
END_TEST

START_TEST(syntax_errors) {
    static const struct { const char *text; int col; const char *part; } cases[] = {
        {"r(BS=[32..])", 11, "expected a whole number after `..` but found `]`"},
        {"r(BS=[1,,2])", 9, "expected a value after `,` but found `,`"},
        {"r(BS=[1,2,])", 11, "expected a value after `,` but found `]`"},
        {"r(BS=[1..8 pow1])", 12, "base of at least 2"},
        {"r(BS=[1..8 pow])", 12, "expected `powK`"},
        {"r(BS=[1..8 pow2x])", 12, "expected `powK`"},
        {"r(BS=[1..4 step 0])", 17, "the step must be at least 1"},
        {"r(BS=[1..4 step -2])", 17, "the step must be at least 1"},
        {"r(BS=[1..4 step])", 16, "expected a whole number after `step`"},
        {"r(BS=[1, 2", 6, "`[` is never closed"},
        {"r(BS=[1..4", 6, "`[` is never closed"},
        {"r(BS=[", 6, "`[` is never closed"},
        {"r(BS=[1..4 by 2])", 12, "expected `]`, `step N` or `powK` after the range's end but found `by`"},
        {"r(BS=[1..4 step 2 x])", 19, "expected `]` after the step"},
        {"r(BS=[1..4 pow2 pow3])", 17, "expected `]` after `powK`"},
        {"r(BS=[1..4, 5])", 11, "expected `]`, `step N` or `powK` but found `,`"},
        {"r(BS=[])", 7, "expected a value (a whole number or a name) but found `]`"},
        {"r(BS=[1 2])", 9, "expected `,` or `]` but found `2`"},
        {"r(BS=[1, 2)", 11, "expected `,` or `]` but found `)`"},
        {"r(BS=[8..1])", 6, "the range is empty"},
        {"r(BS=[65..100 pow2])", 6, "no power of 2"},
        {"r(BS=[a..4])", 7, "needs whole numbers"},
        {"r(BS=[1..a])", 10, "expected a whole number after `..`"},
        {"r(BS=[1..99999999999999999999])", 10, "too large"},
        {"r(BS=[1..2000000])", 6, "more than 1000000 values"},
        {"r(BS=[$])", 7, "expected a value"},
        {"r([1,2])", 3, "must be the value of an argument"},
        {"r(BS=1) [1]", 9, "must be the value of an argument"},
        {"", 1, "expected a strategy"},
        {"   where X > 1", 4, "expected a strategy before `where`"},
        {"r(BS=[1..4]) where", 14, "`where` needs a condition"},
        {"r(BS=[1..4]) where   ", 14, "`where` needs a condition"},
        {"r(BS=[1..4]) where BS > 1 where", 27, "`where` needs a condition"},
        {"r(BS=[1..4]) where BS > 1,", 26, "another condition after `,`"},
        {"r(BS=[1..4]) where BS > 1,, BS < 3", 26, "another condition after `,`"},
        {"r(BS=[1..4]) where BS >", 24, "expected a number, a name, `(`, `-` or `!` but found the end"},
        {"r(BS=[1..4]) where (BS > 1", 20, "the `(` is never closed"},
        {"r(BS=[1..4]) where (BS > 1 2)", 28, "expected `)` or an operator but found `2`"},
        {"r(BS=[1..4]) where BS > 1 BS", 27, "expected an operator, `,` or `where` after a condition but found `BS`"},
        {"r(BS=[1..4]) where BS $ 1", 23, "found `$`"},
        {"r(BS=[1..4]) where BS = 1", 23, "found `=`"},
        {"r(BS=[1..4]) where BS > 99999999999999999999", 25, "too large"},
        {"r(M=[global, local]) where M == 1", 28, "`M` takes names (global, …), not numbers"},
        {"r(M=global, N=[1]) where M == 1", 26, "`M` is `global`, not a whole number"},
        {"r(N=[1..2]) where BS.2 > 1", 19, "unknown name `BS.2`"},
    };
    faults f = {0};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) check_error(&f, cases[i].text, cases[i].col, cases[i].part);
    no_faults(&f);
}
END_TEST

START_TEST(nesting_bounded) {
    /* deep parentheses and long chains are errors, not a blown stack */
    st_buf b = {0};
    st_buf_puts(&b, "r(X=[1]) where ");
    for (int i = 0; i < 100000; i++) st_buf_puts(&b, "(");
    st_buf_puts(&b, "X");
    st_err err = space_fails(b.data);
    ck_assert_has(err.message, "nested too deeply");
    st_buf_free(&b);
    st_buf_puts(&b, "r(X=[1]) where X");
    for (int i = 0; i < 100000; i++) st_buf_puts(&b, " + 1");
    err = space_fails(b.data);
    ck_assert_has(err.message, "nested too deeply");
    st_buf_free(&b);
    /* a moderate one is fine */
    st_space *s = space_ok("r(X=[3]) where ((((X + 1) * 2))) == 8 && - - - -X == 3");
    ck_assert(admitted(s, 0));
    st_space_free(s);
}
END_TEST

START_TEST(unknown_name) {
    st_err err = space_fails("r(BS=[1,2], BF=2, M=[a, b], SE=[1], K=x) where BZ > 1");
    ck_assert_int_eq(err.loc.col, 48);
    ck_assert_has(err.message, "unknown name `BZ`");
    /* the ranged names, then the fixed whole-number ones; not M or K */
    ck_assert_has(err.message, "the known names are BS, SE, BF");
    ck_assert_msg(!strstr(err.message, "M,") && !strstr(err.message, ", K"), "%s", err.message);
    err = space_fails("try(fuse) where N > 1");
    ck_assert_int_eq(err.loc.col, 17);
    ck_assert_has(err.message, "no whole-number parameters");
}
END_TEST

START_TEST(no_ranges) {
    st_space *s = space_ok("try(each(scan, parallel-scan(BS=256, BF=2, SE=4)))  where BS % BF == 0, SE < BS");
    ck_assert_uint_eq(st_space_ndims(s), 0);
    ck_assert_uint_eq(st_space_npoints(s), 1);
    check_point(s, 0, "try(each(scan, parallel-scan(BS=256, BF=2, SE=4)))");
    ck_assert(admitted(s, 0));
    st_space_free(s);
    s = space_ok("try(each(scan, parallel-scan(BS=256, BF=2, SE=4))) where BS > 1000");
    ck_assert(!admitted(s, 0));
    st_space_free(s);
    /* without where the text is kept as it is */
    s = space_ok(" a ; b <+ c(N=1)  ");
    check_point(s, 0, " a ; b <+ c(N=1)  ");
    st_space_free(s);
}
END_TEST

START_TEST(where_only_at_top_level) {
    /* `where` inside parentheses or inside a rule's name is not the keyword */
    st_space *s = space_ok("first(where, no-where(X=[1, 2])) ; where-x where X > 1");
    ck_assert_uint_eq(st_space_npoints(s), 2);
    check_point(s, 1, "first(where, no-where(X=2)) ; where-x");
    ck_assert(!admitted(s, 0) && admitted(s, 1));
    st_space_free(s);
    /* `==` is not an argument; `where` may follow a range directly */
    s = space_ok("r(X==1) ; q(Y=[4,5])where Y>4");
    ck_assert_uint_eq(st_space_ndims(s), 1);
    check_dim(s, 0, "Y", "4 5");
    check_point(s, 0, "r(X==1) ; q(Y=4)");
    ck_assert(!admitted(s, 0) && admitted(s, 1));
    st_space_free(s);
    st_err err = space_fails("r(X==1) ; q(Y=[4,5]) where X > 0");
    ck_assert_has(err.message, "unknown name `X`");
}
END_TEST

START_TEST(bad_index) {
    st_space *s = space_ok(paper);
    st_buf b = {0};
    bool adm = true;
    st_err why = {0};
    ck_assert(!st_space_point(s, 25, NULL, &b, &adm, &why));
    ck_assert_int_eq(why.kind, ST_ERR_INTERNAL);
    ck_assert(!st_space_point(s, UINT64_MAX, NULL, &b, &adm, &why));
    st_buf_free(&b);
    st_space_free(s);
}
END_TEST

/* The column of needle's occurrence in text. */
static int col_of(const char *text, const char *needle) {
    const char *at = strstr(text, needle);
    ck_assert_msg(at != NULL, "`%s` not in `%s`", needle, text);
    return (int)(at - text) + 1;
}

START_TEST(column_mapping) {
    st_space *s = space_ok(paper);
    const char *pt = "parallel-scan(BS=512, BF=2, SE=16)";
    check_point(s, 24, pt);
    ck_assert_int_eq(st_space_column(s, 24, 1), 1);
    ck_assert_int_eq(st_space_column(s, 24, col_of(pt, "BS=")), col_of(paper, "BS="));
    /* inside a value: the `[` of its range */
    ck_assert_int_eq(st_space_column(s, 24, col_of(pt, "512")), col_of(paper, "[32"));
    ck_assert_int_eq(st_space_column(s, 24, col_of(pt, "12,")), col_of(paper, "[32"));
    ck_assert_int_eq(st_space_column(s, 24, col_of(pt, "16)")), col_of(paper, "[1.."));
    ck_assert_int_eq(st_space_column(s, 24, col_of(pt, "6)")), col_of(paper, "[1.."));
    /* after it: shifted by the difference */
    ck_assert_int_eq(st_space_column(s, 24, col_of(pt, ", BF")), col_of(paper, ", BF"));
    ck_assert_int_eq(st_space_column(s, 24, col_of(pt, "SE=")), col_of(paper, "SE="));
    ck_assert_int_eq(st_space_column(s, 24, (int)strlen(pt)), (int)strlen(paper));
    /* point 0's values are shorter: the same places */
    const char *p0 = "parallel-scan(BS=32, BF=2, SE=1)";
    ck_assert_int_eq(st_space_column(s, 0, col_of(p0, "BF")), col_of(paper, "BF"));
    ck_assert_int_eq(st_space_column(s, 0, col_of(p0, "1)")), col_of(paper, "[1.."));
    ck_assert_int_eq(st_space_column(s, 0, (int)strlen(p0)), (int)strlen(paper));
    st_space_free(s);
}
END_TEST

START_TEST(points_capped) {
    /* 2^40 points is the most */
    st_space *s = space_ok("r(A=[1..1024], B=[1..1024], C=[1..1024], D=[1..1024])");
    ck_assert_uint_eq(st_space_npoints(s), UINT64_C(1) << 40);
    check_point(s, (UINT64_C(1) << 40) - 1, "r(A=1024, B=1024, C=1024, D=1024)");
    check_point(s, UINT64_C(1) << 30, "r(A=2, B=1, C=1, D=1)");
    st_space_free(s);
    st_err err = space_fails("r(A=[1..1024], B=[1..1024], C=[1..1024], D=[1..1024], E=[1, 2])");
    ck_assert_int_eq(err.loc.col, 57);
    ck_assert_has(err.message, "more than 2^40");
    err = space_fails("r(A=[1..1000000], B=[1..1000000], C=[1..2])");
    ck_assert_int_eq(err.loc.col, 37);
    ck_assert_has(err.message, "more than 2^40");
    /* a dimension of exactly the most values is fine */
    s = space_ok("r(A=[1..1000000])");
    ck_assert_uint_eq(st_space_npoints(s), 1000000);
    st_space_free(s);
}
END_TEST

/* Random small spaces, built with the values and texts they must give. */
typedef struct gen_dim {
    char values[12][24];
    int n;
} gen_dim;

static unsigned next(unsigned *seed) {
    *seed = *seed * 1103515245u + 12345u;
    return (*seed >> 16) & 0x7fff;
}

/* A random range into text, its values into d. */
static void random_range(unsigned *seed, st_buf *text, gen_dim *d) {
    d->n = 0;
    switch (next(seed) % 4) {
    case 0: { /* a list of integers */
        int n = 1 + (int)(next(seed) % 4);
        st_buf_puts(text, "[");
        for (int k = 0; k < n; k++) {
            int v = (int)(next(seed) % 200) - 100;
            snprintf(d->values[d->n++], 24, "%d", v);
            st_buf_printf(text, "%s%s%d", k ? "," : "", next(seed) % 2 ? " " : "", v);
        }
        st_buf_puts(text, "]");
        break;
    }
    case 1: { /* a list of names */
        static const char *const names[] = {"global", "local", "private", "x1", "_y"};
        int n = 1 + (int)(next(seed) % 3);
        st_buf_puts(text, "[ ");
        for (int k = 0; k < n; k++) {
            const char *v = names[next(seed) % 5];
            snprintf(d->values[d->n++], 24, "%s", v);
            st_buf_printf(text, "%s%s", k ? " , " : "", v);
        }
        st_buf_puts(text, " ]");
        break;
    }
    case 2: { /* a..b step k */
        int a = (int)(next(seed) % 40) - 20, len = (int)(next(seed) % 10), k = 1 + (int)(next(seed) % 4);
        bool show = k > 1 || next(seed) % 2;
        for (int v = a; v <= a + len && d->n < 12; v += k) snprintf(d->values[d->n++], 24, "%d", v);
        /* a..b with at most 12 values */
        int b = a + len < a + 11 * k ? a + len : a + 11 * k;
        if (show) st_buf_printf(text, "[%d..%d step %d]", a, b, k);
        else st_buf_printf(text, "[%d..%d]", a, b);
        break;
    }
    default: { /* a..b powK */
        int base = 2 + (int)(next(seed) % 3), a = (int)(next(seed) % 10) - 3, b = a + 1 + (int)(next(seed) % 200);
        long long pw = 1;
        while (pw < a) pw *= base;
        if (pw > b) b = (int)pw; /* at least one power */
        for (; pw <= b; pw *= base) snprintf(d->values[d->n++], 24, "%lld", pw);
        st_buf_printf(text, "[%d..%d pow%d]", a, b, base);
        break;
    }
    }
}

START_TEST(random_spaces) {
    static const char *const names[] = {"BS", "SE", "BF"};
    unsigned seed = 12345;
    faults f = {0};
    for (int round = 0; round < 300; round++) {
        gen_dim dims[4];
        char dim_names[4][24];
        int ndims = 1 + (int)(next(&seed) % 4), seen[3] = {0};
        static const char *const glue[] = {"try(each(scan, r", "; q", "<+ s", "; t"};
        st_buf text = {0};
        uint64_t npoints = 1;
        for (int d = 0; d < ndims; d++) {
            int nm = (int)(next(&seed) % 3);
            if (seen[nm]++) snprintf(dim_names[d], 24, "%s.%d", names[nm], seen[nm]);
            else snprintf(dim_names[d], 24, "%s", names[nm]);
            st_buf_printf(&text, "%s(K=%d, %s = ", glue[d], d, names[nm]);
            random_range(&seed, &text, &dims[d]);
            st_buf_puts(&text, ")");
            npoints *= (uint64_t)dims[d].n;
        }
        st_buf_puts(&text, "))");
        /* a condition on K (fixed) and the first dimension when it is numeric */
        bool numeric = dims[0].values[0][0] == '-' || (dims[0].values[0][0] >= '0' && dims[0].values[0][0] <= '9');
        if (numeric) st_buf_printf(&text, "  where %s %% 2 == K", dim_names[0]);
        st_err err = {0};
        st_space *s = st_space_parse("space", text.data, &err);
        if (!s) {
            fault(&f, "%s: %s", text.data, err.message);
            st_buf_free(&text);
            continue;
        }
        if (st_space_npoints(s) != npoints || st_space_ndims(s) != (uint32_t)ndims)
            fault(&f, "%s: %" PRIu64 " points in %u dims", text.data, st_space_npoints(s), st_space_ndims(s));
        for (int d = 0; d < ndims && d < (int)st_space_ndims(s); d++)
            if (strcmp(st_space_dim_at(s, (uint32_t)d)->name, dim_names[d]))
                fault(&f, "%s: dimension %d is %s", text.data, d, st_space_dim_at(s, (uint32_t)d)->name);
        for (uint64_t i = 0; i < st_space_npoints(s) && i < npoints; i++) {
            uint32_t which[4];
            st_buf pt = {0};
            bool adm = false;
            st_err why = {0};
            if (!st_space_point(s, i, which, &pt, &adm, &why)) {
                fault(&f, "%s: point %" PRIu64 ": %s", text.data, i, why.message);
                continue;
            }
            /* the expected text, built from the chosen values */
            st_buf want = {0};
            uint64_t rest = i;
            int chosen[4];
            for (int d = ndims - 1; d >= 0; d--) {
                chosen[d] = (int)(rest % (uint64_t)dims[d].n);
                rest /= (uint64_t)dims[d].n;
            }
            for (int d = 0; d < ndims; d++) {
                const char *nm = dim_names[d];
                int base_len = (int)(strchr(nm, '.') ? strchr(nm, '.') - nm : (long)strlen(nm));
                st_buf_printf(&want, "%s(K=%d, %.*s = %s)", glue[d], d, base_len, nm, dims[d].values[chosen[d]]);
                if ((int)which[d] != chosen[d]) fault(&f, "%s: point %" PRIu64 " dim %d: value %u", text.data, i, d, which[d]);
            }
            st_buf_puts(&want, "))");
            if (strcmp(pt.data, want.data) || strchr(pt.data, '['))
                fault(&f, "%s: point %" PRIu64 " is `%s`, expected `%s`", text.data, i, pt.data, want.data);
            for (int d = 0; d < ndims; d++)
                if (!strstr(pt.data, dims[d].values[chosen[d]]))
                    fault(&f, "%s: point %" PRIu64 " lacks %s", text.data, i, dims[d].values[chosen[d]]);
            bool want_adm = true;
            if (numeric) want_adm = atoll(dims[0].values[chosen[0]]) % 2 == 0;
            if (adm != want_adm) fault(&f, "%s: point %" PRIu64 " admitted %d", text.data, i, adm);
            /* every column outside a value maps to the same character */
            for (size_t c = 0; c < pt.len; c++) {
                int sc = st_space_column(s, i, (int)c + 1);
                if (sc < 1 || (size_t)sc > text.len) {
                    fault(&f, "%s: point %" PRIu64 " column %zu maps to %d", text.data, i, c + 1, sc);
                    break;
                }
                char sch = text.data[sc - 1];
                if (sch != '[' && sch != pt.data[c])
                    fault(&f, "%s: point %" PRIu64 " column %zu (`%c`) maps to `%c`", text.data, i, c + 1, pt.data[c], sch);
            }
            st_buf_free(&want);
            st_buf_free(&pt);
        }
        st_space_free(s);
        st_buf_free(&text);
    }
    no_faults(&f);
}
END_TEST

int main(void) {
    Suite *s = suite_create("space");
    TCase *t = tcase_create("space");
    tcase_add_test(t, paper_space);
    tcase_add_test(t, lists_with_names);
    tcase_add_test(t, step_ranges);
    tcase_add_test(t, pow_ranges);
    tcase_add_test(t, negative_values);
    tcase_add_test(t, repeated_names);
    tcase_add_test(t, where_precedence);
    tcase_add_test(t, where_fixed_and_why);
    tcase_add_test(t, several_where);
    tcase_add_test(t, division_by_zero);
    tcase_add_test(t, overflow);
    tcase_add_test(t, syntax_errors);
    tcase_add_test(t, nesting_bounded);
    tcase_add_test(t, unknown_name);
    tcase_add_test(t, no_ranges);
    tcase_add_test(t, where_only_at_top_level);
    tcase_add_test(t, bad_index);
    tcase_add_test(t, column_mapping);
    tcase_add_test(t, points_capped);
    tcase_add_test(t, random_spaces);
    suite_add_tcase(s, t);
    return run_suite(s);
}
