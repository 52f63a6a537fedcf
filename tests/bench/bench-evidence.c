/* SPDX-License-Identifier: MIT */
/*
 * Evidence decode benchmark (figures only; it fails only when a decode fails or the two decoders
 * disagree). An evidence document like an agent's (nonce, a P-256 quote's blobs, sha256 PCRs 0-23
 * and sha1 PCR 10, an ima-ng binary log of N entries, host facts) is decoded by the pull reader
 * (evidence_from_json, evidence/evjson-read.c) and by the jansson decoder it replaced
 * (tests/fuzz/evjson-jansson.c), alternately, for 100 and 10,000 entries. Times are this
 * thread's CPU time (CLOCK_THREAD_CPUTIME_ID: other processes on a shared machine do not count),
 * best of a few rounds, each round at least ~0.2 s of decoding or 200,000 decodes.
 *
 * Usage: bench-evidence [--entries N]... [--rounds N]
 *        bench-evidence --only new|old --entries N --iterations K
 * The second form decodes K times and prints nothing else: run it under callgrind
 * (--toggle-collect=evidence_from_json or evidence_from_json_jansson) for instruction counts of
 * the decode alone, or under valgrind for its allocations (tests/bench/run-evidence.sh).
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "evidence/evjson.h"
#include "tests/fuzz/evjson-jansson.h"
#include "tests/lib/imagen.h"

typedef int (*decode_fn)(const char *, size_t, size_t, struct evidence **, struct attest_err *);

#define MAX_IMA (16u << 20)

static double cpu_now(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
        return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void die(const char *what)
{
        fprintf(stderr, "bench-evidence: %s\n", what);
        exit(1);
}

/* The document an agent would send with n log entries. */
static char *make_doc(unsigned n)
{
        struct evidence ev = {0};
        struct imagen g;
        char *out = NULL;

        ev.nonce_len = 32;
        memset(ev.nonce, 0x3c, 32);
        ev.attest_len = 129; /* TPMS_ATTEST of a quote over one sha256 selection */
        ev.sig_len = 72;     /* TPMT_SIGNATURE, ECDSA P-256 */
        ev.attest = malloc(ev.attest_len);
        ev.sig = malloc(ev.sig_len);
        if (!ev.attest || !ev.sig)
                die("out of memory");
        for (size_t i = 0; i < ev.attest_len; i++)
                ev.attest[i] = (uint8_t)(i * 31);
        for (size_t i = 0; i < ev.sig_len; i++)
                ev.sig[i] = (uint8_t)(i * 17);
        for (unsigned i = 0; i < PCR_COUNT; i++) {
                ev.pcrs.have[BANK_SHA256] |= 1u << i;
                memset(ev.pcrs.v[BANK_SHA256][i], (int)(i * 7 + 1), 32);
        }
        ev.pcrs.have[BANK_SHA1] = 1u << 10;
        memset(ev.pcrs.v[BANK_SHA1][10], 0x10, 20);
        if (imagen_init(&g) < 0)
                die("imagen");
        for (unsigned i = 0; i < n; i++) {
                uint8_t d[32];
                char name[96];

                memset(d, (int)i, sizeof(d));
                snprintf(name, sizeof(name), "/usr/lib/x86_64-linux-gnu/libexample-%u.so.%u", i,
                         i % 7);
                if (imagen_ng(&g, 10, "sha256", d, sizeof(d), name) < 0)
                        die("imagen_ng");
        }
        ev.ima_offset = 1234;
        ev.ima_format = IMA_FORMAT_BINARY;
        ev.ima = g.bin;
        ev.ima_len = g.bin_len;
        snprintf(ev.host.kernel, sizeof(ev.host.kernel), "6.1.0-attest");
        ev.host.cmdline = strdup("BOOT_IMAGE=/vmlinuz-6.1.0 root=/dev/vda1 ro console=ttyS0 "
                                 "ima_policy=tcb ima_template=ima-ng trusted.source=tpm");
        snprintf(ev.host.boot_id, sizeof(ev.host.boot_id), "0f3d6c1e-7d0a-4d2b-9e55-3a0a9f1c2b44");
        ev.host.tk_present = true;
        snprintf(ev.host.tk_source, sizeof(ev.host.tk_source), "tpm");
        snprintf(ev.host.tk_origin, sizeof(ev.host.tk_origin), "cmdline");
        if (!ev.host.cmdline || evidence_to_json(&ev, &out) < 0)
                die("evidence_to_json");
        ev.ima = NULL; /* g's */
        imagen_done(&g);
        free(ev.attest);
        free(ev.sig);
        free(ev.host.cmdline);
        return out;
}

static struct evidence *decode(decode_fn f, const char *doc, size_t len)
{
        struct evidence *ev = NULL;
        struct attest_err err = {0};

        if (f(doc, len, MAX_IMA, &ev, &err) < 0) {
                fprintf(stderr, "bench-evidence: decode failed: %s: %s\n",
                        attest_code_name(err.code), err.msg);
                exit(1);
        }
        return ev;
}

/* The two decoders must agree on this document before either is timed. */
static void check_same(const char *doc, size_t len)
{
        struct evidence *a = decode(evidence_from_json_jansson, doc, len),
                        *b = decode(evidence_from_json, doc, len);

        if (a->nonce_len != b->nonce_len || memcmp(a->nonce, b->nonce, sizeof(a->nonce)) ||
            a->attest_len != b->attest_len || memcmp(a->attest, b->attest, a->attest_len) ||
            a->sig_len != b->sig_len || memcmp(a->sig, b->sig, a->sig_len) ||
            memcmp(&a->pcrs, &b->pcrs, sizeof(a->pcrs)) || a->ima_offset != b->ima_offset ||
            a->ima_len != b->ima_len || memcmp(a->ima, b->ima, a->ima_len) ||
            memcmp(&a->host.kernel, &b->host.kernel, sizeof(a->host.kernel)) ||
            strcmp(a->host.cmdline, b->host.cmdline) != 0)
                die("the two decoders disagree");
        evidence_free(a);
        evidence_free(b);
}

/* CPU seconds per decode: at least ~0.2 s of decodes, at most 200,000. */
static double time_one(decode_fn f, const char *doc, size_t len)
{
        double t0 = cpu_now(), t;
        unsigned n = 0;

        do {
                evidence_free(decode(f, doc, len));
                n++;
                t = cpu_now() - t0;
        } while (t < 0.2 && n < 200000);
        return t / n;
}

static void bench(unsigned entries, unsigned rounds)
{
        char *doc = make_doc(entries);
        size_t len = strlen(doc);
        double best_old = 1e9, best_new = 1e9;

        check_same(doc, len);
        for (unsigned r = 0; r < rounds; r++) {
                double o = time_one(evidence_from_json_jansson, doc, len),
                       w = time_one(evidence_from_json, doc, len);

                best_old = o < best_old ? o : best_old;
                best_new = w < best_new ? w : best_new;
        }
        printf("evidence decode, %6u entries, %8zu bytes: jansson %10.0f ns %9.0f/s  "
               "reader %9.0f ns %9.0f/s  %5.1fx  (%.0f MB/s)\n",
               entries, len, best_old * 1e9, 1 / best_old, best_new * 1e9, 1 / best_new,
               best_old / best_new, len / best_new / 1e6);
        free(doc);
}

int main(int argc, char **argv)
{
        static const struct option opts[] = {{"entries", required_argument, NULL, 'e'},
                                             {"rounds", required_argument, NULL, 'r'},
                                             {"only", required_argument, NULL, 'o'},
                                             {"iterations", required_argument, NULL, 'i'},
                                             {NULL, 0, NULL, 0}};
        unsigned entries[8], nentries = 0, rounds = 3, iterations = 0;
        const char *only = NULL;
        int c;

        while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
                char *end;
                unsigned long v = optarg ? strtoul(optarg, &end, 10) : 0;

                if (c != 'o' && (!optarg || *end || v > 10000000))
                        die("bad number");
                if (c == 'e' && nentries < ARRAY_SIZE(entries))
                        entries[nentries++] = (unsigned)v;
                else if (c == 'r' && v > 0)
                        rounds = (unsigned)v;
                else if (c == 'i')
                        iterations = (unsigned)v;
                else if (c == 'o')
                        only = optarg;
                else
                        die("usage: bench-evidence [--entries N]... [--rounds N] "
                            "| --only new|old --entries N --iterations K");
        }
        if (only) {
                decode_fn f = !strcmp(only, "new")   ? evidence_from_json
                              : !strcmp(only, "old") ? evidence_from_json_jansson
                                                     : NULL;
                char *doc;
                size_t len;

                if (!f || nentries != 1)
                        die("--only new|old needs one --entries");
                doc = make_doc(entries[0]);
                len = strlen(doc);
                for (unsigned i = 0; i < iterations; i++)
                        evidence_free(decode(f, doc, len));
                free(doc);
                return 0;
        }
        if (!nentries) {
                entries[nentries++] = 100;
                entries[nentries++] = 10000;
        }
        for (unsigned i = 0; i < nentries; i++)
                bench(entries[i], rounds);
        return 0;
}
