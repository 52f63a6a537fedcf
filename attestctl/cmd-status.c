/* SPDX-License-Identifier: MIT */
/* attestctl status: attestd's readiness (GET /healthz) and a summary of GET /metrics. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "attestctl/attestctl.h"
#include "attestctl/tty.h"
#include "attestctl/remote.h"

static void usage(FILE *f)
{
        fprintf(f,
                "Usage: attestctl status [CONNECTION]\n"
                "\n"
                "attestd's readiness (GET /healthz: the store readable and writable) and a\n"
                "summary of its metrics (GET /metrics): agents by state, verdicts by result,\n"
                "requests and rejections, mean verification time, and with webhooks their\n"
                "backlog (events pending, receivers retrying, events dropped). Needs no token.\n"
                "\n"
                "%s"
                "\n"
                "Exit status: 0 attestd is ready; 1 it answered that it is not (store\n"
                "unavailable, draining: the server's error is printed); 2 usage; 6 an answer\n"
                "that is not what attestd sends; 7 attestd not reached (connection, TLS,\n"
                "timeout).\n",
                remote_options_help);
}

/* The samples of the metrics summary: prometheus name{labels} -> JSON path. */
static const struct sample {
        const char *metric, *group, *key;
} samples[] = {
        {"attestd_agents{state=\"active\"}", "agents", "active"},
        {"attestd_agents{state=\"failing\"}", "agents", "failing"},
        {"attestd_agents{state=\"stale\"}", "agents", "stale"},
        {"attestd_agents{state=\"never_attested\"}", "agents", "never_attested"},
        {"attestd_attestations_total{result=\"pass\"}", "attestations", "pass"},
        {"attestd_attestations_total{result=\"fail\"}", "attestations", "fail"},
        {"attestd_attestations_total{result=\"error\"}", "attestations", "error"},
        {"attestd_verification_seconds_count", "verification_seconds", "count"},
        {"attestd_verification_seconds_sum", "verification_seconds", "sum"},
        {"attestd_requests_total", NULL, "requests_total"},
        {"attestd_webhook_receivers", "webhooks", "receivers"},
        {"attestd_webhook_outbox_pending", "webhooks", "pending"},
        {"attestd_webhook_dropped_total", "webhooks", "dropped"},
};

/* One "name value" line of the text format into the summary; others are skipped. */
static int metric_line(const char *line, size_t n, json_t *m)
{
        const char *sp;
        char num[64], *end;
        double v;
        size_t nl;

        if (n == 0 || line[0] == '#')
                return 0;
        sp = memchr(line, ' ', n);
        if (!sp)
                return 0;
        nl = (size_t)(sp - line);
        if (n - nl - 1 >= sizeof(num))
                return 0;
        memcpy(num, sp + 1, n - nl - 1);
        num[n - nl - 1] = '\0';
        errno = 0;
        v = strtod(num, &end);
        if (errno || end == num || *end != '\0')
                return 0;
        if (nl > 31 && strncmp(line, "attestd_rejected_requests_total{", 32) == 0) {
                json_t *t = json_object_get(m, "rejected_total");

                return json_object_set_new(m, "rejected_total",
                                           json_integer(json_integer_value(t) + (json_int_t)v));
        }
        /* receivers failing to take the event they are sent (the backlog's cause) */
        if (nl > 42 && strncmp(line, "attestd_webhook_receiver_failing_attempts{", 42) == 0) {
                json_t *g = json_object_get(m, "webhooks");

                if (!g && (json_object_set_new(m, "webhooks", json_object()) < 0 ||
                           !(g = json_object_get(m, "webhooks"))))
                        return -ENOMEM;
                return json_object_set_new(
                        g, "retrying",
                        json_integer(json_integer_value(json_object_get(g, "retrying")) + (v > 0)));
        }
        for (size_t i = 0; i < ARRAY_SIZE(samples); i++) {
                const struct sample *s = &samples[i];
                json_t *g = m, *val;

                if (strlen(s->metric) != nl || memcmp(s->metric, line, nl) != 0)
                        continue;
                if (s->group && !(g = json_object_get(m, s->group))) {
                        if (json_object_set_new(m, s->group, json_object()) < 0)
                                return -ENOMEM;
                        g = json_object_get(m, s->group);
                }
                val = strcmp(s->key, "sum") == 0 ? json_real(v) : json_integer((json_int_t)v);
                return json_object_set_new(g, s->key, val);
        }
        return 0;
}

static json_t *metrics_summary(const char *text, size_t len)
{
        json_t *m = json_object();
        size_t off = 0;

        if (!m || json_object_set_new(m, "rejected_total", json_integer(0)) < 0)
                return NULL;
        while (off < len) {
                const char *nl = memchr(text + off, '\n', len - off);
                size_t n = nl ? (size_t)(nl - (text + off)) : len - off;

                if (metric_line(text + off, n, m) < 0) {
                        json_decref(m);
                        return NULL;
                }
                off += n + 1;
        }
        return m;
}

static long long get_int(const json_t *m, const char *g, const char *k)
{
        const json_t *o = g ? json_object_get(m, g) : m;

        return (long long)json_integer_value(json_object_get(o, k));
}

int cmd_status(int argc, char **argv)
{
        static const struct option opts[] = {REMOTE_LONGOPTS, {0}};
        json_auto_t *health = NULL, *summary = NULL;
        struct reply hp = {0}, mp = {0};
        struct remote r;
        bool ready;
        int c, x, rc = 2;

        remote_init(&r);
        optind = 1;
        while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
                if ((x = remote_opt(&r, c, optarg)) < 0)
                        return 2;
                if (x)
                        continue;
                if (c == 'h') {
                        usage(stdout);
                        return 0;
                }
                usage(stderr);
                return 2;
        }
        if (optind != argc) {
                usage(stderr);
                return 2;
        }
        /* /healthz and /metrics need no token; one given is not sent */
        if (remote_connect(&r, false) < 0)
                goto out;
        if ((x = remote_request(&r, "GET", "/healthz", NULL, &hp)) < 0) {
                rc = remote_exit(x);
                goto out;
        }
        /* from here on an answer attestd would not give */
        rc = CTL_EXIT_SERVER;
        health = json_loadb(hp.body, hp.len, JSON_REJECT_DUPLICATES, NULL);
        if (!json_is_object(health) || (hp.status != 200 && hp.status != 503)) {
                remote_print_error("GET", "/healthz", &hp);
                goto out;
        }
        ready = hp.status == 200;
        if (!ready)
                remote_print_error("GET", "/healthz", &hp);
        if ((x = remote_request(&r, "GET", "/metrics", NULL, &mp)) < 0) {
                rc = remote_exit(x);
                goto out;
        }
        if (mp.status != 200) {
                remote_print_error("GET", "/metrics", &mp);
                goto out;
        }
        if (!(summary = metrics_summary(mp.body, mp.len)) ||
            !json_is_object(json_object_get(summary, "agents"))) {
                fprintf(stderr, "attestctl: GET /metrics: no attestd_agents samples\n");
                goto out;
        }
        if (r.json) {
                json_auto_t *o = json_pack("{s:s, s:b, s:O, s:O}", "url", r.url, "ready", ready,
                                           "health", health, "metrics", summary);

                if (!o || print_json(o) < 0) {
                        rc = CTL_EXIT_USAGE;
                        goto out;
                }
        } else {
                char b[64];
                long long n = get_int(summary, "verification_seconds", "count");
                double sum = json_real_value(
                        json_object_get(json_object_get(summary, "verification_seconds"), "sum"));

                printf("attestd:   %s  %s", r.url,
                       colored(ready ? "ready" : "NOT READY", ready ? C_GREEN : C_RED, r.color, b,
                               sizeof(b)));
                /* the server's words, escaped (attestctl/tty.h) */
                if (ready)
                        printf(" (schema %lld, store ", get_int(health, NULL, "schema"));
                else
                        fputs(" (", stdout);
                tty_fputs(json_string_value(json_object_get(health, ready ? "store" : "error"))
                                  ? json_string_value(
                                            json_object_get(health, ready ? "store" : "error"))
                                  : "?",
                          ERR_TEXT_COLS, stdout);
                fputs(")\n", stdout);
                printf("agents:    %lld active, %lld failing, %lld stale, %lld never attested\n",
                       get_int(summary, "agents", "active"), get_int(summary, "agents", "failing"),
                       get_int(summary, "agents", "stale"),
                       get_int(summary, "agents", "never_attested"));
                printf("verdicts:  %lld pass, %lld fail, %lld error",
                       get_int(summary, "attestations", "pass"),
                       get_int(summary, "attestations", "fail"),
                       get_int(summary, "attestations", "error"));
                if (n > 0)
                        printf(" (mean verification %.2f ms)", sum * 1000.0 / (double)n);
                printf("\nrequests:  %lld (%lld rejected)\n",
                       get_int(summary, NULL, "requests_total"),
                       get_int(summary, NULL, "rejected_total"));
                if (get_int(summary, "webhooks", "receivers") > 0)
                        printf("webhooks:  %lld events pending, %lld of %lld receivers retrying, "
                               "%lld dropped\n",
                               get_int(summary, "webhooks", "pending"),
                               get_int(summary, "webhooks", "retrying"),
                               get_int(summary, "webhooks", "receivers"),
                               get_int(summary, "webhooks", "dropped"));
                if (fflush(stdout) != 0) {
                        rc = CTL_EXIT_USAGE;
                        goto out;
                }
        }
        rc = ready ? 0 : 1;
out:
        reply_done(&hp);
        reply_done(&mp);
        remote_done(&r);
        return rc;
}
