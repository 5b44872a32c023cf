module serverbench/contestants/go

go 1.26.8

// fasthttp v1.74.0 is the newest whose dependencies the Go module proxy serves
// here: v1.76.0 and later need github.com/molecule-man/go-brrr v1.3.0, which it refuses.
require github.com/valyala/fasthttp v1.74.0

require (
	github.com/klauspost/compress v1.20.0 // indirect
	github.com/molecule-man/go-brrr v1.0.1 // indirect
	github.com/valyala/bytebufferpool v1.0.0 // indirect
	golang.org/x/sys v0.47.0 // indirect
)
