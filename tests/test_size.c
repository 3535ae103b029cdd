/* tests/test_size.c — symbolic sizes (ir/size.c).
 *
 * Sizes are hash-consed polynomials in a normal form, so every equality below
 * is a pointer comparison: two sizes that mean the same must be the same
 * object. Expected values are worked out by hand from the definitions (floor
 * division, floor modulo, exact quotients under `where` facts). */
#include "harness.h"

#include <stdio.h>

static st_ctx *cx;

static void setup(void) {
    cx = st_ctx_new();
    ck_assert_ptr_nonnull(cx);
}

static void teardown(void) { st_ctx_free(cx); }

/* ---- building sizes; every helper fails the test on an unexpected error ---- */

static const char *nm(const char *s) { return st_intern_cstr(cx, s); }
static const st_size *C(int64_t v) { return st_size_const(cx, v); }
/* a variable with no fact */
static const st_size *V(const char *name) { return st_size_var(cx, NULL, nm(name)); }

/* facts saying name % d == 0 */
static const st_facts *fact(const char *name, int64_t d) {
    const st_facts *f = st_facts_add(cx, NULL, nm(name), d);
    ck_assert_ptr_nonnull(f);
    return f;
}

/* a variable under the fact d | name */
static const st_size *VF(const char *name, int64_t d) {
    return st_size_var(cx, fact(name, d), nm(name));
}

/* the message must mention `part` */
#define ck_has(msg, part) \
    ck_assert_msg(strstr((msg), (part)) != NULL, "expected \"%s\" in \"%s\"", (part), (msg))

typedef const st_size *(*size_op)(st_ctx *, const st_size *, const st_size *, st_err *);

static const st_size *ok_op(size_op op, const st_size *a, const st_size *b) {
    st_err err = {0};
    const st_size *r = op(cx, a, b, &err);
    ck_assert_msg(r != NULL, "size operation failed: %s", err.message);
    return r;
}

static const st_size *add(const st_size *a, const st_size *b) { return ok_op(st_size_add, a, b); }
static const st_size *sub(const st_size *a, const st_size *b) { return ok_op(st_size_sub, a, b); }
static const st_size *mul(const st_size *a, const st_size *b) { return ok_op(st_size_mul, a, b); }
static const st_size *dv(const st_size *a, const st_size *b) { return ok_op(st_size_div, a, b); }
static const st_size *md(const st_size *a, const st_size *b) { return ok_op(st_size_mod, a, b); }
static const st_size *pw(const st_size *a, const st_size *b) { return ok_op(st_size_pow, a, b); }
static const st_size *lg(const st_size *a, const st_size *b) { return ok_op(st_size_log, a, b); }

/* op(a, b) must fail with a message containing `part` */
static void op_fails(size_op op, const st_size *a, const st_size *b, const char *part) {
    st_err err = {0};
    const st_size *r = op(cx, a, b, &err);
    ck_assert_msg(r == NULL, "expected the size operation to fail with \"%s\"", part);
    ck_has(err.message, part);
}

static int64_t const_of(const st_size *s) {
    int64_t v = 0;
    ck_assert_msg(st_size_is_const(s, &v), "expected a constant size");
    return v;
}

/* The printed form, copied out so the caller need not free anything. */
static const char *show(const st_size *s) {
    static char text[8][256];
    static int slot;
    st_buf b = {0};
    st_size_print(s, &b);
    ck_assert(!b.failed && b.data);
    char *out = text[slot++ % 8];
    snprintf(out, sizeof text[0], "%s", b.data);
    st_buf_free(&b);
    return out;
}

#define ck_print(s, want) ck_assert_str_eq(show(s), (want))

/* ---- evaluation ---- */

static bool eval2(const st_size *s, const char *n1, int64_t v1, const char *n2, int64_t v2,
                  int64_t *out, st_err *err) {
    st_binding env[2] = {{nm(n1), v1}, {n2 ? nm(n2) : NULL, v2}};
    return st_size_eval(s, env, n2 ? 2 : 1, out, err);
}

static int64_t size_at(const st_size *s, const char *name, int64_t value) {
    st_err err = {0};
    int64_t v = 0;
    ck_assert_msg(eval2(s, name, value, NULL, 0, &v, &err), "eval failed: %s", err.message);
    return v;
}

static void size_eval_fails(const st_size *s, const char *name, int64_t value, const char *part) {
    st_err err = {0};
    int64_t v = 0;
    ck_assert_msg(!eval2(s, name, value, NULL, 0, &v, &err), "expected eval to fail, got %lld",
                  (long long)v);
    ck_has(err.message, part);
}

/* ------------------------------------------------------------------------ */
/* Normal forms                                                             */
/* ------------------------------------------------------------------------ */

START_TEST(add_commutes) {
    const st_size *n = V("N"), *m = V("M");
    ck_assert_ptr_eq(add(n, m), add(m, n));
    ck_assert_ptr_ne(add(n, m), add(n, n));
    /* (N + M) + 1 == N + (M + 1) */
    ck_assert_ptr_eq(add(add(n, m), C(1)), add(n, add(m, C(1))));
    /* N + N == 2*N */
    ck_assert_ptr_eq(add(n, n), mul(C(2), n));
}
END_TEST

START_TEST(product_expands) {
    const st_size *n = V("N"), *m = V("M");
    /* (N+1)(N-1) = N*N - 1 */
    ck_assert_ptr_eq(mul(add(n, C(1)), sub(n, C(1))), sub(mul(n, n), C(1)));
    /* (N+M)^2 = N*N + 2*N*M + M*M, in any order of construction */
    const st_size *sq = mul(add(n, m), add(m, n));
    ck_assert_ptr_eq(sq, add(add(mul(m, m), mul(C(2), mul(m, n))), mul(n, n)));
    ck_assert_ptr_eq(mul(n, m), mul(m, n));
}
END_TEST

START_TEST(cancellation_and_constants) {
    const st_size *n = V("N");
    ck_assert_ptr_eq(dv(mul(n, C(2)), C(2)), n);
    ck_assert_ptr_eq(add(C(3), C(4)), C(7));
    ck_assert_ptr_eq(mul(C(6), C(7)), C(42));
    ck_assert_ptr_eq(sub(C(3), C(10)), C(-7));
    ck_assert_ptr_eq(mul(C(0), n), C(0));
    ck_assert_ptr_eq(sub(n, n), C(0));
    ck_assert_int_eq(const_of(sub(n, n)), 0);
    ck_assert_ptr_eq(add(sub(n, C(5)), C(5)), n);
    ck_assert_ptr_eq(mul(C(1), n), n);
    ck_assert(!st_size_is_const(n, NULL));
    ck_assert_int_eq(const_of(C(-12)), -12);
    /* equal sizes hash equally (they are one object), different ones are different objects */
    ck_assert_uint_eq(st_size_hash(add(n, C(1))), st_size_hash(add(C(1), n)));
    ck_assert_ptr_ne(add(n, C(1)), add(n, C(2)));
}
END_TEST

/* ------------------------------------------------------------------------ */
/* Facts                                                                    */
/* ------------------------------------------------------------------------ */

START_TEST(fact_makes_div_mul_exact) {
    const st_size *n = VF("N", 256);
    ck_assert_ptr_eq(mul(dv(n, C(256)), C(256)), n);
    ck_assert_ptr_eq(md(n, C(256)), C(0));
    ck_assert_ptr_eq(md(n, C(128)), C(0));
    /* 512 is not known to divide N: N % 512 stays symbolic */
    ck_assert(!st_size_is_const(md(n, C(512)), NULL));
}
END_TEST

START_TEST(no_fact_no_simplification) {
    const st_size *n = V("N");
    const st_size *back = mul(dv(n, C(256)), C(256));
    ck_assert_ptr_ne(back, n);
    /* and it is really floor: N = 300 gives 256 */
    ck_assert_int_eq(size_at(back, "N", 300), 256);
    ck_assert(!st_size_is_const(md(n, C(256)), NULL));
    /* the fact-free N and the N under a fact are different sizes */
    ck_assert_ptr_ne(n, VF("N", 256));
}
END_TEST

START_TEST(fact_768_quotients) {
    const st_size *n = VF("N", 768);
    const st_size *q = dv(n, C(256)); /* 3·⟨N/768⟩ */
    ck_assert_ptr_eq(q, mul(dv(n, C(768)), C(3)));
    ck_assert_ptr_eq(mul(q, C(256)), n);
    ck_assert_ptr_eq(md(n, C(3)), C(0));
    ck_assert_int_eq(size_at(q, "N", 1536), 6);
    ck_assert_int_eq(size_at(dv(n, C(768)), "N", 1536), 2);
    /* N/512 does not divide out: 768 | N does not give 512 | N */
    const st_size *h = dv(n, C(512));
    ck_assert_int_eq(size_at(h, "N", 768), 1);
    ck_assert_int_eq(size_at(h, "N", 2304), 4);
}
END_TEST

START_TEST(facts_merge_by_lcm) {
    const char *n = nm("N"), *m = nm("M");
    const st_facts *f = st_facts_add(cx, NULL, n, 256);
    ck_assert_ptr_nonnull(f);
    f = st_facts_add(cx, f, n, 3);
    ck_assert_ptr_nonnull(f);
    ck_assert_int_eq(st_facts_divisor(f, n), 768);
    ck_assert_uint_eq(f->n, 1);
    /* lcm(768, 384) = 768: nothing new */
    ck_assert_int_eq(st_facts_divisor(st_facts_add(cx, f, n, 384), n), 768);
    /* lcm(768, 512) = 1536 */
    ck_assert_int_eq(st_facts_divisor(st_facts_add(cx, f, n, 512), n), 1536);
    /* another name is a separate fact; unknown names divide by 1 */
    const st_facts *g = st_facts_add(cx, f, m, 4);
    ck_assert_int_eq(st_facts_divisor(g, m), 4);
    ck_assert_int_eq(st_facts_divisor(g, n), 768);
    ck_assert_int_eq(st_facts_divisor(g, nm("K")), 1);
    ck_assert_int_eq(st_facts_divisor(NULL, n), 1);
    /* adding a fact leaves the old list alone */
    ck_assert_int_eq(st_facts_divisor(f, m), 1);
    /* the merged fact gives the same variable as stating 768 at once */
    ck_assert_ptr_eq(st_size_var(cx, f, n), VF("N", 768));
    /* an lcm past 64 bits is refused, not wrapped */
    const st_facts *big = st_facts_add(cx, NULL, n, INT64_C(1) << 62);
    ck_assert_ptr_nonnull(big);
    ck_assert_ptr_null(st_facts_add(cx, big, n, 3));
}
END_TEST

/* ------------------------------------------------------------------------ */
/* Division and modulo                                                      */
/* ------------------------------------------------------------------------ */

START_TEST(const_floor_division) {
    ck_assert_int_eq(const_of(dv(C(7), C(2))), 3);
    ck_assert_int_eq(const_of(dv(C(-7), C(2))), -4);
    ck_assert_int_eq(const_of(dv(C(7), C(-2))), -4);
    ck_assert_int_eq(const_of(dv(C(-7), C(-2))), 3);
    ck_assert_int_eq(const_of(dv(C(-8), C(2))), -4);
    ck_assert_int_eq(const_of(dv(C(0), C(5))), 0);
    ck_assert_int_eq(const_of(dv(C(INT64_MAX), C(-1))), -INT64_MAX);
}
END_TEST

START_TEST(const_floor_modulo) {
    ck_assert_int_eq(const_of(md(C(7), C(2))), 1);
    ck_assert_int_eq(const_of(md(C(-7), C(2))), 1);
    ck_assert_int_eq(const_of(md(C(7), C(-2))), -1);
    ck_assert_int_eq(const_of(md(C(-7), C(-2))), -1);
    ck_assert_int_eq(const_of(md(C(-8), C(4))), 0);
    ck_assert_int_eq(const_of(md(C(5), C(-1))), 0);
}
END_TEST

START_TEST(symbolic_division) {
    const st_size *n = V("N");
    /* (N+256)/256 = N/256 + 1 */
    ck_assert_ptr_eq(dv(add(n, C(256)), C(256)), add(dv(n, C(256)), C(1)));
    ck_assert_ptr_eq(md(mul(C(2), n), C(2)), C(0));
    ck_assert_ptr_eq(md(n, C(1)), C(0));
    ck_assert_ptr_eq(dv(n, C(1)), n);
    /* the content gcd divides out: floor((4N+2)/6) = floor((2N+1)/3) */
    const st_size *a = dv(add(mul(C(4), n), C(2)), C(6));
    ck_assert_ptr_eq(a, dv(add(mul(C(2), n), C(1)), C(3)));
    ck_assert_int_eq(size_at(a, "N", 4), 3);  /* 18/6 */
    ck_assert_int_eq(size_at(a, "N", 5), 3);  /* 22/6 */
    ck_assert_int_eq(size_at(a, "N", -1), -1); /* -2/6 floors to -1 */
    /* (2N+2) % 4 = 2·((N+1) % 2) */
    const st_size *r = md(add(mul(C(2), n), C(2)), C(4));
    ck_assert_ptr_eq(r, mul(C(2), md(add(n, C(1)), C(2))));
    ck_assert_int_eq(size_at(r, "N", 0), 2);
    ck_assert_int_eq(size_at(r, "N", 1), 0);
    ck_assert_int_eq(size_at(r, "N", -2), 2); /* -2 % 4 = 2 under floor semantics */
    /* dividing by a symbolic factor that divides every term */
    const st_size *m = V("M");
    ck_assert_ptr_eq(dv(add(mul(n, m), mul(C(3), m)), m), add(n, C(3)));
    ck_assert_ptr_eq(md(mul(n, m), m), C(0));
    ck_assert_ptr_eq(dv(C(0), m), C(0));
}
END_TEST

/* A constant term of at least the divisor comes out as well:
 * floor((N + 300)/256) = floor((N + 44)/256) + 1 for every N, so the two must
 * be one size ("equal exactly when their pointers are", ir.h). */
START_TEST(div_reduces_constant_term) {
    const st_size *n = V("N");
    const st_size *a = dv(add(n, C(300)), C(256)), *b = add(dv(add(n, C(44)), C(256)), C(1));
    ck_assert_int_eq(size_at(a, "N", 1000), size_at(b, "N", 1000)); /* both 5 */
    ck_assert_ptr_eq(a, b);
    ck_assert_ptr_eq(md(add(n, C(300)), C(256)), md(add(n, C(44)), C(256)));
}
END_TEST

START_TEST(negative_divisor_symbolic) {
    const st_size *n = V("N");
    /* floor(N / -2) for N = 3, -3, 4 */
    const st_size *q = dv(n, C(-2));
    ck_assert_int_eq(size_at(q, "N", 3), -2);
    ck_assert_int_eq(size_at(q, "N", -3), 1);
    ck_assert_int_eq(size_at(q, "N", 4), -2);
    /* (2N + 2) % -4: floor modulo takes the divisor's sign */
    const st_size *r = md(add(mul(C(2), n), C(2)), C(-4));
    ck_assert_int_eq(size_at(r, "N", 0), -2);
    ck_assert_int_eq(size_at(r, "N", 1), 0);
}
END_TEST

START_TEST(division_by_zero) {
    const st_size *n = V("N");
    op_fails(st_size_div, n, C(0), "zero");
    op_fails(st_size_mod, n, C(0), "zero");
    op_fails(st_size_div, C(5), C(0), "zero");
    op_fails(st_size_div, C(INT64_MIN + 1), C(0), "zero");
}
END_TEST

/* ------------------------------------------------------------------------ */
/* Divisibility, powers, logarithms                                         */
/* ------------------------------------------------------------------------ */

START_TEST(divides) {
    const st_size *n = V("N");
    ck_assert(st_size_divides(C(256), mul(C(512), n)));
    ck_assert(st_size_divides(C(256), add(mul(C(512), n), C(768))));
    ck_assert(!st_size_divides(C(256), add(mul(C(512), n), C(1))));
    ck_assert(!st_size_divides(C(256), n));
    ck_assert(st_size_divides(C(256), VF("N", 256)));
    ck_assert(st_size_divides(C(128), VF("N", 256)));
    ck_assert(!st_size_divides(C(512), VF("N", 768)));
    ck_assert(st_size_divides(n, mul(n, V("M"))));
    ck_assert(!st_size_divides(n, add(n, C(1))));
    ck_assert(st_size_divides(mul(C(2), n), add(mul(C(4), mul(n, n)), mul(C(6), n))));
    ck_assert(st_size_divides(C(1), n));
    ck_assert(st_size_divides(C(7), C(0)));
}
END_TEST

/* A polynomial of several terms divides a product it is a factor of, by
 * exact long division: split(B + 1) of a [(B + 1)*(B + 1)] array (what a
 * 2-D scatter flattens) was refused as "not a multiple of B + 1". */
START_TEST(divides_by_a_polynomial) {
    const st_size *n = V("N"), *m = V("M"), *b1 = add(V("B"), C(1));
    const st_size *sq = mul(b1, b1);
    ck_assert(st_size_divides(b1, sq));
    ck_assert_ptr_eq(dv(sq, b1), b1);
    ck_assert_ptr_eq(md(sq, b1), C(0));
    const st_size *n1 = add(n, C(1)), *n2 = add(n, C(2));
    const st_size *p = mul(n1, n2); /* N² + 3N + 2 */
    ck_assert(st_size_divides(n2, p) && st_size_divides(n1, p));
    ck_assert_ptr_eq(dv(p, n2), n1);
    ck_assert_ptr_eq(dv(p, n1), n2);
    ck_assert_ptr_eq(md(p, n2), C(0));
    ck_assert_ptr_eq(dv(n2, n2), C(1));
    /* several variables, negative terms, a constant factor, a cube */
    const st_size *nm1 = sub(n, m), *q = add(mul(C(3), n), m);
    ck_assert_ptr_eq(dv(mul(C(6), mul(nm1, q)), nm1), mul(C(6), q));
    ck_assert_ptr_eq(dv(mul(sq, b1), sq), b1);
    ck_assert_ptr_eq(dv(mul(mul(n1, m), n2), mul(m, n2)), n1);
    /* what does not divide stays a quotient, and is never called a multiple */
    ck_assert(!st_size_divides(n2, add(p, C(1))));
    ck_assert(!st_size_divides(n1, mul(n, n)));
    ck_assert(!st_size_divides(add(mul(C(2), n), C(2)), add(mul(n, n), n))); /* N(N+1) / 2(N+1) = N/2 */
    ck_assert(!st_size_divides(n1, m));
    const st_size *left = dv(add(p, C(1)), n2);
    ck_assert_int_eq(size_at(left, "N", 5), 43 / 7);
    ck_assert_ptr_ne(md(add(p, C(1)), n2), C(0));
    ck_assert_int_eq(size_at(md(add(p, C(1)), n2), "N", 5), 43 % 7);
}
END_TEST

/* a padded length: c·⌊(a + c - 1)/c⌋ is at least a, for a constant c */
START_TEST(rounds_up) {
    const st_size *n = V("N");
    const st_size *up256 = mul(C(256), dv(add(n, C(255)), C(256)));
    ck_assert(st_size_rounds_up(cx, n, up256));
    ck_assert(st_size_rounds_up(cx, n, mul(C(7), dv(add(n, C(6)), C(7)))));
    ck_assert(st_size_rounds_up(cx, add(n, C(1)), mul(C(3), dv(add(n, C(3)), C(3)))));
    ck_assert(!st_size_rounds_up(cx, n, mul(C(256), dv(add(n, C(254)), C(256)))));
    ck_assert(!st_size_rounds_up(cx, n, mul(C(128), dv(add(n, C(255)), C(256)))));
    ck_assert(!st_size_rounds_up(cx, n, dv(add(n, C(255)), C(256))));
    ck_assert(!st_size_rounds_up(cx, n, n));
}
END_TEST

START_TEST(power_of) {
    const st_size *e = NULL;
    st_err err = {0};
    ck_assert(st_size_is_power_of(cx, C(1024), 2, &e, &err));
    ck_assert_ptr_eq(e, C(10));
    ck_assert(st_size_is_power_of(cx, C(1), 2, &e, &err));
    ck_assert_ptr_eq(e, C(0));
    ck_assert(st_size_is_power_of(cx, C(81), 3, &e, &err));
    ck_assert_ptr_eq(e, C(4));
    ck_assert(!st_size_is_power_of(cx, C(12), 2, &e, &err));
    ck_assert(!st_size_is_power_of(cx, C(0), 2, &e, &err));
    ck_assert(!st_size_is_power_of(cx, C(-8), 2, &e, &err));
    ck_assert(!st_size_is_power_of(cx, C(8), 1, &e, &err));
    const st_size *k = V("K");
    const st_size *p = pw(C(2), k);
    ck_assert(st_size_is_power_of(cx, mul(p, C(4)), 2, &e, &err));
    ck_assert_ptr_eq(e, add(k, C(2)));
    ck_assert(st_size_is_power_of(cx, p, 2, &e, &err));
    ck_assert_ptr_eq(e, k);
    ck_assert(!st_size_is_power_of(cx, mul(p, C(3)), 2, &e, &err));
    ck_assert(!st_size_is_power_of(cx, p, 4, &e, &err));
    ck_assert(!st_size_is_power_of(cx, V("N"), 2, &e, &err));
}
END_TEST

START_TEST(pow_log_fold) {
    ck_assert_ptr_eq(pw(C(2), C(10)), C(1024));
    ck_assert_ptr_eq(pw(C(3), C(0)), C(1));
    ck_assert_ptr_eq(pw(C(0), C(5)), C(0));
    ck_assert_ptr_eq(pw(C(1), C(1000000)), C(1));
    ck_assert_ptr_eq(pw(C(-2), C(3)), C(-8));
    ck_assert_ptr_eq(pw(C(2), C(62)), C(INT64_C(1) << 62));
    ck_assert_ptr_eq(lg(C(2), C(1024)), C(10));
    ck_assert_ptr_eq(lg(C(2), C(1000)), C(9)); /* floor */
    ck_assert_ptr_eq(lg(C(10), C(1)), C(0));
    ck_assert_ptr_eq(lg(C(3), C(80)), C(3));
    const st_size *k = V("K"), *n = V("N");
    ck_assert_ptr_eq(lg(C(2), pw(C(2), k)), k);
    ck_assert_ptr_eq(lg(C(2), mul(C(8), pw(C(2), k))), add(k, C(3)));
    /* a small constant exponent expands */
    ck_assert_ptr_eq(pw(n, C(2)), mul(n, n));
    ck_assert_ptr_eq(pw(add(n, C(1)), C(2)), add(add(mul(n, n), mul(C(2), n)), C(1)));
}
END_TEST

START_TEST(pow_minus_one) {
    /* (-1)^odd = -1; the constant folding must agree with evaluation */
    ck_assert_int_eq(const_of(pw(C(-1), C(3))), -1);
    ck_assert_int_eq(const_of(pw(C(-1), C(4))), 1);
    ck_assert_int_eq(size_at(pw(C(-1), V("K")), "K", 3), -1);
}
END_TEST

START_TEST(pow_symbolic) {
    const st_size *k = V("K");
    const st_size *p = pw(C(2), k);
    ck_assert(!st_size_is_const(p, NULL));
    ck_assert_ptr_eq(p, pw(C(2), k));
    ck_assert_ptr_ne(p, pw(C(3), k));
    ck_assert_ptr_eq(pw(C(1), k), C(1));
    /* pow(2, K+1) is its own atom, not 2*pow(2, K) */
    ck_assert_ptr_ne(pw(C(2), add(k, C(1))), mul(C(2), p));
}
END_TEST

/* Evaluating a power whose exponent is a variable */
START_TEST(pow_eval) {
    const st_size *k = V("K");
    ck_assert_int_eq(size_at(pw(C(2), k), "K", 5), 32);
    ck_assert_int_eq(size_at(pw(C(2), k), "K", 0), 1);
    ck_assert_int_eq(size_at(pw(C(3), k), "K", 4), 81);
    ck_assert_int_eq(size_at(pw(C(0), k), "K", 3), 0);
    ck_assert_int_eq(size_at(pw(C(2), add(k, C(1))), "K", 4), 32);
    ck_assert_int_eq(size_at(mul(C(4), pw(C(2), k)), "K", 3), 32);
    size_eval_fails(pw(C(2), k), "K", 64, "overflow");
    size_eval_fails(pw(C(2), k), "K", -1, "negative");
}
END_TEST

START_TEST(log_symbolic) {
    const st_size *l = lg(C(2), V("N"));
    ck_assert(!st_size_is_const(l, NULL));
    ck_assert_ptr_ne(l, lg(C(3), V("N")));
    ck_assert_int_eq(size_at(l, "N", 1000), 9);
    ck_assert_int_eq(size_at(l, "N", 1024), 10);
    ck_assert_int_eq(size_at(l, "N", 1), 0);
    size_eval_fails(l, "N", 0, "not positive");
}
END_TEST

START_TEST(pow_log_errors) {
    const st_size *n = V("N");
    op_fails(st_size_pow, C(2), C(-1), "negative");
    op_fails(st_size_log, C(1), C(8), "base");
    op_fails(st_size_log, n, C(8), "base");
    op_fails(st_size_log, C(2), C(0), "not positive");
    op_fails(st_size_log, C(2), C(-4), "not positive");
    op_fails(st_size_pow, C(2), C(63), "overflow");
    op_fails(st_size_pow, C(10), C(19), "overflow");
}
END_TEST

/* (-2)^63 is INT64_MIN: not a size either, and it must be said why */
/* INT64_MIN is a size like any other (its magnitude prints and parses);
 * one step further overflows */
START_TEST(pow_to_int64_min) {
    ck_assert_int_eq(const_of(pw(C(-2), C(63))), INT64_MIN);
    ck_print(pw(C(-2), C(63)), "-9223372036854775808");
    op_fails(st_size_pow, C(2), C(63), "overflow");
    op_fails(st_size_pow, C(-2), C(64), "overflow");
}
END_TEST

/* ------------------------------------------------------------------------ */
/* Evaluation and substitution                                              */
/* ------------------------------------------------------------------------ */

START_TEST(eval_bindings) {
    const st_size *n = V("N"), *m = V("M");
    const st_size *s = add(mul(C(3), mul(n, m)), sub(m, C(7))); /* 3NM + M - 7 */
    int64_t v = 0;
    st_err err = {0};
    ck_assert_msg(eval2(s, "N", 4, "M", 5, &v, &err), "%s", err.message);
    ck_assert_int_eq(v, 58);
    ck_assert_int_eq(size_at(dv(n, C(256)), "N", 1000), 3);
    ck_assert_int_eq(size_at(dv(n, C(256)), "N", -1), -1);
    ck_assert_int_eq(size_at(md(n, C(256)), "N", -1), 255);
    ck_assert_int_eq(size_at(C(42), "N", 0), 42);
    /* a binding's name is compared as an interned pointer: same text, same name */
    st_binding env[1] = {{st_intern(cx, "Nx", 1), 9}};
    ck_assert(st_size_eval(n, env, 1, &v, &err));
    ck_assert_int_eq(v, 9);
}
END_TEST

START_TEST(eval_exact_quotient) {
    const st_size *q = dv(VF("N", 256), C(256));
    ck_assert_int_eq(size_at(q, "N", 1024), 4);
    ck_assert_int_eq(size_at(q, "N", 0), 0);
    ck_assert_int_eq(size_at(VF("N", 256), "N", 768), 768);
    size_eval_fails(q, "N", 1000, "not a multiple of 256");
    size_eval_fails(VF("N", 256), "N", 100, "N = 100");
}
END_TEST

START_TEST(eval_errors) {
    const st_size *n = V("N"), *m = V("M");
    size_eval_fails(add(n, m), "N", 1, "`M` has no value");
    size_eval_fails(dv(m, n), "N", 0, "`M`");
    int64_t v;
    st_err err = {0};
    ck_assert(!eval2(dv(m, n), "N", 0, "M", 5, &v, &err));
    ck_has(err.message, "divided by zero");
    memset(&err, 0, sizeof err);
    ck_assert(!eval2(md(m, n), "N", 0, "M", 5, &v, &err));
    ck_has(err.message, "zero");
    /* floor semantics at run time too */
    ck_assert(eval2(dv(m, n), "N", -2, "M", 5, &v, &err));
    ck_assert_int_eq(v, -3);
    ck_assert(eval2(md(m, n), "N", -2, "M", 5, &v, &err));
    ck_assert_int_eq(v, -1);
}
END_TEST

/* INT64_MIN / -1 is reported as an overflow, without undefined behaviour
 * on the way (this suite runs under UBSan too) */
START_TEST(eval_min_div_minus_one) {
    const st_size *n = V("N"), *m = V("M");
    int64_t v;
    st_err err = {0};
    ck_assert(!eval2(dv(m, n), "N", -1, "M", INT64_MIN, &v, &err));
    ck_has(err.message, "overflow");
}
END_TEST

/* INT64_MIN % -1 is 0, as st_size_mod folds it for constants; evaluation
 * must agree rather than report an overflow that does not happen. */
START_TEST(eval_min_mod_minus_one) {
    const st_size *n = V("N"), *m = V("M");
    int64_t v = 1;
    st_err err = {0};
    ck_assert_int_eq(const_of(md(C(-INT64_MAX), C(-1))), 0);
    ck_assert_msg(eval2(md(m, n), "N", -1, "M", INT64_MIN, &v, &err), "%s", err.message);
    ck_assert_int_eq(v, 0);
}
END_TEST

/* A value that is no size (INT64_MIN) substituted in: NULL, and a message */
START_TEST(subst_int64_min_reported) {
    st_err err = {0};
    const st_size *r = st_size_subst(cx, V("N"), (st_binding[]){{nm("N"), INT64_MIN}}, 1, &err);
    ck_assert_ptr_nonnull(r);
    ck_assert_int_eq(const_of(r), INT64_MIN);
    /* negating it is what overflows, and says so */
    r = st_size_subst(cx, sub(C(0), V("N")), (st_binding[]){{nm("N"), INT64_MIN}}, 1, &err);
    ck_assert_ptr_null(r);
    ck_has(err.message, "overflow");
}
END_TEST

START_TEST(eval_overflow) {
    const st_size *n = V("N");
    size_eval_fails(mul(n, n), "N", INT64_C(1) << 32, "overflow");
    size_eval_fails(add(n, C(1)), "N", INT64_MAX, "overflow");
    size_eval_fails(mul(C(4), n), "N", INT64_C(1) << 62, "overflow");
    ck_assert_int_eq(size_at(mul(n, n), "N", 3037000499), INT64_C(9223372030926249001));
}
END_TEST

START_TEST(subst_vars) {
    const st_size *n = V("N"), *m = V("M");
    st_err err = {0};
    st_binding env[2] = {{nm("N"), 3}, {nm("M"), 10}};
    const st_size *s = add(mul(n, m), n); /* NM + N */
    ck_assert_ptr_eq(st_size_subst(cx, s, env, 1, &err), add(mul(C(3), m), C(3)));
    ck_assert_ptr_eq(st_size_subst(cx, s, env, 2, &err), C(33));
    /* substitution re-normalises: floor((N + M)/4) with N = 3 and M = 10 */
    ck_assert_ptr_eq(st_size_subst(cx, dv(add(n, m), C(4)), env, 2, &err), C(3));
    ck_assert_ptr_eq(st_size_subst(cx, pw(C(2), V("K")), (st_binding[]){{nm("K"), 5}}, 1, &err),
                     C(32));
    ck_assert_ptr_eq(st_size_subst(cx, lg(C(2), n), (st_binding[]){{nm("N"), 1024}}, 1, &err),
                     C(10));
    /* nothing to replace: the same size */
    ck_assert_ptr_eq(st_size_subst(cx, s, NULL, 0, &err), s);
    /* under a fact: N/256 with N = 512 is 2; N = 100 breaks the fact */
    const st_size *q = dv(VF("N", 256), C(256));
    ck_assert_ptr_eq(st_size_subst(cx, q, (st_binding[]){{nm("N"), 512}}, 1, &err), C(2));
    memset(&err, 0, sizeof err);
    ck_assert_ptr_null(st_size_subst(cx, q, (st_binding[]){{nm("N"), 100}}, 1, &err));
    ck_has(err.message, "multiple of 256");
    /* a substitution that makes a divisor zero */
    memset(&err, 0, sizeof err);
    ck_assert_ptr_null(st_size_subst(cx, dv(m, n), (st_binding[]){{nm("N"), 0}}, 1, &err));
    ck_has(err.message, "zero");
}
END_TEST

static void collect_var(const char *name, void *data) {
    char *out = data;
    strncat(out, name, 31 - strlen(out));
}

START_TEST(each_var) {
    char seen[32] = "";
    st_size_each_var(add(mul(V("N"), V("M")), pw(C(2), V("K"))), collect_var, seen);
    /* each of the three, in some order */
    ck_assert_uint_eq(strlen(seen), 3);
    ck_assert(strchr(seen, 'N') && strchr(seen, 'M') && strchr(seen, 'K'));
    seen[0] = 0;
    st_size_each_var(C(5), collect_var, seen);
    ck_assert_str_eq(seen, "");
}
END_TEST

/* ------------------------------------------------------------------------ */
/* Overflow                                                                 */
/* ------------------------------------------------------------------------ */

START_TEST(overflow_is_an_error) {
    const st_size *big = C(INT64_C(1) << 62), *n = V("N");
    op_fails(st_size_mul, big, C(4), "overflow");
    op_fails(st_size_mul, C(INT64_C(3037000500)), C(INT64_C(3037000500)), "overflow");
    op_fails(st_size_add, C(INT64_MAX), C(1), "overflow");
    op_fails(st_size_sub, C(-INT64_MAX), C(2), "overflow");
    op_fails(st_size_mul, mul(big, n), C(2), "overflow");
    op_fails(st_size_add, mul(C(INT64_MAX), n), n, "overflow");
    /* INT64_MIN is representable; one below it is not */
    ck_assert_int_eq(const_of(sub(C(-INT64_MAX), C(1))), INT64_MIN);
    op_fails(st_size_sub, C(INT64_MIN), C(1), "overflow");
    op_fails(st_size_sub, C(0), C(INT64_MIN), "overflow");
    /* the largest products still work */
    ck_assert_int_eq(const_of(mul(C(INT64_C(1) << 31), C(INT64_C(1) << 31))), INT64_C(1) << 62);
    ck_assert_int_eq(const_of(add(C(INT64_MAX - 1), C(1))), INT64_MAX);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* Printing, and parsing the printed text back                              */
/* ------------------------------------------------------------------------ */

START_TEST(print_forms) {
    const st_size *n = V("N"), *m = V("M"), *k = V("K");
    ck_print(n, "N");
    ck_print(C(0), "0");
    ck_print(C(42), "42");
    ck_print(C(-5), "-5");
    ck_print(dv(n, C(256)), "N/256");
    ck_print(dv(VF("N", 256), C(256)), "N/256");
    ck_print(dv(VF("N", 768), C(256)), "N/256");
    ck_print(VF("N", 768), "N");
    ck_print(dv(mul(C(2), VF("N", 768)), C(3)), "2*N/3");
    ck_print(add(dv(VF("N", 256), C(256)), C(1)), "N/256 + 1");
    ck_print(add(mul(C(2), n), C(1)), "2*N + 1");
    ck_print(sub(n, C(1)), "N - 1");
    ck_print(add(sub(C(0), n), C(5)), "5 - N");
    ck_print(dv(add(n, C(1)), C(3)), "(N + 1)/3");
    ck_print(dv(add(mul(C(4), n), C(2)), C(6)), "(2*N + 1)/3");
    ck_print(pw(C(2), k), "pow(2, K)");
    ck_print(mul(C(4), pw(C(2), k)), "4*pow(2, K)");
    ck_print(lg(C(2), n), "log(2, N)");
    /* factors and terms come in structural order: M before N */
    ck_print(mul(n, m), "M*N");
    ck_print(add(n, m), "M + N");
    ck_print(sub(mul(n, n), C(1)), "N*N - 1");
    ck_print(md(n, C(4)), "N % 4");
    ck_print(mul(C(2), dv(n, C(3))), "2*(N/3)");
    ck_print(sub(C(0), dv(n, C(3))), "-(N/3)");
    ck_print(dv(n, add(m, C(1))), "N/(M + 1)");
}
END_TEST

/* Parse a def whose parameter zs and result are both [text]f32, under
 * `where` (may be ""), and return that size; when `as_expr`, also a def
 * whose body is replicate(text, 0.0), so that the expression reading of the
 * text must give the same size as the type reading. */
static const st_size *reparse(const char *where, const char *text, bool as_expr) {
    char src[1024];
    snprintf(src, sizeof src,
             "def f(xs: [N]f32, ys: [M]f32, K: i64, zs: [%s]f32): [%s]f32 %s = zs\n", text, text,
             where);
    const st_program *p = parse_ok(cx, src);
    const st_def *d = &p->defs[0];
    ck_assert_int_eq(d->result->kind, ST_TYPE_ARRAY);
    ck_assert_ptr_eq(d->params[3]->type, d->result);
    if (as_expr) {
        snprintf(src, sizeof src,
                 "def g(xs: [N]f32, ys: [M]f32, K: i64): [%s]f32 %s = replicate(%s, 0.0)\n", text,
                 where, text);
        const st_def *g = &parse_ok(cx, src)->defs[0];
        ck_assert_msg(g->result == d->result, "replicate(%s, 0.0) has another type", text);
    }
    return d->result->size;
}

/* print s and read it back; the same size must come out */
static void round_trip(const char *where, const st_size *s, bool as_expr) {
    const char *text = show(s);
    const st_size *back = reparse(where, text, as_expr);
    ck_assert_msg(back == s, "\"%s\" (where \"%s\") reads back as \"%s\"", text, where,
                  show(back));
}

START_TEST(print_parse_round_trip) {
    const st_size *n = V("N"), *m = V("M"), *k = V("K");
    const st_size *plain[] = {
        n, C(7), dv(n, C(256)), add(mul(C(2), n), C(1)), sub(n, C(1)), add(sub(C(0), n), C(5)),
        dv(add(n, C(1)), C(3)), mul(n, m), add(n, m), sub(mul(n, n), C(1)), md(n, C(4)),
        mul(C(2), dv(n, C(3))), sub(C(10), dv(n, C(3))), dv(n, add(m, C(1))),
        dv(sub(C(0), n), C(2)), dv(add(mul(C(4), n), C(2)), C(6)), mul(k, add(n, C(2))),
        md(add(n, m), C(8)),
    };
    for (size_t i = 0; i < sizeof plain / sizeof *plain; i++) round_trip("", plain[i], true);
    /* pow and log are not expressions, so only the type reading */
    const st_size *calls[] = {pw(C(2), k), mul(C(4), pw(C(2), k)), lg(C(2), n),
                              add(mul(n, pw(C(2), k)), C(1)), pw(C(3), add(k, C(1)))};
    for (size_t i = 0; i < sizeof calls / sizeof *calls; i++) round_trip("", calls[i], false);
}
END_TEST

START_TEST(print_parse_round_trip_facts) {
    const char *w256 = "where N % 256 == 0";
    const st_size *n = VF("N", 256), *m = V("M");
    const st_size *sizes[] = {
        n, dv(n, C(256)), add(dv(n, C(256)), C(1)), mul(dv(n, C(256)), m), dv(n, C(512)),
        sub(n, C(1)), dv(n, C(128)), mul(C(3), dv(n, C(256))), md(n, C(512)),
    };
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) round_trip(w256, sizes[i], true);
    /* 768 | N stated as two facts */
    const char *w768 = "where N % 256 == 0, N % 3 == 0";
    const st_size *n768 = VF("N", 768);
    const st_size *more[] = {n768, dv(n768, C(256)), dv(mul(C(2), n768), C(3)),
                             dv(n768, C(768)), dv(n768, C(5))};
    for (size_t i = 0; i < sizeof more / sizeof *more; i++) round_trip(w768, more[i], true);
}
END_TEST

/* A leading negative coefficient other than -1: N - 2*M prints as
 * "N - 2*M", which must read back as a length too. */
START_TEST(print_parse_round_trip_negative_coefficient) {
    const st_size *n = V("N"), *m = V("M");
    ck_print(sub(n, mul(C(2), m)), "N - 2*M");
    round_trip("", sub(n, mul(C(2), m)), true);
    round_trip("", sub(C(10), mul(C(2), n)), true);
    round_trip("", dv(sub(C(1), mul(C(2), n)), C(3)), true);
}
END_TEST

/* the parser's own normal forms match the API's */
START_TEST(parse_normalises) {
    ck_assert_ptr_eq(reparse("where N % 256 == 0", "N/256*256", true), VF("N", 256));
    ck_assert_ptr_eq(reparse("", "(N + 1)*(N - 1)", true), sub(mul(V("N"), V("N")), C(1)));
    ck_assert_ptr_eq(reparse("", "N + M - N", true), V("M"));
    ck_assert_ptr_eq(reparse("", "log(2, pow(2, K))", false), V("K"));
}
END_TEST

int main(void) {
    Suite *s = suite_create("size");
    struct {
        const char *name;
        const TTest *tests[16];
    } groups[] = {
        {"normal-form", {add_commutes, product_expands, cancellation_and_constants}},
        {"facts",
         {fact_makes_div_mul_exact, no_fact_no_simplification, fact_768_quotients,
          facts_merge_by_lcm}},
        {"div-mod",
         {const_floor_division, const_floor_modulo, symbolic_division, div_reduces_constant_term,
          negative_divisor_symbolic, division_by_zero}},
        {"pow-log",
         {divides, divides_by_a_polynomial, rounds_up, power_of, pow_log_fold, pow_minus_one, pow_symbolic, pow_eval, log_symbolic,
          pow_log_errors, pow_to_int64_min}},
        {"eval",
         {eval_bindings, eval_exact_quotient, eval_errors, eval_min_div_minus_one,
          eval_min_mod_minus_one, eval_overflow, subst_vars, subst_int64_min_reported, each_var}},
        {"overflow", {overflow_is_an_error}},
        {"print",
         {print_forms, print_parse_round_trip, print_parse_round_trip_facts,
          print_parse_round_trip_negative_coefficient, parse_normalises}},
    };
    for (size_t g = 0; g < sizeof groups / sizeof *groups; g++) {
        TCase *tc = tcase_create(groups[g].name);
        tcase_add_checked_fixture(tc, setup, teardown);
        for (size_t i = 0; i < 16 && groups[g].tests[i]; i++)
            tcase_add_test(tc, groups[g].tests[i]);
        suite_add_tcase(s, tc);
    }
    return run_suite(s);
}
