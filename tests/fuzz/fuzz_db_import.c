/* Fuzz target: `weft db import` text -> database, and the export round trip.
 *
 * Input: the tab-separated text of `weft db export` (at most 256 KiB). It is imported into a
 * fresh in-memory database; import must succeed or fail cleanly (a failed import leaves the
 * database as it was: the import is one transaction). After a successful import the database
 * passes `weft db check`, and exporting it, importing the export into a second fresh database
 * and exporting again gives the same text. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/fuzz/fuzz_note.h"
#include "tuner/db.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

enum { MAX_BYTES = 256 * 1024 };

/* The export of db as malloc'd text, or NULL. */
static char *export_text(weft_db *db)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f) return NULL;
    weft_status st = weft_db_export(db, f);
    fclose(f);
    if (st != WEFT_OK) {
        free(buf);
        return NULL;
    }
    return buf;
}

static weft_status import_text(weft_db *db, const void *data, size_t size, int *n)
{
    FILE *f = size ? fmemopen((void *)data, size, "r") : fopen("/dev/null", "r");
    if (!f) return WEFT_ERR_IO;
    weft_status st = weft_db_import(db, f, n);
    fclose(f);
    return st;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > MAX_BYTES) return 0;
    weft_db *db = NULL, *db2 = NULL;
    char *text = NULL, *text2 = NULL, *report = NULL;
    int n = 0, n2 = 0;
    if (weft_db_open(":memory:", true, &db) != WEFT_OK) {
        fprintf(stderr, "fuzz_db_import: cannot open an in-memory database: %s\n", weft_last_error());
        abort();
    }
    if (import_text(db, data, size, &n) != WEFT_OK) {
        fuzz_note("import");
        goto done;
    }
    fuzz_reached("imported");
    if (weft_db_check(db, &report) != WEFT_OK || !report || strcmp(report, "ok\n")) {
        fprintf(stderr, "fuzz_db_import: database fails its check after import: %s\n", report ? report : weft_last_error());
        abort();
    }
    text = export_text(db);
    if (!text) {
        fprintf(stderr, "fuzz_db_import: export after import failed: %s\n", weft_last_error());
        abort();
    }
    if (weft_db_open(":memory:", true, &db2) != WEFT_OK) abort();
    if (import_text(db2, text, strlen(text), &n2) != WEFT_OK) {
        fprintf(stderr, "fuzz_db_import: an export does not import: %s\n%s", weft_last_error(), text);
        abort();
    }
    text2 = export_text(db2);
    if (!text2 || strcmp(text, text2) || n2 != n) {
        fprintf(stderr, "fuzz_db_import: export round trip differs (%d vs %d measurements):\n%s---\n%s", n, n2, text,
                text2 ? text2 : "(null)");
        abort();
    }
done:
    free(report);
    free(text);
    free(text2);
    weft_db_close(db);
    weft_db_close(db2);
    return 0;
}
