/* SPDX-License-Identifier: MIT */
/*
 * keylime-gen PATHS ENTRIES OUTDIR: a runtime policy in Keylime's format and an IMA log (ima-ng,
 * sha256, through tests/lib/imagen) for tests/bench/keylime-compare.sh, so attestd and Keylime
 * judge the same bytes. PATHS allowlisted paths; the log's first entry is boot_aggregate, then
 * the allowlisted files in turn, with, at fixed places, files the policy does not know, files
 * with another digest, and files under an excluded directory. Writes OUTDIR/policy-keylime.json,
 * OUTDIR/log.ascii, OUTDIR/log.bin, OUTDIR/boot_aggregate (the sha256 hex of entry 0) and
 * OUTDIR/expected-failures (the failing entries: "INDEX PATH", one a line).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "evidence/bank.h"
#include "tests/lib/imagen.h"
#include "util/hex.h"
#include "util/num.h"

#define UNKNOWN_EVERY 40000u  /* a path the policy does not list */
#define MISMATCH_EVERY 40000u /* an allowlisted path with another digest (offset 20000) */
#define EXCLUDED_EVERY 50000u /* a path under /tmp, excluded (offset 10000) */

static void path_of(uint64_t i, char *out, size_t n)
{
        snprintf(out, n, "/usr/lib/pkg%03" PRIu64 "/lib%06" PRIu64 ".so.1", i % 997, i);
}

static int digest_of(struct hasher *h, uint64_t i, uint32_t salt, uint8_t *d)
{
        uint8_t in[12];

        for (int k = 0; k < 8; k++)
                in[k] = (uint8_t)(i >> (8 * k));
        for (int k = 0; k < 4; k++)
                in[8 + k] = (uint8_t)(salt >> (8 * k));
        return hasher_digest(h, BANK_SHA256, in, sizeof(in), d);
}

static int write_file(const char *dir, const char *name, const void *p, size_t n)
{
        char path[4096];
        FILE *f;
        int ok;

        snprintf(path, sizeof(path), "%s/%s", dir, name);
        if (!(f = fopen(path, "we")))
                return -errno;
        ok = fwrite(p, 1, n, f) == n;
        if (fclose(f) != 0 || !ok)
                return -EIO;
        return 0;
}

int main(int argc, char **argv)
{
        uint64_t npaths, nentries;
        struct imagen g;
        uint8_t d[32];
        char hex[65], path[256], fpath[4096];
        FILE *pol, *exp;

        if (argc != 4 || num_u64(argv[1], strlen(argv[1]), 1, 1000000, &npaths) < 0 ||
            num_u64(argv[2], strlen(argv[2]), 2, 10000000, &nentries) < 0) {
                fprintf(stderr, "usage: keylime-gen PATHS(1-1000000) ENTRIES(2-10000000) OUTDIR\n");
                return 2;
        }
        if (imagen_init(&g) < 0)
                return 1;

        /* the policy, in Keylime's runtime-policy format */
        snprintf(fpath, sizeof(fpath), "%s/policy-keylime.json", argv[3]);
        if (!(pol = fopen(fpath, "we")))
                return 1;
        fprintf(pol, "{\"meta\": {\"version\": 1, \"generator\": 1}, \"release\": 0, "
                     "\"digests\": {");
        for (uint64_t i = 0; i < npaths; i++) {
                if (digest_of(g.h, i, 0, d) < 0)
                        return 1;
                hex_encode(d, 32, hex);
                path_of(i, path, sizeof(path));
                fprintf(pol, "%s\"%s\": [\"%s\"]", i ? ", " : "", path, hex);
        }
        fprintf(pol, "}, \"excludes\": [\"/tmp/.*\", \"/var/log/\"], \"keyrings\": {}, "
                     "\"ima\": {\"ignored_keyrings\": [], \"log_hash_alg\": \"sha1\", "
                     "\"dm_policy\": null}, \"ima-buf\": {}, \"verification-keys\": \"\"}\n");
        if (fclose(pol) != 0)
                return 1;

        /* the log */
        snprintf(fpath, sizeof(fpath), "%s/expected-failures", argv[3]);
        if (!(exp = fopen(fpath, "we")))
                return 1;
        if (digest_of(g.h, UINT64_MAX, 7, d) < 0 ||
            imagen_ng(&g, 10, "sha256", d, 32, "boot_aggregate") < 0)
                return 1;
        hex_encode(d, 32, hex);
        hex[64] = '\n';
        if (write_file(argv[3], "boot_aggregate", hex, 65) < 0)
                return 1;
        for (uint64_t j = 1; j < nentries; j++) {
                uint64_t i = (j - 1) % npaths;
                uint32_t salt = 0;
                bool fails = false;

                path_of(i, path, sizeof(path));
                if (j % UNKNOWN_EVERY == 0) {
                        snprintf(path, sizeof(path), "/opt/unknown/bin%07" PRIu64, j);
                        fails = true;
                } else if (j % MISMATCH_EVERY == 20000) {
                        salt = 1;
                        fails = true;
                } else if (j % EXCLUDED_EVERY == 10000) {
                        snprintf(path, sizeof(path), "/tmp/scratch%07" PRIu64, j);
                }
                if (digest_of(g.h, i, salt, d) < 0 || imagen_ng(&g, 10, "sha256", d, 32, path) < 0)
                        return 1;
                if (fails)
                        fprintf(exp, "%" PRIu64 " %s\n", j, path);
        }
        if (fclose(exp) != 0 || write_file(argv[3], "log.bin", g.bin, g.bin_len) < 0 ||
            write_file(argv[3], "log.ascii", g.txt, g.txt_len) < 0)
                return 1;
        imagen_done(&g);
        return 0;
}
