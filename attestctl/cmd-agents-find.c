/* SPDX-License-Identifier: MIT */
/*
 * attestctl agents: an agent id from a unique prefix of it (GET /v1/agents?prefix=, and for
 * readmit GET /v1/refused-eks?prefix=), and attestctl agents refused, the refused EKs.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "attestctl/attestctl.h"
#include "attestctl/cmd-agents.h"
#include "attestctl/tty.h"

/* Whether p is attestd's answer to a query parameter it does not know (an older attestd). */
static bool unknown_query(const struct reply *p)
{
        json_auto_t *e = NULL;
        const char *code, *detail;

        if (p->status != 400)
                return false;
        e = json_loadb(p->body, p->len, 0, NULL);
        code = ctl_agents_str(e, "error");
        detail = ctl_agents_str(e, "detail");
        return code && strcmp(code, "bad_query") == 0 && detail &&
               strstr(detail, "unknown query parameter") != NULL;
}

/*
 * The ids (member key of each object of array member arr) of the answer to path that start with
 * prefix, distinct, at most ID_CANDIDATES + 1 of them, into ids; *more when the answer had a next
 * page. Entries that do not start with prefix or are not ids are not candidates (a server that
 * ignored the filter names no agent this way). 1 when the attestd does not know the query
 * (nothing looked up), 0 done, -errno (printed).
 */
static int candidates(struct args *a, const char *path, const char *prefix, const char *arr,
                      const char *key, json_t *ids, bool *more)
{
        struct reply p = {0};
        json_auto_t *o = NULL;
        const json_t *list, *v;
        size_t i;
        int x;

        if ((x = remote_request(&a->r, "GET", path, NULL, &p)) < 0)
                return x;
        if (unknown_query(&p)) {
                reply_done(&p);
                return 1;
        }
        if ((x = reply_json("GET", path, &p, &o)) < 0)
                return x;
        list = json_object_get(o, arr);
        if (!json_is_array(list)) {
                fprintf(stderr, "attestctl: GET %s: no \"%s\" array\n", path, arr);
                return -EBADMSG;
        }
        *more = json_is_string(json_object_get(o, "next"));
        json_array_foreach(list, i, v)
        {
                const char *id = ctl_agents_str(v, key);
                json_t *row;

                if (!id || !remote_id_valid(id) || strncmp(id, prefix, strlen(prefix)) != 0 ||
                    json_object_get(ids, id))
                        continue;
                if (json_object_size(ids) > ID_CANDIDATES) {
                        *more = true;
                        break;
                }
                row = json_pack("{s:s?, s:s?}", "hostname", ctl_agents_str(v, "hostname"), "state",
                                ctl_agents_str(v, "state"));
                if (!row || json_object_set_new(ids, id, row) < 0) {
                        json_decref(row);
                        return -ENOMEM;
                }
        }
        return 0;
}

/* The candidates of an ambiguous prefix, on stderr, escaped. */
static void print_candidates(const char *sub, const char *given, const json_t *ids, bool more)
{
        const char *id;
        const json_t *v;
        size_t shown = 0;

        fprintf(stderr, "attestctl agents %s: the id prefix '%s' is ambiguous; it starts:\n", sub,
                given);
        json_object_foreach((json_t *)ids, id, v)
        {
                if (shown++ == ID_CANDIDATES)
                        break;
                fputs("  ", stderr);
                tty_fputs(id, 0, stderr);
                fputs("  ", stderr);
                tty_fputs(ctl_agents_str(v, "hostname") ? ctl_agents_str(v, "hostname") : "-", 80,
                          stderr);
                fputs("  ", stderr);
                tty_fputs(ctl_agents_str(v, "state") ? ctl_agents_str(v, "state") : "refused EK",
                          80, stderr);
                fputc('\n', stderr);
        }
        if (more || json_object_size(ids) > ID_CANDIDATES)
                fputs("  ... and more\n", stderr);
        fputs("give more of the id\n", stderr);
}

int ctl_agent_resolve(struct args *a, const char *sub, const char *given, bool refused_too,
                      char out[ID_MAX + 1])
{
        json_auto_t *ids = json_object();
        char path[160];
        const char *only;
        bool more = false;
        int x;

        if (!ids)
                return -ENOMEM;
        /* remote_id_valid(given) holds: at most ID_MAX of [A-Za-z0-9_.-], nothing to escape */
        snprintf(out, ID_MAX + 1, "%s", given);
        if (strlen(given) >= ID_FULL_LEN)
                return 0;
        if (strlen(given) < ID_PREFIX_MIN) {
                fprintf(stderr,
                        "attestctl agents %s: '%s' is too short for an id prefix: give at least "
                        "%d characters (ids are %d hex digits)\n",
                        sub, given, ID_PREFIX_MIN, ID_FULL_LEN);
                return -EINVAL;
        }
        snprintf(path, sizeof(path), "/v1/agents?prefix=%s&limit=%d", given, ID_CANDIDATES + 1);
        if ((x = candidates(a, path, given, "agents", "id", ids, &more)) != 0)
                return x > 0 ? 0 : x; /* an attestd without ?prefix=: the id as given */
        if (json_object_size(ids) == 0 && refused_too) {
                snprintf(path, sizeof(path), "/v1/refused-eks?prefix=%s&limit=%d", given,
                         ID_CANDIDATES + 1);
                if ((x = candidates(a, path, given, "refused_eks", "agent", ids, &more)) != 0)
                        return x > 0 ? 0 : x;
        }
        /* an id that is whole is itself, whatever else it starts */
        if (json_object_get(ids, given))
                return 0;
        /* none: the id as given, and attestd's own answer (404 agent_not_found) says it */
        if (json_object_size(ids) == 0)
                return 0;
        if (json_object_size(ids) > 1 || more) {
                print_candidates(sub, given, ids, more);
                return -CTL_E_AMBIGUOUS;
        }
        only = json_object_iter_key(json_object_iter(ids));
        snprintf(out, ID_MAX + 1, "%s", only);
        return 0;
}

/* ---- refused ---- */

#define REFUSED_PAGES_MAX 1000 /* pages of GET /v1/refused-eks followed at most */
#define REFUSED_CURSOR_MAX 512 /* bytes of its "next" */

int ctl_agents_refused(struct args *a)
{
        static const char *const head[] = {"AGENT", "EK ID", "REFUSED SINCE", "AGENT ROW"};
        json_auto_t *all = json_array();
        _cleanup_free_ char *cursor = NULL;
        struct table t;
        int x = 0;

        if (!all)
                return -ENOMEM;
        for (unsigned page = 0;; page++) {
                json_auto_t *o = NULL;
                char path[REFUSED_CURSOR_MAX + 64];
                const json_t *arr, *next, *v;
                size_t i;

                if (page == REFUSED_PAGES_MAX) {
                        fprintf(stderr, "attestctl: GET /v1/refused-eks: over %d pages\n",
                                REFUSED_PAGES_MAX);
                        return -E2BIG;
                }
                snprintf(path, sizeof(path), "/v1/refused-eks%s%s", cursor ? "?cursor=" : "",
                         cursor ? cursor : "");
                if ((x = remote_json(&a->r, "GET", path, NULL, &o)) < 0)
                        return x;
                arr = json_object_get(o, "refused_eks");
                if (!json_is_array(arr)) {
                        fprintf(stderr, "attestctl: GET /v1/refused-eks: no \"refused_eks\" "
                                        "array\n");
                        return -EBADMSG;
                }
                json_array_foreach(arr, i, v)
                {
                        if (!json_is_object(v) || json_array_append(all, (json_t *)v) < 0)
                                return json_is_object(v) ? -ENOMEM : -EBADMSG;
                }
                next = json_object_get(o, "next");
                if (!json_is_string(next))
                        break;
                /* a cursor is hex and a dot: anything else (or the same one again) stops */
                if (json_string_length(next) > REFUSED_CURSOR_MAX ||
                    strspn(json_string_value(next), "0123456789abcdef.") !=
                            json_string_length(next) ||
                    (cursor && strcmp(cursor, json_string_value(next)) == 0)) {
                        fprintf(stderr, "attestctl: GET /v1/refused-eks: a \"next\" cursor "
                                        "this API does not send: stopped\n");
                        return -EBADMSG;
                }
                free(cursor);
                if (!(cursor = strdup(json_string_value(next))))
                        return -ENOMEM;
        }
        if (a->r.json) {
                json_auto_t *o = json_pack("{s:O}", "refused_eks", all);

                return o ? print_json(o) : -ENOMEM;
        }
        table_init(&t, ARRAY_SIZE(head), head);
        table_fit(&t, &a->r);
        for (size_t i = 0; i < json_array_size(all); i++) {
                const json_t *v = json_array_get(all, i);
                const char *ek = ctl_agents_str(v, "ek_id");
                _cleanup_free_ char *short_ek = ek && !a->r.full ? digests_shortened(ek) : NULL;
                const char *cells[4] = {
                        ctl_agents_str(v, "agent"),
                        short_ek ? short_ek : ek,
                        ctl_agents_str(v, "time"),
                        json_is_true(json_object_get(v, "agent_deleted")) ? "deleted"
                                                                          : "decommissioned",
                };

                if ((x = table_row(&t, cells, NULL)) == -ENOMEM)
                        break;
        }
        table_print(&t, a->r.color);
        table_done(&t);
        if (x == -ENOMEM)
                return x;
        if (json_array_size(all))
                printf("(attestctl agents readmit AGENT lets its EK enrol again)\n");
        return fflush(stdout) == 0 ? 0 : -EIO;
}
