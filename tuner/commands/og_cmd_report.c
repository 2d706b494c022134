/* ogtune report: report.html and report.csv from the tuning database, each
 * written to a temporary file beside it and renamed over it when complete. */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "og_commands.h"
#include "og_report.h"

/* Writes path (the page when html, else the CSV) through path.PID.tmp.
 * Returns 0, or -1 with the reason, naming the path, in err. */
static int write_file(const char *path, int html, const og_report *rep, const char *db_path,
                      char *err, size_t errlen)
{
    char tmp[4200];
    if (snprintf(tmp, sizeof tmp, "%s.%ld.tmp", path, (long)getpid()) >= (int)sizeof tmp) {
        snprintf(err, errlen, "%s: path too long", path);
        return -1;
    }
    int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd < 0) {
        snprintf(err, errlen, "%s: %s", tmp, strerror(errno));
        return -1;
    }
    FILE *f = fdopen(fd, "w");
    if (!f) {
        snprintf(err, errlen, "%s: %s", tmp, strerror(errno));
        close(fd);
        unlink(tmp);
        return -1;
    }
    int rc = 0;
    errno = 0;
    if (html)
        rc = og_report_write_html(f, rep, db_path);
    else
        og_report_write_csv(f, rep);
    if (rc == 0 && (fflush(f) != 0 || ferror(f) || fsync(fileno(f)) != 0))
        rc = -1;
    int saved = errno;
    if (fclose(f) != 0 && rc == 0) {
        rc = -1;
        saved = errno;
    }
    if (rc == 0 && rename(tmp, path) != 0) {
        rc = -1;
        saved = errno;
    }
    if (rc != 0) {
        snprintf(err, errlen, "%s: %s", path, saved ? strerror(saved) : "write error");
        unlink(tmp);
    }
    return rc;
}

/* Writes both files into dir (created when missing). */
static int write_report(const og_cli *o, const char *dir, const og_report *rep, const char *db)
{
    char html[4096], csv[4096], err[4400];
    if (snprintf(html, sizeof html, "%s/report.html", dir) >= (int)sizeof html ||
        snprintf(csv, sizeof csv, "%s/report.csv", dir) >= (int)sizeof csv) {
        og_cli_fail("ogtune report: %s: path too long\n", dir);
        return 1;
    }
    if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
        og_cli_fail("ogtune report: %s: %s\n", dir, strerror(errno));
        return 1;
    }
    if (write_file(html, 1, rep, db, err, sizeof err) != 0 ||
        write_file(csv, 0, rep, db, err, sizeof err) != 0) {
        og_cli_fail("ogtune report: %s\n", err);
        return 1;
    }
    if (o->json) {
        fputs("{\"html\":", stdout);
        og_json_string(stdout, html);
        fputs(",\"csv\":", stdout);
        og_json_string(stdout, csv);
        printf(",\"records\":%zu,\"shapes\":%zu,\"stale\":%zu}\n", rep->n, rep->n_groups,
               rep->stale);
    } else {
        printf("%s: %zu records of %zu tuned shapes (%zu stale)\n%s\n", html, rep->n, rep->n_groups,
               rep->stale, csv);
    }
    return 0;
}

int og_cmd_report(const og_cli *o)
{
    char path[1024], err[1024];
    og_db *db;
    if (o->db)
        snprintf(path, sizeof path, "%s", o->db);
    else
        og_default_db_path(path, sizeof path);
    if (og_db_open(path, 0, &db, err, sizeof err) != OG_OK) {
        og_cli_fail("ogtune report: %s\n", err);
        return 1;
    }
    og_report rep;
    og_status st = og_report_load(db, &rep, err, sizeof err);
    og_db_close(db);
    if (st != OG_OK) {
        /* The database's own errors name it already. */
        og_cli_fail("ogtune report: %s%s%s\n", st == OG_ERROR_OUT_OF_MEMORY ? path : "",
                    st == OG_ERROR_OUT_OF_MEMORY ? ": " : "", err);
        return 1;
    }
    int rc = write_report(o, o->out ? o->out : ".", &rep, path);
    og_report_free(&rep);
    return rc;
}
