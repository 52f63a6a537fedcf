/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <zlib.h>

#include "facts.h"

/* Read at most max-1 bytes of a small file into buf, NUL terminated, trailing newline cut. */
static int read_small(const char *path, char *buf, size_t max)
{
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        size_t len = 0;

        if (fd < 0)
                return -errno;
        while (len < max - 1) {
                ssize_t n = read(fd, buf + len, max - 1 - len);

                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0) {
                        int e = -errno;
                        close(fd);
                        return e;
                }
                if (n == 0)
                        break;
                len += (size_t)n;
        }
        close(fd);
        buf[len] = '\0';
        while (len && (buf[len - 1] == '\n' || buf[len - 1] == ' '))
                buf[--len] = '\0';
        return 0;
}

/* Printable ASCII only: these strings travel to the verifier and into its logs. */
static bool printable(const char *s)
{
        for (; *s; s++)
                if ((unsigned char)*s < 0x20 || (unsigned char)*s > 0x7e)
                        return false;
        return true;
}

static bool config_is_y(const char *line, size_t len, const char *opt)
{
        size_t n = strlen(opt);

        return len == n + 2 && memcmp(line, opt, n) == 0 && line[n] == '=' && line[n + 1] == 'y';
}

void facts_parse_config(const char *text, size_t len, bool *ret_enabled, bool *ret_permissive)
{
        const char *p = text, *end = text + len;

        *ret_enabled = *ret_permissive = false;
        while (p < end) {
                const char *eol = memchr(p, '\n', (size_t)(end - p));
                size_t n = eol ? (size_t)(eol - p) : (size_t)(end - p);

                if (config_is_y(p, n, "CONFIG_CFI_CLANG"))
                        *ret_enabled = true;
                else if (config_is_y(p, n, "CONFIG_CFI_PERMISSIVE"))
                        *ret_permissive = true;
                p += n + 1;
        }
}

static int read_config_file(const char *path, char **ret, size_t *ret_len)
{
        FILE *f = fopen(path, "re");
        char *buf;
        size_t n;

        if (!f)
                return -errno;
        buf = malloc(FACTS_CONFIG_MAX + 1);
        if (!buf) {
                fclose(f);
                return -ENOMEM;
        }
        n = fread(buf, 1, FACTS_CONFIG_MAX + 1, f);
        fclose(f);
        if (n > FACTS_CONFIG_MAX) {
                free(buf);
                return -E2BIG;
        }
        *ret = buf;
        *ret_len = n;
        return 0;
}

static int read_config_gz(const char *path, char **ret, size_t *ret_len)
{
        gzFile z = gzopen(path, "rb");
        char *buf;
        int n;

        if (!z)
                return -ENOENT;
        buf = malloc(FACTS_CONFIG_MAX + 1);
        if (!buf) {
                gzclose(z);
                return -ENOMEM;
        }
        n = gzread(z, buf, FACTS_CONFIG_MAX + 1);
        gzclose(z);
        if (n < 0 || (size_t)n > FACTS_CONFIG_MAX) {
                free(buf);
                return n < 0 ? -EBADMSG : -E2BIG;
        }
        *ret = buf;
        *ret_len = (size_t)n;
        return 0;
}

/* trusted.source=VALUE on the command line (the last one wins, as for kernel parameters). */
static void cmdline_trusted_source(struct facts *f)
{
        const char *p = f->cmdline;
        static const char key[] = "trusted.source=";

        while ((p = strstr(p, key))) {
                bool at_word = p == f->cmdline || p[-1] == ' ';
                const char *v = p + sizeof(key) - 1;
                size_t n = strcspn(v, " ");

                p = v;
                if (!at_word || n == 0 || n >= sizeof(f->tk_source))
                        continue;
                memcpy(f->tk_source, v, n);
                f->tk_source[n] = '\0';
                f->tk_present = true;
                snprintf(f->tk_origin, sizeof(f->tk_origin), "cmdline");
        }
}

int facts_collect(const struct facts_paths *paths, struct facts *ret, struct attest_err *err)
{
        static const struct facts_paths def = {
                .osrelease = "/proc/sys/kernel/osrelease",
                .boot_id = "/proc/sys/kernel/random/boot_id",
                .cmdline = "/proc/cmdline",
                .boot_dir = "/boot",
                .config_gz = "/proc/config.gz",
        };
        const struct facts_paths *pp = paths ? paths : &def;
        struct facts f = {0};
        char path[512], *cfg = NULL;
        size_t cfg_len = 0;
        int x;

        if ((x = read_small(pp->osrelease ? pp->osrelease : def.osrelease, f.kernel,
                            sizeof(f.kernel))) < 0)
                return attest_fail(err, -EIO, "facts_no_kernel", "cannot read the kernel release");
        if (!printable(f.kernel) || !f.kernel[0])
                return attest_fail(err, -EIO, "facts_no_kernel", "kernel release not printable");
        if (read_small(pp->boot_id ? pp->boot_id : def.boot_id, f.boot_id, sizeof(f.boot_id)) < 0 ||
            !printable(f.boot_id))
                f.boot_id[0] = '\0';
        if (read_small(pp->cmdline ? pp->cmdline : def.cmdline, f.cmdline, sizeof(f.cmdline)) < 0 ||
            !printable(f.cmdline))
                f.cmdline[0] = '\0';
        cmdline_trusted_source(&f);

        snprintf(path, sizeof(path), "%s/config-%s", pp->boot_dir ? pp->boot_dir : def.boot_dir,
                 f.kernel);
        if (read_config_file(path, &cfg, &cfg_len) == 0) {
                snprintf(f.cfi_source, sizeof(f.cfi_source), "config");
        } else if (read_config_gz(pp->config_gz ? pp->config_gz : def.config_gz, &cfg, &cfg_len) ==
                   0) {
                snprintf(f.cfi_source, sizeof(f.cfi_source), "proc-config");
        }
        if (cfg) {
                f.cfi_present = true;
                facts_parse_config(cfg, cfg_len, &f.cfi_enabled, &f.cfi_permissive);
                free(cfg);
        }
        *ret = f;
        return 0;
}
