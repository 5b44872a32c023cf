/// sb.deadlines: a worker's timers for hello-timeout, kept beside epoll_wait (whose timeout is the
/// nearest deadline), as nginx keeps its timer tree.
module sb.deadlines;

import core.time : MonoTime;

/// One operation's timer, embedded in its connection; `owner` is that connection.
struct Deadline {
    Deadline* prev, next;
    long atMs;
    void* owner;
    bool armed;
}

/// The armed timers in deadline order. Every deadline is now + SB_TIMEOUT_MS, so a new one is never
/// earlier than the last: appending keeps the list sorted, and arming and cancelling are O(1).
struct DeadlineList {
    Deadline* first, last;

    /// Arms `d` to fire `timeoutMs` after `nowMs` (a deadline still armed is moved).
    void arm(Deadline* d, long nowMs, long timeoutMs)
    {
        cancel(d);
        d.atMs = nowMs + timeoutMs;
        d.armed = true;
        d.prev = last, d.next = null;
        if (last) last.next = d;
        else first = d;
        last = d;
    }

    void cancel(Deadline* d)
    {
        if (!d.armed) return;
        if (d.prev) d.prev.next = d.next;
        else first = d.next;
        if (d.next) d.next.prev = d.prev;
        else last = d.prev;
        d.prev = d.next = null;
        d.armed = false;
    }

    /// epoll_wait's timeout: until the nearest deadline, -1 when none is armed.
    int waitMs(long nowMs) const
    {
        if (!first) return -1;
        long left = first.atMs - nowMs;
        return left > 0 ? cast(int) left : 0;
    }

    /// Removes and returns the owner of a deadline that has passed, or null.
    void* popExpired(long nowMs)
    {
        if (!first || first.atMs > nowMs) return null;
        auto d = first;
        cancel(d);
        return d.owner;
    }
}

/// The monotonic clock in milliseconds, as the loops read it once per pass.
long monoNowMs()
{
    return (MonoTime.currTime - MonoTime.zero).total!"msecs";
}
