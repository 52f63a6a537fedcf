/* SPDX-License-Identifier: MIT */
/*
 * Writes the synthetic seeds of the IMA fuzz corpora with imagen: one small log per template
 * (ima, ima-ng, ima-sig, ima-buf, ima-modsig, a custom d-ng|n-ng|buf), violations, PCRs other
 * than 10, names with spaces, and one log mixing them all. Each log goes out twice, as
 * DIR/ima-binary/syn-NAME.bin and DIR/ima-ascii/syn-NAME.txt.
 * Usage: mkcorpus-ima CORPUS_DIR
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "tests/lib/imagen.h"

static const char selinux_state[] =
        "initialized=1;enforcing=1;checkreqprot=0;network_peer_controls=1;open_perms=1;"
        "extended_socket_class=1;always_check_network=0;cgroup_seclabel=1;";

static void fill(uint8_t *p, size_t n, uint8_t seed)
{
        for (size_t i = 0; i < n; i++)
                p[i] = (uint8_t)(seed + 37 * i);
}

static int seed_ng(struct imagen *g)
{
        uint8_t d[64];
        int e;

        fill(d, sizeof(d), 1);
        if ((e = imagen_ng(g, 10, "sha256", d, 32, "boot_aggregate")) < 0 ||
            (e = imagen_ng(g, 10, "sha256", d + 1, 32, "/usr/bin/bash")) < 0 ||
            (e = imagen_ng(g, 10, "sha1", d + 2, 20, "/etc/ld.so.cache")) < 0 ||
            (e = imagen_ng(g, 10, "sha512", d, 64, "/usr/lib/x86_64-linux-gnu/libc.so.6")) < 0)
                return e;
        return imagen_ng(g, 10, "md5", d, 16, "/old");
}

static int seed_sig(struct imagen *g)
{
        uint8_t d[32], sig[72];
        int e;

        fill(d, sizeof(d), 2);
        fill(sig, sizeof(sig), 3);
        sig[0] = 0x03; /* evm_ima_xattr_type IMA_XATTR_DIGSIG */
        sig[1] = 0x02;
        if ((e = imagen_sig(g, 10, d, "/usr/sbin/init", sig, sizeof(sig))) < 0)
                return e;
        return imagen_sig(g, 10, d, "/usr/bin/unsigned", NULL, 0);
}

static int seed_buf(struct imagen *g)
{
        uint8_t hash[32];
        int e;

        fill(hash, sizeof(hash), 4);
        if ((e = imagen_buf(g, 10, "kernel_version", "6.1.192", 7)) < 0 ||
            (e = imagen_buf(g, 10, "selinux-state", selinux_state, strlen(selinux_state))) < 0 ||
            (e = imagen_buf(g, 10, "selinux-policy-hash", hash, sizeof(hash))) < 0 ||
            (e = imagen_buf(g, 10, "trusted-keys-source", "source=tpm;", 11)) < 0)
                return e;
        return imagen_buf(g, 10, "cfi-state", "enabled=1;mode=kcfi;permissive=0;", 33);
}

static int seed_modsig(struct imagen *g)
{
        uint8_t d[32], sig[96];

        fill(d, sizeof(d), 5);
        fill(sig, sizeof(sig), 6);
        return imagen_modsig(g, 10, d, "/lib/modules/6.1/kernel/fs/fat.ko", sig, sizeof(sig));
}

static int seed_legacy(struct imagen *g)
{
        uint8_t d[20];
        int e;

        fill(d, sizeof(d), 7);
        if ((e = imagen_legacy(g, 10, d, "boot_aggregate")) < 0)
                return e;
        return imagen_legacy(g, 10, d, "/sbin/init");
}

static int seed_custom(struct imagen *g)
{
        uint8_t dng[64] = "sha256:", d[32];
        const char *name = "kernel_version", *ver = "6.1.0-custom";
        struct imagen_field f[3];

        fill(d, sizeof(d), 8);
        memcpy(dng + 8, d, 32); /* "sha256:\0" digest */
        f[0] = (struct imagen_field){IMA_FIELD_D_NG, dng, 8 + 32};
        f[1] = (struct imagen_field){IMA_FIELD_N_NG, name, strlen(name) + 1};
        f[2] = (struct imagen_field){IMA_FIELD_BUF, ver, strlen(ver)};
        return imagen_fields(g, 10, "d-ng|n-ng|buf", f, 3, 0);
}

static int seed_violations(struct imagen *g)
{
        uint8_t d[32];
        int e;

        fill(d, sizeof(d), 9);
        if ((e = imagen_ng(g, 10, "sha256", d, 32, "/data/file")) < 0 ||
            (e = imagen_violation(g, 10, "/data/file")) < 0 ||
            (e = imagen_violation(g, 11, "/data/other")) < 0)
                return e;
        return imagen_ng(g, 10, "sha256", d, 32, "/data/file");
}

static int seed_pcrs(struct imagen *g)
{
        uint8_t d[32];
        int e;

        fill(d, sizeof(d), 10);
        if ((e = imagen_ng(g, 11, "sha256", d, 32, "/on/pcr11")) < 0 ||
            (e = imagen_ng(g, 0, "sha256", d, 32, "/on/pcr0")) < 0 ||
            (e = imagen_buf(g, 23, "kernel_version", "6.1", 3)) < 0)
                return e;
        return imagen_ng(g, 10, "sha256", d, 32, "/on/pcr10");
}

static int seed_spaces(struct imagen *g)
{
        uint8_t d[32];
        int e;

        fill(d, sizeof(d), 11);
        if ((e = imagen_ng(g, 10, "sha256", d, 32, "/home/user/My Documents/a b  c.txt")) < 0)
                return e;
        return imagen_buf(g, 10, "a name with spaces", "x", 1);
}

static const struct {
        const char *name;
        int (*fn)(struct imagen *g);
} seeds[] = {
        {"ima-ng", seed_ng},
        {"ima-sig", seed_sig},
        {"ima-buf", seed_buf},
        {"ima-modsig", seed_modsig},
        {"ima", seed_legacy},
        {"custom", seed_custom},
        {"violations", seed_violations},
        {"pcrs", seed_pcrs},
        {"spaces", seed_spaces},
};

static int write_file(const char *dir, const char *sub, const char *name, const char *ext,
                      const void *p, size_t n)
{
        char path[4096];
        FILE *f;
        int ok;

        if (snprintf(path, sizeof(path), "%s/%s/syn-%s.%s", dir, sub, name, ext) >=
            (int)sizeof(path))
                return -ENAMETOOLONG;
        f = fopen(path, "wb");
        if (!f) {
                fprintf(stderr, "mkcorpus-ima: %s: %s\n", path, strerror(errno));
                return -errno;
        }
        ok = fwrite(p, 1, n, f) == n;
        ok = fclose(f) == 0 && ok;
        if (!ok) {
                fprintf(stderr, "mkcorpus-ima: %s: write failed\n", path);
                return -EIO;
        }
        return 0;
}

static int write_log(const char *dir, const char *name, const struct imagen *g)
{
        int e = write_file(dir, "ima-binary", name, "bin", g->bin, g->bin_len);

        return e < 0 ? e : write_file(dir, "ima-ascii", name, "txt", g->txt, g->txt_len);
}

int main(int argc, char **argv)
{
        struct imagen all;
        int e;

        if (argc != 2) {
                fprintf(stderr, "Usage: %s CORPUS_DIR\n", argv[0]);
                return 2;
        }
        if (imagen_init(&all) < 0)
                return 1;
        for (size_t i = 0; i < ARRAY_SIZE(seeds); i++) {
                struct imagen g;

                if (imagen_init(&g) < 0)
                        return 1;
                e = seeds[i].fn(&g);
                if (e == 0)
                        e = seeds[i].fn(&all);
                if (e == 0)
                        e = write_log(argv[1], seeds[i].name, &g);
                imagen_done(&g);
                if (e < 0) {
                        fprintf(stderr, "mkcorpus-ima: seed %s: %s\n", seeds[i].name, strerror(-e));
                        return 1;
                }
        }
        e = write_log(argv[1], "mixed", &all);
        imagen_done(&all);
        return e < 0 ? 1 : 0;
}
