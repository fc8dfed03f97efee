// Command jsonapi is a tiny JSON service, the example of "your own
// service" as a topobench target: it stands for the Go service a user
// wants to put behind nginx, and shows what such a service needs to be
// measured (an address or a unix socket to listen on, given on the command
// line, and a graceful stop on SIGTERM).
//
// Usage:
//
//	jsonapi [-listen ADDR] [-unix PATH] [flags]
//
// Every GET and HEAD, on any path, is answered with a small JSON document
// encoded for that request (encoding/json, as a real handler would):
// the path asked for and a fixed list of items. Other methods get 405 with
// a JSON error. With topobench:
//
//	topobench compare -targets cmd:'./jsonapi -listen {addr}' -topologies standalone,nginx-http
//
// Flags:
//
//	-listen ADDR               HTTP on TCP (default 127.0.0.1:8090; empty: off)
//	-unix PATH                 HTTP on a unix socket as well (off by default);
//	                           a stale socket file is replaced, a live one or
//	                           a file that is not a socket is an error
//	-read-header-timeout D     limit for a request's header (5s)
//	-read-timeout D            limit for a whole request, body included (10s)
//	-write-timeout D           limit for writing a response (10s): a peer that
//	                           never reads is dropped
//	-idle-timeout D            close kept-alive connections idle this long (2m)
//	-grace D                   time in-flight requests get after SIGTERM (5s)
//
// It writes "jsonapi: listening on NETWORK ADDR" to standard error for each
// listener, then nothing per request. SIGINT or SIGTERM stops accepting,
// lets in-flight requests finish within -grace, removes the unix socket and
// exits 0. Errors are one line and a non-zero exit (2 for usage).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stderr)
	stop()
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			os.Exit(0)
		}
		fmt.Fprintln(os.Stderr, "jsonapi:", err)
		var ue usageError
		if errors.As(err, &ue) {
			os.Exit(2)
		}
		os.Exit(1)
	}
}

// usageError marks a bad command line (exit status 2).
type usageError struct{ error }

func (e usageError) Unwrap() error { return e.error }

func run(ctx context.Context, args []string, stderr io.Writer) error {
	cfg, err := parseArgs(args, stderr)
	if err != nil {
		return err
	}
	return serve(ctx, cfg, stderr)
}
