/* c-threads: a thread per connection with blocking I/O. The main thread accepts; each connection
 * gets a detached pthread that reads and writes until the peer closes. `workers` is ignored.
 * work busy-waits in the connection's own thread; counter increments a shared atomic; file sends
 * the file with sendfile(2) after its head (sb.h). */
#include "sb.h"
#include <pthread.h>
#include <stdint.h>
#include <sys/sendfile.h>
#include <sys/time.h>

#define THREAD_STACK_BYTES (128 * 1024) /* the 8 MiB default would cap the connection count */

static struct sb_args args;

/* Blocking write of all n bytes (flags: send(2)'s); 0 on success. */
static int write_all(int fd, const char *p, size_t n, int flags)
{
    while (n > 0) {
        ssize_t w = send(fd, p, n, flags);
        if (w < 0) return -1; /* includes EAGAIN: SO_SNDTIMEO expired */
        p += w, n -= w;
    }
    return 0;
}

/* file: the whole file, from the page cache to the socket; 0 on success. */
static int send_file(int fd)
{
    for (off_t off = 0; off < sb_file_bytes;)
        if (sendfile(fd, sb_file_fd, &off, sb_file_bytes - off) <= 0) return -1;
    return 0;
}

/* work, counter, file: answers the complete requests in in[0..*in_len); 0 to read on, -1 to close. */
static int serve(int fd, char *in, size_t *in_len)
{
    char out[SB_BUF_BYTES];
    int last = 0, file = 0;
    for (size_t n; (n = sb_serve(args.scenario, in, in_len, out, sizeof out, &last, &file)) > 0; file = 0)
        /* MSG_MORE: a file's head waits to leave in the same packets as the file */
        if (write_all(fd, out, n, file ? MSG_MORE : 0) || (file && send_file(fd)) || last) return -1;
    return 0;
}

static void *conn_run(void *arg)
{
    int fd = (int)(intptr_t)arg;
    char buf[SB_BUF_BYTES];
    size_t in_len = 0; /* work, counter, file: request bytes in buf not yet answered */
    sb_nodelay(fd);
    if (args.scenario == SB_HELLO_TIMEOUT) { /* the kernel bounds each read and write */
        struct timeval tv = { .tv_sec = args.timeout_ms / 1000, .tv_usec = args.timeout_ms % 1000 * 1000 };
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    }
    for (;;) {
        ssize_t n = read(fd, buf + in_len, args.scenario == SB_ECHO ? SB_ECHO_BYTES : sizeof buf - in_len);
        if (n <= 0) break; /* closed, error or timeout */
        if (args.scenario >= SB_WORK ? (in_len += n, serve(fd, buf, &in_len))
            : args.scenario == SB_ECHO ? write_all(fd, buf, n, 0)
                                       : write_all(fd, SB_HELLO_RESPONSE, SB_HELLO_LEN, 0))
            break;
    }
    close(fd);
    return NULL;
}

int main(int argc, char **argv)
{
    args = sb_parse(argc, argv, "hello hello-timeout echo work counter file");
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
