/* SPDX-License-Identifier: MIT */
/*
 * Keylime runtime policy -> attestd ima.runtime (keylime.h). The field meanings come from
 * Keylime's documentation and schema (keylime/ima/ima.py RUNTIME_POLICY_SCHEMA,
 * IMA_KEYRING_JSON_SCHEMA); the code is ours.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "attestctl/keylime-internal.h"
#include "attestctl/keylime.h"
#include "evidence/hashalg.h"
#include "evidence/jpath.h"
#include "util/hex.h"
#include "policy/runtime.h"

void keylime_note(struct keylime_notes *n, const char *fmt, ...)
{
        va_list ap;

        if (!n)
                return;
        if (n->n == KEYLIME_NOTES_MAX) {
                n->dropped++;
                return;
        }
        va_start(ap, fmt);
        vsnprintf(n->msg[n->n++], sizeof(n->msg[0]), fmt, ap);
        va_end(ap);
}

/* ---- digests ---- */

/*
 * The algorithms Keylime's runtime-policy schema names (digests, ima.log_hash_alg); names and
 * sizes are evidence/hashalg.c's.
 */
static const enum hashalg_id keylime_algos[] = {HASHALG_SHA1, HASHALG_SHA256, HASHALG_SHA384,
                                                HASHALG_SHA512};

/* The Keylime algorithm named name (len bytes, the kernel's spelling), or NULL. */
static const struct hashalg *keylime_algo(const char *name, size_t len)
{
        const struct hashalg *a = hashalg_from_kernel_name(name, len);

        for (size_t i = 0; a && i < ARRAY_SIZE(keylime_algos); i++)
                if (keylime_algos[i] == a->id)
                        return a;
        return NULL;
}

static bool hexlen_known(size_t n)
{
        const struct hashalg *a = n % 2 == 0 ? hashalg_bare_for_size(n / 2) : NULL;

        return a && keylime_algo(a->name, a->name_len);
}

/* What digest_check() found: carry the string, carry it as o->alg_256, or drop it. */
enum digest_kind { DIGEST_KEEP, DIGEST_BARE_256, DIGEST_NO_ALGORITHM };

/*
 * One digest string of a list: "alg:hex", or bare lowercase hex of 40-128 digits (Keylime's
 * schema, ^[0-9a-f]{40,128}$). A bare length that names no algorithm is Keylime's too: it never
 * matches an entry there (a log's digest has the size of its algorithm), so it is dropped here.
 */
static int digest_check(const json_t *v, const char *p, struct attest_err *err)
{
        const char *s, *colon;
        size_t n;

        if (!json_is_string(v))
                return jpath_fail(err, -EBADMSG, AE_POLICY_TYPE, p, "not a string");
        s = json_string_value(v);
        n = json_string_length(v);
        colon = memchr(s, ':', n);
        if (colon) {
                size_t an = (size_t)(colon - s), hn = n - an - 1;

                const struct hashalg *a = keylime_algo(s, an);

                if (a) {
                        if (hn != 2u * a->size || !hex_is_lower(colon + 1, hn))
                                return jpath_fail(err, -EBADMSG, AE_POLICY_BAD_HEX, p,
                                                  "not %u lowercase hex digits after '%s:'",
                                                  2u * a->size, a->name);
                        return DIGEST_KEEP;
                }
                return jpath_fail(err, -EBADMSG, AE_POLICY_BAD_HEX, p,
                                  "unknown algorithm prefix (sha1, sha256, sha384, sha512)");
        }
        if (!hex_is_lower(s, n))
                return jpath_fail(err, -EBADMSG, AE_POLICY_BAD_HEX, p,
                                  "not lowercase hex (Keylime's schema: ^[0-9a-f]{40,128}$)");
        if (n < 40 || n > 128)
                return jpath_fail(err, -EBADMSG, AE_POLICY_BAD_HEX, p,
                                  "%zu hex digits: Keylime's schema takes 40-128 "
                                  "(^[0-9a-f]{40,128}$)",
                                  n);
        if (!hexlen_known(n))
                return DIGEST_NO_ALGORITHM;
        return n == 64 ? DIGEST_BARE_256 : DIGEST_KEEP;
}

struct ctx {
        const struct hashalg *alg_256; /* keylime_opts.alg_256 */
        struct attest_err *err;
        struct keylime_notes *notes;
        struct keylime_stats st;
        size_t total_digests;
};

/*
 * One name's list v (at path q), checked, into *ret: the same array when every digest is carried
 * as written (shared, not copied), else a new one: bare 64-hex digests as "alg:hex" when
 * o->alg_256 says they are another algorithm than sha256, digests of no algorithm's length left
 * out (counted, the first named in a note). *ret_256: the bare 64-hex digests among them.
 */
static int digest_list(struct ctx *c, json_t *v, const char *q, json_t **ret, size_t *ret_256)
{
        size_t len = json_array_size(v), drop = 0, rewrite = 0, bare = 0;
        char r[JPATH_MAX];
        json_auto_t *out = NULL;
        int x;

        for (size_t i = 0; i < len; i++) {
                jpath_index(r, q, i);
                if ((x = digest_check(json_array_get(v, i), r, c->err)) < 0)
                        return x;
                if (x == DIGEST_NO_ALGORITHM && c->st.dropped_digests + drop++ == 0)
                        keylime_note(c->notes,
                                     "%s: %zu hex digits name no algorithm: not carried (Keylime's "
                                     "schema accepts 40-128 digits; such a digest matches no entry "
                                     "there "
                                     "either)",
                                     r, json_string_length(json_array_get(v, i)));
                if (x == DIGEST_BARE_256) {
                        bare++;
                        rewrite += c->alg_256 != NULL;
                }
        }
        c->st.dropped_digests += drop;
        *ret_256 = bare;
        if (!drop && !rewrite) {
                *ret = json_incref(v);
                return 0;
        }
        if (!(out = json_array()))
                return -ENOMEM;
        for (size_t i = 0; i < len; i++) {
                const char *s = json_string_value(json_array_get(v, i));
                size_t n = json_string_length(json_array_get(v, i));
                char buf[32 + 1 + 64 + 1];

                if (!memchr(s, ':', n) && !hexlen_known(n))
                        continue;
                if (c->alg_256 && n == 64 && !memchr(s, ':', n)) {
                        snprintf(buf, sizeof(buf), "%s:%s", c->alg_256->name, s);
                        x = json_array_append_new(out, json_string(buf));
                } else {
                        x = json_array_append(out, json_array_get(v, i));
                }
                if (x < 0)
                        return -ENOMEM;
        }
        *ret = TAKE_PTR(out);
        return 0;
}

/*
 * A Keylime "digests-object" ({name: [hex, ...]}, lists of 1..KEYLIME_LIST_MAX) at path p into a
 * new object of the same shape; *ret_names and *ret_digests count what it holds.
 */
static int digests_object(struct ctx *c, const json_t *o, const char *p, bool files,
                          size_t name_max, size_t max_names, json_t **ret, size_t *ret_names,
                          size_t *ret_digests)
{
        json_auto_t *out = json_object();
        const char *key;
        json_t *v;
        size_t names = 0, digests = 0;

        if (!out)
                return -ENOMEM;
        if (!json_is_object(o))
                return jpath_fail(c->err, -EBADMSG, AE_POLICY_TYPE, p, "not an object");
        if (json_object_size(o) > max_names)
                return jpath_fail(c->err, -E2BIG, AE_POLICY_TOO_BIG, p, "%zu names > %zu",
                                  json_object_size(o), max_names);
        json_object_foreach((json_t *)o, key, v)
        {
                char q[JPATH_MAX];
                json_auto_t *list = NULL;
                size_t kn = strlen(key), len, bare = 0;
                int x;

                jpath_join(q, p, key);
                if (kn == 0 || kn > name_max)
                        return jpath_fail(c->err, -EBADMSG, AE_POLICY_BAD_VALUE, q,
                                          "name of %zu bytes, want 1-%zu", kn, name_max);
                if (!json_is_array(v))
                        return jpath_fail(c->err, -EBADMSG, AE_POLICY_TYPE, q, "not an array");
                len = json_array_size(v);
                if (len == 0)
                        return jpath_fail(c->err, -EBADMSG, AE_POLICY_BAD_VALUE, q,
                                          "empty list (Keylime's schema: minItems 1)");
                if (len > KEYLIME_LIST_MAX)
                        return jpath_fail(c->err, -E2BIG, AE_POLICY_TOO_BIG, q, "%zu digests > %u",
                                          len, KEYLIME_LIST_MAX);
                if (c->total_digests + len > KEYLIME_DIGESTS_MAX)
                        return jpath_fail(c->err, -E2BIG, AE_POLICY_TOO_BIG, q,
                                          "more than %u digests in the policy",
                                          KEYLIME_DIGESTS_MAX);
                if ((x = digest_list(c, v, q, &list, &bare)) < 0)
                        return x;
                if (files && strcmp(key, "boot_aggregate") == 0) {
                        c->st.dropped_boot_aggregate += len;
                        continue;
                }
                if (files && key[0] != '/') {
                        if (c->st.dropped_names++ == 0)
                                keylime_note(c->notes,
                                             "%s: not an absolute path: not carried (attestd lists "
                                             "files "
                                             "by absolute path; such an entry fails)",
                                             q);
                        continue;
                }
                if (json_array_size(list) == 0) {
                        /* every digest of a length no algorithm has: its entries fail either way
                         * (Keylime: hash not in the list; attestd: path not in the list) */
                        if (c->st.dropped_lists++ == 0)
                                keylime_note(
                                        c->notes,
                                        "%s: no digest of a known algorithm's length left: not "
                                        "carried (its entries fail, as in Keylime)",
                                        q);
                        continue;
                }
                if (json_object_set(out, key, list) < 0)
                        return -ENOMEM;
                names++;
                c->st.digests_256 += bare; /* carried: what the note counts */
                digests += json_array_size(list);
                c->total_digests += json_array_size(list);
        }
        *ret = TAKE_PTR(out);
        *ret_names = names;
        *ret_digests = digests;
        return 0;
}

/* ---- the document ---- */

static bool name_ok(const char *s)
{
        size_t n = strlen(s);

        if (n == 0 || n > 64)
                return false;
        for (size_t i = 0; i < n; i++) {
                char ch = s[i];

                if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
                      (ch >= '0' && ch <= '9') || ch == '_' || ch == '-' || ch == '.' ||
                      ch == '+' || ch == '~'))
                        return false;
        }
        return true;
}

static int need(struct ctx *c, const json_t *o, const char *path, const char *key, json_t **ret)
{
        char p[JPATH_MAX];

        *ret = json_object_get(o, key);
        if (*ret)
                return 0;
        jpath_join(p, path, key);
        return jpath_fail(c->err, -EBADMSG, AE_POLICY_MISSING_FIELD, p,
                          "missing (Keylime's schema requires it)");
}

static int parse_meta(struct ctx *c, const json_t *m)
{
        static const char *const keys[] = {"version", "generator", "timestamp", NULL};
        json_t *v;
        int x;

        if ((x = jpath_object(m, "$.meta", keys, AE_POLICY_TYPE, AE_POLICY_UNKNOWN_FIELD, c->err)) <
                    0 ||
            (x = need(c, m, "$.meta", "version", &v)) < 0)
                return x;
        if (!json_is_integer(v))
                return jpath_fail(c->err, -EBADMSG, AE_POLICY_TYPE, "$.meta.version",
                                  "not an integer");
        if (json_integer_value(v) != 1)
                return jpath_fail(c->err, -EOPNOTSUPP, AE_POLICY_BAD_VALUE, "$.meta.version",
                                  "version %" PRId64 ": only runtime-policy version 1 is known",
                                  (int64_t)json_integer_value(v));
        if ((x = need(c, m, "$.meta", "generator", &v)) < 0)
                return x;
        if (!json_is_integer(v) || json_integer_value(v) < 0 || json_integer_value(v) > 3)
                return jpath_fail(c->err, -EBADMSG, AE_POLICY_BAD_VALUE, "$.meta.generator",
                                  "not an integer 0-3");
        v = json_object_get(m, "timestamp");
        if (v && !json_is_string(v))
                return jpath_fail(c->err, -EBADMSG, AE_POLICY_TYPE, "$.meta.timestamp",
                                  "not a string");
        return 0;
}

static int parse_excludes(struct ctx *c, const json_t *a, json_t **ret)
{
        json_auto_t *out = json_array();
        _cleanup_free_ char *pat = NULL;
        size_t patmax = KEYLIME_EXCLUDE_MAX + 1;
        int x;

        if (!out || !(pat = malloc(patmax)))
                return -ENOMEM;
        if (!json_is_array(a))
                return jpath_fail(c->err, -EBADMSG, AE_POLICY_TYPE, "$.excludes", "not an array");
        if (json_array_size(a) > KEYLIME_EXCLUDES_MAX)
                return jpath_fail(c->err, -E2BIG, AE_POLICY_TOO_BIG, "$.excludes",
                                  "%zu regexes > %u", json_array_size(a), KEYLIME_EXCLUDES_MAX);
        for (size_t i = 0; i < json_array_size(a); i++) {
                json_t *v = json_array_get(a, i);
                const char *why = NULL;
                char p[JPATH_MAX];

                jpath_index(p, "$.excludes", i);
                if (!json_is_string(v))
                        return jpath_fail(c->err, -EBADMSG, AE_POLICY_TYPE, p, "not a string");
                if (json_string_length(v) == 0)
                        /* Python: "()" joined in matches every path: refuse, not guess */
                        return jpath_fail(c->err, -EBADMSG, AE_POLICY_BAD_VALUE, p,
                                          "an empty regex excludes every path");
                x = keylime_exclude_to_pcre(json_string_value(v), json_string_length(v), pat,
                                            patmax, &why);
                if (x == -EBADMSG)
                        return jpath_fail(c->err, x, AE_POLICY_BAD_VALUE, p, "%s", why);
                if (x < 0)
                        return jpath_fail(c->err, x, AE_POLICY_TOO_BIG, p,
                                          "longer than %u bytes once translated to PCRE2",
                                          KEYLIME_EXCLUDE_MAX);
                if ((x = keylime_exclude_check(pat, p, c->err)) < 0)
                        return x;
                if (json_array_append_new(out, json_string(pat)) < 0)
                        return -ENOMEM;
        }
        c->st.excludes = json_array_size(out);
        *ret = TAKE_PTR(out);
        return 0;
}

static int parse_ima(struct ctx *c, const json_t *o, json_t **ret_ignored)
{
        static const char *const keys[] = {"ignored_keyrings", "log_hash_alg", "dm_policy", NULL};
        json_auto_t *ign = json_array();
        json_t *v;
        int x;

        *ret_ignored = NULL;
        if (!ign)
                return -ENOMEM;
        if ((x = jpath_object(o, "$.ima", keys, AE_POLICY_TYPE, AE_POLICY_UNKNOWN_FIELD, c->err)) <
            0)
                return x;
        if ((x = need(c, o, "$.ima", "dm_policy", &v)) < 0)
                return x;
        if (!json_is_null(v))
                return jpath_fail(c->err, -EOPNOTSUPP, AE_POLICY_BAD_VALUE, "$.ima.dm_policy",
                                  "device-mapper policies are not supported by attestd; the "
                                  "import stops here rather than drop it");
        if ((x = need(c, o, "$.ima", "log_hash_alg", &v)) < 0)
                return x;
        if (!json_is_string(v))
                return jpath_fail(c->err, -EBADMSG, AE_POLICY_TYPE, "$.ima.log_hash_alg",
                                  "not a string");
        if (!keylime_algo(json_string_value(v), json_string_length(v)))
                return jpath_fail(c->err, -EBADMSG, AE_POLICY_BAD_VALUE, "$.ima.log_hash_alg",
                                  "not sha1, sha256, sha384 or sha512");
        if (strcmp(json_string_value(v), "sha1") != 0)
                keylime_note(
                        c->notes,
                        "$.ima.log_hash_alg %s not carried: attestd takes each entry's template "
                        "hash algorithm from the log itself",
                        json_string_value(v));
        if ((x = need(c, o, "$.ima", "ignored_keyrings", &v)) < 0)
                return x;
        if (!json_is_array(v))
                return jpath_fail(c->err, -EBADMSG, AE_POLICY_TYPE, "$.ima.ignored_keyrings",
                                  "not an array");
        if (json_array_size(v) > KEYLIME_KEYRINGS_MAX)
                return jpath_fail(c->err, -E2BIG, AE_POLICY_TOO_BIG, "$.ima.ignored_keyrings",
                                  "%zu keyrings > %u", json_array_size(v), KEYLIME_KEYRINGS_MAX);
        for (size_t i = 0; i < json_array_size(v); i++) {
                json_t *k = json_array_get(v, i);
                char p[JPATH_MAX];

                jpath_index(p, "$.ima.ignored_keyrings", i);
                if (!json_is_string(k))
                        return jpath_fail(c->err, -EBADMSG, AE_POLICY_TYPE, p, "not a string");
                if (json_string_length(k) == 0 || json_string_length(k) > KEYLIME_KEYRING_NAME_MAX)
                        return jpath_fail(c->err, -EBADMSG, AE_POLICY_BAD_VALUE, p,
                                          "keyring name of %zu bytes, want 1-%u",
                                          json_string_length(k), KEYLIME_KEYRING_NAME_MAX);
                if (json_array_append(ign, k) < 0)
                        return -ENOMEM;
        }
        c->st.ignored_keyrings = json_array_size(ign);
        if (json_array_size(ign))
                *ret_ignored = TAKE_PTR(ign);
        return 0;
}

int keylime_import(const char *json, size_t len, const struct keylime_opts *o, json_t **ret_policy,
                   struct keylime_stats *ret_stats, struct keylime_notes *notes,
                   struct attest_err *err)
{
        json_auto_t *doc = NULL;
        int x;

        if (!json || !o || !o->name || !ret_policy || o->violations_allow > KEYLIME_VIOLATIONS_MAX)
                return -EINVAL;
        if (!name_ok(o->name))
                return attest_fail(err, -EINVAL, AE_POLICY_BAD_VALUE,
                                   "name '%s' is not [A-Za-z0-9_.+~-]{1,64}", o->name);
        if ((x = jpath_load(json, len, KEYLIME_JSON_MAX, AE_POLICY_JSON, &doc, err)) < 0)
                return keylime_flat_refusal(json, len, x, err);
        return keylime_import_doc(doc, o, ret_policy, ret_stats, notes, err);
}

bool keylime_is_flat_allowlist(const char *text, size_t len)
{
        size_t i = 0, n = len < 4096 ? len : 4096, h;

        while (i < n && (text[i] == ' ' || text[i] == '\t' || text[i] == '\n' || text[i] == '\r'))
                i++;
        for (h = 0; i + h < n && hex_is_lower(text + i + h, 1); h++)
                ;
        if (h < 40 || h > 128 || i + h >= n || (text[i + h] != ' ' && text[i + h] != '\t'))
                return false;
        for (i += h; i < n && (text[i] == ' ' || text[i] == '\t'); i++)
                ;
        /* a path (sha256sum's binary-mode '*' before it) */
        return i < n && (text[i] == '/' || text[i] == '*' || (unsigned char)text[i] > ' ');
}

int keylime_flat_refusal(const char *text, size_t len, int x, struct attest_err *err)
{
        if (x != -EBADMSG || !keylime_is_flat_allowlist(text, len))
                return x;
        return attest_fail(err, -EOPNOTSUPP, AE_POLICY_BAD_VALUE,
                           "line 1 is \"HEX PATH\" (sha256sum's format): a flat Keylime allowlist: "
                           "convert it to a runtime policy with keylime_convert_runtime_policy -a "
                           "FILE first");
}

int keylime_import_doc(const json_t *doc, const struct keylime_opts *o, json_t **ret_policy,
                       struct keylime_stats *ret_stats, struct keylime_notes *notes,
                       struct attest_err *err)
{
        static const char *const keys[] = {"meta",     "release",           "digests",
                                           "excludes", "keyrings",          "ima",
                                           "ima-buf",  "verification-keys", NULL};
        json_auto_t *digests = NULL, *excl = NULL, *rings = NULL, *bufs = NULL, *vkeys = NULL,
                    *ignored = NULL, *rt = NULL, *pol = NULL;
        struct ctx c = {.alg_256 = o ? o->alg_256 : NULL, .err = err, .notes = notes};
        json_t *v;
        int x;

        if (!doc || !o || !o->name || !ret_policy || o->violations_allow > KEYLIME_VIOLATIONS_MAX ||
            (o->alg_256 && (o->alg_256->size != 32 || !(o->alg_256->flags & HASHALG_POLICY))))
                return -EINVAL;
        if (!name_ok(o->name))
                return attest_fail(err, -EINVAL, AE_POLICY_BAD_VALUE,
                                   "name '%s' is not [A-Za-z0-9_.+~-]{1,64}", o->name);
        if (!json_is_object(doc))
                return jpath_fail(err, -EBADMSG, AE_POLICY_JSON, "$", "not an object");
        /* what attestd does not read: said so, never guessed at */
        if (json_object_get(doc, "payload") && !json_object_get(doc, "digests"))
                return jpath_fail(err, -EOPNOTSUPP, AE_POLICY_BAD_VALUE, "$.payload",
                                  "a DSSE envelope (a signed policy) where a runtime policy "
                                  "belongs: import-keylime --dsse-key PEM verifies one and "
                                  "imports its payload (not another envelope)");
        if (!json_object_get(doc, "digests") &&
            (json_object_get(doc, "hashes") || json_object_get(doc, "exclude")))
                return jpath_fail(err, -EOPNOTSUPP, AE_POLICY_BAD_VALUE, "$",
                                  "a legacy Keylime allowlist: convert it to a runtime policy "
                                  "with keylime_convert_runtime_policy first");
        if ((x = jpath_object(doc, "$", keys, AE_POLICY_TYPE, AE_POLICY_UNKNOWN_FIELD, err)) < 0)
                return x;
        for (size_t i = 0; keys[i]; i++)
                if ((x = need(&c, doc, "$", keys[i], &v)) < 0)
                        return x;

        if ((x = parse_meta(&c, json_object_get(doc, "meta"))) < 0)
                return x;
        v = json_object_get(doc, "release");
        if (!json_is_integer(v) || json_integer_value(v) < 0)
                return jpath_fail(err, -EBADMSG, AE_POLICY_BAD_VALUE, "$.release",
                                  "not an integer >= 0");

        if ((x = digests_object(&c, json_object_get(doc, "digests"), "$.digests", true,
                                KEYLIME_NAME_MAX, KEYLIME_NAMES_MAX, &digests, &c.st.names,
                                &c.st.digests)) < 0 ||
            (x = parse_excludes(&c, json_object_get(doc, "excludes"), &excl)) < 0 ||
            (x = digests_object(&c, json_object_get(doc, "keyrings"), "$.keyrings", false,
                                KEYLIME_KEYRING_NAME_MAX, KEYLIME_KEYRINGS_MAX, &rings,
                                &c.st.keyrings, &c.st.keyring_digests)) < 0 ||
            (x = parse_ima(&c, json_object_get(doc, "ima"), &ignored)) < 0 ||
            (x = digests_object(&c, json_object_get(doc, "ima-buf"), "$[\"ima-buf\"]", false,
                                KEYLIME_NAME_MAX, KEYLIME_NAMES_MAX, &bufs, &c.st.buf_names,
                                &c.st.buf_digests)) < 0 ||
            (x = keylime_verification_keys(json_object_get(doc, "verification-keys"), c.notes,
                                           &c.st.keys, &vkeys, err)) < 0)
                return x;

        if (!(rt = json_object()) || json_object_set(rt, "digests", digests) < 0)
                return -ENOMEM;
        if (json_array_size(excl) && json_object_set(rt, "excludes", excl) < 0)
                return -ENOMEM;
        if (vkeys && json_object_set(rt, "keys", vkeys) < 0)
                return -ENOMEM;
        /* even empty: Keylime fails a key or ima-buf event its lists do not name */
        if (json_object_set(rt, "keyrings", rings) < 0 || json_object_set(rt, "ima_buf", bufs) < 0)
                return -ENOMEM;
        if (ignored && json_object_set(rt, "ignored_keyrings", ignored) < 0)
                return -ENOMEM;
        if (json_object_set_new(
                    rt, "violations",
                    o->violations_allow < 0
                            ? json_string("fail")
                            : json_pack("{s:I}", "allow", (json_int_t)o->violations_allow)) < 0)
                return -ENOMEM;
        pol = json_pack("{s:s, s:{s:b, s:O}}", "name", o->name, "ima", "require_boot_aggregate", 1,
                        "runtime", rt);
        if (!pol)
                return -ENOMEM;
        if (c.st.dropped_names)
                keylime_note(notes, "$.digests: %zu names that are not absolute paths not carried",
                             c.st.dropped_names);
        if (c.st.dropped_digests)
                keylime_note(
                        notes,
                        "%zu digests of a length no algorithm has not carried (they match nothing)",
                        c.st.dropped_digests);
        if (c.st.digests_256)
                keylime_note(
                        notes,
                        c.alg_256 ? "%zu digests of 64 hex digits carried as %s"
                                  : "%zu digests of 64 hex digits read as %s: Keylime compares hex "
                                    "whatever the algorithm; for files hashed with sm3 "
                                    "(ima_hash=sm3), import with --digest-alg sm3",
                        c.st.digests_256, c.alg_256 ? c.alg_256->name : "sha256");
        if (c.st.dropped_boot_aggregate)
                keylime_note(
                        notes,
                        "$.digests.boot_aggregate: %zu digests not carried: attestd checks the "
                        "boot_aggregate entry against the quoted PCRs (ima.require_boot_aggregate)",
                        c.st.dropped_boot_aggregate);
        if (json_object_get(json_object_get(doc, "meta"), "timestamp") ||
            json_integer_value(json_object_get(doc, "release")) != 0)
                keylime_note(notes, "$.meta and $.release are metadata: not carried");
        if (ret_stats)
                *ret_stats = c.st;
        *ret_policy = TAKE_PTR(pol);
        return 0;
}
