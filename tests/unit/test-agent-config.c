/* SPDX-License-Identifier: MIT */
/*
 * The agent's text inputs through the text cursor: its config, token and agent-id files
 * (agent/config.c) and the host facts it reads from /proc and /boot (agent/facts.c). Every cap at
 * cap - 1, cap and cap + 1; malformed lines name the file, the line and the key; a failed parse
 * leaves its output alone.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <unistd.h>

#include "agent/config.h"
#include "agent/facts.h"
#include "tests/unit/testutil.h"

static struct agent_config *cfg_new(void)
{
        struct agent_config *c = calloc(1, sizeof(*c));

        ck_assert_ptr_nonnull(c);
        return c;
}

/* ---- config: syntax ---- */

START_TEST(test_config_every_key_and_the_syntax)
{
        static const char text[] = "  # comment\r\n"
                                   "\n"
                                   "\t\n"
                                   "verifier = https://127.0.0.1:8443\r\n"
                                   "verifier = https://127.0.0.2:8443\n"
                                   "retry-max = 30\n"
                                   "failback = 120\n"
                                   "ca=/etc/ca.pem\n"
                                   "cert \t=  /c.pem  \n"
                                   "key = /k.pem\n"
                                   "token-file = /t\n"
                                   "tcti = swtpm:host=127.0.0.1,port=2321\n"
                                   "state-dir = /var/lib/x\n"
                                   "ak-alg = rsa\n"
                                   "ak-alg = ecc\n"
                                   "ima-log = /ima\n"
                                   "ima-format = ascii\n"
                                   "pcrs = sha256:0-7+sha1:10\n"
                                   "interval = 60\n"
                                   "once = true\n"
                                   "dump-evidence = /d.json\n"
                                   "insecure-http = 1\n"
                                   "proc-root = /p\n"
                                   "label = role=web\n"
                                   "label =  dc = fra-1 \n"
                                   "machine-id-file = /m\n"
                                   "boot-log = none\n"
                                   "timeout = 5"; /* no final newline */
        struct agent_config *c = cfg_new();
        struct attest_err err = {0};

        ck_assert_int_eq(agent_config_parse(LIT(text), "a.conf", c, &err), 0);
        ck_assert_uint_eq(c->set, (1u << AGENT_CFG_KEY_COUNT) - 1);
        /* verifiers add up, in order: the order of preference */
        ck_assert_uint_eq(c->n_verifiers, 2);
        ck_assert_str_eq(c->verifiers[0], "https://127.0.0.1:8443");
        ck_assert_str_eq(c->verifiers[1], "https://127.0.0.2:8443");
        ck_assert_uint_eq(c->retry_max, 30);
        ck_assert_uint_eq(c->failback, 120);
        ck_assert_str_eq(c->ca, "/etc/ca.pem");
        ck_assert_str_eq(c->cert, "/c.pem");
        ck_assert_str_eq(c->key, "/k.pem");
        ck_assert_str_eq(c->token_file, "/t");
        ck_assert_str_eq(c->tcti, "swtpm:host=127.0.0.1,port=2321"); /* '=' in the value */
        ck_assert_str_eq(c->state_dir, "/var/lib/x");
        ck_assert_int_eq(c->ak_alg, TPM_KEY_ECCP256); /* a later line wins */
        ck_assert_str_eq(c->ima_log, "/ima");
        ck_assert_str_eq(c->boot_log, "none");
        ck_assert(c->ima_ascii);
        ck_assert_str_eq(c->pcrs, "sha256:0-7+sha1:10");
        ck_assert_uint_eq(c->interval, 60);
        ck_assert(c->once && c->insecure_http);
        ck_assert_str_eq(c->dump_evidence, "/d.json");
        ck_assert_str_eq(c->proc_root, "/p");
        ck_assert_uint_eq(c->timeout, 5);
        ck_assert_str_eq(c->machine_id_file, "/m");
        /* labels add up, in order, blanks around key and value cut */
        ck_assert_uint_eq(c->n_labels, 2);
        ck_assert_str_eq(c->labels[0].key, "role");
        ck_assert_str_eq(c->labels[0].value, "web");
        ck_assert_str_eq(c->labels[1].key, "dc");
        ck_assert_str_eq(c->labels[1].value, "fra-1");
        /* every key by its name, and "config" is not one */
        for (int k = 0; k < AGENT_CFG_KEY_COUNT; k++) {
                enum agent_config_key r;
                const char *n = agent_config_key_name((enum agent_config_key)k);

                ck_assert_int_eq(agent_config_key_from_name(n, strlen(n), &r), 0);
                ck_assert_int_eq(r, k);
        }
        ck_assert_int_eq(agent_config_key_from_name(LIT("config"), &(enum agent_config_key){0}),
                         -ENOENT);
        free(c);
}
END_TEST

/* The parse fails with -EINVAL, its message holds want, and c is byte for byte as before. */
static void parse_fails(const char *text, size_t len, const char *want)
{
        struct agent_config *c = cfg_new(), *before = cfg_new();
        struct attest_err err = {0};

        /* something set before, which the failed parse must not touch */
        ck_assert_int_eq(agent_config_parse(LIT("timeout = 9\nca = /old\n"), "x", c, &err), 0);
        memcpy(before, c, sizeof(*c));
        ck_assert_int_eq(agent_config_parse(text, len, "a.conf", c, &err), -EINVAL);
        if (!strstr(err.msg, want))
                ck_abort_msg("'%s' not in '%s'", want, err.msg);
        ck_assert_mem_eq(c, before, sizeof(*c));
        free(c);
        free(before);
}

START_TEST(test_config_malformed_lines_name_line_and_key)
{
        /* each with a good line before it, which must not stay applied either */
        parse_fails(LIT("ca = /new\ntimeout = 1\nno equals sign\n"),
                    "a.conf:3: expected 'key = value'");
        parse_fails(LIT("ca = /new\nbogus = 1\n"), "a.conf:2: bogus: unknown key");
        parse_fails(LIT("ca = /new\n= x\n"), "a.conf:2: expected 'key = value': no key before '='");
        parse_fails(LIT("ca = /new\nconfig = /etc/other.conf\n"), "a.conf:2: config: unknown key");
        parse_fails(LIT("ca = /new\nca\x1b[0m = x\n"), "a.conf:2: key byte 3 is not a letter");
        parse_fails(LIT("ca = /new\n\nak-alg = dsa\n"), "a.conf:3: ak-alg: wants rsa or ecc");
        parse_fails(LIT("ca = /new\nima-format = text\n"),
                    "a.conf:2: ima-format: wants binary or ascii");
        parse_fails(LIT("ca = /new\npcrs = sha256:0-99\n"), "a.conf:2: pcrs: not a PCR selection");
        parse_fails(LIT("once = no\n"), "a.conf:1: once: wants true, yes or 1");
        parse_fails(LIT("ca = /new\nverifier =\n"), "a.conf:2: verifier: empty value");
        /* numbers: digits only, no sign, no leading zero, 1..max */
        parse_fails(LIT("ca = /new\ninterval = 0\n"),
                    "a.conf:2: interval: wants a number in 1..86400");
        parse_fails(LIT("interval = +5\n"), "a.conf:1: interval: wants a number");
        parse_fails(LIT("interval = -1\n"), "a.conf:1: interval: wants a number");
        parse_fails(LIT("interval = 060\n"), "a.conf:1: interval: wants a number");
        parse_fails(LIT("interval = 5s\n"), "a.conf:1: interval: wants a number");
        parse_fails(LIT("timeout = 18446744073709551617\n"), "a.conf:1: timeout: wants a number");
        /* labels: KEY=VALUE, each checked, no key twice, at most EVIDENCE_LABELS_MAX */
        parse_fails(LIT("ca = /new\nlabel = role\n"), "a.conf:2: label: wants KEY=VALUE");
        parse_fails(LIT("label = role=web\nlabel = Role=db\n"), "a.conf:2: label: key: wants");
        parse_fails(LIT("label = =web\n"), "a.conf:1: label: key: wants 1..63");
        parse_fails(LIT("label = role=\n"), "a.conf:1: label: value of role: wants");
        parse_fails(LIT("label = role=a b\n"), "a.conf:1: label: value of role: wants");
        parse_fails(LIT("label = role=web/1\n"), "a.conf:1: label: value of role");
        parse_fails(LIT("label = role=web\n# x\nlabel = role=db\n"),
                    "a.conf:3: label: key role given twice");
        parse_fails(
                LIT("label = k=0123456789012345678901234567890123456789012345678901234567890123\n"),
                "a.conf:1: label: value of k: wants 1..63");
        parse_fails(
                LIT("label = k012345678901234567890123456789012345678901234567890123456789012=v\n"),
                "a.conf:1: label: key: wants 1..63");
        /* a NUL byte: the old fgets/strchr parser cut the value there and went on */
        parse_fails(LIT("ca = /new\nverifier = https://good\0https://evil\n"),
                    "a.conf:2: NUL byte");
}
END_TEST

/* ---- config: caps ---- */

/* Labels at cap - 1 and cap parse; one more is an error naming its line. */
START_TEST(test_config_label_count_cap)
{
        char text[4096];
        size_t n = 0;
        struct agent_config *c = cfg_new();
        struct attest_err err = {0};

        for (int i = 0; i < EVIDENCE_LABELS_MAX; i++)
                n += (size_t)snprintf(text + n, sizeof(text) - n, "label = k%d=v%d\n", i, i);
        ck_assert_int_eq(
                agent_config_parse(text, n - strlen("label = k31=v31\n"), "a.conf", c, &err), 0);
        ck_assert_uint_eq(c->n_labels, EVIDENCE_LABELS_MAX - 1);
        free(c);
        c = cfg_new();
        ck_assert_int_eq(agent_config_parse(text, n, "a.conf", c, &err), 0);
        ck_assert_uint_eq(c->n_labels, EVIDENCE_LABELS_MAX);
        ck_assert_str_eq(c->labels[EVIDENCE_LABELS_MAX - 1].key, "k31");
        free(c);
        n += (size_t)snprintf(text + n, sizeof(text) - n, "label = k99=v\n");
        parse_fails(text, n, "a.conf:33: label: more than 32 labels");
}
END_TEST

/* Verifiers at cap - 1 and cap parse, one more is an error naming its line; the same URL twice
 * is one; a failed parse leaves the list as it was (parse_fails). */
START_TEST(test_config_verifier_count_cap)
{
        char text[4096];
        size_t n = 0, last;
        struct agent_config *c = cfg_new();
        struct attest_err err = {0};

        for (int i = 0; i < AGENT_VERIFIERS_MAX; i++) {
                last = n;
                n += (size_t)snprintf(text + n, sizeof(text) - n,
                                      "verifier = https://127.0.0.%d:8443\n", i + 1);
        }
        ck_assert_int_eq(agent_config_parse(text, last, "a.conf", c, &err), 0);
        ck_assert_uint_eq(c->n_verifiers, AGENT_VERIFIERS_MAX - 1);
        free(c);
        c = cfg_new();
        ck_assert_int_eq(agent_config_parse(text, n, "a.conf", c, &err), 0);
        ck_assert_uint_eq(c->n_verifiers, AGENT_VERIFIERS_MAX);
        ck_assert_str_eq(c->verifiers[AGENT_VERIFIERS_MAX - 1], "https://127.0.0.8:8443");
        free(c);
        parse_fails(text,
                    (size_t)snprintf(text + n, sizeof(text) - n,
                                     "verifier = https://127.0.0.99:8443\n") +
                            n,
                    "a.conf:9: verifier: more than 8 verifiers");
        parse_fails(LIT("verifier = https://a:1\nverifier = https://b:1\nverifier = https://a:1\n"),
                    "a.conf:3: verifier: https://a:1 given twice");
        parse_fails(LIT("verifier = https://a:1\nverifier =\n"), "a.conf:2: verifier: empty value");
}
END_TEST

START_TEST(test_config_value_cap)
{
        size_t pre = strlen("state-dir = ");

        /* a value of AGENT_CONFIG_STR_MAX - 1 bytes fits with its NUL; one more does not */
        for (int d = -1; d <= 1; d++) {
                size_t v = (size_t)(AGENT_CONFIG_STR_MAX - 1 + d), n = pre + v + 1;
                struct agent_config *c = cfg_new();
                struct attest_err err = {0};
                char *b = filled(n, 'x');

                memcpy(b, "state-dir = ", pre);
                b[n - 1] = '\n';
                if (d <= 0) {
                        ck_assert_int_eq(agent_config_parse(b, n, "a.conf", c, &err), 0);
                        ck_assert_uint_eq(strlen(c->state_dir), v);
                } else {
                        parse_fails(b, n, "a.conf:1: state-dir: value longer than 4095 bytes");
                }
                /* the flag goes through the same setter */
                ck_assert_int_eq(agent_config_set(c, AGENT_CFG_CA, b + pre, v, &err),
                                 d <= 0 ? 0 : -EINVAL);
                free(b);
                free(c);
        }
}
END_TEST

START_TEST(test_config_line_cap)
{
        /* a comment line of AGENT_CONFIG_LINE_MAX - 1, cap, cap + 1 bytes, after a good line */
        for (int d = -1; d <= 1; d++) {
                size_t n = (size_t)(AGENT_CONFIG_LINE_MAX + d), pre = strlen("ca = /x\n");
                struct agent_config *c = cfg_new();
                struct attest_err err = {0};
                char *b = filled(pre + n + 1, ' ');

                memcpy(b, "ca = /x\n", pre);
                b[pre] = '#';
                b[pre + n] = '\n';
                if (d <= 0)
                        ck_assert_int_eq(agent_config_parse(b, pre + n + 1, "a.conf", c, &err), 0);
                else
                        parse_fails(b, pre + n + 1, "a.conf:2: line longer than 4224 bytes");
                /* the same without the final newline */
                ck_assert_int_eq(agent_config_parse(b, pre + n, "a.conf", c, &err),
                                 d <= 0 ? 0 : -EINVAL);
                free(b);
                free(c);
        }
}
END_TEST

START_TEST(test_config_file_cap)
{
        char path[] = "/tmp/test-agent-config.XXXXXX";
        int fd = mkstemp(path);

        ck_assert_int_ge(fd, 0);
        for (int d = -1; d <= 1; d++) {
                size_t n = (size_t)(AGENT_CONFIG_FILE_MAX + d);
                struct agent_config *c = cfg_new();
                struct attest_err err = {0};
                char *b = filled(n, '\n');

                memcpy(b, "timeout = 7\n", 12);
                if (d <= 0) {
                        ck_assert_int_eq(agent_config_parse(b, n, "a.conf", c, &err), 0);
                        ck_assert_uint_eq(c->timeout, 7);
                } else {
                        parse_fails(b, n, "a.conf: larger than 65536 bytes");
                }
                /* and read from a file: the loader refuses it rather than cutting it */
                ck_assert_int_eq(ftruncate(fd, 0), 0);
                ck_assert_int_eq(pwrite(fd, b, n, 0), (ssize_t)n);
                memset(c, 0, sizeof(*c));
                err = (struct attest_err){0};
                ck_assert_int_eq(agent_config_load(path, true, c, &err), d <= 0 ? 0 : -EINVAL);
                ck_assert_uint_eq(c->timeout, d <= 0 ? 7 : 0);
                if (d > 0)
                        ck_assert_ptr_nonnull(strstr(err.msg, "larger than 65536 bytes"));
                free(b);
                free(c);
        }
        close(fd);
        unlink(path);
}
END_TEST

START_TEST(test_config_number_caps)
{
        static const struct {
                enum agent_config_key k;
                uint32_t max;
        } nums[] = {{AGENT_CFG_INTERVAL, AGENT_INTERVAL_MAX},
                    {AGENT_CFG_TIMEOUT, AGENT_TIMEOUT_MAX},
                    {AGENT_CFG_RETRY_MAX, AGENT_RETRY_MAX_MAX},
                    {AGENT_CFG_FAILBACK, AGENT_FAILBACK_MAX}};

        for (size_t i = 0; i < ARRAY_SIZE(nums); i++)
                for (int d = -1; d <= 1; d++) {
                        struct agent_config *c = cfg_new();
                        struct attest_err err = {0};
                        char line[64], want[64];
                        int n = snprintf(line, sizeof(line), "%s = %u\n",
                                         agent_config_key_name(nums[i].k), nums[i].max + d);

                        if (d <= 0) {
                                ck_assert_int_eq(
                                        agent_config_parse(line, (size_t)n, "a.conf", c, &err), 0);
                                ck_assert_uint_eq(nums[i].k == AGENT_CFG_INTERVAL    ? c->interval
                                                  : nums[i].k == AGENT_CFG_TIMEOUT   ? c->timeout
                                                  : nums[i].k == AGENT_CFG_RETRY_MAX ? c->retry_max
                                                                                     : c->failback,
                                                  nums[i].max + d);
                        } else {
                                snprintf(want, sizeof(want),
                                         "a.conf:1: %s: wants a number in 1..%u",
                                         agent_config_key_name(nums[i].k), nums[i].max);
                                parse_fails(line, (size_t)n, want);
                        }
                        free(c);
                }
}
END_TEST

START_TEST(test_config_load_missing_file)
{
        struct agent_config *c = cfg_new();
        struct attest_err err = {0};

        ck_assert_int_eq(agent_config_load("/nonexistent/agent.conf", false, c, &err), 0);
        ck_assert_int_eq(agent_config_load("/nonexistent/agent.conf", true, c, &err), -EINVAL);
        ck_assert_ptr_nonnull(strstr(err.msg, "/nonexistent/agent.conf"));
        free(c);
}
END_TEST

/* ---- the token and agent-id files ---- */

START_TEST(test_token_caps_and_syntax)
{
        char out[AGENT_TOKEN_MAX + 1];

        /* a token of AGENT_TOKEN_MAX - 1, cap, cap + 1 bytes (the old reader cut it at the cap) */
        for (int d = -1; d <= 1; d++) {
                size_t n = (size_t)(AGENT_TOKEN_MAX + d);
                char *b = filled(n + 1, 't');

                b[n] = '\n';
                memcpy(out, "untouched", 10);
                ck_assert_int_eq(agent_token_parse(b, n + 1, out), d <= 0 ? 0 : -E2BIG);
                if (d <= 0)
                        ck_assert_uint_eq(strlen(out), n);
                else
                        ck_assert_str_eq(out, "untouched");
                free(b);
        }
        /* the file: AGENT_TOKEN_FILE_MAX - 1, cap, cap + 1 bytes (a short token, blanks) */
        for (int d = -1; d <= 1; d++) {
                size_t n = (size_t)(AGENT_TOKEN_FILE_MAX + d);
                char *b = filled(n, ' ');

                memcpy(b, "abc", 3);
                b[n - 1] = '\n';
                ck_assert_int_eq(agent_token_parse(b, n, out), d <= 0 ? 0 : -E2BIG);
                free(b);
        }
        ck_assert_int_eq(agent_token_parse(LIT("  s3cret \r\n"), out), 0);
        ck_assert_str_eq(out, "s3cret");
        ck_assert_int_eq(agent_token_parse(LIT("s3cret"), out), 0);
        memcpy(out, "untouched", 10);
        /* a second line, a blank, a control byte (header injection), a NUL, nothing */
        ck_assert_int_eq(agent_token_parse(LIT("a\nb\n"), out), -EBADMSG);
        ck_assert_int_eq(agent_token_parse(LIT("a b\n"), out), -EBADMSG);
        ck_assert_int_eq(agent_token_parse(LIT("a\rX-Evil:1\n"), out), -EBADMSG);
        ck_assert_int_eq(agent_token_parse(LIT("a\x7f\n"), out), -EBADMSG);
        ck_assert_int_eq(agent_token_parse(LIT("a\xc3\xa9\n"), out), -EBADMSG);
        ck_assert_int_eq(agent_token_parse(LIT("a\0b\n"), out), -EBADMSG);
        ck_assert_int_eq(agent_token_parse(LIT("\n"), out), -EBADMSG);
        ck_assert_int_eq(agent_token_parse(LIT(""), out), -EBADMSG);
        ck_assert_str_eq(out, "untouched");
}
END_TEST

START_TEST(test_agent_id_caps)
{
        char out[AGENT_ID_MAX + 1];

        for (int d = -1; d <= 1; d++) {
                size_t n = (size_t)(AGENT_ID_MAX + d);
                char *b = filled(n, 'a');

                memcpy(out, "untouched", 10);
                ck_assert_int_eq(agent_id_parse(b, n, out), d <= 0 ? 0 : -E2BIG);
                ck_assert_str_eq(out, d <= 0 ? b : "untouched");
                free(b);
        }
        ck_assert_int_eq(agent_id_parse(LIT("0f"), out), 0);
        ck_assert_int_eq(agent_id_parse(LIT(""), out), -EBADMSG);
        ck_assert_int_eq(agent_id_parse(LIT("0F"), out), -EBADMSG);
        ck_assert_int_eq(agent_id_parse(LIT("0f\n"), out), -EBADMSG);
        ck_assert_int_eq(agent_id_parse(LIT("0f\0"), out), -EBADMSG);
        ck_assert_int_eq(agent_id_parse(LIT("../x"), out), -EBADMSG);
}
END_TEST

/* ---- facts ---- */

START_TEST(test_facts_config_caps)
{
        bool en = true, perm = true;

        /* the whole file: FACTS_CONFIG_MAX - 1, cap, cap + 1 */
        for (int d = -1; d <= 1; d++) {
                size_t n = (size_t)((long)FACTS_CONFIG_MAX + d);
                char *b = filled(n, '\n');

                memcpy(b, "CONFIG_CFI_CLANG=y\n", 19);
                en = perm = true;
                ck_assert_int_eq(facts_parse_config(b, n, &en, &perm), d <= 0 ? 0 : -E2BIG);
                ck_assert(en);                    /* set, or untouched */
                ck_assert(d <= 0 ? !perm : perm); /* cleared only on success */
                free(b);
        }
        /* one line: FACTS_CONFIG_LINE_MAX - 1, cap, cap + 1 */
        for (int d = -1; d <= 1; d++) {
                size_t n = (size_t)(FACTS_CONFIG_LINE_MAX + d);
                char *b = filled(n + 1, 'x');

                memcpy(b, "CONFIG_CMDLINE=\"", 16);
                b[n] = '\n';
                en = perm = true;
                ck_assert_int_eq(facts_parse_config(b, n + 1, &en, &perm), d <= 0 ? 0 : -E2BIG);
                ck_assert(d <= 0 ? !en && !perm : en && perm);
                free(b);
        }
}
END_TEST

START_TEST(test_facts_config_lines)
{
        bool en, perm;

        ck_assert_int_eq(facts_parse_config(LIT("# CONFIG_CFI_CLANG is not set\n"
                                                "CONFIG_CFI_CLANG_X=y\n"
                                                "XCONFIG_CFI_PERMISSIVE=y\n"
                                                "CONFIG_CFI_PERMISSIVE=yy\n"),
                                            &en, &perm),
                         0);
        ck_assert(!en && !perm);
        ck_assert_int_eq(
                facts_parse_config(LIT("CONFIG_CFI_CLANG=y\nCONFIG_CFI_PERMISSIVE=y"), &en, &perm),
                0);
        ck_assert(en && perm);
        /* a later assignment wins, as in Kconfig */
        ck_assert_int_eq(
                facts_parse_config(LIT("CONFIG_CFI_CLANG=y\nCONFIG_CFI_CLANG=n\n"), &en, &perm), 0);
        ck_assert(!en);
        /* a NUL byte: refused, outputs untouched (the old memchr walk went on past it) */
        en = perm = true;
        ck_assert_int_eq(facts_parse_config(LIT("CONFIG_A=y\0\nCONFIG_CFI_CLANG=n\n"), &en, &perm),
                         -EBADMSG);
        ck_assert(en && perm);
}
END_TEST

START_TEST(test_facts_line_caps)
{
        char out[16];

        /* a one-line file into 16 bytes: lines of 14, 15 (the cap) and 16 bytes */
        for (int d = -1; d <= 1; d++) {
                size_t n = (size_t)(15 + d);
                char *b = filled(n + 1, 'k');

                b[n] = '\n';
                memcpy(out, "untouched", 10);
                ck_assert_int_eq(facts_parse_line(b, n + 1, out, sizeof(out)), d <= 0 ? 0 : -E2BIG);
                if (d <= 0)
                        ck_assert_uint_eq(strlen(out), n);
                else
                        ck_assert_str_eq(out, "untouched");
                free(b);
        }
        ck_assert_int_eq(facts_parse_line(LIT("6.1.0 \n"), out, sizeof(out)), 0);
        ck_assert_str_eq(out, "6.1.0");
        ck_assert_int_eq(facts_parse_line(LIT("6.1\nsecond\n"), out, sizeof(out)), -EBADMSG);
        ck_assert_int_eq(facts_parse_line(LIT("6.1\x1b[0m\n"), out, sizeof(out)), -EBADMSG);
        ck_assert_int_eq(facts_parse_line(LIT("6.1\0x\n"), out, sizeof(out)), -EBADMSG);
}
END_TEST

static int cmdline(const char *text, size_t len, struct facts *f)
{
        memset(f, 0, sizeof(*f));
        return facts_parse_cmdline(text, len, f);
}

START_TEST(test_facts_cmdline_cap)
{
        static struct facts f;

        /* /proc/cmdline of FACTS_CMDLINE_MAX - 2, - 1 (the cap) and FACTS_CMDLINE_MAX bytes, with
         * trusted.source last: the old reader cut it at the cap and could report a cut value */
        for (int d = -1; d <= 1; d++) {
                size_t n = (size_t)(FACTS_CMDLINE_MAX - 1 + d);
                char *b = filled(n + 1, 'a');

                memcpy(b + n - strlen(" trusted.source=tpm"), " trusted.source=tpm", 19);
                b[n] = '\n';
                ck_assert_int_eq(cmdline(b, n + 1, &f), d <= 0 ? 0 : -E2BIG);
                ck_assert(d <= 0 ? f.tk_present : !f.tk_present);
                ck_assert_uint_eq(strlen(f.cmdline), d <= 0 ? n : 0);
                free(b);
        }
}
END_TEST

START_TEST(test_facts_cmdline_params_as_the_kernel_cuts_them)
{
        static struct facts f;

        ck_assert_int_eq(cmdline(LIT("ro trusted.source=tpm quiet trusted.source=tee\n"), &f), 0);
        ck_assert(f.tk_present);
        ck_assert_str_eq(f.tk_source, "tee");
        ck_assert_str_eq(f.tk_origin, "cmdline");
        /* inside quotes a blank does not end the parameter: this is dyndbg's value */
        ck_assert_int_eq(cmdline(LIT("dyndbg=\"x trusted.source=tee\" ro\n"), &f), 0);
        ck_assert(!f.tk_present);
        ck_assert_int_eq(cmdline(LIT("trusted.source=tpm a=\"b trusted.source=tee c\"\n"), &f), 0);
        ck_assert_str_eq(f.tk_source, "tpm");
        /* after "--" the parameters are init's */
        ck_assert_int_eq(cmdline(LIT("ro -- trusted.source=tee\n"), &f), 0);
        ck_assert(!f.tk_present);
        /* quoted values and parameters, as the kernel strips them */
        ck_assert_int_eq(cmdline(LIT("trusted.source=\"caam\"\n"), &f), 0);
        ck_assert_str_eq(f.tk_source, "caam");
        ck_assert_int_eq(cmdline(LIT("\"trusted.source=dcp\"\n"), &f), 0);
        ck_assert_str_eq(f.tk_source, "dcp");
        /* not this parameter, or no plain value */
        ck_assert_int_eq(cmdline(LIT("xtrusted.source=tee foo.trusted.source=tee trusted.source= "
                                     "trusted.source\n"),
                                 &f),
                         0);
        ck_assert(!f.tk_present);
        /* the value fits tk_source (31 bytes) or is skipped */
        ck_assert_int_eq(cmdline(LIT("trusted.source=0123456789012345678901234567890\n"), &f), 0);
        ck_assert_str_eq(f.tk_source, "0123456789012345678901234567890");
        ck_assert_int_eq(cmdline(LIT("trusted.source=01234567890123456789012345678901\n"), &f), 0);
        ck_assert(!f.tk_present);
        /* unprintable or two lines: no cmdline fact at all */
        ck_assert_int_eq(cmdline(LIT("a\x1b[0m trusted.source=tpm\n"), &f), -EBADMSG);
        ck_assert_int_eq(cmdline(LIT("ro\ntrusted.source=tpm\n"), &f), -EBADMSG);
}
END_TEST

int main(void)
{
        Suite *s = suite_create("agent-config");
        TCase *tc = tcase_create("config"), *fc = tcase_create("facts");
        SRunner *sr;
        int failed;

        tcase_set_timeout(tc, 60);
        tcase_add_test(tc, test_config_every_key_and_the_syntax);
        tcase_add_test(tc, test_config_malformed_lines_name_line_and_key);
        tcase_add_test(tc, test_config_value_cap);
        tcase_add_test(tc, test_config_label_count_cap);
        tcase_add_test(tc, test_config_verifier_count_cap);
        tcase_add_test(tc, test_config_line_cap);
        tcase_add_test(tc, test_config_file_cap);
        tcase_add_test(tc, test_config_number_caps);
        tcase_add_test(tc, test_config_load_missing_file);
        tcase_add_test(tc, test_token_caps_and_syntax);
        tcase_add_test(tc, test_agent_id_caps);
        suite_add_tcase(s, tc);
        tcase_set_timeout(fc, 60);
        tcase_add_test(fc, test_facts_config_caps);
        tcase_add_test(fc, test_facts_config_lines);
        tcase_add_test(fc, test_facts_line_caps);
        tcase_add_test(fc, test_facts_cmdline_cap);
        tcase_add_test(fc, test_facts_cmdline_params_as_the_kernel_cuts_them);
        suite_add_tcase(s, fc);
        sr = srunner_create(s);
        srunner_run_all(sr, CK_NORMAL);
        failed = srunner_ntests_failed(sr);
        srunner_free(sr);
        return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
