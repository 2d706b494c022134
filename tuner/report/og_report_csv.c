/* ogtune report: report.csv, every record with every column (RFC 4180). */
#include <string.h>

#include "og_report.h"

/* A field, in double quotes (inner quotes doubled) when it holds a comma, a
 * quote or a line break. */
static void csv_field(FILE *f, const char *s)
{
    if (!s[strcspn(s, ",\"\r\n")]) {
        fputs(s, f);
        return;
    }
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"')
            fputc('"', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

void og_report_write_csv(FILE *f, const og_report *rep)
{
    fputs("device,op,dtype,mode,trans_a,trans_b,m,n,k,batch,template,template_hash,params,"
          "median_us,gflops,samples,spread,memory,max_error,accepted,reason,created,stale\r\n",
          f);
    for (size_t i = 0; i < rep->n; i++) {
        const og_report_rec *x = &rep->recs[i];
        const og_record *r = &x->r;
        csv_field(f, x->device);
        fputc(',', f);
        csv_field(f, r->key.op);
        fprintf(f, ",%s,%s,%d,%d,%lld,%lld,%lld,%lld,", og_dtype_name(r->key.dtype),
                r->key.mode == OG_MODE_DETERMINISTIC ? "deterministic" : "fast", r->key.trans_a,
                r->key.trans_b, (long long)r->m, (long long)r->n, (long long)r->k,
                (long long)r->batch);
        csv_field(f, r->template_name);
        fprintf(f, ",%016llx,", (unsigned long long)r->template_hash);
        csv_field(f, r->params);
        fprintf(f, ",%.10g,%.10g,%d,%.10g,", r->median_us, r->gflops, r->samples, r->spread);
        csv_field(f, r->memory);
        fprintf(f, ",%.10g,%d,", r->max_error, r->accepted);
        csv_field(f, r->reason);
        fprintf(f, ",%lld,%d\r\n", (long long)r->created, x->stale);
    }
}
