/* SPDX-License-Identifier: MIT */
/*
 * attestctl's side of the attestd REST API: the connection options every remote command takes
 * (--url, --ca, --token-file, --json, --timeout; the token never on the command line), an HTTPS
 * client (libcurl: TLS 1.2 or later, AEAD suites only, the CA of --ca pinned, no redirects,
 * responses capped at CTL_RESPONSE_MAX and refused when they hold a NUL byte), the server's
 * {"error","detail"} answers printed with their text escaped (attestctl/tty.h), and aligned
 * tables with optional colour, every cell escaped.
 *
 * Exit status of every remote command: 0 done, 1 a verdict or check failed (documented per
 * command), 2 usage, file, network, TLS, a malformed or oversized answer, or an error answer of
 * the server (printed: "attestctl: GET /v1/agents/x: 404 agent_not_found: no agent x").
 */
#ifndef ATTESTCTL_REMOTE_H
#define ATTESTCTL_REMOTE_H

#include <getopt.h>
#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "util/macro.h"

#define CTL_RESPONSE_MAX (8u * 1024 * 1024) /* bytes of one response body */
#define CTL_TOKEN_MAX 512                   /* bytes of a bearer token */

/* getopt_long values of the connection options (beyond any short option) */
enum {
        OPT_URL = 0x100,
        OPT_CA,
        OPT_TOKEN_FILE,
        OPT_TOKEN, /* recognised only to refuse it */
        OPT_JSON,
        OPT_TIMEOUT,
        OPT_FIRST_OWN, /* the commands' own options start here */
};

#define REMOTE_LONGOPTS                                                                            \
        {"url", required_argument, NULL, OPT_URL}, {"ca", required_argument, NULL, OPT_CA},        \
                {"token-file", required_argument, NULL, OPT_TOKEN_FILE},                           \
                {"token", optional_argument, NULL, OPT_TOKEN},                                     \
                {"json", no_argument, NULL, OPT_JSON},                                             \
                {"timeout", required_argument, NULL, OPT_TIMEOUT},                                 \
        {                                                                                          \
                "help", no_argument, NULL, 'h'                                                     \
        }

/* The connection options' help lines, for the commands' usage texts. */
extern const char remote_options_help[];

struct remote {
        const char *url, *ca, *token_file;
        bool json;    /* --json */
        bool color;   /* stdout a terminal, NO_COLOR unset or empty, TERM not dumb */
        long timeout; /* seconds */
        void *curl;
        char *auth; /* "Authorization: Bearer ..." (wiped when freed) */
};

/* Colour on stdout: a terminal, NO_COLOR unset or empty, TERM not "dumb". */
bool remote_color(void);

void remote_init(struct remote *r);
void remote_done(struct remote *r);

/* One getopt_long result c (argument arg): 1 taken, 0 not a connection option, -EINVAL refused. */
int remote_opt(struct remote *r, int c, const char *arg);

/*
 * Defaults from the environment (ATTESTD_URL, ATTESTD_CA, ATTESTD_TOKEN_FILE, ATTESTD_TOKEN), the
 * token read (file: FILE_SECRET, one trailing newline dropped) when need_token, and the HTTPS
 * client made. Prints what is wrong; -errno.
 */
int remote_connect(struct remote *r, bool need_token);

struct reply {
        long status;
        char *body; /* NUL terminated, len bytes */
        size_t len;
};
void reply_done(struct reply *p);

/*
 * METHOD path with an optional JSON body. 0 with any HTTP status in *ret; a transport failure
 * (connect, TLS, timeout, the server gone mid-answer, an answer over CTL_RESPONSE_MAX or with a
 * NUL) is printed and returned as -errno.
 */
int remote_request(struct remote *r, const char *method, const char *path, const char *body,
                   struct reply *ret);

/*
 * remote_request() for a JSON answer: a 2xx answer parsed into *ret (a 204 gives NULL); anything
 * else printed (the server's error and detail when the body holds them) and -EPROTO; an answer
 * that is not a JSON object -EBADMSG.
 */
int remote_json(struct remote *r, const char *method, const char *path, const char *body,
                json_t **ret);

/* The second half of remote_json(): a reply judged and parsed (and freed) as it does. */
int reply_json(const char *method, const char *path, struct reply *p, json_t **ret);

/* Print the server's error answer of a request (for callers that look at the status first). */
void remote_print_error(const char *method, const char *path, const struct reply *p);

/* Print j as indented JSON on stdout; 0 or -EIO. */
int print_json(const json_t *j);

/* An agent id or policy name as attestd takes it ([A-Za-z0-9_.-]{1,64}, not starting with . or -)
 */
bool remote_id_valid(const char *s);

/* ---- tables ---- */

/*
 * Every cell goes through tty_text() (attestctl/tty.h): control characters, bidi overrides and
 * invalid UTF-8 from the server are printed escaped, and columns are aligned by the columns the
 * escaped text takes. A cell is cut at CELL_MAX columns with "...".
 */
enum color { C_NONE, C_RED, C_GREEN, C_YELLOW, C_BOLD };

#define TABLE_COLS 8
#define TABLE_ROWS_MAX 100000
#define TABLE_BYTES_MAX (32u << 20)       /* bytes of escaped cell text in one table */
#define TABLE_RANKS 8                     /* rows are printed by rank, 0 first */
#define CELL_MAX 72                       /* columns of a cell; longer text is cut with "..." */
#define CELL_BYTES_MAX (4 * CELL_MAX + 1) /* bytes of a cut cell with its NUL */
#define ERR_TEXT_COLS 2048                /* columns of server text quoted in an error message */

struct table {
        unsigned ncols;
        size_t nrows, cap, bytes;
        size_t dropped;       /* rows refused over TABLE_ROWS_MAX or TABLE_BYTES_MAX */
        char **rows;          /* per row its ncols escaped cells, each NUL terminated, owned */
        unsigned char *ranks; /* per row */
        enum color *colors;   /* per cell */
        const char *head[TABLE_COLS];
};

void table_init(struct table *t, unsigned ncols, const char *const *head);
/*
 * Append a row of ncols cells (escaped and cut into the table; NULL printed as "-"); -ENOMEM, or
 * -E2BIG over TABLE_ROWS_MAX rows or TABLE_BYTES_MAX bytes (counted in dropped, and said under
 * the table). table_row_ranked(): printed after the rows of lower rank (rank < TABLE_RANKS).
 */
int table_row(struct table *t, const char *const *cells, const enum color *colors);
int table_row_ranked(struct table *t, unsigned rank, const char *const *cells,
                     const enum color *colors);
/* Aligned columns, two spaces apart, the last one not padded; the header in bold. */
void table_print(const struct table *t, bool color);
void table_done(struct table *t);

/* The colour of a status word: fail/failing/decommissioned red, stale/warning yellow, pass green.
 */
enum color status_color(const char *s);
/* s escaped (attestctl/tty.h) and wrapped in the colour's escapes when color; in buf (n >= 4). */
const char *colored(const char *s, enum color c, bool color, char *buf, size_t n);

/* A JSON value as a table cell: strings bare, the rest compact JSON; escaped, cut at CELL_MAX
 * (n: CELL_BYTES_MAX). */
void cell_text(const json_t *v, char *buf, size_t n);

/*
 * A verdict's top-level reason and unchecked sections, then its claims as a table (RESULT CLAIM
 * EXPECTED OBSERVED ANCHORED ENTRY REASON), failing claims first, each group in the verdict's
 * order.
 */
void print_claims(const json_t *verdict, bool color);

#endif
