/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>
#include <openssl/sha.h>

#include "auth.h"
#include "hex.h"

#define AUTH_FILE_MAX (1024 * 1024)

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

int auth_parse(const char *text, size_t len, const char *name, struct auth_tokens **ret,
               struct attest_err *err)
{
        _cleanup_free_ struct auth_tokens *t = NULL;
        size_t lines = 1, pos = 0;
        unsigned lineno = 0;

        for (size_t i = 0; i < len; i++)
                lines += text[i] == '\n';
        if (lines > AUTH_TOKENS_MAX + 1024)
                return attest_fail(err, -E2BIG, "tokens_too_many", "%s: more than %d lines", name,
                                   AUTH_TOKENS_MAX + 1024);
        t = calloc(1, sizeof(*t) + lines * sizeof(t->e[0]));
        if (!t)
                return -ENOMEM;
        while (pos < len) {
                const char *l = text + pos, *nl = memchr(l, '\n', len - pos);
                size_t ll = nl ? (size_t)(nl - l) : len - pos, i = 0, rs, hs, hl;
                enum auth_role role;
                size_t got;

                pos += ll + (nl ? 1 : 0);
                lineno++;
                while (i < ll && (l[i] == ' ' || l[i] == '\t' || l[i] == '\r'))
                        i++;
                if (i == ll || l[i] == '#')
                        continue;
                rs = i;
                while (i < ll && l[i] != ' ' && l[i] != '\t')
                        i++;
                if (role_parse(l + rs, i - rs, &role) < 0)
                        return attest_fail(err, -EINVAL, "tokens_bad_role",
                                           "%s:%u: role must be admin, reader or enroll", name,
                                           lineno);
                while (i < ll && (l[i] == ' ' || l[i] == '\t'))
                        i++;
                hs = i;
                while (i < ll && l[i] != ' ' && l[i] != '\t' && l[i] != '\r')
                        i++;
                hl = i - hs;
                if (hl != 2 * SHA256_DIGEST_LENGTH ||
                    hex_decode(l + hs, hl, t->e[t->n].hash, sizeof(t->e[t->n].hash), &got) < 0)
                        return attest_fail(err, -EINVAL, "tokens_bad_hash",
                                           "%s:%u: expected 64 hex digits (SHA-256 of the token)",
                                           name, lineno);
                if (t->n >= AUTH_TOKENS_MAX)
                        return attest_fail(err, -E2BIG, "tokens_too_many",
                                           "%s: more than %d tokens", name, AUTH_TOKENS_MAX);
                t->e[t->n++].role = role;
        }
        *ret = TAKE_PTR(t);
        return 0;
}

int auth_load(const char *path, struct auth_tokens **ret, struct attest_err *err)
{
        _cleanup_free_ char *buf = NULL;
        FILE *f = fopen(path, "re");
        size_t len;

        if (!f)
                return attest_fail(err, -EINVAL, "tokens_open", "%s: %s", path, strerror(errno));
        buf = malloc(AUTH_FILE_MAX + 1);
        if (!buf) {
                fclose(f);
                return -ENOMEM;
        }
        len = fread(buf, 1, AUTH_FILE_MAX + 1, f);
        fclose(f);
        if (len > AUTH_FILE_MAX)
                return attest_fail(err, -E2BIG, "tokens_too_big", "%s: larger than %d bytes", path,
                                   AUTH_FILE_MAX);
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

int auth_allows(enum auth_role have, enum auth_role want)
{
        if (have == AUTH_NONE)
                return 0;
        return have == AUTH_ADMIN || have == want;
}
