/* Databases merged: the best record per key, with its provenance,
 * idempotent; a bad record refused without a change; and ogtune's export,
 * import and merge commands end to end. */
#include "og_travel_case.h"

TestSuite(travel, .init = make_tmpdir, .fini = remove_tmpdir);

/* ---- merge ---- */

/* The record of m in a listing, and how many it holds. */
static const og_record *find_m(const listing *l, int64_t m, int *count)
{
    const og_record *found = NULL;
    *count = 0;
    for (size_t i = 0; i < l->n; i++)
        if (!l->e[i].is_device && l->e[i].rec.m == m) {
            found = &l->e[i].rec;
            (*count)++;
        }
    return found;
}

static void merge(const char *dst, const char *const *srcs, size_t n, og_merge_count *counts)
{
    char err[1024] = "";
    cr_assert_eq(og_merge(dst, srcs, n, counts, err, sizeof err), OG_OK, "og_merge: %s", err);
}

Test(travel, merge_keeps_the_best_record_with_its_source)
{
    char dst[512], src1[512], src2[512], tie[512], out1[512], out2[512];
    tmp_path(dst, sizeof dst, "dst.db");
    tmp_path(src1, sizeof src1, "src1.db");
    tmp_path(src2, sizeof src2, "src2.db");
    tmp_path(tie, sizeof tie, "tie.db");
    tmp_path(out1, sizeof out1, "out1.sql");
    tmp_path(out2, sizeof out2, "out2.sql");
    og_device_info dev = make_device(0x1002, 0x73bf, 5, "GPU");
    /* Keys by M: 1 faster in src1; 2 rejected in dst, accepted in src1; 3
     * rejected in src1, accepted in src2; 4 already merged from elsewhere;
     * 5 rejected everywhere; 6 only in dst. */
    og_db *db = open_db(dst, 1);
    og_record r = tile_record(1, 10.0, 1);
    insert(db, &dev, &r);
    r = tile_record(2, 0.0, 0);
    insert(db, &dev, &r);
    r = tile_record(6, 1.0, 1);
    insert(db, &dev, &r);
    og_db_close(db);

    db = open_db(src1, 1);
    r = tile_record(1, 20.0, 1);
    r.spread = 0.0625;
    snprintf(r.memory, sizeof r.memory, OG_DB_MEMORY_DEVICE_LOCAL);
    insert(db, &dev, &r);
    r = tile_record(2, 5.0, 1);
    insert(db, &dev, &r);
    r = tile_record(3, 0.0, 0);
    insert(db, &dev, &r);
    r = tile_record(4, 7.0, 1);
    snprintf(r.source, sizeof r.source, "origin.db");
    insert(db, &dev, &r);
    og_db_close(db);

    db = open_db(src2, 1);
    r = tile_record(1, 15.0, 1);
    insert(db, &dev, &r);
    r = tile_record(3, 3.0, 1);
    insert(db, &dev, &r);
    r = tile_record(5, 0.0, 0);
    insert(db, &dev, &r);
    og_db_close(db);

    const char *srcs[] = {src1, src2};
    og_merge_count counts[2];
    merge(dst, srcs, 2, counts);
    cr_expect_eq(counts[0].records, 4);
    cr_expect_eq(counts[0].stored, 4);
    cr_expect_eq(counts[1].records, 3);
    cr_expect_eq(counts[1].stored, 2, "src2 stored %zu (its M = 1 is slower)", counts[1].stored);

    listing l = walk(dst);
    int n;
    const og_record *k1 = find_m(&l, 1, &n);
    cr_assert_eq(n, 1, "M = 1: %d records", n);
    cr_expect_eq(k1->gflops, 20.0);
    cr_expect_str_eq(k1->source, src1);
    cr_expect_eq(k1->spread, 0.0625, "the winner's spread");
    cr_expect_str_eq(k1->memory, OG_DB_MEMORY_DEVICE_LOCAL, "the winner's memory");
    const og_record *k2 = find_m(&l, 2, &n);
    cr_assert_eq(n, 1);
    cr_expect_eq(k2->accepted, 1, "an accepted record replaces a rejected one");
    cr_expect_str_eq(k2->source, src1);
    const og_record *k3 = find_m(&l, 3, &n);
    cr_assert_eq(n, 1);
    cr_expect_eq(k3->accepted, 1);
    cr_expect_eq(k3->gflops, 3.0);
    cr_expect_str_eq(k3->source, src2);
    const og_record *k4 = find_m(&l, 4, &n);
    cr_assert_eq(n, 1);
    cr_expect_str_eq(k4->source, "origin.db", "a record keeps where it came from first");
    const og_record *k5 = find_m(&l, 5, &n);
    cr_assert_eq(n, 1, "a rejected record is kept when its key has no accepted one");
    cr_expect_eq(k5->accepted, 0);
    cr_expect_str_eq(k5->source, src2);
    const og_record *k6 = find_m(&l, 6, &n);
    cr_assert_eq(n, 1);
    cr_expect_str_eq(k6->source, "", "dst's own record is untouched");
    free(l.e);

    /* Idempotent: the same sources again, and a source that only ties, change nothing. */
    size_t len1, len2;
    char *before = export_to(dst, out1, &len1);
    merge(dst, srcs, 2, counts);
    cr_expect_eq(counts[0].stored + counts[1].stored, 0);
    db = open_db(tie, 1);
    r = tile_record(1, 20.0, 1);
    insert(db, &dev, &r);
    og_db_close(db);
    const char *ties[] = {tie};
    merge(dst, ties, 1, counts);
    cr_expect_eq(counts[0].stored, 0, "a tie replaced the stored record");
    char *after = export_to(dst, out2, &len2);
    cr_expect(len1 == len2 && memcmp(before, after, len1) == 0,
              "merging again changed the database:\n%s\n----\n%s", before, after);
    free(before);
    free(after);
}

Test(travel, merge_refuses_a_bad_record_without_change)
{
    char dst[512], good[512], bad[512], out1[512], out2[512];
    tmp_path(dst, sizeof dst, "dst.db");
    tmp_path(good, sizeof good, "good.db");
    tmp_path(bad, sizeof bad, "bad.db");
    tmp_path(out1, sizeof out1, "out1.sql");
    tmp_path(out2, sizeof out2, "out2.sql");
    og_device_info dev = make_device(0x1002, 0x73bf, 5, "GPU");
    og_db *db = open_db(dst, 1);
    og_record r = tile_record(1, 10.0, 1);
    insert(db, &dev, &r);
    og_db_close(db);
    db = open_db(good, 1);
    r = tile_record(2, 10.0, 1);
    insert(db, &dev, &r);
    og_db_close(db);
    db = open_db(bad, 1);
    r = tile_record(3, 10.0, 1);
    snprintf(r.params, sizeof r.params, "bm=64'); DROP TABLE records; --");
    insert(db, &dev, &r);
    og_db_close(db);

    size_t len1, len2;
    char *before = export_to(dst, out1, &len1);
    const char *srcs[] = {good, bad};
    og_merge_count counts[2];
    char err[1024] = "";
    cr_expect_eq(og_merge(dst, srcs, 2, counts, err, sizeof err), OG_ERROR_DATABASE);
    cr_expect_not_null(strstr(err, bad), "message \"%s\" does not name the source", err);
    char *after = export_to(dst, out2, &len2);
    cr_expect(len1 == len2 && memcmp(before, after, len1) == 0,
              "a refused merge changed the database (the good source's record too)");
    free(before);
    free(after);
}

/* ---- the ogtune commands ---- */

Test(travel, ogtune_export_import_merge, .timeout = 120)
{
    char a[512], b[512], c[512], dump[512], hostile[512], args[2048];
    tmp_path(a, sizeof a, "a.db");
    tmp_path(b, sizeof b, "b.db");
    tmp_path(c, sizeof c, "c.db");
    tmp_path(dump, sizeof dump, "a.sql");
    tmp_path(hostile, sizeof hostile, "hostile.sql");
    static const int order[N_RECORDS + 1] = {3, 1, 4, 7, 5, 0, 2, 6};
    fill(a, order);
    char *out;

    snprintf(args, sizeof args, "export --db '%s' --out '%s'", a, dump);
    cr_assert_eq(ogtune(args, &out), 0, "%s", out);
    cr_expect_not_null(strstr(out, "exported 7 records of 4 devices"), "%s", out);
    free(out);

    snprintf(args, sizeof args, "import '%s' --db '%s' --json", dump, b);
    cr_assert_eq(ogtune(args, &out), 0, "%s", out);
    cr_expect_not_null(strstr(out, "\"devices\":4,\"records\":7}"), "%s", out);
    free(out);

    /* The export of the imported database, on stdout, is the dump itself. */
    size_t len;
    char *text = read_file(dump, &len);
    snprintf(args, sizeof args, "export --db '%s'", b);
    cr_assert_eq(ogtune(args, &out), 0);
    cr_expect_str_eq(out, text);
    free(out);
    free(text);

    snprintf(args, sizeof args, "merge '%s' --db '%s'", a, c);
    cr_assert_eq(ogtune(args, &out), 0, "%s", out);
    /* Every record was stored when it came: the key of samples 0 to 2 took the rejected
     * one, then sample 1, then sample 0, the best. */
    cr_expect_not_null(strstr(out, ": 7 records, 7 stored"), "%s", out);
    free(out);
    snprintf(args, sizeof args, "merge '%s' '%s' --db '%s' --json", a, b, c);
    cr_assert_eq(ogtune(args, &out), 0, "%s", out);
    cr_expect_not_null(strstr(out, "\"records\":7,\"stored\":0},{\"source\":"), "%s", out);
    cr_expect_not_null(strstr(out, "\"records\":7,\"stored\":0}]}"), "%s", out);
    free(out);

    /* Provenance shows: the records merged from a name it. */
    snprintf(args, sizeof args, "show --db '%s'", c);
    cr_assert_eq(ogtune(args, &out), 0);
    char from[600];
    snprintf(from, sizeof from, "(from %s)", a);
    cr_expect_not_null(strstr(out, from), "%s", out);
    cr_expect_not_null(strstr(out, "stale"), "%s", out);
    /* The timed calls: how many, their spread and the memory (sample 0 won its key). */
    cr_expect_not_null(strstr(out, " us (x5, spread 10.0%, device-local), "), "%s", out);
    free(out);
    snprintf(args, sizeof args, "show --db '%s' --json", c);
    cr_assert_eq(ogtune(args, &out), 0);
    cr_expect_not_null(strstr(out, "\"samples\":5,\"spread\":0.1,\"memory\":\"device-local\","),
                       "%s", out);
    free(out);

    /* A hostile dump: refused with the line, exit status 1. */
    write_text(hostile, "BEGIN;\nDROP TABLE records;\nCOMMIT;\n");
    snprintf(args, sizeof args, "import '%s' --db '%s' 2>&1", hostile, b);
    cr_expect_eq(ogtune(args, &out), 1);
    cr_expect_not_null(strstr(out, "ogtune import: "), "%s", out);
    cr_expect_not_null(strstr(out, "line 2: 'DROP'"), "%s", out);
    free(out);

    /* Wrong arguments. */
    static const char *const wrong[] = {"import 2>/dev/null", "merge --db x.db 2>/dev/null",
                                        "import a.sql b.sql 2>/dev/null",
                                        "export --json 2>/dev/null", "show extra 2>/dev/null"};
    for (size_t i = 0; i < sizeof wrong / sizeof wrong[0]; i++) {
        cr_expect_eq(ogtune(wrong[i], &out), 2, "ogtune %s", wrong[i]);
        free(out);
    }
}
