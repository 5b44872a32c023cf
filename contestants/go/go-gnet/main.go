// go-gnet: github.com/panjf2000/gnet/v2, an event-driven server on per-core
// epoll loops. With SO_REUSEPORT every loop owns its own listening socket, so
// the kernel spreads connections over the loops and a connection stays on one.
package main

import (
	"log"
	"runtime"

	"github.com/panjf2000/gnet/v2"

	"serverbench/contestants/go/internal/cli"
)

var response = []byte("HTTP/1.1 200 OK\r\nContent-Length: 12\r\n\r\nHello world!")

type server struct {
	gnet.BuiltinEventEngine
	echo bool
}

// OnTraffic runs on the connection's event loop after each read.
func (s *server) OnTraffic(c gnet.Conn) gnet.Action {
	if s.echo {
		// Write sends at once; what the socket does not take is buffered
		// and flushed when it turns writable.
		data, _ := c.Next(-1)
		c.Write(data)
	} else {
		c.Discard(-1)
		c.Write(response)
	}
	return gnet.None
}

func main() {
	args := cli.Parse("hello", "echo")
	runtime.GOMAXPROCS(args.Workers)

	err := gnet.Run(&server{echo: args.Scenario == "echo"}, "tcp://"+args.Addr,
		gnet.WithMulticore(true),
		gnet.WithNumEventLoop(args.Workers),
		gnet.WithReusePort(true),
		gnet.WithReuseAddr(true),
	)
	log.Fatal(err)
}
