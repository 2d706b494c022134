/* The records of a tuning database, read whole, for the tests of tuning. */
#ifndef OG_RECORDS_H
#define OG_RECORDS_H

#include <criterion/criterion.h>
#include <stdlib.h>

#include "og_db.h"

typedef struct records {
    og_record *r;
    size_t n;
} records;

static inline int collect_record(void *user, const og_record *rec, const char *device)
{
    (void)device;
    records *rs = user;
    og_record *grown = realloc(rs->r, (rs->n + 1) * sizeof *grown);
    cr_assert_not_null(grown);
    rs->r = grown;
    rs->r[rs->n++] = *rec;
    return 0;
}

/* Every record of the database at path (rs.r malloc'ed), or the test fails. */
static inline records read_records(const char *path)
{
    records rs = {NULL, 0};
    og_db *db;
    char err[1024] = "";
    cr_assert_eq(og_db_open(path, 0, &db, err, sizeof err), OG_OK, "%s", err);
    og_status st = og_db_each(db, collect_record, &rs, err, sizeof err);
    og_db_close(db);
    cr_assert_eq(st, OG_OK, "og_db_each: %s", err);
    return rs;
}

#endif /* OG_RECORDS_H */
