/* SPDX-License-Identifier: MIT */
/*
 * The evidence decoder as it was before the pull reader (evidence/evjson-read.c): a jansson tree,
 * then the fields walked in a fixed order. Kept only as the reference the differential fuzzer
 * (fuzz-evidence-diff.c) and bench-evidence compare the reader with; the daemon no longer links it.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "evidence/evjson.h"
#include "tests/fuzz/evjson-jansson.h"
#include "util/hex.h"
#include "evidence/jpath.h"
#include "evidence/quote.h"

/* obj.key, required or not: *ret NULL when absent and optional. path_out gets the child path. */
static int field(const json_t *obj, const char *path, const char *key, bool required, json_t **ret,
                 char *path_out, struct attest_err *err)
{
        json_t *v = json_object_get(obj, key);

        jpath_join(path_out, path, key);
        if (!v && required)
                return jpath_fail(err, -EBADMSG, AE_EVIDENCE_MISSING_FIELD, path_out, "missing");
        *ret = v;
        return 0;
}

static int str(const json_t *v, const char *path, size_t max, const char **ret, size_t *ret_len,
               struct attest_err *err)
{
        size_t n;

        if (!json_is_string(v))
                return jpath_fail(err, -EBADMSG, AE_EVIDENCE_TYPE, path, "not a string");
        n = json_string_length(v);
        if (n > max)
                return jpath_fail(err, -E2BIG, AE_EVIDENCE_TOO_BIG, path, "%zu bytes > %zu", n,
                                  max);
        *ret = json_string_value(v);
        *ret_len = n;
        return 0;
}

static int boolean(const json_t *v, const char *path, bool *ret, struct attest_err *err)
{
        if (!json_is_boolean(v))
                return jpath_fail(err, -EBADMSG, AE_EVIDENCE_TYPE, path, "not a boolean");
        *ret = json_is_true(v);
        return 0;
}

/* Hex of exactly want bytes (want 0: 1..max bytes). */
static int hexfield(const json_t *v, const char *path, uint8_t *out, size_t max, size_t want,
                    size_t *ret_len, struct attest_err *err)
{
        const char *s = NULL;
        size_t n = 0, got;
        int x;

        if ((x = str(v, path, 2 * max, &s, &n, err)) < 0)
                return x == -E2BIG ? jpath_fail(err, -EBADMSG, AE_EVIDENCE_BAD_HEX, path,
                                                "%zu hex digits, at most %zu bytes wanted",
                                                json_string_length(v), max)
                                   : x;
        if (hex_decode(s, n, out, max, &got) < 0)
                return jpath_fail(err, -EBADMSG, AE_EVIDENCE_BAD_HEX, path, "not hex");
        if ((want && got != want) || got == 0)
                return jpath_fail(err, -EBADMSG, AE_EVIDENCE_BAD_HEX, path, "%zu bytes, %zu wanted",
                                  got, want ? want : max);
        *ret_len = got;
        return 0;
}

/* Base64 into a new buffer of at most max bytes; empty text gives NULL, 0. */
static int b64field(const json_t *v, const char *path, size_t max, uint8_t **ret, size_t *ret_len,
                    struct attest_err *err)
{
        _cleanup_free_ uint8_t *out = NULL;
        const char *s = NULL;
        size_t n = 0, got;
        int x;

        if (!json_is_string(v))
                return jpath_fail(err, -EBADMSG, AE_EVIDENCE_TYPE, path, "not a string");
        s = json_string_value(v);
        n = json_string_length(v);
        if (n / 4 > max / 3 + 1)
                return jpath_fail(err, -E2BIG, AE_EVIDENCE_TOO_BIG, path,
                                  "decodes to more than %zu bytes", max);
        if (n == 0) {
                *ret = NULL;
                *ret_len = 0;
                return 0;
        }
        out = malloc(n / 4 * 3);
        if (!out)
                return -ENOMEM;
        x = b64_decode(s, n, out, max < n / 4 * 3 ? max : n / 4 * 3, &got);
        if (x == -E2BIG)
                return jpath_fail(err, -E2BIG, AE_EVIDENCE_TOO_BIG, path,
                                  "decodes to more than %zu bytes", max);
        if (x < 0)
                return jpath_fail(err, -EBADMSG, AE_EVIDENCE_BAD_B64, path, "not base64");
        *ret = TAKE_PTR(out);
        *ret_len = got;
        return 0;
}

/* A short identifier-like string ([a-z0-9_.-], 1..cap-1 bytes) into a fixed buffer. */
static int word(const json_t *v, const char *path, char *out, size_t cap, struct attest_err *err)
{
        const char *s = NULL;
        size_t n = 0;
        int x;

        if ((x = str(v, path, cap - 1, &s, &n, err)) < 0)
                return x;
        if (n == 0)
                return jpath_fail(err, -EBADMSG, AE_EVIDENCE_BAD_VALUE, path, "empty");
        for (size_t i = 0; i < n; i++) {
                char c = s[i];

                if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                      c == '_' || c == '-' || c == '.' || c == '+' || c == '~'))
                        return jpath_fail(err, -EBADMSG, AE_EVIDENCE_BAD_VALUE, path,
                                          "byte %zu is not [A-Za-z0-9_.+~-]", i);
        }
        memcpy(out, s, n);
        out[n] = '\0';
        return 0;
}

static const struct pcrs_json_codes pcr_codes = {.type = AE_EVIDENCE_TYPE,
                                                 .bank = AE_EVIDENCE_UNKNOWN_FIELD,
                                                 .index = AE_EVIDENCE_UNKNOWN_FIELD,
                                                 .hex = AE_EVIDENCE_BAD_HEX,
                                                 .empty = AE_EVIDENCE_BAD_VALUE};

static int parse_quote(const json_t *o, const char *path, struct evidence *ev,
                       struct attest_err *err)
{
        static const char *const keys[] = {"attest", "signature", "pcrs", NULL};
        char p[JPATH_MAX];
        json_t *v = NULL;
        int x;

        if ((x = jpath_object(o, path, keys, AE_EVIDENCE_TYPE, AE_EVIDENCE_UNKNOWN_FIELD, err)) < 0)
                return x;
        if ((x = field(o, path, "attest", true, &v, p, err)) < 0 ||
            (x = b64field(v, p, QUOTE_ATTEST_MAX, &ev->attest, &ev->attest_len, err)) < 0)
                return x;
        if (!ev->attest)
                return jpath_fail(err, -EBADMSG, AE_EVIDENCE_BAD_VALUE, p, "empty");
        if ((x = field(o, path, "signature", true, &v, p, err)) < 0 ||
            (x = b64field(v, p, QUOTE_SIG_MAX, &ev->sig, &ev->sig_len, err)) < 0)
                return x;
        if (!ev->sig)
                return jpath_fail(err, -EBADMSG, AE_EVIDENCE_BAD_VALUE, p, "empty");
        if ((x = field(o, path, "pcrs", true, &v, p, err)) < 0 ||
            (x = pcrs_from_json(v, p, &pcr_codes, &ev->pcrs, err)) < 0)
                return x;
        return 0;
}

static int parse_ima(const json_t *o, const char *path, size_t max_ima, struct evidence *ev,
                     struct attest_err *err)
{
        static const char *const keys[] = {"offset", "format", "entries", NULL};
        char p[JPATH_MAX];
        const char *s = NULL;
        size_t n = 0;
        json_t *v = NULL;
        int x;

        if ((x = jpath_object(o, path, keys, AE_EVIDENCE_TYPE, AE_EVIDENCE_UNKNOWN_FIELD, err)) < 0)
                return x;
        if ((x = field(o, path, "offset", true, &v, p, err)) < 0)
                return x;
        if (!json_is_integer(v))
                return jpath_fail(err, -EBADMSG, AE_EVIDENCE_TYPE, p, "not an integer");
        if (json_integer_value(v) < 0)
                return jpath_fail(err, -EBADMSG, AE_EVIDENCE_BAD_VALUE, p, "negative");
        ev->ima_offset = (uint64_t)json_integer_value(v);
        if ((x = field(o, path, "format", true, &v, p, err)) < 0 ||
            (x = str(v, p, 16, &s, &n, err)) < 0)
                return x;
        if (strcmp(s, "binary") == 0)
                ev->ima_format = IMA_FORMAT_BINARY;
        else if (strcmp(s, "ascii") == 0)
                ev->ima_format = IMA_FORMAT_ASCII;
        else
                return jpath_fail(err, -EBADMSG, AE_EVIDENCE_BAD_VALUE, p,
                                  "not \"binary\" or \"ascii\"");
        if ((x = field(o, path, "entries", true, &v, p, err)) < 0 ||
            (x = b64field(v, p, max_ima, &ev->ima, &ev->ima_len, err)) < 0)
                return x;
        return 0;
}

static int parse_boot(const json_t *o, const char *path, struct evidence *ev,
                      struct attest_err *err)
{
        static const char *const keys[] = {"offset", "data", NULL};
        char p[JPATH_MAX];
        json_t *v = NULL;
        int x;

        if ((x = jpath_object(o, path, keys, AE_EVIDENCE_TYPE, AE_EVIDENCE_UNKNOWN_FIELD, err)) < 0)
                return x;
        if ((x = field(o, path, "offset", true, &v, p, err)) < 0)
                return x;
        if (!json_is_integer(v))
                return jpath_fail(err, -EBADMSG, AE_EVIDENCE_TYPE, p, "not an integer");
        if (json_integer_value(v) < 0)
                return jpath_fail(err, -EBADMSG, AE_EVIDENCE_BAD_VALUE, p, "negative");
        ev->boot_offset = (uint64_t)json_integer_value(v);
        if ((x = field(o, path, "data", true, &v, p, err)) < 0 ||
            (x = b64field(v, p, EVIDENCE_BOOT_LOG_MAX, &ev->boot_log, &ev->boot_log_len, err)) < 0)
                return x;
        if (!ev->boot_log && !(ev->boot_log = malloc(1)))
                return -ENOMEM;
        return 0;
}

static int parse_cfi(const json_t *o, const char *path, struct evidence_host *h,
                     struct attest_err *err)
{
        static const char *const keys[] = {"source", "enabled", "permissive", NULL};
        char p[JPATH_MAX];
        json_t *v = NULL;
        int x;

        if ((x = jpath_object(o, path, keys, AE_EVIDENCE_TYPE, AE_EVIDENCE_UNKNOWN_FIELD, err)) < 0)
                return x;
        if ((x = field(o, path, "source", true, &v, p, err)) < 0 ||
            (x = word(v, p, h->cfi_source, sizeof(h->cfi_source), err)) < 0)
                return x;
        if ((x = field(o, path, "enabled", true, &v, p, err)) < 0 ||
            (x = boolean(v, p, &h->cfi_enabled, err)) < 0)
                return x;
        if ((x = field(o, path, "permissive", true, &v, p, err)) < 0 ||
            (x = boolean(v, p, &h->cfi_permissive, err)) < 0)
                return x;
        h->cfi_present = true;
        return 0;
}

static int parse_tk(const json_t *o, const char *path, struct evidence_host *h,
                    struct attest_err *err)
{
        static const char *const keys[] = {"source", "origin", NULL};
        char p[JPATH_MAX];
        json_t *v = NULL;
        int x;

        if ((x = jpath_object(o, path, keys, AE_EVIDENCE_TYPE, AE_EVIDENCE_UNKNOWN_FIELD, err)) < 0)
                return x;
        if ((x = field(o, path, "source", true, &v, p, err)) < 0 ||
            (x = word(v, p, h->tk_source, sizeof(h->tk_source), err)) < 0)
                return x;
        if ((x = field(o, path, "origin", true, &v, p, err)) < 0 ||
            (x = word(v, p, h->tk_origin, sizeof(h->tk_origin), err)) < 0)
                return x;
        h->tk_present = true;
        return 0;
}

static int parse_host(const json_t *o, const char *path, struct evidence_host *h,
                      struct attest_err *err)
{
        static const char *const keys[] = {"kernel",     "cmdline",      "boot_id",
                                           "cfi",        "trusted_keys", "hostname",
                                           "machine_id", "labels",       NULL};
        char p[JPATH_MAX];
        const char *s = NULL;
        size_t n = 0;
        json_t *v = NULL;
        int x;

        if ((x = jpath_object(o, path, keys, AE_EVIDENCE_TYPE, AE_EVIDENCE_UNKNOWN_FIELD, err)) < 0)
                return x;
        if ((x = field(o, path, "kernel", false, &v, p, err)) < 0)
                return x;
        if (v) {
                if ((x = str(v, p, sizeof(h->kernel) - 1, &s, &n, err)) < 0)
                        return x;
                if (n == 0)
                        return jpath_fail(err, -EBADMSG, AE_EVIDENCE_BAD_VALUE, p, "empty");
                for (size_t i = 0; i < n; i++)
                        if (s[i] < 0x21 || s[i] > 0x7e)
                                return jpath_fail(err, -EBADMSG, AE_EVIDENCE_BAD_VALUE, p,
                                                  "byte %zu is not printable", i);
                memcpy(h->kernel, s, n + 1);
        }
        if ((x = field(o, path, "cmdline", false, &v, p, err)) < 0)
                return x;
        if (v) {
                if ((x = str(v, p, EVIDENCE_CMDLINE_MAX, &s, &n, err)) < 0)
                        return x;
                for (size_t i = 0; i < n; i++)
                        if (s[i] < 0x20 || s[i] > 0x7e)
                                return jpath_fail(err, -EBADMSG, AE_EVIDENCE_BAD_VALUE, p,
                                                  "byte %zu is not printable", i);
                if (!(h->cmdline = strdup(s)))
                        return -ENOMEM;
        }
        if ((x = field(o, path, "boot_id", false, &v, p, err)) < 0)
                return x;
        if (v) {
                if ((x = str(v, p, sizeof(h->boot_id) - 1, &s, &n, err)) < 0)
                        return x;
                if (n == 0)
                        return jpath_fail(err, -EBADMSG, AE_EVIDENCE_BAD_VALUE, p, "empty");
                for (size_t i = 0; i < n; i++)
                        if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f') ||
                              s[i] == '-'))
                                return jpath_fail(err, -EBADMSG, AE_EVIDENCE_BAD_VALUE, p,
                                                  "byte %zu is not [0-9a-f-]", i);
                memcpy(h->boot_id, s, n + 1);
        }
        if ((x = field(o, path, "cfi", false, &v, p, err)) < 0 ||
            (v && (x = parse_cfi(v, p, h, err)) < 0))
                return x;
        if ((x = field(o, path, "trusted_keys", false, &v, p, err)) < 0 ||
            (v && (x = parse_tk(v, p, h, err)) < 0))
                return x;
        return evidence_host_identity_members(o, path, h, err);
}

int evidence_from_json_jansson(const char *buf, size_t len, size_t max_ima, struct evidence **ret,
                               struct attest_err *err)
{
        static const char *const keys[] = {"version",  "nonce", "quote", "ima",
                                           "boot_log", "host",  NULL};
        _cleanup_(evidence_freep) struct evidence *ev = NULL;
        json_auto_t *j = NULL;
        char p[JPATH_MAX];
        json_t *v = NULL;
        int x;

        if (len > EVIDENCE_JSON_MAX)
                return attest_fail(err, -E2BIG, AE_EVIDENCE_TOO_BIG,
                                   "$: document of %zu bytes > %u", len, EVIDENCE_JSON_MAX);
        if ((x = jpath_load(buf, len, EVIDENCE_JSON_MAX, AE_EVIDENCE_JSON, &j, err)) < 0)
                return x;
        if ((x = jpath_object(j, "$", keys, AE_EVIDENCE_TYPE, AE_EVIDENCE_UNKNOWN_FIELD, err)) < 0)
                return x;
        if (!(ev = calloc(1, sizeof(*ev))))
                return -ENOMEM;
        if ((x = field(j, "$", "version", true, &v, p, err)) < 0)
                return x;
        if (!json_is_integer(v))
                return jpath_fail(err, -EBADMSG, AE_EVIDENCE_TYPE, p, "not an integer");
        if (json_integer_value(v) != EVIDENCE_VERSION)
                return jpath_fail(err, -EBADMSG, AE_EVIDENCE_VERSION, p,
                                  "version %" JSON_INTEGER_FORMAT " is not supported (1)",
                                  json_integer_value(v));
        if ((x = field(j, "$", "nonce", true, &v, p, err)) < 0 ||
            (x = hexfield(v, p, ev->nonce, sizeof(ev->nonce), 0, &ev->nonce_len, err)) < 0)
                return x;
        if ((x = field(j, "$", "quote", true, &v, p, err)) < 0 ||
            (x = parse_quote(v, p, ev, err)) < 0)
                return x;
        if ((x = field(j, "$", "ima", true, &v, p, err)) < 0 ||
            (x = parse_ima(v, p, max_ima, ev, err)) < 0)
                return x;
        if ((x = field(j, "$", "boot_log", false, &v, p, err)) < 0 ||
            (v && (x = parse_boot(v, p, ev, err)) < 0))
                return x;
        if ((x = field(j, "$", "host", false, &v, p, err)) < 0 ||
            (v && (x = parse_host(v, p, &ev->host, err)) < 0))
                return x;
        *ret = TAKE_PTR(ev);
        return 0;
}
