/* c-threads: a thread per connection with blocking I/O. The main thread accepts; each connection
 * gets a detached pthread that reads and writes until the peer closes. `workers` is ignored.
 * work busy-waits in the connection's own thread; counter increments a shared atomic (sb.h). */
#include "sb.h"
#include <pthread.h>
#include <stdint.h>
#include <sys/time.h>

#define THREAD_STACK_BYTES (128 * 1024) /* the 8 MiB default would cap the connection count */

static struct sb_args args;

/* Blocking write of all n bytes; 0 on success. */
static int write_all(int fd, const char *p, size_t n)
{
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0) return -1; /* includes EAGAIN: SO_SNDTIMEO expired */
        p += w, n -= w;
    }
    return 0;
}

/* work, counter: answers the complete requests in in[0..*in_len); 0 to read on, -1 to close. */
static int serve(int fd, char *in, size_t *in_len)
{
    char out[SB_BUF_BYTES];
    int bad = 0;
    for (size_t n; (n = sb_serve(args.scenario, in, in_len, out, sizeof out, &bad)) > 0;)
        if (write_all(fd, out, n) || bad) return -1;
    return 0;
}

static void *conn_run(void *arg)
{
    int fd = (int)(intptr_t)arg;
    char buf[SB_BUF_BYTES];
    size_t in_len = 0; /* work, counter: request bytes in buf not yet answered */
    sb_nodelay(fd);
    if (args.scenario == SB_HELLO_TIMEOUT) { /* the kernel bounds each read and write */
        struct timeval tv = { .tv_sec = args.timeout_ms / 1000, .tv_usec = args.timeout_ms % 1000 * 1000 };
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    }
    for (;;) {
        ssize_t n = read(fd, buf + in_len, sizeof buf - in_len);
        if (n <= 0) break; /* closed, error or timeout */
        if (args.scenario >= SB_WORK ? (in_len += n, serve(fd, buf, &in_len))
            : args.scenario == SB_ECHO ? write_all(fd, buf, n)
                                       : write_all(fd, SB_HELLO_RESPONSE, SB_HELLO_LEN))
            break;
    }
    close(fd);
    return NULL;
}

int main(int argc, char **argv)
{
    args = sb_parse(argc, argv, "hello hello-timeout echo work counter");
    int lfd = sb_listen(&args, 0, 0);
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    pthread_attr_setstacksize(&attr, THREAD_STACK_BYTES);
    for (;;) {
        int fd = accept(lfd, NULL, NULL);
        if (fd < 0) {
            if (errno == EMFILE || errno == ENFILE) usleep(1000); /* wait for a connection to end */
            continue;
        }
        pthread_t t;
        int err = pthread_create(&t, &attr, conn_run, (void *)(intptr_t)fd);
        if (err) {
            fprintf(stderr, "c-threads: pthread_create: %s\n", strerror(err));
            close(fd);
        }
    }
}
