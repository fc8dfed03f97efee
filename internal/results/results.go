// Package results is the on-disk form of one sweep, a directory such as
// results/20261121-223000/:
//
//	env.json                    Env: the machine, versions, limits, plan
//	runs/g1-nginx-http-r2.json  Run: one measured cell
//	runs/g1-nginx-http-r2.txt   the load generator's raw output of that run
//	runs/KEY.hdr, runs/KEY.hgrm the built-in engine's latency histogram
//	                            (encoded, and as percentile text)
//
// Every file is written whole (to a temporary name, then renamed), so an
// interrupted sweep leaves only complete records behind. Warmup runs are
// not recorded. The report (summary.md and the rest) is derived from these
// files and can be rebuilt from them at any time.
package results

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/topobench/topobench/internal/tlscert"
	"github.com/topobench/topobench/internal/topology"
)

// File and directory names inside a results directory.
const (
	EnvFile = "env.json"
	RunsDir = "runs"
)

// Generator names a load generator.
type Generator string

// The load generators a plan can name.
const (
	// LoadWrk is wrk, closed loop: the 2013 reproduction's generator.
	LoadWrk Generator = "wrk"
	// LoadBuiltin is topobench's own engine (internal/load).
	LoadBuiltin Generator = "builtin"
	// LoadH2load is nghttp2's h2load, closed loop: HTTP/2 over TLS with
	// Plan.Streams streams a connection, else HTTP/1.1.
	LoadH2load Generator = "h2load"
	// LoadStime is OpenSSL's s_time, closed loop over TLS: a connection a
	// request (a handshake and one GET each), a connection at a time a
	// process, Connections processes.
	LoadStime Generator = "s_time"
)

// Generators lists the known load generators.
func Generators() []Generator { return []Generator{LoadWrk, LoadBuiltin, LoadH2load, LoadStime} }

// OpenLoop reports whether the generator can send at a target rate and
// run the concurrency probe; wrk is closed loop only.
func (g Generator) OpenLoop() bool { return g == LoadBuiltin }

// Histogram reports whether the generator keeps every latency sample in
// an HDR histogram beside the record, exact to merge.
func (g Generator) Histogram() bool { return g == LoadBuiltin }

// The isolations a plan can name.
const (
	// IsolateNetns puts the servers and the load generator in two network
	// namespaces of their own, joined by a veth pair: two hosts.
	IsolateNetns = "netns"
	// IsolateNone runs everything in the harness's namespace over
	// loopback, as the 2013 run did.
	IsolateNone = "none"
)

// TargetGo is the default target server: cmd/hello.
const TargetGo = "go"

// Cell is one point of a sweep: every dimension of the plan fixed, and the
// repetition. Its Key names the cell's files and is the only name of a
// cell: resume, records and reports all go through it.
type Cell struct {
	// Target is the server measured ("go" is cmd/hello; empty reads as go).
	Target   string `json:"target,omitempty"`
	Topology string `json:"topology"`
	// GOMAXPROCS is the processor value the servers run with (GOMAXPROCS
	// for Go, the scheduler or processor count for other targets).
	GOMAXPROCS int `json:"gomaxprocs"`
	// Connections is the load's concurrency (wrk -c); 0 in records from
	// before it was a dimension.
	Connections int `json:"connections,omitempty"`
	// Load is the generator (empty reads as wrk).
	Load Generator `json:"load,omitempty"`
	// Keepalive is nginx's upstream keepalive pool, set only when the
	// plan sweeps more than one (Plan.KeepaliveOf gives every cell's).
	Keepalive Keepalive `json:"upstream_keepalive,omitempty"`
	// Schedule is how requests are sent; the zero Schedule is closed loop
	// for the plan's duration, with no handler wait.
	Schedule
	// Rep is 1-based.
	Rep int `json:"rep"`
}

// Keepalive is nginx's upstream keepalive: the idle connections to the
// server behind it that each nginx worker keeps for reuse. A pool smaller
// than the connections nginx passes upstream makes nginx close and open
// upstream connections all the time. The zero Keepalive is the default.
type Keepalive int

const (
	// KeepaliveAuto sizes the pool to the connections nginx passes
	// upstream: the plan's most connections.
	KeepaliveAuto Keepalive = -1
	// DefaultKeepalive is the 2013 reproduction's keepalive 300.
	DefaultKeepalive Keepalive = 300
)

// ParseKeepalive reads "auto" or a positive count of connections.
func ParseKeepalive(s string) (Keepalive, error) {
	if s == "auto" {
		return KeepaliveAuto, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 {
		return 0, fmt.Errorf("%q, want auto or a positive number of connections", s)
	}
	return Keepalive(n), nil
}

// Or is k, the default when k is zero.
func (k Keepalive) Or() Keepalive {
	if k == 0 {
		return DefaultKeepalive
	}
	return k
}

// String is "auto" or the count; the default's count for zero.
func (k Keepalive) String() string {
	if k = k.Or(); k == KeepaliveAuto {
		return "auto"
	}
	return strconv.Itoa(int(k))
}

// Size is the pool nginx keeps per worker for a load of at most
// connections.
func (k Keepalive) Size(connections int) int {
	if k = k.Or(); k == KeepaliveAuto {
		return connections
	}
	return int(k)
}

// MarshalText writes "auto" or the count.
func (k Keepalive) MarshalText() ([]byte, error) { return []byte(k.String()), nil }

// UnmarshalText reads what MarshalText writes.
func (k *Keepalive) UnmarshalText(b []byte) error {
	v, err := ParseKeepalive(string(b))
	if err != nil {
		return fmt.Errorf("upstream keepalive: %w", err)
	}
	*k = v
	return nil
}

// TargetName is Target with the default filled in.
func (c Cell) TargetName() string {
	if c.Target == "" {
		return TargetGo
	}
	return c.Target
}

// LoadName is Load with the default filled in.
func (c Cell) LoadName() Generator {
	if c.Load == "" {
		return LoadWrk
	}
	return c.Load
}

// Dim is one dimension of a cell, named every way a cell is named: Name
// in summary.csv, bench.txt and topobench diff, Label for people, Value
// ("" when unset), the Usual value that labels leave out, and File, its
// part of the cell's file key ("" for none).
type Dim struct{ Name, Label, Value, Usual, File string }

// Dims lists the cell's dimensions but the topology and the repetition,
// in the order every name of a cell gives them. This is the one place a
// new dimension is named; the orders (cellLess here, the report's group
// order) compare its typed value.
func (c Cell) Dims() []Dim {
	var rate, fraction, wait, work string
	if c.Rate > 0 {
		rate = strconv.FormatFloat(c.Rate, 'f', -1, 64)
	}
	if c.Fraction > 0 {
		fraction = strconv.FormatFloat(c.Fraction, 'f', -1, 64)
	}
	if c.Wait > 0 {
		wait = c.Wait.String()
	}
	if c.Work > 0 {
		work = c.Work.String()
	}
	keepalive := ""
	if c.Keepalive != 0 {
		keepalive = c.Keepalive.String()
	}
	conns := ""
	if c.Connections > 0 {
		conns = strconv.Itoa(c.Connections)
	}
	target, load := c.TargetName(), string(c.LoadName())
	file := func(v, usual, f string) string {
		if v == "" || v == usual {
			return ""
		}
		return f
	}
	// A rate derived from a fraction of capacity is not in the key: the
	// fraction is.
	derived := func(f string) string {
		if c.Fraction > 0 {
			return ""
		}
		return f
	}
	// A named schedule's file key is its name, not its rate and wait.
	named := func(f string) string {
		if c.Name != "" {
			return ""
		}
		return f
	}
	return []Dim{
		// A command target's name is a whole command line: its file-safe
		// name stands for it (env.json's targets say what it ran).
		{"target", "target", TargetFile(target), TargetGo, file(target, TargetGo, TargetFile(target))},
		{"gomaxprocs", "GOMAXPROCS", strconv.Itoa(c.GOMAXPROCS), "", "g" + strconv.Itoa(c.GOMAXPROCS)},
		{"connections", "connections", conns, "5000", file(conns, "", "c"+conns)}, // 5000 is 2013's
		{"load", "load", load, string(LoadWrk), file(load, string(LoadWrk), load)},
		{"upstream_keepalive", "upstream keepalive", keepalive, "", file(keepalive, "", "keepalive"+keepalive)},
		{"scenario", "scenario", c.Name, "", c.Name},
		{"rate", "rate", rate, "", named(derived(file(rate, "", "rate"+rate)))},
		{"fraction", "fraction of capacity", fraction, "", named(file(fraction, "", "frac"+fraction))},
		{"wait", "wait", wait, "", named(file(wait, "", "wait"+wait))},
		{"work", "work", work, "", file(work, "", "work"+strings.ReplaceAll(work, "µ", "u"))}, // an ASCII file name
	}
}

// Label names the cell's dimensions for people, those at their usual
// value left out: "target=erlang GOMAXPROCS=2 connections=1000".
func (c Cell) Label() string {
	var parts []string
	for _, d := range c.Dims() {
		if d.Value != "" && d.Value != d.Usual {
			parts = append(parts, d.Label+"="+d.Value)
		}
	}
	return strings.Join(parts, " ")
}

// Key names the cell's files: g8-nginx-fcgi-unix-c5000-r2, the target in
// front when it is not Go and the other dimensions behind when they are
// not the usual ones (erlang-g1-nginx-http-c1000-builtin-rate1000-wait100ms-r1).
func (c Cell) Key() string {
	var before, after []string
	for _, d := range c.Dims() {
		switch {
		case d.File == "":
		case d.Name == "target" || d.Name == "gomaxprocs":
			before = append(before, d.File)
		default:
			after = append(after, d.File)
		}
	}
	parts := append(append(before, c.Topology), after...)
	return strings.Join(parts, "-") + "-r" + strconv.Itoa(c.Rep)
}

// String names one run in the progress line: its label, topology and
// repetition.
func (c Cell) String() string { return fmt.Sprintf("%s %s rep %d", c.Label(), c.Topology, c.Rep) }

// OpenLoop reports whether the schedule sends at a rate (given, or a
// fraction of the measured capacity) rather than closed loop.
func (s Schedule) OpenLoop() bool { return s.Rate > 0 || s.Fraction > 0 }

// Schedule is how the requests of a cell are sent: closed loop (Rate 0),
// or open loop at a target rate, for the plan's duration or for a count
// of requests; each request may ask the server to wait before answering.
// A named schedule is one of a scenario's (the 2016 study's
// "slow-requests", say).
type Schedule struct {
	Name string `json:"scenario,omitempty"`
	// Rate is the open-loop target rate in requests per second; 0 means
	// closed loop.
	Rate float64 `json:"rate,omitempty"`
	// Fraction, instead of a Rate, sends open loop at this fraction of
	// the capacity the block measured closed loop: the least median req/s
	// of its topologies at the same handler work, so every topology is
	// loaded at the same rate (the rate is in the run's figures). Its
	// cells run after the block's closed-loop ones.
	Fraction float64 `json:"fraction,omitempty"`
	// Wait is the handler wait each request asks for (?wait=).
	Wait time.Duration `json:"wait_ns,omitempty"`
	// Work is the CPU time the handler spends on each request before it
	// answers (?work=): a service that does real work.
	Work time.Duration `json:"work_ns,omitempty"`
	// Requests bounds the run by a count instead of the plan's duration.
	Requests int `json:"requests,omitempty"`
	// Probe marks the concurrency-level probe: Requests requests opened at
	// once, each with the handler wait, counting how many the server
	// serves concurrently.
	Probe bool `json:"probe,omitempty"`
}

// Run is one measured cell.
type Run struct {
	Cell
	// Start is when the measured load started; Wall is how long the cell
	// took, generator start to exit.
	Start time.Time     `json:"start"`
	Wall  time.Duration `json:"wall_ns"`
	// Command is the complete command line of the load generator
	// (taskset included when pinned), to run the cell again by hand.
	Command []string `json:"command,omitempty"`
	URL     string   `json:"url"`
	// LoadCPUs and ServerCPUs are the CPU lists the load generator and the
	// servers were pinned to; empty when unpinned.
	LoadCPUs   string `json:"load_cpus,omitempty"`
	ServerCPUs string `json:"server_cpus,omitempty"`
	// Figures are the measurements, whichever generator made them; nil
	// when the cell failed before the generator reported. The
	// generator's own output is beside the record (runs/<key>.txt, and
	// the engine's histogram as runs/<key>.hdr and .hgrm).
	Figures *Figures `json:"figures,omitempty"`
	// CPU is where the CPU time of the measured run went, per process
	// group; nil when it was not measured.
	CPU *CPU `json:"cpu,omitempty"`
	// Noise is what else the machine did during the measured run.
	Noise *Noise `json:"noise,omitempty"`
	// Settle is the wait for the servers to come back to idle before the
	// cell, and their state at that boundary.
	Settle *Settle `json:"settle,omitempty"`
	// Warmup is how long the unrecorded load before the run took, from
	// the generator's start to its exit; zero when the cell was not warmed
	// (a -budget sweep warms each topology once per start of the servers).
	Warmup time.Duration `json:"warmup_ns,omitempty"`
	// Drain is the wait, after a window of a load session, for the
	// answers still due once it stopped sending: not in the window's
	// figures nor in its measured time. Zero for a run of its own.
	Drain time.Duration `json:"drain_ns,omitempty"`
	// Reconnects are the connections of a load session's pool that the
	// server closed and the engine replaced during the window.
	Reconnects int64 `json:"reconnects,omitempty"`
	// Drained are the answers that came in during the drain: not the
	// window's requests, but the servers' CPU time, read around the
	// window and its drain, served them too (ServedRequests).
	Drained int64 `json:"drained,omitempty"`
	// Lead is a load session window's load before its measured time, and
	// LeadAnswers its answers: not the window's requests nor its measured
	// time, but served by the servers' CPU time read around the window.
	Lead        time.Duration `json:"lead_ns,omitempty"`
	LeadAnswers int64         `json:"lead_answers,omitempty"`
	// Connect is the time spent opening the pool's connections (and its
	// unrecorded warmup window) before this window, on the first window
	// after the pool opened; zero otherwise.
	Connect time.Duration `json:"connect_ns,omitempty"`
	// Pair ties a window of the paired design to its pair; nil for a run
	// of -reps or -budget's rounds.
	Pair *Pair `json:"pair,omitempty"`
	// Retried says why the measured run was run a second time (a load
	// generator that hung, say); empty when it ran once.
	Retried string `json:"retried,omitempty"`
	// LoadShare is the load generator's CPU time over the measured
	// window as a share of the CPUs it could use (1 for all of them):
	// the CPUs it was pinned to, or the CPU quota of its control group
	// (cgroup cpu.max) where that is less; zero when neither bounded it.
	LoadShare float64 `json:"load_share,omitempty"`
	// LoadQuota is that quota in CPUs when it was the bound (LoadShare
	// is then a share of it); zero otherwise.
	LoadQuota float64 `json:"load_quota,omitempty"`
	// LoadThrottled is the share of the quota's periods in which the
	// kernel throttled the load generator (it had used its quota and was
	// stopped until the next period), over its run, when it ran in a
	// control group of its own (sweep.Options.LoadCgroup); zero otherwise.
	LoadThrottled float64 `json:"load_throttled,omitempty"`
	// Net is what the servers' network namespace counted over the
	// measured run; nil when it was not read (servers run elsewhere).
	Net *Net `json:"net,omitempty"`
	// Nodes are the load nodes' own parts of a run on a cluster (compare
	// -swarm), in the order of the load nodes; Figures and CPU.Load are
	// then their merge (histograms merged exactly, counts summed). Nil
	// on one machine.
	Nodes []NodeFigures `json:"nodes,omitempty"`
	// Error says why the cell failed; empty on success. A cell can have
	// both a Result and an Error (wrk finished but a check after it
	// failed).
	Error string `json:"error,omitempty"`
}

// LoadBoundShare is the share of its CPUs a load generator may use
// before its run counts as load-bound.
const LoadBoundShare = 0.9

// LoadThrottledShare is the share of its quota's periods in which a load
// generator may be throttled before its run counts as load-bound: a
// bursty generator runs out of a quota in many periods while its average
// stays under LoadBoundShare of it, and each time it stops sending until
// the next period.
const LoadThrottledShare = 0.1

// LoadBound reports whether the load generator used LoadBoundShare of its
// CPUs or more, or was throttled by its CPU quota in LoadThrottledShare of
// the periods or more: it, not the servers, may have set the pace, and the
// run's rate is a floor of the path's, not its measure.
func (r Run) LoadBound() bool {
	return r.LoadShare >= LoadBoundShare || r.LoadThrottled >= LoadThrottledShare
}

// LoadUse says how much of what it could use the load generator used,
// for messages: "used 95% of its CPUs", or of its quota and how often
// that throttled it.
func (r Run) LoadUse() string {
	of := "its CPUs"
	if r.LoadQuota > 0 {
		of = fmt.Sprintf("its cgroup quota of %.2f CPU", r.LoadQuota)
	}
	s := fmt.Sprintf("used %.0f%% of %s", 100*r.LoadShare, of)
	if r.LoadThrottled > 0 {
		s += fmt.Sprintf(" and was throttled in %.0f%% of the quota's periods", 100*r.LoadThrottled)
	}
	return s
}

// Net is what the TCP counters of the servers' network namespace
// (internal/netstat) counted over a measured run.
type Net struct {
	// ListenOverflows counts connects a listener's full accept queue
	// turned away (TcpExtListenOverflows), SyncookiesSent the SYN cookies
	// a full SYN queue sent (TcpExtSyncookiesSent): either means the load
	// met a listen backlog too short for it, and connects waited for
	// retries.
	ListenOverflows int64 `json:"listen_overflows"`
	SyncookiesSent  int64 `json:"syncookies_sent"`
	// UpstreamOpened counts the TCP connections nginx opened to the
	// server behind it (TcpActiveOpens in a namespace where nginx is the
	// only process that connects); nil where that does not count them (a
	// unix socket upstream, no nginx, servers sharing the load's
	// namespace).
	UpstreamOpened *int64 `json:"upstream_opened,omitempty"`
	// Accepted counts the connections the load opened to the servers
	// (TcpPassiveOpens less TcpActiveOpens in the servers' own
	// namespace: what it accepted, less what its processes opened to each
	// other); nil where the servers share the load's namespace. A session
	// that keeps its connections shows 0 in its windows.
	Accepted *int64 `json:"accepted,omitempty"`
}

// Overflowed reports whether the run met a full listen queue.
func (n *Net) Overflowed() bool {
	return n != nil && (n.ListenOverflows > 0 || n.SyncookiesSent > 0)
}

// UpstreamPer1k is the upstream connections nginx opened per 1,000
// requests answered; ok is false when they were not counted.
func (r Run) UpstreamPer1k() (v float64, ok bool) {
	if r.Net == nil || r.Net.UpstreamOpened == nil || r.Figures == nil || r.Figures.Requests <= 0 {
		return 0, false
	}
	return float64(*r.Net.UpstreamOpened) / float64(r.Figures.Requests) * 1000, true
}

// NodeFigures are one load node's part of a run on a cluster.
type NodeFigures struct {
	// Node is the node's ID in the cluster, Hostname its name.
	Node     string `json:"node"`
	Hostname string `json:"hostname,omitempty"`
	// Its share of the run: the open-loop rate (0 in closed loop), the
	// connections, and its own schedule's seed.
	Rate        float64 `json:"rate,omitempty"`
	Connections int     `json:"connections"`
	Seed        uint64  `json:"seed,omitempty"`
	// StartSkew is how much later than the common start the node began,
	// by the harness's clock (its own skew less its clock offset);
	// ClockOffset is its clock minus the harness's, within
	// ClockUncertainty (zero and ClockKnown false when unread). Slack is
	// how long before the start its connections were open.
	StartSkew        time.Duration `json:"start_skew_ns"`
	ClockOffset      time.Duration `json:"clock_offset_ns"`
	ClockUncertainty time.Duration `json:"clock_uncertainty_ns,omitempty"`
	ClockKnown       bool          `json:"clock_known"`
	Slack            time.Duration `json:"slack_ns"`
	Figures          Figures       `json:"figures"`
	// CPU is the generator's CPU time on its node (user and system
	// together), Procs the processors it may use (its GOMAXPROCS).
	CPU   float64 `json:"cpu_s"`
	Procs int     `json:"procs,omitempty"`
	// LoadBound: the generator used at least 90% of its processors over
	// the run; its node, not the servers, may have set the pace.
	LoadBound bool `json:"load_bound,omitempty"`
	// Invalid says why the node's part does not count (a late start);
	// the run is then failed.
	Invalid string `json:"invalid,omitempty"`
}

// Usage is CPU time in seconds, user and system.
type Usage struct {
	User   float64 `json:"user_s"`
	System float64 `json:"system_s"`
}

// Total is user plus system time.
func (u Usage) Total() float64 { return u.User + u.System }

// CPU is the CPU time each part of a measured run used: the load
// generator, nginx (master and workers) and the target server (cmd/hello
// or another), from /proc, the supervisor beside them (containers) and
// the generator's rusage. Nginx and Server are nil when not measured
// (no nginx in the path, a server out of sight): absent, not zero.
type CPU struct {
	Load   Usage  `json:"load"`
	Nginx  *Usage `json:"nginx,omitempty"`
	Server *Usage `json:"server,omitempty"`
	// Servers is every server process's CPU time together from their
	// control group's own accounting; nil where the kernel could not
	// count it (then Nginx and Server, from /proc, are the figures).
	Servers *GroupCPU `json:"servers,omitempty"`
	// LoadCall is the load generator's CPU time over the whole session
	// command that measured the window (its lead, the window, its drain),
	// in seconds: the span Noise is accounted over; 0 when the generator's
	// run is that span (Load).
	LoadCall float64 `json:"load_call_s,omitempty"`
	// PartsSpan is SpanWindow where Nginx and Server come from their own
	// control groups over exactly the measured window; empty where they
	// are /proc's over the span the harness sampled (the window with its
	// lead and drain).
	PartsSpan string `json:"parts_span,omitempty"`
}

// GroupCPU is the servers' CPU time from their control group (cgroup v1
// cpuacct.usage, v2 cpu.stat usage_usec: scheduler time, not 10 ms ticks),
// with their utilization over the span it covers.
type GroupCPU struct {
	// Seconds is the group's CPU time over Span.
	Seconds float64 `json:"cpu_s"`
	// Span is SpanWindow or SpanRun.
	Span string `json:"span"`
	// Window is the span's length; CPUs the CPUs the servers could use
	// (their pinned set's, else this process's); Utilization is Seconds
	// over Window × CPUs.
	Window      time.Duration `json:"window_ns"`
	CPUs        int           `json:"cpus,omitempty"`
	Utilization float64       `json:"utilization,omitempty"`
}

// The spans a GroupCPU covers: exactly the measured window (read by a
// load session at its start and end), or the generator's run as the
// harness sampled around it (a window's warmup-free run of wrk or a
// one-run child: its start and exit included).
const (
	SpanWindow = "window"
	SpanRun    = "run"
)

// PerRequest is the group's CPU µs per request of n.
func (g GroupCPU) PerRequest(n int64) float64 {
	if n <= 0 {
		return 0
	}
	return g.Seconds / float64(n) * 1e6
}

// PerRequest divides a usage by the requests answered, in microseconds.
func PerRequest(u Usage, requests int64) float64 {
	if requests <= 0 {
		return 0
	}
	return u.Total() / float64(requests) * 1e6
}

// Noise is what the machine did during a measured run besides the run's
// own processes, from /proc/stat.
type Noise struct {
	// Busy is the CPU time of every CPU in the window, in seconds;
	// Steal the time the hypervisor took; Others the busy time not
	// charged to the run's processes (other programs, and interrupts).
	Busy   float64 `json:"busy_s"`
	Steal  float64 `json:"steal_s"`
	Others float64 `json:"others_s"`
	// Window is the wall time the figures cover.
	Window time.Duration `json:"window_ns"`
	// Flagged says why the run was noisy; empty when it was not.
	Flagged string `json:"flagged,omitempty"`
	// Speed is how fast the CPUs ran over the window, as the speed
	// probes measured it (compare -speed-probe); nil without them.
	Speed *Speed `json:"speed,omitempty"`
}

// SpeedOf is the noise's speed; nil when n is nil or has none.
func (n *Noise) SpeedOf() *Speed {
	if n == nil {
		return nil
	}
	return n.Speed
}

// Speed is the mean speed of the CPUs over a run's window, in the speed
// probes' turns per microsecond (internal/speed): comparable between the
// runs of one machine only.
type Speed struct {
	// Servers is the speed of the servers' CPUs, Load of the load
	// generator's; both are the machine's every CPU when unpinned.
	Servers float64 `json:"servers"`
	Load    float64 `json:"load"`
	// Samples are the probes' spins the two means took, in all.
	Samples int `json:"samples"`
}

// Settle is the state of the servers at a cell's start: how long the
// sweep waited for them to be idle, whether they got there, and their CPU
// share and memory then.
type Settle struct {
	Waited  time.Duration `json:"waited_ns"`
	Settled bool          `json:"settled"`
	// CPUShare is the servers' CPU use over the last window waited, as a
	// fraction of one CPU.
	CPUShare float64 `json:"cpu_share"`
	// ServerRSS and NginxRSS are resident memory in bytes.
	ServerRSS int64 `json:"server_rss"`
	NginxRSS  int64 `json:"nginx_rss,omitempty"`
}

// ServedRequests are the requests the servers' CPU time of the run
// served: the window's answers and those of its lead and drain.
func (r Run) ServedRequests() int64 {
	if r.Figures == nil {
		return r.Drained + r.LeadAnswers
	}
	return r.Figures.Requests + r.Drained + r.LeadAnswers
}

// PartsRequests are the requests nginx's and the server's CPU time
// (CPU.Nginx, CPU.Server) served: the measured window's where the parts
// were read over it, else every request served over the samples' span.
func (r Run) PartsRequests() int64 {
	if r.CPU != nil && r.CPU.PartsSpan == SpanWindow && r.Figures != nil {
		return r.Figures.Requests
	}
	return r.ServedRequests()
}

// Name is the base name of the run's files: its cell's Key.
func (r Run) Name() string { return r.Key() }

// Failed reports whether the cell failed.
func (r Run) Failed() bool { return r.Error != "" || r.Figures == nil }

// Plan is what the sweep set out to measure; plan.Plan wraps it with the
// rules and the order of a sweep. Each dimension is a list; the sweep
// measures their product.
type Plan struct {
	// Targets are the servers measured; empty means cmd/hello alone.
	Targets     []string `json:"targets,omitempty"`
	Topologies  []string `json:"topologies"`
	GOMAXPROCS  []int    `json:"gomaxprocs"`
	Connections []int    `json:"connections"`
	// Loads are the load generators; empty means wrk alone.
	Loads []Generator `json:"loads,omitempty"`
	// UpstreamKeepalive are nginx's upstream keepalive pools; empty
	// means DefaultKeepalive alone. The servers restart for each.
	UpstreamKeepalive []Keepalive `json:"upstream_keepalive,omitempty"`
	// Schedules are how requests are sent; empty means closed loop, no
	// wait. wrk runs only the closed-loop ones.
	Schedules []Schedule `json:"schedules,omitempty"`
	// Scenario names the preset the plan came from (2013, 2009, 2016).
	Scenario string `json:"scenario,omitempty"`
	// MaxConnections bounds the connections the built-in engine opens in
	// open loop (0: Connections).
	MaxConnections int `json:"max_connections,omitempty"`

	Reps int `json:"reps"`
	// RepsAuto, when set, makes Reps the first rounds only: the sweep adds
	// rounds until every ratio to standalone is known within the bound,
	// or the maximum is reached (-reps auto).
	RepsAuto *RepsAuto     `json:"reps_auto,omitempty"`
	Duration time.Duration `json:"duration_ns"`
	Warmup   time.Duration `json:"warmup_ns"`
	// Threads is wrk's -t, lowered to the connection count where that is
	// smaller.
	Threads int `json:"threads"`
	// EngineLoops runs the built-in engine's closed loop on event loops
	// in wrk's shape (Threads of them, each on its own OS thread over its
	// share of the connections) instead of a goroutine per connection.
	EngineLoops bool `json:"engine_loops,omitempty"`
	// Timeout is the load generator's request timeout (wrk --timeout).
	Timeout time.Duration `json:"timeout_ns"`
	// Streams, when set, makes h2load speak HTTP/2 with this many
	// concurrent streams a connection (h2load -m); zero leaves it at
	// HTTP/1.1, one request at a time a connection (--h1).
	Streams int `json:"streams,omitempty"`
	// Close makes every request ask for "Connection: close": short
	// connections, one request each (the 2007 scenario, as ab without -k).
	Close bool `json:"connection_close,omitempty"`
	// Isolation is how the load generator is separated from the servers:
	// IsolateNetns or IsolateNone.
	Isolation string `json:"isolation,omitempty"`
	// LinkDelay is the one-way delay tc netem adds on each end of the
	// veth under IsolateNetns (a LAN between two hosts); zero for none.
	LinkDelay time.Duration `json:"link_delay_ns,omitempty"`
	// PinLoad and PinServer are the CPU lists for the load generator and
	// for the servers; empty means unpinned.
	PinLoad   string `json:"pin_load,omitempty"`
	PinServer string `json:"pin_server,omitempty"`
	// Paired, when set, runs the paired design instead of rounds of
	// runs: Duration is a window's length, Reps does not apply.
	Paired *Paired `json:"paired,omitempty"`
	// Path is the request path (and query) the load and the parity check
	// ask for; empty means "/". A command target's own service has its
	// routes; cmd/hello answers every path alike.
	Path string `json:"path,omitempty"`
	// SpeedProbe runs a speed probe on every CPU the sweep uses
	// (internal/speed), and records each run's speed (Noise.Speed).
	SpeedProbe bool `json:"speed_probe,omitempty"`
	// TLS is the TLS configuration of the topologies that speak it
	// (topology.TLS), both servers alike; nil when the plan has none.
	TLS *tlscert.Settings `json:"tls,omitempty"`
}

// Baseline is the topology the plan's answer starts from, and a paired
// design measures every other beside: standalone, or standalone-tls when
// the plan's topologies speak TLS and standalone is not among them
// (plan.Check refuses a paired plan that mixes the two).
func (p Plan) Baseline() string {
	if slices.Contains(p.Topologies, topology.Standalone) {
		return topology.Standalone
	}
	for _, name := range p.Topologies {
		if t, err := topology.Lookup(name); err == nil && t.TLS {
			return topology.StandaloneTLS
		}
	}
	return topology.Standalone
}

// RequestPath is the plan's Path, "/" when it names none.
func (p Plan) RequestPath() string {
	if p.Path == "" {
		return "/"
	}
	return p.Path
}

// RepsAuto bounds the repetitions of -reps auto.
type RepsAuto struct {
	// Max is the most repetitions of a cell.
	Max int `json:"max"`
	// Within is the half-width of the interval every ratio to
	// standalone must reach, relative to the ratio (0.05 for ±5%).
	Within float64 `json:"within"`
	// Confidence is the level of each ratio interval: the sweep looks at
	// them to decide whether to go on, at every count of runs from Reps to
	// Max, so each look gets its share of the 5% error rate
	// (stats.Sequential). Zero reads as 95%, the level of records that
	// predate the rule.
	Confidence float64 `json:"confidence,omitempty"`
	// Budget is the wall time the sweep may take (-budget), all overhead
	// included; zero for -reps auto, which stops at Max.
	Budget time.Duration `json:"budget_ns,omitempty"`
}

// Level is the confidence of the ratio intervals the sweep stopped by.
func (a RepsAuto) Level() float64 {
	if a.Confidence == 0 {
		return 0.95
	}
	return a.Confidence
}

// UnmarshalJSON also reads env.json from before connections became a
// list ("connections": 5000).
func (p *Plan) UnmarshalJSON(b []byte) error {
	type plain Plan
	var v struct {
		plain
		Connections json.RawMessage `json:"connections"`
	}
	if err := strictUnmarshal(b, &v); err != nil {
		return err
	}
	*p = Plan(v.plain)
	if len(v.Connections) == 0 || string(v.Connections) == "null" {
		return nil
	}
	var one int
	if err := json.Unmarshal(v.Connections, &one); err == nil {
		p.Connections = []int{one}
		return nil
	}
	return json.Unmarshal(v.Connections, &p.Connections)
}

// Env is the machine and software a sweep ran on, and how it was asked to
// run.
type Env struct {
	// Command is the command line that ran (as "topobench compare ...").
	Command []string  `json:"command"`
	Start   time.Time `json:"start"`
	// End is zero while the sweep runs or when it was interrupted.
	End time.Time `json:"end,omitzero"`

	CPUModel string `json:"cpu_model"`
	// CPUs is the number of logical CPUs the harness could use.
	CPUs         int    `json:"cpus"`
	Kernel       string `json:"kernel"`
	GoVersion    string `json:"go_version"`
	NginxVersion string `json:"nginx_version"`
	WrkVersion   string `json:"wrk_version"`

	// Sysctls are the kernel settings in effect (name -> value), e.g.
	// "net.core.somaxconn": "4096".
	Sysctls map[string]string `json:"sysctls,omitempty"`
	// NetnsSysctls are the network settings the run gave its network
	// namespaces under IsolateNetns (the reference tuning, whatever the
	// host's).
	NetnsSysctls map[string]string `json:"netns_sysctls,omitempty"`
	// Limits are the resource limits in effect (e.g. "nofile_soft",
	// "nofile_hard") as printed by the OS.
	Limits map[string]string `json:"limits,omitempty"`
	// CPULatencyHeld says the sweep held the kernel's CPU latency request
	// at 0 (package cpulatency): idle CPUs polled instead of sleeping.
	CPULatencyHeld bool `json:"cpu_latency_held,omitempty"`

	Plan Plan `json:"plan"`
	// WorkCalibration is how many units of cmd/hello's handler work
	// (?work=) make one µs of CPU on this machine, as it measured at
	// start-up; zero when unknown.
	WorkCalibration float64 `json:"work_units_per_us,omitempty"`
	// Targets says what each target other than Go ran with (name -> its
	// model, pool size, heap and command line).
	Targets map[string]string `json:"targets,omitempty"`
	// Interrupted is set when the sweep stopped before finishing its plan.
	Interrupted bool `json:"interrupted,omitempty"`
	// Spent is the wall time the sweep has taken, over every session of
	// a resumed one: what a -budget sweep has used of its budget.
	Spent time.Duration `json:"spent_ns,omitempty"`
	// Warnings are what went wrong in the run's set-up without stopping
	// it (a network setting not copied into a namespace, a server that
	// did not stop cleanly), one each.
	Warnings []string `json:"warnings,omitempty"`

	// Cluster says which nodes did what when the sweep ran on a cluster
	// (compare -swarm); nil on one machine.
	Cluster *ClusterEnv `json:"cluster,omitempty"`
	// CPUSplit is how -cpus auto chose the CPU lists; nil when they were
	// given or not calibrated.
	CPUSplit *CPUSplit `json:"cpu_split,omitempty"`
	// Nginx is how the sweep's nginx was sized; nil when no nginx ran here.
	Nginx *NginxEnv `json:"nginx,omitempty"`
}

// NginxEnv is how nginx was sized for the plan (internal/nginxconf).
type NginxEnv struct {
	// WorkerProcesses is worker_processes; 0 is "auto" (nothing pinned).
	WorkerProcesses int `json:"worker_processes"`
	// WorkerConnections and WorkerRlimitNofile are each worker's
	// connections and open-files limit; Backlog every vhost's listen
	// backlog.
	WorkerConnections  int `json:"worker_connections"`
	WorkerRlimitNofile int `json:"worker_rlimit_nofile"`
	Backlog            int `json:"backlog"`
	// Keepalive is each upstream pool nginx kept, by the plan's
	// keepalive ("300", "auto"): its size per worker.
	Keepalive map[string]int `json:"upstream_keepalive,omitempty"`
}

// ClusterEnv is the cluster a sweep ran on.
type ClusterEnv struct {
	// Backend is the orchestrator ("swarm"), Image what the servers and
	// the load jobs ran from.
	Backend string `json:"backend"`
	Image   string `json:"image"`
	// Harness is the node the harness ran on (the manager); Server the
	// node the servers ran on, Load the load nodes, in order.
	Harness EnvNode   `json:"harness"`
	Server  EnvNode   `json:"server"`
	Load    []EnvNode `json:"load"`
	// ServerAddr is the address the load went to; Parity where the
	// parity check fetched from.
	ServerAddr string `json:"server_addr"`
	Parity     string `json:"parity_from"`
	// Remote says ServerAddr is routable, named with compare
	// -swarm-allow, and the jobs ran with load -allow-remote.
	Remote bool `json:"remote,omitempty"`
	// Lead is how far ahead of the jobs' creation their common start lay;
	// Tolerance how late a node may begin before its run is failed.
	Lead      time.Duration `json:"lead_ns"`
	Tolerance time.Duration `json:"tolerance_ns"`
}

// EnvNode is a node of the cluster, with its clock against the harness's
// as measured when the sweep began (each run's own is in its NodeFigures).
type EnvNode struct {
	ID               string        `json:"id"`
	Hostname         string        `json:"hostname"`
	Addr             string        `json:"addr"`
	Roles            []string      `json:"roles,omitempty"`
	ClockOffset      time.Duration `json:"clock_offset_ns"`
	ClockUncertainty time.Duration `json:"clock_uncertainty_ns,omitempty"`
	ClockKnown       bool          `json:"clock_known"`
}

// Create makes a new results directory with its runs/ subdirectory. It
// refuses a directory that already holds a sweep.
func Create(dir string) error {
	if _, err := os.Stat(filepath.Join(dir, EnvFile)); err == nil {
		return fmt.Errorf("results directory %s already holds a sweep (%s exists)", dir, EnvFile)
	}
	if err := os.MkdirAll(filepath.Join(dir, RunsDir), 0o755); err != nil {
		return fmt.Errorf("creating results directory: %w", err)
	}
	return nil
}

// WriteEnv writes env.json, replacing an earlier version (the sweep writes
// it at the start and again with End set).
func WriteEnv(dir string, env Env) error {
	return writeJSON(filepath.Join(dir, EnvFile), env)
}

// WriteRun writes the run's record and, beside it, the generator's raw
// output (when raw is not nil).
func WriteRun(dir string, run Run, raw []byte) error {
	if err := checkRun(run); err != nil {
		return fmt.Errorf("writing run: %w", err)
	}
	base := filepath.Join(dir, RunsDir, run.Name())
	if raw != nil {
		if err := writeFile(base+".txt", raw); err != nil {
			return err
		}
	}
	return writeJSON(base+".json", run)
}

// WriteExtra keeps another file of a cell's run beside its record:
// runs/<key>.<suffix> (a hung load generator's state, say).
func WriteExtra(dir string, c Cell, suffix string, b []byte) error {
	return writeFile(filepath.Join(dir, RunsDir, c.Key()+"."+suffix), b)
}

// RawPath is where WriteRun puts the generator's raw output.
func RawPath(dir string, run Run) string {
	return filepath.Join(dir, RunsDir, run.Name()+".txt")
}

// Load reads a results directory: env.json and every runs/*.json, sorted by
// GOMAXPROCS, then topology in plan order, then repetition.
func Load(dir string) (Env, []Run, error) {
	var env Env
	st, err := os.Stat(dir)
	if err != nil {
		return env, nil, fmt.Errorf("results directory: %w", err)
	}
	if !st.IsDir() {
		return env, nil, fmt.Errorf("%s is not a results directory (not a directory)", dir)
	}
	envPath := filepath.Join(dir, EnvFile)
	b, err := os.ReadFile(envPath)
	if errors.Is(err, fs.ErrNotExist) {
		return env, nil, fmt.Errorf("%s is not a results directory: no %s", dir, EnvFile)
	}
	if err != nil {
		return env, nil, err
	}
	if err := strictUnmarshal(b, &env); err != nil {
		return env, nil, fmt.Errorf("%s: %w", envPath, err)
	}

	paths, err := filepath.Glob(filepath.Join(dir, RunsDir, "*.json"))
	if err != nil {
		return env, nil, err
	}
	var runs []Run
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			return env, nil, err
		}
		var r Run
		if err := strictUnmarshal(b, &r); err != nil {
			return env, nil, fmt.Errorf("%s: %w", p, err)
		}
		if err := checkRun(r); err != nil {
			return env, nil, fmt.Errorf("%s: %w", p, err)
		}
		if want := r.Name() + ".json"; filepath.Base(p) != want {
			return env, nil, fmt.Errorf("%s: record is for %s", p, want)
		}
		runs = append(runs, r)
	}
	env.Plan.SortRuns(runs)
	return env, runs, nil
}

// SortRuns puts runs in Load's order: by target, GOMAXPROCS, topology in
// the plan's order, then repetition.
func (p Plan) SortRuns(runs []Run) {
	order := map[string]int{}
	for i, t := range p.Topologies {
		order[t] = i + 1
	}
	sort.SliceStable(runs, func(i, j int) bool { return cellLess(runs[i].Cell, runs[j].Cell, order) })
}

// cellLess orders cells by target, processor value, topology in plan
// order, then the load's dimensions and the repetition.
func cellLess(a, b Cell, order map[string]int) bool {
	if a.TargetName() != b.TargetName() {
		return a.TargetName() < b.TargetName()
	}
	if a.GOMAXPROCS != b.GOMAXPROCS {
		return a.GOMAXPROCS < b.GOMAXPROCS
	}
	if a.Topology != b.Topology {
		// Topologies the plan does not name (0) come after its own, by
		// name: comparing those by name with the plan's would make the
		// order circular.
		oa, ob := order[a.Topology], order[b.Topology]
		switch {
		case oa == ob:
			return a.Topology < b.Topology
		case oa == 0 || ob == 0:
			return ob == 0
		}
		return oa < ob
	}
	switch {
	case a.Connections != b.Connections:
		return a.Connections < b.Connections
	case a.LoadName() != b.LoadName():
		return a.LoadName() < b.LoadName()
	case a.Keepalive != b.Keepalive:
		return a.Keepalive < b.Keepalive
	case a.Probe != b.Probe:
		return !a.Probe
	case a.Rate != b.Rate:
		return a.Rate < b.Rate
	case a.Fraction != b.Fraction:
		return a.Fraction < b.Fraction
	case a.Wait != b.Wait:
		return a.Wait < b.Wait
	case a.Work != b.Work:
		return a.Work < b.Work
	}
	return a.Rep < b.Rep
}

func checkRun(r Run) error {
	switch {
	case r.Topology == "" || strings.ContainsAny(r.Topology, `/\ `):
		return fmt.Errorf("bad topology %q", r.Topology)
	case r.GOMAXPROCS < 1:
		return fmt.Errorf("gomaxprocs %d, want at least 1", r.GOMAXPROCS)
	case r.Rep < 1:
		return fmt.Errorf("rep %d, want at least 1 (repetitions count from 1)", r.Rep)
	}
	return nil
}

// strictUnmarshal rejects unknown fields and trailing data, so a file from
// something else is not taken for a record.
func strictUnmarshal(b []byte, v any) error {
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return errors.New("trailing data after the JSON value")
	}
	return nil
}

func writeJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "\t")
	if err != nil {
		return fmt.Errorf("encoding %s: %w", filepath.Base(path), err)
	}
	return writeFile(path, append(b, '\n'))
}

// writeFile writes to a temporary file in the same directory and renames
// it into place, so readers never see half a file.
func writeFile(path string, b []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	_, err = f.Write(b)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(f.Name(), 0o644)
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}

// ConnectionsList is the connection counts as a flag reads them: "5000" or
// "30,100,1000,5000".
func (p Plan) ConnectionsList() string {
	s := make([]string, len(p.Connections))
	for i, c := range p.Connections {
		s[i] = strconv.Itoa(c)
	}
	return strings.Join(s, ",")
}

// TargetList is the plan's targets, cmd/hello alone when it names none.
func (p Plan) TargetList() []string {
	if len(p.Targets) == 0 {
		return []string{TargetGo}
	}
	return p.Targets
}

// LoadList is the plan's load generators, wrk when it names none.
func (p Plan) LoadList() []Generator {
	if len(p.Loads) == 0 {
		return []Generator{LoadWrk}
	}
	return p.Loads
}

// KeepaliveList is the plan's upstream keepalive pools, the default alone
// when it names none.
func (p Plan) KeepaliveList() []Keepalive {
	if len(p.UpstreamKeepalive) == 0 {
		return []Keepalive{DefaultKeepalive}
	}
	return p.UpstreamKeepalive
}

// MostConnections is the most connections a cell of the plan opens; 0
// when the plan names none.
func (p Plan) MostConnections() int {
	if len(p.Connections) == 0 {
		return 0
	}
	return slices.Max(p.Connections)
}

// KeepaliveOf is the upstream keepalive nginx ran with for a cell of the
// plan: the cell's own when the plan sweeps several, else the plan's one.
func (p Plan) KeepaliveOf(c Cell) Keepalive {
	if c.Keepalive != 0 {
		return c.Keepalive
	}
	return p.KeepaliveList()[0]
}

// RoundOrder is the order of round rep (1-based): the list rotated left
// by rep-1, so round 1 runs in the listed order.
func RoundOrder[T any](list []T, rep int) []T {
	if len(list) == 0 {
		return nil
	}
	k := (rep - 1) % len(list)
	return append(slices.Clone(list[k:]), list[:k]...)
}

// SchedulesFor are the schedules a generator runs: a closed-loop one runs
// only the closed-loop schedules, and a plan without schedules has the
// closed-loop one.
func (p Plan) SchedulesFor(l Generator) []Schedule {
	if len(p.Schedules) == 0 {
		return []Schedule{{}}
	}
	if l.OpenLoop() {
		return p.Schedules
	}
	return slices.DeleteFunc(slices.Clone(p.Schedules), func(s Schedule) bool { return s.OpenLoop() || s.Probe })
}

// Applies reports whether a topology is measured for a target: the Go
// server has every path; another server has the paths that end at an HTTP
// listener on TCP, and a command or running target those that end where it
// listens (TCP, a unix socket); the nginx-only ceilings are measured once, with Go.
func Applies(target string, t topology.Topology) bool {
	if target == TargetGo || target == "" {
		return true
	}
	if argv := commandArgv(target); argv != nil {
		return commandServes(argv, t.Backend)
	}
	if where, ok := strings.CutPrefix(target, runningPrefix); ok {
		return runningServes(where, t.Backend)
	}
	return t.Backend == topology.HTTPTCP
}

// Cells lists every cell of the plan in the order a sweep runs them.
// Target and processor value are the outer loops (the servers restart for
// each); within them repetitions are interleaved (A B C A B C) so slow
// drift — thermal, page cache, TIME_WAIT build-up, a host that slows
// down — lands on every cell alike instead of on the last one. Each round
// starts one topology later than the one before (A B C, B C A, C A B):
// a drift within a round then favours a different topology each round,
// and the median over rounds cancels it, while every cell keeps the same
// predecessor inside a round. Unknown topologies are left out.
func (p Plan) Cells() []Cell { return p.withKeepalives(p.cellsOnce()) }

// cellsOnce is Cells with one upstream keepalive.
func (p Plan) cellsOnce() []Cell {
	// One by one: topology.LookupAll refuses the whole list over one
	// unknown name, and an env.json may name a topology since removed.
	var tops []topology.Topology
	for _, name := range p.Topologies {
		if t, err := topology.Lookup(name); err == nil && !slices.ContainsFunc(tops, func(u topology.Topology) bool { return u.Name == t.Name }) {
			tops = append(tops, t)
		}
	}
	var cells []Cell
	for _, target := range p.TargetList() {
		for _, g := range p.GOMAXPROCS {
			// Schedules at a fraction of the capacity go after the
			// closed-loop cells that measure it.
			for _, fractions := range []bool{false, true} {
				for r := 1; r <= p.Reps; r++ {
					for _, t := range RoundOrder(tops, r) {
						if !Applies(target, t) {
							continue
						}
						for _, c := range p.Connections {
							// The loads alternate too (AB, BA, ...): a machine
							// whose speed drifts favours neither.
							for _, l := range RoundOrder(p.LoadList(), r) {
								for _, sc := range p.SchedulesFor(l) {
									if (sc.Fraction > 0) == fractions {
										cells = append(cells, Cell{Target: target, Topology: t.Name, GOMAXPROCS: g,
											Connections: c, Load: l, Schedule: sc, Rep: r})
									}
								}
							}
						}
					}
				}
			}
		}
	}
	return cells
}

// withKeepalives repeats each block of cells (one target at one
// processor value) once per upstream keepalive when the plan sweeps
// several: nginx restarts for each, like the servers for each processor
// value. A plan of one keeps its cells' names: the keepalive is in them
// only when swept.
func (p Plan) withKeepalives(cells []Cell) []Cell {
	if len(p.UpstreamKeepalive) < 2 {
		return cells
	}
	var out []Cell
	for len(cells) > 0 {
		n := 1
		for n < len(cells) && cells[n].Target == cells[0].Target && cells[n].GOMAXPROCS == cells[0].GOMAXPROCS {
			n++
		}
		for _, k := range p.UpstreamKeepalive {
			for _, c := range cells[:n] {
				c.Keepalive = k
				out = append(out, c)
			}
		}
		cells = cells[n:]
	}
	return out
}

// Pair ties a window of the paired design (Plan.Paired) to its pair: the
// window of a topology and the window of standalone beside it, measured
// one after the other in the same load session, in an order drawn anew
// for every pair.
type Pair struct {
	// With is the topology compared with standalone in the pair; the
	// same on both of its windows.
	With string `json:"with"`
	// Index is the pair's number among With's pairs in its group, from 1.
	Index int `json:"index"`
	// Seq is the pair's number among every pair of its block, from 1: the
	// time order of the block's pairs.
	Seq int `json:"seq"`
	// First says this window ran first in its pair.
	First bool `json:"first"`
	// Twin marks the A/A's second standalone window, on a pool of its
	// own in a topology's place; With is then standalone.
	Twin bool `json:"twin,omitempty"`
}

// Paired is the paired design (-design paired): each start of the servers
// opens standalone's pool once and, for each other topology, its pool in
// the same load session, then alternates measured windows of standalone
// and that topology, in an order drawn for each pair from Seed; each pair
// gives one ratio. A window lasts the plan's Duration (-window), or the
// pair's topology's own (Windows).
type Paired struct {
	// Pairs is how many pairs each topology gets without a budget; with
	// one (RepsAuto.Budget), the pairs each gets before the budget spends
	// more where the ratios are widest.
	Pairs int `json:"pairs"`
	// Seed draws the order of each pair's two windows.
	Seed uint64 `json:"seed"`
	// Lead is each window's load before its measured time, on the kept
	// connections: the start from an idle pool (every connection sending
	// at once, nginx opening upstream connections anew) is not measured.
	Lead time.Duration `json:"lead_ns,omitempty"`
	// Leads are the topologies whose lead is not Lead (-lead
	// 1s,standalone=250ms): a path whose pool needs less to recover
	// from idle costs less a window.
	Leads map[string]time.Duration `json:"leads_ns,omitempty"`
	// Windows are the topologies whose windows are not the plan's
	// Duration (-window 3s,nginx-fcgi-tcp=6s): both windows of a pair
	// last its topology's. A server whose collector runs every second
	// or so puts a varying share of a short window into collection;
	// longer windows average it.
	Windows map[string]time.Duration `json:"windows_ns,omitempty"`
	// Check, when set, is a cross-check after the pairs.
	Check *Check `json:"check,omitempty"`
	// Duet runs each pair's two windows at the same time (-design
	// duet): standalone's server in a process and control group of its
	// own, the topology's servers in another, the two groups of equal CPU
	// weight on the servers' CPUs, so that each side has half of them
	// when both are busy. Without it the two windows run one after the
	// other on one set of servers.
	Duet bool `json:"duet,omitempty"`
	// Own runs standalone's server in a process of its own, beside the
	// process that serves the topologies' backends, as the two would be
	// deployed (-standalone-process own; a duet's always is). Without it
	// one cmd/hello serves standalone and every backend, and their kept
	// connections share one heap and its collections.
	Own bool `json:"own_standalone,omitempty"`
	// Latency, when set, is the latency phase after each block's first
	// pairs: every path alone, open loop at one rate.
	Latency *Latency `json:"latency,omitempty"`
}

// Latency is the paired design's latency phase: after a block's first
// pairs, standalone and each path with Go behind it run alone, open loop
// (Poisson) at one rate with the plan's connections, standalone's runs
// interleaved with the paths' (standalone, A, standalone, B, ...) for
// Rounds rounds of Duration each, on the per-run engine.
type Latency struct {
	// Rate is the rate in req/s; 0 with Fraction.
	Rate float64 `json:"rate,omitempty"`
	// Fraction, instead of a Rate, is the fraction of the slowest path's
	// median req/s in the block's pairs (-latency-rate auto: a half).
	Fraction float64 `json:"fraction,omitempty"`
	Rounds   int     `json:"rounds"`
	// Duration is each run's measured time.
	Duration time.Duration `json:"duration_ns"`
}

// Schedule is the latency runs' schedule.
func (l Latency) Schedule() Schedule { return Schedule{Rate: l.Rate, Fraction: l.Fraction} }

// LatencyRun reports whether c is a run of the plan's latency phase: a
// paired plan's windows are closed loop, its latency runs alone open.
func (p Plan) LatencyRun(c Cell) bool {
	return p.Paired != nil && p.Paired.Latency != nil && c.OpenLoop()
}

// Design names the design of a paired plan: "duet" or "paired".
func (p Paired) Design() string {
	if p.Duet {
		return "duet"
	}
	return "paired"
}

// LeadOf is a window's lead on topology top.
func (p Paired) LeadOf(top string) time.Duration {
	if d, ok := p.Leads[top]; ok {
		return d
	}
	return p.Lead
}

// WindowOf is how long the windows of a pair with topology top last.
func (p Plan) WindowOf(top string) time.Duration {
	if p.Paired != nil {
		if d, ok := p.Paired.Windows[top]; ok {
			return d
		}
	}
	return p.Duration
}

// WindowOfRun is how long run r's window lasted: its pair's topology's
// (WindowOf), or the plan's Duration for a run outside pairs.
func (p Plan) WindowOfRun(r Run) time.Duration {
	if r.Pair != nil {
		return p.WindowOf(r.Pair.With)
	}
	return p.Duration
}

// WindowsLabel is a pair's window length, with the topologies whose own
// is another, in the plan's order: "3s (nginx-fcgi-tcp 6s)".
func (p Plan) WindowsLabel() string {
	out := p.Duration.String()
	var own []string
	for _, top := range p.Topologies {
		if d := p.WindowOf(top); d != p.Duration {
			own = append(own, top+" "+d.String())
		}
	}
	if len(own) > 0 {
		out += " (" + strings.Join(own, ", ") + ")"
	}
	return out
}

// Check is the paired design's cross-check: one run each of another load
// generator on a few topologies at one processor value, after the pairs,
// with the plan's connections; the report prints their ratio beside the
// pairs'.
type Check struct {
	Load       Generator     `json:"load"`
	Topologies []string      `json:"topologies"`
	GOMAXPROCS int           `json:"gomaxprocs"`
	Duration   time.Duration `json:"duration_ns"`
}

// Checked reports whether r is a run of the plan's cross-check.
func (p Plan) Checked(r Cell) bool {
	if p.Paired == nil || p.Paired.Check == nil {
		return false
	}
	c := p.Paired.Check
	return r.LoadName() == c.Load && r.GOMAXPROCS == c.GOMAXPROCS && slices.Contains(c.Topologies, r.Topology)
}

// CheckCells are the cross-check's cells, in its order.
func (p Plan) CheckCells() []Cell {
	if p.Paired == nil || p.Paired.Check == nil {
		return nil
	}
	c := p.Paired.Check
	var cells []Cell
	for _, t := range c.Topologies {
		cells = append(cells, Cell{Target: p.TargetList()[0], Topology: t, GOMAXPROCS: c.GOMAXPROCS, Connections: p.Connections[0], Load: c.Load, Rep: 1})
	}
	return cells
}
