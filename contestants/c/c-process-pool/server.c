/* c-process-pool: a pool of worker processes with blocking I/O, as Apache's prefork MPM and serverino
 * run. The parent opens one listening socket and forks a fixed number of single-threaded workers
 * (SB_POOL_PROCESSES, 16 by default, whatever `workers` says), not pinned: the scheduler places them.
 * Each blocks in accept(2) on the shared socket, serves one connection until the peer closes
 * (sb_blocking.h), then accepts the next; connections beyond the pool wait in the accept queue. counter's
 * atomics are mapped MAP_SHARED by sb_parse before the fork, so every worker increments the same ones. */
#include "sb_blocking.h"

#define POOL_PROCESSES 16 /* the default: room for the conformance checks' 9 connections at once */

static struct sb_args args;
static int lfd;

static void *worker_run(void *unused)
{
    (void)unused;
    for (;;) sb_blocking_serve(&args, sb_accept_blocking(lfd));
    return NULL;
}

int main(int argc, char **argv)
{
    args = sb_parse(argc, argv, "hello hello-timeout echo work counter file");
    lfd = sb_listen(&args, 0, 0); /* before the fork: one socket, one accept queue for all */
    return sb_fork_workers(sb_env_count("SB_POOL_PROCESSES", POOL_PROCESSES), 0, worker_run, "c-process-pool");
}
