/* weft db check: SQLite's integrity check of a schedule database (after a crash, or to
 * diagnose a file). A constant statement, prepared per call: it is run by hand, rarely. */
#include <stdlib.h>
#include <string.h>

#include "ir/error.h"
#include "ir/strbuf.h"
#include "tuner/db_private.h"

weft_status weft_db_check(weft_db *db, char **report)
{
    *report = NULL;
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(db->conn, "PRAGMA integrity_check", -1, &st, NULL);
    if (rc != SQLITE_OK) return weft_tuner_db_error(db, rc, "integrity check");
    weft_strbuf sb = {0};
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        const unsigned char *line = sqlite3_column_text(st, 0);
        weft_strbuf_printf(&sb, "%s\n", line ? (const char *)line : "");
    }
    weft_status out = rc == SQLITE_DONE ? WEFT_OK : weft_tuner_db_error(db, rc, "integrity check");
    sqlite3_finalize(st);
    *report = weft_strbuf_take(&sb);
    return out;
}
