/* SPDX-License-Identifier: MIT */
/*
 * One attestation round: challenge -> quote with the nonce -> the IMA log from the asked offset
 * (after the quote) and host facts -> the evidence streamed to the verifier -> verdict, next_due.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <openssl/rand.h>

#include "agent/agent.h"
#include "agent/evout.h"
#include "evidence/evjson.h"
#include "evidence/pcrsel.h"
#include "util/file.h"
#include "util/hex.h"

struct challenge {
        uint8_t nonce[EVIDENCE_NONCE_MAX];
        size_t nonce_len;
        uint64_t ima_offset;
        struct pcr_sel sel;
        bool boot_asked; /* the verifier named a boot_offset: it reads "boot_log" */
        uint64_t boot_offset;
};

/*
 * The firmware event log from the challenge's boot_offset into ev (agent/bootlog.h). Not sent
 * when the verifier did not ask (an attestd without measured boot would refuse the member), when
 * boot-log = none, or when the log cannot be read: the round goes on without it (a boot policy
 * then fails on the missing log, in the verdict), with a warning unless there is no log at all.
 */
static void collect_boot_log(const struct agent *a, const struct challenge *ch, struct evidence *ev)
{
        struct attest_err err = {0};
        int x;

        if (!ch->boot_asked || !a->boot_log_path)
                return;
        x = bootlog_read(a->boot_log_path, 0, ch->boot_offset, &ev->boot_offset, &ev->boot_log,
                         &ev->boot_log_len, &err);
        if (x == -ENOENT)
                log_debug("firmware event log: %s: not sent", err.msg);
        else if (x < 0)
                log_warning("firmware event log: %s: not sent", err.msg);
        else
                log_debug("firmware event log: %zu bytes from %" PRIu64, ev->boot_log_len,
                          ev->boot_offset);
}

/*
 * Quote first, then read the IMA log. The kernel appends a measurement to the log before it
 * extends PCR 10, so a log read after the quote holds at least every entry the quoted PCR 10
 * covers, and the verifier replays the shortest prefix that matches. Read before the quote, a
 * measurement landing in between would leave the quoted PCR ahead of the log: a spurious fail.
 * Failures here are local (LOCAL).
 */
static int collect(struct agent *a, const struct challenge *ch, struct evidence *ev,
                   struct imalog_span *span)
{
        struct attest_err err = {0};
        struct facts f;
        int x;

        memcpy(ev->nonce, ch->nonce, ch->nonce_len);
        ev->nonce_len = ch->nonce_len;
        x = tpm_quote(a->tpm, &ch->sel, ch->nonce, ch->nonce_len, &ev->attest, &ev->attest_len,
                      &ev->sig, &ev->sig_len, &ev->pcrs, &err);
        if (x < 0) {
                log_err("TPM quote: %s", err.msg);
                return x;
        }
        /* the entries' bounds only: their bytes are read again, checked, while they are sent */
        x = imalog_scan(&a->log, ch->ima_offset, span, &err);
        if (x < 0) {
                log_err("IMA log: %s", err.msg);
                return x;
        }
        ev->ima_offset = span->from;
        ev->ima_format = a->log.format;
        collect_boot_log(a, ch, ev);
        log_debug("IMA log: %" PRIu64 " entries from %" PRIu64 " (%lld bytes)", span->count,
                  span->from, (long long)(span->end - span->start));
        if ((x = facts_collect(&a->facts_paths, &f, &err)) < 0) {
                log_err("host facts: %s", err.msg);
                return x;
        }
        snprintf(ev->host.kernel, sizeof(ev->host.kernel), "%s", f.kernel);
        snprintf(ev->host.boot_id, sizeof(ev->host.boot_id), "%s", f.boot_id);
        if (f.cmdline[0] && !(ev->host.cmdline = strdup(f.cmdline)))
                return -ENOMEM;
        ev->host.cfi_present = f.cfi_present;
        snprintf(ev->host.cfi_source, sizeof(ev->host.cfi_source), "%s", f.cfi_source);
        ev->host.cfi_enabled = f.cfi_enabled;
        ev->host.cfi_permissive = f.cfi_permissive;
        ev->host.tk_present = f.tk_present;
        snprintf(ev->host.tk_source, sizeof(ev->host.tk_source), "%s", f.tk_source);
        snprintf(ev->host.tk_origin, sizeof(ev->host.tk_origin), "%s", f.tk_origin);
        facts_put_identity(&f, a->cfg.labels, a->cfg.n_labels, &ev->host);
        return 0;
}

static ssize_t evout_fn(void *ctx, uint8_t *buf, size_t n, struct attest_err *err)
{
        return evout_read(ctx, buf, n, err);
}

/* The evidence JSON, streamed from the log span, to the --dump-evidence file. */
static int dump_evidence(struct agent *a, const struct evidence *ev, const struct imalog_span *span)
{
        _cleanup_free_ uint8_t *ak = NULL;
        char path[AGENT_CONFIG_STR_MAX + 32]; /* dump + ".ak.pub" always fits */
        struct attest_err err = {0};
        struct file_bytes bytes;
        struct evout out;
        size_t ak_len;
        int x;

        if ((x = evout_open(&out, ev, &a->log, span, &err)) == 0) {
                x = file_write_atomic(a->dump, 0644, evout_fn, &out, &err);
                evout_close(&out);
        }
        if (x < 0) {
                log_err("%s: %s", a->dump, err.msg);
                return x;
        }
        snprintf(path, sizeof(path), "%s.ak.pub", a->dump);
        if ((x = tpm_ak_public(a->tpm, &ak, &ak_len)) < 0) {
                log_err("%s: %s", path, strerror(-x));
                return x;
        }
        bytes = FILE_BYTES(ak, ak_len);
        if ((x = file_write_atomic(path, 0644, file_bytes_read, &bytes, &err)) < 0) {
                log_err("%s", err.msg);
                return x;
        }
        log_info("evidence written to %s, AK public area to %s", a->dump, path);
        return 0;
}

static int get_challenge(struct agent *a, struct challenge *ch, struct agent_outcome *o)
{
        json_t *resp = NULL, *boot;
        const char *nonce, *sel;
        char path[256];
        long status;
        json_int_t off;
        int x;

        snprintf(path, sizeof(path), "/v1/agents/%s/challenges", a->id);
        json_t *empty = json_object();
        x = empty ? verifier_call(a, "POST", path, empty, &status, &resp, o)
                  : agent_outcome_set(o, AGENT_OUTCOME_LOCAL, -ENOMEM);
        json_decref(empty);
        if (x < 0)
                return x;
        if (status != 200 && status != 201) {
                x = agent_outcome_http(o, "challenge", status, resp);
                json_decref(resp);
                return x;
        }
        nonce = json_string_value(json_object_get(resp, "nonce"));
        sel = json_string_value(json_object_get(resp, "pcr_selection"));
        off = json_integer_value(json_object_get(resp, "ima_offset"));
        boot = json_object_get(resp, "boot_offset");
        if (!nonce || (boot && (!json_is_integer(boot) || json_integer_value(boot) < 0)) ||
            hex_decode(nonce, strlen(nonce), ch->nonce, sizeof(ch->nonce), &ch->nonce_len) < 0 ||
            ch->nonce_len == 0 || off < 0 ||
            pcr_sel_parse(sel ? sel : (a->pcr_sel_text ? a->pcr_sel_text : "sha256:0-10"),
                          &ch->sel) < 0) {
                log_err("challenge: malformed answer from the verifier");
                json_decref(resp);
                return agent_outcome_set(o, AGENT_OUTCOME_PROTOCOL, -EBADMSG);
        }
        ch->ima_offset = (uint64_t)off;
        ch->boot_asked = boot != NULL;
        ch->boot_offset = boot ? (uint64_t)json_integer_value(boot) : 0;
        json_decref(resp);
        return 0;
}

/*
 * Challenge, collect, submit. Returns 1 pass, 0 fail (a verdict: *o is DONE), negative when the
 * round ended otherwise (*o says how); *next_due_s is the delay the verifier asked for (0: none).
 */
int agent_round(struct agent *a, long *next_due_s, struct agent_outcome *o)
{
        _cleanup_(evidence_freep) struct evidence *ev = calloc(1, sizeof(*ev));
        _cleanup_free_ char *text = NULL;
        struct attest_err err = {0};
        struct imalog_span span;
        struct challenge ch;
        struct evout out;
        json_t *resp = NULL;
        char path[256];
        long status;
        int x;

        *next_due_s = 0;
        if (!ev)
                return agent_outcome_set(o, AGENT_OUTCOME_LOCAL, -ENOMEM);
        if ((x = get_challenge(a, &ch, o)) < 0)
                return x;
        if ((x = collect(a, &ch, ev, &span)) < 0 ||
            (a->dump && (x = dump_evidence(a, ev, &span)) < 0))
                return agent_outcome_set(o, AGENT_OUTCOME_LOCAL, x);
        /* streamed: the log is read in chunks, base64-encoded into the request as it goes */
        if ((x = evout_open(&out, ev, &a->log, &span, &err)) < 0) {
                log_err("evidence: %s", err.msg);
                return agent_outcome_set(o, AGENT_OUTCOME_LOCAL, x);
        }
        snprintf(path, sizeof(path), "/v1/agents/%s/evidence", a->id);
        x = http_request_stream(a->http, "POST", path, evout_size(&out), evout_fn, &out, &status,
                                &text, &err);
        evout_close(&out);
        if ((x = verifier_answer("POST", path, x, &err, text, &status, &resp, o)) < 0)
                return x;
        if (status != 200) {
                x = agent_outcome_http(o, "evidence", status, resp);
                json_decref(resp);
                return x;
        }
        const char *st = json_string_value(json_object_get(resp, "status"));
        const char *due = json_string_value(json_object_get(resp, "next_due"));
        json_t *claims = json_object_get(resp, "claims");
        size_t i;
        json_t *c;

        if (!st) {
                log_err("evidence: verdict without a status");
                json_decref(resp);
                return agent_outcome_set(o, AGENT_OUTCOME_PROTOCOL, -EBADMSG);
        }
        struct agent_verdict_line vl;

        /* the verdict line names the claims that did not pass; each with its reason below it */
        agent_verdict_begin(&vl, st, a->last_status);
        json_array_foreach(claims, i, c)
        {
                const char *res = json_string_value(json_object_get(c, "result"));
                const char *nm = json_string_value(json_object_get(c, "name"));

                agent_verdict_claim(&vl, nm, res);
        }
        if (strcmp(st, a->last_status) != 0 || vl.failing || vl.left_out)
                log_notice("%s", agent_verdict_end(&vl));
        else
                log_info("%s", agent_verdict_end(&vl));
        json_array_foreach(claims, i, c)
        {
                const char *res = json_string_value(json_object_get(c, "result"));

                if (res && strcmp(res, "pass") != 0) {
                        const char *nm = json_string_value(json_object_get(c, "name"));
                        const char *why = json_string_value(json_object_get(c, "reason"));

                        log_info("claim %s: %s%s%s", nm ? nm : "?", res, why ? ": " : "",
                                 why ? why : "");
                }
        }
        snprintf(a->last_status, sizeof(a->last_status), "%s", st);
        if (due) {
                struct tm tm = {0};
                const char *e = strptime(due, "%Y-%m-%dT%H:%M:%S", &tm);

                if (e) {
                        time_t t = timegm(&tm);
                        long d = (long)(t - time(NULL));

                        *next_due_s = d > 1 ? d : 1;
                }
        }
        /* print the verdict for an operator running --once */
        if (a->once) {
                char *txt = json_dumps(resp, JSON_INDENT(2));

                if (txt)
                        printf("%s\n", txt);
                free(txt);
        }
        x = strcmp(st, "pass") == 0 ? 1 : 0;
        json_decref(resp);
        agent_outcome_set(o, AGENT_OUTCOME_DONE, 0);
        return x;
}

/* Offline: quote a random local nonce and write the evidence (no verifier). */
int agent_dump_offline(struct agent *a)
{
        _cleanup_(evidence_freep) struct evidence *ev = calloc(1, sizeof(*ev));
        struct challenge ch = {.nonce_len = 32, .boot_asked = true}; /* the whole boot log */
        struct imalog_span span;
        int x;

        if (!ev)
                return -ENOMEM;
        if (RAND_bytes(ch.nonce, 32) != 1 ||
            pcr_sel_parse(a->pcr_sel_text ? a->pcr_sel_text : "sha256:0-10", &ch.sel) < 0)
                return -EIO;
        if ((x = collect(a, &ch, ev, &span)) < 0)
                return x;
        return dump_evidence(a, ev, &span);
}
