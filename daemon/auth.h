/* SPDX-License-Identifier: MIT */
/*
 * Bearer tokens with roles (docs/api.md, "Conventions"). The tokens file holds lines
 * `ROLE SHA256HEX [comment]` (ROLE: admin, reader, enroll; `#` comments); only hashes are kept,
 * compared in constant time with CRYPTO_memcmp. admin may do what reader and enroll may.
 */
#ifndef ATTESTD_AUTH_H
#define ATTESTD_AUTH_H

#include <stddef.h>

#include "util/err.h"

enum auth_role {
        AUTH_NONE = 0,
        AUTH_READER = 1 << 0,
        AUTH_ENROLL = 1 << 1,
        AUTH_ADMIN = 1 << 2,
};

#define AUTH_TOKENS_MAX 4096
#define AUTH_FILE_MAX (1024 * 1024) /* the tokens file */
#define AUTH_TOKEN_LEN_MAX 512

struct auth_tokens;

/* Parse the tokens file; -EINVAL with err naming path:line on any malformed line. */
int auth_load(const char *path, struct auth_tokens **ret, struct attest_err *err) _wur_;
/* The same from memory (tests, fuzzing). */
int auth_parse(const char *text, size_t len, const char *name, struct auth_tokens **ret,
               struct attest_err *err) _wur_;
struct auth_tokens *auth_free(struct auth_tokens *t);
DEFINE_CLEANUP_FUNC(struct auth_tokens *, auth_free)
size_t auth_count(const struct auth_tokens *t);

/*
 * The role of a presented token (the bytes after "Bearer "), AUTH_NONE when unknown. Every entry
 * is compared, matched or not, so the time does not depend on which entry matches.
 */
enum auth_role auth_lookup(const struct auth_tokens *t, const char *token, size_t len);

/* The role's name as the tokens file spells it ("none" for AUTH_NONE). */
const char *auth_role_name(enum auth_role r);

/* Whether a token of role `have` may act as role `want`. */
int auth_allows(enum auth_role have, enum auth_role want);

#endif
