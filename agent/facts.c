/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <zlib.h>

#include "agent/config.h"
#include "agent/facts.h"
#include "util/file.h"
#include "util/tok.h"

/* Printable ASCII only: these strings travel to the verifier and into its logs. */
static bool printable(struct span s)
{
        for (size_t i = 0; i < s.n; i++)
                if ((unsigned char)s.p[i] < 0x20 || (unsigned char)s.p[i] > 0x7e)
                        return false;
        return true;
}

/*
 * The one line of a small /proc file (kernel release, boot id) into out (size bytes, the line
 * at most size - 1 of them): trailing blanks cut, printable only, nothing after the newline.
 */
int facts_parse_line(const char *text, size_t len, char *out, size_t size)
{
        struct tok t = TOK_INIT(text, len), ln;
        struct span s = {"", 0};
        int x;

        if (size == 0)
                return -EINVAL;
        if ((x = tok_line(&t, size - 1, 0, &ln)) < 0)
                return x;
        if (x > 0 && tok_rest(&ln, size - 1, &s) < 0)
                s = (struct span){"", 0};
        if (!tok_empty(&t))
                return -EBADMSG; /* a second line */
        if (!printable(s))
                return -EBADMSG;
        return span_cstr(span_trim(s), out, size);
}

static int read_line_file(const char *path, char *out, size_t size)
{
        char buf[FACTS_CMDLINE_MAX + 1];
        size_t len;
        int x;

        /* the line, its newline, and one byte to see a file over the cap */
        if (size > FACTS_CMDLINE_MAX || (x = file_read(path, buf, size, 0, &len, NULL)) < 0)
                return size > FACTS_CMDLINE_MAX ? -EINVAL : x;
        return facts_parse_line(buf, len, out, size);
}

int facts_parse_config(const char *text, size_t len, bool *ret_enabled, bool *ret_permissive)
{
        struct tok t = TOK_INIT(text, len), ln;
        bool enabled = false, permissive = false;
        int x;

        if (len > FACTS_CONFIG_MAX)
                return -E2BIG;
        while ((x = tok_line(&t, FACTS_CONFIG_LINE_MAX, 0, &ln)) != 0) {
                struct span key, val = {"", 0};

                if (x < 0)
                        return x;
                /* CONFIG_X=value; comments ("# CONFIG_X is not set") hold no '=' at the start */
                if (tok_field(&ln, '=', FACTS_CONFIG_LINE_MAX, &key) < 0 || !ln.more)
                        continue;
                if (tok_rest(&ln, FACTS_CONFIG_LINE_MAX, &val) < 0)
                        val = (struct span){"", 0};
                /* a later assignment wins, as in Kconfig */
                if (span_eq(key, "CONFIG_CFI_CLANG"))
                        enabled = span_eq(val, "y");
                else if (span_eq(key, "CONFIG_CFI_PERMISSIVE"))
                        permissive = span_eq(val, "y");
        }
        *ret_enabled = enabled;
        *ret_permissive = permissive;
        return 0;
}

/* The number of '"' in s. */
static size_t quotes(struct span s)
{
        size_t n = 0;

        for (size_t i = 0; i < s.n; i++)
                n += s.p[i] == '"';
        return n;
}

/*
 * One kernel parameter (param or param=value, quoted as the kernel's next_arg() allows): when it
 * is trusted.source with a plain value, that value.
 */
static bool trusted_source(struct span p, struct span *ret)
{
        struct tok t;
        struct span name, val;

        if (p.n && p.p[0] == '"') {
                /* "param=value": the kernel drops both quotes */
                if (p.n < 2 || p.p[p.n - 1] != '"')
                        return false;
                p = (struct span){p.p + 1, p.n - 2};
        }
        tok_init(&t, p.p, p.n);
        if (tok_field(&t, '=', FACTS_CMDLINE_MAX, &name) < 0 || !t.more ||
            !span_eq(name, "trusted.source"))
                return false;
        if (tok_rest(&t, FACTS_CMDLINE_MAX, &val) < 0)
                return false;
        if (val.n >= 2 && val.p[0] == '"' && val.p[val.n - 1] == '"')
                val = (struct span){val.p + 1, val.n - 2};
        /* a value with quotes or blanks left is not one the kernel would take as a source */
        if (val.n == 0 || quotes(val) || memchr(val.p, ' ', val.n))
                return false;
        *ret = val;
        return true;
}

int facts_parse_cmdline(const char *text, size_t len, struct facts *f)
{
        char cmdline[FACTS_CMDLINE_MAX], source[sizeof(f->tk_source)];
        struct tok w;
        struct span word, param = {NULL, 0}, v;
        bool present = false, in_quote = false;
        int x;

        if ((x = facts_parse_line(text, len, cmdline, sizeof(cmdline))) < 0)
                return x;
        /*
         * Words as the kernel's next_arg() cuts them: a blank inside double quotes does not end a
         * parameter, so `dyndbg="x trusted.source=tee"` is one parameter (dyndbg). "--" ends the
         * kernel's parameters: what follows goes to init.
         */
        tok_init(&w, cmdline, strlen(cmdline));
        while (tok_word(&w, FACTS_CMDLINE_MAX, &word) == 0) {
                if (!in_quote)
                        param = word;
                else /* the same parameter: it spans from its first word to this one */
                        param.n = (size_t)(word.p - param.p) + word.n;
                if (quotes(word) % 2)
                        in_quote = !in_quote;
                if (in_quote)
                        continue;
                if (span_eq(param, "--"))
                        break;
                if (!trusted_source(param, &v) || v.n >= sizeof(source))
                        continue;
                memcpy(source, v.p, v.n); /* the last one wins, as for kernel parameters */
                source[v.n] = '\0';
                present = true;
        }
        memcpy(f->cmdline, cmdline, sizeof(cmdline));
        f->tk_present = present;
        if (present) {
                memcpy(f->tk_source, source, sizeof(source));
                snprintf(f->tk_origin, sizeof(f->tk_origin), "cmdline");
        }
        return 0;
}

/* A kernel config file, whole (util/file.h: at most FACTS_CONFIG_MAX bytes, NUL terminated). */
static int read_config_file(const char *path, char **ret, size_t *ret_len)
{
        return file_read_alloc(path, FACTS_CONFIG_MAX, 0, ret, ret_len, NULL);
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

int facts_parse_machine_id(const char *text, size_t len, char out[EVIDENCE_MACHINE_ID_LEN + 1])
{
        if (len == EVIDENCE_MACHINE_ID_LEN + 1 && text[EVIDENCE_MACHINE_ID_LEN] == '\n')
                len--;
        if (!evidence_machine_id_valid(text, len))
                return -EBADMSG;
        memcpy(out, text, EVIDENCE_MACHINE_ID_LEN);
        out[EVIDENCE_MACHINE_ID_LEN] = '\0';
        return 0;
}

void facts_put_identity(const struct facts *f, const struct evidence_label *labels, unsigned n,
                        struct evidence_host *h)
{
        memcpy(h->hostname, f->hostname, sizeof(h->hostname));
        memcpy(h->machine_id, f->machine_id, sizeof(h->machine_id));
        h->labels_present = true; /* none is a report too: the operator removed them */
        h->n_labels = n < EVIDENCE_LABELS_MAX ? n : EVIDENCE_LABELS_MAX;
        memcpy(h->labels, labels, h->n_labels * sizeof(*labels));
}

int facts_identity(const struct facts_paths *paths, struct facts *f, struct attest_err *err)
{
        const char *host_path =
                paths && paths->hostname ? paths->hostname : "/proc/sys/kernel/hostname";
        const char *id_path = paths && paths->machine_id ? paths->machine_id : "/etc/machine-id";
        char host[EVIDENCE_HOSTNAME_MAX + 1] = "", id[EVIDENCE_MACHINE_ID_LEN + 2];
        char mid[EVIDENCE_MACHINE_ID_LEN + 1] = "";
        size_t n = 0;
        int x;

        /* the id, its newline and one byte more to see a longer file */
        x = file_read(id_path, id, sizeof(id), 0, &n, NULL);
        if (x == 0 && facts_parse_machine_id(id, n, mid) < 0)
                return attest_fail(err, -EBADMSG, AE_FACTS_MACHINE_ID,
                                   "%s: not a machine id (32 lower-case hex digits and a "
                                   "newline; systemd-machine-id-setup writes one)",
                                   id_path);
        if (x < 0 && x != -ENOENT)
                return attest_fail(err, -EBADMSG, AE_FACTS_MACHINE_ID, "%s: %s", id_path,
                                   x == -E2BIG ? "not a machine id (longer than 33 bytes)"
                                               : strerror(-x));
        if (read_line_file(host_path, host, sizeof(host)) < 0 || !host[0]) {
                if (gethostname(host, sizeof(host) - 1) < 0)
                        host[0] = '\0';
                host[sizeof(host) - 1] = '\0';
        }
        if (!evidence_hostname_valid(host, strlen(host)))
                host[0] = '\0';
        memcpy(f->hostname, host, sizeof(host));
        memcpy(f->machine_id, mid, sizeof(mid));
        return 0;
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
        char path[512], *cfg = NULL, cmdline[FACTS_CMDLINE_MAX + 1];
        size_t cfg_len = 0, cmdline_len;
        int x;

        if ((x = read_line_file(pp->osrelease ? pp->osrelease : def.osrelease, f.kernel,
                                sizeof(f.kernel))) < 0 ||
            !f.kernel[0])
                return attest_fail(err, -EIO, AE_FACTS_NO_KERNEL,
                                   "cannot read the kernel release (%s)",
                                   x == -E2BIG     ? "too long"
                                   : x == -EBADMSG ? "not one printable line"
                                   : x < 0         ? strerror(-x)
                                                   : "empty");
        if (read_line_file(pp->boot_id ? pp->boot_id : def.boot_id, f.boot_id, sizeof(f.boot_id)) <
            0)
                f.boot_id[0] = '\0';
        cmdline_len = 0;
        if (file_read(pp->cmdline ? pp->cmdline : def.cmdline, cmdline, sizeof(cmdline), 0,
                      &cmdline_len, NULL) < 0 ||
            facts_parse_cmdline(cmdline, cmdline_len, &f) < 0)
                f.cmdline[0] = '\0'; /* unreadable, too long or not printable: no fact from it */

        snprintf(path, sizeof(path), "%s/config-%s", pp->boot_dir ? pp->boot_dir : def.boot_dir,
                 f.kernel);
        if (read_config_file(path, &cfg, &cfg_len) == 0) {
                snprintf(f.cfi_source, sizeof(f.cfi_source), "config");
        } else if (read_config_gz(pp->config_gz ? pp->config_gz : def.config_gz, &cfg, &cfg_len) ==
                   0) {
                snprintf(f.cfi_source, sizeof(f.cfi_source), "proc-config");
        }
        /* a config that does not parse (a NUL byte, a line over the cap) gives no CFI fact */
        if (cfg && facts_parse_config(cfg, cfg_len, &f.cfi_enabled, &f.cfi_permissive) == 0)
                f.cfi_present = true;
        else
                f.cfi_source[0] = '\0';
        free(cfg);
        if ((x = facts_identity(paths, &f, err)) < 0)
                return x;
        *ret = f;
        return 0;
}
