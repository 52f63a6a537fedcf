/* SPDX-License-Identifier: MIT */
/* Evidence JSON codec: round trip, every field's validation with the JSON path in the error,
 * unknown fields at every level, caps, hex and base64 errors, truncation. */
#include <check.h>
#include <errno.h>
#include <jansson.h>

#include "evidence/evjson.h"
#include "util/hex.h"
#include "tests/unit/testutil.h"

static struct evidence *sample(void)
{
        struct evidence *ev = calloc(1, sizeof(*ev));

        ck_assert_ptr_nonnull(ev);
        ev->nonce_len = 32;
        for (size_t i = 0; i < 32; i++)
                ev->nonce[i] = (uint8_t)i;
        ev->attest_len = 145;
        ev->attest = malloc(ev->attest_len);
        memset(ev->attest, 0xa5, ev->attest_len);
        ev->sig_len = 262;
        ev->sig = malloc(ev->sig_len);
        memset(ev->sig, 0x5a, ev->sig_len);
        for (unsigned i = 0; i <= 10; i++) {
                ev->pcrs.have[BANK_SHA256] |= 1u << i;
                memset(ev->pcrs.v[BANK_SHA256][i], (int)i, 32);
        }
        ev->pcrs.have[BANK_SHA1] = 1u << 10;
        memset(ev->pcrs.v[BANK_SHA1][10], 0x10, 20);
        ev->ima_offset = 7;
        ev->ima_format = IMA_FORMAT_BINARY;
        ev->ima_len = 1000;
        ev->ima = malloc(ev->ima_len);
        for (size_t i = 0; i < ev->ima_len; i++)
                ev->ima[i] = (uint8_t)(i * 7);
        ev->boot_offset = 5;
        ev->boot_log_len = 301;
        ev->boot_log = malloc(ev->boot_log_len);
        for (size_t i = 0; i < ev->boot_log_len; i++)
                ev->boot_log[i] = (uint8_t)(i * 13 + 1);
        snprintf(ev->host.kernel, sizeof(ev->host.kernel), "6.1.0-attest");
        ev->host.cmdline = strdup("console=ttyS0 ima_policy=tcb trusted.source=tpm");
        snprintf(ev->host.boot_id, sizeof(ev->host.boot_id),
                 "0f3d6c1e-7d0a-4d2b-9e55-3a0a9f1c2b44");
        ev->host.cfi_present = true;
        snprintf(ev->host.cfi_source, sizeof(ev->host.cfi_source), "config");
        ev->host.cfi_enabled = true;
        ev->host.tk_present = true;
        snprintf(ev->host.tk_source, sizeof(ev->host.tk_source), "tpm");
        snprintf(ev->host.tk_origin, sizeof(ev->host.tk_origin), "cmdline");
        snprintf(ev->host.hostname, sizeof(ev->host.hostname), "web-01.fra.example");
        snprintf(ev->host.machine_id, sizeof(ev->host.machine_id),
                 "0123456789abcdef0123456789abcdef");
        ev->host.labels_present = true;
        ev->host.n_labels = 2;
        snprintf(ev->host.labels[0].key, sizeof(ev->host.labels[0].key), "role");
        snprintf(ev->host.labels[0].value, sizeof(ev->host.labels[0].value), "web");
        snprintf(ev->host.labels[1].key, sizeof(ev->host.labels[1].key), "dc");
        snprintf(ev->host.labels[1].value, sizeof(ev->host.labels[1].value), "fra-1");
        return ev;
}

static char *sample_json(void)
{
        struct evidence *ev = sample();
        char *s = NULL;

        ck_assert_int_eq(evidence_to_json(ev, &s), 0);
        evidence_free(ev);
        return s;
}

START_TEST(test_round_trip_keeps_every_field)
{
        struct evidence *a = sample(), *b = NULL;
        struct attest_err err = {0};
        char *s = NULL, *s2 = NULL;

        ck_assert_int_eq(evidence_to_json(a, &s), 0);
        ck_assert_msg(evidence_from_json(s, strlen(s), 1 << 20, &b, &err) == 0, "%s", err.msg);
        ck_assert_uint_eq(b->nonce_len, a->nonce_len);
        ck_assert_mem_eq(b->nonce, a->nonce, a->nonce_len);
        ck_assert_uint_eq(b->attest_len, a->attest_len);
        ck_assert_mem_eq(b->attest, a->attest, a->attest_len);
        ck_assert_uint_eq(b->sig_len, a->sig_len);
        ck_assert_mem_eq(b->sig, a->sig, a->sig_len);
        ck_assert_mem_eq(&b->pcrs, &a->pcrs, sizeof(a->pcrs));
        ck_assert_uint_eq(b->ima_offset, 7);
        ck_assert_int_eq(b->ima_format, IMA_FORMAT_BINARY);
        ck_assert_uint_eq(b->ima_len, a->ima_len);
        ck_assert_mem_eq(b->ima, a->ima, a->ima_len);
        ck_assert_uint_eq(b->boot_offset, 5);
        ck_assert_uint_eq(b->boot_log_len, a->boot_log_len);
        ck_assert_mem_eq(b->boot_log, a->boot_log, a->boot_log_len);
        ck_assert_str_eq(b->host.kernel, a->host.kernel);
        ck_assert_str_eq(b->host.cmdline, a->host.cmdline);
        ck_assert_str_eq(b->host.boot_id, a->host.boot_id);
        ck_assert(b->host.cfi_present && b->host.cfi_enabled && !b->host.cfi_permissive);
        ck_assert_str_eq(b->host.cfi_source, "config");
        ck_assert(b->host.tk_present);
        ck_assert_str_eq(b->host.tk_source, "tpm");
        ck_assert_str_eq(b->host.tk_origin, "cmdline");
        ck_assert_str_eq(b->host.hostname, "web-01.fra.example");
        ck_assert_str_eq(b->host.machine_id, "0123456789abcdef0123456789abcdef");
        ck_assert(b->host.labels_present);
        ck_assert_uint_eq(b->host.n_labels, 2);
        ck_assert_str_eq(b->host.labels[0].key, "role");
        ck_assert_str_eq(b->host.labels[0].value, "web");
        ck_assert_str_eq(b->host.labels[1].key, "dc");
        ck_assert_str_eq(b->host.labels[1].value, "fra-1");
        /* encoding the decoded evidence gives the same text */
        ck_assert_int_eq(evidence_to_json(b, &s2), 0);
        ck_assert_str_eq(s, s2);
        free(s);
        free(s2);
        evidence_free(a);
        evidence_free(b);
}
END_TEST

START_TEST(test_minimal_evidence_without_host_or_log)
{
        const char *j = "{\"version\":1,\"nonce\":\"00ff\",\"quote\":{\"attest\":\"AAAA\","
                        "\"signature\":\"AAAA\",\"pcrs\":{\"sha256\":{\"10\":\"" /* 32 bytes */
                        "0000000000000000000000000000000000000000000000000000000000000000\"}}},"
                        "\"ima\":{\"offset\":0,\"format\":\"ascii\",\"entries\":\"\"}}";
        struct evidence *ev = NULL;
        struct attest_err err = {0};

        ck_assert_msg(evidence_from_json(j, strlen(j), 100, &ev, &err) == 0, "%s", err.msg);
        ck_assert_ptr_null(ev->ima);
        ck_assert_uint_eq(ev->ima_len, 0);
        ck_assert_int_eq(ev->ima_format, IMA_FORMAT_ASCII);
        ck_assert(!ev->host.cfi_present && !ev->host.tk_present && !ev->host.cmdline);
        ck_assert_str_eq(ev->host.kernel, "");
        ck_assert_str_eq(ev->host.hostname, "");
        ck_assert_str_eq(ev->host.machine_id, "");
        ck_assert(!ev->host.labels_present && ev->host.n_labels == 0);
        ck_assert_uint_eq(ev->pcrs.have[BANK_SHA256], 1u << 10);
        evidence_free(ev);
}
END_TEST

/* Set (or with value NULL delete) the member at a dotted path of the sample and decode it. */
static int mutate(const char *path, const char *value, size_t max_ima, struct attest_err *err)
{
        char *s = sample_json(), *out;
        json_t *root = json_loads(s, 0, NULL), *o = root;
        char buf[256], *save = NULL, *tok, *next;
        struct evidence *ev = NULL;
        int x;

        ck_assert_ptr_nonnull(root);
        snprintf(buf, sizeof(buf), "%s", path);
        tok = strtok_r(buf, ".", &save);
        while ((next = strtok_r(NULL, ".", &save))) {
                o = json_object_get(o, tok);
                ck_assert_msg(o != NULL, "no %s in the sample", tok);
                tok = next;
        }
        if (value) {
                json_t *v = json_loads(value, JSON_DECODE_ANY, NULL);

                ck_assert_msg(v != NULL, "bad test value %s", value);
                json_object_set_new(o, tok, v);
        } else {
                ck_assert_int_eq(json_object_del(o, tok), 0);
        }
        out = json_dumps(root, JSON_COMPACT);
        json_decref(root);
        memset(err, 0, sizeof(*err));
        x = evidence_from_json(out, strlen(out), max_ima, &ev, err);
        evidence_free(ev);
        free(out);
        free(s);
        return x;
}

static const struct bad {
        const char *path, *value; /* value NULL: delete the member */
        int e;
        enum attest_code code;
        const char *msg;
} bad[] = {
        {"version", "2", -EBADMSG, AE_EVIDENCE_VERSION, "$.version: "},
        {"version", "\"1\"", -EBADMSG, AE_EVIDENCE_TYPE, "$.version: not an integer"},
        {"version", NULL, -EBADMSG, AE_EVIDENCE_MISSING_FIELD, "$.version: missing"},
        {"extra", "1", -EBADMSG, AE_EVIDENCE_UNKNOWN_FIELD, "$.extra: unknown field"},
        {"nonce", "\"0g\"", -EBADMSG, AE_EVIDENCE_BAD_HEX, "$.nonce: not hex"},
        {"nonce", "\"abc\"", -EBADMSG, AE_EVIDENCE_BAD_HEX, "$.nonce: not hex"},
        {"nonce", "\"\"", -EBADMSG, AE_EVIDENCE_BAD_HEX, "$.nonce: 0 bytes"},
        {"nonce", "7", -EBADMSG, AE_EVIDENCE_TYPE, "$.nonce: not a string"},
        {"nonce",
         "\"000000000000000000000000000000000000000000000000000000000000000000000000000000000000000"
         "000000000000000000000000000000000000000000\"",
         -EBADMSG, AE_EVIDENCE_BAD_HEX, "$.nonce: "},
        {"quote", "[]", -EBADMSG, AE_EVIDENCE_TYPE, "$.quote: not an object"},
        {"quote.x", "1", -EBADMSG, AE_EVIDENCE_UNKNOWN_FIELD, "$.quote.x: unknown field"},
        {"quote.attest", NULL, -EBADMSG, AE_EVIDENCE_MISSING_FIELD, "$.quote.attest: missing"},
        {"quote.attest", "\"AAA\"", -EBADMSG, AE_EVIDENCE_BAD_B64, "$.quote.attest: not base64"},
        {"quote.attest", "\"AA=A\"", -EBADMSG, AE_EVIDENCE_BAD_B64, "$.quote.attest: not base64"},
        {"quote.attest", "\"AB==\"", -EBADMSG, AE_EVIDENCE_BAD_B64, "$.quote.attest: not base64"},
        {"quote.attest", "\"\"", -EBADMSG, AE_EVIDENCE_BAD_VALUE, "$.quote.attest: empty"},
        {"quote.signature", "\"*AAA\"", -EBADMSG, AE_EVIDENCE_BAD_B64, "$.quote.signature: "},
        {"quote.pcrs", "{}", -EBADMSG, AE_EVIDENCE_BAD_VALUE, "$.quote.pcrs: no PCR listed"},
        {"quote.pcrs.md5", "{}", -EBADMSG, AE_EVIDENCE_UNKNOWN_FIELD, "$.quote.pcrs.md5: "},
        {"quote.pcrs.sha256.24", "\"00\"", -EBADMSG, AE_EVIDENCE_UNKNOWN_FIELD,
         "$.quote.pcrs.sha256.24: not a PCR index"},
        {"quote.pcrs.sha256.07", "\"00\"", -EBADMSG, AE_EVIDENCE_UNKNOWN_FIELD,
         "$.quote.pcrs.sha256.07: "},
        {"quote.pcrs.sha256.x", "\"00\"", -EBADMSG, AE_EVIDENCE_UNKNOWN_FIELD,
         "$.quote.pcrs.sha256.x: "},
        {"quote.pcrs.sha256.10", "\"zz\"", -EBADMSG, AE_EVIDENCE_BAD_HEX,
         "$.quote.pcrs.sha256.10: not a sha256 digest (64 hex digits)"},
        {"quote.pcrs.sha256.10", "\"00\"", -EBADMSG, AE_EVIDENCE_BAD_HEX,
         "$.quote.pcrs.sha256.10: not a sha256 digest"},
        {"quote.pcrs.sha1.10",
         "\"0000000000000000000000000000000000000000000000000000000000000000\"", -EBADMSG,
         AE_EVIDENCE_BAD_HEX, "$.quote.pcrs.sha1.10: not a sha1 digest (40 hex digits)"},
        {"quote.pcrs.sha256", "[]", -EBADMSG, AE_EVIDENCE_TYPE, "$.quote.pcrs.sha256: not an obj"},
        {"ima.offset", "-1", -EBADMSG, AE_EVIDENCE_BAD_VALUE, "$.ima.offset: negative"},
        {"ima.offset", "1.5", -EBADMSG, AE_EVIDENCE_TYPE, "$.ima.offset: not an integer"},
        {"ima.offset", NULL, -EBADMSG, AE_EVIDENCE_MISSING_FIELD, "$.ima.offset: missing"},
        {"ima.format", "\"yaml\"", -EBADMSG, AE_EVIDENCE_BAD_VALUE, "$.ima.format: "},
        {"ima.entries", "\"@@@@\"", -EBADMSG, AE_EVIDENCE_BAD_B64, "$.ima.entries: not base64"},
        {"ima.y", "0", -EBADMSG, AE_EVIDENCE_UNKNOWN_FIELD, "$.ima.y: unknown field"},
        {"boot_log", "[]", -EBADMSG, AE_EVIDENCE_TYPE, "$.boot_log: not an object"},
        {"boot_log.x", "1", -EBADMSG, AE_EVIDENCE_UNKNOWN_FIELD, "$.boot_log.x: unknown field"},
        {"boot_log.offset", NULL, -EBADMSG, AE_EVIDENCE_MISSING_FIELD,
         "$.boot_log.offset: missing"},
        {"boot_log.offset", "-1", -EBADMSG, AE_EVIDENCE_BAD_VALUE, "$.boot_log.offset: negative"},
        {"boot_log.offset", "\"0\"", -EBADMSG, AE_EVIDENCE_TYPE,
         "$.boot_log.offset: not an integer"},
        {"boot_log.data", NULL, -EBADMSG, AE_EVIDENCE_MISSING_FIELD, "$.boot_log.data: missing"},
        {"boot_log.data", "\"AB==\"", -EBADMSG, AE_EVIDENCE_BAD_B64, "$.boot_log.data: not base64"},
        {"boot_log.data", "7", -EBADMSG, AE_EVIDENCE_TYPE, "$.boot_log.data: not a string"},
        {"host", "\"x\"", -EBADMSG, AE_EVIDENCE_TYPE, "$.host: not an object"},
        {"host.z", "0", -EBADMSG, AE_EVIDENCE_UNKNOWN_FIELD, "$.host.z: unknown field"},
        {"host.kernel", "\"6.1 0\"", -EBADMSG, AE_EVIDENCE_BAD_VALUE, "$.host.kernel: byte 3"},
        {"host.kernel", "\"\"", -EBADMSG, AE_EVIDENCE_BAD_VALUE, "$.host.kernel: empty"},
        {"host.cmdline", "\"a\\nb\"", -EBADMSG, AE_EVIDENCE_BAD_VALUE, "$.host.cmdline: byte 1"},
        {"host.boot_id", "\"XYZ\"", -EBADMSG, AE_EVIDENCE_BAD_VALUE, "$.host.boot_id: byte 0"},
        {"host.cfi", "true", -EBADMSG, AE_EVIDENCE_TYPE, "$.host.cfi: not an object"},
        {"host.cfi.enabled", "1", -EBADMSG, AE_EVIDENCE_TYPE, "$.host.cfi.enabled: not a bool"},
        {"host.cfi.permissive", NULL, -EBADMSG, AE_EVIDENCE_MISSING_FIELD,
         "$.host.cfi.permissive: missing"},
        {"host.cfi.source", "\"a b\"", -EBADMSG, AE_EVIDENCE_BAD_VALUE, "$.host.cfi.source: "},
        {"host.cfi.mode", "\"kcfi\"", -EBADMSG, AE_EVIDENCE_UNKNOWN_FIELD, "$.host.cfi.mode: "},
        {"host.trusted_keys.origin", NULL, -EBADMSG, AE_EVIDENCE_MISSING_FIELD,
         "$.host.trusted_keys.origin: missing"},
        {"host.trusted_keys.source", "\"\"", -EBADMSG, AE_EVIDENCE_BAD_VALUE,
         "$.host.trusted_keys.source: empty"},
        {"host.trusted_keys.source", "\"0123456789012345678901234567890123\"", -E2BIG,
         AE_EVIDENCE_TOO_BIG, "$.host.trusted_keys.source: 34 bytes > 31"},
        {"host.hostname", "\"a b\"", -EBADMSG, AE_EVIDENCE_BAD_VALUE,
         "$.host.hostname: not a host name"},
        {"host.hostname", "\"\"", -EBADMSG, AE_EVIDENCE_BAD_VALUE, "$.host.hostname: not a host"},
        {"host.hostname", "\"web\\n1\"", -EBADMSG, AE_EVIDENCE_BAD_VALUE, "$.host.hostname: "},
        {"host.hostname", "7", -EBADMSG, AE_EVIDENCE_TYPE, "$.host.hostname: not a string"},
        {"host.machine_id", "\"0123456789ABCDEF0123456789abcdef\"", -EBADMSG, AE_EVIDENCE_BAD_VALUE,
         "$.host.machine_id: not 32 lower-case hex digits"},
        {"host.machine_id", "\"0123456789abcdef0123456789abcde\"", -EBADMSG, AE_EVIDENCE_BAD_VALUE,
         "$.host.machine_id: not 32"},
        {"host.machine_id", "\"0123456789abcdef0123456789abcdef0\"", -E2BIG, AE_EVIDENCE_TOO_BIG,
         "$.host.machine_id: 33 bytes > 32"},
        {"host.labels", "[]", -EBADMSG, AE_EVIDENCE_TYPE, "$.host.labels: not an object"},
        {"host.labels.Role", "\"x\"", -EBADMSG, AE_EVIDENCE_BAD_VALUE,
         "$.host.labels: label key 2: not 1..63"},
        {"host.labels.-x", "\"x\"", -EBADMSG, AE_EVIDENCE_BAD_VALUE, "$.host.labels: label key"},
        {"host.labels.role", "\"a b\"", -EBADMSG, AE_EVIDENCE_BAD_VALUE,
         "$.host.labels.role: not a label value"},
        {"host.labels.role", "\"\"", -EBADMSG, AE_EVIDENCE_BAD_VALUE, "$.host.labels.role: not"},
        {"host.labels.role", "1", -EBADMSG, AE_EVIDENCE_TYPE, "$.host.labels.role: not a string"},
        {"host.labels.role", "\"0123456789012345678901234567890123456789012345678901234567890123\"",
         -E2BIG, AE_EVIDENCE_TOO_BIG, "$.host.labels.role: 64 bytes > 63"},
        {"host.trusted_keys.a b", "0", -EBADMSG, AE_EVIDENCE_UNKNOWN_FIELD,
         "$.host.trusted_keys[\"a b\"]: unknown field"},
};

START_TEST(test_each_bad_field_is_named_by_its_path)
{
        const struct bad *b = &bad[_i];
        struct attest_err err = {0};
        int x = mutate(b->path, b->value, 1 << 20, &err);

        ck_assert_msg(x == b->e, "%s=%s: got %d (%s: %s)", b->path, b->value ? b->value : "-", x,
                      attest_code_name(err.code), err.msg);
        ck_assert_msg(err.code == b->code, "%s: code %s, want %s", b->path,
                      attest_code_name(err.code), attest_code_name(b->code));
        ck_assert_msg(strncmp(err.msg, b->msg, strlen(b->msg)) == 0, "%s: msg '%s', want '%s...'",
                      b->path, err.msg, b->msg);
}
END_TEST

/* Label keys and values at their caps, and the label count at cap - 1, cap and cap + 1. */
START_TEST(test_identity_caps)
{
        static const size_t counts[] = {EVIDENCE_LABELS_MAX - 1, EVIDENCE_LABELS_MAX,
                                        EVIDENCE_LABELS_MAX + 1};
        char host[EVIDENCE_HOSTNAME_MAX + 3], labels[8192], v[EVIDENCE_LABEL_VALUE_MAX + 3];
        struct attest_err err = {0};
        size_t n;

        for (size_t c = 0; c < ARRAY_SIZE(counts); c++) {
                /* keys and values at their caps: 63 bytes each */
                n = (size_t)snprintf(labels, sizeof(labels), "{");
                for (size_t i = 0; i < counts[c]; i++)
                        n += (size_t)snprintf(labels + n, sizeof(labels) - n,
                                              "%s\"k%062zu\":\"%063zu\"", i ? "," : "", i, i);
                snprintf(labels + n, sizeof(labels) - n, "}");
                ck_assert_int_eq(mutate("host.labels", labels, 1 << 20, &err),
                                 counts[c] > EVIDENCE_LABELS_MAX ? -E2BIG : 0);
        }
        ck_assert_int_eq(err.code, AE_EVIDENCE_TOO_BIG);
        ck_assert_msg(strstr(err.msg, "$.host.labels: 33 labels > 32"), "%s", err.msg);
        /* a host name of 253 bytes is fine, 254 is not */
        for (size_t len = EVIDENCE_HOSTNAME_MAX; len <= EVIDENCE_HOSTNAME_MAX + 1; len++) {
                host[0] = '"';
                memset(host + 1, 'a', len);
                host[len + 1] = '\0';
                snprintf(labels, sizeof(labels), "%s\"", host);
                ck_assert_int_eq(mutate("host.hostname", labels, 1 << 20, &err),
                                 len > EVIDENCE_HOSTNAME_MAX ? -E2BIG : 0);
        }
        /* a value of 63 bytes is fine */
        v[0] = '"';
        memset(v + 1, 'Z', EVIDENCE_LABEL_VALUE_MAX);
        v[EVIDENCE_LABEL_VALUE_MAX + 1] = '"';
        v[EVIDENCE_LABEL_VALUE_MAX + 2] = '\0';
        ck_assert_int_eq(mutate("host.labels.role", v, 1 << 20, &err), 0);
        /* no labels at all is a report too: the host has none now */
        {
                const char *j = "{\"version\":1,\"nonce\":\"00ff\",\"quote\":{\"attest\":\"AAAA\","
                                "\"signature\":\"AAAA\",\"pcrs\":{\"sha1\":{\"10\":\""
                                "0000000000000000000000000000000000000000\"}}},"
                                "\"ima\":{\"offset\":0,\"format\":\"ascii\",\"entries\":\"\"},"
                                "\"host\":{\"labels\":{}}}";
                struct evidence *ev = NULL;
                char *out = NULL;

                ck_assert_msg(evidence_from_json(j, strlen(j), 100, &ev, &err) == 0, "%s", err.msg);
                ck_assert(ev->host.labels_present && ev->host.n_labels == 0);
                ck_assert_int_eq(evidence_to_json(ev, &out), 0);
                ck_assert_str_eq(out, j);
                free(out);
                evidence_free(ev);
        }
}
END_TEST

/* The enrolment body's "host" comes from the evidence's writer: the same members, read back by
 * the daemon's identity reader, nothing else; an empty label set is written as a report too. */
START_TEST(test_identity_alone_is_the_evidence_host_members)
{
        struct evidence_host h = {0}, back = {0};
        struct attest_err err = {0};
        json_t *o;
        char *out = NULL;

        ck_assert_int_eq(evidence_host_identity_to_json(&h, &out), 0);
        ck_assert_str_eq(out, "{}");
        free(out);
        h.labels_present = true;
        ck_assert_int_eq(evidence_host_identity_to_json(&h, &out), 0);
        ck_assert_str_eq(out, "{\"labels\":{}}");
        free(out);
        snprintf(h.hostname, sizeof(h.hostname), "web-1.example");
        snprintf(h.machine_id, sizeof(h.machine_id), "%s", "0123456789abcdef0123456789abcdef");
        h.n_labels = 2;
        snprintf(h.labels[0].key, sizeof(h.labels[0].key), "role");
        snprintf(h.labels[0].value, sizeof(h.labels[0].value), "web");
        snprintf(h.labels[1].key, sizeof(h.labels[1].key), "zone");
        snprintf(h.labels[1].value, sizeof(h.labels[1].value), "a");
        h.kernel[0] = 'x'; /* not an identity member: not written */
        ck_assert_int_eq(evidence_host_identity_to_json(&h, &out), 0);
        ck_assert_str_eq(out, "{\"hostname\":\"web-1.example\",\"machine_id\":"
                              "\"0123456789abcdef0123456789abcdef\",\"labels\":{\"role\":\"web\","
                              "\"zone\":\"a\"}}");
        o = json_loads(out, 0, NULL);
        ck_assert_ptr_nonnull(o);
        ck_assert_msg(evidence_host_identity_from_json(o, "$.host", &back, &err) == 0, "%s",
                      err.msg);
        ck_assert_str_eq(back.hostname, h.hostname);
        ck_assert_str_eq(back.machine_id, h.machine_id);
        ck_assert_uint_eq(back.n_labels, 2);
        ck_assert_str_eq(back.labels[1].value, "a");
        json_decref(o);
        free(out);
        /* what the evidence writer refuses, this refuses too */
        h.hostname[0] = '\n';
        ck_assert_int_eq(evidence_host_identity_to_json(&h, &out), -EINVAL);
}
END_TEST

START_TEST(test_control_bytes_in_an_unknown_key_are_escaped)
{
        const char *j = "{\"version\":1,\"a\\u001b[0m\\n\":1}";
        struct evidence *ev = NULL;
        struct attest_err err = {0};

        ck_assert_int_eq(evidence_from_json(j, strlen(j), 0, &ev, &err), -EBADMSG);
        ck_assert_int_eq(err.code, AE_EVIDENCE_UNKNOWN_FIELD);
        ck_assert_str_eq(err.msg, "$[\"a\\x1b[0m\\x0a\"]: unknown field");
}
END_TEST

START_TEST(test_ima_cap_is_enforced_exactly)
{
        struct attest_err err = {0};

        /* the sample log is 1000 bytes */
        ck_assert_int_eq(mutate("ima.offset", "0", 1000, &err), 0);
        ck_assert_int_eq(mutate("ima.offset", "0", 999, &err), -E2BIG);
        ck_assert_int_eq(err.code, AE_EVIDENCE_TOO_BIG);
        ck_assert_str_eq(err.msg, "$.ima.entries: decodes to more than 999 bytes");
        ck_assert_int_eq(mutate("ima.offset", "0", 0, &err), -E2BIG);
}
END_TEST

/*
 * The firmware event log: EVIDENCE_BOOT_LOG_MAX decoded bytes at cap - 1 and cap pass, cap + 1 is
 * evidence_too_big; "data":"" is a log sent with no new bytes (non-NULL), no "boot_log" is NULL.
 */
START_TEST(test_boot_log_cap_and_presence)
{
        static const size_t sizes[] = {EVIDENCE_BOOT_LOG_MAX - 1, EVIDENCE_BOOT_LOG_MAX,
                                       EVIDENCE_BOOT_LOG_MAX + 1};
        struct attest_err err = {0};

        for (size_t k = 0; k < ARRAY_SIZE(sizes); k++) {
                size_t n = sizes[k], e = b64_encoded_size(n);
                uint8_t *raw = calloc(1, n);
                char *v = malloc(e + 2);

                b64_encode(raw, n, v + 1);
                v[0] = '"';
                v[e] = '"';
                v[e + 1] = '\0';
                ck_assert_int_eq(mutate("boot_log.data", v, 1 << 20, &err),
                                 n > EVIDENCE_BOOT_LOG_MAX ? -E2BIG : 0);
                free(raw);
                free(v);
        }
        ck_assert_int_eq(err.code, AE_EVIDENCE_TOO_BIG);
        ck_assert_str_eq(err.msg, "$.boot_log.data: decodes to more than 1048576 bytes");
        {
                const char *j = "{\"version\":1,\"nonce\":\"00ff\",\"quote\":{\"attest\":\"AAAA\","
                                "\"signature\":\"AAAA\",\"pcrs\":{\"sha1\":{\"10\":\""
                                "0000000000000000000000000000000000000000\"}}},"
                                "\"boot_log\":{\"offset\":4096,\"data\":\"\"},"
                                "\"ima\":{\"offset\":0,\"format\":\"ascii\",\"entries\":\"\"},"
                                "\"host\":{}}";
                struct evidence *ev = NULL;
                char *out = NULL;

                ck_assert_msg(evidence_from_json(j, strlen(j), 100, &ev, &err) == 0, "%s", err.msg);
                ck_assert_ptr_nonnull(ev->boot_log);
                ck_assert_uint_eq(ev->boot_log_len, 0);
                ck_assert_uint_eq(ev->boot_offset, 4096);
                ck_assert_int_eq(evidence_to_json(ev, &out), 0);
                ck_assert_str_eq(out, j);
                free(out);
                /* not sent: NULL, and the writer leaves it out */
                free(ev->boot_log);
                ev->boot_log = NULL;
                ck_assert_int_eq(evidence_to_json(ev, &out), 0);
                ck_assert_ptr_null(strstr(out, "boot_log"));
                free(out);
                /* the writer refuses a log over the cap */
                ev->boot_log_len = EVIDENCE_BOOT_LOG_MAX + 1;
                ck_assert_ptr_nonnull(ev->boot_log = calloc(1, ev->boot_log_len));
                ck_assert_int_eq(evidence_to_json(ev, &out), -E2BIG);
                evidence_free(ev);
        }
}
END_TEST

START_TEST(test_quote_blob_caps)
{
        struct attest_err err = {0};
        size_t n = 4 * 700; /* 2100 bytes > QUOTE_ATTEST_MAX 2048 */
        char *v = malloc(n + 3);

        v[0] = '"';
        memset(v + 1, 'A', n);
        v[n + 1] = '"';
        v[n + 2] = '\0';
        ck_assert_int_eq(mutate("quote.attest", v, 1000, &err), -E2BIG);
        ck_assert_int_eq(err.code, AE_EVIDENCE_TOO_BIG);
        ck_assert_str_eq(err.msg, "$.quote.attest: decodes to more than 2048 bytes");
        n = 4 * 682; /* 2046 bytes: fits */
        v[n + 1] = '"';
        v[n + 2] = '\0';
        ck_assert_int_eq(mutate("quote.attest", v, 1000, &err), 0);
        free(v);
}
END_TEST

START_TEST(test_document_cap_and_null_err)
{
        size_t n = EVIDENCE_JSON_MAX + 1;
        char *s = malloc(n);
        struct evidence *ev = NULL;
        struct attest_err err = {0};

        memset(s, ' ', n);
        ck_assert_int_eq(evidence_from_json(s, n, 0, &ev, &err), -E2BIG);
        ck_assert_int_eq(err.code, AE_EVIDENCE_TOO_BIG);
        /* err is optional: every failure path must cope with NULL */
        ck_assert_int_eq(evidence_from_json(s, n, 0, &ev, NULL), -E2BIG);
        ck_assert_int_eq(evidence_from_json("{\"x\":1}", 7, 0, &ev, NULL), -EBADMSG);
        ck_assert_int_eq(evidence_from_json("{", 1, 0, &ev, NULL), -EBADMSG);
        ck_assert_ptr_null(ev);
        free(s);
}
END_TEST

START_TEST(test_syntax_errors_and_non_objects)
{
        static const char *const texts[] = {"",
                                            "[]",
                                            "1",
                                            "{",
                                            "{\"version\":1,}",
                                            "{\"version\":1,\"version\":1}",
                                            "{\"nonce\":\"a\\u0000\"}"};
        for (size_t i = 0; i < ARRAY_SIZE(texts); i++) {
                struct evidence *ev = NULL;
                struct attest_err err = {0};

                ck_assert_int_eq(evidence_from_json(texts[i], strlen(texts[i]), 0, &ev, &err),
                                 -EBADMSG);
                ck_assert_int_eq(err.code, AE_EVIDENCE_JSON);
                ck_assert_ptr_null(ev);
        }
}
END_TEST

START_TEST(test_every_truncation_fails_cleanly)
{
        char *s = sample_json();
        size_t len = strlen(s);

        for (size_t n = 0; n < len; n++) {
                struct evidence *ev = NULL;
                struct attest_err err = {0};

                ck_assert_int_lt(evidence_from_json(s, n, 1 << 20, &ev, &err), 0);
                ck_assert_ptr_null(ev);
                ck_assert_int_ne(err.code, AE_NONE);
        }
        free(s);
}
END_TEST

int main(void)
{
        Suite *s = suite_create("evjson");
        TCase *tc = tcase_create("evjson");

        tcase_add_test(tc, test_round_trip_keeps_every_field);
        tcase_add_test(tc, test_minimal_evidence_without_host_or_log);
        tcase_add_loop_test(tc, test_each_bad_field_is_named_by_its_path, 0, ARRAY_SIZE(bad));
        tcase_add_test(tc, test_identity_caps);
        tcase_add_test(tc, test_identity_alone_is_the_evidence_host_members);
        tcase_add_test(tc, test_control_bytes_in_an_unknown_key_are_escaped);
        tcase_add_test(tc, test_ima_cap_is_enforced_exactly);
        tcase_add_test(tc, test_quote_blob_caps);
        tcase_add_test(tc, test_boot_log_cap_and_presence);
        tcase_add_test(tc, test_document_cap_and_null_err);
        tcase_add_test(tc, test_syntax_errors_and_non_objects);
        tcase_add_test(tc, test_every_truncation_fails_cleanly);
        suite_add_tcase(s, tc);
        return tu_run(s);
}
