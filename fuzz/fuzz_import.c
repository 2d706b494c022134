/*
 * Fuzz target: the dump importer (og_import, ogtune import) on any bytes.
 * Properties: a refused dump is OG_ERROR_DATABASE with a message naming its
 * line, and leaves no database behind; an accepted one round-trips: its
 * database exported, imported into a fresh database and exported again,
 * gives the same text, with as many records imported as exported.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "og_fuzz.h"
#include "og_travel.h"

/* The dump of the database at path, as a fresh string (size in *len). */
static char *export_db(const char *path, og_travel_counts *counts, size_t *len)
{
    og_db *db = NULL;
    char err[1024];
    og_status st = og_db_open(path, 0, &db, err, sizeof err);
    og_fuzz_assert(st == OG_OK, "reopening an imported database: %s", err);
    char *text = NULL;
    FILE *out = open_memstream(&text, len);
    og_fuzz_assert(out != NULL, "open_memstream");
    st = og_export(db, out, counts, err, sizeof err);
    og_fuzz_assert(st == OG_OK, "exporting an imported database: %s", err);
    fclose(out);
    og_db_close(db);
    return text;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char dump[512], db[512], dump2[512], db2[512];
    og_fuzz_path(dump, sizeof dump, "dump.sql");
    og_fuzz_path(db, sizeof db, "import.db");
    og_fuzz_path(dump2, sizeof dump2, "dump2.sql");
    og_fuzz_path(db2, sizeof db2, "import2.db");
    og_fuzz_write_file(dump, data, size);
    og_fuzz_remove_db(db);

    og_travel_counts counts = {0};
    char err[1024] = "";
    og_status st = og_import(dump, db, &counts, err, sizeof err);
    if (st != OG_OK) {
        og_fuzz_assert(st == OG_ERROR_DATABASE, "status %d: %s", (int)st, err);
        og_fuzz_assert(strncmp(err, dump, strlen(dump)) == 0 && strstr(err, ": line ") != NULL,
                       "the message names no line: %s", err);
        og_fuzz_assert(access(db, F_OK) != 0, "a refused dump left a database: %s", err);
        return 0;
    }

    og_travel_counts out1, out2, in2 = {0};
    size_t len1, len2;
    char *text1 = export_db(db, &out1, &len1);
    og_fuzz_assert(out1.records == counts.records, "%zu records imported, %zu exported",
                   counts.records, out1.records);
    og_fuzz_write_file(dump2, (const uint8_t *)text1, len1);
    og_fuzz_remove_db(db2);
    st = og_import(dump2, db2, &in2, err, sizeof err);
    og_fuzz_assert(st == OG_OK, "an export does not import: %s", err);
    char *text2 = export_db(db2, &out2, &len2);
    og_fuzz_assert(in2.records == out1.records && in2.devices == out1.devices,
                   "an export of %zu devices and %zu records imported as %zu and %zu", out1.devices,
                   out1.records, in2.devices, in2.records);
    og_fuzz_assert(len1 == len2 && memcmp(text1, text2, len1) == 0,
                   "export, import, export changed the dump (%zu and %zu bytes)", len1, len2);
    free(text1);
    free(text2);
    og_fuzz_remove_db(db);
    og_fuzz_remove_db(db2);
    return 0;
}
