/* SPDX-License-Identifier: MIT */
/*
 * IMA replay benchmark (figures only; it fails only when a replay gives a wrong answer).
 *
 * Generates a 1,000,000-entry log with imagen (mostly ima-ng file entries with names of 20-60
 * bytes, some ima-buf), binary and ascii, and times the CPU time of this thread
 * (CLOCK_THREAD_CPUTIME_ID; wall time on a shared machine counts the other processes too), best
 * of a few rounds:
 *   (a) binary log: parse + replay of the sha256 bank
 *   (b) ascii log: parse + rebuild + replay of the sha1 bank, checking every logged sha1
 *       template hash against the rebuilt data
 *   (a) and (b) also run the peer: the IMA reader of an older commit (ima_peer_rev in
 *       tests/bench/meson.build, the code before the split and the ascii speed-up), built into
 *       this binary from `git show REV:evidence/ima.c` and that commit's hasher and util code
 *       under it, with their symbols renamed (mkpeer-ima.sh).
 *       Each round runs ours then the peer on the same log, so load changes hit both alike; the
 *       lines print both figures and ours/peer. --no-peer skips it.
 *   (c) the bound: raw OpenSSL over the same bytes with one EVP_MD_CTX, no parsing (sha256 for
 *       (a), sha1 for (b))
 *   (d) evmctl ima_measurement on the binary log with a sha256 PCR file made from (a), and the
 *       same log through `attestctl ima replay --bank sha256`, both timed as processes (best
 *       of the rounds, run one after the other): wall and CPU time (user + system, wait4's
 *       rusage) and peak RSS (ru_maxrss), with the ratios; then the start-up: both on a
 *       1-entry log, best of 20
 * Usage: bench-ima [--entries N] [--rounds N] [--only abcd] [--no-peer] [--attestctl PATH]
 *                  [--evmctl PATH] [--keep DIR]
 * (--only runs a subset, e.g. under a profiler: --only b is the ascii replay alone; --keep DIR
 * writes (d)'s files into DIR and keeps them: binary_runtime_measurements,
 * ascii_runtime_measurements, pcrs-sha256.txt and pcrs-sha256.evmctl, for timing by hand)
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "tests/bench/bench-ima-peer.h"
#include "tests/lib/imagen.h"
#include "util/hex.h"

extern char **environ;

#define TARGET_BINARY 2.5e6
#define TARGET_ASCII 2.5e6
#define TARGET_EVMCTL 8.0

struct span {
        const uint8_t *p;
        uint32_t n;
};

static double now(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* CPU time of this thread: what the figures are taken from. */
static double cpu_now(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
        return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static uint64_t rnd(uint64_t *s)
{
        /* xorshift64*: a fixed seed gives the same log on every run */
        *s ^= *s >> 12;
        *s ^= *s << 25;
        *s ^= *s >> 27;
        return *s * 2685821657736338717ull;
}

static const char *const dirs[] = {
        "/usr/bin/",     "/usr/lib/x86_64-linux-gnu/", "/etc/",     "/usr/sbin/",
        "/usr/libexec/", "/usr/lib/systemd/system/",   "/var/lib/", "/usr/share/",
};

/* An absolute path of 20-60 bytes. */
static void make_name(uint64_t *s, char *out)
{
        const char *d = dirs[rnd(s) % ARRAY_SIZE(dirs)];
        size_t len = 20 + rnd(s) % 41, dl = strlen(d), i;

        memcpy(out, d, dl);
        for (i = dl; i < len; i++)
                out[i] = (char)('a' + rnd(s) % 26);
        if (len > dl + 4)
                out[len - 3] = '.';
        out[len] = '\0';
}

static int generate(struct imagen *g, uint64_t entries, const uint8_t *agg)
{
        uint64_t s = 0x9e3779b97f4a7c15ull;
        uint8_t d[32], buf[320];
        char name[64];
        int e;

        if ((e = imagen_ng(g, 10, "sha256", agg, 32, "boot_aggregate")) < 0)
                return e;
        for (uint64_t i = 1; i < entries; i++) {
                for (size_t k = 0; k < sizeof(d); k += 8) {
                        uint64_t v = rnd(&s);

                        memcpy(d + k, &v, 8);
                }
                if (rnd(&s) % 50 == 0) {
                        /* ima-buf: critical data of 32-320 bytes */
                        size_t n = 32 + rnd(&s) % 289;

                        for (size_t k = 0; k < n; k++)
                                buf[k] = (uint8_t)(0x20 + rnd(&s) % 95);
                        e = imagen_buf(g, 10, "dm_table_load", buf, n);
                } else {
                        make_name(&s, name);
                        e = imagen_ng(g, 10, "sha256", d, 32, name);
                }
                if (e < 0)
                        return e;
        }
        return 0;
}

struct run {
        double best; /* CPU seconds */
        double wall; /* wall seconds of that round */
        uint64_t entries;
        uint8_t pcr10[BANK_DIGEST_MAX];
};

static int replay_once(struct hasher *h, const void *log, size_t len, enum ima_format fmt,
                       enum bank b, struct ima_replay *rp)
{
        struct ima_log_opts o = {.max_entries = UINT64_MAX};
        struct attest_err err = {0};
        struct ima_reader rd;
        struct ima_entry e;
        int x;

        if (fmt == IMA_FORMAT_BINARY) {
                ima_reader_init_binary(&rd, log, len, &o);
        } else if ((x = ima_reader_init_ascii(&rd, log, len, &o)) < 0) {
                return x;
        }
        ima_replay_init(rp, h, BANK_MASK(b), fmt == IMA_FORMAT_ASCII);
        while ((x = ima_reader_next(&rd, &e, &err)) > 0)
                if ((x = ima_replay_extend(rp, &e, rd.idx - 1, &err)) < 0)
                        break;
        ima_reader_done(&rd);
        if (x < 0)
                fprintf(stderr, "bench-ima: replay failed: %s: %s\n", attest_code_name(err.code),
                        err.msg);
        return x;
}

/* One timed replay of log, by our reader or (peer) the older commit's. */
static int bench_replay(struct hasher *h, const void *log, size_t len, enum ima_format fmt,
                        enum bank b, bool peer, struct run *ret)
{
        static struct ima_replay rp;
        struct run r = {0};
        double c0 = cpu_now(), t0 = now();
        int x;

        if (peer) {
                x = peer_replay(log, len, fmt == IMA_FORMAT_ASCII, b, r.pcr10, &r.entries);
        } else if ((x = replay_once(h, log, len, fmt, b, &rp)) == 0) {
                r.entries = rp.entries;
                memcpy(r.pcr10, rp.pcr[b][10], bank_size(b));
        }
        r.best = cpu_now() - c0;
        r.wall = now() - t0;
        if (x < 0)
                return x;
        *ret = r;
        return 0;
}

static void keep_best(struct run *best, const struct run *r)
{
        if (r->best < best->best)
                *best = *r;
}

/* One round: ours, then the peer (when use_peer), each keeping its best in *ours / *peer. */
static int replay_round(struct hasher *h, const void *log, size_t len, enum ima_format fmt,
                        enum bank b, int use_peer, uint64_t want, struct run *ours,
                        struct run *peer)
{
        for (int p = 0; p <= use_peer; p++) {
                struct run t;

                if (bench_replay(h, log, len, fmt, b, p, &t) < 0 || t.entries != want) {
                        fprintf(stderr, "bench-ima: the %s replay failed%s\n",
                                fmt == IMA_FORMAT_ASCII ? "ascii" : "binary", p ? " (peer)" : "");
                        return -EIO;
                }
                keep_best(p ? peer : ours, &t);
        }
        return 0;
}

/* The bound: the same digests with nothing else, one EVP_MD_CTX, the md fetched once. */
static int bench_bound(const struct span *sp, uint64_t n, const char *alg, struct run *ret)
{
        EVP_MD *md = EVP_MD_fetch(NULL, alg, NULL);
        EVP_MD_CTX *ctx = EVP_MD_CTX_new();
        struct run r = {.entries = n};
        uint8_t pcr[EVP_MAX_MD_SIZE] = {0}, th[EVP_MAX_MD_SIZE];
        int ok = md && ctx;
        size_t sz = md ? (size_t)EVP_MD_get_size(md) : 0;
        double c0 = cpu_now(), t0 = now();

        for (uint64_t i = 0; ok && i < n; i++) {
                ok = EVP_DigestInit_ex2(ctx, md, NULL) == 1 &&
                     EVP_DigestUpdate(ctx, sp[i].p, sp[i].n) == 1 &&
                     EVP_DigestFinal_ex(ctx, th, NULL) == 1 &&
                     EVP_DigestInit_ex2(ctx, md, NULL) == 1 &&
                     EVP_DigestUpdate(ctx, pcr, sz) == 1 && EVP_DigestUpdate(ctx, th, sz) == 1 &&
                     EVP_DigestFinal_ex(ctx, pcr, NULL) == 1;
        }
        r.best = cpu_now() - c0;
        r.wall = now() - t0;
        memcpy(r.pcr10, pcr, sz);
        EVP_MD_CTX_free(ctx);
        EVP_MD_free(md);
        if (!ok)
                return -EIO;
        *ret = r;
        return 0;
}

/* Template data of every entry, found with the binary reader (outside any timing). */
static int collect_spans(const struct imagen *g, struct span **ret)
{
        struct ima_log_opts o = {.max_entries = UINT64_MAX};
        struct span *sp = calloc(g->entries, sizeof(*sp));
        struct ima_reader rd;
        struct ima_entry e;
        uint64_t i = 0;
        int x;

        if (!sp)
                return -ENOMEM;
        ima_reader_init_binary(&rd, g->bin, g->bin_len, &o);
        while (i < g->entries && (x = ima_reader_next(&rd, &e, NULL)) > 0)
                sp[i++] = (struct span){e.data, e.data_len};
        ima_reader_done(&rd);
        if (i != g->entries) {
                free(sp);
                return -EBADMSG;
        }
        *ret = sp;
        return 0;
}

static int write_all(const char *path, const void *p, size_t n)
{
        FILE *f = fopen(path, "wb");
        int ok;

        if (!f)
                return -errno;
        ok = fwrite(p, 1, n, f) == n;
        ok = fclose(f) == 0 && ok;
        return ok ? 0 : -EIO;
}

/* A sha256 PCR file: PCR 0-9 zero (boot_aggregate was made from them), PCR 10 as replayed. */
static int write_pcrs(const char *path, const uint8_t *pcr10, bool evmctl_format)
{
        FILE *f = fopen(path, "w");
        uint8_t zero[32] = {0};
        char hex[65];
        int ok = f != NULL;

        for (unsigned i = 0; ok && i < PCR_COUNT; i++) {
                hex_encode(i == 10 ? pcr10 : zero, 32, hex);
                /* evmctl 1.4 reads "PCR-NN: HEX" lines in order, PCR 0 first */
                ok = fprintf(f, evmctl_format ? "PCR-%02u: %s\n" : "%u %s\n", i, hex) > 0;
        }
        if (f)
                ok = fclose(f) == 0 && ok;
        return ok ? 0 : -EIO;
}

struct proc {
        double wall, cpu; /* seconds: wall clock, user + system */
        long rss_kb;      /* peak resident set */
};

static double tv_secs(struct timeval tv)
{
        return (double)tv.tv_sec + (double)tv.tv_usec / 1e6;
}

/*
 * Run argv with stdout and stderr to /dev/null, through this program started anew as the spawner
 * (spawn_main): its exit status, its times and peak RSS. Not spawned from here: a child made by
 * vfork (posix_spawn) or fork starts from this process's memory, and Linux keeps that memory's
 * peak as the child's ru_maxrss across exec (hundreds of MB once the log was generated); the
 * spawner is ~3 MB, which floors the RSS figures.
 */
static int time_process(char *const argv[], struct proc *ret)
{
        posix_spawn_file_actions_t fa;
        char *av[32] = {"bench-ima", "--spawn"}, line[128];
        size_t n = 2, got = 0;
        int pfd[2], st, x, status;
        pid_t pid;

        for (; argv[n - 2] && n < ARRAY_SIZE(av) - 1; n++)
                av[n] = argv[n - 2];
        av[n] = NULL;
        if (pipe(pfd) < 0)
                return -errno;
        posix_spawn_file_actions_init(&fa);
        posix_spawn_file_actions_adddup2(&fa, pfd[1], 1);
        posix_spawn_file_actions_addclose(&fa, pfd[0]);
        x = posix_spawn(&pid, "/proc/self/exe", &fa, NULL, av, environ);
        posix_spawn_file_actions_destroy(&fa);
        close(pfd[1]);
        if (x != 0) {
                close(pfd[0]);
                return -x;
        }
        for (ssize_t r; got < sizeof(line) - 1 &&
                        (r = read(pfd[0], line + got, sizeof(line) - 1 - got)) != 0;) {
                if (r < 0 && errno == EINTR)
                        continue;
                if (r < 0)
                        break;
                got += (size_t)r;
        }
        line[got] = '\0';
        close(pfd[0]);
        if (waitpid(pid, &st, 0) < 0)
                return -errno;
        if (!WIFEXITED(st) || WEXITSTATUS(st) != 0 ||
            sscanf(line, "%lf %lf %ld %d", &ret->wall, &ret->cpu, &ret->rss_kb, &status) != 4)
                return -ECHILD;
        return status;
}

/* bench-ima --spawn ARGV...: run ARGV, print "WALL CPU MAXRSS_KB STATUS" (see time_process()). */
static int spawn_main(char **argv)
{
        posix_spawn_file_actions_t fa;
        struct rusage ru;
        pid_t pid;
        double t0;
        int st, x;

        posix_spawn_file_actions_init(&fa);
        posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
        posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
        t0 = now();
        x = posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ);
        posix_spawn_file_actions_destroy(&fa);
        if (x != 0)
                return printf("0 0 0 %d\n", -x) < 0;
        if (wait4(pid, &st, 0, &ru) < 0)
                return 1;
        printf("%.6f %.6f %ld %d\n", now() - t0, tv_secs(ru.ru_utime) + tv_secs(ru.ru_stime),
               ru.ru_maxrss, WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st));
        return fflush(stdout) != 0;
}

/* The best (least wall) of n runs of argv; the exit status of the last, or of the first failure. */
static int time_best(char *const argv[], unsigned n, struct proc *best)
{
        int x = 0;

        best->wall = 1e99;
        for (unsigned i = 0; i < n && x == 0; i++) {
                struct proc p;

                if ((x = time_process(argv, &p)) != 0)
                        break;
                if (p.wall < best->wall)
                        *best = p;
        }
        return x;
}

/* Figures on a busy machine mean little: say how busy it is. */
static void print_load(void)
{
        FILE *f = fopen("/proc/loadavg", "r");
        char buf[64] = "";

        if (f) {
                if (!fgets(buf, sizeof(buf), f))
                        buf[0] = '\0';
                fclose(f);
        }
        buf[strcspn(buf, "\n")] = '\0';
        printf("bench-ima: %ld CPUs online, load average %s\n", sysconf(_SC_NPROCESSORS_ONLN),
               buf[0] ? buf : "unknown");
}

/* CPU seconds, entries per CPU second, and the wall time of that round. */
static void line(const char *what, const struct run *r, const char *extra)
{
        printf("  %-46s %7.3f s CPU %7.2f M entries/s (wall %.3f s)%s\n", what, r->best,
               (double)r->entries / r->best / 1e6, r->wall, extra);
}

/* Processes: wall and CPU time (rusage), peak RSS. */
static void line_proc(const char *what, uint64_t n, const struct proc *p, const char *extra)
{
        printf("  %-46s %7.3f s wall %7.3f s CPU %6.2f M entries/s %7.1f MB RSS%s\n", what, p->wall,
               p->cpu, (double)n / p->wall / 1e6, (double)p->rss_kb / 1024, extra);
}

/* The first entry of the log alone, and the sha256 PCR 10 it replays to: the start-up log. */
static int first_entry(struct hasher *h, const struct imagen *g, size_t *ret_len, uint8_t *pcr10)
{
        struct ima_log_opts o = {.max_entries = 1};
        static struct ima_replay rp;
        struct ima_reader rd;
        struct ima_entry e;
        int x;

        ima_reader_init_binary(&rd, g->bin, g->bin_len, &o);
        x = ima_reader_next(&rd, &e, NULL);
        *ret_len = rd_offset(&rd.r);
        ima_reader_done(&rd);
        if (x != 1)
                return -EBADMSG;
        if ((x = replay_once(h, g->bin, *ret_len, IMA_FORMAT_BINARY, BANK_SHA256, &rp)) < 0)
                return x;
        memcpy(pcr10, rp.pcr[BANK_SHA256][10], 32);
        return 0;
}

int main(int argc, char **argv)
{
        static const struct option opts[] = {
                {"entries", required_argument, NULL, 'n'},
                {"rounds", required_argument, NULL, 'r'},
                {"attestctl", required_argument, NULL, 'a'},
                {"evmctl", required_argument, NULL, 'e'},
                {"only", required_argument, NULL, 'o'},
                {"no-peer", no_argument, NULL, 'p'},
                {"keep", required_argument, NULL, 'k'},
                {0},
        };
        const char *attestctl = NULL, *evmctl = "evmctl", *tmp = getenv("TMPDIR"), *only = "abcd";
        const char *keep = NULL;
        uint64_t entries = 1000000;
        unsigned rounds = 3;
        struct imagen g;
        struct hasher *h = NULL;
        struct span *sp = NULL;
        struct run a, b, ca, cb, pa, pb;
        int use_peer = 1, run_a;
        char what[64];
        uint8_t zero[320] = {0}, agg[32];
        char extra[160], dir[4096], logp[4200], txtp[4200], pcr_evm[4200], pcr_ours[4200];
        char log1[4200], pcr1_evm[4200], pcr1_ours[4200];
        uint8_t pcr1[32];
        size_t len1 = 0;
        double t0, t_gen;
        int c, x, rc = 0;

        if (argc > 2 && strcmp(argv[1], "--spawn") == 0)
                return spawn_main(argv + 2);
        while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
                char *end;

                switch (c) {
                case 'n':
                        errno = 0;
                        entries = strtoull(optarg, &end, 10);
                        if (errno || *end || entries < 2) {
                                fprintf(stderr, "bench-ima: bad --entries\n");
                                return 2;
                        }
                        break;
                case 'r':
                        errno = 0;
                        rounds = (unsigned)strtoul(optarg, &end, 10);
                        if (errno || *end || rounds < 1 || rounds > 100) {
                                fprintf(stderr, "bench-ima: bad --rounds\n");
                                return 2;
                        }
                        break;
                case 'a':
                        attestctl = optarg;
                        break;
                case 'e':
                        evmctl = optarg;
                        break;
                case 'o':
                        only = optarg;
                        break;
                case 'p':
                        use_peer = 0;
                        break;
                case 'k':
                        keep = optarg;
                        break;
                default:
                        fprintf(stderr,
                                "Usage: %s [--entries N] [--rounds N] [--only abcd] [--no-peer] "
                                "[--attestctl PATH] [--evmctl PATH] [--keep DIR]\n",
                                argv[0]);
                        return 2;
                }
        }
        if (hasher_new(&h) < 0 || imagen_init(&g) < 0)
                return 1;
        /* boot_aggregate over PCR 0-9 of a sha256 bank that is all zero */
        if (hasher_digest(h, BANK_SHA256, zero, sizeof(zero), agg) < 0)
                return 1;
        t0 = now();
        if ((x = generate(&g, entries, agg)) < 0 || (x = collect_spans(&g, &sp)) < 0) {
                fprintf(stderr, "bench-ima: generating the log: %s\n", strerror(-x));
                return 1;
        }
        t_gen = now() - t0;
        print_load();
        if (use_peer && !peer_rev()) {
                printf("bench-ima: built without the peer (git or its commit missing), ours "
                       "only\n");
                use_peer = 0;
        }
        printf("bench-ima: %" PRIu64 " entries (binary %.1f MB, ascii %.1f MB, made in %.1f s), "
               "best of %u rounds\n",
               g.entries, (double)g.bin_len / 1e6, (double)g.txt_len / 1e6, t_gen, rounds);

        /*
         * (a) runs whenever (c) or (d) does: it feeds (c)'s check and (d)'s PCR file (--only b
         * is the ascii replay alone, for profilers). The rounds interleave the figures, so a
         * change of load on the machine hits all of them alike; each keeps its best.
         */
        run_a = strpbrk(only, "acd") != NULL;
        a.best = b.best = ca.best = cb.best = pa.best = pb.best = 1e99;
        for (unsigned r = 0; r < rounds; r++) {
                struct run t;

                if (run_a && replay_round(h, g.bin, g.bin_len, IMA_FORMAT_BINARY, BANK_SHA256,
                                          use_peer, g.entries, &a, &pa) < 0)
                        return 1;
                if (strchr(only, 'b') && replay_round(h, g.txt, g.txt_len, IMA_FORMAT_ASCII,
                                                      BANK_SHA1, use_peer, g.entries, &b, &pb) < 0)
                        return 1;
                if (strchr(only, 'c')) {
                        if (bench_bound(sp, g.entries, "SHA256", &t) < 0)
                                return 1;
                        keep_best(&ca, &t);
                        if (bench_bound(sp, g.entries, "SHA1", &t) < 0)
                                return 1;
                        keep_best(&cb, &t);
                }
        }
        if (use_peer && ((run_a && memcmp(a.pcr10, pa.pcr10, 32) != 0) ||
                         (strchr(only, 'b') && memcmp(b.pcr10, pb.pcr10, 20) != 0))) {
                fprintf(stderr, "bench-ima: ours and the peer disagree on PCR 10\n");
                return 1;
        }
        if (strchr(only, 'a')) {
                snprintf(extra, sizeof(extra), "  (target >= %.1f M: %s)", TARGET_BINARY / 1e6,
                         (double)a.entries / a.best >= TARGET_BINARY ? "met" : "BELOW");
                line("(a) binary parse + sha256 replay", &a, extra);
                if (use_peer) {
                        snprintf(extra, sizeof(extra), "  (ours/peer %.2fx)", pa.best / a.best);
                        snprintf(what, sizeof(what), "(a) the same, peer %s", peer_rev());
                        line(what, &pa, extra);
                }
        }
        if (strchr(only, 'b')) {
                snprintf(extra, sizeof(extra), "  (target >= %.1f M: %s)", TARGET_ASCII / 1e6,
                         (double)b.entries / b.best >= TARGET_ASCII ? "met" : "BELOW");
                line("(b) ascii parse + sha1 replay, sha1 checked", &b, extra);
                if (use_peer) {
                        snprintf(extra, sizeof(extra), "  (ours/peer %.2fx)", pb.best / b.best);
                        snprintf(what, sizeof(what), "(b) the same, peer %s", peer_rev());
                        line(what, &pb, extra);
                }
        }
        if (strchr(only, 'c')) {
                if (memcmp(a.pcr10, ca.pcr10, 32) != 0 ||
                    (strchr(only, 'b') && memcmp(b.pcr10, cb.pcr10, 20) != 0)) {
                        fprintf(stderr, "bench-ima: replay and bound disagree on PCR 10\n");
                        return 1;
                }
                snprintf(extra, sizeof(extra), "  (ours/bound %.2f)", ca.best / a.best);
                line("(c) bound for (a): EVP sha256 data + extend", &ca, extra);
                if (strchr(only, 'b')) {
                        snprintf(extra, sizeof(extra), "  (ours/bound %.2f)", cb.best / b.best);
                        line("(c) bound for (b): EVP sha1 data + extend", &cb, extra);
                }
        }
        if (!strchr(only, 'd'))
                goto out_mem;

        /* (d) as processes, on a file */
        if (keep)
                snprintf(dir, sizeof(dir), "%s", keep);
        else
                snprintf(dir, sizeof(dir), "%s/bench-ima.XXXXXX", tmp && *tmp ? tmp : "/tmp");
        if (keep ? mkdir(dir, 0755) < 0 && errno != EEXIST : !mkdtemp(dir)) {
                fprintf(stderr, "bench-ima: mkdtemp: %s\n", strerror(errno));
                return 1;
        }
        snprintf(logp, sizeof(logp), "%s/binary_runtime_measurements", dir);
        snprintf(pcr_evm, sizeof(pcr_evm), "%s/pcrs-sha256.evmctl", dir);
        snprintf(pcr_ours, sizeof(pcr_ours), "%s/pcrs-sha256.txt", dir);
        snprintf(log1, sizeof(log1), "%s/one-entry", dir);
        snprintf(pcr1_evm, sizeof(pcr1_evm), "%s/one-entry-pcrs.evmctl", dir);
        snprintf(pcr1_ours, sizeof(pcr1_ours), "%s/one-entry-pcrs.txt", dir);
        if (first_entry(h, &g, &len1, pcr1) < 0 || write_all(log1, g.bin, len1) < 0 ||
            write_pcrs(pcr1_evm, pcr1, true) < 0 || write_pcrs(pcr1_ours, pcr1, false) < 0 ||
            write_all(logp, g.bin, g.bin_len) < 0 || write_pcrs(pcr_evm, a.pcr10, true) < 0 ||
            write_pcrs(pcr_ours, a.pcr10, false) < 0 ||
            (keep && (snprintf(txtp, sizeof(txtp), "%s/ascii_runtime_measurements", dir) < 0 ||
                      write_all(txtp, g.txt, g.txt_len) < 0))) {
                fprintf(stderr, "bench-ima: writing %s failed\n", dir);
                rc = 1;
                goto out;
        }
        {
                char pcrs_arg[4300];
                char *ev[] = {(char *)evmctl,
                              "ima_measurement",
                              "--ignore-violations",
                              "--pcrs",
                              pcrs_arg,
                              logp,
                              NULL};
                char *ac[] = {(char *)attestctl, "ima",    "replay", "--bank", "sha256",
                              "--pcrs",          pcr_ours, logp,     NULL};
                struct proc pe = {0}, pa1 = {0}, se = {0}, sa = {0};
                int xe, xa = -1, xse, xsa = -1;

                snprintf(pcrs_arg, sizeof(pcrs_arg), "sha256,%s", pcr_evm);
                xe = time_best(ev, rounds, &pe);
                if (attestctl)
                        xa = time_best(ac, rounds, &pa1);
                if (xe < 0) {
                        printf("  (d) evmctl: cannot run %s: %s (not measured)\n", evmctl,
                               strerror(-xe));
                } else if (xe != 0) {
                        printf("  (d) evmctl ima_measurement exited %d: it does not accept the "
                               "replayed PCR 10 (not measured)\n",
                               xe);
                } else {
                        snprintf(extra, sizeof(extra), "  (in-process (a) wall %.3f s: %.1fx)",
                                 a.wall, pe.wall / a.wall);
                        line_proc("(d) evmctl ima_measurement --pcrs sha256 (process)", g.entries,
                                  &pe, extra);
                }
                if (attestctl && xa != 0) {
                        printf("  (d) attestctl ima replay exited %d (not measured)\n", xa);
                } else if (attestctl && xe == 0) {
                        double ratio = pe.wall / pa1.wall;

                        snprintf(extra, sizeof(extra),
                                 "  (evmctl/attestctl wall %.1fx, target >= %.0fx: %s; CPU %.1fx; "
                                 "RSS %.2fx)",
                                 ratio, TARGET_EVMCTL, ratio >= TARGET_EVMCTL ? "met" : "BELOW",
                                 pe.cpu / pa1.cpu, (double)pe.rss_kb / (double)pa1.rss_kb);
                        line_proc("(d) attestctl ima replay --bank sha256 (process)", g.entries,
                                  &pa1, extra);
                }
                /* start-up: the same commands on the log's first entry alone, best of 20 */
                ac[6] = pcr1_ours;
                ac[7] = log1;
                snprintf(pcrs_arg, sizeof(pcrs_arg), "sha256,%s", pcr1_evm);
                ev[5] = log1;
                xse = time_best(ev, 20, &se);
                if (attestctl)
                        xsa = time_best(ac, 20, &sa);
                if (xse == 0 && xsa == 0)
                        printf("  (d) start-up, 1-entry log, best of 20: attestctl %.1f ms wall "
                               "%.1f ms CPU %.1f MB RSS, evmctl %.1f ms wall %.1f ms CPU %.1f MB "
                               "RSS\n",
                               sa.wall * 1e3, sa.cpu * 1e3, (double)sa.rss_kb / 1024, se.wall * 1e3,
                               se.cpu * 1e3, (double)se.rss_kb / 1024);
                else
                        printf("  (d) start-up: evmctl exited %d, attestctl %d (not measured)\n",
                               xse, xsa);
        }
out:
        if (keep)
                goto out_mem;
        unlink(logp);
        unlink(pcr_evm);
        unlink(pcr_ours);
        unlink(log1);
        unlink(pcr1_evm);
        unlink(pcr1_ours);
        rmdir(dir);
out_mem:
        free(sp);
        imagen_done(&g);
        hasher_free(h);
        return rc;
}
