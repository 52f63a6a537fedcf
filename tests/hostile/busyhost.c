/* SPDX-License-Identifier: MIT */
/*
 * busyhost: a host that keeps measuring, for the agent's round-order test. Each step appends one
 * valid ima-ng entry to LOG (one write, O_APPEND) and then extends its template hash into PCR 10 of
 * every bank of the TPM at TCTI in one TPM2_PCR_Extend, in that order, as the kernel does (the
 * measurement list first, then the TPM). Bounded: at most MAX entries and SECONDS seconds; stops
 * early when STOPFILE exists. Prints the number of entries added.
 *
 *   busyhost LOG TCTI MAX SECONDS PERIOD_US STOPFILE
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "evidence/bank.h"
#include "tests/lib/imagen.h"
#include "tpm/tpm.h"

static double now_s(void)
{
        struct timespec t;

        clock_gettime(CLOCK_MONOTONIC, &t);
        return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static unsigned long arg_ul(const char *s, const char *what)
{
        char *end;
        unsigned long v;

        errno = 0;
        v = strtoul(s, &end, 10);
        if (errno || end == s || *end) {
                fprintf(stderr, "busyhost: bad %s '%s'\n", what, s);
                exit(2);
        }
        return v;
}

int main(int argc, char **argv)
{
        _cleanup_(tpm_closep) struct tpm *tpm = NULL;
        _cleanup_(hasher_freep) struct hasher *h = NULL;
        struct attest_err err = {0};
        struct imagen g;
        unsigned long max, secs, period_us, n = 0;
        double t_end;
        int fd;

        if (argc != 7) {
                fprintf(stderr, "usage: busyhost LOG TCTI MAX SECONDS PERIOD_US STOPFILE\n");
                return 2;
        }
        max = arg_ul(argv[3], "MAX");
        secs = arg_ul(argv[4], "SECONDS");
        period_us = arg_ul(argv[5], "PERIOD_US");
        fd = open(argv[1], O_WRONLY | O_APPEND | O_CLOEXEC);
        if (fd < 0) {
                fprintf(stderr, "busyhost: %s: %s\n", argv[1], strerror(errno));
                return 1;
        }
        if (tpm_open(argv[2], &tpm, &err) < 0 || hasher_new(&h) < 0 || imagen_init(&g) < 0) {
                fprintf(stderr, "busyhost: %s\n", err.msg[0] ? err.msg : "setup failed");
                return 1;
        }
        t_end = now_s() + (double)secs;
        while (n < max && now_s() < t_end && access(argv[6], F_OK) < 0) {
                struct ima_reader rd;
                struct ima_entry e;
                uint8_t d[32], th[BANK_COUNT][BANK_DIGEST_MAX];
                char name[64];

                /* one entry, alone in g.bin */
                g.bin_len = 0;
                g.txt_len = 0;
                for (size_t i = 0; i < sizeof(d); i++)
                        d[i] = (uint8_t)(n >> (8 * (i % 4))) ^ (uint8_t)i;
                snprintf(name, sizeof(name), "/usr/lib/busy/file-%lu", n);
                if (imagen_ng(&g, 10, "sha256", d, sizeof(d), name) < 0)
                        return 1;
                ima_reader_init_binary(&rd, g.bin, g.bin_len, NULL);
                if (ima_reader_next(&rd, &e, &err) != 1) {
                        fprintf(stderr, "busyhost: entry %lu: %s\n", n, err.msg);
                        return 1;
                }
                /* the log first ... */
                if (write(fd, g.bin, g.bin_len) != (ssize_t)g.bin_len) {
                        fprintf(stderr, "busyhost: write: %s\n", strerror(errno));
                        return 1;
                }
                /* ... then the TPM: every bank in one command */
                for (enum bank b = 0; b < BANK_COUNT; b++)
                        if (ima_tmpl_hash(h, b, &e, th[b]) < 0) {
                                fprintf(stderr, "busyhost: entry %lu: no template hash\n", n);
                                return 1;
                        }
                if (tpm_pcr_extend_banks(tpm, 10, BANK_MASK_ALL, th, &err) < 0) {
                        fprintf(stderr, "busyhost: entry %lu: %s\n", n, err.msg);
                        return 1;
                }
                ima_reader_done(&rd);
                n++;
                if (period_us)
                        usleep((useconds_t)period_us);
        }
        close(fd);
        imagen_done(&g);
        printf("%lu\n", n);
        return 0;
}
