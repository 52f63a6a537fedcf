/* SPDX-License-Identifier: MIT */
/*
 * Text that came from attestd (ids, host names, claim names and reasons, error details) made safe
 * for the operator's terminal before attestctl prints it in tables and plain output: a hostile
 * server, or a host whose measured file names end up in a verdict's reasons, must not be able to
 * set the window title (OSC), clear the screen, move the cursor, plant OSC 8 links, overwrite a
 * line with CR or reorder it with bidi overrides. --json output does not go through here (JSON's
 * own escapes apply).
 *
 * The printed form (docs/attestctl.1, TERMINAL SAFETY) is attestd's one escaping of bytes
 * (util/esc.h): a byte below 0x20 (TAB, LF and CR included), DEL, the bytes of a C1 control or of
 * an invisible or bidi format character, and every byte that is not part of well-formed UTF-8 as
 * \xHH, one per byte; everything else, printable UTF-8, as it is. The backslash is left as it is
 * here: text from attestd is escaped already (a path's \xff stays \xff, not \\xff), and the
 * result holds only printable text, so escaping it again changes nothing.
 *
 * Columns are counted as a terminal shows them (approximately: East Asian wide characters and
 * common emoji 2, combining marks 0, the rest 1) so that tables stay aligned.
 */
#ifndef ATTESTCTL_TTY_H
#define ATTESTCTL_TTY_H

#include <stddef.h>
#include <stdio.h>

#define TTY_UNIT_MAX 16 /* bytes of the longest printed form of one character: 4 x \xHH */

/*
 * s escaped into out (n >= 4 bytes, always NUL terminated): at most max_cols columns (0: no
 * limit) and n - 1 bytes; text that does not fit is cut at a character boundary and ends in
 * "...". Returns the columns of out.
 */
size_t tty_text(const char *s, size_t max_cols, char *out, size_t n);

/*
 * Text tty_text() escaped already (whole), cut where tty_text() cuts the raw text: a "\xHH"
 * escape, with the escapes of the other bytes of its character (a bidi override's three), is one
 * unit kept whole or dropped whole, never split (a cut "\x1" would misstate the byte).
 */
size_t tty_cut(const char *s, size_t max_cols, char *out, size_t n);

/* The columns s takes once escaped (whole, uncut). */
size_t tty_width(const char *s);

/* s escaped onto f, cut as tty_text() cuts when max_cols (0: whole). NULL prints "-". */
void tty_fputs(const char *s, size_t max_cols, FILE *f);

#endif
