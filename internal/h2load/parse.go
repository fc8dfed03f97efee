package h2load

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/topobench/topobench/internal/results"
)

// Result is one h2load report. Durations are time.Duration; JSON field
// names carry their unit (_ns for durations).
type Result struct {
	// Protocol is the "Application protocol" line: "h2", "http/1.1", or
	// "h2c" over plain HTTP; empty when no connection was set up.
	Protocol string `json:"protocol,omitempty"`
	// TLS is the handshake h2load reports; nil over plain HTTP.
	TLS *TLS `json:"tls,omitempty"`

	// Elapsed and ReqPerSec are the "finished in 1.00s, 17396.00 req/s"
	// line: the measured time, and the requests done in it per second.
	Elapsed   time.Duration `json:"elapsed_ns"`
	ReqPerSec float64       `json:"req_per_sec"`

	Requests Requests `json:"requests"`
	Status   Status   `json:"status"`
	Traffic  Traffic  `json:"traffic"`

	// Request, Connect and FirstByte are the "time for request", "time
	// for connect" and "time to 1st byte" rows; ClientRate the "req/s"
	// row, one sample a client (connection).
	Request    Timing `json:"time_for_request"`
	Connect    Timing `json:"time_for_connect"`
	FirstByte  Timing `json:"time_to_first_byte"`
	ClientRate Rates  `json:"req_per_sec_per_client"`
}

// TLS is the TLS block h2load prints once its first connection is up.
type TLS struct {
	Protocol string `json:"protocol"`
	Cipher   string `json:"cipher"`
	TempKey  string `json:"server_temp_key,omitempty"`
}

// Requests is the "requests:" line. Failed counts every request that did
// not succeed, error statuses included; Errored is its part that failed
// below HTTP (a reset stream, a closed connection), Timeout the part of
// that which timed out.
type Requests struct {
	Total     int64 `json:"total"`
	Started   int64 `json:"started"`
	Done      int64 `json:"done"`
	Succeeded int64 `json:"succeeded"`
	Failed    int64 `json:"failed"`
	Errored   int64 `json:"errored"`
	Timeout   int64 `json:"timeout"`
}

// Status is the "status codes:" line.
type Status struct {
	S2xx int64 `json:"2xx"`
	S3xx int64 `json:"3xx"`
	S4xx int64 `json:"4xx"`
	S5xx int64 `json:"5xx"`
}

// Traffic is the "traffic:" line, in bytes (the exact counts h2load
// prints in parentheses), and the header compression's savings in percent.
type Traffic struct {
	Total   int64   `json:"total_bytes"`
	Headers int64   `json:"header_bytes"`
	Data    int64   `json:"data_bytes"`
	Savings float64 `json:"header_savings_pct"`
}

// Timing is a row of durations: min, max, mean, standard deviation, and
// the percentage of samples within one deviation of the mean.
type Timing struct {
	Min         time.Duration `json:"min_ns"`
	Max         time.Duration `json:"max_ns"`
	Mean        time.Duration `json:"mean_ns"`
	SD          time.Duration `json:"sd_ns"`
	WithinSDPct float64       `json:"within_sd_pct"`
}

// Rates is the "req/s" row, in requests per second.
type Rates struct {
	Min         float64 `json:"min"`
	Max         float64 `json:"max"`
	Mean        float64 `json:"mean"`
	SD          float64 `json:"sd"`
	WithinSDPct float64 `json:"within_sd_pct"`
}

// ErrNoAnswer is a report without a single answer: h2load exits 0 even
// when it could not connect at all.
var ErrNoAnswer = errors.New("h2load got no answer")

var (
	reFinished = regexp.MustCompile(`^finished in (\S+), ([0-9.]+) req/s, `)
	reRequests = regexp.MustCompile(`^requests: (\d+) total, (\d+) started, (\d+) done, (\d+) succeeded, (\d+) failed, (\d+) errored, (\d+) timeout$`)
	reStatus   = regexp.MustCompile(`^status codes: (\d+) 2xx, (\d+) 3xx, (\d+) 4xx, (\d+) 5xx$`)
	reTraffic  = regexp.MustCompile(`^traffic: \S+ \((\d+)\) total, \S+ \((\d+)\) headers \(space savings ([0-9.]+)%\), \S+ \((\d+)\) data$`)
	reRow      = regexp.MustCompile(`^(time for request|time for connect|time to 1st byte|req/s)\s*:\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+)\s+([0-9.]+)%$`)
)

// Parse reads h2load's report. A report that lacks the finished,
// requests or "time for request" lines is an error; so is one in which no
// request was answered (ErrNoAnswer), saying whether a connection was
// ever set up.
func Parse(r io.Reader) (Result, error) {
	var res Result
	seen := map[string]bool{}
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		key, err := res.parseLine(line)
		if err != nil {
			return res, fmt.Errorf("h2load line %q: %w", line, err)
		}
		seen[key] = true
	}
	if err := sc.Err(); err != nil {
		return res, fmt.Errorf("reading h2load output: %w", err)
	}
	for _, k := range []string{"finished", "requests", "time for request"} {
		if !seen[k] {
			return res, fmt.Errorf("no %q line in h2load output", k)
		}
	}
	return res, res.answered()
}

// answered says why a report without an answer has none.
func (r Result) answered() error {
	switch {
	case r.Requests.Done > 0:
		return nil
	case r.Protocol == "":
		return fmt.Errorf("%w: no connection was set up (refused, or the TLS handshake failed)", ErrNoAnswer)
	default:
		return fmt.Errorf("%w: connected over %s, %d requests started, none answered", ErrNoAnswer, r.Protocol, r.Requests.Started)
	}
}

// parseLine reads one line into r and returns which line it was ("" for
// one Parse does not read).
func (r *Result) parseLine(line string) (string, error) {
	if k, v, ok := strings.Cut(line, ": "); ok {
		switch k {
		case "Application protocol":
			r.Protocol = v
			return k, nil
		case "TLS Protocol":
			r.tls().Protocol = v
			return k, nil
		case "Cipher":
			r.tls().Cipher = v
			return k, nil
		case "Server Temp Key":
			r.tls().TempKey = v
			return k, nil
		}
	}
	if m := reFinished.FindStringSubmatch(line); m != nil {
		return "finished", r.parseFinished(m)
	}
	if m := reRequests.FindStringSubmatch(line); m != nil {
		q := &r.Requests
		return "requests", ints(m[1:], &q.Total, &q.Started, &q.Done, &q.Succeeded, &q.Failed, &q.Errored, &q.Timeout)
	}
	if m := reStatus.FindStringSubmatch(line); m != nil {
		s := &r.Status
		return "status", ints(m[1:], &s.S2xx, &s.S3xx, &s.S4xx, &s.S5xx)
	}
	if m := reTraffic.FindStringSubmatch(line); m != nil {
		t := &r.Traffic
		if err := ints([]string{m[1], m[2], m[4]}, &t.Total, &t.Headers, &t.Data); err != nil {
			return "traffic", err
		}
		var err error
		t.Savings, err = strconv.ParseFloat(m[3], 64)
		return "traffic", err
	}
	if m := reRow.FindStringSubmatch(line); m != nil {
		return m[1], r.parseRow(m[1], m[2:])
	}
	return "", nil
}

func (r *Result) tls() *TLS {
	if r.TLS == nil {
		r.TLS = &TLS{}
	}
	return r.TLS
}

func (r *Result) parseFinished(m []string) error {
	d, err := time.ParseDuration(m[1])
	if err != nil {
		return fmt.Errorf("elapsed %q: %w", m[1], err)
	}
	r.Elapsed = d
	r.ReqPerSec, err = strconv.ParseFloat(m[2], 64)
	return err
}

// parseRow reads a row's min, max, mean, sd and +/- sd.
func (r *Result) parseRow(name string, f []string) error {
	pct, err := strconv.ParseFloat(f[4], 64)
	if err != nil {
		return err
	}
	if name == "req/s" {
		c := &r.ClientRate
		c.WithinSDPct = pct
		return floats(f[:4], &c.Min, &c.Max, &c.Mean, &c.SD)
	}
	t := map[string]*Timing{"time for request": &r.Request, "time for connect": &r.Connect, "time to 1st byte": &r.FirstByte}[name]
	t.WithinSDPct = pct
	for i, p := range []*time.Duration{&t.Min, &t.Max, &t.Mean, &t.SD} {
		d, err := time.ParseDuration(f[i])
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		*p = d
	}
	return nil
}

func ints(s []string, p ...*int64) error {
	for i := range p {
		n, err := strconv.ParseInt(s[i], 10, 64)
		if err != nil {
			return err
		}
		*p[i] = n
	}
	return nil
}

func floats(s []string, p ...*float64) error {
	for i := range p {
		x, err := strconv.ParseFloat(s[i], 64)
		if err != nil {
			return err
		}
		*p[i] = x
	}
	return nil
}

// Errors are the failed requests in the record's classes: the error
// statuses (400 and up, as wrk counts them), the timeouts, and the rest
// of what failed below HTTP as read errors.
func (r Result) Errors() results.Errors {
	return results.Errors{
		Read:    max(r.Requests.Errored-r.Requests.Timeout, 0),
		Timeout: r.Requests.Timeout,
		Status:  r.Status.S4xx + r.Status.S5xx,
	}
}

// Figures is the run in the record's generator-neutral form. h2load
// prints no percentiles, so Latency stays false; the mean and the
// maximum of "time for request" are kept.
func (r Result) Figures() results.Figures {
	return results.Figures{
		Requests:  r.Requests.Done,
		ReqPerSec: r.ReqPerSec,
		Errors:    r.Errors(),
		Mean:      r.Request.Mean,
		Max:       r.Request.Max,
		Protocol:  r.Protocol,
	}
}
