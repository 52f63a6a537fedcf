/* SPDX-License-Identifier: MIT */
/*
 * The one header that may use GNU extensions (cleanup attribute, statement expressions,
 * __typeof__), wrapped in macros so the rest of the tree stays plain C11.
 */
#ifndef ATTEST_MACRO_H
#define ATTEST_MACRO_H

#include <stdlib.h>

#define _cleanup_(f) __attribute__((cleanup(f)))
#define _wur_ __attribute__((warn_unused_result))
#define _printf_(a, b) __attribute__((format(printf, a, b)))
#define _unused_ __attribute__((unused))
#define _fallthrough_ __attribute__((fallthrough))

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* Hand ownership out of a _cleanup_ variable: returns the pointer and leaves NULL behind. */
#define TAKE_PTR(p)                                                                                \
        ({                                                                                         \
                __typeof__(p) _take_ptr_ = (p);                                                    \
                (p) = NULL;                                                                        \
                _take_ptr_;                                                                        \
        })

/* Define name##p(type *) calling func(*p) when *p is not NULL, for use with _cleanup_. */
#define DEFINE_CLEANUP_FUNC(type, func)                                                            \
        static inline void func##p(type *p)                                                        \
        {                                                                                          \
                if (*p)                                                                            \
                        func(*p);                                                                  \
        }

static inline void freep(void *p)
{
        free(*(void **)p);
}
#define _cleanup_free_ _cleanup_(freep)

#endif
