// Package load is topobench's own HTTP/1.1 load engine, for the questions a
// closed-loop tool like wrk cannot answer.
//
// In closed mode (Options.Connections, wrk's model) each connection sends
// its next request when the previous answer is in, so a stalled server also
// stalls the load and hides the stall from the percentiles (coordinated
// omission). In open mode (Options.Rate) every request has an intended start
// time from a Poisson or uniform schedule and its latency runs from that
// time, so a stall shows in full. A request that finds no free connection
// at its intended start is late and waits; the engine opens more
// connections, up to MaxConnections.
//
// Requests are GETs over kept-alive connections to a loopback TCP address
// or a unix socket (ParseTarget refuses anything else), the same bytes each
// time; with Options.Close each asks for Connection: close, so that every
// request opens a new connection. An https:// target is spoken over TLS
// (Options.TLS: the run's certificate, one version and suite, resumption
// on or off), a goroutine per connection, each handshake part of its
// connect; the event loops refuse it. One more address may be allowed (Options.Allow, load -allow): a
// link-local one, the far end of a veth in namespaces the caller created;
// or, only with Options.AllowRemote (load -allow-remote), another
// machine's routable address, named on purpose (compare -swarm-allow).
// CheckAllow is that rule.
//
// Closed mode runs in wrk's shape (Options.Threads, default 100 as wrk's
// -t100 of the 2013 run): event loops, each on its own OS thread with an
// epoll instance over its share of the connections (a run of them dialed
// one after another, as each wrk thread opens its own), on raw non-blocking
// descriptors, with wrk's system calls per request: one read when the
// answer comes in one piece, an epoll_ctl asking for the socket's
// writability, the write on the wake-up that reports it, and an epoll_ctl
// that stops asking. A loop's rhythm of waking and sleeping is part of
// what the server pays for (its writes wake the loops), so it follows
// wrk's; the mean count of answers per wake-up is the run's batching
// figure (Summary.ReadyPerWake). The loops count their own timeouts and
// dial a lost connection again without blocking. While they run, GOMAXPROCS is
// raised to a P for each loop and one more, which a keeper goroutine
// holds, so that the Go runtime's monitor keeps its slow tick instead of
// being woken each time a loop returns from a wait. Open mode, and closed mode with
// Options.Goroutines, run a goroutine per connection on Go's poller.
// Either way answers are read into a fixed buffer, the status line and
// Content-Length framing checked; chunked answers are refused as framing
// errors (the servers measured here send Content-Length). The request
// path allocates nothing: latencies are batched per connection and merged
// into a few HDR histograms (1 µs to 60 s, 3 significant digits) under a
// lock taken once per batch.
//
// Every run opens its connections before the measured time, DialsInFlight
// at a time, each answering one unmeasured first request, so that a
// handshake a full accept queue dropped is recovered before anything is
// measured; Options.NoPrime leaves that request out, as wrk does, for a
// caller that reads the process's CPU time, or the servers', across the
// whole run. The event loops' connections are then opened without Go's
// net package (a socket, a non-blocking connect and a poll, the
// descriptor the loop's at once), as nothing on them goes through Go's
// poller.
//
// Errors are counted in wrk's classes: connect, read (framing included),
// write, timeout, and status >= 400. The histogram is saved both encoded
// (hdr.WriteEncoded, exact, mergeable) and as the .hgrm percentile text that
// HdrHistogram's tools print (hdr.WritePercentiles).
//
// A Spec is one run as data: the Options, the handler wait, the probe and
// where the results go, with a JSON form whose keys are the load
// command's flags. `topobench load` builds one from its flags or reads
// one (-spec FILE); the sweep writes one per cell and hands it to its
// child engine. Options, ProbeOptions and Spec each check themselves once
// (Run, Probe, Spec.Validate), every error a *FieldError naming the key;
// the engine itself refuses a target off this machine.
//
// For load from several machines at once, Split gives each generator its
// share (rate/n with a seed of its own in open mode, conns/n in closed
// mode), Options.StartAt makes them begin at one wall-clock instant after
// connecting (Summary.StartSkewMs records how late each really began),
// WriteReport and ReadReport carry a run through a log as text lines, and
// MergeHistograms and MergeSummaries combine the runs exactly: histograms
// add bucket by bucket, percentiles are never averaged.
//
// # Sessions
//
// A load session (ServeSession, SessionClient) is one engine process that keeps its connections across
// a warmup and many measured windows, on one or several targets, so that
// no measured run starts with thousands of connections being opened
// (topobench load -session). Each target is a named pool; one pool sends
// at a time.
//
// The session reads one command a line and answers each with one JSON
// object on a line:
//
//	open NAME SPEC   dial SPEC's connections (load.Spec as single-line JSON,
//	                 closed loop), DialsInFlight at a time, before anything
//	                 is measured; replies an Opened
//	window NAME DUR [lead LEAD] [counters PATH,...]
//	                 run pool NAME closed loop for LEAD unmeasured (the
//	                 start from an idle pool), then DUR (a Go duration)
//	                 measured, then stop sending and drain its answers;
//	                 replies a Window: that window's figures and exact
//	                 histogram, and each counter file's text at the
//	                 measured time's start and end (counters.go)
//	close NAME       close the pool's connections; replies its PoolTotals
//	quit             (or end of input) close everything; replies {"quit":true}
//
// A command that fails replies {"error":"..."} and the session goes on.
// One pool's connections and another's must fit the open-files limit
// together (an open that would not is refused).
package load
