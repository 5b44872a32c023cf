// Package cli reads the command line that every contestant shares:
// <server> [flags] <scenario> <host> <port> <workers>.
package cli

import (
	"flag"
	"fmt"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Args is the validated command line.
type Args struct {
	Scenario string
	Addr     string // host:port, ready for net.Listen
	Workers  int
}

// Parse parses flags defined by the caller, then the positional arguments.
// A scenario outside supported, or a malformed argument, exits with status 2.
func Parse(supported ...string) Args {
	flag.Usage = func() {
		fmt.Fprintf(os.Stderr, "usage: %s [flags] <%s> <host> <port> <workers>\n",
			os.Args[0], strings.Join(supported, "|"))
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() != 4 {
		flag.Usage()
		os.Exit(2)
	}
	scenario, host, port := flag.Arg(0), flag.Arg(1), flag.Arg(2)
	if !slices.Contains(supported, scenario) {
		fail("scenario %q is not supported (supported: %s)", scenario, strings.Join(supported, ", "))
	}
	if p, err := strconv.Atoi(port); err != nil || p < 0 || p > 65535 {
		fail("port %q is not a number in 0..65535", port)
	}
	workers, err := strconv.Atoi(flag.Arg(3))
	if err != nil || workers < 1 {
		fail("workers %q is not a positive number", flag.Arg(3))
	}
	return Args{Scenario: scenario, Addr: net.JoinHostPort(host, port), Workers: workers}
}

// Timeout is the hello-timeout limit for each read and each write: SB_TIMEOUT_MS, default 5000.
func Timeout() time.Duration {
	s := os.Getenv("SB_TIMEOUT_MS")
	if s == "" {
		return 5000 * time.Millisecond
	}
	ms, err := strconv.Atoi(s)
	if err != nil || ms < 1 {
		fail("SB_TIMEOUT_MS=%q is not a positive number of milliseconds", s)
	}
	return time.Duration(ms) * time.Millisecond
}

// Files is the folder of the file scenario's files: SB_FILES, which must be set.
func Files() string {
	dir := os.Getenv("SB_FILES")
	if dir == "" {
		fail("SB_FILES is not set: the file scenario serves $SB_FILES/4k")
	}
	return dir
}

func fail(format string, a ...any) {
	fmt.Fprintf(os.Stderr, "%s: %s\n", os.Args[0], fmt.Sprintf(format, a...))
	os.Exit(2)
}
