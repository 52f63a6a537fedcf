/* SPDX-License-Identifier: MIT */
/*
 * attestctl's side of the attestd REST API: the connection options every remote command takes
 * (--url, --ca, --token-file, --json, --timeout; the token never on the command line), an HTTPS
 * client (libcurl: TLS 1.2 or later, AEAD suites only, the CA of --ca pinned, no redirects,
 * responses capped at CTL_RESPONSE_MAX and refused when they hold a NUL byte), the server's
 * {"error","detail"} answers printed with their text escaped (attestctl/tty.h), and aligned
 * tables with optional colour, every cell escaped.
 *
 * Exit status of every remote command (enum ctl_exit, docs/attestctl.1 EXIT STATUS): 0 done, 1 a
 * verdict or check failed (documented per command), 2 usage, a local file, an ambiguous id
 * prefix or a request attestd refused as malformed, 3 not found, 4 not authorised, 5 conflict, 6
 * a server error or an answer attestctl refuses, 7 attestd not reached (connection, TLS,
 * timeout). Errors are printed ("attestctl: GET /v1/agents/x: 404 agent_not_found: no agent x").
 */
#ifndef ATTESTCTL_REMOTE_H
#define ATTESTCTL_REMOTE_H

#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "util/macro.h"

#define CTL_RESPONSE_MAX (8u * 1024 * 1024) /* bytes of one response body */

/* The exit status of a remote command (docs/attestctl.1, EXIT STATUS). */
enum ctl_exit {
        CTL_EXIT_OK = 0,
        CTL_EXIT_FAILED = 1,    /* a verdict or check failed */
        CTL_EXIT_USAGE = 2,     /* usage, a local file, an ambiguous id prefix, a 400 answer */
        CTL_EXIT_NOT_FOUND = 3, /* 404: no such agent, policy or refused EK */
        CTL_EXIT_DENIED = 4,    /* 401, 403: the token is unknown or its role may not */
        CTL_EXIT_CONFLICT = 5, /* 409: the state forbids it (a policy in use, not decommissioned) */
        CTL_EXIT_SERVER = 6,   /* 5xx, an unexpected status, an answer refused (malformed, big) */
        CTL_EXIT_CONNECT = 7,  /* attestd not reached: connection, TLS, timeout */
};

/* What the remote functions return for those (negative), told apart by remote_exit(). */
#define CTL_E_NOT_FOUND ESRCH
#define CTL_E_DENIED EKEYREJECTED
#define CTL_E_CONFLICT EBUSY
#define CTL_E_SERVER EREMOTEIO
#define CTL_E_CONNECT EHOSTUNREACH
#define CTL_E_AMBIGUOUS ENOTUNIQ

/* The exit status for a remote command's result x (>= 0: x itself; -errno: enum ctl_exit). */
int remote_exit(int x);
#define CTL_TOKEN_MAX 512 /* bytes of a bearer token */

/* getopt_long values of the connection options (beyond any short option) */
enum {
        OPT_URL = 0x100,
        OPT_CA,
        OPT_TOKEN_FILE,
        OPT_TOKEN, /* recognised only to refuse it */
        OPT_JSON,
        OPT_TIMEOUT,
        OPT_FULL,
        OPT_FIRST_OWN, /* the commands' own options start here */
};

#define REMOTE_LONGOPTS                                                                            \
        {"url", required_argument, NULL, OPT_URL}, {"ca", required_argument, NULL, OPT_CA},        \
                {"token-file", required_argument, NULL, OPT_TOKEN_FILE},                           \
                {"token", optional_argument, NULL, OPT_TOKEN},                                     \
                {"json", no_argument, NULL, OPT_JSON},                                             \
                {"timeout", required_argument, NULL, OPT_TIMEOUT},                                 \
                {"full", no_argument, NULL, OPT_FULL},                                             \
        {                                                                                          \
                "help", no_argument, NULL, 'h'                                                     \
        }

/* The connection options' help lines, for the commands' usage texts. */
extern const char remote_options_help[];

struct remote {
        const char *url, *ca, *token_file;
        bool json;    /* --json */
        bool color;   /* stdout a terminal, NO_COLOR unset or empty, TERM not dumb */
        bool full;    /* --full: tables not fitted, digests not shortened */
        size_t width; /* columns of the terminal (stdout a terminal, or $COLUMNS); 0: any */
        long timeout; /* seconds */
        void *curl;
        char *auth; /* "Authorization: Bearer ..." (wiped when freed) */
};

/* Colour on stdout: a terminal, NO_COLOR unset or empty, TERM not "dumb". */
bool remote_color(void);
/* The columns tables are fitted to: $COLUMNS when it is a number (20-10000), else the terminal's
 * on stdout, else 0 (not a terminal: any width). */
size_t remote_width(void);

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
 * NUL) is printed and returned as -errno: -CTL_E_CONNECT not reached (connection, TLS, timeout),
 * -CTL_E_SERVER an answer cut off or not HTTP, -EBADMSG an answer refused (over the cap, a NUL).
 */
int remote_request(struct remote *r, const char *method, const char *path, const char *body,
                   struct reply *ret);

/*
 * remote_request() for a JSON answer: a 2xx answer parsed into *ret (a 204 gives NULL); anything
 * else printed (the server's error and detail when the body holds them) and -errno by its status
 * (reply_errno()); an answer that is not a JSON object -EBADMSG.
 */
int remote_json(struct remote *r, const char *method, const char *path, const char *body,
                json_t **ret);

/* The -errno of an HTTP status that is not 2xx: 404 -CTL_E_NOT_FOUND, 401/403 -CTL_E_DENIED, 409
 * -CTL_E_CONFLICT, other 4xx -EINVAL, 5xx -CTL_E_SERVER, else -EPROTO. */
int reply_errno(long status);

/* The second half of remote_json(): a reply judged and parsed (and freed) as it does. */
int reply_json(const char *method, const char *path, struct reply *p, json_t **ret);

/* Print the server's error answer of a request (for callers that look at the status first). */
void remote_print_error(const char *method, const char *path, const struct reply *p);

/* Print j as indented JSON on stdout; 0 or -EIO. */
int print_json(const json_t *j);

/* An agent id or policy name as attestd takes it ([A-Za-z0-9_.-]{1,64}, not starting with . or -)
 */
bool remote_id_valid(const char *s);

/* ---- tables (attestctl/table.c) ---- */

/*
 * Every cell goes through tty_text() (attestctl/tty.h): control characters, bidi overrides and
 * invalid UTF-8 from the server are printed escaped, and columns are aligned by the columns the
 * escaped text takes. The cells are kept whole (escaped) and cut when printed, never inside an
 * escape (tty_cut()): at CELL_MAX columns, and narrower when the table is wider than the
 * terminal (table.width); not at all with --full (table.full).
 */
enum color { C_NONE, C_RED, C_GREEN, C_YELLOW, C_BOLD };

#define TABLE_COLS 8
#define TABLE_ROWS_MAX 100000
#define TABLE_BYTES_MAX (32u << 20)       /* bytes of escaped cell text in one table */
#define TABLE_RANKS 8                     /* rows are printed by rank, 0 first */
#define CELL_MAX 72                       /* columns of a cell; longer text is cut with "..." */
#define CELL_BYTES_MAX (4 * CELL_MAX + 1) /* bytes of a cut cell with its NUL */
#define CELL_FIT_MIN 10                   /* columns a column keeps when fitted to the terminal */
#define ERR_TEXT_COLS 2048                /* columns of server text quoted in an error message */

struct table {
        unsigned ncols;
        size_t nrows, cap, bytes;
        size_t dropped;       /* rows refused over TABLE_ROWS_MAX or TABLE_BYTES_MAX */
        char **rows;          /* per row its ncols escaped cells, each NUL terminated, owned */
        unsigned char *ranks; /* per row */
        enum color *colors;   /* per cell */
        const char *head[TABLE_COLS];
        size_t width; /* fit the rows into this many columns (0: any) */
        bool full;    /* cells whole, not cut at CELL_MAX nor to the width */
};

void table_init(struct table *t, unsigned ncols, const char *const *head);
/* The width and --full of r for t. */
void table_fit(struct table *t, const struct remote *r);
/*
 * Append a row of ncols cells (escaped into the table; NULL printed as "-"); -ENOMEM, or
 * -E2BIG over TABLE_ROWS_MAX rows or TABLE_BYTES_MAX bytes (counted in dropped, and said under
 * the table). table_row_ranked(): printed after the rows of lower rank (rank < TABLE_RANKS).
 */
int table_row(struct table *t, const char *const *cells, const enum color *colors);
int table_row_ranked(struct table *t, unsigned rank, const char *const *cells,
                     const enum color *colors);
/*
 * Aligned columns, two spaces apart, the last one not padded; the header in bold. Unless full,
 * a column is at most CELL_MAX wide, and when the rows are wider than width the last column
 * (free text), then the widest ones give up columns (down to CELL_FIT_MIN, then 4) until they
 * fit; a header is cut as its cells are.
 */
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
 * s with every run of DIGEST_RUN_MIN or more hex digits (a digest) shortened to its first
 * DIGEST_SHORT digits and "..." (the form of the claims table without --full), in a new string;
 * NULL: out of memory.
 */
#define DIGEST_RUN_MIN 40
#define DIGEST_SHORT 12
char *digests_shortened(const char *s);

/*
 * A verdict's top-level reason, note and unchecked sections, then its claims as a table (RESULT
 * CLAIM EXPECTED OBSERVED ANCHORED ENTRY REASON), failing claims first, each group in the
 * verdict's order; digests shortened and the table fitted to r's width unless r->full.
 */
void print_claims(const json_t *verdict, const struct remote *r);

#endif
