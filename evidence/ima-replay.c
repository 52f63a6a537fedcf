/* SPDX-License-Identifier: MIT */
/*
 * Template hashes, PCR replay and the boot_aggregate check (ima_crypto.c
 * ima_calc_field_array_hash, ima_calc_boot_aggregate): the hash of template 'ima' covers
 * digest || name padded with NULs to 256 bytes; every other template's covers its data as is.
 */
#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "evidence/ima.h"
#include "util/hex.h"

int ima_tmpl_hash(struct hasher *h, enum bank b, const struct ima_entry *e, uint8_t *out)
{
        int x;

        if (!e->tmpl.legacy)
                return hasher_digest(h, b, e->data, e->data_len, out);
        /* 'ima': digest || name padded to IMA_EVENT_NAME_LEN_MAX + 1 */
        uint8_t name[IMA_LEGACY_NAME_MAX + 1] = {0};

        memcpy(name, e->name, e->name_len);
        if ((x = hasher_begin(h, b)) < 0 || (x = hasher_update(h, e->digest, 20)) < 0 ||
            (x = hasher_update(h, name, sizeof(name))) < 0)
                return x;
        return hasher_end(h, out);
}

void ima_replay_init(struct ima_replay *rp, struct hasher *h, unsigned banks, bool check_sha1)
{
        memset(rp, 0, sizeof(*rp));
        rp->h = h;
        rp->banks = banks & BANK_MASK_ALL;
        rp->check_sha1 = check_sha1 || (banks & BANK_MASK(BANK_SHA1));
}

/*
 * Nothing is written to rp until every digest is made and the logged sha1 checked: a mismatch
 * (or a failing digest) leaves the replay as it was, PCRs and counters.
 *
 * Order matters for speed, not for the result. The sha1 bank is extended with the logged hash,
 * which needs nothing from the template data, so that extend comes first and the template hash
 * right after it: the two compressions share no data and the CPU runs them side by side (SHA
 * instructions are latency bound), where template hash then extend ran one after the other.
 */
int ima_replay_extend(struct ima_replay *rp, const struct ima_entry *e, uint64_t idx,
                      struct attest_err *err)
{
        uint8_t next[BANK_COUNT][BANK_DIGEST_MAX], th[BANK_DIGEST_MAX];
        unsigned banks = rp->banks;
        int x;

        if (e->violation) {
                memset(th, 0xff, sizeof(th));
                for (int b = 0; b < BANK_COUNT; b++) {
                        if (!(banks & BANK_MASK(b)))
                                continue;
                        bank_copy(next[b], rp->pcr[b][e->pcr], b);
                        if ((x = hasher_extend(rp->h, b, next[b], th)) < 0)
                                return x;
                }
        } else {
                if (banks & BANK_MASK(BANK_SHA1)) {
                        bank_copy(next[BANK_SHA1], rp->pcr[BANK_SHA1][e->pcr], BANK_SHA1);
                        if ((x = hasher_extend(rp->h, BANK_SHA1, next[BANK_SHA1], e->sha1)) < 0)
                                return x;
                }
                if (rp->check_sha1) {
                        if ((x = ima_tmpl_hash(rp->h, BANK_SHA1, e, th)) < 0)
                                return x;
                        if (memcmp(th, e->sha1, 20) != 0)
                                return attest_fail(err, -EBADMSG, AE_IMA_SHA1_MISMATCH,
                                                   "entry %" PRIu64
                                                   ": logged sha1 template hash does not match "
                                                   "the template data",
                                                   idx);
                }
                for (int b = 0; b < BANK_COUNT; b++) {
                        if (b == BANK_SHA1 || !(banks & BANK_MASK(b)))
                                continue;
                        bank_copy(next[b], rp->pcr[b][e->pcr], b);
                        if ((x = ima_tmpl_hash(rp->h, b, e, th)) < 0 ||
                            (x = hasher_extend(rp->h, b, next[b], th)) < 0)
                                return x;
                }
        }
        for (int b = 0; b < BANK_COUNT; b++)
                if (banks & BANK_MASK(b))
                        bank_copy(rp->pcr[b][e->pcr], next[b], b);
        if (e->violation)
                rp->violations++;
        rp->used |= 1u << e->pcr;
        rp->entries++;
        return 0;
}

bool ima_entry_is_boot_aggregate(const struct ima_entry *e)
{
        return e->name && e->name_len == 14 && memcmp(e->name, "boot_aggregate", 14) == 0;
}

int ima_boot_aggregate_check(struct hasher *h, const struct ima_entry *e,
                             const struct pcr_set *pcrs, struct attest_err *err)
{
        uint8_t agg[BANK_DIGEST_MAX];
        char got[2 * BANK_DIGEST_MAX + 1], want[2 * BANK_DIGEST_MAX + 1];
        unsigned last;
        int b, x;

        if (!ima_entry_is_boot_aggregate(e) || !e->digest)
                return attest_fail(err, -EINVAL, AE_IMA_NO_BOOT_AGGREGATE,
                                   "entry is not a boot_aggregate");
        b = bank_from_name(e->algo, e->algo_len);
        if (b < 0)
                return attest_fail(err, -EOPNOTSUPP, AE_IMA_BOOT_AGGREGATE_ALGO,
                                   "boot_aggregate digest algorithm %.*s has no PCR bank",
                                   (int)e->algo_len, e->algo);
        last = b == BANK_SHA1 ? 7 : 9;
        for (unsigned i = 0; i <= last; i++)
                if (!(pcrs->have[b] & (1u << i)))
                        return attest_fail(err, -ENOENT, AE_IMA_BOOT_AGGREGATE_PCRS,
                                           "boot_aggregate needs %s PCR %u", bank_name(b), i);
        if ((x = hasher_begin(h, b)) < 0)
                return x;
        for (unsigned i = 0; i <= last; i++)
                if ((x = hasher_update(h, pcrs->v[b][i], bank_size(b))) < 0)
                        return x;
        if ((x = hasher_end(h, agg)) < 0)
                return x;
        if (e->digest_len == bank_size(b) && memcmp(agg, e->digest, e->digest_len) == 0)
                return 0;
        hex_encode(e->digest, e->digest_len, got);
        hex_encode(agg, bank_size(b), want);
        return attest_fail(err, -ESTALE, AE_IMA_BOOT_AGGREGATE_MISMATCH,
                           "boot_aggregate %s:%.16s... != H(%s PCR0-%u) %.16s...", bank_name(b),
                           got, bank_name(b), last, want);
}
