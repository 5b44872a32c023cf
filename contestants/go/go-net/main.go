// go-net: one goroutine per connection with blocking-style Read and Write on
// net.Conn; the Go runtime parks each goroutine on its netpoller (epoll) and
// its work-stealing scheduler runs them on GOMAXPROCS threads.
package main

import (
	"bufio"
	"bytes"
	"errors"
	"log"
	"net"
	"runtime"
	"time"

	"serverbench/contestants/go/internal/answer"
	"serverbench/contestants/go/internal/cli"
)

var response = []byte("HTTP/1.1 200 OK\r\nContent-Length: 12\r\n\r\nHello world!")

func main() {
	args := cli.Parse("hello", "hello-timeout", "echo", "work", "counter")
	runtime.GOMAXPROCS(args.Workers)

	var serve func(net.Conn)
	switch args.Scenario {
	case "hello":
		serve = func(c net.Conn) { hello(c, 0) }
	case "hello-timeout":
		timeout := cli.Timeout()
		serve = func(c net.Conn) { hello(c, timeout) }
	case "echo":
		serve = echo
	case "work":
		serve = func(c net.Conn) { serveHTTP(c, answer.Work) }
	case "counter":
		serve = func(c net.Conn) { serveHTTP(c, answer.Counter) }
	}

	ln, err := net.Listen("tcp", args.Addr) // Go sets SO_REUSEADDR on listeners
	if err != nil {
		log.Fatal(err)
	}
	for {
		c, err := ln.Accept()
		if err != nil {
			// Out of descriptors and the like: back off instead of spinning.
			log.Print(err)
			time.Sleep(10 * time.Millisecond)
			continue
		}
		go serve(c)
	}
}

// hello answers every read with the fixed response; a non-zero timeout bounds
// each read and each write, and expiry closes the connection.
func hello(c net.Conn, timeout time.Duration) {
	defer c.Close()
	buf := make([]byte, 4096)
	for {
		if timeout > 0 {
			c.SetReadDeadline(time.Now().Add(timeout))
		}
		if _, err := c.Read(buf); err != nil {
			return
		}
		if timeout > 0 {
			c.SetWriteDeadline(time.Now().Add(timeout))
		}
		if _, err := c.Write(response); err != nil {
			return
		}
	}
}

// echo writes back what each read returned. An explicit loop rather than
// io.Copy(c, c), which would splice in the kernel and skip the runtime's
// read/write path that this contestant measures.
func echo(c net.Conn) {
	defer c.Close()
	buf := make([]byte, 64<<10)
	for {
		n, err := c.Read(buf)
		if n > 0 {
			if _, werr := c.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

var (
	errHead = errors.New("malformed request head")
)

// maxHead bounds the size of a request head; a longer one is refused with 400.
const maxHead = 8 << 10

// A handler appends the answer to the request target to out; keep is false
// when the connection is to be closed after it.
type handler func(out, target []byte) (_ []byte, keep bool)

// serveHTTP reads GET request heads (no bodies) one after another, so
// pipelined requests are answered in order, and writes the answers gathered so
// far once no further request is already buffered.
func serveHTTP(c net.Conn, handle handler) {
	defer c.Close()
	r := bufio.NewReaderSize(c, 4096) // a longer line closes the connection
	var target, out []byte
	for {
		var err error
		target, err = readHead(r, target)
		if err != nil {
			if err == errHead {
				c.Write(append(out, answer.BadRequest...))
			}
			return
		}
		var keep bool
		out, keep = handle(out, target)
		if !keep || !bytes.Contains(peekBuffered(r), []byte("\r\n\r\n")) {
			if _, err := c.Write(out); err != nil || !keep {
				return
			}
			out = out[:0]
		}
	}
}

// peekBuffered returns what r holds already, without reading.
func peekBuffered(r *bufio.Reader) []byte {
	b, _ := r.Peek(r.Buffered())
	return b
}

// readHead reads one request head and returns its target, copied into dst.
func readHead(r *bufio.Reader, dst []byte) ([]byte, error) {
	line, err := r.ReadSlice('\n')
	for err == nil && len(bytes.TrimRight(line, "\r\n")) == 0 {
		line, err = r.ReadSlice('\n') // empty lines before a request line are ignored
	}
	if err != nil {
		return dst, err
	}
	// METHOD SP target SP HTTP-version
	_, rest, ok1 := bytes.Cut(line, []byte(" "))
	target, _, ok2 := bytes.Cut(rest, []byte(" "))
	if !ok1 || !ok2 {
		return dst, errHead
	}
	dst = append(dst[:0], target...)
	for size := len(line); ; size += len(line) {
		line, err = r.ReadSlice('\n')
		if err != nil {
			return dst, err
		}
		if size > maxHead {
			return dst, errHead
		}
		if len(line) == 1 || (len(line) == 2 && line[0] == '\r') {
			return dst, nil
		}
	}
}
