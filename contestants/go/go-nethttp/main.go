// go-nethttp: the standard library's net/http server. One goroutine per
// connection reads requests in order (so pipelined requests are answered in
// order); handlers are registered on a ServeMux.
package main

import (
	"encoding/json"
	"log"
	"net/http"
	"path/filepath"
	"runtime"

	"serverbench/contestants/go/internal/cli"
)

type ping struct {
	Sequence int64 `json:"sequence"`
}

func main() {
	args := cli.Parse("hello", "plaintext", "json", "file")
	runtime.GOMAXPROCS(args.Workers)

	// Only the started scenario's route is registered; every other path is 404.
	mux := http.NewServeMux()
	switch args.Scenario {
	case "hello":
		mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
			w.Write([]byte("Hello world!"))
		})
	case "plaintext":
		mux.HandleFunc("GET /plaintext", func(w http.ResponseWriter, r *http.Request) {
			// net/http adds Date and, for a body this small, Content-Length.
			w.Header().Set("Content-Type", "text/plain")
			w.Write([]byte("Hello, World!"))
		})
	case "json":
		mux.HandleFunc("POST /ping", func(w http.ResponseWriter, r *http.Request) {
			var p ping
			if err := json.NewDecoder(r.Body).Decode(&p); err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			body, err := json.Marshal(p)
			if err != nil {
				http.Error(w, err.Error(), http.StatusInternalServerError)
				return
			}
			w.Header().Set("Content-Type", "application/json")
			w.Write(body)
		})
	}
	var handler http.Handler = mux
	if args.Scenario == "file" {
		// A handler of its own rather than a ServeMux route: the mux answers a
		// path holding ".." with a redirect to its cleaned form, where the
		// contract asks for a 404.
		path := filepath.Join(cli.Files(), "4k")
		handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method != http.MethodGet || r.URL.Path != "/file/4k" {
				w.WriteHeader(http.StatusNotFound) // net/http adds Content-Length: 0
				return
			}
			// Opens the file for this request, writes the head with its first
			// 512 bytes, then the rest with sendfile(2) (the connection's
			// ReadFrom); adds Last-Modified, Accept-Ranges and a Content-Type
			// sniffed from the file's first bytes.
			http.ServeFile(w, r, path)
		})
	}

	server := &http.Server{
		Addr:    args.Addr,
		Handler: handler,
		// Refuse (431) headers over 64 KiB instead of the 1 MiB default, so a client cannot make the server buffer more.
		MaxHeaderBytes: 64 << 10,
	}
	log.Fatal(server.ListenAndServe())
}
