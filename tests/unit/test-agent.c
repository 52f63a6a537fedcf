/* SPDX-License-Identifier: MIT */
/* Agent collectors: host facts from files, the incremental IMA log reader. */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <unistd.h>
#include <zlib.h>

#include "agent/facts.h"
#include "tests/lib/imagen.h"
#include "agent/evout.h"
#include "agent/imalog.h"
#include "agent/outcome.h"
#include "tests/unit/testutil.h"

static char tmpdir[] = "/tmp/test-agent.XXXXXX";

static void put(const char *name, const void *data, size_t len, const char *mode)
{
        char path[256];
        FILE *f;

        snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
        f = fopen(path, mode);
        ck_assert_ptr_nonnull(f);
        ck_assert_uint_eq(fwrite(data, 1, len, f), len);
        fclose(f);
}

static const char *at(const char *name)
{
        static char bufs[16][256];
        static int i;
        char *p = bufs[i++ % 16];

        snprintf(p, 256, "%s/%s", tmpdir, name);
        return p;
}

START_TEST(test_facts_from_boot_config_and_cmdline)
{
        struct facts_paths p = {at("osrelease"), at("boot_id"),  at("cmdline"),   tmpdir,
                                at("config.gz"), at("hostname"), at("machine-id")};
        struct facts f;
        struct attest_err err = {0};
        static const char cfg[] = "CONFIG_FOO=y\nCONFIG_CFI_CLANG=y\n# CONFIG_CFI_PERMISSIVE is "
                                  "not set\n";

        put("osrelease", "6.1.0-attest\n", 13, "w");
        put("boot_id", "0b6cf2b2-1a5e-4d7b-9a38-0f5a3e2a0001\n", 37, "w");
        put("cmdline", "ro trusted.source=tpm quiet trusted.source=tee\n", 47, "w");
        put("config-6.1.0-attest", cfg, strlen(cfg), "w");
        ck_assert_int_eq(facts_collect(&p, &f, &err), 0);
        ck_assert_str_eq(f.kernel, "6.1.0-attest");
        ck_assert_str_eq(f.boot_id, "0b6cf2b2-1a5e-4d7b-9a38-0f5a3e2a0001");
        ck_assert(f.cfi_present);
        ck_assert_str_eq(f.cfi_source, "config");
        ck_assert(f.cfi_enabled);
        ck_assert(!f.cfi_permissive);
        ck_assert(f.tk_present);
        ck_assert_str_eq(f.tk_source, "tee"); /* the last one wins */
        ck_assert_str_eq(f.tk_origin, "cmdline");
}
END_TEST

/* Host name and machine id: read, validated; a malformed machine id is an error naming the file. */
START_TEST(test_facts_identity)
{
        struct facts_paths p = {.hostname = at("hostname"), .machine_id = at("machine-id")};
        static const struct {
                const char *text;
                bool ok;
        } ids[] = {
                {"0123456789abcdef0123456789abcdef\n", true},
                {"0123456789abcdef0123456789abcdef", true},
                {"0123456789ABCDEF0123456789abcdef\n", false},
                {"0123456789abcdef0123456789abcde\n", false},
                {"0123456789abcdef0123456789abcdef0\n", false},
                {"0123456789abcdef0123456789abcdef\n\n", false},
                {"0123456789abcdef0123456789abcdef\nx", false},
                {"", false},
                {"uninitialized\n", false},
        };
        struct facts f;
        struct attest_err err = {0};

        put("hostname", "web-01.example\n", 15, "w");
        for (size_t i = 0; i < ARRAY_SIZE(ids); i++) {
                memset(&f, 0, sizeof(f));
                memset(&err, 0, sizeof(err));
                put("machine-id", ids[i].text, strlen(ids[i].text), "w");
                if (ids[i].ok) {
                        ck_assert_msg(facts_identity(&p, &f, &err) == 0, "%zu: %s", i, err.msg);
                        ck_assert_str_eq(f.machine_id, "0123456789abcdef0123456789abcdef");
                        ck_assert_str_eq(f.hostname, "web-01.example");
                        continue;
                }
                ck_assert_msg(facts_identity(&p, &f, &err) == -EBADMSG, "%zu accepted", i);
                ck_assert_int_eq(err.code, AE_FACTS_MACHINE_ID);
                ck_assert_msg(strstr(err.msg, "machine-id: not a machine id"), "%s", err.msg);
                ck_assert_str_eq(f.machine_id, "");
        }
        /* a larger file is refused before it is read whole */
        {
                char big[4096];

                memset(big, 'a', sizeof(big));
                put("machine-id", big, sizeof(big), "w");
                ck_assert_int_eq(facts_identity(&p, &f, &err), -EBADMSG);
                ck_assert_msg(strstr(err.msg, "longer than 33 bytes"), "%s", err.msg);
        }
        /* no machine-id file: not reported, not an error */
        p.machine_id = at("none");
        ck_assert_int_eq(facts_identity(&p, &f, &err), 0);
        ck_assert_str_eq(f.machine_id, "");
        /* a host name outside [A-Za-z0-9._-] is not reported */
        put("hostname", "web 01\n", 7, "w");
        ck_assert_int_eq(facts_identity(&p, &f, &err), 0);
        ck_assert_str_eq(f.hostname, "");
}
END_TEST

START_TEST(test_facts_fall_back_to_proc_config_gz_and_absent)
{
        struct facts_paths p = {at("osrelease"), at("none"), at("none"), at("noboot"),
                                at("config.gz"), at("none"), at("none")};
        struct facts f;
        struct attest_err err = {0};
        static const char cfg[] = "CONFIG_CFI_CLANG=y\nCONFIG_CFI_PERMISSIVE=y\n";
        gzFile z;

        put("osrelease", "6.1.0-attest\n", 13, "w");
        z = gzopen(at("config.gz"), "wb");
        ck_assert_ptr_nonnull(z);
        ck_assert_int_eq(gzwrite(z, cfg, (unsigned)strlen(cfg)), (int)strlen(cfg));
        gzclose(z);
        ck_assert_int_eq(facts_collect(&p, &f, &err), 0);
        ck_assert_str_eq(f.cfi_source, "proc-config");
        ck_assert(f.cfi_enabled && f.cfi_permissive);
        ck_assert(!f.tk_present);
        ck_assert_str_eq(f.boot_id, "");
        /* no config anywhere: CFI absent, not "disabled" */
        p.config_gz = at("none");
        ck_assert_int_eq(facts_collect(&p, &f, &err), 0);
        ck_assert(!f.cfi_present);
        /* no kernel release: an error */
        p.osrelease = at("none");
        ck_assert_int_eq(facts_collect(&p, &f, &err), -EIO);
        ck_assert_int_eq(err.code, AE_FACTS_NO_KERNEL);
}
END_TEST

START_TEST(test_facts_reject_unprintable_and_spoofed_params)
{
        struct facts_paths p = {at("osrelease"), at("none"), at("cmdline"), at("noboot"),
                                at("none"),      at("none"), at("none")};
        struct facts f;
        struct attest_err err = {0};

        put("osrelease", "6.1\n", 4, "w");
        put("cmdline", "xtrusted.source=tee foo.trusted.source=tee\n", 43, "w");
        ck_assert_int_eq(facts_collect(&p, &f, &err), 0);
        ck_assert(!f.tk_present);
        put("cmdline", "a\x1b[0m trusted.source=tpm\n", 26, "w");
        ck_assert_int_eq(facts_collect(&p, &f, &err), 0);
        ck_assert_str_eq(f.cmdline, "");
        ck_assert(!f.tk_present);
}
END_TEST

static uint64_t count_entries(const uint8_t *buf, size_t len)
{
        struct ima_reader rd;
        struct ima_entry e;
        uint64_t n = 0;

        ima_reader_init_binary(&rd, buf, len, NULL);
        while (ima_reader_next(&rd, &e, NULL) > 0)
                n++;
        return n;
}

/* What a round sends, read whole for the test: scan, then the span's bytes through the stream. */
static int imalog_read(struct imalog *l, uint64_t from, uint8_t **ret, size_t *ret_len,
                       uint64_t *ret_from, uint64_t *ret_count, struct attest_err *err)
{
        struct imalog_span sp;
        struct imalog_stream st;
        uint8_t *buf;
        size_t len = 0;
        ssize_t n;
        int x;

        if ((x = imalog_scan(l, from, &sp, err)) < 0)
                return x;
        ck_assert_int_ge(sp.end, sp.start);
        buf = malloc((size_t)(sp.end - sp.start) + 1);
        ck_assert_ptr_nonnull(buf);
        ck_assert_int_eq(imalog_stream_open(l, &sp, &st, err), 0);
        /* odd-sized reads: the stream hands out any split of the span */
        while ((n = imalog_stream_read(&st, buf + len, 4099, err)) > 0)
                len += (size_t)n;
        imalog_stream_close(&st);
        ck_assert_int_eq(n, 0);
        ck_assert_uint_eq(len, (size_t)(sp.end - sp.start));
        *ret = buf;
        *ret_len = len;
        *ret_from = sp.from;
        *ret_count = sp.count;
        return 0;
}

START_TEST(test_imalog_reads_only_new_entries)
{
        size_t len, got_len;
        uint8_t *real =
                (uint8_t *)tu_read("tests/data/qemu61-tcb/binary_runtime_measurements", &len);
        uint64_t total = count_entries(real, len), from, n;
        uint8_t *got;
        struct imalog l;
        struct attest_err err = {0};
        struct imagen g;
        uint8_t d[32] = {1};

        ck_assert_uint_eq(total, 20);
        put("log", real, len, "w");
        imalog_init(&l, at("log"), IMA_FORMAT_BINARY, 0);
        ck_assert_int_eq(imalog_read(&l, 0, &got, &got_len, &from, &n, &err), 0);
        ck_assert_uint_eq(n, 20);
        ck_assert_uint_eq(got_len, len);
        ck_assert_int_eq(memcmp(got, real, len), 0);
        free(got);

        /* three new entries appended: only they come back, read from the remembered offset */
        ck_assert_int_eq(imagen_init(&g), 0);
        for (int i = 0; i < 3; i++)
                ck_assert_int_eq(imagen_ng(&g, 10, "sha256", d, 32, "/new"), 0);
        put("log", g.bin, g.bin_len, "a");
        /* scribble over the old part: an incremental read must not look at it */
        {
                FILE *f = fopen(at("log"), "r+");
                ck_assert_ptr_nonnull(f);
                fputs("garbage", f);
                fclose(f);
        }
        ck_assert_int_eq(imalog_read(&l, 20, &got, &got_len, &from, &n, &err), 0);
        ck_assert_uint_eq(from, 20);
        ck_assert_uint_eq(n, 3);
        ck_assert_uint_eq(got_len, g.bin_len);
        ck_assert_int_eq(memcmp(got, g.bin, g.bin_len), 0);
        free(got);
        /* nothing new */
        ck_assert_int_eq(imalog_read(&l, 23, &got, &got_len, &from, &n, &err), 0);
        ck_assert_uint_eq(n, 0);
        ck_assert_uint_eq(got_len, 0);
        free(got);

        /* an older offset re-reads from the start (and now meets the scribbled bytes) */
        ck_assert_int_lt(imalog_read(&l, 5, &got, &got_len, &from, &n, &err), 0);
        put("log", real, len, "w");
        put("log", g.bin, g.bin_len, "a");
        ck_assert_int_eq(imalog_read(&l, 5, &got, &got_len, &from, &n, &err), 0);
        ck_assert_uint_eq(n, 18);
        ck_assert_uint_eq(count_entries(got, got_len), 18);
        free(got);
        imagen_done(&g);
        free(real);
}
END_TEST

START_TEST(test_imalog_leaves_a_partial_entry_and_handles_a_new_boot)
{
        struct imagen g;
        uint8_t d[32] = {2}, *got;
        size_t got_len;
        uint64_t from, n;
        struct imalog l;
        struct attest_err err = {0};

        ck_assert_int_eq(imagen_init(&g), 0);
        ck_assert_int_eq(imagen_ng(&g, 10, "sha256", d, 32, "/a"), 0);
        size_t first = g.bin_len;
        ck_assert_int_eq(imagen_ng(&g, 10, "sha256", d, 32, "/b"), 0);
        put("log2", g.bin, first + 10, "w"); /* second entry half written */
        imalog_init(&l, at("log2"), IMA_FORMAT_BINARY, 0);
        ck_assert_int_eq(imalog_read(&l, 0, &got, &got_len, &from, &n, &err), 0);
        ck_assert_uint_eq(n, 1);
        ck_assert_uint_eq(got_len, first);
        free(got);
        put("log2", g.bin + first + 10, g.bin_len - first - 10, "a");
        ck_assert_int_eq(imalog_read(&l, 1, &got, &got_len, &from, &n, &err), 0);
        ck_assert_uint_eq(n, 1);
        ck_assert_uint_eq(got_len, g.bin_len - first);
        free(got);
        /* the verifier asks for entry 7 of a log that now has 2: a new boot, send all from 0 */
        ck_assert_int_eq(imalog_read(&l, 7, &got, &got_len, &from, &n, &err), 0);
        ck_assert_uint_eq(from, 0);
        ck_assert_uint_eq(n, 2);
        free(got);
        /* size cap */
        imalog_init(&l, at("log2"), IMA_FORMAT_BINARY, 16);
        ck_assert_int_eq(imalog_read(&l, 0, &got, &got_len, &from, &n, &err), -E2BIG);
        ck_assert_int_eq(err.code, AE_IMALOG_TOO_BIG);
        /* ascii */
        put("log3", g.txt, g.txt_len, "w");
        imalog_init(&l, at("log3"), IMA_FORMAT_ASCII, 0);
        ck_assert_int_eq(imalog_read(&l, 1, &got, &got_len, &from, &n, &err), 0);
        ck_assert_uint_eq(n, 1);
        ck_assert_int_eq(memcmp(got, strchr(g.txt, '\n') + 1, got_len), 0);
        free(got);
        imagen_done(&g);
}
END_TEST

/* n ima-ng entries with names of varied length, so boundaries fall anywhere in a chunk. */
static void gen_entries(struct imagen *g, unsigned n, unsigned seed)
{
        char name[300];
        uint8_t d[32] = {0};

        for (unsigned i = 0; i < n; i++) {
                size_t k = (size_t)snprintf(name, sizeof(name), "/usr/lib/%u/", i);

                memset(name + k, 'a' + (int)(i % 26), (i * 37) % 200);
                name[k + (i * 37) % 200] = '\0';
                d[0] = (uint8_t)i;
                d[1] = (uint8_t)(i >> 8);
                d[2] = (uint8_t)seed;
                ck_assert_int_eq(imagen_ng(g, 10, "sha256", d, 32, name), 0);
        }
}

/* Offset (bytes) where entry number `idx` starts in a binary or ascii log. */
static size_t entry_start(const uint8_t *buf, size_t len, enum ima_format f, uint64_t idx)
{
        struct ima_reader rd;
        struct ima_entry e;
        size_t off = 0;

        if (f == IMA_FORMAT_ASCII)
                ck_assert_int_eq(ima_reader_init_ascii(&rd, (const char *)buf, len, NULL), 0);
        else
                ima_reader_init_binary(&rd, buf, len, NULL);
        for (uint64_t i = 0; i < idx; i++) {
                ck_assert_int_eq(ima_reader_next(&rd, &e, NULL), 1);
                off = rd_offset(&rd.r);
        }
        ima_reader_done(&rd);
        return off;
}

/*
 * A log several read buffers long, in both formats: every offset asked (in the first chunk, on
 * a chunk boundary, in the last) gives exactly the bytes of the entries from there, entries
 * straddling the reads included; a last entry half written is left for the next round.
 */
START_TEST(test_imalog_streams_a_log_longer_than_its_buffer)
{
        struct attest_err err = {0};
        struct imagen g;
        uint8_t *got;
        size_t got_len;
        uint64_t from, n;
        struct imalog l;

        ck_assert_int_eq(imagen_init(&g), 0);
        gen_entries(&g, 9000, 1);
        ck_assert_uint_gt(g.bin_len, 3 * IMALOG_CHUNK);
        ck_assert_uint_gt(g.txt_len, 3 * IMALOG_CHUNK);
        for (int f = 0; f < 2; f++) {
                enum ima_format fmt = f ? IMA_FORMAT_ASCII : IMA_FORMAT_BINARY;
                const uint8_t *all = f ? (const uint8_t *)g.txt : g.bin;
                size_t all_len = f ? g.txt_len : g.bin_len;
                static const uint64_t offs[] = {0, 1, 2047, 2500, 4999, 8999, 9000};

                for (size_t i = 0; i < ARRAY_SIZE(offs); i++) {
                        size_t at0 = entry_start(all, all_len, fmt, offs[i]);

                        put("big", all, all_len, "w");
                        imalog_init(&l, at("big"), fmt, 0);
                        ck_assert_int_eq(imalog_read(&l, offs[i], &got, &got_len, &from, &n, &err),
                                         0);
                        ck_assert_uint_eq(from, offs[i]);
                        ck_assert_uint_eq(n, 9000 - offs[i]);
                        ck_assert_uint_eq(got_len, all_len - at0);
                        ck_assert_int_eq(memcmp(got, all + at0, got_len), 0);
                        free(got);
                }
                /* the last entry half written: 8999 whole ones, the rest next round */
                size_t last = entry_start(all, all_len, fmt, 8999);
                put("big", all, last + (all_len - last) / 2, "w");
                imalog_init(&l, at("big"), fmt, 0);
                ck_assert_int_eq(imalog_read(&l, 0, &got, &got_len, &from, &n, &err), 0);
                ck_assert_uint_eq(n, 8999);
                ck_assert_uint_eq(got_len, last);
                free(got);
                put("big", all + last + (all_len - last) / 2, all_len - last - (all_len - last) / 2,
                    "a");
                ck_assert_int_eq(imalog_read(&l, 8999, &got, &got_len, &from, &n, &err), 0);
                ck_assert_uint_eq(n, 1);
                ck_assert_uint_eq(got_len, all_len - last);
                free(got);
        }
        imagen_done(&g);
}
END_TEST

/* An entry over the readers' caps is refused, not buffered. */
START_TEST(test_imalog_refuses_an_oversized_entry)
{
        struct attest_err err = {0};
        struct imalog_span sp;
        struct imalog l;
        struct imagen g;
        uint8_t *big = calloc(1, IMA_DATA_MAX + 64);
        struct imagen_field fld = {IMA_FIELD_BUF, big, IMA_DATA_MAX + 64};

        ck_assert_ptr_nonnull(big);
        ck_assert_int_eq(imagen_init(&g), 0);
        gen_entries(&g, 3, 7);
        ck_assert_int_eq(imagen_fields(&g, 10, "ima-buf", &fld, 1, 0), 0);
        put("over", g.bin, g.bin_len, "w");
        imalog_init(&l, at("over"), IMA_FORMAT_BINARY, 0);
        ck_assert_int_eq(imalog_scan(&l, 0, &sp, &err), -E2BIG);
        ck_assert_int_eq(err.code, AE_IMA_DATA_TOO_LONG);
        imagen_done(&g);
        free(big);
}
END_TEST

/*
 * The log changes between the scan and the send: grown, only the scanned entries go; shrunk or
 * rewritten under the range, the stream fails before it hands out the span's last bytes.
 */
START_TEST(test_imalog_stream_refuses_a_log_changed_under_it)
{
        struct attest_err err = {0};
        struct imalog_span sp;
        struct imalog_stream st;
        struct imagen g, h;
        struct imalog l;
        uint8_t *buf = malloc(4 * IMALOG_CHUNK);
        size_t len;
        ssize_t r;

        ck_assert_ptr_nonnull(buf);
        ck_assert_int_eq(imagen_init(&g), 0);
        ck_assert_int_eq(imagen_init(&h), 0);
        gen_entries(&g, 3000, 3);
        gen_entries(&h, 3000, 4); /* same sizes, other digests */
        ck_assert_uint_eq(g.bin_len, h.bin_len);
        for (int kind = 0; kind < 3; kind++) {
                put("chg", g.bin, g.bin_len, "w");
                imalog_init(&l, at("chg"), IMA_FORMAT_BINARY, 0);
                ck_assert_int_eq(imalog_scan(&l, 0, &sp, &err), 0);
                ck_assert_uint_eq(sp.count, 3000);
                if (kind == 0) /* grown: a new entry after the span */
                        put("chg", h.bin, 200, "a");
                else if (kind == 1) /* shrunk */
                        ck_assert_int_eq(truncate(at("chg"), (off_t)g.bin_len - 1000), 0);
                else /* rewritten in place, same length */
                        put("chg", h.bin, h.bin_len, "w");
                ck_assert_int_eq(imalog_stream_open(&l, &sp, &st, &err), 0);
                len = 0;
                while ((r = imalog_stream_read(&st, buf + len, 65536, &err)) > 0)
                        len += (size_t)r;
                imalog_stream_close(&st);
                if (kind == 0) {
                        ck_assert_int_eq(r, 0);
                        ck_assert_uint_eq(len, g.bin_len);
                        ck_assert_int_eq(memcmp(buf, g.bin, len), 0);
                } else {
                        ck_assert_int_eq(r, -ESTALE);
                        ck_assert_int_eq(err.code, AE_IMALOG_READ);
                        ck_assert_uint_lt(len, g.bin_len); /* the end never handed out */
                }
        }
        imagen_done(&g);
        imagen_done(&h);
        free(buf);
}
END_TEST

/* Everything an evout produces, read in reads of n bytes. */
static char *evout_all(const struct evidence *ev, const struct imalog *l,
                       const struct imalog_span *sp, size_t n)
{
        struct attest_err err = {0};
        struct evout o;
        char *buf;
        size_t len = 0;
        ssize_t r;

        ck_assert_int_eq(evout_open(&o, ev, l, sp, &err), 0);
        buf = malloc(evout_size(&o) + 1);
        ck_assert_ptr_nonnull(buf);
        while ((r = evout_read(&o, (uint8_t *)buf + len, n, &err)) > 0)
                len += (size_t)r;
        ck_assert_int_eq(r, 0);
        ck_assert_uint_eq(len, evout_size(&o));
        evout_close(&o);
        buf[len] = '\0';
        return buf;
}

/*
 * The streamed evidence is, byte for byte, what evidence_to_json() makes of the same evidence
 * (what attestd has always read), and evidence_from_json() reads it back: with and without host
 * facts and entries, several banks, quotes and backslashes in the facts.
 */
START_TEST(test_evout_is_evidence_to_json_byte_for_byte)
{
        static const size_t reads[] = {1, 7, 4096, 1u << 20};
        struct attest_err err = {0};
        struct evidence ev, *back = NULL;
        struct imalog_span sp;
        struct imagen g;
        struct imalog l;
        uint8_t attest[145], sig[262];

        ck_assert_int_eq(imagen_init(&g), 0);
        gen_entries(&g, 2000, 9);
        put("ev", g.bin, g.bin_len, "w");
        for (size_t i = 0; i < sizeof(attest); i++)
                attest[i] = (uint8_t)(i * 7);
        for (size_t i = 0; i < sizeof(sig); i++)
                sig[i] = (uint8_t)(i * 13 + 1);
        for (int variant = 0; variant < 4; variant++) {
                uint64_t from = variant == 1 ? 2000 : variant == 2 ? 1999 : 0;
                _cleanup_free_ char *want = NULL;

                memset(&ev, 0, sizeof(ev));
                ev.nonce_len = 32;
                memset(ev.nonce, 0xab, 32);
                ev.attest = attest;
                ev.attest_len = sizeof(attest) - (size_t)variant; /* every base64 padding */
                ev.sig = sig;
                ev.sig_len = sizeof(sig);
                for (int b = 0; b < BANK_COUNT; b++)
                        if (variant == 3 || b == BANK_SHA256 || (variant == 0 && b == BANK_SHA1))
                                for (unsigned p = 0; p < PCR_COUNT; p += 1 + (unsigned)b) {
                                        ev.pcrs.have[b] |= 1u << p;
                                        memset(ev.pcrs.v[b][p], (int)(p + 16 * b), bank_size(b));
                                }
                if (variant != 1) {
                        snprintf(ev.host.kernel, sizeof(ev.host.kernel), "6.1.0-%d", variant);
                        ev.host.cmdline = (char *)"ro root=\"/dev/vda\" a\\b trusted.source=tpm";
                        snprintf(ev.host.boot_id, sizeof(ev.host.boot_id),
                                 "0b6cf2b2-1a5e-4d7b-9a38-0f5a3e2a000%d", variant);
                        ev.host.cfi_present = variant != 2;
                        snprintf(ev.host.cfi_source, sizeof(ev.host.cfi_source), "config");
                        ev.host.cfi_enabled = variant == 0;
                        ev.host.cfi_permissive = true;
                        ev.host.tk_present = variant != 3;
                        snprintf(ev.host.tk_source, sizeof(ev.host.tk_source), "tpm");
                        snprintf(ev.host.tk_origin, sizeof(ev.host.tk_origin), "cmdline");
                }
                imalog_init(&l, at("ev"), IMA_FORMAT_BINARY, 0);
                ck_assert_int_eq(imalog_scan(&l, from, &sp, &err), 0);
                ev.ima_offset = sp.from;
                ev.ima_format = IMA_FORMAT_BINARY;
                /* the reference: the same evidence with its entries in memory */
                ev.ima = sp.count ? g.bin + entry_start(g.bin, g.bin_len, IMA_FORMAT_BINARY, from)
                                  : NULL;
                ev.ima_len = (size_t)(sp.end - sp.start);
                ck_assert_int_eq(evidence_to_json(&ev, &want), 0);
                ev.ima = NULL;
                ev.ima_len = 0;
                for (size_t r = 0; r < ARRAY_SIZE(reads); r++) {
                        _cleanup_free_ char *got = evout_all(&ev, &l, &sp, reads[r]);

                        ck_assert_msg(strcmp(got, want) == 0,
                                      "variant %d, reads of %zu:\n%.300s\n%.300s", variant,
                                      reads[r], got, want);
                }
                _cleanup_free_ char *got = evout_all(&ev, &l, &sp, 4096);
                ck_assert_msg(evidence_from_json(got, strlen(got), 16u << 20, &back, &err) == 0,
                              "%s", err.msg);
                ck_assert_uint_eq(back->ima_len, (size_t)(sp.end - sp.start));
                back = evidence_free(back);
        }
        /* a host fact that is not printable ASCII is refused (facts.c never makes one) */
        ev.host.cmdline = (char *)"a\tb";
        struct evout o;
        ck_assert_int_eq(evout_open(&o, &ev, &l, &sp, &err), -EINVAL);
        ck_assert_int_eq(err.code, AE_EVIDENCE_BAD_VALUE);
        imagen_done(&g);
}
END_TEST

static void setup(void)
{
        ck_assert_ptr_nonnull(mkdtemp(tmpdir));
}

static void teardown(void)
{
        char cmd[300];

        snprintf(cmd, sizeof(cmd), "rm -rf %s", tmpdir);
        ck_assert_int_eq(system(cmd), 0);
        memcpy(tmpdir + strlen(tmpdir) - 6, "XXXXXX", 6);
}

/* ---- the round's outcome and what the agent does next (local errors, decommission) ---- */

static enum agent_action act(enum agent_step step, enum agent_outcome_kind kind, int error,
                             long status, const char *code)
{
        struct agent_outcome o = {
                .kind = kind, .error = error, .status = status, .code = agent_api_code(code)};

        return agent_outcome_action(step, &o);
}

#define ck_act(want, ...)                                                                          \
        do {                                                                                       \
                enum agent_action got_ = act(__VA_ARGS__);                                         \
                ck_assert_msg(got_ == (want), "%s: %s, want %s", #__VA_ARGS__,                     \
                              agent_action_name(got_), agent_action_name(want));                   \
        } while (0)

START_TEST(test_outcome_local_errors_never_reenrol)
{
        static const int errs[] = {-ENOENT, -EACCES, -EIO, -EBADMSG, -E2BIG, -ENOMEM, -EPERM};

        for (size_t i = 0; i < ARRAY_SIZE(errs); i++)
                for (int step = AGENT_STEP_ENROL; step <= AGENT_STEP_ROUND; step++) {
                        /* a missing IMA log, TPM or state-dir failure: back off, keep the id */
                        ck_act(AGENT_ACT_BACKOFF, step, AGENT_OUTCOME_LOCAL, errs[i], 0, NULL);
                        /* no answer, or one the agent cannot use: the next verifier */
                        ck_act(AGENT_ACT_FAILOVER, step, AGENT_OUTCOME_TRANSPORT, errs[i], 0, NULL);
                        ck_act(AGENT_ACT_FAILOVER, step, AGENT_OUTCOME_PROTOCOL, errs[i], 0, NULL);
                }
        /* a stray status or code next to a local failure changes nothing */
        ck_act(AGENT_ACT_BACKOFF, AGENT_STEP_ROUND, AGENT_OUTCOME_LOCAL, -ENOENT, 404,
               "agent_not_found");
        ck_act(AGENT_ACT_BACKOFF, AGENT_STEP_ROUND, AGENT_OUTCOME_LOCAL, -ENOENT, 403,
               "agent_decommissioned");
        ck_act(AGENT_ACT_PROCEED, AGENT_STEP_ROUND, AGENT_OUTCOME_DONE, 0, 0, NULL);
        ck_act(AGENT_ACT_PROCEED, AGENT_STEP_ENROL, AGENT_OUTCOME_DONE, 0, 0, NULL);
}
END_TEST

START_TEST(test_outcome_http_statuses_and_codes)
{
        const enum agent_step R = AGENT_STEP_ROUND, E = AGENT_STEP_ENROL;
        const enum agent_outcome_kind H = AGENT_OUTCOME_HTTP;

        /* forgotten (DELETE): only 404 agent_not_found in a round enrols again */
        ck_act(AGENT_ACT_REENROL, R, H, 0, 404, "agent_not_found");
        ck_act(AGENT_ACT_BACKOFF, R, H, 0, 404, "not_found");
        ck_act(AGENT_ACT_BACKOFF, R, H, 0, 404, NULL);
        ck_act(AGENT_ACT_BACKOFF, R, H, 0, 400, "agent_not_found");
        ck_act(AGENT_ACT_BACKOFF, E, H, 0, 404, "agent_not_found"); /* gone before activation */
        /* decommissioned: stop for good, from a round or from enrolment */
        ck_act(AGENT_ACT_EXIT_DECOMMISSIONED, R, H, 0, 403, "agent_decommissioned");
        ck_act(AGENT_ACT_EXIT_DECOMMISSIONED, R, H, 0, 403, "ek_decommissioned");
        ck_act(AGENT_ACT_EXIT_DECOMMISSIONED, E, H, 0, 403, "ek_decommissioned");
        ck_act(AGENT_ACT_EXIT_DECOMMISSIONED, E, H, 0, 403, "agent_decommissioned");
        /* other refusals of a round: keep the id, back off */
        ck_act(AGENT_ACT_BACKOFF, R, H, 0, 403, "agent_not_active");
        ck_act(AGENT_ACT_BACKOFF, R, H, 0, 403, "forbidden");
        ck_act(AGENT_ACT_BACKOFF, R, H, 0, 409, "agent_busy");
        /* the verifier busy or broken: another one may answer */
        ck_act(AGENT_ACT_FAILOVER, R, H, 0, 503, "nonces_exhausted");
        ck_act(AGENT_ACT_FAILOVER, R, H, 0, 503, "store_busy");
        ck_act(AGENT_ACT_FAILOVER, R, H, 0, 503, "server_busy");
        ck_act(AGENT_ACT_FAILOVER, R, H, 0, 502, NULL);
        ck_act(AGENT_ACT_FAILOVER, R, H, 0, 500, NULL);
        /* about this agent or request: the same verifier, later */
        ck_act(AGENT_ACT_BACKOFF, R, H, 0, 429, NULL);
        ck_act(AGENT_ACT_BACKOFF, R, H, 0, 408, NULL);
        /* a stale nonce: one fresh challenge */
        ck_act(AGENT_ACT_RECHALLENGE, R, H, 0, 410, "nonce_expired");
        ck_act(AGENT_ACT_RECHALLENGE, R, H, 0, 409, "nonce_unknown");
        /* a new runtime policy: the log is judged from entry 0, one fresh challenge at once */
        ck_act(AGENT_ACT_RECHALLENGE, R, H, 0, 409, "runtime_policy_changed");
        ck_act(AGENT_ACT_EXIT_REFUSED, E, H, 0, 409, "runtime_policy_changed");
        /* enrolment: the verifier down or busy is retried, a refusal is final */
        ck_act(AGENT_ACT_FAILOVER, E, H, 0, 503, NULL);
        ck_act(AGENT_ACT_BACKOFF, E, H, 0, 429, NULL);
        ck_act(AGENT_ACT_BACKOFF, E, H, 0, 408, NULL);
        ck_act(AGENT_ACT_EXIT_REFUSED, E, H, 0, 401, "unauthorized");
        ck_act(AGENT_ACT_EXIT_REFUSED, E, H, 0, 403, "ek_cert_required");
        ck_act(AGENT_ACT_EXIT_REFUSED, E, H, 0, 409, "agent_exists");
        ck_act(AGENT_ACT_EXIT_REFUSED, E, H, 0, 410, "nonce_expired");
}
END_TEST

START_TEST(test_outcome_code_names_and_exit_statuses)
{
        for (int c = AE_NONE + 1; c < AE__COUNT; c++)
                ck_assert_int_eq(agent_api_code(attest_code_name((enum attest_code)c)), c);
        ck_assert_int_eq(agent_api_code(NULL), AE_NONE);
        ck_assert_int_eq(agent_api_code(""), AE_NONE);
        ck_assert_int_eq(agent_api_code("AGENT_NOT_FOUND"), AE_NONE);
        ck_assert_int_eq(agent_api_code("agent_not_found "), AE_NONE);
        ck_assert_int_eq(agent_api_code("agent_decommissioned"), AE_AGENT_DECOMMISSIONED);
        ck_assert_str_eq(attest_code_name(AE_EK_DECOMMISSIONED), "ek_decommissioned");
        for (int a = 0; a < AGENT_ACT_COUNT; a++)
                ck_assert_str_ne(agent_action_name(a), "?");
        for (int k = 0; k < AGENT_OUTCOME_KIND_COUNT; k++)
                ck_assert_str_ne(agent_outcome_kind_name(k), "?");
        /* the documented statuses (attest-agent(8), RestartPreventExitStatus= in the unit) */
        ck_assert_int_eq(AGENT_EXIT_PASS, 0);
        ck_assert_int_eq(AGENT_EXIT_FAIL, 1);
        ck_assert_int_eq(AGENT_EXIT_ERROR, 2);
        ck_assert_int_eq(AGENT_EXIT_DECOMMISSIONED, 3);
}
END_TEST

static Suite *agent_suite(void)
{
        Suite *s = suite_create("agent");
        TCase *tc = tcase_create("collectors");
        TCase *oc = tcase_create("outcome");

        tcase_add_checked_fixture(tc, setup, teardown);
        tcase_set_timeout(tc, 120); /* ASan on a shared machine: logs of several MB */
        tcase_add_test(tc, test_facts_from_boot_config_and_cmdline);
        tcase_add_test(tc, test_facts_identity);
        tcase_add_test(tc, test_facts_fall_back_to_proc_config_gz_and_absent);
        tcase_add_test(tc, test_facts_reject_unprintable_and_spoofed_params);
        tcase_add_test(tc, test_imalog_reads_only_new_entries);
        tcase_add_test(tc, test_imalog_leaves_a_partial_entry_and_handles_a_new_boot);
        tcase_add_test(tc, test_imalog_streams_a_log_longer_than_its_buffer);
        tcase_add_test(tc, test_imalog_refuses_an_oversized_entry);
        tcase_add_test(tc, test_imalog_stream_refuses_a_log_changed_under_it);
        tcase_add_test(tc, test_evout_is_evidence_to_json_byte_for_byte);
        suite_add_tcase(s, tc);
        tcase_add_test(oc, test_outcome_local_errors_never_reenrol);
        tcase_add_test(oc, test_outcome_http_statuses_and_codes);
        tcase_add_test(oc, test_outcome_code_names_and_exit_statuses);
        suite_add_tcase(s, oc);
        return s;
}

int main(void)
{
        return tu_run(agent_suite());
}
