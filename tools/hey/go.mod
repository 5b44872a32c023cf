module serverbench/tools/hey

go 1.24.0

tool github.com/rakyll/hey

require (
	github.com/rakyll/hey v0.1.5 // indirect
	golang.org/x/net v0.48.0 // indirect
	golang.org/x/text v0.33.0 // indirect
)
