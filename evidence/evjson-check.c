/* SPDX-License-Identifier: MIT */
/*
 * evidence_from_json's step 2 (evjson-read.c has the why): the fields the walk remembered,
 * checked and decoded in the order of the jansson decoder, base64 straight from the input into
 * the final buffer.
 */
#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "evidence/evjson-read-internal.h"
#include "evidence/evjson.h"
#include "evidence/jpath.h"
#include "evidence/quote.h"
#include "util/hex.h"
#include "util/json-rd.h"

/* ---- step 2: the checks, in the order of the jansson decoder ---- */

static int object(const struct obj *o, const char *path, struct attest_err *err)
{
        char p[JPATH_MAX];
        int e;

        if (!o->is_obj)
                return jpath_fail(err, -EBADMSG, AE_EVIDENCE_TYPE, path, "not an object");
        if (o->unknown) {
                if ((e = evjson_read_join(p, path, &o->key)) < 0)
                        return e;
                return jpath_fail(err, -EBADMSG, AE_EVIDENCE_UNKNOWN_FIELD, p, "unknown field");
        }
        return 0;
}

static int field(const struct slot *s, const char *path, struct attest_err *err)
{
        if (!s->present)
                return jpath_fail(err, -EBADMSG, AE_EVIDENCE_MISSING_FIELD, path, "missing");
        return 0;
}

/*
 * A string of at most max bytes: *ret is the input's bytes, or the unescaped copy in buf (size >
 * max); not NUL terminated.
 */
static int str(const struct slot *v, const char *path, size_t max, char *buf, size_t size,
               const char **ret, size_t *ret_len, struct attest_err *err)
{
        if (v->type != JRD_STRING)
                return jpath_fail(err, -EBADMSG, AE_EVIDENCE_TYPE, path, "not a string");
        if (v->s.len > max)
                return jpath_fail(err, -E2BIG, AE_EVIDENCE_TOO_BIG, path, "%zu bytes > %zu",
                                  v->s.len, max);
        *ret = v->s.p;
        if (v->s.esc) {
                if (jrd_str_copy(&v->s, buf, size) < 0)
                        return -EINVAL; /* size <= max: a caller's bug */
                *ret = buf;
        }
        *ret_len = v->s.len;
        return 0;
}

/* a log offset: an integer, not negative */
static int offset(const struct slot *v, const char *path, uint64_t *ret, struct attest_err *err)
{
        if (v->type != JRD_INT)
                return jpath_fail(err, -EBADMSG, AE_EVIDENCE_TYPE, path, "not an integer");
        if (v->i < 0)
                return jpath_fail(err, -EBADMSG, AE_EVIDENCE_BAD_VALUE, path, "negative");
        *ret = (uint64_t)v->i;
        return 0;
}

static int boolean(const struct slot *v, const char *path, bool *ret, struct attest_err *err)
{
        if (v->type != JRD_TRUE && v->type != JRD_FALSE)
                return jpath_fail(err, -EBADMSG, AE_EVIDENCE_TYPE, path, "not a boolean");
        *ret = v->type == JRD_TRUE;
        return 0;
}

/* Hex of 1..max bytes. */
static int hexfield(const struct slot *v, const char *path, uint8_t *out, size_t max,
                    size_t *ret_len, struct attest_err *err)
{
        char buf[2 * EVIDENCE_NONCE_MAX + 1];
        const char *s = NULL;
        size_t n = 0, got;
        int x;

        if (2 * max >= sizeof(buf))
                return -EINVAL;
        if ((x = str(v, path, 2 * max, buf, sizeof(buf), &s, &n, err)) < 0)
                return x == -E2BIG ? jpath_fail(err, -EBADMSG, AE_EVIDENCE_BAD_HEX, path,
                                                "%zu hex digits, at most %zu bytes wanted",
                                                v->s.len, max)
                                   : x;
        if (hex_decode(s, n, out, max, &got) < 0)
                return jpath_fail(err, -EBADMSG, AE_EVIDENCE_BAD_HEX, path, "not hex");
        if (got == 0)
                return jpath_fail(err, -EBADMSG, AE_EVIDENCE_BAD_HEX, path, "%zu bytes, %zu wanted",
                                  got, max);
        *ret_len = got;
        return 0;
}

/* Base64 from the input straight into a new buffer of at most max bytes; "" gives NULL, 0. */
static int b64field(const struct slot *v, const char *path, size_t max, uint8_t **ret,
                    size_t *ret_len, struct attest_err *err)
{
        _cleanup_free_ uint8_t *out = NULL;
        _cleanup_free_ char *unescaped = NULL;
        const char *s;
        size_t n, got, room;
        int x;

        if (v->type != JRD_STRING)
                return jpath_fail(err, -EBADMSG, AE_EVIDENCE_TYPE, path, "not a string");
        n = v->s.len;
        if (n / 4 > max / 3 + 1)
                return jpath_fail(err, -E2BIG, AE_EVIDENCE_TOO_BIG, path,
                                  "decodes to more than %zu bytes", max);
        if (n == 0) {
                *ret = NULL;
                *ret_len = 0;
                return 0;
        }
        s = v->s.p;
        if (v->s.esc) { /* rare: an encoder that writes "\/" */
                if (!(unescaped = malloc(n + 1)) || jrd_str_copy(&v->s, unescaped, n + 1) < 0)
                        return -ENOMEM;
                s = unescaped;
        }
        room = n / 4 * 3; /* 0 when n < 4: b64_decode refuses that length before writing */
        if (!(out = malloc(room > 0 ? room : 1)))
                return -ENOMEM;
        x = b64_decode(s, n, out, max < room ? max : room, &got);
        if (x == -E2BIG)
                return jpath_fail(err, -E2BIG, AE_EVIDENCE_TOO_BIG, path,
                                  "decodes to more than %zu bytes", max);
        if (x < 0)
                return jpath_fail(err, -EBADMSG, AE_EVIDENCE_BAD_B64, path, "not base64");
        *ret = TAKE_PTR(out);
        *ret_len = got;
        return 0;
}

/* A short identifier-like string ([A-Za-z0-9_.+~-], 1..cap-1 bytes) into a fixed buffer. */
static int word(const struct slot *v, const char *path, char *out, size_t cap,
                struct attest_err *err)
{
        char buf[EVIDENCE_WORD_MAX];
        const char *s = NULL;
        size_t n = 0;
        int x;

        if (cap > sizeof(buf))
                return -EINVAL;
        if ((x = str(v, path, cap - 1, buf, sizeof(buf), &s, &n, err)) < 0)
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

static int check_quote(const struct walk *w, struct evidence *ev, struct attest_err *err)
{
        int x;

        if ((x = object(&w->quote, "$.quote", err)) < 0)
                return x;
        if ((x = field(&w->attest, "$.quote.attest", err)) < 0 ||
            (x = b64field(&w->attest, "$.quote.attest", QUOTE_ATTEST_MAX, &ev->attest,
                          &ev->attest_len, err)) < 0)
                return x;
        if (!ev->attest)
                return jpath_fail(err, -EBADMSG, AE_EVIDENCE_BAD_VALUE, "$.quote.attest", "empty");
        if ((x = field(&w->sig, "$.quote.signature", err)) < 0 ||
            (x = b64field(&w->sig, "$.quote.signature", QUOTE_SIG_MAX, &ev->sig, &ev->sig_len,
                          err)) < 0)
                return x;
        if (!ev->sig)
                return jpath_fail(err, -EBADMSG, AE_EVIDENCE_BAD_VALUE, "$.quote.signature",
                                  "empty");
        if (!w->pcrs.present)
                return jpath_fail(err, -EBADMSG, AE_EVIDENCE_MISSING_FIELD, "$.quote.pcrs",
                                  "missing");
        if (!w->pcrs.is_obj)
                return jpath_fail(err, -EBADMSG, AE_EVIDENCE_TYPE, "$.quote.pcrs", "not an object");
        if (w->pcrs_e) {
                if (err)
                        *err = w->pcrs_err;
                return w->pcrs_e;
        }
        if (!w->pcrs_count)
                return jpath_fail(err, -EBADMSG, AE_EVIDENCE_BAD_VALUE, "$.quote.pcrs",
                                  "no PCR listed");
        return 0;
}

static int check_ima(const struct walk *w, size_t max_ima, struct evidence *ev,
                     struct attest_err *err)
{
        char buf[17];
        const char *s = NULL;
        size_t n = 0;
        int x;

        if ((x = object(&w->ima, "$.ima", err)) < 0)
                return x;
        if ((x = field(&w->offset, "$.ima.offset", err)) < 0 ||
            (x = offset(&w->offset, "$.ima.offset", &ev->ima_offset, err)) < 0)
                return x;
        if ((x = field(&w->format, "$.ima.format", err)) < 0 ||
            (x = str(&w->format, "$.ima.format", 16, buf, sizeof(buf), &s, &n, err)) < 0)
                return x;
        if (n == 6 && memcmp(s, "binary", 6) == 0)
                ev->ima_format = IMA_FORMAT_BINARY;
        else if (n == 5 && memcmp(s, "ascii", 5) == 0)
                ev->ima_format = IMA_FORMAT_ASCII;
        else
                return jpath_fail(err, -EBADMSG, AE_EVIDENCE_BAD_VALUE, "$.ima.format",
                                  "not \"binary\" or \"ascii\"");
        if ((x = field(&w->entries, "$.ima.entries", err)) < 0 ||
            (x = b64field(&w->entries, "$.ima.entries", max_ima, &ev->ima, &ev->ima_len, err)) < 0)
                return x;
        return 0;
}

/* "boot_log": sent means non-NULL, also with no new bytes ("data":""). */
static int check_boot(const struct walk *w, struct evidence *ev, struct attest_err *err)
{
        int x;

        if ((x = object(&w->boot, "$.boot_log", err)) < 0)
                return x;
        if ((x = field(&w->boot_offset, "$.boot_log.offset", err)) < 0 ||
            (x = offset(&w->boot_offset, "$.boot_log.offset", &ev->boot_offset, err)) < 0)
                return x;
        if ((x = field(&w->boot_data, "$.boot_log.data", err)) < 0 ||
            (x = b64field(&w->boot_data, "$.boot_log.data", EVIDENCE_BOOT_LOG_MAX, &ev->boot_log,
                          &ev->boot_log_len, err)) < 0)
                return x;
        if (!ev->boot_log && !(ev->boot_log = malloc(1)))
                return -ENOMEM;
        return 0;
}

static int check_cfi(const struct walk *w, struct evidence_host *h, struct attest_err *err)
{
        int x;

        if ((x = object(&w->cfi, "$.host.cfi", err)) < 0)
                return x;
        if ((x = field(&w->cfi_source, "$.host.cfi.source", err)) < 0 ||
            (x = word(&w->cfi_source, "$.host.cfi.source", h->cfi_source, sizeof(h->cfi_source),
                      err)) < 0)
                return x;
        if ((x = field(&w->cfi_enabled, "$.host.cfi.enabled", err)) < 0 ||
            (x = boolean(&w->cfi_enabled, "$.host.cfi.enabled", &h->cfi_enabled, err)) < 0)
                return x;
        if ((x = field(&w->cfi_permissive, "$.host.cfi.permissive", err)) < 0 ||
            (x = boolean(&w->cfi_permissive, "$.host.cfi.permissive", &h->cfi_permissive, err)) < 0)
                return x;
        h->cfi_present = true;
        return 0;
}

static int check_tk(const struct walk *w, struct evidence_host *h, struct attest_err *err)
{
        int x;

        if ((x = object(&w->tk, "$.host.trusted_keys", err)) < 0)
                return x;
        if ((x = field(&w->tk_source, "$.host.trusted_keys.source", err)) < 0 ||
            (x = word(&w->tk_source, "$.host.trusted_keys.source", h->tk_source,
                      sizeof(h->tk_source), err)) < 0)
                return x;
        if ((x = field(&w->tk_origin, "$.host.trusted_keys.origin", err)) < 0 ||
            (x = word(&w->tk_origin, "$.host.trusted_keys.origin", h->tk_origin,
                      sizeof(h->tk_origin), err)) < 0)
                return x;
        h->tk_present = true;
        return 0;
}

/* A string of the identity syntax (evidence/evidence.h) into out (cap bytes with the NUL). */
static int ident(const struct slot *v, const char *path, bool (*valid)(const char *, size_t),
                 const char *what, char *out, size_t cap, struct attest_err *err)
{
        char buf[EVIDENCE_HOSTNAME_MAX + 1];
        const char *s = NULL;
        size_t n = 0;
        int x;

        if (cap > sizeof(buf))
                return -EINVAL;
        if ((x = str(v, path, cap - 1, buf, sizeof(buf), &s, &n, err)) < 0)
                return x;
        if (!valid(s, n))
                return jpath_fail(err, -EBADMSG, AE_EVIDENCE_BAD_VALUE, path, "not %s", what);
        memcpy(out, s, n);
        out[n] = '\0';
        return 0;
}

static int check_labels(const struct walk *w, struct evidence_host *h, struct attest_err *err)
{
        const char *path = "$.host.labels";
        char p[JPATH_MAX];
        int x;

        if (!w->labels.is_obj)
                return jpath_fail(err, -EBADMSG, AE_EVIDENCE_TYPE, path, "not an object");
        if (w->n_labels > EVIDENCE_LABELS_MAX)
                return jpath_fail(err, -E2BIG, AE_EVIDENCE_TOO_BIG, path, "%u labels > %d",
                                  w->n_labels, EVIDENCE_LABELS_MAX);
        for (unsigned i = 0; i < w->n_labels; i++) {
                const struct jrd_str *k = &w->label_key[i];
                char key[EVIDENCE_LABEL_KEY_MAX + 1];

                if (k->len > EVIDENCE_LABEL_KEY_MAX || jrd_str_copy(k, key, sizeof(key)) < 0 ||
                    !evidence_label_key_valid(key, k->len))
                        return jpath_fail(err, -EBADMSG, AE_EVIDENCE_BAD_VALUE, path,
                                          EVIDENCE_LABEL_KEY_WHY, i, EVIDENCE_LABEL_KEY_MAX);
                jpath_join(p, path, key);
                if ((x = ident(&w->label_val[i], p, evidence_label_value_valid,
                               EVIDENCE_LABEL_VALUE_WHAT, h->labels[i].value,
                               sizeof(h->labels[i].value), err)) < 0)
                        return x;
                memcpy(h->labels[i].key, key, k->len + 1);
        }
        h->n_labels = w->n_labels;
        h->labels_present = true;
        return 0;
}

static int check_host(const struct walk *w, struct evidence_host *h, struct attest_err *err)
{
        char buf[sizeof(h->kernel)];
        const char *s = NULL;
        size_t n = 0;
        int x;

        if ((x = object(&w->host, "$.host", err)) < 0)
                return x;
        if (w->kernel.present) {
                if ((x = str(&w->kernel, "$.host.kernel", sizeof(h->kernel) - 1, buf, sizeof(buf),
                             &s, &n, err)) < 0)
                        return x;
                if (n == 0)
                        return jpath_fail(err, -EBADMSG, AE_EVIDENCE_BAD_VALUE, "$.host.kernel",
                                          "empty");
                for (size_t i = 0; i < n; i++)
                        if ((unsigned char)s[i] < 0x21 || (unsigned char)s[i] > 0x7e)
                                return jpath_fail(err, -EBADMSG, AE_EVIDENCE_BAD_VALUE,
                                                  "$.host.kernel", "byte %zu is not printable", i);
                memcpy(h->kernel, s, n);
                h->kernel[n] = '\0';
        }
        if (w->cmdline.present) {
                const struct slot *v = &w->cmdline;

                if (v->type != JRD_STRING)
                        return jpath_fail(err, -EBADMSG, AE_EVIDENCE_TYPE, "$.host.cmdline",
                                          "not a string");
                if (v->s.len > EVIDENCE_CMDLINE_MAX)
                        return jpath_fail(err, -E2BIG, AE_EVIDENCE_TOO_BIG, "$.host.cmdline",
                                          "%zu bytes > %d", v->s.len, EVIDENCE_CMDLINE_MAX);
                if (!(h->cmdline = malloc(v->s.len + 1)))
                        return -ENOMEM;
                if (jrd_str_copy(&v->s, h->cmdline, v->s.len + 1) < 0)
                        return -EINVAL;
                for (size_t i = 0; i < v->s.len; i++)
                        if ((unsigned char)h->cmdline[i] < 0x20 ||
                            (unsigned char)h->cmdline[i] > 0x7e)
                                return jpath_fail(err, -EBADMSG, AE_EVIDENCE_BAD_VALUE,
                                                  "$.host.cmdline", "byte %zu is not printable", i);
        }
        if (w->boot_id.present) {
                if ((x = str(&w->boot_id, "$.host.boot_id", sizeof(h->boot_id) - 1, buf,
                             sizeof(buf), &s, &n, err)) < 0)
                        return x;
                if (n == 0)
                        return jpath_fail(err, -EBADMSG, AE_EVIDENCE_BAD_VALUE, "$.host.boot_id",
                                          "empty");
                for (size_t i = 0; i < n; i++)
                        if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f') ||
                              s[i] == '-'))
                                return jpath_fail(err, -EBADMSG, AE_EVIDENCE_BAD_VALUE,
                                                  "$.host.boot_id", "byte %zu is not [0-9a-f-]", i);
                memcpy(h->boot_id, s, n);
                h->boot_id[n] = '\0';
        }
        if (w->cfi.present && (x = check_cfi(w, h, err)) < 0)
                return x;
        if (w->tk.present && (x = check_tk(w, h, err)) < 0)
                return x;
        if (w->hostname.present &&
            (x = ident(&w->hostname, "$.host.hostname", evidence_hostname_valid,
                       EVIDENCE_HOSTNAME_WHAT, h->hostname, sizeof(h->hostname), err)) < 0)
                return x;
        if (w->machine_id.present &&
            (x = ident(&w->machine_id, "$.host.machine_id", evidence_machine_id_valid,
                       EVIDENCE_MACHINE_ID_WHAT, h->machine_id, sizeof(h->machine_id), err)) < 0)
                return x;
        if (w->labels.present && (x = check_labels(w, h, err)) < 0)
                return x;
        return 0;
}

int evjson_read_check(const struct walk *w, size_t max_ima, struct evidence *ev,
                      struct attest_err *err)
{
        int x;

        if ((x = object(&w->top, "$", err)) < 0)
                return x;
        if ((x = field(&w->version, "$.version", err)) < 0)
                return x;
        if (w->version.type != JRD_INT)
                return jpath_fail(err, -EBADMSG, AE_EVIDENCE_TYPE, "$.version", "not an integer");
        if (w->version.i != EVIDENCE_VERSION)
                return jpath_fail(err, -EBADMSG, AE_EVIDENCE_VERSION, "$.version",
                                  "version %" PRId64 " is not supported (1)", w->version.i);
        if ((x = field(&w->nonce, "$.nonce", err)) < 0 ||
            (x = hexfield(&w->nonce, "$.nonce", ev->nonce, sizeof(ev->nonce), &ev->nonce_len,
                          err)) < 0)
                return x;
        if (!w->quote.present)
                return jpath_fail(err, -EBADMSG, AE_EVIDENCE_MISSING_FIELD, "$.quote", "missing");
        if ((x = check_quote(w, ev, err)) < 0)
                return x;
        if (!w->ima.present)
                return jpath_fail(err, -EBADMSG, AE_EVIDENCE_MISSING_FIELD, "$.ima", "missing");
        if ((x = check_ima(w, max_ima, ev, err)) < 0)
                return x;
        if (w->boot.present && (x = check_boot(w, ev, err)) < 0)
                return x;
        if (w->host.present && (x = check_host(w, &ev->host, err)) < 0)
                return x;
        return 0;
}
