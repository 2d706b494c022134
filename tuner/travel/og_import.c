/*
 * ogtune import: a dump of og_export into a database (og_travel.h).
 *
 * The dump is SQL but is never executed. A strict reader takes exactly the
 * statements of og_travel.h (words in any case, any spacing, -- comments),
 * literals only (no expressions, functions or other statements), checks the
 * type and range of every value and every record (og_record_check), and
 * stores through og_db_device and og_db_insert. The file is read twice:
 * first to check all of it, with no database open, then into the database
 * in one transaction. A string longer than 255 bytes (the longest text
 * field), or a word or number longer than 63, is refused where it starts,
 * so a hostile file costs no memory.
 */
#include <errno.h>
#include <inttypes.h>
#include <locale.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "og_gen.h"
#include "og_travel.h"

#define OG_TOKEN_MAX 256 /* bytes of a token's text with its NUL */
#define OG_WORD_MAX 64   /* of a word or a number */

typedef enum og_token_kind {
    OG_TOKEN_END,
    OG_TOKEN_WORD,   /* a keyword or a name: letters, digits and '_' */
    OG_TOKEN_PUNCT,  /* one of ( ) , ; = ? */
    OG_TOKEN_NUMBER, /* -?digits[.digits][e[+-]digits] */
    OG_TOKEN_STRING  /* '...', the quotes removed and '' made one */
} og_token_kind;

typedef struct og_token {
    og_token_kind kind;
    long line; /* where it starts */
    size_t len;
    char text[OG_TOKEN_MAX];
} og_token;

/* Characters from the dump (f) or from a statement of og_travel.h (s). */
typedef struct og_lexer {
    FILE *f;
    const char *s;
    long line;
} og_lexer;

/* A device of the dump: its key (og_db_same_driver), and its row in the
 * database (0 while checking). */
typedef struct og_known_device {
    og_device_info key;
    int64_t id;
} og_known_device;

typedef struct og_reader {
    og_lexer lx;
    const char *name; /* the dump, for messages */
    og_db *db;        /* NULL while checking */
    og_token vals[OG_DUMP_RECORD_VALUES];
    size_t nvals; /* of them, read by match since the statement started */
    og_device_info dev;
    og_record rec;
    og_known_device *devices;
    size_t ndevices, cap;
    og_travel_counts counts;
    og_status st;
    char msg[1024];
} og_reader;

static int next_char(og_lexer *lx)
{
    int c = lx->f != NULL ? getc(lx->f) : (*lx->s != '\0' ? (unsigned char)*lx->s++ : EOF);
    lx->line += c == '\n';
    return c;
}

static void put_back(og_lexer *lx, int c)
{
    if (c == EOF)
        return;
    lx->line -= c == '\n';
    if (lx->f != NULL)
        ungetc(c, lx->f);
    else
        lx->s--;
}

/* Formats "<dump>: line N: <message>" into r->msg and returns -1. */
#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static int
refuse(og_reader *r, long line, const char *fmt, ...)
{
    int used = snprintf(r->msg, sizeof r->msg, "%s: line %ld: ", r->name, line);
    if (used >= 0 && (size_t)used < sizeof r->msg) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(r->msg + used, sizeof r->msg - (size_t)used, fmt, ap);
        va_end(ap);
    }
    if (r->st == OG_OK)
        r->st = OG_ERROR_DATABASE;
    return -1;
}

static int is_digit(int c)
{
    return c >= '0' && c <= '9';
}

static int is_word_char(int c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || is_digit(c);
}

/* Appends c to a token of at most max - 1 bytes. */
static int add_char(og_reader *r, og_token *t, int c, size_t max, const char *what)
{
    if (t->len + 1 >= max)
        return refuse(r, t->line, "%s longer than %zu bytes", what, max - 1);
    t->text[t->len++] = (char)c;
    t->text[t->len] = '\0';
    return 0;
}

static int lex_string(og_reader *r, og_lexer *lx, og_token *t)
{
    t->kind = OG_TOKEN_STRING;
    for (;;) {
        int c = next_char(lx);
        if (c == EOF)
            return refuse(r, t->line, "a string that never ends");
        if (c == '\0')
            return refuse(r, lx->line, "a NUL byte in a string");
        if (c == '\'') {
            int d = next_char(lx);
            if (d != '\'') {
                put_back(lx, d);
                return 0;
            }
        }
        if (add_char(r, t, c, OG_TOKEN_MAX, "a string") != 0)
            return -1;
    }
}

/* Reads digits into t; returns how many. */
static int lex_digits(og_reader *r, og_lexer *lx, og_token *t, size_t *count)
{
    int c;
    *count = 0;
    while (is_digit(c = next_char(lx))) {
        if (add_char(r, t, c, OG_WORD_MAX, "a number") != 0)
            return -1;
        (*count)++;
    }
    put_back(lx, c);
    return 0;
}

/* A number whose first character (a digit or '-') t already holds. */
static int lex_number(og_reader *r, og_lexer *lx, og_token *t)
{
    t->kind = OG_TOKEN_NUMBER;
    size_t n;
    if (lex_digits(r, lx, t, &n) != 0)
        return -1;
    int c = next_char(lx);
    if (c == '.') {
        if (add_char(r, t, c, OG_WORD_MAX, "a number") != 0 || lex_digits(r, lx, t, &n) != 0)
            return -1;
        if (n == 0)
            return refuse(r, t->line, "a number without digits after its '.'");
        c = next_char(lx);
    }
    if (c == 'e' || c == 'E') {
        if (add_char(r, t, c, OG_WORD_MAX, "a number") != 0)
            return -1;
        c = next_char(lx);
        if (c == '+' || c == '-') {
            if (add_char(r, t, c, OG_WORD_MAX, "a number") != 0)
                return -1;
        } else {
            put_back(lx, c);
        }
        if (lex_digits(r, lx, t, &n) != 0)
            return -1;
        if (n == 0)
            return refuse(r, t->line, "a number without digits in its exponent");
        c = next_char(lx);
    }
    put_back(lx, c);
    return 0;
}

/* Reads the next token, skipping spaces and -- comments. */
static int lex(og_reader *r, og_lexer *lx, og_token *t)
{
    int c;
    for (;;) {
        c = next_char(lx);
        if (c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\f' || c == '\v')
            continue;
        if (c != '-')
            break;
        int d = next_char(lx);
        if (d != '-') {
            put_back(lx, d);
            break;
        }
        while ((c = next_char(lx)) != '\n' && c != EOF)
            ;
        put_back(lx, c);
    }
    t->line = lx->line;
    t->len = 0;
    t->text[0] = '\0';
    if (c == EOF) {
        t->kind = OG_TOKEN_END;
        return 0;
    }
    if (c == '\'')
        return lex_string(r, lx, t);
    if (c == '-' || is_digit(c)) {
        int d = c == '-' ? next_char(lx) : c;
        if (!is_digit(d))
            return refuse(r, t->line, "a '-' that starts neither a number nor a comment");
        if (c == '-')
            put_back(lx, d);
        if (add_char(r, t, c, OG_WORD_MAX, "a number") != 0)
            return -1;
        return lex_number(r, lx, t);
    }
    if (is_word_char(c)) {
        t->kind = OG_TOKEN_WORD;
        do {
            if (add_char(r, t, c, OG_WORD_MAX, "a word") != 0)
                return -1;
        } while (is_word_char(c = next_char(lx)));
        put_back(lx, c);
        return 0;
    }
    if (c != '\0' && strchr("(),;=?", c) != NULL) {
        t->kind = OG_TOKEN_PUNCT;
        return add_char(r, t, c, OG_WORD_MAX, "a token");
    }
    if (c >= 0x20 && c < 0x7f)
        return refuse(r, t->line, "unexpected character '%c'", c);
    return refuse(r, t->line, "unexpected byte 0x%02x", (unsigned)c);
}

/* A token as a message shows it. */
static const char *shown(const og_token *t, char *buf, size_t len)
{
    if (t->kind == OG_TOKEN_END)
        return "the end of the file";
    if (t->kind == OG_TOKEN_STRING)
        return "a string";
    snprintf(buf, len, "'%.40s'", t->text);
    return buf;
}

/* Whether a token is this word or punctuation (words in any case, as SQL reads them). */
static int same_token(const og_token *a, const og_token *b)
{
    if (a->kind != b->kind)
        return 0;
    return a->kind == OG_TOKEN_WORD ? strcasecmp(a->text, b->text) == 0
                                    : strcmp(a->text, b->text) == 0;
}

/* Matches the dump's next tokens against the statement sql from its
 * skip-th token on, appending the literals at its '?' to r->vals. */
static int match(og_reader *r, const char *sql, int skip)
{
    og_lexer pattern = {.s = sql, .line = 1};
    og_token want, got;
    for (int i = 0;; i++) {
        if (lex(r, &pattern, &want) != 0)
            return -1;
        if (want.kind == OG_TOKEN_END)
            return 0;
        if (i < skip)
            continue;
        if (lex(r, &r->lx, &got) != 0)
            return -1;
        char buf[64];
        if (want.kind == OG_TOKEN_PUNCT && want.text[0] == '?') {
            if (got.kind != OG_TOKEN_NUMBER && got.kind != OG_TOKEN_STRING)
                return refuse(r, got.line, "expected a value (a number or a string), found %s",
                              shown(&got, buf, sizeof buf));
            if (r->nvals == OG_DUMP_RECORD_VALUES) /* only a wrong pattern has more */
                return refuse(r, got.line, "more than %d values", OG_DUMP_RECORD_VALUES);
            r->vals[r->nvals++] = got;
        } else if (!same_token(&want, &got)) {
            return refuse(r, got.line, "expected '%s', found %s", want.text,
                          shown(&got, buf, sizeof buf));
        }
    }
}

static int take_int(og_reader *r, const og_token *t, const char *field, int64_t lo, int64_t hi,
                    int64_t *out)
{
    if (t->kind != OG_TOKEN_NUMBER || strpbrk(t->text, ".eE") != NULL)
        return refuse(r, t->line, "%s: expected an integer, found %s", field,
                      t->kind == OG_TOKEN_STRING ? "a string" : t->text);
    errno = 0;
    char *end;
    long long v = strtoll(t->text, &end, 10);
    if (errno != 0 || *end != '\0' || v < lo || v > hi)
        return refuse(r, t->line, "%s: %s is not in %" PRId64 "..%" PRId64, field, t->text, lo, hi);
    *out = v;
    return 0;
}

static int take_real(og_reader *r, const og_token *t, const char *field, double *out)
{
    if (t->kind != OG_TOKEN_NUMBER)
        return refuse(r, t->line, "%s: expected a number, found a string", field);
    char *end;
    *out = strtod(t->text, &end); /* the C locale is in force (og_import) */
    if (*end != '\0')
        return refuse(r, t->line, "%s: %s is not a number", field, t->text);
    return 0;
}

static int take_text(og_reader *r, const og_token *t, const char *field, char *out, size_t size)
{
    if (t->kind != OG_TOKEN_STRING)
        return refuse(r, t->line, "%s: expected a string, found %s", field, t->text);
    if (t->len >= size)
        return refuse(r, t->line, "%s: longer than %zu bytes", field, size - 1);
    memcpy(out, t->text, t->len + 1);
    return 0;
}

/* The device key of vals[0..4) and the driver build of vals[info] and
 * vals[uuid] (both "" when the statement has none, info < 0) into dev,
 * whose other fields are cleared. */
static int take_device_key(og_reader *r, int info, int uuid, og_device_info *dev)
{
    static const char *const fields[4] = {"vendor_id", "device_id", "driver_id", "driver_version"};
    uint32_t key[4];
    for (int i = 0; i < 4; i++) {
        int64_t v;
        if (take_int(r, &r->vals[i], fields[i], 0, UINT32_MAX, &v) != 0)
            return -1;
        key[i] = (uint32_t)v;
    }
    memset(dev, 0, sizeof *dev);
    dev->vendor_id = key[0];
    dev->device_id = key[1];
    dev->driver_id = key[2];
    dev->driver_version = key[3];
    if (info < 0)
        return 0;
    if (take_text(r, &r->vals[info], "driver_info", dev->driver_info, sizeof dev->driver_info) !=
            0 ||
        take_text(r, &r->vals[uuid], "pipeline_cache_uuid", dev->pipeline_cache_uuid,
                  sizeof dev->pipeline_cache_uuid) != 0)
        return -1;
    if (!og_db_uuid_known(dev->pipeline_cache_uuid))
        return refuse(r, r->vals[uuid].line,
                      "pipeline_cache_uuid: '%s' is not 32 lowercase hex digits",
                      dev->pipeline_cache_uuid);
    return 0;
}

/* A device key as messages show it: the four numbers, then the driver
 * build where the dump gives one. */
static const char *key_text(const og_device_info *d, char *buf, size_t len)
{
    int n = snprintf(buf, len, "%" PRIu32 ":%" PRIu32 ":%" PRIu32 ":%" PRIu32, d->vendor_id,
                     d->device_id, d->driver_id, d->driver_version);
    if (n > 0 && (size_t)n < len && (d->driver_info[0] || d->pipeline_cache_uuid[0]))
        snprintf(buf + n, len - (size_t)n, " (driver info '%.64s', pipeline cache UUID '%s')",
                 d->driver_info, d->pipeline_cache_uuid);
    return buf;
}

static og_known_device *find_device(og_reader *r, const og_device_info *key)
{
    for (size_t i = 0; i < r->ndevices; i++)
        if (og_db_same_driver(&r->devices[i].key, key))
            return &r->devices[i];
    return NULL;
}

/* Matches the dump's next token against the first of with (then the rest
 * of with) or of without (then the rest of without): the two forms a
 * statement takes from here. *took: whether it was with. */
static int match_either(og_reader *r, const char *with, const char *without, int *took)
{
    og_lexer a = {.s = with, .line = 1}, b = {.s = without, .line = 1};
    og_token want_a, want_b, got;
    char buf[64];
    if (lex(r, &a, &want_a) != 0 || lex(r, &b, &want_b) != 0 || lex(r, &r->lx, &got) != 0)
        return -1;
    *took = same_token(&got, &want_a);
    if (*took)
        return match(r, with, 1);
    if (same_token(&got, &want_b))
        return match(r, without, 1);
    return refuse(r, got.line, "expected '%s' or '%s', found %s", want_a.text, want_b.text,
                  shown(&got, buf, sizeof buf));
}

/* A device in either form: with driver info and pipeline cache UUID
 * (schema version 5), or without (older dumps: both unknown). */
static int read_device(og_reader *r)
{
    long line = r->lx.line;
    int added;
    r->nvals = 0;
    if (match(r, OG_DUMP_DEVICE_HEAD, 3) != 0 ||
        match_either(r, OG_DUMP_DEVICE_ADDED OG_DUMP_DEVICE_BODY ", ?, ?);",
                     OG_DUMP_DEVICE_BODY ");", &added) != 0)
        return -1;
    og_device_info *d = &r->dev;
    if (take_device_key(r, added ? 6 : -1, 7, d) != 0 ||
        take_text(r, &r->vals[4], "name", d->name, sizeof d->name) != 0 ||
        take_text(r, &r->vals[5], "driver_name", d->driver_name, sizeof d->driver_name) != 0)
        return -1;
    char shown_key[192];
    if (find_device(r, d) != NULL)
        return refuse(r, line, "device %s again", key_text(d, shown_key, sizeof shown_key));
    if (r->ndevices == r->cap) {
        size_t cap = r->cap ? 2 * r->cap : 8;
        og_known_device *grown = realloc(r->devices, cap * sizeof *grown);
        if (grown == NULL) {
            r->st = OG_ERROR_OUT_OF_MEMORY;
            return refuse(r, line, "out of memory");
        }
        r->devices = grown;
        r->cap = cap;
    }
    og_known_device *known = &r->devices[r->ndevices];
    known->key = *d;
    known->id = 0;
    if (r->db != NULL && og_db_device(r->db, d, &known->id, r->msg, sizeof r->msg) != OG_OK) {
        r->st = OG_ERROR_DATABASE;
        return -1;
    }
    r->ndevices++;
    r->counts.devices++;
    return 0;
}

/* *out = the i in 0..count - 1 whose name(i) is the string t. */
static int take_name(og_reader *r, const og_token *t, const char *field, const char *(*name)(int),
                     int count, int *out)
{
    char text[OG_WORD_MAX];
    if (take_text(r, t, field, text, sizeof text) != 0)
        return -1;
    for (int i = 0; i < count; i++)
        if (strcmp(name(i), text) == 0) {
            *out = i;
            return 0;
        }
    return refuse(r, t->line, "%s: unknown value '%s'", field, text);
}

static const char *dtype_name(int i)
{
    return og_dtype_name((og_dtype)i);
}

static const char *mode_name(int i)
{
    return i == OG_MODE_DETERMINISTIC ? "deterministic" : "fast";
}

/* Exactly 16 lowercase hex digits, as og_export writes the hash. */
static int take_hash(og_reader *r, const og_token *t, uint64_t *out)
{
    char text[OG_WORD_MAX];
    if (take_text(r, t, "template_hash", text, sizeof text) != 0)
        return -1;
    uint64_t v = 0;
    size_t i = 0;
    for (; text[i] != '\0'; i++) {
        char c = text[i];
        if (i == 16 || !(is_digit(c) || (c >= 'a' && c <= 'f')))
            break;
        v = v << 4 | (uint64_t)(is_digit(c) ? c - '0' : c - 'a' + 10);
    }
    if (i != 16 || text[i] != '\0')
        return refuse(r, t->line, "template_hash: '%s' is not 16 lowercase hex digits", text);
    *out = v;
    return 0;
}

/* A record in any of its forms: with or without the columns of schema
 * version 4 (spread and memory: *added) and with or without the device's
 * driver info and pipeline cache UUID in its key (schema version 5). The
 * values are left in the order of OG_DUMP_RECORD_SQL, a key without driver
 * info and UUID getting two empty strings (unknown). */
static int match_record(og_reader *r, int *added)
{
    static const og_token unknown = {.kind = OG_TOKEN_STRING};
    int device_added;
    r->nvals = 0;
    if (match(r, OG_DUMP_RECORD_HEAD, 3) != 0 ||
        match_either(r, OG_DUMP_RECORD_ADDED OG_DUMP_RECORD_DEVICE, OG_DUMP_RECORD_DEVICE, added) !=
            0 ||
        match_either(r, OG_DUMP_RECORD_DEVICE_ADDED OG_DUMP_RECORD_BODY, OG_DUMP_RECORD_BODY,
                     &device_added) != 0 ||
        match(r, *added ? ", ?, ?);" : ");", 0) != 0)
        return -1;
    if (!device_added) {
        memmove(&r->vals[6], &r->vals[4], (r->nvals - 4) * sizeof r->vals[0]);
        r->vals[4] = r->vals[5] = unknown;
        r->nvals += 2;
    }
    return 0;
}

static int read_record(og_reader *r)
{
    long line = r->lx.line;
    int added;
    if (match_record(r, &added) != 0)
        return -1;
    og_record *rec = &r->rec;
    const og_token *v = r->vals + 2; /* the values after the device's key */
    og_device_info *key = &r->dev;
    int dtype = 0, mode = 0;
    int64_t ta, tb, samples, accepted;
    memset(rec, 0, sizeof *rec);
    if (take_device_key(r, 4, 5, key) != 0 ||
        take_text(r, &v[4], "op", rec->key.op, sizeof rec->key.op) != 0 ||
        take_name(r, &v[5], "dtype", dtype_name, OG_UINT8 + 1, &dtype) != 0 ||
        take_name(r, &v[6], "mode", mode_name, OG_MODE_DETERMINISTIC + 1, &mode) != 0 ||
        take_int(r, &v[7], "trans_a", 0, 1, &ta) != 0 ||
        take_int(r, &v[8], "trans_b", 0, 1, &tb) != 0 ||
        take_int(r, &v[9], "m", 0, UINT32_MAX, &rec->m) != 0 ||
        take_int(r, &v[10], "n", 0, UINT32_MAX, &rec->n) != 0 ||
        take_int(r, &v[11], "k", 0, UINT32_MAX, &rec->k) != 0 ||
        take_int(r, &v[12], "batch", 1, UINT32_MAX, &rec->batch) != 0 ||
        take_text(r, &v[13], "template_name", rec->template_name, sizeof rec->template_name) != 0 ||
        take_hash(r, &v[14], &rec->template_hash) != 0 ||
        take_text(r, &v[15], "params", rec->params, sizeof rec->params) != 0 ||
        take_real(r, &v[16], "median_us", &rec->median_us) != 0 ||
        take_real(r, &v[17], "gflops", &rec->gflops) != 0 ||
        take_int(r, &v[18], "samples", 0, INT32_MAX, &samples) != 0 ||
        take_real(r, &v[19], "max_error", &rec->max_error) != 0 ||
        take_int(r, &v[20], "accepted", 0, 1, &accepted) != 0 ||
        take_text(r, &v[21], "reason", rec->reason, sizeof rec->reason) != 0 ||
        take_int(r, &v[22], "created", 1, INT64_MAX, &rec->created) != 0 ||
        take_text(r, &v[23], "source", rec->source, sizeof rec->source) != 0)
        return -1;
    if (added && (take_real(r, &v[24], "spread", &rec->spread) != 0 ||
                  take_text(r, &v[25], "memory", rec->memory, sizeof rec->memory) != 0))
        return -1;
    rec->key.dtype = (og_dtype)dtype;
    rec->key.mode = (og_mode)mode;
    rec->key.trans_a = (int)ta;
    rec->key.trans_b = (int)tb;
    rec->samples = (int)samples;
    rec->accepted = (int)accepted;

    char why[512];
    if (og_record_check(rec, why, sizeof why) != 0)
        return refuse(r, line, "record: %s", why);
    const og_known_device *known = find_device(r, key);
    char shown_key[192];
    if (known == NULL)
        return refuse(r, line, "record of device %s before its INSERT INTO devices",
                      key_text(key, shown_key, sizeof shown_key));
    if (r->db != NULL && og_db_insert(r->db, known->id, rec, r->msg, sizeof r->msg) != OG_OK) {
        r->st = OG_ERROR_DATABASE;
        return -1;
    }
    r->counts.records++;
    return 0;
}

/* Reads the whole dump: BEGIN;, devices and records, COMMIT;, the end. */
static int read_dump(og_reader *r)
{
    if (match(r, "BEGIN;", 0) != 0)
        return -1;
    for (;;) {
        og_token t;
        char buf[64];
        if (lex(r, &r->lx, &t) != 0)
            return -1;
        if (t.kind == OG_TOKEN_END)
            return refuse(r, t.line, "the dump ends without COMMIT (cut short?)");
        if (t.kind == OG_TOKEN_WORD && strcasecmp(t.text, "COMMIT") == 0) {
            if (match(r, "COMMIT;", 1) != 0 || lex(r, &r->lx, &t) != 0)
                return -1;
            if (t.kind != OG_TOKEN_END)
                return refuse(r, t.line, "%s after COMMIT", shown(&t, buf, sizeof buf));
            return 0;
        }
        if (t.kind != OG_TOKEN_WORD || strcasecmp(t.text, "INSERT") != 0)
            return refuse(r, t.line,
                          "%s: a dump holds INSERT INTO devices, INSERT INTO records and "
                          "COMMIT only",
                          shown(&t, buf, sizeof buf));
        og_token into, table;
        if (lex(r, &r->lx, &into) != 0 || lex(r, &r->lx, &table) != 0)
            return -1;
        if (into.kind != OG_TOKEN_WORD || strcasecmp(into.text, "INTO") != 0)
            return refuse(r, into.line, "expected 'INTO', found %s", shown(&into, buf, sizeof buf));
        int status;
        if (table.kind == OG_TOKEN_WORD && strcasecmp(table.text, "devices") == 0)
            status = read_device(r);
        else if (table.kind == OG_TOKEN_WORD && strcasecmp(table.text, "records") == 0)
            status = read_record(r);
        else
            status = refuse(r, table.line, "unknown table %s (devices or records)",
                            shown(&table, buf, sizeof buf));
        if (status != 0)
            return -1;
    }
}

/* One reading of the dump from the start of f, into db (NULL: checking only). */
static og_status read_pass(og_reader *r, FILE *f, og_db *db)
{
    r->lx = (og_lexer){.f = f, .line = 1};
    r->db = db;
    r->ndevices = 0;
    r->counts = (og_travel_counts){0, 0};
    r->st = OG_OK;
    if (read_dump(r) == 0 && ferror(f)) {
        snprintf(r->msg, sizeof r->msg, "%s: read error", r->name);
        r->st = OG_ERROR_DATABASE;
    }
    return r->st;
}

/* Both readings, the second in a transaction on db_path. */
static og_status import_file(og_reader *r, FILE *f, const char *db_path)
{
    og_status st = read_pass(r, f, NULL);
    if (st != OG_OK)
        return st;
    if (fseek(f, 0, SEEK_SET) != 0) {
        snprintf(r->msg, sizeof r->msg, "%s: cannot read it twice: %s", r->name, strerror(errno));
        return OG_ERROR_DATABASE;
    }
    og_db *db;
    st = og_db_open(db_path, 1, &db, r->msg, sizeof r->msg);
    if (st != OG_OK)
        return st;
    st = og_db_begin(db, r->msg, sizeof r->msg);
    if (st == OG_OK)
        st = read_pass(r, f, db);
    if (st == OG_OK)
        st = og_db_commit(db, r->msg, sizeof r->msg);
    if (st != OG_OK)
        og_db_rollback(db);
    og_db_close(db);
    return st;
}

og_status og_import(const char *dump_path, const char *db_path, og_travel_counts *counts, char *err,
                    size_t errlen)
{
    FILE *f = fopen(dump_path, "rb");
    if (f == NULL) {
        int e = errno;
        snprintf(err, errlen, "%s: cannot open: %s", dump_path, strerror(e));
        return e == ENOENT ? OG_ERROR_NOT_FOUND : OG_ERROR_DATABASE;
    }
    og_reader *r = calloc(1, sizeof *r);
    locale_t c = newlocale(LC_NUMERIC_MASK, "C", (locale_t)0);
    og_status st = OG_OK;
    if (r == NULL || c == (locale_t)0) {
        snprintf(err, errlen, "%s: out of memory", dump_path);
        st = OG_ERROR_OUT_OF_MEMORY;
    } else {
        /* The C locale for this thread: strtod reads '.' whatever the process's. */
        locale_t saved = uselocale(c);
        r->name = dump_path;
        st = import_file(r, f, db_path);
        uselocale(saved);
        if (st != OG_OK)
            snprintf(err, errlen, "%s", r->msg);
        else if (counts != NULL)
            *counts = r->counts;
        free(r->devices);
    }
    if (c != (locale_t)0)
        freelocale(c);
    free(r);
    fclose(f);
    return st;
}
