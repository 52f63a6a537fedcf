/* SPDX-License-Identifier: MIT */
/*
 * Test helper for evidence made with tpm2-tools:
 *   mkevidence extends LOG          one tpm2_pcrextend argument per entry of a binary log
 *                                   ("10:sha1=HEX,sha256=HEX"), what the kernel extended
 *   mkevidence json NONCE ATTEST SIG PCRS LOG [KEY=VALUE...]
 *                                   the evidence JSON (architecture.md §4) of tpm2_quote -m/-s,
 *                                   tpm2_pcrread output and a binary log sent from entry 0;
 *                                   KEY: kernel, cmdline, tk_source, tk_origin, cfi_source,
 *                                   cfi_enabled, cfi_permissive (0/1)
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "evidence/evjson.h"
#include "util/hex.h"
#include "evidence/ima.h"
#include "util/file.h"

#define INPUT_MAX (1024u * 1024 * 1024) /* any one input file */

/* The whole file, NUL terminated; NULL (the reason on stderr) when it cannot be read. */
static uint8_t *slurp(const char *path, size_t *len)
{
        struct attest_err err = {0};
        char *buf;

        *len = 0;
        if (file_read_alloc(path, INPUT_MAX, 0, &buf, len, &err) < 0) {
                fprintf(stderr, "mkevidence: %s\n", err.msg);
                return NULL;
        }
        return (uint8_t *)buf;
}

static int extends(const char *path)
{
        struct ima_reader rd;
        struct ima_entry e;
        struct hasher *h;
        struct attest_err err = {0};
        size_t len;
        uint8_t *log = slurp(path, &len), s256[32];
        char a[41], b[65];
        int x;

        if (!log || hasher_new(&h) < 0)
                return 1;
        ima_reader_init_binary(&rd, log, len, NULL);
        while ((x = ima_reader_next(&rd, &e, &err)) > 0) {
                uint8_t s1[20];

                if (e.violation) {
                        memset(s1, 0xff, 20);
                        memset(s256, 0xff, 32);
                } else {
                        memcpy(s1, e.sha1, 20);
                        if (ima_tmpl_hash(h, BANK_SHA256, &e, s256) < 0)
                                return 1;
                }
                hex_encode(s1, 20, a);
                hex_encode(s256, 32, b);
                printf("%u:sha1=%s,sha256=%s\n", e.pcr, a, b);
        }
        if (x < 0)
                fprintf(stderr, "mkevidence: %s: %s\n", path, err.msg);
        ima_reader_done(&rd);
        hasher_free(h);
        free(log);
        return x < 0;
}

static int json(int argc, char **argv)
{
        struct evidence ev = {0};
        struct attest_err err = {0};
        size_t n;
        char *pcrs, *out;

        if (argc < 7)
                return 2;
        if (hex_decode(argv[2], strlen(argv[2]), ev.nonce, sizeof(ev.nonce), &ev.nonce_len) < 0)
                return 2;
        ev.attest = slurp(argv[3], &ev.attest_len);
        ev.sig = slurp(argv[4], &ev.sig_len);
        pcrs = (char *)slurp(argv[5], &n);
        ev.ima = slurp(argv[6], &ev.ima_len);
        if (!ev.attest || !ev.sig || !pcrs || !ev.ima)
                return 2;
        if (pcrs_parse(pcrs, n, &ev.pcrs, &err) < 0) {
                fprintf(stderr, "mkevidence: %s: %s\n", argv[5], err.msg);
                return 2;
        }
        for (int i = 7; i < argc; i++) {
                const char *eq = strchr(argv[i], '='), *v = eq ? eq + 1 : "";
                size_t k = eq ? (size_t)(eq - argv[i]) : strlen(argv[i]);
                struct evidence_host *h = &ev.host;

#define KEY(s) (k == strlen(s) && strncmp(argv[i], s, k) == 0)
                if (KEY("kernel"))
                        snprintf(h->kernel, sizeof(h->kernel), "%s", v);
                else if (KEY("cmdline"))
                        h->cmdline = strdup(v);
                else if (KEY("tk_source") && (h->tk_present = true))
                        snprintf(h->tk_source, sizeof(h->tk_source), "%s", v);
                else if (KEY("tk_origin"))
                        snprintf(h->tk_origin, sizeof(h->tk_origin), "%s", v);
                else if (KEY("cfi_source") && (h->cfi_present = true))
                        snprintf(h->cfi_source, sizeof(h->cfi_source), "%s", v);
                else if (KEY("cfi_enabled"))
                        h->cfi_enabled = v[0] == '1';
                else if (KEY("cfi_permissive"))
                        h->cfi_permissive = v[0] == '1';
                else
                        return 2;
#undef KEY
        }
        if (evidence_to_json(&ev, &out) < 0)
                return 1;
        printf("%s\n", out);
        free(out);
        free(ev.attest);
        free(ev.sig);
        free(ev.ima);
        free(ev.host.cmdline);
        free(pcrs);
        return 0;
}

int main(int argc, char **argv)
{
        if (argc == 3 && strcmp(argv[1], "extends") == 0)
                return extends(argv[2]);
        if (argc >= 2 && strcmp(argv[1], "json") == 0)
                return json(argc, argv);
        fprintf(stderr,
                "usage: mkevidence extends LOG | json NONCE ATTEST SIG PCRS LOG [K=V...]\n");
        return 2;
}
