/* ir/lex.h — internal to ir/: tokens of the surface syntax. */
#ifndef STRATA_IR_LEX_H
#define STRATA_IR_LEX_H

#include "ir.h"

typedef enum tok_kind {
    K_EOF, K_NAME, K_INT, K_FLOAT,
    /* keywords */
    K_DEF, K_LET, K_IN, K_IF, K_THEN, K_ELSE, K_WHERE, K_TRUE, K_FALSE,
    K_LOOP, K_FOR, K_WHILE, K_DO,
    /* punctuation */
    K_LPAREN, K_RPAREN, K_LBRACK, K_RBRACK, K_COMMA, K_COLON, K_ASSIGN, K_ARROW, K_PIPE, K_DOT,
    /* operators */
    K_PLUS, K_MINUS, K_STAR, K_SLASH, K_PERCENT, K_EQ, K_NE, K_LT, K_LE, K_GT, K_GE,
    K_ANDAND, K_OROR, K_BANG, K_AMP, K_BAR, K_CARET, K_SHL, K_SHR, K_STARSTAR
} tok_kind;

typedef struct token {
    tok_kind kind;
    st_loc loc;
    const char *start; /* into the source */
    size_t len;
    /* K_INT and K_FLOAT: the digits without suffix, and the suffix if any */
    size_t digits_len;
    int radix;         /* K_INT: 10, or 16 (0x…) or 2 (0b…), the digits after the prefix */
    bool has_suffix;
    st_scalar_kind suffix;
} token;

/* Tokenise the whole source into an array in `scratch`, ending with K_EOF. */
bool st_lex(st_arena *scratch, const char *file, const char *src, size_t len, token **out,
            size_t *count, st_err *err);
/* How a token reads in a message: "`)`", "the name `xs`", "the end of the file". */
void st_token_describe(const token *t, char *buf, size_t cap);

#endif
