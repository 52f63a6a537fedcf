/* SPDX-License-Identifier: MIT */
/*
 * The evidence response ({"id":N, then the stored verdict's members}) written by
 * wb_put_json_int_first from the stored text must be the bytes jansson wrote before (the verdict
 * object with "id" inserted first, dumped compact): real verdicts from verdict_to_json with
 * hostile strings at their caps, the daemon's fields added as stage_judge adds them, the
 * unverified and no-policy shapes; and the writer's refusals. The challenge answer's strings
 * (wb_put_json_plain): the bytes jansson writes for every plain string, a refusal for the rest.
 * The agent answers' embedded verdict (wb_put_json_raw_last): the stored text verbatim is what
 * parsing it back and dumping the answer wrote.
 */
#include <check.h>
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <jansson.h>

#include "policy/verdict.h"
#include "util/buf.h"
#include "tests/unit/testutil.h"

/* Quotes, backslashes, control bytes, DEL, UTF-8 (2, 3, 4 bytes, U+2028), "/" and "</script>". */
static const char hostile[] =
        "\"\\\x01\x1f\b\f\n\r\t\x7f/</script> \xc3\xa9\xe2\x80\xa8\xf0\x9f\x94"
        "\x92 {\"id\":1}";

/* s (n bytes, NUL included) filled with the hostile pattern, cut at a character boundary. */
static void fill(char *s, size_t n)
{
        size_t at = 0, k = sizeof(hostile) - 1;

        while (at + k < n) {
                memcpy(s + at, hostile, k);
                at += k;
        }
        /* the rest ASCII: a cut UTF-8 sequence would make jansson refuse the string */
        memset(s + at, 'z', n - 1 - at);
        s[n - 1] = '\0';
}

/* jansson's old response and the writer's, compared byte for byte. */
static void same_response(json_t *verdict, int64_t id)
{
        char *text = json_dumps(verdict, JSON_COMPACT), *want;
        json_t *o = json_pack("{s:I}", "id", (json_int_t)id);
        struct wb w;

        ck_assert_ptr_nonnull(text);
        ck_assert_ptr_nonnull(o);
        ck_assert_int_eq(json_object_update(o, verdict), 0);
        want = json_dumps(o, JSON_COMPACT | JSON_ENCODE_ANY);
        ck_assert_ptr_nonnull(want);
        ck_assert_int_eq(wb_new(&w, strlen(text) + 40), 0);
        ck_assert_int_eq(wb_put_json_int_first(&w, "id", id, text, strlen(text)), 0);
        ck_assert_uint_eq(wb_len(&w), strlen(want));
        ck_assert_msg(memcmp(wb_data(&w), want, strlen(want)) == 0, "differs from %s", want);
        wb_free(&w);
        free(want);
        free(text);
        json_decref(o);
}

/*
 * The agent answers' embedding (api-agents.c, "last_verdict" and each result's "verdict"): the
 * stored text put last as it is must be the bytes jansson wrote when it parsed that text back and
 * dumped the answer with it.
 */
static void same_embedding(json_t *verdict)
{
        char *text = json_dumps(verdict, JSON_COMPACT), *head, *want;
        json_t *o = json_pack("{s:s, s:b, s:n, s:I}", "id", hostile, "stale", 1, "policy", "seq",
                              (json_int_t)INT64_MAX);
        struct wb w;

        ck_assert_ptr_nonnull(text);
        ck_assert_ptr_nonnull(o);
        head = json_dumps(o, JSON_COMPACT | JSON_ENCODE_ANY);
        ck_assert_ptr_nonnull(head);
        ck_assert_int_eq(json_object_set_new(o, "last_verdict", json_loads(text, 0, NULL)), 0);
        want = json_dumps(o, JSON_COMPACT | JSON_ENCODE_ANY);
        ck_assert_ptr_nonnull(want);
        ck_assert_int_eq(wb_new(&w, strlen(want)), 0);
        ck_assert_int_eq(
                wb_put_json_raw_last(&w, head, strlen(head), "last_verdict", text, strlen(text)),
                0);
        ck_assert_uint_eq(wb_len(&w), strlen(want));
        ck_assert_msg(memcmp(wb_data(&w), want, strlen(want)) == 0, "differs from %s", want);
        wb_free(&w);
        free(want);
        free(head);
        free(text);
        json_decref(o);
}

/* What stage_judge adds to every verdict (hostname at its cap, times, the ima counters). */
static void judge_fields(json_t *v, const char *hostname)
{
        ck_assert_int_eq(json_object_set_new(v, "hostname", json_string(hostname)), 0);
        ck_assert_int_eq(json_object_set_new(v, "time", json_string("2026-12-03T23:59:59.999Z")),
                         0);
        ck_assert_int_eq(json_object_set_new(v, "next_due", json_string("2026-12-04T00:00:59Z")),
                         0);
        ck_assert_int_eq(
                json_object_set_new(v, "ima",
                                    json_pack("{s:I, s:I, s:I, s:b, s:b, s:b}", "offset",
                                              (json_int_t)INT64_MAX, "new_entries", (json_int_t)0,
                                              "entries", (json_int_t)1, "rebooted", 1,
                                              "boot_aggregate_seen", 0, "boot_aggregate_ok", 1)),
                0);
}

START_TEST(test_response_is_the_jansson_bytes_for_policy_verdicts)
{
        static const int64_t ids[] = {1, 9, 10, 4242, INT64_MAX};
        static const char strs[2][VERDICT_STRING_MAX] = {"6.1.*", "5.15.*"};
        static const uint8_t hexes[2][BANK_DIGEST_MAX] = {{0xde, 0xad}, {0xff}}, lens[2] = {32, 64};
        char host[256];
        struct verdict v;
        json_t *j = NULL;

        verdict_init(&v);
        /* every claim slot used, each value kind, hostile reasons, args and strings at their caps
         */
        v.claims = calloc(VERDICT_CLAIMS_MAX, sizeof(*v.claims));
        ck_assert_ptr_nonnull(v.claims);
        v.n_claims = v.cap_claims = VERDICT_CLAIMS_MAX;
        for (size_t i = 0; i < v.n_claims; i++) {
                struct verdict_claim *c = &v.claims[i];

                c->id = (enum claim_id)(i % CLAIM__COUNT);
                if (i % 3 == 0)
                        fill(c->arg, sizeof(c->arg));
                c->expected.kind = (enum verdict_value_kind)(i % 6);
                c->observed.kind = (enum verdict_value_kind)((i + 1) % 6);
                for (struct verdict_value *x = &c->expected; x;
                     x = x == &c->expected ? &c->observed : NULL) {
                        x->b = i & 1;
                        fill(x->s, sizeof(x->s));
                        x->len = (uint32_t)(i % 2 ? 32 : BANK_DIGEST_MAX);
                        memset(x->hex, (int)i, sizeof(x->hex));
                        x->strs = strs[0];
                        x->hexes = hexes[0];
                        x->lens = lens;
                        x->stride = VERDICT_STRING_MAX;
                        x->n = (unsigned)(i % 3);
                        if (x->kind == VV_HEXES)
                                x->stride = BANK_DIGEST_MAX;
                }
                c->result = (enum claim_result)(i % 3);
                c->anchored = i % 2;
                c->entry = i % 4 == 0 ? -1 : (int64_t)i * 1000003;
                fill(c->reason, i % 2 ? sizeof(c->reason) : 8);
        }
        v.status = VERDICT_FAIL;
        fill(v.policy, sizeof(v.policy));
        v.unchecked = 0x15;
        ck_assert_int_eq(verdict_to_json(&v, &j), 0);
        fill(host, sizeof(host));
        judge_fields(j, host);
        for (size_t i = 0; i < sizeof(ids) / sizeof(ids[0]); i++)
                same_response(j, ids[i]);
        same_embedding(j);
        json_decref(j);

        /* a passing verdict with no claims */
        verdict_done(&v);
        snprintf(v.policy, sizeof(v.policy), "prod@3");
        v.unchecked = ~0u >> 26;
        ck_assert_int_eq(verdict_to_json(&v, &j), 0);
        judge_fields(j, "h");
        same_response(j, 7);
        same_embedding(j);
        json_decref(j);
        verdict_done(&v);
}
END_TEST

/* The two shapes verdict_json packs itself (unverified, no policy), as it packs them. */
START_TEST(test_response_is_the_jansson_bytes_for_the_other_shapes)
{
        char detail[512], ref[VERDICT_POLICY_MAX];
        json_t *j;

        fill(detail, sizeof(detail));
        fill(ref, sizeof(ref));
        j = json_pack("{s:s, s:s?, s:[], s:{s:s, s:s}}", "status", "fail", "policy", ref, "claims",
                      "reason", "code", "quote_signature", "detail", detail);
        ck_assert_ptr_nonnull(j);
        ck_assert_int_eq(json_object_set_new(j, "time", json_string("t")), 0);
        same_response(j, 12);
        same_embedding(j);
        json_decref(j);
        j = json_pack("{s:s, s:s?, s:[], s:{s:s, s:s}}", "status", "fail", "policy", NULL, "claims",
                      "reason", "code", "x", "detail", "");
        same_response(j, 13);
        json_decref(j);
        j = json_pack("{s:s, s:n, s:[], s:s}", "status", "pass", "policy", "claims", "note",
                      hostile);
        judge_fields(j, hostile);
        same_response(j, 14);
        same_embedding(j);
        json_decref(j);
}
END_TEST

START_TEST(test_writer_refuses_what_is_not_an_object_and_stays_bounded)
{
        uint8_t st[32];
        struct wb w;

        wb_init(&w, st, sizeof(st));
        ck_assert_int_eq(wb_put_json_int_first(&w, "id", 1, LIT("{}")), -EINVAL);
        ck_assert_int_eq(wb_put_json_int_first(&w, "id", 1, LIT("[1]")), -EINVAL);
        ck_assert_int_eq(wb_put_json_int_first(&w, "id", 1, LIT("{\"a\":1")), -EINVAL);
        ck_assert_int_eq(wb_put_json_int_first(&w, "id", 1, LIT("")), -EINVAL);
        ck_assert_uint_eq(wb_len(&w), 0);
        /* exactly at the maximum, then one byte past it: nothing written */
        ck_assert_int_eq(wb_put_json_int_first(&w, "id", 12, LIT("{\"a\":\"xxxxxxxxxxxxxxxx\"}")),
                         0);
        ck_assert_uint_eq(wb_len(&w), 32);
        ck_assert_mem_eq(st, "{\"id\":12,\"a\":\"xxxxxxxxxxxxxxxx\"}", 32);
        wb_reset(&w);
        ck_assert_int_eq(wb_put_json_int_first(&w, "id", 12, LIT("{\"a\":\"xxxxxxxxxxxxxxxxx\"}")),
                         -E2BIG);
        ck_assert_uint_eq(wb_len(&w), 0);
        ck_assert_int_eq(wb_put_u8(&w, 'q'), 0);
        ck_assert_int_eq(wb_put_json_int_first(&w, "id", 123, LIT("{\"a\":\"xxxxxxxxxxxxxxxx\"}")),
                         -E2BIG);
        ck_assert_uint_eq(wb_len(&w), 1);
}
END_TEST

START_TEST(test_raw_member_refuses_what_is_not_an_object_and_stays_bounded)
{
        uint8_t st[17];
        struct wb w;

        wb_init(&w, st, sizeof(st));
        ck_assert_int_eq(wb_put_json_raw_last(&w, LIT("[1]"), "v", LIT("1")), -EINVAL);
        ck_assert_int_eq(wb_put_json_raw_last(&w, LIT("{\"a\":1"), "v", LIT("1")), -EINVAL);
        ck_assert_int_eq(wb_put_json_raw_last(&w, LIT("{"), "v", LIT("1")), -EINVAL);
        ck_assert_int_eq(wb_put_json_raw_last(&w, LIT("{}"), "v", LIT("")), -EINVAL);
        ck_assert_uint_eq(wb_len(&w), 0);
        /* an empty object takes no comma */
        ck_assert_int_eq(wb_put_json_raw_last(&w, LIT("{}"), "v", LIT("{}")), 0);
        ck_assert_uint_eq(wb_len(&w), 8);
        ck_assert_mem_eq(st, "{\"v\":{}}", 8);
        /* exactly at the maximum, then one byte past it: nothing written */
        wb_reset(&w);
        ck_assert_int_eq(wb_put_json_raw_last(&w, LIT("{\"a\":1}"), "v", LIT("[1,2]")), 0);
        ck_assert_uint_eq(wb_len(&w), 17);
        ck_assert_mem_eq(st, "{\"a\":1,\"v\":[1,2]}", 17);
        wb_reset(&w);
        ck_assert_int_eq(wb_put_json_raw_last(&w, LIT("{\"a\":1}"), "v", LIT("[1,22]")), -E2BIG);
        ck_assert_uint_eq(wb_len(&w), 0);
        ck_assert_int_eq(wb_put_u8(&w, 'q'), 0);
        ck_assert_int_eq(wb_put_json_raw_last(&w, LIT("{\"a\":1}"), "v", LIT("[1,2]")), -E2BIG);
        ck_assert_uint_eq(wb_len(&w), 1);
        /* an object longer than the writer */
        ck_assert_int_eq(
                wb_put_json_raw_last(&w, LIT("{\"a\":\"xxxxxxxxxxxxxxxx\"}"), "v", LIT("1")),
                -E2BIG);
        ck_assert_uint_eq(wb_len(&w), 1);
}
END_TEST

/* Every byte value alone and inside a string: written as jansson writes it, or refused. */
START_TEST(test_plain_strings_are_the_jansson_bytes_and_the_rest_is_refused)
{
        static const char *ok[] = {"", "sha256:0,1,2,3,4,5,6,7,8,9,10", "2026-12-03T23:59:59Z",
                                   "0123456789abcdef", " !#$%&'()*+,-./:;<=>?@[]^_`{|}~"};
        uint8_t st[64];
        struct wb w;

        for (unsigned c = 1; c < 256; c++) {
                char s[4] = {'a', (char)c, 'b', 0};
                json_t *j = json_string(s);
                char *want = j ? json_dumps(j, JSON_ENCODE_ANY) : NULL;
                bool plain = c >= 0x20 && c <= 0x7e && c != '"' && c != '\\';

                wb_init(&w, st, sizeof(st));
                if (!plain) {
                        ck_assert_msg(wb_put_json_plain(&w, s) == -EINVAL, "byte 0x%02x", c);
                        ck_assert_uint_eq(wb_len(&w), 0);
                } else {
                        ck_assert_ptr_nonnull(want);
                        ck_assert_int_eq(wb_put_json_plain(&w, s), 0);
                        ck_assert_uint_eq(wb_len(&w), strlen(want));
                        ck_assert_msg(memcmp(st, want, strlen(want)) == 0, "byte 0x%02x", c);
                }
                free(want);
                json_decref(j);
        }
        for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
                json_t *j = json_string(ok[i]);
                char *want = json_dumps(j, JSON_ENCODE_ANY);

                wb_init(&w, st, sizeof(st));
                ck_assert_int_eq(wb_put_json_plain(&w, ok[i]), 0);
                ck_assert_uint_eq(wb_len(&w), strlen(want));
                ck_assert_mem_eq(st, want, strlen(want));
                free(want);
                json_decref(j);
        }
        /* at the maximum, then one byte past it: nothing written */
        wb_init(&w, st, 4);
        ck_assert_int_eq(wb_put_json_plain(&w, "ab"), 0);
        ck_assert_uint_eq(wb_len(&w), 4);
        wb_init(&w, st, 4);
        ck_assert_int_eq(wb_put_json_plain(&w, "abc"), -E2BIG);
        ck_assert_uint_eq(wb_len(&w), 0);
}
END_TEST

static Suite *verdict_resp_suite(void)
{
        Suite *s = suite_create("verdict-resp");
        TCase *tc = tcase_create("bytes");

        tcase_add_test(tc, test_response_is_the_jansson_bytes_for_policy_verdicts);
        tcase_add_test(tc, test_response_is_the_jansson_bytes_for_the_other_shapes);
        tcase_add_test(tc, test_writer_refuses_what_is_not_an_object_and_stays_bounded);
        tcase_add_test(tc, test_plain_strings_are_the_jansson_bytes_and_the_rest_is_refused);
        tcase_add_test(tc, test_raw_member_refuses_what_is_not_an_object_and_stays_bounded);
        suite_add_tcase(s, tc);
        return s;
}

int main(void)
{
        return tu_run(verdict_resp_suite());
}
