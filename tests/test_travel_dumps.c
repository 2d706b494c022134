/* Databases that travel as text: export and import (a lossless, stable SQL
 * text dump, whatever the order records were written in), dumps written by
 * hand and by older versions, the shipped pre-tuned dumps, and hostile dumps
 * refused without a change to the database. */
#include "og_travel_case.h"

TestSuite(travel, .init = make_tmpdir, .fini = remove_tmpdir);

/* ---- export and import ---- */

Test(travel, export_import_round_trip_is_lossless)
{
    static const int order[N_RECORDS + 1] = {0, 1, 2, 3, 4, 5, 6, 7};
    char a[512], b[512], dump_a[512], dump_b[512];
    tmp_path(a, sizeof a, "a.db");
    tmp_path(b, sizeof b, "b.db");
    tmp_path(dump_a, sizeof dump_a, "a.sql");
    tmp_path(dump_b, sizeof dump_b, "b.sql");
    fill(a, order);

    size_t len_a, len_b;
    char *text_a = export_to(a, dump_a, &len_a);
    og_travel_counts counts = {0, 0};
    char err[1024] = "";
    cr_assert_eq(og_import(dump_a, b, &counts, err, sizeof err), OG_OK, "og_import: %s", err);
    cr_expect_eq(counts.devices, N_DEVICES);
    cr_expect_eq(counts.records, N_RECORDS);

    listing la = walk(a), lb = walk(b);
    expect_samples(&la);
    expect_same(&la, &lb);
    char *text_b = export_to(b, dump_b, &len_b);
    cr_expect_eq(len_a, len_b, "export lengths %zu and %zu", len_a, len_b);
    cr_expect_eq(memcmp(text_a, text_b, len_a < len_b ? len_a : len_b), 0,
                 "the export of the imported database differs:\n%s\n----\n%s", text_a, text_b);

    /* No row ids: records name their device by its key. */
    cr_expect_not_null(strstr(text_a, "(SELECT id FROM devices WHERE vendor_id = 4098 AND"
                                      " device_id = 29631 AND driver_id = 1 AND"
                                      " driver_version = 4294967295 AND driver_info ="
                                      " 'Adrenalin ''23.1'' -- x' AND pipeline_cache_uuid = '')"),
                       "%s", text_a);
    cr_expect_not_null(strstr(text_a, " driver_name, driver_info, pipeline_cache_uuid) VALUES"
                                      " (65541, 0, 1, 1, 'llvmpipe (LLVM 15.0.6, 256 bits)',"
                                      " 'driver of llvmpipe (LLVM 15.0.6, 256 bits)',"
                                      " 'Mesa 22.3.6 (LLVM 15.0.6)',"
                                      " '32322e332e36616161616161616161ff');"),
                       "%s", text_a);
    cr_expect_null(strstr(text_a, "INSERT INTO records (id"), "%s", text_a);
    cr_expect_not_null(strstr(text_a, "'vendor''s ''pretuned'' db'"), "%s", text_a);
    cr_expect_not_null(strstr(text_a, "1e999"), "%s", text_a);
    cr_expect_not_null(strstr(text_a, " reason, created, source, spread, memory) VALUES"), "%s",
                       text_a);
    cr_expect_not_null(strstr(text_a, ", 0.10000000000000001, 'device-local');"), "%s", text_a);
    free(text_a);
    free(text_b);
    free(la.e);
    free(lb.e);
}

Test(travel, export_order_ignores_insertion_order)
{
    static const int forward[N_RECORDS + 1] = {0, 1, 2, 3, 4, 5, 6, 7};
    static const int backward[N_RECORDS + 1] = {7, 6, 5, 4, 3, 2, 1, 0};
    static const int shuffled[N_RECORDS + 1] = {4, 2, 7, 6, 0, 5, 1, 3};
    const int *orders[] = {forward, backward, shuffled};
    char *first = NULL;
    size_t first_len = 0;
    for (int i = 0; i < 3; i++) {
        char db[512], out[512], name[32];
        snprintf(name, sizeof name, "order%d.db", i);
        tmp_path(db, sizeof db, name);
        snprintf(name, sizeof name, "order%d.sql", i);
        tmp_path(out, sizeof out, name);
        fill(db, orders[i]);
        size_t len;
        char *text = export_to(db, out, &len);
        if (first == NULL) {
            first = text;
            first_len = len;
            continue;
        }
        cr_expect_eq(len, first_len, "order %d: %zu bytes, not %zu", i, len, first_len);
        cr_expect_eq(memcmp(text, first, len < first_len ? len : first_len), 0,
                     "order %d exports:\n%s\n---- instead of:\n%s", i, text, first);
        free(text);
    }
    /* Devices by key: llvmpipe (0x10005) after AMD (0x1002), NVIDIA (0x10de) and Intel (0x8086). */
    const char *amd = strstr(first, "(4098, 29631");
    const char *nvidia = strstr(first, "(4318, 9860");
    const char *intel = strstr(first, "(32902, 22176");
    const char *llvmpipe = strstr(first, "(65541, 0");
    cr_expect(amd && nvidia && intel && llvmpipe && amd < nvidia && nvidia < intel &&
                  intel < llvmpipe,
              "devices out of order:\n%s", first);
    free(first);
}

#define GOOD_PARAMS                                                                                \
    "'bm=64,bn=64,bk=16,tm=4,tn=4,wgx=16,wgy=16,pad=0,load=staged,acc=blocked,vec=1,src=ssbo'"

/* A dump written by hand in the format of og_travel.h: one device, then
 * the given lines. */
static const char hand_device[] =
    "INSERT INTO devices (vendor_id, device_id, driver_id, driver_version, name, driver_name)"
    " VALUES (4098, 29631, 1, 8388608, 'GPU', 'radv');\n";

/* A record line of that device with the given gflops and params literals,
 * in the format of schema version 3 (no spread or memory). */
static void hand_record(char *buf, size_t len, const char *gflops, const char *params)
{
    snprintf(buf, len,
             "INSERT INTO records (device, op, dtype, mode, trans_a, trans_b, m, n, k, batch,"
             " template_name, template_hash, params, median_us, gflops, samples, max_error,"
             " accepted, reason, created, source) VALUES ((SELECT id FROM devices WHERE"
             " vendor_id = 4098 AND device_id = 29631 AND driver_id = 1 AND"
             " driver_version = 8388608), 'gemm', 'f32', 'fast', 0, 0, 64, 64, 64, 1,"
             " 'gemm_tile', '%016" PRIx64 "', %s, 100, %s, 3, 0, 1, '', 1700000000, '');\n",
             og_template_hash(OG_TEMPLATE_TILE), params, gflops);
}

/* A record line of that device as og_export writes it now, with the given
 * spread and memory literals. */
static void hand_record_v4(char *buf, size_t len, const char *spread, const char *memory)
{
    snprintf(buf, len,
             "INSERT INTO records (device, op, dtype, mode, trans_a, trans_b, m, n, k, batch,"
             " template_name, template_hash, params, median_us, gflops, samples, max_error,"
             " accepted, reason, created, source, spread, memory) VALUES ((SELECT id FROM devices"
             " WHERE vendor_id = 4098 AND device_id = 29631 AND driver_id = 1 AND"
             " driver_version = 8388608), 'gemm', 'f32', 'fast', 0, 0, 64, 64, 64, 1,"
             " 'gemm_tile', '%016" PRIx64 "', " GOOD_PARAMS ", 100, 8.5, 3, 0, 1, '', 1700000000,"
             " '', %s, %s);\n",
             og_template_hash(OG_TEMPLATE_TILE), spread, memory);
}

/* A device and a record line as og_export writes them now: the device of
 * hand_device, but of the driver build with the given driver info and
 * pipeline cache UUID literals, and a record of it with the given gflops. */
static void hand_device_v5(char *buf, size_t len, const char *info, const char *uuid)
{
    snprintf(buf, len,
             "INSERT INTO devices (vendor_id, device_id, driver_id, driver_version, name,"
             " driver_name, driver_info, pipeline_cache_uuid) VALUES (4098, 29631, 1, 8388608,"
             " 'GPU', 'radv', %s, %s);\n",
             info, uuid);
}

static void hand_record_v5(char *buf, size_t len, const char *info, const char *uuid,
                           const char *gflops)
{
    snprintf(buf, len,
             "INSERT INTO records (device, op, dtype, mode, trans_a, trans_b, m, n, k, batch,"
             " template_name, template_hash, params, median_us, gflops, samples, max_error,"
             " accepted, reason, created, source, spread, memory) VALUES ((SELECT id FROM devices"
             " WHERE vendor_id = 4098 AND device_id = 29631 AND driver_id = 1 AND"
             " driver_version = 8388608 AND driver_info = %s AND pipeline_cache_uuid = %s),"
             " 'gemm', 'f32', 'fast', 0, 0, 64, 64, 64, 1, 'gemm_tile', '%016" PRIx64
             "', " GOOD_PARAMS ", 100, %s, 3, 0, 1, '', 1700000000, '', 0.5, 'device-local');\n",
             info, uuid, og_template_hash(OG_TEMPLATE_TILE), gflops);
}

/* buf, formatted: a dump of the hostile cases. */
#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
static const char *
compose(char buf[4096], const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, 4096, fmt, ap);
    va_end(ap);
    return buf;
}

Test(travel, hand_written_dump_imports)
{
    char dump[512], db[512], rec[2048], text[8192], err[1024] = "";
    tmp_path(dump, sizeof dump, "hand.sql");
    tmp_path(db, sizeof db, "hand.db");
    hand_record(rec, sizeof rec, "7.5", GOOD_PARAMS);
    /* Keywords in any case, other spacing and comments are SQL too. */
    snprintf(text, sizeof text, "-- by hand\nbegin ;\n%s\n%s  -- the record\ncommit;\n-- end\n",
             hand_device, rec);
    write_text(dump, text);
    og_travel_counts counts;
    cr_assert_eq(og_import(dump, db, &counts, err, sizeof err), OG_OK, "%s", err);
    cr_expect_eq(counts.records, 1);
    listing l = walk(db);
    cr_assert_eq(l.n, 2);
    cr_expect_eq(l.e[1].rec.gflops, 7.5);
    cr_expect_str_eq(l.e[0].dev.name, "GPU");
    free(l.e);
}

/* A dump of schema version 3 (records without spread and memory) imports:
 * spread 0, memory unknown; one may even mix both formats. */
Test(travel, dumps_without_spread_and_memory_import)
{
    char dump[512], db[512], old[2048], now[2048], text[8192], err[1024] = "";
    tmp_path(dump, sizeof dump, "mixed.sql");
    tmp_path(db, sizeof db, "mixed.db");
    hand_record(old, sizeof old, "7.5", GOOD_PARAMS);
    hand_record_v4(now, sizeof now, "0.125", "'host-visible'");
    snprintf(text, sizeof text, "BEGIN;\n%s%s%sCOMMIT;\n", hand_device, old, now);
    write_text(dump, text);
    og_travel_counts counts;
    cr_assert_eq(og_import(dump, db, &counts, err, sizeof err), OG_OK, "%s", err);
    cr_expect_eq(counts.records, 2);
    listing l = walk(db);
    cr_assert_eq(l.n, 3);
    /* In key order: the params tie, then 7.5 GFLOP/s before 8.5. */
    cr_expect_eq(l.e[1].rec.gflops, 7.5);
    cr_expect_eq(l.e[1].rec.spread, 0.0);
    cr_expect_str_eq(l.e[1].rec.memory, "");
    cr_expect_eq(l.e[2].rec.gflops, 8.5);
    cr_expect_eq(l.e[2].rec.spread, 0.125);
    cr_expect_str_eq(l.e[2].rec.memory, OG_DB_MEMORY_HOST_VISIBLE);
    free(l.e);
}

/* A dump of schema version 4 or before (devices without driver info and
 * pipeline cache UUID, records naming their device by four numbers)
 * imports with both unknown; beside it in the same dump, a device of the
 * same four numbers with a known driver build is another device, and the
 * records of each find their own. */
Test(travel, dumps_without_driver_builds_import)
{
    char dump[512], db[512], old[2048], dev5[1024], rec5[2048], text[8192], err[1024] = "";
    tmp_path(dump, sizeof dump, "builds.sql");
    tmp_path(db, sizeof db, "builds.db");
    hand_record(old, sizeof old, "7.5", GOOD_PARAMS);
    hand_device_v5(dev5, sizeof dev5, "'Mesa 24.2.8'", "'32342e322e38616161616161616161ff'");
    hand_record_v5(rec5, sizeof rec5, "'Mesa 24.2.8'", "'32342e322e38616161616161616161ff'", "9.5");
    snprintf(text, sizeof text, "BEGIN;\n%s%s%s%sCOMMIT;\n", hand_device, old, dev5, rec5);
    write_text(dump, text);
    og_travel_counts counts;
    cr_assert_eq(og_import(dump, db, &counts, err, sizeof err), OG_OK, "%s", err);
    cr_expect_eq(counts.devices, 2);
    cr_expect_eq(counts.records, 2);
    listing l = walk(db);
    cr_assert_eq(l.n, 4);
    /* In key order: the unknown build ("") first. */
    cr_expect(l.e[0].is_device);
    cr_expect_str_eq(l.e[0].dev.driver_info, "");
    cr_expect_str_eq(l.e[0].dev.pipeline_cache_uuid, "");
    cr_expect_eq(l.e[1].rec.gflops, 7.5);
    cr_expect(l.e[2].is_device);
    cr_expect_str_eq(l.e[2].dev.driver_info, "Mesa 24.2.8");
    cr_expect_str_eq(l.e[2].dev.pipeline_cache_uuid, "32342e322e38616161616161616161ff");
    cr_expect_eq(l.e[3].rec.gflops, 9.5);
    free(l.e);
}

/* The shipped dumps (db/pretuned) import as they are: records measured
 * before schema version 4 (spread 0, memory '') beside newer ones, which
 * say where they were measured; and every record is of the templates as
 * they are (a stale record is never selected, so a template change must
 * measure the shipped records again, or re-stamp them where the kernels'
 * code is unchanged: db/pretuned/README.md). */
/* Each shipped dump: Mesa 22.3.6's lavapipe, and Mesa 26's (the second
 * driver lane). */
static void check_pretuned_dump(const char *name)
{
    char db[512], path[512], err[1024] = "";
    tmp_path(db, sizeof db, name);
    snprintf(path, sizeof path, "%s/%s", OG_PRETUNED_SQL, name);
    og_travel_counts counts = {0, 0};
    cr_assert_eq(og_import(path, db, &counts, err, sizeof err), OG_OK, "%s: %s", path, err);
    cr_expect_gt(counts.records, 0, "%s", name);
    listing l = walk(db);
    for (size_t i = 0; i < l.n; i++) {
        if (l.e[i].is_device)
            continue;
        const og_record *r = &l.e[i].rec;
        cr_expect(og_db_memory_known(r->memory) && r->spread >= 0, "entry %zu: '%s', spread %g", i,
                  r->memory, r->spread);
        cr_expect(r->memory[0] != '\0' || r->spread == 0.0, "entry %zu: a spread without a memory",
                  i);
        cr_expect_eq(r->template_hash, og_template_hash(r->template_name),
                     "entry %zu (%s %s): stale, measured with another version of %s", i,
                     r->template_name, r->params, r->template_name);
    }
    free(l.e);
}

Test(travel, pretuned_dumps_import)
{
    check_pretuned_dump("llvmpipe.sql");
    check_pretuned_dump("llvmpipe-mesa26.sql");
}

/* The user's default database is made where XDG_CACHE_HOME says although
 * none of its directories exist yet (a fresh account has no ~/.cache). */
Test(travel, default_database_directories_are_made)
{
    char cache[512], db[600], args[1024], *out;
    tmp_path(cache, sizeof cache, "fresh/account/.cache");
    snprintf(db, sizeof db, "%s/onegpu/tuning.db", cache);
    char *saved = getenv("XDG_CACHE_HOME") ? strdup(getenv("XDG_CACHE_HOME")) : NULL;
    setenv("XDG_CACHE_HOME", cache, 1);
    snprintf(args, sizeof args, "import '%s/llvmpipe.sql' 2>&1", OG_PRETUNED_SQL);
    int rc = ogtune(args, &out);
    if (saved)
        setenv("XDG_CACHE_HOME", saved, 1);
    else
        unsetenv("XDG_CACHE_HOME");
    free(saved);
    cr_expect_eq(rc, 0, "%s", out);
    free(out);
    struct stat st;
    cr_expect_eq(stat(db, &st), 0, "no %s", db);
}

Test(travel, hostile_dumps_are_refused_without_change)
{
    char good[2048], text_gflops[2048], sql_params[2048], absurd_params[2048], call[2048];
    hand_record(good, sizeof good, "7.5", GOOD_PARAMS);
    hand_record(text_gflops, sizeof text_gflops, "'7.5'", GOOD_PARAMS);
    hand_record(sql_params, sizeof sql_params, "7.5", "'bm=64''); DROP TABLE records; --'");
    hand_record(absurd_params, sizeof absurd_params, "7.5",
                "'bm=9999,bn=64,bk=16,tm=4,tn=4,wgx=16,wgy=16,pad=0,load=staged,acc=blocked,"
                "vec=1,src=ssbo'");
    hand_record(call, sizeof call, "randomblob(100)", GOOD_PARAMS);
    char vram[2048], negative[2048], nan_word[2048], nan_text[2048], infinite[2048];
    hand_record_v4(vram, sizeof vram, "0", "'vram'");
    hand_record_v4(negative, sizeof negative, "-1", "'device-local'");
    hand_record_v4(nan_word, sizeof nan_word, "NaN", "'device-local'");
    hand_record_v4(nan_text, sizeof nan_text, "'NaN'", "'device-local'");
    hand_record_v4(infinite, sizeof infinite, "1e999", "'device-local'");
    /* The columns of version 4 with the values of version 3. */
    char short_values[2048];
    hand_record(short_values, sizeof short_values, "7.5", GOOD_PARAMS);
    char *at = strstr(short_values, "source)");
    cr_assert_not_null(at);
    memmove(at + strlen("source, spread, memory)"), at + strlen("source)"),
            strlen(at + strlen("source)")) + 1);
    memcpy(at, "source, spread, memory)", strlen("source, spread, memory)"));

    /* A 10 MB device name. */
    size_t huge_len = 10u << 20;
    char *huge = malloc(huge_len + 1024);
    cr_assert_not_null(huge);
    int head = snprintf(huge, 1024,
                        "BEGIN;\nINSERT INTO devices (vendor_id, device_id, driver_id,"
                        " driver_version, name, driver_name) VALUES (1, 2, 3, 4, '");
    memset(huge + head, 'A', huge_len);
    snprintf(huge + head + huge_len, 1024 - (size_t)head, "', 'x');\nCOMMIT;\n");

    char buf[20][4096], other_build[2048];
    hand_record_v5(other_build, sizeof other_build, "'Mesa 24'", "''", "7.5");
    const struct {
        const char *text, *expect; /* the dump, and what the message names */
    } cases[] = {
        {compose(buf[0], "BEGIN;\n%sDROP TABLE records;\n%sCOMMIT;\n", hand_device, good),
         "line 3: 'DROP'"},
        {compose(buf[1], "BEGIN;\nATTACH DATABASE 'evil.db' AS evil;\n%s%sCOMMIT;\n", hand_device,
                 good),
         "line 2: 'ATTACH'"},
        {huge, "line 2: a string longer than 255 bytes"},
        {compose(buf[2], "BEGIN;\n%s%sCOMMIT;\n", hand_device, text_gflops),
         "line 3: gflops: expected a number, found a string"},
        {compose(buf[3], "BEGIN;\n%s%sCOMMIT;\n", hand_device, sql_params),
         "line 3: record: template name or params"},
        {compose(buf[4], "BEGIN;\n%s%sCOMMIT;\n", hand_device, absurd_params),
         "line 3: record: params: bm=9999"},
        {compose(buf[5], "BEGIN;\n%sINSERT INTO users (name) VALUES ('root');\nCOMMIT;\n",
                 hand_device),
         "line 3: unknown table 'users'"},
        {compose(buf[6], "BEGIN;\n%s%s", hand_device, good), "ends without COMMIT"},
        {compose(buf[7], "BEGIN;\n%s%sCOMMIT;\n", good, hand_device),
         "line 2: record of device 4098:29631:1:8388608 before"},
        {compose(buf[8], "BEGIN;\n%s%sCOMMIT;\n", hand_device, call), "line 3: expected a value"},
        {compose(buf[9], "BEGIN;\n%s%sCOMMIT;\nDELETE FROM records;\n", hand_device, good),
         "line 5: 'DELETE' after COMMIT"},
        {compose(buf[10], "BEGIN;\n%s%s%sCOMMIT;\n", hand_device, hand_device, good),
         "line 3: device 4098:29631:1:8388608 again"},
        {"BEGIN;\nINSERT INTO devices (vendor_id, device_id, driver_id, driver_version, name,"
         " driver_name, id) VALUES (1, 2, 3, 4, 'a', 'b', 5);\nCOMMIT;\n",
         "line 2: expected 'driver_info', found 'id'"},
        {"BEGIN;\nINSERT INTO devices (vendor_id, device_id, driver_id, driver_version, name,"
         " driver_name, driver_info, pipeline_cache_uuid) VALUES (1, 2, 3, 4, 'a', 'b', 'c',"
         " '32322E332E36616161616161616161FF');\nCOMMIT;\n",
         "line 2: pipeline_cache_uuid: '32322E332E36616161616161616161FF' is not 32 lowercase"
         " hex digits"},
        {compose(buf[19], "BEGIN;\n%s%sCOMMIT;\n", hand_device, other_build),
         "line 3: record of device 4098:29631:1:8388608 (driver info 'Mesa 24', pipeline cache"
         " UUID '') before its INSERT INTO devices"},
        {"BEGIN;\nINSERT INTO devices (vendor_id, device_id, driver_id, driver_version, name,"
         " driver_name) VALUES (-1, 2, 3, 4, 'a', 'b');\nCOMMIT;\n",
         "line 2: vendor_id: -1 is not in 0..4294967295"},
        {"BEGIN;\nSELECT load_extension('evil.so');\nCOMMIT;\n", "line 2: 'SELECT'"},
        {"BEGIN;\n\x01\nCOMMIT;\n", "line 2: unexpected byte 0x01"},
        {compose(buf[12], "BEGIN;\n%s%sCOMMIT;\n", hand_device, vram),
         "line 3: record: memory 'vram' is not device-local, device-local-mapped, host-visible"},
        {compose(buf[13], "BEGIN;\n%s%sCOMMIT;\n", hand_device, negative),
         "line 3: record: spread -1 is negative or not finite"},
        {compose(buf[14], "BEGIN;\n%s%sCOMMIT;\n", hand_device, nan_word),
         "line 3: expected a value (a number or a string), found 'NaN'"},
        {compose(buf[15], "BEGIN;\n%s%sCOMMIT;\n", hand_device, nan_text),
         "line 3: spread: expected a number, found a string"},
        {compose(buf[16], "BEGIN;\n%s%sCOMMIT;\n", hand_device, infinite),
         "line 3: record: spread inf is negative or not finite"},
        {compose(buf[17], "BEGIN;\n%s%sCOMMIT;\n", hand_device, short_values),
         "line 3: expected ',', found ')'"},
        {compose(buf[18],
                 "BEGIN;\n%sINSERT INTO records (device, op, dtype, mode, trans_a,"
                 " trans_b, m, n, k, batch, template_name, template_hash, params,"
                 " median_us, gflops, samples, max_error, accepted, reason, created,"
                 " source memory) VALUES (1);\nCOMMIT;\n",
                 hand_device),
         "line 3: expected ',' or ')', found 'memory'"},
        {"", "line 1: expected 'BEGIN', found the end of the file"},
    };

    char target[512], before_path[512], after_path[512], missing[512], dump[512];
    tmp_path(target, sizeof target, "target.db");
    tmp_path(before_path, sizeof before_path, "before.sql");
    tmp_path(after_path, sizeof after_path, "after.sql");
    tmp_path(missing, sizeof missing, "never-created.db");
    tmp_path(dump, sizeof dump, "hostile.sql");
    static const int order[N_RECORDS + 1] = {0, 1, 2, 3, 4, 5, 6, 7};
    fill(target, order);
    size_t before_len;
    char *before = export_to(target, before_path, &before_len);

    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        write_text(dump, cases[i].text);
        char err[1024] = "";
        og_travel_counts counts = {0, 0};
        og_status st = og_import(dump, target, &counts, err, sizeof err);
        cr_expect_eq(st, OG_ERROR_DATABASE, "case %zu imported (status %d)", i, st);
        cr_expect_not_null(strstr(err, cases[i].expect), "case %zu: message \"%s\" lacks \"%s\"", i,
                           err, cases[i].expect);
        cr_expect_not_null(strstr(err, dump), "case %zu: message \"%s\" does not name the file", i,
                           err);
        size_t after_len;
        char *after = export_to(target, after_path, &after_len);
        cr_expect(after_len == before_len && memcmp(after, before, before_len) == 0,
                  "case %zu changed the database", i);
        free(after);

        /* A refused dump creates no database either. */
        cr_expect_neq(og_import(dump, missing, &counts, err, sizeof err), OG_OK);
        cr_expect_neq(access(missing, F_OK), 0, "case %zu created %s", i, missing);
    }
    free(before);
    free(huge);
}
