/* SPDX-License-Identifier: MIT */
/*
 * The store's write cost per verdict, without HTTP or cryptography: T threads record verdicts of
 * N agents through store_result_add() (writer mode, group commit) the way a round does (agent read
 * first, a ~190-byte replay state, a ~300-byte verdict, --retain results kept), on verdict times
 * advancing RATE per second. Prints verdicts, commits, verdicts per commit, and the pages written
 * to the WAL per verdict (SQLITE_DBSTATUS_CACHE_WRITE, store_wal_pages()) over the second half
 * (after the results reached their steady size). (Nonces cost the store nothing: daemon/nonce.h.)
 *
 * bench-store DB [--agents N] [--threads T] [--verdicts V] [--rate R] [--retain K]
 */
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/store/db.h"
#include "daemon/store/store.h"

struct opts {
        unsigned agents, threads, verdicts, rate, retain;
};

struct worker {
        struct store *s;
        const struct opts *o;
        unsigned first;
        atomic_uint *next; /* verdict number: its time */
        unsigned limit;    /* stop there */
        uint64_t errors;
};

static const char verdict_text[] =
        "{\"status\":\"pass\",\"policy\":\"default@1\",\"claims\":[{\"name\":\"selinux.enforcing\","
        "\"expected\":true,\"observed\":true,\"result\":\"pass\",\"anchored\":true,\"entry\":1},"
        "{\"name\":\"selinux.never_permissive\",\"expected\":true,\"observed\":true,\"result\":"
        "\"pass\",\"anchored\":true,\"entry\":1}],\"time\":\"2026-12-03T16:40:00Z\",\"next_due\":"
        "\"2026-12-03T16:45:00Z\",\"ima\":{\"offset\":10,\"new_entries\":10,\"entries\":20}}";

static void *run(void *arg)
{
        struct worker *w = arg;
        const struct opts *o = w->o;

        for (unsigned a = w->first;; a = (a + o->threads) % o->agents) {
                unsigned k = atomic_fetch_add(w->next, 1);
                char id[32];
                uint8_t state[190];
                struct store_agent *ag;
                int64_t t = 1000000 + (int64_t)k * 1000 / o->rate;

                if (k >= w->limit)
                        break;
                snprintf(id, sizeof(id), "agent-%06u", a);
                if (store_agent_get(w->s, id, &ag) < 0) {
                        w->errors++;
                        continue;
                }
                memset(state, (int)(k & 0xff), sizeof(state));
                struct store_result r = {.agent = id,
                                         .time = t,
                                         .status = "pass",
                                         .policy = "default@1",
                                         .verdict = verdict_text,
                                         .next_due = t + 300000,
                                         .ima_offset = ag->ima_offset + 10,
                                         .replay_state = state,
                                         .replay_state_len = sizeof(state),
                                         .kept_known = ag->results_kept >= 0,
                                         .kept = ag->results_kept};

                if (store_result_add(w->s, &r, ag->seq, o->retain, NULL) < 0)
                        w->errors++;
                store_agent_free(ag);
        }
        return NULL;
}

int main(int argc, char **argv)
{
        struct opts o = {
                .agents = 64, .threads = 16, .verdicts = 40000, .rate = 5000, .retain = 20};
        static const struct option lo[] = {{"agents", 1, NULL, 'a'},   {"threads", 1, NULL, 't'},
                                           {"verdicts", 1, NULL, 'v'}, {"rate", 1, NULL, 'r'},
                                           {"retain", 1, NULL, 'k'},   {0}};
        struct attest_err err = {0};
        struct store *s;
        struct worker w[64];
        pthread_t th[64];
        atomic_uint next;
        uint64_t c0, w0, p0, c1, w1, p1, errors = 0, q0, f0, q1, f1;
        int ch;

        while ((ch = getopt_long(argc, argv, "", lo, NULL)) != -1) {
                unsigned v = (unsigned)strtoul(optarg, NULL, 10);

                switch (ch) {
                case 'a':
                        o.agents = v;
                        break;
                case 't':
                        o.threads = v;
                        break;
                case 'v':
                        o.verdicts = v;
                        break;
                case 'r':
                        o.rate = v;
                        break;
                case 'k':
                        o.retain = v;
                        break;
                default:
                        return 2;
                }
        }
        if (optind != argc - 1 || !o.agents || !o.threads || o.threads > 64 || !o.rate) {
                fprintf(stderr, "usage: bench-store DB [--agents N] [--threads T (<= 64)] "
                                "[--verdicts V] [--rate R] [--retain K]\n");
                return 2;
        }
        if (store_open(argv[optind], STORE_WRITER, o.threads, &s, &err) < 0) {
                fprintf(stderr, "bench-store: %s\n", err.msg);
                return 1;
        }
        for (unsigned i = 0; i < o.agents; i++) {
                uint8_t ak[300], name[34];
                struct store_agent a = {.ak_public = ak,
                                        .ak_public_len = sizeof(ak),
                                        .ak_name = name,
                                        .ak_name_len = sizeof(name),
                                        .created = 1000};

                snprintf(a.id, sizeof(a.id), "agent-%06u", i);
                a.state = AGENT_STATE_ACTIVE;
                memset(ak, 1, sizeof(ak));
                memset(name, 0, sizeof(name));
                memcpy(name, &i, sizeof(i));
                if (store_agent_add(s, &a) < 0) {
                        fprintf(stderr, "bench-store: agent add failed\n");
                        return 1;
                }
        }
        /* the first half fills the results to their steady size */
        for (int half = 0; half < 2; half++) {
                atomic_init(&next, half ? o.verdicts / 2 : 0);
                store_stats(s, &c0, &w0);
                p0 = store_wal_pages(s);
                db_wal_stats(&q0, &f0);
                for (unsigned t = 0; t < o.threads; t++) {
                        w[t] = (struct worker){.s = s,
                                               .o = &o,
                                               .first = t,
                                               .next = &next,
                                               .limit = half ? o.verdicts : o.verdicts / 2};
                        pthread_create(&th[t], NULL, run, &w[t]);
                }
                for (unsigned t = 0; t < o.threads; t++) {
                        pthread_join(th[t], NULL);
                        errors += w[t].errors;
                }
        }
        store_stats(s, &c1, &w1);
        p1 = store_wal_pages(s);
        db_wal_stats(&q1, &f1);
        printf("verdicts=%u (second half counted) commits=%llu verdicts/commit=%.1f "
               "wal_pages/verdict=%.2f errors=%llu agents=%u threads=%u rate=%u/s retain=%u\n",
               o.verdicts / 2, (unsigned long long)(c1 - c0),
               (double)(w1 - w0) / (double)(c1 - c0 ? c1 - c0 : 1),
               (double)(p1 - p0) / (double)(w1 - w0 ? w1 - w0 : 1), (unsigned long long)errors,
               o.agents, o.threads, o.rate, o.retain);
        /* the WAL's writes: those SQLite asked for (two a frame), those that reached the file */
        printf("wal_writes/commit=%.1f wal_file_writes/commit=%.2f\n",
               (double)(q1 - q0) / (double)(c1 - c0 ? c1 - c0 : 1),
               (double)(f1 - f0) / (double)(c1 - c0 ? c1 - c0 : 1));
        store_close(s);
        return errors ? 1 : 0;
}
