/* c-thread-pool: a bounded pool of threads with blocking I/O. A fixed number of threads (SB_POOL_THREADS,
 * 16 by default, whatever `workers` says) all block in accept(2) on one listening socket; the kernel hands
 * each new connection to one of them, which serves it until the peer closes (sb_blocking.h) and only
 * then accepts the next. Past 16 open connections the others wait in the kernel's accept queue,
 * unanswered: the price of bounding the threads, and what a pool's size is a guess about. */
#include "sb_blocking.h"
#include <pthread.h>

#define POOL_THREADS 16 /* the default: room for the conformance checks' 9 connections at once */

static struct sb_args args;
static int lfd;

static void *pool_run(void *unused)
{
    (void)unused;
    for (;;) sb_blocking_serve(&args, sb_accept_blocking(lfd));
    return NULL;
}

int main(int argc, char **argv)
{
    args = sb_parse(argc, argv, "hello hello-timeout echo work counter file");
    lfd = sb_listen(&args, 0, 0);
    args.workers = sb_env_count("SB_POOL_THREADS", POOL_THREADS);
    return sb_run_workers(&args, pool_run);
}
