/*
 * Fuzz target: the database reader on a corrupt file (any bytes where a
 * tuning database is expected: the runtime reads the user's cache and the
 * pre-tuned databases, ogtune merge reads other people's). The file is
 * opened read-only and every read path runs: og_db_each, og_db_walk and
 * og_db_select for every key, then what selection does with a record
 * (og_params_parse, og_params_check); then the file is opened writable (an
 * older schema is upgraded) and a record stored. Properties: a refusal is
 * OG_ERROR_DATABASE or OG_ERROR_NOT_FOUND with a message; every text field
 * read is terminated inside its array.
 */
#include <string.h>

#include "og_fuzz.h"
#include "og_db.h"
#include "og_gen.h"

/* Every text field of rec (and the device's name) ends inside its array. */
static void check_record(const og_record *rec)
{
    og_fuzz_assert(memchr(rec->key.op, '\0', sizeof rec->key.op) != NULL, "op unterminated");
    og_fuzz_assert(memchr(rec->template_name, '\0', sizeof rec->template_name) != NULL,
                   "template_name unterminated");
    og_fuzz_assert(memchr(rec->params, '\0', sizeof rec->params) != NULL, "params unterminated");
    og_fuzz_assert(memchr(rec->memory, '\0', sizeof rec->memory) != NULL, "memory unterminated");
    og_fuzz_assert(memchr(rec->reason, '\0', sizeof rec->reason) != NULL, "reason unterminated");
    og_fuzz_assert(memchr(rec->source, '\0', sizeof rec->source) != NULL, "source unterminated");
    /* What selection does with a record it found (og_select.c). */
    og_params p;
    char why[256];
    if (og_params_parse(rec->params, &p, why, sizeof why) == 0)
        og_params_check(&p, NULL, why, sizeof why);
}

/* The keys and devices seen, for og_db_select. */
typedef struct seen {
    og_record_key keys[16];
    size_t n_keys;
    og_device_info dev;
    int have_dev;
} seen;

static int each_record(void *user, const og_record *rec, const char *device)
{
    seen *s = user;
    check_record(rec);
    og_fuzz_assert(device != NULL, "a record without a device name");
    if (s->n_keys < sizeof s->keys / sizeof s->keys[0])
        s->keys[s->n_keys++] = rec->key;
    return 0;
}

static int walk_record(void *user, const og_device_info *dev, const og_record *rec)
{
    seen *s = user;
    og_fuzz_assert(memchr(dev->name, '\0', sizeof dev->name) != NULL, "device name unterminated");
    og_fuzz_assert(memchr(dev->driver_name, '\0', sizeof dev->driver_name) != NULL,
                   "driver name unterminated");
    if (rec != NULL)
        check_record(rec);
    else if (!s->have_dev) {
        s->dev = *dev;
        s->have_dev = 1;
    }
    return 0;
}

/* A refusal: one of the database's errors, with a message. */
static void check_refusal(og_status st, const char *err, const char *what)
{
    og_fuzz_assert(st == OG_ERROR_DATABASE || st == OG_ERROR_NOT_FOUND, "%s: status %d: %s", what,
                   (int)st, err);
    og_fuzz_assert(err[0] != '\0', "%s: status %d without a message", what, (int)st);
}

/* Every read path on the file at path, opened read-only. */
static void read_all(const char *path)
{
    og_db *db = NULL;
    char err[1024] = "";
    og_status st = og_db_open(path, 0, &db, err, sizeof err);
    if (st != OG_OK) {
        check_refusal(st, err, "open");
        return;
    }
    seen s = {0};
    err[0] = '\0';
    if ((st = og_db_each(db, each_record, &s, err, sizeof err)) != OG_OK)
        check_refusal(st, err, "each");
    err[0] = '\0';
    if ((st = og_db_walk(db, walk_record, &s, err, sizeof err)) != OG_OK)
        check_refusal(st, err, "walk");
    static const char *const templates[] = {OG_TEMPLATE_TILE, OG_TEMPLATE_FEWROWS,
                                            OG_TEMPLATE_INT8_TILE};
    for (size_t i = 0; i < s.n_keys; i++) {
        for (size_t t = 0; t < sizeof templates / sizeof templates[0]; t++) {
            og_record rec;
            og_device_info rec_dev;
            int found = 0, other = 0;
            err[0] = '\0';
            st = og_db_select(db, &s.dev, &s.keys[i], templates[t], og_template_hash(templates[t]),
                              256, 256, 256, 1, &rec, &rec_dev, &found, &other, err, sizeof err);
            if (st != OG_OK)
                check_refusal(st, err, "select");
            else if (found)
                check_record(&rec);
        }
    }
    og_db_close(db);
}

/* Opens the file at path writable (upgrading an older schema) and stores a record. */
static void write_one(const char *path)
{
    og_db *db = NULL;
    char err[1024] = "";
    og_status st = og_db_open(path, 1, &db, err, sizeof err);
    if (st != OG_OK) {
        check_refusal(st, err, "open writable");
        return;
    }
    og_device_info dev = {.vendor_id = 1, .device_id = 2, .driver_id = 3, .driver_version = 4};
    og_record rec = {.key = {.op = "gemm"},
                     .m = 1,
                     .n = 1,
                     .k = 1,
                     .batch = 1,
                     .template_name = OG_TEMPLATE_TILE,
                     .created = 1};
    int64_t id = 0;
    err[0] = '\0';
    st = og_db_device(db, &dev, &id, err, sizeof err);
    if (st == OG_OK)
        st = og_db_insert(db, id, &rec, err, sizeof err);
    if (st != OG_OK)
        check_refusal(st, err, "store");
    og_db_close(db);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char path[512];
    og_fuzz_path(path, sizeof path, "fuzz.db");
    og_fuzz_remove_db(path);
    og_fuzz_write_file(path, data, size);
    read_all(path);
    write_one(path);
    og_fuzz_remove_db(path);
    return 0;
}
