// go-gnet: github.com/panjf2000/gnet/v2, an event-driven server on per-core
// epoll loops. With SO_REUSEPORT every loop owns its own listening socket, so
// the kernel spreads connections over the loops and a connection stays on one.
package main

import (
	"bytes"
	"log"
	"runtime"

	"github.com/panjf2000/gnet/v2"

	"serverbench/contestants/go/internal/answer"
	"serverbench/contestants/go/internal/cli"
)

var response = []byte("HTTP/1.1 200 OK\r\nContent-Length: 12\r\n\r\nHello world!")

type server struct {
	gnet.BuiltinEventEngine
	scenario string
}

// OnTraffic runs on the connection's event loop after each read.
func (s *server) OnTraffic(c gnet.Conn) gnet.Action {
	switch s.scenario {
	case "echo":
		// What this read returned (at most 1 KiB, see main). Write
		// sends at once; what the socket does not take is buffered and
		// flushed when it turns writable.
		data, _ := c.Next(-1)
		c.Write(data)
	case "work":
		return serveHTTP(c, answer.Work)
	case "counter":
		return serveHTTP(c, answer.Counter)
	default:
		c.Discard(-1)
		c.Write(response)
	}
	return gnet.None
}

func main() {
	args := cli.Parse("hello", "echo", "work", "counter")
	runtime.GOMAXPROCS(args.Workers)

	options := []gnet.Option{
		gnet.WithMulticore(true),
		gnet.WithNumEventLoop(args.Workers),
		gnet.WithReusePort(true),
		gnet.WithReuseAddr(true),
		gnet.WithTCPNoDelay(gnet.TCPNoDelay), // gnet's default, stated
	}
	if args.Scenario == "echo" {
		// The contract's 512-byte read buffer (64 KiB by default); gnet raises
		// any cap below 1 KiB to 1 KiB, so each read takes at most 1,024 bytes.
		options = append(options, gnet.WithReadBufferCap(512))
	}
	log.Fatal(gnet.Run(&server{scenario: args.Scenario}, "tcp://"+args.Addr, options...))
}

// A handler appends the answer to the request target to out; keep is false
// when the connection is to be closed after it.
type handler func(out, target []byte) (_ []byte, keep bool)

// maxHead bounds what a connection may buffer without completing a request
// head; more is refused with 400.
const maxHead = 8 << 10

// serveHTTP answers, in order, every complete GET request head (no bodies)
// that the connection has buffered, in one write; an incomplete head stays in
// gnet's inbound buffer until the next read completes it.
func serveHTTP(c gnet.Conn, handle handler) gnet.Action {
	// Each connection keeps its output buffer in its context; Write copies
	// what the socket does not take at once, so it is reused.
	out, _ := c.Context().(*[]byte)
	if out == nil {
		out = new([]byte)
		c.SetContext(out)
	}
	buf, _ := c.Peek(-1)
	consumed, keep := 0, true
	for keep {
		// Empty lines before a request line are ignored.
		rest := bytes.TrimLeft(buf[consumed:], "\r\n")
		consumed = len(buf) - len(rest)
		end := bytes.Index(rest, []byte("\r\n\r\n"))
		if end < 0 {
			break
		}
		consumed += end + 4
		line, _, _ := bytes.Cut(rest[:end], []byte("\r\n"))
		// METHOD SP target SP HTTP-version
		_, line, ok1 := bytes.Cut(line, []byte(" "))
		target, _, ok2 := bytes.Cut(line, []byte(" "))
		if !ok1 || !ok2 {
			*out, keep = append(*out, answer.BadRequest...), false
			break
		}
		*out, keep = handle(*out, target)
	}
	if keep && len(buf)-consumed > maxHead {
		*out, keep = append(*out, answer.BadRequest...), false
	}
	c.Discard(consumed)
	if len(*out) > 0 {
		c.Write(*out)
		*out = (*out)[:0]
	}
	if !keep {
		return gnet.Close // gnet writes what is still buffered before it closes
	}
	return gnet.None
}
