module serverbench/contestants/go

go 1.26.8

// fasthttp v1.74.0 is the newest that builds from what the Go module proxy serves
// here: it refuses v1.75.0, and v1.76.0 and later need go-brrr v1.3.0, which it also refuses.
require (
	github.com/panjf2000/gnet/v2 v2.10.0
	github.com/valyala/fasthttp v1.74.0
	golang.org/x/sys v0.47.0
)

require (
	github.com/klauspost/compress v1.20.0 // indirect
	github.com/molecule-man/go-brrr v1.0.1 // indirect
	github.com/panjf2000/ants/v2 v2.12.1 // indirect
	github.com/valyala/bytebufferpool v1.0.0 // indirect
	go.uber.org/multierr v1.11.0 // indirect
	go.uber.org/zap v1.28.0 // indirect
	golang.org/x/sync v0.11.0 // indirect
	gopkg.in/natefinch/lumberjack.v2 v2.2.1 // indirect
)
