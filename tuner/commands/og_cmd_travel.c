/* ogtune export, import and merge: databases that travel (og_travel.h). */
#include <stdlib.h>
#include <unistd.h>

#include "og_commands.h"
#include "og_travel.h"

int og_cmd_export(const og_cli *o)
{
    char path[1024], err[1024];
    if (o->json && !o->out) {
        og_cli_fail("ogtune export: --json describes the file of --out (without --out, the "
                    "dump is the output)\n");
        return 2;
    }
    og_cli_db_path(o, path, sizeof path);
    og_db *db;
    if (og_db_open(path, 0, &db, err, sizeof err) != OG_OK) {
        og_cli_fail("ogtune export: %s\n", err);
        return 1;
    }
    FILE *f = o->out ? fopen(o->out, "w") : stdout;
    if (f == NULL) {
        perror(o->out);
        og_db_close(db);
        return 1;
    }
    og_travel_counts counts;
    og_status st = og_export(db, f, &counts, err, sizeof err);
    og_db_close(db);
    if (o->out && fclose(f) != 0 && st == OG_OK) {
        snprintf(err, sizeof err, "export: writing %s failed", o->out);
        st = OG_ERROR_DATABASE;
    }
    if (st != OG_OK) {
        og_cli_fail("ogtune export: %s\n", err);
        if (o->out)
            unlink(o->out); /* no half dump left behind */
        return 1;
    }
    if (o->json) {
        printf("{\"database\":");
        og_json_string(stdout, path);
        printf(",\"out\":");
        og_json_string(stdout, o->out);
        printf(",\"devices\":%zu,\"records\":%zu}\n", counts.devices, counts.records);
    } else if (o->out) {
        printf("exported %zu records of %zu devices from %s to %s\n", counts.records,
               counts.devices, path, o->out);
    }
    return 0;
}

int og_cmd_import(const og_cli *o)
{
    char path[1024], err[1024];
    og_cli_db_path(o, path, sizeof path);
    og_travel_counts counts;
    if (og_import(o->args[0], path, &counts, err, sizeof err) != OG_OK) {
        og_cli_fail("ogtune import: %s\n", err);
        return 1;
    }
    if (o->json) {
        printf("{\"database\":");
        og_json_string(stdout, path);
        printf(",\"dump\":");
        og_json_string(stdout, o->args[0]);
        printf(",\"devices\":%zu,\"records\":%zu}\n", counts.devices, counts.records);
    } else {
        printf("imported %zu records of %zu devices from %s into %s\n", counts.records,
               counts.devices, o->args[0], path);
    }
    return 0;
}

int og_cmd_merge(const og_cli *o)
{
    char path[1024], err[1024];
    og_cli_db_path(o, path, sizeof path);
    og_merge_count *counts = calloc((size_t)o->nargs, sizeof *counts);
    if (counts == NULL) {
        og_cli_fail("ogtune merge: out of memory\n");
        return 1;
    }
    int rc = 0;
    if (og_merge(path, o->args, (size_t)o->nargs, counts, err, sizeof err) != OG_OK) {
        og_cli_fail("ogtune merge: %s\n", err);
        rc = 1;
    } else if (o->json) {
        printf("{\"database\":");
        og_json_string(stdout, path);
        printf(",\"sources\":[");
        for (int i = 0; i < o->nargs; i++) {
            printf("%s{\"source\":", i ? "," : "");
            og_json_string(stdout, o->args[i]);
            printf(",\"records\":%zu,\"stored\":%zu}", counts[i].records, counts[i].stored);
        }
        printf("]}\n");
    } else {
        for (int i = 0; i < o->nargs; i++)
            printf("%s: %zu records, %zu stored in %s\n", o->args[i], counts[i].records,
                   counts[i].stored, path);
    }
    free(counts);
    return rc;
}
