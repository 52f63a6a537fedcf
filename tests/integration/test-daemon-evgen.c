/* SPDX-License-Identifier: MIT */
/*
 * Test tool for the attestd integration tests: writes synthetic IMA logs (imagen), prints the
 * template hashes that tpm2_pcrextend must extend so a swtpm's PCR 10 matches, and assembles
 * evidence JSON (evidence_to_json) from a tpm2_quote and a slice of the log, optionally tampered.
 *
 *   evgen gen OUT ITEM...          ITEM: boot | sel:E | hash:HEX | kver:V | tk:SRC | cfi:P |
 *                                  files:N | name:HEX  (appends to OUT if it exists; name:HEX is
 *                                  one ima-ng file entry whose name is the bytes HEX)
 *   evgen count LOG                number of entries
 *   evgen extend LOG FROM TO       tpm2_pcrextend arguments for entries [FROM, TO)
 *   evgen evidence NONCE ATTEST SIG PCRS LOG FROM TO [tamper K | delete K | swap K]
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "evidence/evjson.h"
#include "util/hex.h"
#include "tests/lib/imagen.h"
#include "tests/lib/tool.h"

#define MAX_ENTRIES 100000

/* The whole file (tests/lib/tool.h); a file that cannot be read ends evgen */
static uint8_t *slurp(const char *path, size_t *ret_len)
{
        uint8_t *buf = tool_read(path, ret_len);

        if (!buf) {
                fprintf(stderr, "evgen: %s: %s\n", path, strerror(errno));
                exit(1);
        }
        return buf;
}

/* Byte offsets of every entry (off[n] = end). */
static size_t index_log(const uint8_t *buf, size_t len, size_t *off, struct ima_entry *ents)
{
        struct ima_reader rd;
        struct ima_entry e;
        struct attest_err err = {0};
        size_t n = 0;
        int r;

        ima_reader_init_binary(&rd, buf, len, NULL);
        for (;;) {
                off[n] = rd_offset(&rd.r);
                r = ima_reader_next(&rd, &e, &err);
                if (r < 0) {
                        fprintf(stderr, "evgen: log: %s\n", err.msg);
                        exit(1);
                }
                if (r == 0)
                        break;
                if (ents)
                        ents[n] = e;
                if (++n >= MAX_ENTRIES)
                        exit(1);
        }
        ima_reader_done(&rd);
        return n;
}

static int cmd_gen(int argc, char **argv)
{
        struct imagen g;
        static const uint8_t zero[32];
        char buf[256];
        FILE *f;

        if (imagen_init(&g) < 0)
                return 1;
        for (int i = 3; i < argc; i++) {
                const char *a = argv[i];
                int r = 0;

                if (!strcmp(a, "boot")) {
                        r = imagen_ng(&g, 10, "sha256", zero, 32, "boot_aggregate");
                } else if (!strncmp(a, "sel:", 4)) {
                        snprintf(buf, sizeof(buf),
                                 "initialized=1;enforcing=%s;checkreqprot=0;"
                                 "network_peer_controls=1;open_perms=1;",
                                 a + 4);
                        r = imagen_buf(&g, 10, "selinux-state", buf, strlen(buf));
                } else if (!strncmp(a, "hash:", 5)) {
                        uint8_t h[32];
                        size_t n;

                        if (hex_decode(a + 5, strlen(a + 5), h, sizeof(h), &n) < 0)
                                return 2;
                        r = imagen_buf(&g, 10, "selinux-policy-hash", h, n);
                } else if (!strncmp(a, "kver:", 5)) {
                        r = imagen_buf(&g, 10, "kernel_version", a + 5, strlen(a + 5));
                } else if (!strncmp(a, "tk:", 3)) {
                        snprintf(buf, sizeof(buf), "source=%s;", a + 3);
                        r = imagen_buf(&g, 10, "trusted-keys-source", buf, strlen(buf));
                } else if (!strncmp(a, "cfi:", 4)) {
                        snprintf(buf, sizeof(buf), "enabled=1;mode=kcfi;permissive=%s;", a + 4);
                        r = imagen_buf(&g, 10, "cfi-state", buf, strlen(buf));
                } else if (!strncmp(a, "files:", 6)) {
                        long n = strtol(a + 6, NULL, 10);

                        for (long k = 0; k < n && r == 0; k++) {
                                uint8_t d[32];
                                char name[64];

                                memset(d, (int)(k & 0xff), sizeof(d));
                                d[0] = (uint8_t)(g.entries >> 8);
                                d[1] = (uint8_t)g.entries;
                                snprintf(name, sizeof(name), "/usr/bin/tool-%llu",
                                         (unsigned long long)g.entries);
                                r = imagen_ng(&g, 10, "sha256", d, 32, name);
                        }
                } else if (!strncmp(a, "name:", 5)) {
                        /* any bytes but NUL as a file name (hostile names: invalid UTF-8,
                         * control characters, terminal escapes) */
                        size_t hl = strlen(a + 5), nl = 0;
                        char *name = calloc(hl / 2 + 1, 1);
                        uint8_t d[32];

                        if (!name || hl % 2 ||
                            hex_decode(a + 5, hl, (uint8_t *)name, hl / 2, &nl) < 0 ||
                            memchr(name, '\0', nl)) {
                                fprintf(stderr, "evgen: bad name:HEX item\n");
                                free(name);
                                return 2;
                        }
                        memset(d, 0xab, sizeof(d));
                        d[0] = (uint8_t)(g.entries >> 8);
                        d[1] = (uint8_t)g.entries;
                        r = imagen_ng(&g, 10, "sha256", d, 32, name);
                        free(name);
                } else {
                        fprintf(stderr, "evgen: unknown item %s\n", a);
                        return 2;
                }
                if (r < 0)
                        return 1;
        }
        f = fopen(argv[2], "ab");
        if (!f || fwrite(g.bin, 1, g.bin_len, f) != g.bin_len || fclose(f) != 0)
                return 1;
        imagen_done(&g);
        return 0;
}

static int cmd_extend(int argc, char **argv)
{
        static size_t off[MAX_ENTRIES + 1];
        static struct ima_entry ents[MAX_ENTRIES];
        struct hasher *h;
        size_t len, n, from, to;
        uint8_t *buf;

        if (argc != 5)
                return 2;
        buf = slurp(argv[2], &len);
        n = index_log(buf, len, off, ents);
        from = strtoul(argv[3], NULL, 10);
        to = strtoul(argv[4], NULL, 10);
        if (to > n || from > to || hasher_new(&h) < 0)
                return 2;
        for (size_t i = from; i < to; i++) {
                uint8_t s1[20], s256[32];
                char a[41], b[65];

                if (ima_tmpl_hash(h, BANK_SHA1, &ents[i], s1) < 0 ||
                    ima_tmpl_hash(h, BANK_SHA256, &ents[i], s256) < 0)
                        return 1;
                hex_encode(s1, 20, a);
                hex_encode(s256, 32, b);
                printf("%u:sha1=%s,sha256=%s\n", ents[i].pcr, a, b);
        }
        hasher_free(h);
        free(buf);
        return 0;
}

static int cmd_count(char **argv)
{
        static size_t off[MAX_ENTRIES + 1];
        size_t len;
        uint8_t *buf = slurp(argv[2], &len);

        printf("%zu\n", index_log(buf, len, off, NULL));
        free(buf);
        return 0;
}

static int cmd_evidence(int argc, char **argv)
{
        static size_t off[MAX_ENTRIES + 1];
        struct evidence ev = {0};
        struct attest_err err = {0};
        size_t len, n, from, to, plen, k = 0;
        uint8_t *log;
        char *pcrs, *json;
        const char *mode = argc >= 11 ? argv[9] : NULL;

        if (argc != 9 && argc != 11)
                return 2;
        if (hex_decode(argv[2], strlen(argv[2]), ev.nonce, sizeof(ev.nonce), &ev.nonce_len) < 0)
                return 2;
        ev.attest = slurp(argv[3], &ev.attest_len);
        ev.sig = slurp(argv[4], &ev.sig_len);
        pcrs = (char *)slurp(argv[5], &plen);
        if (pcrs_parse(pcrs, plen, &ev.pcrs, &err) < 0) {
                fprintf(stderr, "evgen: pcrs: %s\n", err.msg);
                return 1;
        }
        log = slurp(argv[6], &len);
        n = index_log(log, len, off, NULL);
        from = strtoul(argv[7], NULL, 10);
        to = strtoul(argv[8], NULL, 10);
        if (to > n || from > to)
                return 2;
        if (mode)
                k = strtoul(argv[10], NULL, 10);
        ev.ima_offset = from;
        ev.ima_format = IMA_FORMAT_BINARY;
        ev.ima = malloc(off[to] - off[from] + 1);
        if (!ev.ima)
                return 1;
        if (!mode) {
                ev.ima_len = off[to] - off[from];
                memcpy(ev.ima, log + off[from], ev.ima_len);
        } else if (k < from || k >= to) {
                return 2;
        } else if (!strcmp(mode, "tamper")) {
                ev.ima_len = off[to] - off[from];
                memcpy(ev.ima, log + off[from], ev.ima_len);
                /* the last byte before the entry's end: a name or buffer byte */
                ev.ima[off[k + 1] - off[from] - 2] ^= 0x01;
        } else if (!strcmp(mode, "delete")) {
                size_t a = off[k] - off[from];

                memcpy(ev.ima, log + off[from], a);
                memcpy(ev.ima + a, log + off[k + 1], off[to] - off[k + 1]);
                ev.ima_len = a + off[to] - off[k + 1];
        } else if (!strcmp(mode, "swap") && k + 1 < to) {
                size_t a = off[k] - off[from], l1 = off[k + 1] - off[k],
                       l2 = off[k + 2] - off[k + 1];

                ev.ima_len = off[to] - off[from];
                memcpy(ev.ima, log + off[from], ev.ima_len);
                memcpy(ev.ima + a, log + off[k + 1], l2);
                memcpy(ev.ima + a + l2, log + off[k], l1);
        } else {
                return 2;
        }
        if (evidence_to_json(&ev, &json) < 0)
                return 1;
        puts(json);
        free(json);
        free(ev.attest);
        free(ev.sig);
        free(ev.ima);
        free(pcrs);
        free(log);
        return 0;
}

int main(int argc, char **argv)
{
        if (argc >= 3 && !strcmp(argv[1], "gen"))
                return cmd_gen(argc, argv);
        if (argc >= 3 && !strcmp(argv[1], "count"))
                return cmd_count(argv);
        if (argc >= 3 && !strcmp(argv[1], "extend"))
                return cmd_extend(argc, argv);
        if (argc >= 3 && !strcmp(argv[1], "evidence"))
                return cmd_evidence(argc, argv);
        fprintf(stderr, "usage: see the comment at the top of test-daemon-evgen.c\n");
        return 2;
}
