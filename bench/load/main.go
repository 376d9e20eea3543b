// Command load is herald's load driver (docs/BENCHMARKS.md): it starts the
// herald binary and drives it only from outside, through its public HTTP
// API, its command line (`herald account create`, `herald dkim create`)
// and SMTP, on a fresh database (an SQLite file, or a fresh schema of
// HERALD_BENCH_DATABASE=postgres://…). It builds nothing: it expects
// bin/herald (-herald; the Makefile builds it). It asserts nothing about
// speed: the exit status only says whether the run worked and its checks
// (every message delivered, counters exact) held.
//
//	load api         authenticated list endpoints beside a bare Fiber handler under wrk (make bench)
//	load audience    a 1,000,000-row CSV import, a segment, the contact list (make bench-audience)
//	load send        one single send to 100,000 contacts beside a plain SMTP client's ceiling (make bench-send)
//	load automation  a CSV import into a live automation's target until every email is out (make bench-automation);
//	                 with -branch, a two-branch automation across kill -9 (make bench-automation-branch)
//	load inbound     10,000 bounce reports posted to herald's inbound SMTP server (make bench-inbound)
//	load events      load send with an events webhook endpoint on a loopback receiver
//	load scaleout    several herald processes on one PostgreSQL database share a send, one killed every few seconds (make bench-scaleout)
//	load memory      herald's peak RSS through a 10,000,000-contact import and a large send (make bench-memory)
//	load relays      a send over two relays against one, and a relay's failover during a send (make bench-relays)
//
// Each command takes -h for its flags. Two more are started by the driver
// itself: `load sink` (the loopback SMTP sink, its own process) and
// `load bare` (the bare Fiber handler of `load api`).
//
// The Go benchmarks of the packages (go test -bench) measure the parts
// inside one process; this driver measures the whole program.
package main

import (
	"fmt"
	"os"
	"strings"

	"herald/bench/load/apibench"
	"herald/bench/load/audience"
	"herald/bench/load/bare"
	"herald/bench/load/send"
)

const usage = `usage: load COMMAND [flags]

commands: api, audience, send, automation, inbound, events, scaleout, memory,
relays (internal: sink, bare); load COMMAND -h lists a command's flags`

func main() {
	if len(os.Args) < 2 || strings.HasPrefix(os.Args[1], "-") {
		fmt.Fprintln(os.Stderr, usage)
		os.Exit(2)
	}
	cmd, args := os.Args[1], os.Args[2:]
	// The commands read their flags from os.Args with the flag package.
	os.Args = append([]string{"load " + cmd}, args...)
	switch cmd {
	case "api":
		apibench.Main()
	case "audience":
		audience.Main()
	case "send", "automation", "inbound", "events", "scaleout", "memory", "relays":
		send.Main(cmd)
	case "sink":
		if err := send.RunSink(args); err != nil {
			fmt.Fprintln(os.Stderr, "load sink:", err)
			os.Exit(1)
		}
	case "bare":
		bare.Main()
	default:
		fmt.Fprintf(os.Stderr, "load: unknown command %q\n%s\n", cmd, usage)
		os.Exit(2)
	}
}
