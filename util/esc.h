/* SPDX-License-Identifier: MIT */
/*
 * The one escaping of untrusted bytes for text (IMA paths, kernel strings, agent-supplied names):
 * every output that shows such bytes (verdict JSON, webhooks, EAR, logs, attestctl) shows them
 * this way, so one path reads the same everywhere and every result is valid, printable UTF-8.
 *
 *   - a valid UTF-8 sequence of a printable character is copied as is ("é", "日");
 *   - '\' becomes "\\";
 *   - every other byte becomes "\xHH" (two lower-case hex digits): C0 controls, DEL, C1 controls
 *     (U+0080..U+009F), the invisible and bidirectional format characters (U+061C, U+180E,
 *     U+200B..U+200F, U+2028..U+202E, U+2060..U+206F, U+FEFF, U+FFF9..U+FFFB, the tags
 *     U+E0000..U+E007F: zero-width characters, separators, bidi overrides), and every byte that is
 *     not part of a well-formed UTF-8 sequence (stray continuation bytes, overlong forms,
 *     surrogates, code points past U+10FFFF, a sequence cut short). A character made of several
 *     bytes that is escaped has each of its bytes escaped.
 *
 * The escaping is reversible (read "\\" as '\' and "\xHH" as the byte HH) and a cut never falls
 * inside a character or an escape.
 */
#ifndef ATTEST_ESC_H
#define ATTEST_ESC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The longest output of one input byte ("\xHH"). */
#define ESC_BYTE_MAX 4

/*
 * Escape n bytes of src into out (max bytes with the NUL; max >= 1): as many whole characters
 * and escapes as fit. The length written; *ret_used (may be NULL) the input bytes taken, n
 * when everything fit.
 */
size_t esc_bytes(char *out, size_t max, const void *src, size_t n, size_t *ret_used);

/* As esc_bytes, but when not everything fits the output ends in "..." (inside max). */
size_t esc_text(char *out, size_t max, const void *src, size_t n);

/*
 * As esc_text, with '\' kept as it is: for a line made of our own words and pieces that went
 * through esc_text already (a log line), whose backslashes are escapes.
 */
size_t esc_line(char *out, size_t max, const void *src, size_t n);

/*
 * The well-formed UTF-8 sequence at src (n bytes left): its length and *ret_cp, or 0 when the
 * first byte does not start one (overlong forms, surrogates, past U+10FFFF, cut short).
 */
size_t esc_utf8(const void *src, size_t n, uint32_t *ret_cp);

/* Whether a code point is shown escaped: C0, DEL, C1, the invisible and bidi format characters. */
bool esc_hidden(uint32_t cp);

/* Whether escaping n bytes of src would change nothing (valid, printable UTF-8 without '\'). */
bool esc_is_plain(const void *src, size_t n);

/* Whether s (n bytes) is valid UTF-8 whose characters are all printable ('\' allowed). */
bool esc_is_text(const void *s, size_t n);

#endif
