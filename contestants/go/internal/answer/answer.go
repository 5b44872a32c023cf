// Package answer holds the answers of the work and counter scenarios that go-net and go-gnet share:
// GET /work/<N> busy-waits N µs of running time, GET /counter/<k> increments counter k. A handler
// appends its answer to out; keep is false when the connection is to be closed after it.
package answer

import (
	"bytes"
	"strconv"
	"sync"
	"time"
)

var (
	// BadRequest answers a malformed request (then the connection closes).
	BadRequest = []byte("HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n")
	// NotFound answers another path (the connection stays open).
	NotFound = []byte("HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n")
)

// number parses the decimal after prefix in target: ok is false for an empty
// or non-digit number or one above max; found is false for another path.
func number(target []byte, prefix string, max uint64) (n uint64, found, ok bool) {
	digits, found := bytes.CutPrefix(target, []byte(prefix))
	if !found || len(digits) == 0 {
		return 0, found, false
	}
	for _, d := range digits {
		if d < '0' || d > '9' {
			return 0, true, false
		}
		if n = n*10 + uint64(d-'0'); n > max {
			return 0, true, false
		}
	}
	return n, true, true
}

func appendOK(out []byte, value uint64) []byte {
	var digits [20]byte
	body := strconv.AppendUint(digits[:0], value, 10)
	out = append(out, "HTTP/1.1 200 OK\r\nContent-Length: "...)
	out = strconv.AppendInt(out, int64(len(body)), 10)
	out = append(out, "\r\n\r\n"...)
	return append(out, body...)
}

// workGapNs: a clock step this long or longer means the goroutine (or its
// thread) was not running, so the step is not counted as work.
const workGapNs = 50_000 * time.Nanosecond

// Work busy-waits N µs of running time on the monotonic clock (time.Now
// carries a monotonic reading; Sub uses it) on the calling goroutine
// (a connection's goroutine, or an event loop, whose other connections then
// wait too), then answers N. Only clock steps below workGapNs count, so the
// time the goroutine or its thread spent preempted is not charged to the
// request.
func Work(out, target []byte) ([]byte, bool) {
	n, found, ok := number(target, "/work/", 1_000_000)
	if !found {
		return append(out, NotFound...), true
	}
	if !ok {
		return append(out, BadRequest...), false
	}
	want := time.Duration(n) * time.Microsecond
	var total time.Duration
	for last := time.Now(); total < want; {
		t := time.Now()
		if d := t.Sub(last); d < workGapNs {
			total += d // a longer step: descheduled, not spent on this request
		}
		last = t
	}
	return appendOK(out, n), true
}

// The counters of the counter scenario, shared by every goroutine under one
// sync.Mutex.
var (
	countersMu sync.Mutex
	counters   = make([]uint64, 65536)
)

func Counter(out, target []byte) ([]byte, bool) {
	k, found, ok := number(target, "/counter/", 65535)
	if !found {
		return append(out, NotFound...), true
	}
	if !ok {
		return append(out, BadRequest...), false
	}
	countersMu.Lock()
	counters[k]++
	value := counters[k]
	countersMu.Unlock()
	return appendOK(out, value), true
}
