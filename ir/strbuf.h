/* Growable string builder used by every printer. Heap-owned: weft_strbuf_free, or take the
 * string with weft_strbuf_take (caller frees). A failed growth is sticky (`failed`). */
#ifndef WEFT_IR_STRBUF_H
#define WEFT_IR_STRBUF_H
#include <stdbool.h>
#include <stddef.h>

typedef struct weft_strbuf {
    char *data; /* NUL-terminated when len > 0 */
    size_t len;
    size_t cap;
    bool failed;
} weft_strbuf;

void weft_strbuf_printf(weft_strbuf *sb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void weft_strbuf_puts(weft_strbuf *sb, const char *s);
/* Returns the heap string (never NULL unless out of memory) and resets sb. */
char *weft_strbuf_take(weft_strbuf *sb);
void weft_strbuf_free(weft_strbuf *sb);

#endif
