// go-fasthttp: github.com/valyala/fasthttp, a worker-pool HTTP server that
// reuses request contexts and buffers. With --prefork the master binds the
// socket and re-executes itself as {workers} child processes, each serving
// on one thread and pinned to a CPU of its own (fasthttp/prefork).
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"log"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"sync"
	"syscall"

	"github.com/valyala/fasthttp"
	"github.com/valyala/fasthttp/prefork"
	"golang.org/x/sys/unix"

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

// serveFile answers GET /file/4k with fasthttp.ServeFileUncompressed (no
// Accept-Encoding, so no compressed copy is written beside the file). Its file
// cache keeps the file open between requests, not its bytes: a file this
// small is read with pread(2) into the response's write buffer at every
// request (sendfile(2) only above 8 KiB).
func serveFile(path string) fasthttp.RequestHandler {
	return func(ctx *fasthttp.RequestCtx) {
		if !ctx.IsGet() || string(ctx.Path()) != "/file/4k" {
			ctx.SetStatusCode(fasthttp.StatusNotFound)
			return
		}
		fasthttp.ServeFileUncompressed(ctx, path)
	}
}

func main() {
	args := cli.Parse("hello", "plaintext", "json", "file")
	runtime.GOMAXPROCS(args.Workers) // prefork starts one child per GOMAXPROCS

	handler := handlers[args.Scenario]
	if args.Scenario == "file" {
		handler = serveFile(filepath.Join(cli.Files(), "4k"))
	}
	server := &fasthttp.Server{
		Handler:               handler,
		NoDefaultServerHeader: true, // answers carry Date, Content-Type and Content-Length only
	}
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
	p.CommandProducer = pinnedChild()
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

// pinnedChild starts each child as prefork's default does (this binary again,
// FASTHTTP_PREFORK_CHILD=1, the listener as ExtraFiles), but from a thread
// pinned to the next of the master's CPUs: the child inherits that affinity,
// so it and every thread it starts stay on one CPU of their own. A child that
// replaces a dead one takes the next CPU in turn.
func pinnedChild() func(files []*os.File) (*exec.Cmd, error) {
	var allowed unix.CPUSet
	if err := unix.SchedGetaffinity(0, &allowed); err != nil {
		log.Fatal(err)
	}
	var cpus []int
	for cpu := 0; len(cpus) < allowed.Count(); cpu++ {
		if allowed.IsSet(cpu) {
			cpus = append(cpus, cpu)
		}
	}
	spawned := 0
	return func(files []*os.File) (*exec.Cmd, error) {
		exe, err := os.Executable()
		if err != nil {
			return nil, err
		}
		cmd := &exec.Cmd{
			Path:       exe,
			Args:       append([]string{exe}, os.Args[1:]...),
			Env:        append(os.Environ(), "FASTHTTP_PREFORK_CHILD=1"),
			Stdout:     os.Stdout,
			Stderr:     os.Stderr,
			ExtraFiles: files,
		}
		var one unix.CPUSet
		one.Set(cpus[spawned%len(cpus)])
		spawned++
		// Affinity belongs to a thread: keep this goroutine on the one that forks.
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		if err := unix.SchedSetaffinity(0, &one); err != nil {
			return nil, err
		}
		defer unix.SchedSetaffinity(0, &allowed)
		return cmd, cmd.Start()
	}
}
