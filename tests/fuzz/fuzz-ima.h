/* SPDX-License-Identifier: MIT */
/*
 * The body both IMA fuzz targets share: read every entry of a log, check what the reader promises
 * (pointers inside the input or the template data, caps held, the reader unchanged on failure, an
 * err filled on every failure), replay each entry into every bank (with and without the sha1
 * check), check boot_aggregate entries, and feed critical data to the claims.
 */
#ifndef ATTEST_FUZZ_IMA_H
#define ATTEST_FUZZ_IMA_H

#include <errno.h>
#include <string.h>

#include "evidence/cdata.h"
#include "tests/fuzz/fuzz.h"
#include "evidence/ima.h"

/* Fetching the digests costs more than a small input; one hasher serves the whole run. */
static struct hasher *fuzz_hasher(void)
{
        static struct hasher *h;

        if (!h && hasher_new(&h) < 0)
                abort();
        return h;
}

static void fuzz_check_view(const void *p, uint32_t n, const struct ima_entry *e)
{
        if (!p) {
                FUZZ_CHECK(n == 0);
                return;
        }
        FUZZ_CHECK(fuzz_within(p, n, e->data, e->data_len));
}

static void fuzz_check_entry(const struct ima_entry *e, const uint8_t *in, size_t in_len,
                             bool binary)
{
        bool zero = true;

        FUZZ_CHECK(e->pcr < PCR_COUNT);
        FUZZ_CHECK(e->tmpl_name && e->tmpl_name_len >= 1 && e->tmpl_name_len <= IMA_TMPL_NAME_MAX);
        FUZZ_CHECK(e->data_len <= IMA_DATA_MAX); /* the real cap, both formats */
        FUZZ_CHECK(e->data || e->data_len == 0);
        if (binary) {
                FUZZ_CHECK(fuzz_within(e->tmpl_name, e->tmpl_name_len, in, in_len));
                FUZZ_CHECK(!e->data || fuzz_within(e->data, e->data_len, in, in_len));
        } else {
                FUZZ_CHECK(fuzz_within(e->tmpl_name, e->tmpl_name_len, in, in_len));
        }
        for (unsigned i = 0; i < 20; i++)
                zero = zero && e->sha1[i] == 0;
        FUZZ_CHECK(e->violation == zero);
        if (e->tmpl.legacy) {
                FUZZ_CHECK(e->digest && e->digest_len == 20);
                FUZZ_CHECK(e->name_len <= IMA_LEGACY_NAME_MAX);
        } else if (e->algo && !fuzz_within(e->algo, e->algo_len, e->data, e->data_len)) {
                /* a 'd' field names its algorithm by its size, with a static string */
                FUZZ_CHECK((e->algo_len == 4 && memcmp(e->algo, "sha1", 4) == 0) ||
                           (e->algo_len == 3 && memcmp(e->algo, "md5", 3) == 0));
        }
        if (e->digest) {
                FUZZ_CHECK(e->digest_len > 0 && e->digest_len <= BANK_DIGEST_MAX);
                fuzz_check_view(e->digest, e->digest_len, e);
        }
        if (e->name) {
                FUZZ_CHECK(e->name_len <= IMA_NAME_MAX);
                fuzz_check_view(e->name, e->name_len, e);
                FUZZ_CHECK(!memchr(e->name, '\0', e->name_len));
        }
        fuzz_check_view(e->sig, e->sig_len, e);
        if (e->buf)
                fuzz_check_view(e->buf, e->buf_len, e);
}

static void fuzz_check_claims(const struct cdata_claims *c)
{
        FUZZ_CHECK(c->n_selinux <= CDATA_HISTORY_MAX);
        FUZZ_CHECK(memchr(c->kernel_version, '\0', sizeof(c->kernel_version)));
        FUZZ_CHECK(c->policy_hash_len <= BANK_DIGEST_MAX);
        for (uint32_t i = 0; i < c->n_selinux; i++) {
                const struct cdata_state *s = &c->selinux[i];

                FUZZ_CHECK(s->raw && s->kvs.n <= CDATA_KV_MAX);
                for (uint32_t k = 0; k < s->kvs.n; k++)
                        FUZZ_CHECK(fuzz_within(s->kvs.kv[k].val, s->kvs.kv[k].val_len, s->raw,
                                               s->raw_len));
        }
}

/* Read the log rd was opened on to its end or its first error; in/len is the input. */
static void fuzz_ima_log(struct ima_reader *rd, const uint8_t *in, size_t len)
{
        struct hasher *h = fuzz_hasher();
        static struct ima_replay all, other; /* ~6 KiB each, kept off the stack */
        static struct pcr_set pcrs;
        bool all_ok = true;
        struct cdata_claims claims;
        struct ima_entry e;
        int x;

        /* a PCR set with every PCR present, so boot_aggregate is always checked */
        for (int b = 0; b < BANK_COUNT; b++)
                pcrs.have[b] = (1u << PCR_COUNT) - 1;
        ima_replay_init(&all, h, BANK_MASK_ALL, true);
        ima_replay_init(&other, h, BANK_MASK_ALL & ~BANK_MASK(BANK_SHA1), false);
        cdata_claims_init(&claims);
        for (;;) {
                struct ima_reader before = *rd;
                struct attest_err err = {0};
                uint64_t idx = rd->idx;

                x = ima_reader_next(rd, &e, &err);
                if (x <= 0) {
                        FUZZ_CHECK(memcmp(&before.r, &rd->r, sizeof(rd->r)) == 0);
                        FUZZ_CHECK(before.idx == rd->idx && before.line == rd->line);
                        FUZZ_CHECK(x == 0 || err.code != AE_NONE);
                        break;
                }
                FUZZ_CHECK(x == 1 && rd->idx == idx + 1);
                fuzz_check_entry(&e, in, len, rd->format == IMA_FORMAT_BINARY);
                if (all_ok && ima_replay_extend(&all, &e, idx, &err) < 0) {
                        FUZZ_CHECK(err.code != AE_NONE);
                        all_ok = false;
                }
                x = ima_replay_extend(&other, &e, idx, &err);
                FUZZ_CHECK(x == 0); /* no sha1 check: nothing left to reject */
                if (ima_entry_is_boot_aggregate(&e)) {
                        x = ima_boot_aggregate_check(h, &e, &pcrs, &err);
                        FUZZ_CHECK(x == 0 || x == -ESTALE || x == -EOPNOTSUPP || x == -EINVAL);
                }
                err = (struct attest_err){0};
                if (cdata_claims_feed(&claims, &e, idx, &err) < 0)
                        FUZZ_CHECK(err.code != AE_NONE);
                fuzz_check_claims(&claims);
        }
        FUZZ_CHECK(other.entries == rd->idx);
        FUZZ_CHECK(!all_ok || all.entries == rd->idx);
        cdata_claims_done(&claims);
}

#endif
