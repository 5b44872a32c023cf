/* c-threads: a thread per connection with blocking I/O. The main thread accepts; each connection
 * gets a detached pthread that reads and writes until the peer closes (sb_blocking.h). `workers` is
 * ignored. work busy-waits in the connection's own thread; counter increments a shared atomic; file
 * sends the file with sendfile(2) after its head (sb.h). */
#include "sb_blocking.h"
#include <pthread.h>
#include <stdint.h>

#define THREAD_STACK_BYTES (128 * 1024) /* the 8 MiB default would cap the connection count */

static struct sb_args args;

static void *conn_run(void *arg)
{
    sb_blocking_serve(&args, (int)(intptr_t)arg);
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
        int fd = sb_accept_blocking(lfd);
        pthread_t t;
        int err = pthread_create(&t, &attr, conn_run, (void *)(intptr_t)fd);
        if (err) {
            fprintf(stderr, "c-threads: pthread_create: %s\n", strerror(err));
            close(fd);
        }
    }
}
