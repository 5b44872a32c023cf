// go-fasthttp: github.com/valyala/fasthttp, a worker-pool HTTP server that
// reuses request contexts and buffers. With --prefork the master binds the
// socket and re-executes itself as {workers} child processes, each serving
// on one thread (fasthttp/prefork).
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"log"
	"os"
	"os/signal"
	"runtime"
	"sync"
	"syscall"

	"github.com/valyala/fasthttp"
	"github.com/valyala/fasthttp/prefork"

	"serverbench/contestants/go/internal/cli"
)

var preforked = flag.Bool("prefork", false, "serve from {workers} child processes")

type ping struct {
	Sequence int64 `json:"sequence"`
}

// One handler per scenario; each answers its one route and 404 for the rest.
var handlers = map[string]fasthttp.RequestHandler{
	"hello": func(ctx *fasthttp.RequestCtx) {
		if !ctx.IsGet() || string(ctx.Path()) != "/" {
			ctx.Error("Not Found", fasthttp.StatusNotFound)
			return
		}
		ctx.WriteString("Hello world!")
	},
	"plaintext": func(ctx *fasthttp.RequestCtx) {
		if !ctx.IsGet() || string(ctx.Path()) != "/plaintext" {
			ctx.Error("Not Found", fasthttp.StatusNotFound)
			return
		}
		ctx.SetContentType("text/plain") // Date is added by the server
		ctx.WriteString("Hello, World!")
	},
	"json": func(ctx *fasthttp.RequestCtx) {
		if !ctx.IsPost() || string(ctx.Path()) != "/ping" {
			ctx.Error("Not Found", fasthttp.StatusNotFound)
			return
		}
		var p ping
		if err := json.Unmarshal(ctx.PostBody(), &p); err != nil {
			ctx.Error(err.Error(), fasthttp.StatusBadRequest)
			return
		}
		body, err := json.Marshal(p)
		if err != nil {
			ctx.Error(err.Error(), fasthttp.StatusInternalServerError)
			return
		}
		ctx.SetContentType("application/json")
		ctx.SetBody(body)
	},
}

func main() {
	args := cli.Parse("hello", "plaintext", "json")
	runtime.GOMAXPROCS(args.Workers) // prefork starts one child per GOMAXPROCS

	server := &fasthttp.Server{Handler: handlers[args.Scenario]}
	if !*preforked {
		log.Fatal(server.ListenAndServe(args.Addr))
	}

	log.Fatal(servePreforked(server, args.Addr))
}

// servePreforked runs the prefork master (or, in a child, serves). The master
// passes SIGTERM on to its children and returns only after prefork has reaped
// them, then dies of the signal itself; left alone it would die at once and
// the children would linger until their parent-poll (every 500 ms) noticed.
func servePreforked(server *fasthttp.Server, addr string) error {
	p := prefork.New(server)
	p.Network = "tcp" // the default, tcp4, would refuse an IPv6 host
	if prefork.IsChild() {
		// Backstop for a master that dies without passing SIGTERM on (SIGKILL).
		p.OnMasterDeath = func() { os.Exit(1) }
		return p.ListenAndServe(addr)
	}

	var (
		mu       sync.Mutex
		children = map[int]bool{}
		stopping bool
	)
	p.OnChildSpawn = func(pid int) error {
		mu.Lock()
		defer mu.Unlock()
		if stopping {
			// prefork respawns the first child that exits; refusing it makes
			// prefork stop, SIGTERM the remaining children and wait for them.
			return errors.New("stopping on SIGTERM")
		}
		children[pid] = true
		return nil
	}
	p.OnChildRecover = func(oldPID, _ int) {
		mu.Lock()
		delete(children, oldPID)
		mu.Unlock()
	}

	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM)
	go func() {
		<-sigs
		mu.Lock()
		stopping = true
		for pid := range children {
			syscall.Kill(pid, syscall.SIGTERM)
		}
		mu.Unlock()
	}()

	err := p.ListenAndServe(addr)
	mu.Lock()
	stopped := stopping
	mu.Unlock()
	if stopped {
		signal.Reset(syscall.SIGTERM)
		syscall.Kill(os.Getpid(), syscall.SIGTERM)
		select {}
	}
	return err
}
