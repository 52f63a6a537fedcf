/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>
#include <openssl/sha.h>

#include "daemon/auth.h"
#include "util/file.h"
#include "util/hex.h"
#include "util/tok.h"

#define AUTH_LINE_MAX 4096 /* a line, without its newline */
#define AUTH_ROLE_MAX 6    /* "reader", "enroll" */

struct auth_entry {
        enum auth_role role;
        unsigned char hash[SHA256_DIGEST_LENGTH];
};

struct auth_tokens {
        size_t n;
        struct auth_entry e[];
};

struct auth_tokens *auth_free(struct auth_tokens *t)
{
        if (t) {
                OPENSSL_cleanse(t->e, t->n * sizeof(t->e[0]));
                free(t);
        }
        return NULL;
}

size_t auth_count(const struct auth_tokens *t)
{
        return t ? t->n : 0;
}

static int role_parse(const char *s, size_t n, enum auth_role *ret)
{
        if (n == 5 && !memcmp(s, "admin", 5))
                *ret = AUTH_ADMIN;
        else if (n == 6 && !memcmp(s, "reader", 6))
                *ret = AUTH_READER;
        else if (n == 6 && !memcmp(s, "enroll", 6))
                *ret = AUTH_ENROLL;
        else
                return -EINVAL;
        return 0;
}

/* Lines `ROLE SHA256HEX [comment]`, blank lines and `#` comments, cut by the text cursor. */
int auth_parse(const char *text, size_t len, const char *name, struct auth_tokens **ret,
               struct attest_err *err)
{
        _cleanup_free_ struct auth_tokens *t = NULL;
        struct tok all = TOK_INIT(text, len), l;
        unsigned lineno = 0;
        int x;

        if (len > AUTH_FILE_MAX)
                return attest_fail(err, -E2BIG, AE_TOKENS_TOO_BIG, "%s: larger than %d bytes", name,
                                   AUTH_FILE_MAX);
        t = calloc(1, sizeof(*t) + AUTH_TOKENS_MAX * sizeof(t->e[0]));
        if (!t)
                return -ENOMEM;
        while ((x = tok_line(&all, AUTH_LINE_MAX, TOK_STRIP_CR, &l)) != 0) {
                struct span role_s, hash;
                enum auth_role role;
                size_t got;

                lineno++;
                if (x == -E2BIG)
                        return attest_fail(err, -E2BIG, AE_TOKENS_LINE_TOO_LONG,
                                           "%s:%u: line longer than %d bytes", name, lineno,
                                           AUTH_LINE_MAX);
                if (x < 0)
                        return attest_fail(err, -EINVAL, AE_TOKENS_BAD_LINE, "%s:%u: NUL byte",
                                           name, lineno);
                tok_skip_blank(&l);
                if (tok_empty(&l) || tok_char(&l, '#'))
                        continue;
                if (tok_word(&l, AUTH_ROLE_MAX, &role_s) < 0 ||
                    role_parse(role_s.p, role_s.n, &role) < 0)
                        return attest_fail(err, -EINVAL, AE_TOKENS_BAD_ROLE,
                                           "%s:%u: role must be admin, reader or enroll", name,
                                           lineno);
                if (t->n >= AUTH_TOKENS_MAX)
                        return attest_fail(err, -E2BIG, AE_TOKENS_TOO_MANY,
                                           "%s: more than %d tokens", name, AUTH_TOKENS_MAX);
                if (tok_word(&l, 2 * SHA256_DIGEST_LENGTH, &hash) < 0 ||
                    hash.n != 2 * SHA256_DIGEST_LENGTH ||
                    hex_decode(hash.p, hash.n, t->e[t->n].hash, sizeof(t->e[t->n].hash), &got) < 0)
                        return attest_fail(err, -EINVAL, AE_TOKENS_BAD_HASH,
                                           "%s:%u: expected 64 hex digits (SHA-256 of the token)",
                                           name, lineno);
                t->e[t->n++].role = role;
        }
        *ret = TAKE_PTR(t);
        return 0;
}

int auth_load(const char *path, struct auth_tokens **ret, struct attest_err *err)
{
        _cleanup_free_ char *buf = NULL;
        size_t len;
        int x;

        if ((x = file_read_alloc(path, AUTH_FILE_MAX, 0, &buf, &len, err)) < 0) {
                if (x == -ENOMEM)
                        return x;
                /* the message names the path and the cause */
                if (err)
                        err->code = x == -E2BIG ? AE_TOKENS_TOO_BIG : AE_TOKENS_OPEN;
                return x == -E2BIG ? x : -EINVAL;
        }
        return auth_parse(buf, len, path, ret, err);
}

enum auth_role auth_lookup(const struct auth_tokens *t, const char *token, size_t len)
{
        unsigned char h[SHA256_DIGEST_LENGTH];
        unsigned role = AUTH_NONE;

        if (!t || len == 0 || len > AUTH_TOKEN_LEN_MAX)
                return AUTH_NONE;
        SHA256((const unsigned char *)token, len, h);
        for (size_t i = 0; i < t->n; i++) {
                /* all-ones mask when equal, without a branch on the secret */
                unsigned eq = (unsigned)(CRYPTO_memcmp(h, t->e[i].hash, sizeof(h)) == 0);

                role |= (0u - eq) & (unsigned)t->e[i].role;
        }
        OPENSSL_cleanse(h, sizeof(h));
        /* several lines may carry one token: the strongest role wins */
        if (role & AUTH_ADMIN)
                return AUTH_ADMIN;
        if (role & AUTH_ENROLL)
                return AUTH_ENROLL;
        return role & AUTH_READER ? AUTH_READER : AUTH_NONE;
}

const char *auth_role_name(enum auth_role r)
{
        switch (r) {
        case AUTH_ADMIN:
                return "admin";
        case AUTH_READER:
                return "reader";
        case AUTH_ENROLL:
                return "enroll";
        default:
                return "none";
        }
}

int auth_allows(enum auth_role have, enum auth_role want)
{
        if (have == AUTH_NONE)
                return 0;
        return have == AUTH_ADMIN || have == want;
}
