/* SPDX-License-Identifier: MIT */
/*
 * IMA measurement log: templates, the binary and ascii log readers, template hashes, PCR replay
 * and the boot_aggregate check. Names follow security/integrity/ima/ (template fields d, n, d-ng,
 * n-ng, sig, buf, d-modsig, modsig).
 *
 * Readers stream: each ima_reader_next() yields one validated entry whose pointers are borrowed
 * from the log buffer (binary) or from the reader's scratch buffer (ascii, valid until the next
 * call). Nothing is allocated per entry.
 *
 * Files: ima-template.c (templates and field decoding, shared), ima-binary.c and ima-ascii.c (the
 * two readers), ima-reader.c (what they share: options, template cache, dispatch), ima-replay.c
 * (template hashes, PCR replay, boot_aggregate); ima-internal.h is their private header.
 */
#ifndef ATTEST_IMA_H
#define ATTEST_IMA_H

#include <stdbool.h>
#include <stdint.h>

#include "evidence/bank.h"
#include "util/err.h"
#include "evidence/pcrs.h"
#include "util/rd.h"

/* Caps (docs/architecture.md §4.3). */
#define IMA_NAME_MAX 4096           /* entry (event or file) name, without the NUL */
#define IMA_DATA_MAX (64 * 1024)    /* template data */
#define IMA_TMPL_NAME_MAX 255       /* template name or field list */
#define IMA_TMPL_FIELDS_MAX 16      /* fields in one template */
#define IMA_LEGACY_NAME_MAX 255     /* 'n' in template 'ima': IMA_EVENT_NAME_LEN_MAX */
#define IMA_ENTRIES_DEFAULT 1000000 /* entries per submission */
#define IMA_ASCII_LINE_MAX (2 * IMA_DATA_MAX + IMA_NAME_MAX + 512)
#define IMA_PCR 10 /* the PCR IMA extends by default */

enum ima_field {
        IMA_FIELD_D,
        IMA_FIELD_N,
        IMA_FIELD_D_NG,
        IMA_FIELD_N_NG,
        IMA_FIELD_SIG,
        IMA_FIELD_BUF,
        IMA_FIELD_D_MODSIG,
        IMA_FIELD_MODSIG,
        IMA_FIELD_COUNT,
};

struct ima_tmpl {
        bool known;  /* every field is one we decode; false: opaque data, replayed only */
        bool legacy; /* template 'ima': no data length, name padded to 256 in the hash */
        uint8_t nfields;
        uint8_t field[IMA_TMPL_FIELDS_MAX];
};

struct ima_entry {
        uint32_t pcr;
        uint8_t sha1[20];      /* the logged sha1 template hash */
        bool violation;        /* logged hash all zero: extends 0xff.. into every bank */
        const char *tmpl_name; /* borrowed, tmpl_name_len bytes, not NUL terminated */
        uint32_t tmpl_name_len;
        struct ima_tmpl tmpl;
        const uint8_t *data; /* template data as logged; what the bank hashes cover */
        uint32_t data_len;
        /* Decoded fields, borrowed from data; NULL/0 when the template lacks them. */
        /* digest algorithm of d/d-ng ("sha256"), not NUL terminated; a static string for d */
        const char *algo;
        uint32_t algo_len;
        const uint8_t *digest;
        uint32_t digest_len;
        const char *name; /* n/n-ng without its NUL; may contain any byte but NUL */
        uint32_t name_len;
        const uint8_t *sig;
        uint32_t sig_len;
        const uint8_t *buf;
        uint32_t buf_len;
        /* d-modsig ("sha256", digest of the file without its appended signature) and modsig (the
         * appended PKCS#7 DER); NULL/0 when the template lacks them or they are empty */
        const char *modsig_algo;
        uint32_t modsig_algo_len;
        const uint8_t *modsig_digest;
        uint32_t modsig_digest_len;
        const uint8_t *modsig;
        uint32_t modsig_len;
};

struct ima_log_opts {
        bool big_endian;      /* non-canonical log of a big-endian host */
        uint64_t max_entries; /* 0: IMA_ENTRIES_DEFAULT */
        /* binary: accept templates with unknown fields as opaque data (replayed, not decoded) */
        bool allow_unknown_templates;
};

enum ima_format {
        IMA_FORMAT_BINARY,
        IMA_FORMAT_ASCII,
};

struct ima_reader {
        struct rd r;
        enum ima_format format;
        struct ima_log_opts o;
        uint64_t idx;  /* index of the next entry, counted from the start of this buffer */
        uint64_t line; /* ascii: line number of the next line, from 1 */
        uint64_t base; /* byte offset in the log of r's span (0; ima_stream moves it) */
        /* last template seen, so a run of equal templates is looked up once */
        uint8_t tname[IMA_TMPL_NAME_MAX];
        uint32_t tname_len;
        struct ima_tmpl tmpl;
        uint8_t *scratch; /* ascii: rebuilt template data */
};

/* Look a template up by name ("ima-ng") or as a field list ("d-ng|n-ng|sig"). */
int ima_tmpl_lookup(const char *name, size_t len, struct ima_tmpl *ret) _wur_;
const char *ima_field_name(enum ima_field f);

/* opts may be NULL. The buffer must outlive the entries read from it. */
void ima_reader_init_binary(struct ima_reader *rd, const uint8_t *buf, size_t len,
                            const struct ima_log_opts *opts);
int ima_reader_init_ascii(struct ima_reader *rd, const char *buf, size_t len,
                          const struct ima_log_opts *opts) _wur_;
/* Binary when the buffer does not look like ascii lines ("N HEX40 "). */
int ima_reader_init_auto(struct ima_reader *rd, const uint8_t *buf, size_t len,
                         const struct ima_log_opts *opts) _wur_;
void ima_reader_done(struct ima_reader *rd);
/*
 * Read the next entry: 1 with *ret filled, 0 at the end of the log, negative errno with err
 * naming the entry, byte offset (binary) or line and field (ascii). The reader does not move on
 * failure.
 */
int ima_reader_next(struct ima_reader *rd, struct ima_entry *ret, struct attest_err *err) _wur_;

/*
 * Streaming reader: the log comes through a bounded window refilled from a read function, so
 * memory stays flat in the log's size and a pipe works as well as a file. Entries, errors and
 * byte offsets are those the whole-buffer reader gives on the same bytes. Why that holds: no
 * entry's parse looks at more than IMA_STREAM_LOOKAHEAD bytes from its start (a binary entry is
 * at most 4 + 20 + 4 + 255 + 4 + 65536 bytes, every length checked against its cap before the
 * bytes it counts are read; an ascii line at most IMA_ASCII_LINE_MAX bytes and its '\n'), and
 * before each entry the window holds that many bytes from the entry on, or all that is left of
 * the log. The entry's pointers are valid until the next ima_stream_next().
 */
#define IMA_STREAM_LOOKAHEAD (IMA_ASCII_LINE_MAX + 1)
#define IMA_STREAM_WINDOW_MIN IMA_STREAM_LOOKAHEAD
#define IMA_STREAM_WINDOW_DEFAULT (1024u * 1024)

/* Read at most n bytes into buf: 0 with *ret_n set (0 at the end of the log), or -errno. */
typedef int (*ima_stream_read_fn)(void *ctx, uint8_t *buf, size_t n, size_t *ret_n);

enum ima_stream_format {
        IMA_STREAM_AUTO, /* ascii when the first bytes look like an ascii line ("N HEX40 ") */
        IMA_STREAM_BINARY,
        IMA_STREAM_ASCII,
};

struct ima_stream {
        struct ima_reader rd; /* rd.r spans the window's bytes, rd.base their offset in the log */
        uint8_t *win;
        size_t cap;              /* window size */
        ima_stream_read_fn read; /* borrowed with ctx */
        void *ctx;
        bool eof;
        int read_error;     /* the read function's -errno, when it failed (ima_stream_next < 0) */
        uint64_t entry_idx; /* index of the entry last read or tried */
        uint64_t entry_at;  /* its byte offset in the log */
};

/*
 * Allocate a window of window bytes (IMA_STREAM_WINDOW_DEFAULT when 0, at least
 * IMA_STREAM_WINDOW_MIN), fill it and settle the format (AUTO looks at the first bytes). opts as
 * for ima_reader_init_binary(). -ENOMEM, or the read function's error (s->read_error set too).
 */
int ima_stream_init(struct ima_stream *s, enum ima_stream_format format, size_t window,
                    ima_stream_read_fn read, void *ctx, const struct ima_log_opts *opts) _wur_;
/* As ima_reader_next(); a failed read gives its -errno with err naming the byte offset. */
int ima_stream_next(struct ima_stream *s, struct ima_entry *ret, struct attest_err *err) _wur_;
void ima_stream_done(struct ima_stream *s);

/* Template hash of e in bank b into out (bank_size(b) bytes); not meaningful for violations. */
int ima_tmpl_hash(struct hasher *h, enum bank b, const struct ima_entry *e, uint8_t *out) _wur_;

struct ima_replay {
        struct hasher *h; /* borrowed */
        unsigned banks;   /* BANK_MASK() of the banks replayed */
        bool check_sha1;  /* verify the logged sha1 template hash (always when sha1 is replayed) */
        uint32_t used;    /* bit i: PCR i was extended */
        uint64_t entries, violations;
        uint8_t pcr[BANK_COUNT][PCR_COUNT][BANK_DIGEST_MAX];
};

void ima_replay_init(struct ima_replay *rp, struct hasher *h, unsigned banks, bool check_sha1);
/* Extend entry e (number idx, for messages) into every replayed bank. */
int ima_replay_extend(struct ima_replay *rp, const struct ima_entry *e, uint64_t idx,
                      struct attest_err *err) _wur_;

/*
 * Check a boot_aggregate entry against PCR values: the digest must equal H(PCR0..PCR7) for sha1 and
 * H(PCR0..PCR9) for other algorithms, in the bank of the entry's digest algorithm (the kernel's
 * ima_calc_boot_aggregate rule). 0 match, -ESTALE mismatch, -ENOENT PCRs absent, -EOPNOTSUPP algo.
 */
int ima_boot_aggregate_check(struct hasher *h, const struct ima_entry *e,
                             const struct pcr_set *pcrs, struct attest_err *err) _wur_;
bool ima_entry_is_boot_aggregate(const struct ima_entry *e);

#endif
