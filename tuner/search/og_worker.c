/* Measuring candidates in a worker process: the tuner's side starts
 * `ogtune worker`, sends it a job and then one og_params per candidate, and
 * waits for each answer with a time-out; the worker's side measures them on
 * its own Vulkan context. Both ends are the same binary, so the messages are
 * the structs themselves, over a Unix socket pair. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

#include "og_tuner.h"

/* The worker's end of the socket pair: requests in, answers out. */
enum { WORKER_FD = 3 };

/* Each message of the worker carries the errors the validation layer
 * reported in it since its previous message. */

/* The worker's first answer: its context and problem are ready, or why not. */
typedef struct ready_msg {
    int32_t status;
    uint32_t validation_errors;
    char error[512];
} ready_msg;

/* The answer for one candidate. */
typedef struct result_msg {
    int32_t status; /* OG_OK or OG_ERROR_DEVICE_LOST */
    uint32_t validation_errors;
    og_record record;
} result_msg;

/* The last message, once the worker has destroyed its context (the layer
 * reports the objects left behind then). */
typedef struct bye_msg {
    uint32_t validation_errors;
} bye_msg;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Sends len bytes; a closed peer is an error, not SIGPIPE. Returns 0 or -1. */
static int send_all(int fd, const void *buf, size_t len)
{
    for (const char *p = buf; len > 0;) {
        ssize_t n = send(fd, p, len, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return -1;
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

/* Receives len bytes, waiting until deadline (a now_s() time; 0: no limit).
 * Returns 0, -1 when the peer is gone, -2 at the deadline. */
static int recv_all(int fd, void *buf, size_t len, double deadline)
{
    for (char *p = buf; len > 0;) {
        if (deadline > 0) {
            double left = deadline - now_s();
            if (left <= 0)
                return -2;
            struct pollfd pfd = {.fd = fd, .events = POLLIN};
            int ready = poll(&pfd, 1, (int)(left * 1e3) + 1);
            if (ready < 0 && errno != EINTR)
                return -1;
            if (ready <= 0)
                continue; /* the deadline test above decides */
        }
        ssize_t n = recv(fd, p, len, 0);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return -1;
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

/* Seconds a worker whose socket has closed gets to finish leaving, so its
 * own exit status is read rather than the kill's. */
#define LEAVING_S 1.0

/* Closes the tuner's end and reaps the worker, which gets until deadline (a
 * now_s() time) to leave on its own before it is killed. Returns its wait
 * status; *killed says whether it had to be killed. */
static int reap(og_worker *w, double deadline, int *killed)
{
    int status = 0;
    close(w->fd);
    pid_t done = waitpid(w->pid, &status, WNOHANG);
    while (done == 0 && now_s() < deadline) {
        nanosleep(&(struct timespec){0, 10 * 1000 * 1000}, NULL);
        done = waitpid(w->pid, &status, WNOHANG);
    }
    *killed = done == 0;
    if (done <= 0) {
        kill(w->pid, SIGKILL);
        while (waitpid(w->pid, &status, 0) < 0 && errno == EINTR)
            ;
    }
    w->pid = 0;
    w->fd = -1;
    return status;
}

/* Whether a worker's wait status is a sanitizer's report: the sanitizer
 * build gives its reports the exit status OG_EXIT_SANITIZER
 * (tuner/commands/og_sanitize.c). */
static int sanitizer_report(int status)
{
    return WIFEXITED(status) && WEXITSTATUS(status) == OG_EXIT_SANITIZER;
}

/* What a wait status says ended a worker. */
static void describe(int status, char *how, size_t len)
{
    if (WIFSIGNALED(status))
        snprintf(how, len, "the worker process died from signal %d (%s)", WTERMSIG(status),
                 strsignal(WTERMSIG(status)));
    else
        snprintf(how, len, "the worker process exited with status %d", WEXITSTATUS(status));
}

/* Ends a worker the normal way: its socket shut for writing (the end of its
 * candidates), its last message once it has destroyed its context
 * (destroying it writes the driver's pipeline cache to the user's cache; a
 * kill in the middle would leave a temporary file there), then its exit,
 * within its time-out in all; one still there then is killed. Every result
 * had arrived, so anything but exit status 0 is a fault of the worker's own
 * code and an error of the run: a sanitizer's report among them, where
 * LeakSanitizer's check at that exit finds the blocks never freed. */
static og_status finish(og_worker *w, char *err, size_t errlen)
{
    double deadline = now_s() + w->timeout_s;
    bye_msg bye;
    shutdown(w->fd, SHUT_WR);
    if (recv_all(w->fd, &bye, sizeof bye, deadline) == 0)
        og_validation_count(w->ctx, bye.validation_errors);
    int killed, status = reap(w, deadline, &killed);
    char how[128];
    describe(status, how, sizeof how);
    if (killed)
        snprintf(err, errlen,
                 "tune: the worker did not end within %g s of its last candidate and was killed",
                 w->timeout_s);
    else if (sanitizer_report(status))
        snprintf(err, errlen,
                 "tune: a sanitizer reported an error in the worker as it ended (exit status "
                 "%d; the report is on standard error)",
                 OG_EXIT_SANITIZER);
    else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        snprintf(err, errlen, "tune: the worker did not end cleanly: %s", how);
    else
        return OG_OK;
    return OG_ERROR_UNSUPPORTED;
}

og_status og_worker_stop(og_worker *w, char *err, size_t errlen)
{
    return w->pid ? finish(w, err, errlen) : OG_OK;
}

/* The child between fork and exec: its socket on WORKER_FD, standard output
 * onto standard error (the tuner's output is the tuner's), killed when the
 * tuner dies (Linux). */
static void exec_worker(const char *exe, int fd, pid_t tuner)
{
#ifdef __linux__
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != tuner)
        _exit(127);
#else
    (void)tuner;
#endif
    /* Above WORKER_FD first, so dup2 never meets its own descriptor (which
     * would keep close-on-exec). */
    int high = fcntl(fd, F_DUPFD_CLOEXEC, 10);
    if (high < 0 || dup2(high, WORKER_FD) < 0 || dup2(STDERR_FILENO, STDOUT_FILENO) < 0)
        _exit(127);
    execl(exe, exe, "worker", (char *)NULL);
    _exit(127);
}

og_status og_worker_start(og_context *ctx, const char *exe, const og_subject_job *job,
                          double timeout_s, og_worker *w, char *err, size_t errlen)
{
    int sv[2];
    *w = (og_worker){.ctx = ctx, .pid = 0, .fd = -1, .timeout_s = timeout_s};
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
        snprintf(err, errlen, "tune: socket pair for a worker: %s", strerror(errno));
        return OG_ERROR_UNSUPPORTED;
    }
    pid_t tuner = getpid();
    pid_t pid = fork();
    if (pid == 0)
        exec_worker(exe, sv[1], tuner);
    close(sv[1]);
    if (pid < 0) {
        snprintf(err, errlen, "tune: starting a worker: %s", strerror(errno));
        close(sv[0]);
        return OG_ERROR_UNSUPPORTED;
    }
    w->pid = (int)pid;
    w->fd = sv[0];
    ready_msg ready;
    int got = send_all(w->fd, job, sizeof *job);
    if (got == 0)
        got = recv_all(w->fd, &ready, sizeof ready, now_s() + timeout_s);
    if (got == 0) {
        og_validation_count(ctx, ready.validation_errors);
        if (ready.status == OG_OK)
            return OG_OK;
        /* The worker's own failure, after which it leaves the normal way. */
        if (finish(w, err, errlen) != OG_OK)
            return OG_ERROR_UNSUPPORTED;
        ready.error[sizeof ready.error - 1] = '\0';
        snprintf(err, errlen, "%s", ready.error);
        /* The worker's own status, from the same og_status. */
        return ready.status > OG_OK && ready.status <= OG_ERROR_DEVICE_LOST
                   ? (og_status)ready.status
                   : OG_ERROR_VULKAN;
    }
    int killed, status = reap(w, got == -2 ? 0 : now_s() + LEAVING_S, &killed);
    char how[128];
    describe(status, how, sizeof how);
    if (got == -2)
        snprintf(err, errlen, "tune: the worker %s was not ready in %g s", exe, timeout_s);
    else if (sanitizer_report(status))
        snprintf(err, errlen,
                 "tune: a sanitizer reported an error in the worker %s before it was ready "
                 "(exit status %d; the report is on standard error)",
                 exe, OG_EXIT_SANITIZER);
    else
        snprintf(err, errlen, "tune: the worker %s ended before it was ready: %s", exe, how);
    return OG_ERROR_UNSUPPORTED;
}

og_status og_worker_measure(og_worker *w, const og_params *p, og_record *r, char *err,
                            size_t errlen)
{
    result_msg msg;
    int got = send_all(w->fd, p, sizeof *p);
    if (got == 0)
        got = recv_all(w->fd, &msg, sizeof msg, now_s() + w->timeout_s);
    r->accepted = 0;
    r->samples = 0;
    r->median_us = r->gflops = r->max_error = r->spread = 0;
    r->memory[0] = '\0';
    if (got == 0) {
        og_validation_count(w->ctx, msg.validation_errors);
        r->accepted = msg.record.accepted;
        r->samples = msg.record.samples;
        r->median_us = msg.record.median_us;
        r->gflops = msg.record.gflops;
        r->max_error = msg.record.max_error;
        r->spread = msg.record.spread;
        memcpy(r->memory, msg.record.memory, sizeof r->memory);
        r->memory[sizeof r->memory - 1] = '\0';
        memcpy(r->reason, msg.record.reason, sizeof r->reason);
        r->reason[sizeof r->reason - 1] = '\0';
        /* The next candidate gets a new process and device. */
        return msg.status == OG_ERROR_DEVICE_LOST ? finish(w, err, errlen) : OG_OK;
    }
    /* No answer in time (the worker is killed at once, as hung), or the
     * worker is gone. */
    int killed, status = reap(w, got == -2 ? 0 : now_s() + LEAVING_S, &killed);
    if (got == -2) {
        snprintf(r->reason, sizeof r->reason,
                 "%s: no result in %g s; the worker process was killed, a new one measures the "
                 "next candidate",
                 OG_REJECT_TIMEOUT, w->timeout_s);
        return OG_OK;
    }
    if (sanitizer_report(status)) {
        char params[OG_PARAMS_MAX];
        og_params_format(p, params, sizeof params);
        snprintf(err, errlen,
                 "tune: a sanitizer reported an error in the worker measuring %s (exit status "
                 "%d; the report is on standard error)",
                 params, OG_EXIT_SANITIZER);
        return OG_ERROR_UNSUPPORTED;
    }
    char how[128];
    describe(status, how, sizeof how);
    snprintf(r->reason, sizeof r->reason, "%s: %s", OG_REJECT_CRASH, how);
    return OG_OK;
}

/* The worker's side. */

/* The validation layer's errors in this process since the last call. */
static uint32_t unreported(uint32_t *reported)
{
    uint32_t total = og_validation_errors_total(), n = total - *reported;
    *reported = total;
    return n;
}

int og_worker_serve(void)
{
    const int fd = WORKER_FD;
    og_subject_job job;
    ready_msg ready = {0};
    og_context *ctx = NULL;
    og_subject sub;
    uint32_t reported = 0;
    memset(&sub, 0, sizeof sub);
    if (recv_all(fd, &job, sizeof job, 0) != 0)
        return 1; /* no job: the tuner is gone */
    ready.status = og_context_create(NULL, &ctx);
    if (ready.status == OG_OK)
        ready.status = og_subject_create(ctx, &job, &sub);
    if (ready.status != OG_OK)
        snprintf(ready.error, sizeof ready.error, "tune: worker: %s", og_context_last_error(ctx));
    ready.validation_errors = unreported(&reported);
    int sent = send_all(fd, &ready, sizeof ready) == 0, lost = 0;
    og_params p;
    /* Candidates until the tuner shuts its end, or until the device is lost
     * (this context is done; the tuner starts another worker). */
    while (sent && ready.status == OG_OK && !lost && recv_all(fd, &p, sizeof p, 0) == 0) {
        result_msg msg;
        memset(&msg, 0, sizeof msg);
        og_plant plant = og_plant_for(&p);
        if (plant == OG_PLANT_DEVICE_LOST) {
            msg.status = OG_ERROR_DEVICE_LOST;
            snprintf(msg.record.reason, sizeof msg.record.reason,
                     "%s: VK_ERROR_DEVICE_LOST planted by OG_TUNE_FAULT", OG_REJECT_DEVICE_LOST);
        } else {
            og_plant_fault(plant, ctx);
            msg.status = og_subject_measure(&sub, &p, &msg.record);
        }
        msg.validation_errors = unreported(&reported);
        sent = send_all(fd, &msg, sizeof msg) == 0;
        lost = msg.status == OG_ERROR_DEVICE_LOST;
    }
    og_subject_destroy(&sub);
    og_context_destroy(ctx);
    bye_msg bye = {.validation_errors = unreported(&reported)};
    /* 0 only for the end the tuner waits for: everything sent. */
    return sent && send_all(fd, &bye, sizeof bye) == 0 ? 0 : 1;
}
