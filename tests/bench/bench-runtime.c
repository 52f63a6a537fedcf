/* SPDX-License-Identifier: MIT */
/*
 * ima.runtime evaluation speed: an allowlist of P paths (default 100,000, one sha256
 * digest each, plus two excludes) and a binary log of N ima-ng entries (default 1,000,000: 90 %
 * allowed, 5 % another digest, 5 % unknown paths), written by imagen. Two passes over the log on
 * one core: read only (the IMA reader), then read and judge every entry (rt_eval_entry); the
 * difference is the evaluation's cost. Prints entries/s and ns/entry for both, and checks the
 * counts (a wrong answer fails; timing never does).
 *
 *   bench-runtime [--paths P] [--entries N] [--rounds R]
 * Under callgrind, --toggle-collect=bench_read_pass / bench_eval_pass count each pass's
 * instructions (tests/bench/run-runtime.sh).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "policy/runtime.h"
#include "tests/lib/imagen.h"
#include "util/hex.h"

static double now(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void die(const char *what)
{
        fprintf(stderr, "bench-runtime: %s\n", what);
        exit(1);
}

/* the digest of path i: deterministic bytes */
static void digest_of(uint64_t i, uint8_t d[32])
{
        uint64_t x = i * 0x9e3779b97f4a7c15ull + 1;

        for (int k = 0; k < 32; k++) {
                x ^= x >> 29;
                x *= 0xbf58476d1ce4e5b9ull;
                d[k] = (uint8_t)(x >> 56);
        }
}

static void path_of(uint64_t i, char *buf, size_t n)
{
        snprintf(buf, n, "/usr/lib/pkg-%llu/lib%llu.so.1", (unsigned long long)(i / 16),
                 (unsigned long long)i);
}

__attribute__((noinline)) uint64_t bench_read_pass(const uint8_t *log, size_t len);
__attribute__((noinline)) uint64_t bench_read_pass(const uint8_t *log, size_t len)
{
        struct ima_reader rd;
        struct ima_entry e;
        uint64_t n = 0, sink = 0;
        int x;

        ima_reader_init_binary(&rd, log, len, &(struct ima_log_opts){.max_entries = ~0ull >> 1});
        while ((x = ima_reader_next(&rd, &e, NULL)) > 0) {
                sink += e.name_len;
                n++;
        }
        ima_reader_done(&rd);
        if (x < 0)
                die("log does not read");
        return n + (sink & 0);
}

__attribute__((noinline)) uint64_t bench_eval_pass(struct rt_ctx *c, const uint8_t *log, size_t len,
                                                   struct rt_state *st);
__attribute__((noinline)) uint64_t bench_eval_pass(struct rt_ctx *c, const uint8_t *log, size_t len,
                                                   struct rt_state *st)
{
        struct ima_reader rd;
        struct ima_entry e;
        uint64_t n = 0;
        int x;

        rt_state_init(st);
        ima_reader_init_binary(&rd, log, len, &(struct ima_log_opts){.max_entries = ~0ull >> 1});
        while ((x = ima_reader_next(&rd, &e, NULL)) > 0) {
                if (rt_eval_entry(c, &e, n + 1, st, NULL) < 0)
                        die("evaluation failed");
                n++;
        }
        ima_reader_done(&rd);
        if (x < 0)
                die("log does not read");
        return n;
}

int main(int argc, char **argv)
{
        uint64_t paths = 100000, entries = 1000000, rounds = 3;
        json_t *d = json_object();
        struct rt_policy *p = NULL;
        struct rt_ctx *c = NULL;
        struct rt_state *st = calloc(1, sizeof(*st));
        struct attest_err err = {0};
        struct imagen g;
        double best_read = 1e9, best_eval = 1e9, t0;
        uint64_t mism = 0, unknown = 0;

        for (int i = 1; i + 1 < argc; i += 2) {
                if (!strcmp(argv[i], "--paths"))
                        paths = strtoull(argv[i + 1], NULL, 10);
                else if (!strcmp(argv[i], "--entries"))
                        entries = strtoull(argv[i + 1], NULL, 10);
                else if (!strcmp(argv[i], "--rounds"))
                        rounds = strtoull(argv[i + 1], NULL, 10);
                else
                        die("usage: bench-runtime [--paths P] [--entries N] [--rounds R]");
        }
        if (!d || !st || !paths || !entries || !rounds)
                die("bad arguments or no memory");
        /* the allowlist */
        t0 = now();
        for (uint64_t i = 0; i < paths; i++) {
                char path[96], hex[72] = "sha256:";
                uint8_t dg[32];

                path_of(i, path, sizeof(path));
                digest_of(i, dg);
                hex_encode(dg, 32, hex + 7);
                json_object_set_new(d, path, json_pack("[s]", hex));
        }
        json_t *doc = json_pack("{s:o, s:[s,s], s:{s:i}}", "digests", d, "excludes", "/tmp/.*",
                                "/var/log/.*\\.log", "violations", "allow", 0);
        if (rt_policy_from_json(doc, "$.ima.runtime", &p, &err) < 0)
                die(err.msg);
        json_decref(doc);
        printf("runtime: allowlist of %llu paths parsed and hashed in %.2f s\n",
               (unsigned long long)paths, now() - t0);
        /* the log */
        if (imagen_init(&g) < 0)
                die("imagen");
        for (uint64_t i = 0; i < entries; i++) {
                uint64_t k = (i * 7919) % paths;
                char path[96];
                uint8_t dg[32];

                path_of(k, path, sizeof(path));
                digest_of(k, dg);
                if (i % 20 == 7) {
                        dg[5] ^= 1; /* another digest */
                        mism++;
                } else if (i % 20 == 13) {
                        snprintf(path, sizeof(path), "/opt/unknown/bin-%llu",
                                 (unsigned long long)i);
                        unknown++;
                }
                if (imagen_ng(&g, 10, "sha256", dg, 32, path) < 0)
                        die("imagen_ng");
        }
        free(g.txt); /* the ascii twin is not used */
        g.txt = NULL;
        g.txt_len = g.txt_cap = 0;
        if (rt_ctx_new(p, &c) < 0)
                die("rt_ctx_new");
        for (uint64_t r = 0; r < rounds; r++) {
                uint64_t n;

                t0 = now();
                n = bench_read_pass(g.bin, g.bin_len);
                if (n != entries)
                        die("read pass: wrong entry count");
                if (now() - t0 < best_read)
                        best_read = now() - t0;
                t0 = now();
                n = bench_eval_pass(c, g.bin, g.bin_len, st);
                if (now() - t0 < best_eval)
                        best_eval = now() - t0;
                if (n != entries || st->failed != mism + unknown ||
                    st->passed != entries - mism - unknown)
                        die("eval pass: wrong counts");
        }
        printf("runtime: log of %llu ima-ng entries (%.1f MB), %llu digest mismatches, %llu "
               "unknown "
               "paths, best of %llu rounds, one core\n",
               (unsigned long long)entries, (double)g.bin_len / 1e6, (unsigned long long)mism,
               (unsigned long long)unknown, (unsigned long long)rounds);
        printf("runtime: read only:      %10.0f entries/s  %6.1f ns/entry\n",
               (double)entries / best_read, best_read * 1e9 / (double)entries);
        printf("runtime: read + judge:   %10.0f entries/s  %6.1f ns/entry\n",
               (double)entries / best_eval, best_eval * 1e9 / (double)entries);
        printf("runtime: judging alone:  %10.0f entries/s  %6.1f ns/entry\n",
               (double)entries / (best_eval - best_read),
               (best_eval - best_read) * 1e9 / (double)entries);
        rt_ctx_free(c);
        rt_policy_free(p);
        imagen_done(&g);
        free(st);
        return 0;
}
