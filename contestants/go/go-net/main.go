// go-net: one goroutine per connection with blocking-style Read and Write on
// net.Conn; the Go runtime parks each goroutine on its netpoller (epoll) and
// its work-stealing scheduler runs them on GOMAXPROCS threads.
package main

import (
	"log"
	"net"
	"runtime"
	"time"

	"serverbench/contestants/go/internal/cli"
)

var response = []byte("HTTP/1.1 200 OK\r\nContent-Length: 12\r\n\r\nHello world!")

func main() {
	args := cli.Parse("hello", "hello-timeout", "echo")
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
