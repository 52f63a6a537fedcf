/* SPDX-License-Identifier: MIT */
/* The webhook delivery's state, shared by webhook.c (threads) and webhook-metrics.c (metrics). */
#ifndef ATTESTD_WEBHOOK_INTERNAL_H
#define ATTESTD_WEBHOOK_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include <curl/curl.h>

#include "daemon/config.h"
#include "daemon/store/store.h"

#define BATCH 32             /* events read from the outbox at once per receiver */
#define IDLE_MS 500          /* a receiver with nothing to send looks again after this */
#define DUTY_MS 1000         /* the duty thread's period */
#define PRUNE_MS 60000       /* pruning's period */
#define PRUNE_BATCH 10000    /* events pruned per transaction */
#define CONNECT_MAX_MS 10000 /* connecting may take at most this (and at most the timeout) */
#define HOST_MAX 256

struct webhook;

/* "#N host:port" of a receiver in log lines and metric labels: its place in the configuration
 * and the URL's host and port (never the user, the path or the query: they may hold secrets) */
#define RECEIVER_NAME_MAX (HOST_MAX + 24)

struct receiver {
        struct webhook *w;
        unsigned index;                 /* 1.. in the configuration's order */
        const char *url;                /* cfg's */
        char host[HOST_MAX];            /* "host:port" */
        char name[RECEIVER_NAME_MAX];   /* "#N host:port" */
        atomic_uint_fast64_t delivered; /* events it acknowledged */
        atomic_uint_fast64_t failed;    /* failed attempts */
        atomic_uint_fast64_t failing;   /* consecutive failed attempts of the current event */
        atomic_int_fast64_t acked;      /* the last event id it acknowledged */
        pthread_t thread;
        bool started;
        int64_t cursor; /* the last event id acknowledged */
        uint64_t rng;   /* xorshift state for the back-off's jitter */
        CURL *curl;
        struct curl_slist *headers_base;
};

struct webhook {
        const struct config *cfg;
        struct store *store;
        char *secret;
        size_t secret_len, secret_alloc;
        pthread_mutex_t lock;
        pthread_cond_t wake; /* stop */
        bool stopping;
        atomic_bool stop_flag; /* read by curl's progress callback without the lock */
        struct receiver rx[CONFIG_WEBHOOKS_MAX];
        unsigned n;
        pthread_t duty;
        bool duty_started, curl_ready;
        uint64_t dropped_seen;
        atomic_uint_fast64_t delivered, failed;
};

#endif
