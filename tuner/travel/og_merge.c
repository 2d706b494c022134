/* ogtune merge: the records of other databases into one (og_travel.h). */
#include <stdio.h>
#include <string.h>

#include "og_travel.h"

typedef struct og_merger {
    og_db *dst;
    const char *source; /* the source database as named in the call */
    og_merge_count *count;
    int64_t device; /* dst's row of the device being walked */
    og_record rec;
    og_status st;
    char *err;
    size_t errlen;
} og_merger;

/* og_db_walk's callback on a source: stops at the first error. */
static int merge_one(void *user, const og_device_info *dev, const og_record *rec)
{
    og_merger *m = user;
    if (rec == NULL) {
        m->st = og_db_device(m->dst, dev, &m->device, m->err, m->errlen);
        return m->st != OG_OK;
    }
    m->count->records++;
    char why[512];
    if (og_record_check(rec, why, sizeof why) != 0) {
        snprintf(m->err, m->errlen, "%s: record %s %lldx%lldx%lldx%lld '%s': %s", m->source,
                 rec->template_name, (long long)rec->m, (long long)rec->n, (long long)rec->k,
                 (long long)rec->batch, rec->params, why);
        m->st = OG_ERROR_DATABASE;
        return 1;
    }
    m->rec = *rec;
    if (m->rec.source[0] == '\0')
        snprintf(m->rec.source, sizeof m->rec.source, "%s", m->source);
    int stored = 0;
    m->st = og_db_merge_record(m->dst, m->device, &m->rec, &stored, m->err, m->errlen);
    m->count->stored += stored != 0;
    return m->st != OG_OK;
}

/* Merges one source into dst (in dst's open transaction). */
static og_status merge_source(og_db *dst, const char *path, og_merge_count *count, char *err,
                              size_t errlen)
{
    og_db *src;
    og_status st = og_db_open(path, 0, &src, err, errlen);
    if (st != OG_OK)
        return st;
    og_merger m = {.dst = dst, .source = path, .count = count, .err = err, .errlen = errlen};
    st = og_db_walk(src, merge_one, &m, err, errlen);
    og_db_close(src);
    return st != OG_OK ? st : m.st;
}

og_status og_merge(const char *dst_path, const char *const *srcs, size_t n, og_merge_count *counts,
                   char *err, size_t errlen)
{
    memset(counts, 0, n * sizeof *counts);
    og_db *dst;
    og_status st = og_db_open(dst_path, 1, &dst, err, errlen);
    if (st != OG_OK)
        return st;
    st = og_db_begin(dst, err, errlen);
    for (size_t i = 0; i < n && st == OG_OK; i++)
        st = merge_source(dst, srcs[i], &counts[i], err, errlen);
    if (st == OG_OK)
        st = og_db_commit(dst, err, errlen);
    if (st != OG_OK)
        og_db_rollback(dst);
    og_db_close(dst);
    return st;
}
