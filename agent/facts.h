/* SPDX-License-Identifier: MIT */
/*
 * Host facts the agent reports beside the IMA log. On a mainline kernel none of them is measured,
 * so the verifier treats them as unanchored (docs/architecture.md §5.2): CFI from the kernel
 * keys source from the kernel command line, the kernel release and the boot id.
 */
#ifndef AGENT_FACTS_H
#define AGENT_FACTS_H

#include <stdbool.h>
#include <stddef.h>

#include "evidence/evidence.h"
#include "util/err.h"

#define FACTS_CMDLINE_MAX 4096              /* /proc/cmdline, with its NUL */
#define FACTS_CONFIG_MAX (4u * 1024 * 1024) /* a kernel config file */
#define FACTS_CONFIG_LINE_MAX 16384         /* one line of it, without the newline */

/* Where to read from; NULL members take the real paths. Tests point them at files. */
struct facts_paths {
        const char *osrelease;  /* /proc/sys/kernel/osrelease */
        const char *boot_id;    /* /proc/sys/kernel/random/boot_id */
        const char *cmdline;    /* /proc/cmdline */
        const char *boot_dir;   /* /boot (config-RELEASE inside) */
        const char *config_gz;  /* /proc/config.gz */
        const char *hostname;   /* /proc/sys/kernel/hostname */
        const char *machine_id; /* /etc/machine-id */
};

struct facts {
        char kernel[256];
        char boot_id[64];
        char cmdline[FACTS_CMDLINE_MAX];
        bool cfi_present;                         /* a kernel config was found */
        char cfi_source[32];                      /* "config" (/boot/config-*) or "proc-config" */
        bool cfi_enabled;                         /* CONFIG_CFI_CLANG=y */
        bool cfi_permissive;                      /* CONFIG_CFI_PERMISSIVE=y */
        bool tk_present;                          /* trusted.source= on the command line */
        char tk_source[32];                       /* its value: tpm, tee, caam, ... */
        char tk_origin[32];                       /* "cmdline" */
        char hostname[EVIDENCE_HOSTNAME_MAX + 1]; /* "" when unreadable or not a host name */
        char machine_id[EVIDENCE_MACHINE_ID_LEN + 1]; /* "" when there is no machine-id file */
};

/*
 * The host's identity alone (the enrolment sends it too): the host name (the proc file, else
 * gethostname(); left "" when it is not 1..253 of [A-Za-z0-9._-]) and the machine id. A missing
 * machine-id file leaves it ""; one that is not 32 lower-case hex digits and a newline is -EBADMSG
 * (AE_FACTS_MACHINE_ID, err naming the file): a host must not report a garbled identity.
 */
int facts_identity(const struct facts_paths *paths, struct facts *f, struct attest_err *err) _wur_;

/* The identity members of h: f's host name and machine id, and the operator's labels. */
void facts_put_identity(const struct facts *f, const struct evidence_label *labels, unsigned n,
                        struct evidence_host *h);

/* /etc/machine-id's text: 32 lower-case hex digits, one optional newline, nothing else. */
int facts_parse_machine_id(const char *text, size_t len, char out[EVIDENCE_MACHINE_ID_LEN + 1])
        _wur_;

/* Collect every fact that can be read; missing sources leave their fact absent. -EIO only when
 * the kernel release itself cannot be read, -EBADMSG a malformed machine id (facts_identity). */
int facts_collect(const struct facts_paths *paths, struct facts *ret, struct attest_err *err) _wur_;

/*
 * The parsers facts_collect() runs on what it reads (exposed for tests and fuzzers); outputs are
 * written only on success. Errors: -E2BIG over a cap, -EBADMSG malformed.
 */

/* Kernel config text: CONFIG_CFI_CLANG=y and CONFIG_CFI_PERMISSIVE=y (the last assignment wins).
 * At most FACTS_CONFIG_MAX bytes, lines at most FACTS_CONFIG_LINE_MAX; no NUL byte. */
int facts_parse_config(const char *text, size_t len, bool *ret_enabled, bool *ret_permissive) _wur_;

/* A one-line /proc file into out (the line at most size - 1 bytes, printable ASCII, trailing
 * blanks cut, nothing after its newline). */
int facts_parse_line(const char *text, size_t len, char *out, size_t size) _wur_;

/* /proc/cmdline (a line of at most FACTS_CMDLINE_MAX - 1 printable bytes) into f->cmdline and the
 * trusted.source fact: parameters cut as the kernel does (double quotes keep blanks inside one,
 * "--" ends them), the last trusted.source wins; on failure f is unchanged. */
int facts_parse_cmdline(const char *text, size_t len, struct facts *f) _wur_;

#endif
