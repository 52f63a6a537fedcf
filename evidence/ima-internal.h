/* SPDX-License-Identifier: MIT */
/*
 * Shared by the evidence/ima-*.c files and their unit test only (not installed, not for other
 * modules): template field decoding, the reader's template cache and the two readers' next-entry
 * functions.
 */
#ifndef ATTEST_IMA_INTERNAL_H
#define ATTEST_IMA_INTERNAL_H

#include <string.h>

#include "evidence/hashalg.h"
#include "evidence/ima.h"

/* "entry IDX at byte OFF: WHAT" */
int ima_fail_entry(struct attest_err *err, int e, enum attest_code code, uint64_t idx, uint64_t off,
                   const char *what);
bool ima_all_zero(const uint8_t *p, size_t n);
/*
 * name (len bytes, no ':') is a digest algorithm d-ng may name, and its digests are size bytes:
 * only the kernel's hash_algo_name[] names (no alias), each with its digest size. Inline: both
 * readers ask for every entry.
 */
static inline bool ima_digest_algo_ok(const char *name, uint32_t len, uint32_t size)
{
        const struct hashalg *a = hashalg_from_kernel_name(name, len);

        return a && a->size == size;
}

/*
 * Template 'ima' at r: digest[20] | u32 len | name (at most IMA_LEGACY_NAME_MAX bytes, no NUL).
 * It carries no data length of its own, so this also measures it: e->data and e->data_len are
 * set to the span read, and the decoded fields. r moves only on success. base + rd_offset(r) is
 * the byte offset in the log, for messages.
 */
int ima_tmpl_decode_legacy(struct rd *r, bool big_endian, struct ima_entry *e, uint64_t idx,
                           uint64_t base, struct attest_err *err) _wur_;
/*
 * Decode e->data by e->tmpl into e's field views and check violations. idx and base (byte
 * offset of the data in the log, 0 for ascii) only feed messages.
 */
int ima_tmpl_decode(struct ima_entry *e, bool big_endian, uint64_t idx, uint64_t base,
                    struct attest_err *err) _wur_;
/* Violations carry a zero file digest (the kernel's ima_eventdigest_init). */
int ima_tmpl_check_violation(const struct ima_entry *e, uint64_t idx, uint64_t base,
                             struct attest_err *err) _wur_;

/* ima_reader_tmpl() past its cache: the lookup, which fills the cache */
int ima_reader_tmpl_lookup(struct ima_reader *rd, const uint8_t *name, uint32_t len,
                           struct ima_tmpl *ret) _wur_;
/*
 * Template by name through the reader's one-entry cache; unknown names give known = false. The
 * cache's hit inline: every entry of a log asks.
 */
_wur_ static inline int ima_reader_tmpl(struct ima_reader *rd, const uint8_t *name, uint32_t len,
                                        struct ima_tmpl *ret)
{
        if (rd->tname_len == len && len && memcmp(rd->tname, name, len) == 0) {
                *ret = rd->tmpl;
                return 0;
        }
        return ima_reader_tmpl_lookup(rd, name, len, ret);
}
void ima_reader_opts(struct ima_reader *rd, const struct ima_log_opts *opts);

int ima_binary_next(struct ima_reader *rd, struct ima_entry *ret, struct attest_err *err) _wur_;
int ima_ascii_next(struct ima_reader *rd, struct ima_entry *ret, struct attest_err *err) _wur_;
bool ima_ascii_looks(const uint8_t *buf, size_t len);

#endif
