// go-net: one goroutine per connection with blocking-style Read and Write on
// net.Conn; the Go runtime parks each goroutine on its netpoller (epoll) and
// its work-stealing scheduler runs them on GOMAXPROCS threads.
package main

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"log"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"time"

	"serverbench/contestants/go/internal/answer"
	"serverbench/contestants/go/internal/cli"
)

var response = []byte("HTTP/1.1 200 OK\r\nContent-Length: 12\r\n\r\nHello world!")

func main() {
	args := cli.Parse("hello", "hello-timeout", "echo", "work", "counter", "file")
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
	case "file":
		path := filepath.Join(cli.Files(), "4k")
		serve = func(c net.Conn) { serveFile(c, path) }
	}

	// Go sets SO_REUSEADDR on listeners and TCP_NODELAY on every accepted connection.
	ln, err := net.Listen("tcp", args.Addr)
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

// echo writes back what each read into a 512-byte buffer returned. An
// explicit loop rather than io.Copy(c, c), which would splice in the kernel
// and skip the runtime's read/write path that this contestant measures.
func echo(c net.Conn) {
	defer c.Close()
	buf := make([]byte, 512)
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

// serveFile answers each GET /file/4k, in order, with the file opened for
// that request: the head in one write, then io.Copy from the *os.File to the
// *net.TCPConn, which the runtime turns into sendfile(2). Another target is
// a 404.
func serveFile(c net.Conn, path string) {
	defer c.Close()
	r := bufio.NewReaderSize(c, 4096)
	var target, head []byte
	for {
		var err error
		if target, err = readHead(r, target); err != nil {
			if err == errHead {
				c.Write(answer.BadRequest)
			}
			return
		}
		if string(target) != "/file/4k" {
			if _, err := c.Write(answer.NotFound); err != nil {
				return
			}
			continue
		}
		if head, err = sendFile(c, path, head[:0]); err != nil {
			return
		}
	}
}

// sendFile writes the answer carrying the file at path; head is scratch space for its head.
func sendFile(c net.Conn, path string, head []byte) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return head, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return head, err
	}
	head = append(head, "HTTP/1.1 200 OK\r\nContent-Length: "...)
	head = strconv.AppendInt(head, info.Size(), 10)
	head = append(head, "\r\n\r\n"...)
	if _, err := c.Write(head); err != nil {
		return head, err
	}
	_, err = io.Copy(c, f)
	return head, err
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
