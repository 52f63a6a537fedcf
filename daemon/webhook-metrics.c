/* SPDX-License-Identifier: MIT */
/*
 * The webhook metrics (daemon/webhook.h): the outbox's totals, and each receiver's series
 * labelled receiver="N" (its place in the configuration) and host="host:port" (no path, user or
 * query): as many as --webhook lines, at most CONFIG_WEBHOOKS_MAX, so the labels are bounded.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "daemon/webhook-internal.h"
#include "daemon/webhook.h"

static void receivers_render(FILE *f, struct webhook *w)
{
        static const struct {
                const char *name, *type, *help;
        } series[] = {
                {"attestd_webhook_receiver_delivered_total", "counter",
                 "Webhook events this receiver acknowledged (2xx)."},
                {"attestd_webhook_receiver_failed_total", "counter",
                 "Delivery attempts to this receiver that failed (each is retried)."},
                {"attestd_webhook_receiver_failing_attempts", "gauge",
                 "Failed attempts in a row for the event this receiver is being sent (0: none)."},
                {"attestd_webhook_receiver_acknowledged_id", "gauge",
                 "The last event id this receiver acknowledged."},
        };

        for (size_t s = 0; s < sizeof(series) / sizeof(series[0]); s++) {
                fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", series[s].name, series[s].help,
                        series[s].name, series[s].type);
                for (unsigned i = 0; i < w->n; i++) {
                        const struct receiver *r = &w->rx[i];
                        long long v = s == 0   ? (long long)atomic_load(&r->delivered)
                                      : s == 1 ? (long long)atomic_load(&r->failed)
                                      : s == 2 ? (long long)atomic_load(&r->failing)
                                               : (long long)atomic_load(&r->acked);

                        fprintf(f, "%s{receiver=\"%u\",host=\"%s\"} %lld\n", series[s].name,
                                r->index, r->host, v);
                }
        }
}

int webhook_metrics_append(struct webhook *w, bool read_outbox, char **text, size_t *len)
{
        struct store_outbox_stats st = {0};
        char *buf = NULL;
        size_t n = 0;
        FILE *f;
        /* the outbox's three series are read from the database: when it cannot be read now (the
         * pool exhausted, the database gone) the page goes without them, not without the rest,
         * which an operator needs most then (attestd_db_pool_exhausted_total, the receivers) */
        int e = read_outbox ? store_outbox_stats(w->store, &st) : -EAGAIN;

        if (e == -ENOMEM)
                return e;
        f = open_memstream(&buf, &n);
        if (!f)
                return -ENOMEM;
        fwrite(*text, 1, *len, f);
        fprintf(f,
                "# HELP attestd_webhook_receivers Webhook receivers configured (--webhook).\n"
                "# TYPE attestd_webhook_receivers gauge\n"
                "attestd_webhook_receivers %u\n"
                "# HELP attestd_webhook_delivered_total Webhook events a receiver acknowledged "
                "(2xx).\n"
                "# TYPE attestd_webhook_delivered_total counter\n"
                "attestd_webhook_delivered_total %llu\n"
                "# HELP attestd_webhook_failed_total Webhook delivery attempts that failed (each "
                "is retried).\n"
                "# TYPE attestd_webhook_failed_total counter\n"
                "attestd_webhook_failed_total %llu\n",
                w->n, (unsigned long long)atomic_load(&w->delivered),
                (unsigned long long)atomic_load(&w->failed));
        if (e == 0)
                fprintf(f,
                        "# HELP attestd_webhook_outbox_pending Events not yet acknowledged by "
                        "every receiver.\n"
                        "# TYPE attestd_webhook_outbox_pending gauge\n"
                        "attestd_webhook_outbox_pending %llu\n"
                        "# HELP attestd_webhook_outbox_events Events in the outbox (pending and "
                        "kept for --webhook-retention).\n"
                        "# TYPE attestd_webhook_outbox_events gauge\n"
                        "attestd_webhook_outbox_events %llu\n"
                        "# HELP attestd_webhook_dropped_total Undelivered events dropped by "
                        "--webhook-outbox-max (since the database was created).\n"
                        "# TYPE attestd_webhook_dropped_total counter\n"
                        "attestd_webhook_dropped_total %llu\n",
                        (unsigned long long)st.pending, (unsigned long long)st.events,
                        (unsigned long long)st.dropped);
        receivers_render(f, w);
        if (fclose(f) != 0) {
                free(buf);
                return -ENOMEM;
        }
        free(*text);
        *text = buf;
        *len = n;
        return 0;
}
