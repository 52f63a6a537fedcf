/* SPDX-License-Identifier: MIT */
/*
 * The evidence reader (evidence/evjson-read.c) at its caps, exactly at and one past each: nonce,
 * quote blobs, IMA entries, PCRs (every bank, every index), host strings, depth, document size;
 * and on hostile shapes: huge numbers, invalid UTF-8, NUL in every form, duplicate keys, escapes,
 * and errors in the order the jansson decoder reported them. test-evjson.c has the field-by-field
 * errors; tests/fuzz/fuzz-evidence-diff.c compares the reader with the jansson decoder.
 */
#include <check.h>
#include <errno.h>

#include "evidence/evjson.h"
#include "evidence/quote.h"
#include "util/hex.h"
#include "tests/unit/testutil.h"

/* The parts of a document; NULL members take a valid default. */
struct spec {
        const char *pre;   /* raw members first in the top object, e.g. "\"x\":1," */
        const char *nonce; /* hex */
        const char *attest, *sig;
        const char *pcrs; /* the whole map */
        const char *offset, *entries;
        const char *kernel, *cmdline, *boot_id, *cfi_source, *tk_origin;
        const char *version;
};

static char *mkdoc(const struct spec *s)
{
        static const char pcr10[] = "{\"sha256\":{\"10\":\"0000000000000000000000000000000000000"
                                    "000000000000000000000000000\"}}";
        size_t cap = 64 * 1024 + (s->entries ? strlen(s->entries) : 0) +
                     (s->cmdline ? strlen(s->cmdline) : 0) + (s->pcrs ? strlen(s->pcrs) : 0) +
                     (s->attest ? strlen(s->attest) : 0) + (s->pre ? strlen(s->pre) : 0);
        char *d = malloc(cap);
        int n;

        ck_assert_ptr_nonnull(d);
        n = snprintf(d, cap,
                     "{%s\"version\":%s,\"nonce\":\"%s\",\"quote\":{\"attest\":\"%s\","
                     "\"signature\":\"%s\",\"pcrs\":%s},\"ima\":{\"offset\":%s,"
                     "\"format\":\"binary\",\"entries\":\"%s\"},\"host\":{\"kernel\":\"%s\","
                     "\"cmdline\":\"%s\",\"boot_id\":\"%s\",\"cfi\":{\"source\":\"%s\","
                     "\"enabled\":true,\"permissive\":false},\"trusted_keys\":{\"source\":"
                     "\"tpm\",\"origin\":\"%s\"}}}",
                     s->pre ? s->pre : "", s->version ? s->version : "1",
                     s->nonce ? s->nonce : "00ff", s->attest ? s->attest : "AAAA",
                     s->sig ? s->sig : "AAAA", s->pcrs ? s->pcrs : pcr10,
                     s->offset ? s->offset : "0", s->entries ? s->entries : "",
                     s->kernel ? s->kernel : "6.1.0", s->cmdline ? s->cmdline : "ro quiet",
                     s->boot_id ? s->boot_id : "0f3d-ab", s->cfi_source ? s->cfi_source : "config",
                     s->tk_origin ? s->tk_origin : "cmdline");
        ck_assert(n > 0 && (size_t)n < cap);
        return d;
}

struct res {
        int x;
        enum attest_code code;
        char msg[256];
        struct evidence *ev;
};

static struct res run_n(const char *text, size_t len, size_t max_ima)
{
        struct res r = {0};
        struct attest_err err = {0};

        r.x = evidence_from_json(text, len, max_ima, &r.ev, &err);
        r.code = err.code;
        memcpy(r.msg, err.msg, sizeof(r.msg));
        ck_assert((r.x == 0) == (r.ev != NULL));
        return r;
}

static struct res run(const struct spec *s, size_t max_ima)
{
        char *d = mkdoc(s);
        struct res r = run_n(d, strlen(d), max_ima);

        free(d);
        return r;
}

#define EXPECT_OK(r)                                                                               \
        do {                                                                                       \
                struct res r_ = (r);                                                               \
                ck_assert_msg(r_.x == 0, "refused: %s: %s", attest_code_name(r_.code), r_.msg);    \
                evidence_free(r_.ev);                                                              \
        } while (0)

#define EXPECT_FAIL(r, e, c, m)                                                                    \
        do {                                                                                       \
                struct res r_ = (r);                                                               \
                ck_assert_msg(r_.x == (e) && r_.code == (c), "got %d %s: %s", r_.x,                \
                              attest_code_name(r_.code), r_.msg);                                  \
                ck_assert_msg(strncmp(r_.msg, (m), strlen(m)) == 0, "msg '%s', want '%s...'",      \
                              r_.msg, (m));                                                        \
        } while (0)

/* base64 of n bytes of value v */
static char *b64_of(size_t n, uint8_t v)
{
        uint8_t *b = malloc(n + 1);
        char *s = malloc(b64_encoded_size(n));

        ck_assert(b && s);
        memset(b, v, n);
        b64_encode(b, n, s);
        free(b);
        return s;
}

START_TEST(test_nonce_cap_is_64_bytes)
{
        char *hex = filled(130, 'a');
        struct res r;

        hex[128] = '\0';
        r = run(&(struct spec){.nonce = hex}, 0);
        ck_assert_int_eq(r.x, 0);
        ck_assert_uint_eq(r.ev->nonce_len, 64);
        ck_assert_uint_eq(r.ev->nonce[63], 0xaa);
        evidence_free(r.ev);
        hex[128] = 'a';
        EXPECT_FAIL(run(&(struct spec){.nonce = hex}, 0), -EBADMSG, AE_EVIDENCE_BAD_HEX,
                    "$.nonce: 130 hex digits, at most 64 bytes wanted");
        EXPECT_FAIL(run(&(struct spec){.nonce = ""}, 0), -EBADMSG, AE_EVIDENCE_BAD_HEX,
                    "$.nonce: 0 bytes, 64 wanted");
        EXPECT_OK(run(&(struct spec){.nonce = "0a"}, 0));
        free(hex);
}
END_TEST

START_TEST(test_quote_blob_caps_exactly)
{
        char *at = b64_of(QUOTE_ATTEST_MAX, 1), *over = b64_of(QUOTE_ATTEST_MAX + 1, 1),
             *sig_at = b64_of(QUOTE_SIG_MAX, 2), *sig_over = b64_of(QUOTE_SIG_MAX + 1, 2);
        struct res r = run(&(struct spec){.attest = at, .sig = sig_at}, 0);

        ck_assert_int_eq(r.x, 0);
        ck_assert_uint_eq(r.ev->attest_len, QUOTE_ATTEST_MAX);
        ck_assert_uint_eq(r.ev->sig_len, QUOTE_SIG_MAX);
        ck_assert_uint_eq(r.ev->sig[QUOTE_SIG_MAX - 1], 2);
        evidence_free(r.ev);
        EXPECT_FAIL(run(&(struct spec){.attest = over}, 0), -E2BIG, AE_EVIDENCE_TOO_BIG,
                    "$.quote.attest: decodes to more than 2048 bytes");
        EXPECT_FAIL(run(&(struct spec){.sig = sig_over}, 0), -E2BIG, AE_EVIDENCE_TOO_BIG,
                    "$.quote.signature: decodes to more than 1024 bytes");
        free(at);
        free(over);
        free(sig_at);
        free(sig_over);
}
END_TEST

START_TEST(test_entries_cap_exactly_at_every_padding)
{
        for (size_t n = 997; n <= 1002; n++) {
                char *e = b64_of(n, 7);
                struct res r = run(&(struct spec){.entries = e}, n);

                ck_assert_msg(r.x == 0, "%zu bytes at a cap of %zu: %s", n, n, r.msg);
                ck_assert_uint_eq(r.ev->ima_len, n);
                ck_assert_uint_eq(r.ev->ima[n - 1], 7);
                evidence_free(r.ev);
                EXPECT_FAIL(run(&(struct spec){.entries = e}, n - 1), -E2BIG, AE_EVIDENCE_TOO_BIG,
                            "$.ima.entries: decodes to more than");
                free(e);
        }
        /* no log at a cap of 0, one byte over it */
        EXPECT_OK(run(&(struct spec){.entries = ""}, 0));
        EXPECT_FAIL(run(&(struct spec){.entries = "AA=="}, 0), -E2BIG, AE_EVIDENCE_TOO_BIG,
                    "$.ima.entries: decodes to more than 0 bytes");
}
END_TEST

START_TEST(test_every_bank_and_pcr_index)
{
        static const char *const banks[] = {"sha1", "sha256", "sha384", "sha512"};
        static const unsigned sizes[] = {20, 32, 48, 64};
        char *m = malloc(64 * 1024), *bad;
        size_t o = 0;
        struct res r;

        ck_assert_ptr_nonnull(m);
        m[o++] = '{';
        for (int b = 0; b < 4; b++) {
                o += (size_t)snprintf(m + o, 64 * 1024 - o, "%s\"%s\":{", b ? "," : "", banks[b]);
                for (unsigned i = 0; i < PCR_COUNT; i++) {
                        o += (size_t)snprintf(m + o, 64 * 1024 - o, "%s\"%u\":\"", i ? "," : "", i);
                        for (unsigned k = 0; k < sizes[b]; k++)
                                o += (size_t)snprintf(m + o, 64 * 1024 - o, "%02x", i);
                        m[o++] = '"';
                }
                m[o++] = '}';
        }
        m[o++] = '}';
        m[o] = '\0';
        r = run(&(struct spec){.pcrs = m}, 0);
        ck_assert_msg(r.x == 0, "%s", r.msg);
        for (int b = 0; b < 4; b++) {
                ck_assert_uint_eq(r.ev->pcrs.have[b], (1u << PCR_COUNT) - 1);
                ck_assert_uint_eq(r.ev->pcrs.v[b][23][sizes[b] - 1], 23);
        }
        evidence_free(r.ev);
        /* index 23 is the last; 24 is not one */
        bad = strdup(m);
        memcpy(strstr(bad, "\"23\""), "\"24\"", 4);
        EXPECT_FAIL(run(&(struct spec){.pcrs = bad}, 0), -EBADMSG, AE_EVIDENCE_UNKNOWN_FIELD,
                    "$.quote.pcrs.sha1.24: not a PCR index 0-23");
        memcpy(strstr(bad, "\"24\""), "\"00\"", 4);
        EXPECT_FAIL(run(&(struct spec){.pcrs = bad}, 0), -EBADMSG, AE_EVIDENCE_UNKNOWN_FIELD,
                    "$.quote.pcrs.sha1.00: not a PCR index 0-23");
        /* a digest one hex digit short, and the bank written with an escape */
        EXPECT_FAIL(run(&(struct spec){.pcrs = "{\"sha1\":{\"0\":\"000000000000000000000000000"
                                               "000000000000\"}}"},
                        0),
                    -EBADMSG, AE_EVIDENCE_BAD_HEX, "$.quote.pcrs.sha1.0: not a sha1 digest");
        r = run(&(struct spec){.pcrs = "{\"sha\\u0031\":{\"1\\u0030\":\"00000000000000000000000"
                                       "00000000000000000\"}}"},
                0);
        ck_assert_msg(r.x == 0, "%s", r.msg);
        ck_assert_uint_eq(r.ev->pcrs.have[BANK_SHA1], 1u << 10);
        evidence_free(r.ev);
        free(bad);
        free(m);
}
END_TEST

/* A host string of n bytes c at the given member: the struct's cap, then one over. */
START_TEST(test_host_string_caps_exactly)
{
        static const struct {
                const char *name;
                size_t cap;
                char c;
        } caps[] = {{"kernel", 255, 'k'},
                    {"cmdline", EVIDENCE_CMDLINE_MAX, 'c'},
                    {"boot_id", 63, 'b'},
                    {"cfi.source", EVIDENCE_WORD_MAX - 1, 's'},
                    {"trusted_keys.origin", EVIDENCE_WORD_MAX - 1, 'o'}};

        for (size_t i = 0; i < ARRAY_SIZE(caps); i++) {
                for (size_t n = caps[i].cap; n <= caps[i].cap + 1; n++) {
                        char *v = filled(n, caps[i].c), want[128];
                        struct spec s = {0};
                        struct res r;

                        switch (i) {
                        case 0:
                                s.kernel = v;
                                break;
                        case 1:
                                s.cmdline = v;
                                break;
                        case 2:
                                s.boot_id = v;
                                break;
                        case 3:
                                s.cfi_source = v;
                                break;
                        default:
                                s.tk_origin = v;
                        }
                        r = run(&s, 0);
                        if (n == caps[i].cap) {
                                ck_assert_msg(r.x == 0, "%s at its cap: %s", caps[i].name, r.msg);
                                ck_assert_uint_eq(strlen(i == 0   ? r.ev->host.kernel
                                                         : i == 1 ? r.ev->host.cmdline
                                                         : i == 2 ? r.ev->host.boot_id
                                                         : i == 3 ? r.ev->host.cfi_source
                                                                  : r.ev->host.tk_origin),
                                                  n);
                                evidence_free(r.ev);
                        } else {
                                snprintf(want, sizeof(want), "$.host.%s: %zu bytes > %zu",
                                         caps[i].name, n, caps[i].cap);
                                EXPECT_FAIL(r, -E2BIG, AE_EVIDENCE_TOO_BIG, want);
                        }
                        free(v);
                }
        }
}
END_TEST

START_TEST(test_depth_cap_in_unknown_and_known_fields)
{
        for (size_t depth = 2046; depth <= 2048; depth++) {
                /* the top object is depth 1, "x" holds depth arrays */
                char *pre = malloc(2 * depth + 16), *arrays;
                size_t o = (size_t)snprintf(pre, 16, "\"x\":");

                memset(pre + o, '[', depth);
                memset(pre + o + depth, ']', depth);
                snprintf(pre + o + 2 * depth, 16, ",");
                if (depth <= 2047)
                        EXPECT_FAIL(run(&(struct spec){.pre = pre}, 0), -EBADMSG,
                                    AE_EVIDENCE_UNKNOWN_FIELD, "$.x: unknown field");
                else
                        EXPECT_FAIL(run(&(struct spec){.pre = pre}, 0), -EBADMSG, AE_EVIDENCE_JSON,
                                    "$: invalid JSON");
                /* the same nesting as a known field's value: skipped whole, then a type error */
                arrays = pre + o;
                pre[o + 2 * depth] = '\0';
                char *d = mkdoc(&(struct spec){.version = arrays});
                if (depth <= 2047)
                        EXPECT_FAIL(run_n(d, strlen(d), 0), -EBADMSG, AE_EVIDENCE_TYPE,
                                    "$.version: not an integer");
                else
                        EXPECT_FAIL(run_n(d, strlen(d), 0), -EBADMSG, AE_EVIDENCE_JSON,
                                    "$: invalid JSON");
                free(d);
                free(pre);
        }
}
END_TEST

START_TEST(test_document_cap_is_16_mib_exactly)
{
        char *d = mkdoc(&(struct spec){0}), *big = malloc(EVIDENCE_JSON_MAX + 1);
        size_t n = strlen(d);

        ck_assert_ptr_nonnull(big);
        memcpy(big, d, n);
        memset(big + n, ' ', EVIDENCE_JSON_MAX + 1 - n);
        EXPECT_OK(run_n(big, EVIDENCE_JSON_MAX, 0));
        EXPECT_FAIL(run_n(big, EVIDENCE_JSON_MAX + 1, 0), -E2BIG, AE_EVIDENCE_TOO_BIG,
                    "$: document of 16777217 bytes > 16777216");
        free(big);
        free(d);
}
END_TEST

START_TEST(test_huge_numbers)
{
        struct res r = run(&(struct spec){.offset = "9223372036854775807"}, 0);

        ck_assert_int_eq(r.x, 0);
        ck_assert_uint_eq(r.ev->ima_offset, INT64_MAX);
        evidence_free(r.ev);
        EXPECT_FAIL(run(&(struct spec){.offset = "9223372036854775808"}, 0), -EBADMSG,
                    AE_EVIDENCE_JSON, "$: invalid JSON");
        EXPECT_FAIL(run(&(struct spec){.offset = "-9223372036854775808"}, 0), -EBADMSG,
                    AE_EVIDENCE_BAD_VALUE, "$.ima.offset: negative");
        EXPECT_FAIL(run(&(struct spec){.offset = "-9223372036854775809"}, 0), -EBADMSG,
                    AE_EVIDENCE_JSON, "$: invalid JSON");
        EXPECT_FAIL(run(&(struct spec){.version = "1e400"}, 0), -EBADMSG, AE_EVIDENCE_JSON,
                    "$: invalid JSON");
        EXPECT_FAIL(run(&(struct spec){.version = "1e-400"}, 0), -EBADMSG, AE_EVIDENCE_TYPE,
                    "$.version: not an integer");
        EXPECT_FAIL(run(&(struct spec){.version = "1.0"}, 0), -EBADMSG, AE_EVIDENCE_TYPE,
                    "$.version: not an integer");
        EXPECT_FAIL(run(&(struct spec){.version = "-0"}, 0), -EBADMSG, AE_EVIDENCE_VERSION,
                    "$.version: version 0 is not supported (1)");
}
END_TEST

START_TEST(test_utf8_and_nul_in_strings)
{
        /* valid UTF-8 reaches the field check, invalid never gets that far */
        EXPECT_FAIL(run(&(struct spec){.cmdline = "a\xc3\xa9"}, 0), -EBADMSG, AE_EVIDENCE_BAD_VALUE,
                    "$.host.cmdline: byte 1 is not printable");
        EXPECT_FAIL(run(&(struct spec){.cmdline = "a\xc3"}, 0), -EBADMSG, AE_EVIDENCE_JSON,
                    "$: invalid JSON");
        EXPECT_FAIL(run(&(struct spec){.cmdline = "a\xed\xa0\x80"}, 0), -EBADMSG, AE_EVIDENCE_JSON,
                    "$: invalid JSON");
        EXPECT_FAIL(run(&(struct spec){.cmdline = "a\\u0000b"}, 0), -EBADMSG, AE_EVIDENCE_JSON,
                    "$: invalid JSON");
        EXPECT_FAIL(run(&(struct spec){.pre = "\"\\u0000\":1,"}, 0), -EBADMSG, AE_EVIDENCE_JSON,
                    "$: invalid JSON");
        EXPECT_FAIL(run(&(struct spec){.cmdline = "a\tb"}, 0), -EBADMSG, AE_EVIDENCE_JSON,
                    "$: invalid JSON");
        EXPECT_FAIL(run(&(struct spec){.cmdline = "a\\tb"}, 0), -EBADMSG, AE_EVIDENCE_BAD_VALUE,
                    "$.host.cmdline: byte 1 is not printable");
        /* raw NUL: in a string, and after a number (jansson 2.14 accepted that one) */
        char *d = mkdoc(&(struct spec){.cmdline = "a#b"});
        size_t n = strlen(d);

        *strchr(d, '#') = '\0';
        EXPECT_FAIL(run_n(d, n, 0), -EBADMSG, AE_EVIDENCE_JSON, "$: invalid JSON");
        free(d);
        d = mkdoc(&(struct spec){.version = "1#"});
        n = strlen(d);
        *strchr(d, '#') = '\0';
        EXPECT_FAIL(run_n(d, n, 0), -EBADMSG, AE_EVIDENCE_JSON, "$: invalid JSON");
        *strchr(d, '\0') = ' ';
        EXPECT_OK(run_n(d, n, 0));
        free(d);
}
END_TEST

START_TEST(test_duplicate_keys_anywhere)
{
        EXPECT_FAIL(run(&(struct spec){.pre = "\"version\":1,"}, 0), -EBADMSG, AE_EVIDENCE_JSON,
                    "$: invalid JSON");
        EXPECT_FAIL(run(&(struct spec){.pre = "\"v\\u0065rsion\":1,"}, 0), -EBADMSG,
                    AE_EVIDENCE_JSON, "$: invalid JSON");
        EXPECT_FAIL(run(&(struct spec){.pre = "\"x\":{\"a\":1,\"a\":1},"}, 0), -EBADMSG,
                    AE_EVIDENCE_JSON, "$: invalid JSON");
        EXPECT_FAIL(run(&(struct spec){.pcrs = "{\"sha1\":{},\"sha1\":{}}"}, 0), -EBADMSG,
                    AE_EVIDENCE_JSON, "$: invalid JSON");
        EXPECT_FAIL(run(&(struct spec){.cmdline = "x\",\"cmdline\":\"y"}, 0), -EBADMSG,
                    AE_EVIDENCE_JSON, "$: invalid JSON");
}
END_TEST

START_TEST(test_escaped_names_and_values_decode)
{
        char *e = b64_of(300, 0xff); /* "////..." */
        char *esc = malloc(2 * strlen(e) + 1);
        size_t o = 0;
        struct res r, plain;

        ck_assert(strchr(e, '/') && esc);
        for (const char *p = e; *p; p++) {
                if (*p == '/')
                        esc[o++] = '\\';
                esc[o++] = *p;
        }
        esc[o] = '\0';
        r = run(&(struct spec){.entries = esc, .kernel = "6.1\\u002e0", .pre = "\"\\u0078\":1,"},
                1000);
        EXPECT_FAIL(r, -EBADMSG, AE_EVIDENCE_UNKNOWN_FIELD, "$.x: unknown field");
        r = run(&(struct spec){.entries = esc, .kernel = "6.1\\u002e0"}, 1000);
        plain = run(&(struct spec){.entries = e, .kernel = "6.1.0"}, 1000);
        ck_assert_msg(r.x == 0 && plain.x == 0, "%s", r.msg);
        ck_assert_uint_eq(r.ev->ima_len, 300);
        ck_assert_mem_eq(r.ev->ima, plain.ev->ima, 300);
        ck_assert_str_eq(r.ev->host.kernel, "6.1.0");
        evidence_free(r.ev);
        evidence_free(plain.ev);
        free(esc);
        free(e);
}
END_TEST

START_TEST(test_errors_come_in_the_old_order)
{
        /* the document's own order does not matter: unknown top key, then version, nonce, ... */
        EXPECT_FAIL(run(&(struct spec){.version = "2", .pre = "\"zz\":1,", .kernel = ""}, 0),
                    -EBADMSG, AE_EVIDENCE_UNKNOWN_FIELD, "$.zz: unknown field");
        EXPECT_FAIL(run(&(struct spec){.pre = "\"host\":{\"kernel\":\"\"},", .attest = "*"}, 0),
                    -EBADMSG, AE_EVIDENCE_JSON, "$: invalid JSON"); /* host twice */
        const char *d = "{\"host\":{\"kernel\":\"\"},\"ima\":{\"offset\":-1},\"quote\":{\"attest\":"
                        "\"*\"},\"nonce\":\"00\",\"version\":1}";
        EXPECT_FAIL(run_n(d, strlen(d), 0), -EBADMSG, AE_EVIDENCE_BAD_B64,
                    "$.quote.attest: not base64");
        /* a syntax error at the very end beats every field error before it */
        d = "{\"version\":2,\"nonce\":\"x\",\"z\":01}";
        EXPECT_FAIL(run_n(d, strlen(d), 0), -EBADMSG, AE_EVIDENCE_JSON, "$: invalid JSON");
        /* the PCR map's first error is the first in the text, reported after attest */
        EXPECT_FAIL(run(&(struct spec){.pcrs = "{\"md5\":{},\"sha1\":[]}", .attest = "*"}, 0),
                    -EBADMSG, AE_EVIDENCE_BAD_B64, "$.quote.attest: not base64");
        EXPECT_FAIL(run(&(struct spec){.pcrs = "{\"sha1\":[],\"md5\":{}}"}, 0), -EBADMSG,
                    AE_EVIDENCE_TYPE, "$.quote.pcrs.sha1: not an object");
        EXPECT_FAIL(run(&(struct spec){.pcrs = "{\"sha1\":{\"x\":1,\"0\":\"zz\"}}"}, 0), -EBADMSG,
                    AE_EVIDENCE_UNKNOWN_FIELD, "$.quote.pcrs.sha1.x: not a PCR index");
        EXPECT_FAIL(run(&(struct spec){.pcrs = "{\"sha1\":{\"0\":1,\"x\":1}}"}, 0), -EBADMSG,
                    AE_EVIDENCE_TYPE, "$.quote.pcrs.sha1.0: not a string");
        EXPECT_FAIL(run(&(struct spec){.pcrs = "{\"sha1\":{}}"}, 0), -EBADMSG,
                    AE_EVIDENCE_BAD_VALUE, "$.quote.pcrs: no PCR listed");
}
END_TEST

int main(void)
{
        Suite *s = suite_create("evread");
        TCase *tc = tcase_create("evread");

        tcase_set_timeout(tc, 120);
        tcase_add_test(tc, test_nonce_cap_is_64_bytes);
        tcase_add_test(tc, test_quote_blob_caps_exactly);
        tcase_add_test(tc, test_entries_cap_exactly_at_every_padding);
        tcase_add_test(tc, test_every_bank_and_pcr_index);
        tcase_add_test(tc, test_host_string_caps_exactly);
        tcase_add_test(tc, test_depth_cap_in_unknown_and_known_fields);
        tcase_add_test(tc, test_document_cap_is_16_mib_exactly);
        tcase_add_test(tc, test_huge_numbers);
        tcase_add_test(tc, test_utf8_and_nul_in_strings);
        tcase_add_test(tc, test_duplicate_keys_anywhere);
        tcase_add_test(tc, test_escaped_names_and_values_decode);
        tcase_add_test(tc, test_errors_come_in_the_old_order);
        suite_add_tcase(s, tc);
        return tu_run(s);
}
