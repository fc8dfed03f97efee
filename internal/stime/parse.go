package stime

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

// Result is one run of s_time, its processes' reports summed. JSON field
// names carry their unit (_ns for durations).
type Result struct {
	// Procs is the count of reports read: one an s_time process.
	Procs int `json:"procs"`
	// Connections are the connections made, each one full handshake and
	// one GET answered; Reused those that resumed a session (none with
	// -new).
	Connections int64 `json:"connections"`
	Reused      int64 `json:"reused,omitempty"`
	// Elapsed and ConnPerSec are the measured time and the connections a
	// second in it, summed over the processes. Parse takes them from
	// s_time's whole "real seconds" (the longest process's); Run replaces
	// them with the span of the connections as it saw them end (Timed).
	Elapsed    time.Duration `json:"elapsed_ns"`
	ConnPerSec float64       `json:"connections_per_sec"`
	// RealSeconds is s_time's own wall time, the longest process's: whole
	// seconds from time(), one more than -time as a rule.
	RealSeconds int64 `json:"real_seconds"`
	// UserSeconds is the user CPU time s_time reports its connections
	// took ("connections in 0.90s"), summed.
	UserSeconds float64 `json:"user_seconds"`
	// BytesRead are the answers' bytes (headers and body), and
	// BytesPerConn their mean a connection.
	BytesRead    int64 `json:"bytes_read"`
	BytesPerConn int64 `json:"bytes_per_connection"`
}

// ErrNoAnswer is a report of connections that read nothing, or of none.
var ErrNoAnswer = errors.New("s_time got no answer")

var (
	reHeader = regexp.MustCompile(`^Collecting connection statistics for (\d+) seconds$`)
	reMarks  = regexp.MustCompile(`^[*r]+$`)
	reUser   = regexp.MustCompile(`^(\d+) connections in ([0-9.]+)s; ([0-9.]+) connections/user sec, bytes read (\d+)$`)
	reReal   = regexp.MustCompile(`^(\d+) connections in (\d+) real seconds, (\d+) bytes read per connection$`)
)

// report is one process's report as Parse reads it.
type report struct {
	marks, reused           int64
	userConns, realConns    int64
	userSecs                float64
	bytes, realSecs, perCon int64
	user, real              bool
}

// Parse reads s_time's output: one report, or several one after another
// (Run's processes, in order), summed. A report without both summary
// lines is an error (s_time stops at its first failed connection and
// prints none; its stderr says why), as is one whose counts disagree; a
// run without a connection or without a byte read is ErrNoAnswer.
func Parse(r io.Reader) (Result, error) {
	var reps []*report
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 64<<20) // the marks are one line, a character a connection
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if reHeader.MatchString(line) {
			reps = append(reps, &report{})
			continue
		}
		if line == "" || len(reps) == 0 {
			continue
		}
		if err := reps[len(reps)-1].parseLine(line); err != nil {
			return Result{}, fmt.Errorf("s_time line %q: %w", clip(line), err)
		}
	}
	if err := sc.Err(); err != nil {
		return Result{}, fmt.Errorf("reading s_time output: %w", err)
	}
	if len(reps) == 0 {
		return Result{}, errors.New("no \"Collecting connection statistics\" line in s_time output")
	}
	var res Result
	for i, rep := range reps {
		if err := rep.check(); err != nil {
			return Result{}, fmt.Errorf("s_time report %d of %d: %w", i+1, len(reps), err)
		}
		res.add(rep)
	}
	return res, res.answered()
}

// parseLine reads a marks or a summary line into rep.
func (rep *report) parseLine(line string) error {
	if reMarks.MatchString(line) {
		rep.marks += int64(len(line))
		rep.reused += int64(strings.Count(line, "r"))
		return nil
	}
	if m := reUser.FindStringSubmatch(line); m != nil {
		rep.user = true
		var err error
		if rep.userSecs, err = strconv.ParseFloat(m[2], 64); err != nil {
			return err
		}
		return ints([]string{m[1], m[4]}, &rep.userConns, &rep.bytes)
	}
	if m := reReal.FindStringSubmatch(line); m != nil {
		rep.real = true
		return ints(m[1:], &rep.realConns, &rep.realSecs, &rep.perCon)
	}
	return nil
}

// check refuses a report cut short or whose lines disagree.
func (rep *report) check() error {
	switch {
	case !rep.user:
		return errors.New("no \"connections/user sec\" line (s_time stops at its first failed connection; see its stderr)")
	case !rep.real:
		return errors.New("no \"real seconds\" line")
	case rep.userConns != rep.realConns:
		return fmt.Errorf("%d connections in one summary line, %d in the other", rep.userConns, rep.realConns)
	case rep.marks != rep.userConns:
		return fmt.Errorf("%d connections marked, %d summed", rep.marks, rep.userConns)
	case rep.realSecs < 1 && rep.realConns > 0:
		return fmt.Errorf("%d connections in %d real seconds", rep.realConns, rep.realSecs)
	}
	return nil
}

// add sums a process's report into r.
func (r *Result) add(rep *report) {
	r.Procs++
	r.Connections += rep.realConns
	r.Reused += rep.reused
	r.UserSeconds += rep.userSecs
	r.BytesRead += rep.bytes
	r.RealSeconds = max(r.RealSeconds, rep.realSecs)
	if rep.realSecs > 0 {
		r.ConnPerSec += float64(rep.realConns) / float64(rep.realSecs)
	}
	r.Elapsed = time.Duration(r.RealSeconds) * time.Second
	if r.Connections > 0 {
		r.BytesPerConn = r.BytesRead / r.Connections
	}
}

// answered says why a run without an answer has none.
func (r Result) answered() error {
	switch {
	case r.Connections == 0:
		return fmt.Errorf("%w: no connection made", ErrNoAnswer)
	case r.BytesRead == 0:
		return fmt.Errorf("%w: %d connections, not a byte read (the GETs went unanswered)", ErrNoAnswer, r.Connections)
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

// clip shortens a line of marks for an error's text.
func clip(line string) string {
	if len(line) > 80 {
		return line[:77] + "..."
	}
	return line
}

// Figures is the run in the record's generator-neutral form: every
// connection is one handshake and one GET, so requests are handshakes.
// s_time sees no status codes and times no request, so Errors stay zero
// and Latency false.
func (r Result) Figures() results.Figures {
	return results.Figures{
		Requests:         r.Connections,
		ReqPerSec:        r.ConnPerSec,
		Handshakes:       r.Connections,
		HandshakesPerSec: r.ConnPerSec,
	}
}
