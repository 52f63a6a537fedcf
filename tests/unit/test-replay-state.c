/* SPDX-License-Identifier: MIT */
/*
 * The replay state's stored form (verify/replay-state.h): round trips, every truncation refused,
 * every field out of range refused with the byte and field named, the cap at cap-1/cap/cap+1, and
 * a failed decode leaving its output untouched.
 */
#include <check.h>
#include <errno.h>
#include <stddef.h>

#include "tests/unit/testutil.h"
#include "verify/replay-state.h"

/*
 * A state with one bank (sha256) and one PCR (10) and every claim: the layout below is fixed,
 * so the field offsets in test_each_field_out_of_range_is_refused are known.
 */
static void small_state(struct replay_state *s)
{
        struct cdata_claims *c = &s->claims;

        replay_state_init(s);
        s->valid = true;
        s->boot_aggregate_seen = s->boot_aggregate_ok = true;
        s->reset_count = 3;
        s->restart_count = 1;
        s->clock = 123456;
        s->entries = 40;
        s->banks = BANK_MASK(BANK_SHA256);
        s->used = 1u << 10;
        memset(s->pcr[BANK_SHA256][10], 0xab, 32);
        c->selinux_seen = true;
        c->selinux = (struct cdata_selinux_state){.entry = 30,
                                                  .flags_present = 7,
                                                  .flags_value = 3,
                                                  .caps_present = 5,
                                                  .caps_value = 1,
                                                  .unknown_keys = 2};
        c->history = (struct cdata_selinux_history){.states = 4,
                                                    .enforced = true,
                                                    .first_enforcing = 7,
                                                    .lapse = SELINUX_LAPSE_PERMISSIVE,
                                                    .lapse_entry = 16};
        c->policy_hash_seen = true;
        c->policy_hash_entry = 5;
        c->policy_hash_count = 2;
        c->policy_hash_len = 32;
        memset(c->policy_hash, 0xc1, 32);
        c->kernel_version_seen = true;
        c->kernel_version_entry = 1;
        snprintf(c->kernel_version, sizeof(c->kernel_version), "6.1.192");
        c->trusted_keys_seen = true;
        c->trusted_keys.entry = 2;
        c->trusted_keys.source = TK_SOURCE_TPM;
        snprintf(c->trusted_keys.source_name, CDATA_WORD_MAX, "tpm");
        c->cfi_seen = true;
        c->cfi = (struct cdata_cfi){.entry = 3, .enabled = true, .mode = CFI_MODE_KCFI};
}

/* Field offsets of small_state's encoding. */
enum {
        O_VERSION = 3,
        O_FLAGS = 4,
        O_CLOCK = 13,
        O_ENTRIES = 21,
        O_BANKS = 29,
        O_USED = 30,
        O_CFLAGS = 66,
        O_STATES = 67,
        O_FIRST = 75,
        O_LAPSE = 83,
        O_LAPSE_ENTRY = 84,
        O_SEL_ENTRY = 92,
        O_SEL_FLAGS = 100,
        O_SEL_VALUES = 101,
        O_SEL_CAPS = 102,
        O_SEL_CAPVALS = 106,
        O_SEL_UNKNOWN = 110,
        O_PH_ENTRY = 114,
        O_PH_COUNT = 122,
        O_PH_LEN = 126,
        O_KV_ENTRY = 159,
        O_KV_LEN = 167,
        O_KV = 168,
        O_TK_ENTRY = 175,
        O_TK_LEN = 183,
        O_TK = 184,
        O_CFI_BITS = 195,
        O_CFI_MODE = 196,
        O_END = 197,
};

/* The largest state: every bank, every PCR, the longest values. */
/* A measured-boot section at its largest: 8 algorithms (the 4 banks), every claim. */
static void max_boot(struct boot_state *b)
{
        static const uint16_t algs[8][2] = {{0x0004, 20}, {0x000b, 32}, {0x000c, 48}, {0x000d, 64},
                                            {0x0012, 32}, {0x0027, 32}, {0x0028, 48}, {0x0029, 64}};

        boot_state_init(b);
        b->valid = true;
        b->offset = 70000;
        b->entries = 900;
        b->spec.n_algs = 8;
        for (int i = 0; i < 8; i++)
                b->spec.algs[i] = (struct tcglog_alg){.alg_id = algs[i][0], .size = algs[i][1]};
        b->spec.version_major = 2;
        b->spec.uintn_size = 2;
        b->banks = BANK_MASK_ALL;
        for (int k = 0; k < BANK_COUNT; k++)
                for (int i = 0; i < BOOT_PCRS; i++)
                        memset(b->pcr[k][i], 0x50 + i, bank_size((enum bank)k));
        b->claims.secureboot_seen = b->claims.secureboot = true;
        b->claims.secureboot_entry = 20;
        b->claims.vars_seen = (1u << BOOT_VAR__COUNT) - 1;
        for (int i = 0; i < BOOT_VAR__COUNT; i++) {
                b->claims.var_entry[i] = 21 + (uint64_t)i;
                memset(b->claims.var_sha256[i], 0x30 + i, 32);
        }
        b->claims.apps_total = 9;
        b->claims.n_apps = BOOT_APPS_MAX;
        for (int i = 0; i < BOOT_APPS_MAX; i++) {
                b->claims.apps[i].entry = 100 + (uint64_t)i;
                b->claims.apps[i].bank = BANK_SHA512;
                memset(b->claims.apps[i].digest, 0xa0 + i, 64);
        }
        b->claims.separators = 0xff;
        b->claims.separator_errors = 0x01;
        b->claims.locality_seen = true;
        b->claims.locality = 3;
        b->claims.locality_entry = 1;
}

static void max_state(struct replay_state *s)
{
        small_state(s);
        max_boot(&s->boot);
        s->banks = BANK_MASK_ALL;
        s->used = (1u << PCR_COUNT) - 1;
        s->claims.policy_hash_len = BANK_DIGEST_MAX;
        memset(s->claims.kernel_version, 'v', CDATA_KERNEL_VERSION_MAX - 1);
        s->claims.kernel_version[CDATA_KERNEL_VERSION_MAX - 1] = '\0';
        memset(s->claims.trusted_keys.source_name, 'x', CDATA_WORD_MAX - 1);
        s->claims.trusted_keys.source_name[CDATA_WORD_MAX - 1] = '\0';
        s->claims.trusted_keys.source = TK_SOURCE_UNKNOWN;
        memset(s->claims.trusted_keys.rng_name, 'r', CDATA_WORD_MAX - 1);
        s->claims.trusted_keys.rng_name[CDATA_WORD_MAX - 1] = '\0';
        memset(s->claims.trusted_keys.requested_name, 'q', CDATA_WORD_MAX - 1);
        s->claims.trusted_keys.requested_name[CDATA_WORD_MAX - 1] = '\0';
        s->entries = 1000;
}

static uint8_t *enc(const struct replay_state *s, size_t *n)
{
        uint8_t *b = NULL;

        ck_assert_int_eq(replay_state_encode(s, NULL, 0, &b, n), 0);
        return b;
}

/* An observer's section of n bytes (opaque to verify): a pattern */
static uint8_t *obs_bytes(size_t n)
{
        uint8_t *o = malloc(n ? n : 1);

        ck_assert_ptr_nonnull(o);
        for (size_t i = 0; i < n; i++)
                o[i] = (uint8_t)(i * 7 + 1);
        return o;
}

static uint8_t *enc_obs(const struct replay_state *s, const uint8_t *obs, size_t obs_len, size_t *n)
{
        uint8_t *b = NULL;

        ck_assert_int_eq(replay_state_encode(s, obs, obs_len, &b, n), 0);
        return b;
}

START_TEST(test_round_trip_keeps_every_field)
{
        struct replay_state s, back, inv;
        struct attest_err err = {0};
        size_t n, n2;
        uint8_t *b, *b2;

        small_state(&s);
        b = enc(&s, &n);
        ck_assert_uint_eq(n, O_END);
        ck_assert_msg(replay_state_decode(b, n, &back, NULL, &err) == 0, "%s", err.msg);
        ck_assert(back.valid && back.boot_aggregate_seen && back.boot_aggregate_ok);
        ck_assert_uint_eq(back.reset_count, 3);
        ck_assert_uint_eq(back.restart_count, 1);
        ck_assert_uint_eq(back.clock, 123456);
        ck_assert_uint_eq(back.entries, 40);
        ck_assert_uint_eq(back.banks, BANK_MASK(BANK_SHA256));
        ck_assert_uint_eq(back.used, 1u << 10);
        ck_assert_mem_eq(back.pcr[BANK_SHA256][10], s.pcr[BANK_SHA256][10], 32);
        ck_assert_int_eq(memcmp(&back.claims.selinux, &s.claims.selinux, sizeof(s.claims.selinux)),
                         0);
        ck_assert_uint_eq(back.claims.history.first_enforcing, 7);
        ck_assert_int_eq(back.claims.history.lapse, SELINUX_LAPSE_PERMISSIVE);
        ck_assert_uint_eq(back.claims.history.lapse_entry, 16);
        ck_assert_uint_eq(back.claims.policy_hash_count, 2);
        ck_assert_mem_eq(back.claims.policy_hash, s.claims.policy_hash, 32);
        ck_assert_str_eq(back.claims.kernel_version, "6.1.192");
        ck_assert_int_eq(back.claims.trusted_keys.source, TK_SOURCE_TPM);
        ck_assert_uint_eq(back.claims.cfi.entry, 3);
        ck_assert(back.claims.cfi.enabled && !back.claims.cfi.permissive);
        ck_assert_int_eq(back.claims.cfi.mode, CFI_MODE_KCFI);
        b2 = enc(&back, &n2);
        ck_assert_uint_eq(n2, n);
        ck_assert_mem_eq(b, b2, n);
        free(b);
        free(b2);
        /* nothing known: five bytes */
        replay_state_init(&inv);
        b = enc(&inv, &n);
        ck_assert_uint_eq(n, 5);
        ck_assert_int_eq(replay_state_decode(b, n, &back, NULL, &err), 0);
        ck_assert(!back.valid);
        free(b);
}
END_TEST

/*
 * The trusted-keys entry's rng= and requested= words: each after the source word, under its own
 * claim-flag bit, so a state stored before they existed (small_state: neither bit) still reads,
 * with both "" (not measured).
 */
START_TEST(test_trusted_keys_rng_and_requested_round_trip)
{
        struct replay_state s, back;
        struct attest_err err = {0};
        size_t n, m;
        uint8_t *b, *old;

        small_state(&s);
        old = enc(&s, &m);
        ck_assert_int_eq(replay_state_decode(old, m, &back, NULL, &err), 0);
        ck_assert_str_eq(back.claims.trusted_keys.rng_name, "");
        ck_assert_str_eq(back.claims.trusted_keys.requested_name, "");
        ck_assert_uint_eq(old[O_CFLAGS] & 0xc0, 0);

        snprintf(s.claims.trusted_keys.rng_name, CDATA_WORD_MAX, "kernel");
        b = enc(&s, &n);
        ck_assert_uint_eq(n, m + 1 + 6);
        ck_assert_int_eq(replay_state_decode(b, n, &back, NULL, &err), 0);
        ck_assert_str_eq(back.claims.trusted_keys.rng_name, "kernel");
        ck_assert_str_eq(back.claims.trusted_keys.requested_name, "");
        free(b);

        snprintf(s.claims.trusted_keys.requested_name, CDATA_WORD_MAX, "any");
        b = enc(&s, &n);
        ck_assert_uint_eq(n, m + 1 + 6 + 1 + 3);
        ck_assert_int_eq(replay_state_decode(b, n, &back, NULL, &err), 0);
        ck_assert_str_eq(back.claims.trusted_keys.rng_name, "kernel");
        ck_assert_str_eq(back.claims.trusted_keys.requested_name, "any");
        ck_assert_str_eq(back.claims.trusted_keys.source_name, "tpm");
        ck_assert_int_eq(back.claims.cfi.mode, CFI_MODE_KCFI);
        /* a hostile rng word: not [a-z0-9_], or empty */
        b[O_TK + 3 + 1] = 'K';
        ck_assert_int_eq(replay_state_decode(b, n, &back, NULL, &err), -EBADMSG);
        ck_assert_msg(strstr(err.msg, "(trusted_keys.rng): byte 0 not [a-z0-9_]"), "%s", err.msg);
        b[O_TK + 3 + 1] = 'k';
        b[O_TK + 3] = 0;
        ck_assert_int_eq(replay_state_decode(b, n, &back, NULL, &err), -EBADMSG);
        ck_assert_msg(strstr(err.msg, "(trusted_keys.rng)"), "%s", err.msg);
        free(b);

        /* the encoder refuses what the decoder would: a word with a byte outside [a-z0-9_] */
        snprintf(s.claims.trusted_keys.requested_name, CDATA_WORD_MAX, "a;b");
        b = NULL;
        ck_assert_int_eq(replay_state_encode(&s, NULL, 0, &b, &n), -EINVAL);
        ck_assert_ptr_null(b);
        free(old);
}
END_TEST

START_TEST(test_every_truncation_is_refused_and_leaves_the_output)
{
        struct replay_state s, out, canary;
        size_t n;
        uint8_t *b;

        small_state(&s);
        b = enc(&s, &n);
        memset(&out, 0x5a, sizeof(out));
        canary = out;
        for (size_t k = 0; k < n; k++) {
                struct attest_err err = {0};

                ck_assert_int_eq(replay_state_decode(b, k, &out, NULL, &err), -EBADMSG);
                ck_assert_msg(err.code ==
                                      (k < 3 ? AE_REPLAY_STATE_MAGIC : AE_REPLAY_STATE_TRUNCATED),
                              "%zu: %s %s", k, attest_code_name(err.code), err.msg);
                ck_assert_int_eq(memcmp(&out, &canary, sizeof(out)), 0);
        }
        free(b);
}
END_TEST

static void put_u64(uint8_t *p, uint64_t v)
{
        for (int i = 0; i < 8; i++)
                p[i] = (uint8_t)(v >> (8 * i));
}

static void put_u32(uint8_t *p, uint32_t v)
{
        for (int i = 0; i < 4; i++)
                p[i] = (uint8_t)(v >> (8 * i));
}

START_TEST(test_each_field_out_of_range_is_refused)
{
        static const struct {
                unsigned off, width; /* width 1, 4 or 8 bytes */
                uint64_t value;
                enum attest_code code;
                const char *msg;
        } cases[] = {
                {0, 1, 'A', AE_REPLAY_STATE_MAGIC, "byte 0"},
                {O_VERSION, 1, 1, AE_REPLAY_STATE_VERSION, "byte 3 (version): 1"},
                {O_FLAGS, 1, 0x08 | 7, AE_REPLAY_STATE_BAD_VALUE, "byte 4 (flags): unknown bits"},
                {O_FLAGS, 1, 0x05, AE_REPLAY_STATE_BAD_VALUE, "byte 4 (flags): boot_aggregate ok"},
                {O_FLAGS, 1, 0x02, AE_REPLAY_STATE_BAD_VALUE, "byte 4 (flags): an invalid state"},
                {O_CLOCK, 8, (uint64_t)INT64_MAX + 1, AE_REPLAY_STATE_BAD_VALUE, "byte 13 (clock)"},
                {O_ENTRIES, 8, UINT64_MAX, AE_REPLAY_STATE_BAD_VALUE, "byte 21 (entries)"},
                {O_ENTRIES, 8, 0, AE_REPLAY_STATE_BAD_VALUE, "byte 4 (flags): boot_aggregate seen"},
                {O_BANKS, 1, 0, AE_REPLAY_STATE_BAD_VALUE, "byte 29 (banks): no bank"},
                {O_BANKS, 1, 0x12, AE_REPLAY_STATE_BAD_VALUE, "byte 29 (banks): unknown bits"},
                {O_USED, 4, 1u << 24, AE_REPLAY_STATE_BAD_VALUE, "byte 30 (used): unknown bits"},
                {O_CFLAGS, 1, 0x4f, AE_REPLAY_STATE_BAD_VALUE,
                 "byte 66 (claims.flags): trusted-keys rng or requested without"},
                {O_CFLAGS, 1, 0x3e, AE_REPLAY_STATE_BAD_VALUE, "byte 66 (claims.flags): enforced"},
                {O_STATES, 8, 41, AE_REPLAY_STATE_BAD_VALUE, "byte 67 (history.states)"},
                {O_STATES, 8, 0, AE_REPLAY_STATE_BAD_VALUE, "byte 67 (history.states)"},
                {O_FIRST, 8, 40, AE_REPLAY_STATE_BAD_VALUE, "byte 75 (history.first_enforcing)"},
                {O_LAPSE, 1, SELINUX_LAPSE__COUNT, AE_REPLAY_STATE_BAD_VALUE,
                 "byte 83 (history.lapse)"},
                {O_LAPSE_ENTRY, 8, 7, AE_REPLAY_STATE_BAD_VALUE, "byte 84 (history.lapse_entry)"},
                {O_SEL_ENTRY, 8, 40, AE_REPLAY_STATE_BAD_VALUE, "byte 92 (selinux.entry)"},
                {O_SEL_FLAGS, 1, 8 | 7, AE_REPLAY_STATE_BAD_VALUE, "byte 100 (selinux.flags_"},
                {O_SEL_CAPS, 4, 1u << SELINUX_CAP__COUNT | 5, AE_REPLAY_STATE_BAD_VALUE,
                 "byte 102 (selinux.caps_present)"},
                {O_SEL_CAPVALS, 4, 2, AE_REPLAY_STATE_BAD_VALUE, "byte 106 (selinux.caps_value)"},
                {O_SEL_UNKNOWN, 4, CDATA_KV_MAX + 1, AE_REPLAY_STATE_BAD_VALUE,
                 "byte 110 (selinux.unknown_keys)"},
                {O_PH_ENTRY, 8, 41, AE_REPLAY_STATE_BAD_VALUE, "byte 114 (policy_hash.entry)"},
                {O_PH_COUNT, 4, 0, AE_REPLAY_STATE_BAD_VALUE, "byte 122 (policy_hash.count)"},
                {O_PH_LEN, 1, 0, AE_REPLAY_STATE_BAD_VALUE, "byte 126 (policy_hash.digest)"},
                {O_PH_LEN, 1, BANK_DIGEST_MAX + 1, AE_REPLAY_STATE_BAD_VALUE,
                 "byte 126 (policy_hash.digest)"},
                {O_KV_ENTRY, 8, 40, AE_REPLAY_STATE_BAD_VALUE, "byte 159 (kernel_version.entry)"},
                {O_KV_LEN, 1, 0, AE_REPLAY_STATE_BAD_VALUE, "byte 167 (kernel_version.value)"},
                {O_KV + 1, 1, ' ', AE_REPLAY_STATE_BAD_VALUE,
                 "byte 167 (kernel_version.value): byte 1 not printable"},
                {O_TK_ENTRY, 8, 40, AE_REPLAY_STATE_BAD_VALUE, "byte 175 (trusted_keys.entry)"},
                {O_TK_LEN, 1, CDATA_WORD_MAX, AE_REPLAY_STATE_BAD_VALUE,
                 "byte 183 (trusted_keys.source): length 32"},
                {O_TK, 1, 'T', AE_REPLAY_STATE_BAD_VALUE, "byte 183 (trusted_keys.source): byte 0"},
                {O_CFI_BITS, 1, 4, AE_REPLAY_STATE_BAD_VALUE, "byte 195 (cfi.bits)"},
                {O_CFI_MODE, 1, CFI_MODE__COUNT, AE_REPLAY_STATE_BAD_VALUE, "byte 196 (cfi.mode)"},
        };
        struct replay_state s, out;
        size_t n;
        uint8_t *good;

        small_state(&s);
        good = enc(&s, &n);
        for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
                uint8_t b[O_END + 1];
                struct attest_err err = {0};

                memcpy(b, good, n);
                if (cases[i].width == 1)
                        b[cases[i].off] = (uint8_t)cases[i].value;
                else if (cases[i].width == 4)
                        put_u32(b + cases[i].off, (uint32_t)cases[i].value);
                else
                        put_u64(b + cases[i].off, cases[i].value);
                ck_assert_msg(replay_state_decode(b, n, &out, NULL, &err) < 0, "case %zu accepted",
                              i);
                ck_assert_msg(err.code == cases[i].code, "case %zu: %s %s", i,
                              attest_code_name(err.code), err.msg);
                ck_assert_msg(strncmp(err.msg, cases[i].msg, strlen(cases[i].msg)) == 0,
                              "case %zu: '%s', want '%s'", i, err.msg, cases[i].msg);
        }
        /* flags_value outside flags_present */
        {
                uint8_t b[O_END];
                struct attest_err err = {0};

                memcpy(b, good, n);
                b[O_SEL_FLAGS] = 1;
                b[O_SEL_VALUES] = 2;
                ck_assert_int_eq(replay_state_decode(b, n, &out, NULL, &err), -EBADMSG);
                ck_assert_str_eq(err.msg, "byte 101 (selinux.flags_value): unknown bits 0x2");
        }
        /* one byte more */
        {
                uint8_t b[O_END + 1];
                struct attest_err err = {0};

                memcpy(b, good, n);
                b[n] = 0;
                ck_assert_int_eq(replay_state_decode(b, n + 1, &out, NULL, &err), -EBADMSG);
                ck_assert_int_eq(err.code, AE_REPLAY_STATE_TRAILING);
        }
        free(good);
}
END_TEST

/*
 * The observer's section ('R', policy/runtime-state.h fills it): its bytes come back as they were
 * given, framed after the boot section; verify reads nothing inside, but refuses a section over
 * its cap, a truncated one, one on a state with nothing known, and a second one.
 */
START_TEST(test_observer_section_is_carried_opaque)
{
        struct replay_state s, back;
        struct replay_observer_section sec = {0};
        struct attest_err err = {0};
        size_t n, plain, m;
        uint8_t *b, *c = NULL, *o = obs_bytes(REPLAY_STATE_OBSERVER_MAX + 1), *twice;
        uint64_t off = 0;

        small_state(&s);
        free(enc(&s, &plain));
        b = enc_obs(&s, o, 100, &n);
        ck_assert_uint_eq(n, plain + 5 + 100);
        ck_assert_uint_eq(b[plain], 'R');
        ck_assert_msg(replay_state_decode(b, n, &back, &sec, &err) == 0, "%s", err.msg);
        ck_assert_ptr_eq(sec.p, b + plain + 5);
        ck_assert_uint_eq(sec.len, 100);
        ck_assert_uint_eq(sec.off, plain + 5);
        ck_assert_uint_eq(sec.entries, s.entries);
        ck_assert_mem_eq(sec.p, o, 100);
        /* the boot offset reader gives the same section */
        memset(&sec, 0, sizeof(sec));
        ck_assert_int_eq(replay_state_boot_offset(b, n, &off, &sec, &err), 0);
        ck_assert_ptr_eq(sec.p, b + plain + 5);
        ck_assert_uint_eq(sec.len, 100);
        /* without one: p NULL */
        free(b);
        b = enc(&s, &n);
        sec.p = b;
        ck_assert_int_eq(replay_state_decode(b, n, &back, &sec, &err), 0);
        ck_assert_ptr_null(sec.p);
        ck_assert_uint_eq(sec.len, 0);
        free(b);
        /* 0 bytes: no section */
        b = enc_obs(&s, o, 0, &n);
        ck_assert_uint_eq(n, plain);
        free(b);
        /* every truncation inside the section is refused */
        b = enc_obs(&s, o, 100, &n);
        for (size_t k = plain + 1; k < n; k++)
                ck_assert_msg(replay_state_decode(b, k, &back, NULL, &err) < 0,
                              "%zu bytes accepted", k);
        /* a second section after it: refused (tags ascend) */
        twice = malloc(n + 6);
        memcpy(twice, b, n);
        memcpy(twice + n, b + plain, 6);
        twice[n + 1] = 1;
        twice[n + 2] = twice[n + 3] = twice[n + 4] = 0;
        ck_assert_int_eq(replay_state_decode(twice, n + 6, &back, NULL, &err), -EBADMSG);
        ck_assert_msg(strstr(err.msg, "(section.tag)"), "%s", err.msg);
        free(twice);
        free(b);
        /* at its cap and over it; none on a state with nothing known */
        b = enc_obs(&s, o, REPLAY_STATE_OBSERVER_MAX, &m);
        ck_assert_int_eq(replay_state_decode(b, m, &back, &sec, &err), 0);
        ck_assert_uint_eq(sec.len, REPLAY_STATE_OBSERVER_MAX);
        free(b);
        ck_assert_int_eq(replay_state_encode(&s, o, REPLAY_STATE_OBSERVER_MAX + 1, &c, &m),
                         -EINVAL);
        ck_assert_ptr_null(c);
        replay_state_init(&s);
        ck_assert_int_eq(replay_state_encode(&s, o, 10, &c, &m), -EINVAL);
        ck_assert_ptr_null(c);
        free(o);
}
END_TEST

START_TEST(test_cap_at_cap_minus_one_cap_and_cap_plus_one)
{
        struct replay_state s, out;
        struct attest_err err = {0};
        size_t n;
        uint8_t *b, *big, *obs;

        max_state(&s);
        obs = obs_bytes(REPLAY_STATE_OBSERVER_MAX);
        b = enc_obs(&s, obs, REPLAY_STATE_OBSERVER_MAX, &n);
        free(obs);
        /* the cap is the largest state's size (with the observer's section at its largest) */
        ck_assert_uint_eq(n, REPLAY_STATE_MAX);
        ck_assert_int_eq(replay_state_decode(b, n, &out, NULL, &err), 0);
        ck_assert_int_eq(out.claims.trusted_keys.source, TK_SOURCE_UNKNOWN);
        ck_assert_int_eq(replay_state_decode(b, n - 1, &out, NULL, &err), -EBADMSG);
        ck_assert_int_eq(err.code, AE_REPLAY_STATE_TRUNCATED);
        big = malloc(n + 1);
        memcpy(big, b, n);
        big[n] = 0;
        ck_assert_int_eq(replay_state_decode(big, n + 1, &out, NULL, &err), -E2BIG);
        ck_assert_int_eq(err.code, AE_REPLAY_STATE_TOO_BIG);
        free(big);
        free(b);
}
END_TEST

/* What the decoder refuses, the encoder refuses too: no state is stored that cannot be read. */
START_TEST(test_encoder_refuses_what_the_decoder_refuses)
{
        struct replay_state s;
        uint8_t *b = NULL;
        size_t n = 0;

        small_state(&s);
        s.claims.selinux.entry = s.entries;
        ck_assert_int_eq(replay_state_encode(&s, NULL, 0, &b, &n), -EINVAL);
        ck_assert_ptr_null(b);
        small_state(&s);
        s.banks = 0;
        ck_assert_int_eq(replay_state_encode(&s, NULL, 0, &b, &n), -EINVAL);
}
END_TEST

/* The measured-boot section: kept whole, and each bad field refused with its name. */
START_TEST(test_boot_section_round_trip_and_bad_fields)
{
        struct replay_state s, back;
        struct attest_err err = {0};
        uint8_t *b, *c;
        size_t n, n0, at;

        small_state(&s);
        b = enc(&s, &n0);
        free(b);
        max_boot(&s.boot);
        b = enc(&s, &n);
        ck_assert_uint_eq(n, n0 + BOOT_STATE_SECTION_MAX);
        ck_assert_int_eq(b[n0], 'B');
        ck_assert_msg(replay_state_decode(b, n, &back, NULL, &err) == 0, "%s", err.msg);
        ck_assert(back.boot.valid);
        ck_assert_uint_eq(back.boot.offset, 70000);
        ck_assert_uint_eq(back.boot.entries, 900);
        ck_assert_uint_eq(back.boot.banks, BANK_MASK_ALL);
        ck_assert_mem_eq(back.boot.pcr, s.boot.pcr, sizeof(s.boot.pcr));
        ck_assert_mem_eq(&back.boot.claims, &s.boot.claims, sizeof(s.boot.claims));
        /* an invalid boot state is not written */
        s.boot.valid = false;
        c = enc(&s, &n);
        ck_assert_uint_eq(n, n0);
        free(c);
        /* each field checked: the entry count (after tag, length, offset) */
        c = malloc(n0 + BOOT_STATE_SECTION_MAX);
        at = n0 + 5 + 8;
        memcpy(c, b, n0 + BOOT_STATE_SECTION_MAX);
        memset(c + at, 0, 8);
        ck_assert_int_eq(replay_state_decode(c, n0 + BOOT_STATE_SECTION_MAX, &back, NULL, &err),
                         -EBADMSG);
        ck_assert_int_eq(err.code, AE_REPLAY_STATE_BAD_VALUE);
        ck_assert_msg(strstr(err.msg, "(boot.entries)"), "%s", err.msg);
        /* the number of algorithms */
        memcpy(c, b, n0 + BOOT_STATE_SECTION_MAX);
        c[n0 + 5 + 16] = 9;
        ck_assert_int_eq(replay_state_decode(c, n0 + BOOT_STATE_SECTION_MAX, &back, NULL, &err),
                         -EBADMSG);
        ck_assert_msg(strstr(err.msg, "(boot.n_algs)"), "%s", err.msg);
        /* a sha256 digest size that is not 32 */
        memcpy(c, b, n0 + BOOT_STATE_SECTION_MAX);
        c[n0 + 5 + 17 + 4 + 2] = 31;
        ck_assert_int_eq(replay_state_decode(c, n0 + BOOT_STATE_SECTION_MAX, &back, NULL, &err),
                         -EBADMSG);
        ck_assert_msg(strstr(err.msg, "(boot.alg)"), "%s", err.msg);
        /* the section twice */
        free(c);
        c = malloc(n0 + 2 * BOOT_STATE_SECTION_MAX);
        memcpy(c, b, n0 + BOOT_STATE_SECTION_MAX);
        memcpy(c + n0 + BOOT_STATE_SECTION_MAX, b + n0, BOOT_STATE_SECTION_MAX);
        ck_assert_int_eq(replay_state_decode(c, n0 + 2 * BOOT_STATE_SECTION_MAX, &back, NULL, &err),
                         -EBADMSG);
        ck_assert_msg(strstr(err.msg, "(section.tag)"), "%s", err.msg);
        /* truncated inside the section: every length */
        for (size_t k = n0 + 1; k < n0 + BOOT_STATE_SECTION_MAX; k++)
                ck_assert_int_eq(replay_state_decode(b, k, &back, NULL, &err), -EBADMSG);
        free(c);
        free(b);
}
END_TEST

/* The challenge's reader and the decoder on the same bytes: the same result, error and offset. */
static void expect_agree(const uint8_t *b, size_t n, const char *what)
{
        struct replay_state back;
        struct attest_err e1 = {0}, e2 = {0};
        uint64_t off = 99;
        int x = replay_state_decode(b, n, &back, NULL, &e1),
            y = replay_state_boot_offset(b, n, &off, NULL, &e2);

        ck_assert_msg(x == y, "%s: decode %d, boot offset %d (%s)", what, x, y, e2.msg);
        ck_assert_msg(e1.code == e2.code && !strcmp(e1.msg, e2.msg), "%s: %s / %s", what, e1.msg,
                      e2.msg);
        if (x < 0)
                ck_assert_uint_eq(off, 99); /* untouched */
        else
                ck_assert_uint_eq(off, back.valid && back.boot.valid ? back.boot.offset : 0);
}

START_TEST(test_boot_offset_reader_agrees_with_the_decoder)
{
        struct replay_state s;
        struct attest_err err = {0};
        uint64_t off = 99;
        size_t n, kv;
        uint8_t *b;

        /* no boot section: 0 */
        small_state(&s);
        b = enc(&s, &n);
        ck_assert_int_eq(replay_state_boot_offset(b, n, &off, NULL, &err), 0);
        ck_assert_uint_eq(off, 0);
        free(b);
        /* nothing known: 0 */
        replay_state_init(&s);
        b = enc(&s, &n);
        off = 99;
        ck_assert_int_eq(replay_state_boot_offset(b, n, &off, NULL, &err), 0);
        ck_assert_uint_eq(off, 0);
        free(b);
        /* the boot section's offset */
        small_state(&s);
        max_boot(&s.boot);
        b = enc(&s, &n);
        ck_assert_int_eq(replay_state_boot_offset(b, n, &off, NULL, &err), 0);
        ck_assert_uint_eq(off, 70000);
        /* a bad field before a good boot section: refused as the decoder refuses it (the round
         * would replay from 0, so the challenge must not name the stored offset) */
        kv = O_KV;
        b[kv] = 0x01;
        off = 99;
        ck_assert_int_eq(replay_state_boot_offset(b, n, &off, NULL, &err), -EBADMSG);
        ck_assert_msg(strstr(err.msg, "(kernel_version.value)"), "%s", err.msg);
        ck_assert_uint_eq(off, 99);
        b[kv] = '6';
        /* every truncation, and every byte changed, at every position */
        for (size_t k = 0; k < n; k++)
                expect_agree(b, k, "truncated");
        for (size_t i = 0; i < n; i++)
                for (unsigned v = 0; v < 256; v += 51) {
                        uint8_t keep = b[i];

                        b[i] = (uint8_t)(keep ^ (v | 1));
                        expect_agree(b, n, "byte changed");
                        b[i] = keep;
                }
        ck_assert_int_eq(replay_state_boot_offset(NULL, 1, &off, NULL, &err), -EINVAL);
        free(b);
}
END_TEST

/*
 * replay_state_copy: the value whole (the PCR values of the state's banks and the rest); the other
 * banks' PCR values not touched.
 */
START_TEST(test_copy_takes_the_value_only)
{
        static struct replay_state s, d;
        size_t n, m, pcrs = offsetof(struct replay_state, pcr), end = pcrs + sizeof(s.pcr);
        uint8_t *a, *b;

        small_state(&s);
        max_boot(&s.boot);
        s.banks |= BANK_MASK(BANK_SHA1);
        s.used |= 1u << 4;
        memset(s.pcr[BANK_SHA1][4], 0x11, 20);
        memset(s.pcr[BANK_SHA256][4], 0x22, 32);
        memset(&d, 0x5a, sizeof(d));
        replay_state_copy(&d, &s);
        a = enc(&s, &n);
        b = enc(&d, &m);
        ck_assert_uint_eq(m, n);
        ck_assert_mem_eq(a, b, n);
        ck_assert_int_eq(memcmp(&d, &s, pcrs), 0);
        ck_assert_int_eq(memcmp(d.pcr[BANK_SHA1], s.pcr[BANK_SHA1], sizeof(s.pcr[0])), 0);
        ck_assert_int_eq(memcmp(d.pcr[BANK_SHA256], s.pcr[BANK_SHA256], sizeof(s.pcr[0])), 0);
        ck_assert_int_eq(memcmp((uint8_t *)&d + end, (uint8_t *)&s + end, sizeof(s) - end), 0);
        ck_assert_uint_eq(d.pcr[BANK_SHA384][10][0], 0x5a);
        free(a);
        free(b);
}
END_TEST

/* Fills the stack below the caller with 0x5a: the decoder's scratch is not found empty there. */
static void fill_stack(void)
{
        volatile uint8_t junk[4 * sizeof(struct replay_state)];

        for (size_t i = 0; i < sizeof(junk); i++)
                junk[i] = 0x5a;
}

/* called through a volatile pointer: not inlined into the test's own frame */
static void (*volatile dirty_stack)(void) = fill_stack;

/* A decoded state's banks hold zeros where no entry extended a PCR: the replay starts there. */
START_TEST(test_decode_empties_the_unused_pcrs_of_its_banks)
{
        static struct replay_state s, d;
        struct attest_err err = {0};
        uint8_t zero[BANK_DIGEST_MAX] = {0};
        size_t n;
        uint8_t *b;

        small_state(&s);
        s.banks |= BANK_MASK(BANK_SHA1);
        b = enc(&s, &n);
        memset(&d, 0x5a, sizeof(d));
        dirty_stack();
        ck_assert_msg(replay_state_decode(b, n, &d, NULL, &err) == 0, "%s", err.msg);
        for (unsigned i = 0; i < PCR_COUNT; i++) {
                ck_assert_int_eq(memcmp(d.pcr[BANK_SHA1][i], zero, sizeof(zero)), 0);
                if (i != 10)
                        ck_assert_int_eq(memcmp(d.pcr[BANK_SHA256][i], zero, sizeof(zero)), 0);
        }
        ck_assert_mem_eq(d.pcr[BANK_SHA256][10], s.pcr[BANK_SHA256][10], 32);
        free(b);
}
END_TEST

static Suite *replay_state_suite(void)
{
        Suite *s = suite_create("replay-state");
        TCase *tc = tcase_create("codec");

        tcase_add_test(tc, test_round_trip_keeps_every_field);
        tcase_add_test(tc, test_trusted_keys_rng_and_requested_round_trip);
        tcase_add_test(tc, test_every_truncation_is_refused_and_leaves_the_output);
        tcase_add_test(tc, test_each_field_out_of_range_is_refused);
        tcase_add_test(tc, test_cap_at_cap_minus_one_cap_and_cap_plus_one);
        tcase_add_test(tc, test_observer_section_is_carried_opaque);
        tcase_add_test(tc, test_encoder_refuses_what_the_decoder_refuses);
        tcase_add_test(tc, test_boot_section_round_trip_and_bad_fields);
        tcase_add_test(tc, test_boot_offset_reader_agrees_with_the_decoder);
        tcase_add_test(tc, test_copy_takes_the_value_only);
        tcase_add_test(tc, test_decode_empties_the_unused_pcrs_of_its_banks);
        suite_add_tcase(s, tc);
        return s;
}

int main(void)
{
        return tu_run(replay_state_suite());
}
