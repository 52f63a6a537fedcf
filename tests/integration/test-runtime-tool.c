/* SPDX-License-Identifier: MIT */
/*
 * Test tool for the ima.runtime tests: writes IMA logs with signed entries (imagen) and judges a
 * log with a runtime policy section (policy/runtime.c), one line per entry.
 *
 *   runtime-tool gen OUT ITEM...   ITEM: sig:NAME:SHA256HEX:SIGFILE | ng:NAME:SHA256HEX |
 *                                  buf:NAME:FILE | viol:NAME |
 *                                  modsig:NAME:SHA256HEX:ALGO:HEX:P7FILE   (ima-modsig: d-ng,
 *                                  d-modsig ALGO:HEX, the PKCS#7 DER in P7FILE)
 *                                  (binary log OUT, ascii OUT.txt)
 *   runtime-tool eval POLICY LOG   POLICY: a policy document or its ima.runtime object;
 *                                  prints "IDX OUTCOME REASON NAME" (ima-modsig: then
 *                                  "modsig=WHY", rt_modsig_why_name) and a summary line
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "policy/runtime.h"
#include "tests/lib/imagen.h"
#include "tests/lib/tool.h"
#include "util/hex.h"

static uint8_t *slurp(const char *path, size_t *ret_len)
{
        uint8_t *b = tool_read(path, ret_len);

        if (!b) {
                fprintf(stderr, "runtime-tool: cannot read %s\n", path);
                exit(1);
        }
        return b;
}

/* Split "a:b:c" in place into at most n fields; the count. */
static int split(char *s, char **f, int n)
{
        int k = 0;

        f[k++] = s;
        for (char *p = s; *p && k < n; p++)
                if (*p == ':') {
                        *p = '\0';
                        f[k++] = p + 1;
                }
        return k;
}

/* "algo:\0" digest, as the kernel stores d-ng and d-modsig; the length */
static size_t dng(uint8_t *out, const char *algo, const uint8_t *d, size_t n)
{
        size_t a = strlen(algo);

        memcpy(out, algo, a);
        out[a] = ':';
        out[a + 1] = '\0';
        memcpy(out + a + 2, d, n);
        return a + 2 + n;
}

static int gen_modsig(struct imagen *g, char **fl)
{
        uint8_t d[32], dm[64], f0[128], f3[128], *sig = NULL;
        size_t dn = 0, dmn = 0, sn = 0;
        int r;

        if (hex_decode(fl[2], strlen(fl[2]), d, sizeof(d), &dn) < 0 || dn != 32 ||
            strlen(fl[3]) > 32 || hex_decode(fl[4], strlen(fl[4]), dm, sizeof(dm), &dmn) < 0)
                return -1;
        if (strcmp(fl[5], "-") != 0)
                sig = slurp(fl[5], &sn);
        {
                struct imagen_field f[5] = {
                        {IMA_FIELD_D_NG, f0, dng(f0, "sha256", d, 32)},
                        {IMA_FIELD_N_NG, fl[1], strlen(fl[1]) + 1},
                        {IMA_FIELD_SIG, NULL, 0},
                        {IMA_FIELD_D_MODSIG, f3, dng(f3, fl[3], dm, dmn)},
                        {IMA_FIELD_MODSIG, sig, sn},
                };

                r = imagen_fields(g, 10, "ima-modsig", f, 5, 0);
        }
        free(sig);
        return r;
}

static int cmd_gen(int argc, char **argv)
{
        struct imagen g;
        char txt[4096];
        FILE *f;

        if (imagen_init(&g) < 0)
                return 1;
        for (int i = 3; i < argc; i++) {
                char *a = strdup(argv[i]), *fl[6];
                int n = split(a, fl, 6), r = -1;
                uint8_t d[32];
                size_t dn = 0, sn = 0;

                if (!strcmp(fl[0], "sig") && n == 4 &&
                    hex_decode(fl[2], strlen(fl[2]), d, sizeof(d), &dn) == 0 && dn == 32) {
                        uint8_t *sig = slurp(fl[3], &sn);

                        r = imagen_sig(&g, 10, d, fl[1], sig, sn);
                        free(sig);
                } else if (!strcmp(fl[0], "ng") && n == 3 &&
                           hex_decode(fl[2], strlen(fl[2]), d, sizeof(d), &dn) == 0 && dn == 32) {
                        r = imagen_ng(&g, 10, "sha256", d, 32, fl[1]);
                } else if (!strcmp(fl[0], "buf") && n == 3) {
                        uint8_t *b = slurp(fl[2], &sn);

                        r = imagen_buf(&g, 10, fl[1], b, sn);
                        free(b);
                } else if (!strcmp(fl[0], "modsig") && n == 6) {
                        r = gen_modsig(&g, fl);
                } else if (!strcmp(fl[0], "viol") && n == 2) {
                        r = imagen_violation(&g, 10, fl[1]);
                }
                free(a);
                if (r < 0) {
                        fprintf(stderr, "runtime-tool: bad item %s\n", argv[i]);
                        return 2;
                }
        }
        snprintf(txt, sizeof(txt), "%s.txt", argv[2]);
        if (!(f = fopen(argv[2], "wb")) || fwrite(g.bin, 1, g.bin_len, f) != g.bin_len ||
            fclose(f) != 0)
                return 1;
        if (!(f = fopen(txt, "w")) || fwrite(g.txt, 1, g.txt_len, f) != g.txt_len || fclose(f) != 0)
                return 1;
        imagen_done(&g);
        return 0;
}

static int cmd_eval(char **argv)
{
        static const char *const outcome[] = {"pass", "signed", "excluded", "violation-allowed",
                                              "fail"};
        json_error_t je;
        json_t *doc = json_load_file(argv[2], JSON_REJECT_DUPLICATES, &je), *o;
        struct rt_policy *p = NULL;
        struct rt_ctx *c = NULL;
        struct attest_err err = {0};
        struct ima_reader rd;
        struct ima_entry e;
        struct rt_state *st = calloc(1, sizeof(*st));
        size_t len;
        uint8_t *log = slurp(argv[3], &len);
        uint64_t i = 0;
        int x;

        if (!doc || !st) {
                fprintf(stderr, "runtime-tool: %s: %s\n", argv[2], doc ? "no memory" : je.text);
                return 1;
        }
        o = json_object_get(json_object_get(doc, "ima"), "runtime");
        if (rt_policy_from_json(o ? o : doc, o ? "$.ima.runtime" : "$", &p, &err) < 0) {
                fprintf(stderr, "runtime-tool: %s\n", err.msg);
                return 1;
        }
        if (rt_ctx_new(p, &c) < 0 || ima_reader_init_auto(&rd, log, len, NULL) < 0)
                return 1;
        while ((x = ima_reader_next(&rd, &e, &err)) > 0) {
                enum rt_reason why = RT_REASON__COUNT;
                int r = rt_eval_entry(c, &e, i, st, &why);

                if (r < 0)
                        return 1;
                printf("%llu %s %s %.*s", (unsigned long long)i, outcome[r],
                       r == RT_FAIL ? rt_reason_name(why) : "-", (int)e.name_len,
                       e.name ? e.name : "");
                if (e.modsig) {
                        /* the appended signature's own verdict, whatever decided the entry */
                        enum rt_modsig_why mw;

                        if (rt_modsig_check(p, &e, &mw) < 0)
                                return 1;
                        printf(" modsig=%s", rt_modsig_why_name(mw));
                }
                printf("\n");
                i++;
        }
        if (x < 0) {
                fprintf(stderr, "runtime-tool: %s\n", err.msg);
                return 1;
        }
        printf("summary passed=%llu failed=%llu excluded=%llu signed=%llu violations=%llu\n",
               (unsigned long long)st->passed, (unsigned long long)st->failed,
               (unsigned long long)st->excluded, (unsigned long long)st->signed_ok,
               (unsigned long long)st->violations);
        ima_reader_done(&rd);
        rt_ctx_free(c);
        rt_policy_free(p);
        json_decref(doc);
        free(log);
        free(st);
        return 0;
}

int main(int argc, char **argv)
{
        if (argc >= 3 && !strcmp(argv[1], "gen"))
                return cmd_gen(argc, argv);
        if (argc == 4 && !strcmp(argv[1], "eval"))
                return cmd_eval(argv);
        fprintf(stderr, "usage: runtime-tool gen OUT ITEM... | eval POLICY LOG\n");
        return 2;
}
