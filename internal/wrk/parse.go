package wrk

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// ParseError is malformed or truncated wrk output. Line is 1-based; for
// output that ends too early it is the line after the last one.
type ParseError struct {
	Line int
	Text string
	Msg  string
}

func (e *ParseError) Error() string {
	if e.Text == "" {
		return fmt.Sprintf("line %d: %s", e.Line, e.Msg)
	}
	return fmt.Sprintf("line %d: %s: %q", e.Line, e.Msg, e.Text)
}

// scriptPrefix starts every line of the topobench script's block.
const scriptPrefix = "topobench:"

var (
	reRunning  = regexp.MustCompile(`^Running (\S+) test @ (\S+)$`)
	reThreads  = regexp.MustCompile(`^(\d+) threads and (\d+) connections$`)
	reHeader   = regexp.MustCompile(`^Thread Stats\s+Avg\s+Stdev\s+Max\s+\+/- Stdev$`)
	reRequests = regexp.MustCompile(`^(\d+) requests in (\S+), (\S+) read$`)
	reSocket   = regexp.MustCompile(`^Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)$`)
	reStatus   = regexp.MustCompile(`^Non-2xx or 3xx responses: (\d+)$`)
	reRate     = regexp.MustCompile(`^Requests/sec:\s+(\S+)$`)
	reTransfer = regexp.MustCompile(`^Transfer/sec:\s+(\S+)$`)
	rePct      = regexp.MustCompile(`^(\d+(?:\.\d+)?)%\s+(\S+)$`)
)

type line struct {
	n    int
	text string // trimmed, every run of spaces one ASCII space
}

// lines walks the non-blank lines of the output.
type lines struct {
	all []line
	i   int
	end int // line number after the last line
}

func (l *lines) peek() (line, bool) {
	if l.i >= len(l.all) {
		return line{n: l.end}, false
	}
	return l.all[l.i], true
}

func (l *lines) next() (line, bool) {
	ln, ok := l.peek()
	if ok {
		l.i++
	}
	return ln, ok
}

// expect consumes the next line, which must match re, and returns its
// submatches; what names the line for the error message.
func (l *lines) expect(re *regexp.Regexp, what string) ([]string, line, error) {
	ln, ok := l.next()
	if !ok {
		return nil, ln, &ParseError{Line: ln.n, Msg: "unexpected end of output: missing " + what}
	}
	m := re.FindStringSubmatch(ln.text)
	if m == nil {
		return nil, ln, &ParseError{Line: ln.n, Text: ln.text, Msg: "expected " + what}
	}
	return m, ln, nil
}

// Parse reads wrk's report. Blank lines and leading or trailing spaces are
// ignored, and any run of spaces counts as one; a space is any Unicode space
// (unicode.IsSpace), so reports copied from web pages, which carry
// non-breaking spaces, parse as wrk printed them. Lines after "Transfer/sec"
// other than the topobench script's block (other scripts' output) are
// ignored too. Anything else out of place is a *ParseError.
func Parse(r io.Reader) (Result, error) {
	var res Result
	l, err := readLines(r)
	if err != nil {
		return res, err
	}
	for _, part := range []func(*lines, *Result) error{parseRun, parseDistribution, parseTotals, parseRates, parseScripts} {
		if err := part(l, &res); err != nil {
			return res, err
		}
	}
	return res, nil
}

// readLines reads r's lines that are not blank, their spaces collapsed.
func readLines(r io.Reader) (*lines, error) {
	l := &lines{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	n := 0
	for sc.Scan() {
		n++
		// strings.Fields splits at every Unicode space, U+00A0 included.
		t := strings.Join(strings.Fields(sc.Text()), " ")
		if t != "" {
			l.all = append(l.all, line{n, t})
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading wrk output: %w", err)
	}
	l.end = n + 1
	if len(l.all) == 0 {
		return nil, &ParseError{Line: 1, Msg: "no wrk output"}
	}
	return l, nil
}

// parseRun reads the report's head: the test's duration and URL, the
// threads and connections, and the Thread Stats.
func parseRun(l *lines, res *Result) error {
	m, ln, err := l.expect(reRunning, `"Running ... test @ URL"`)
	if err != nil {
		return err
	}
	if res.Duration, err = parseTime(m[1]); err != nil {
		return &ParseError{Line: ln.n, Text: ln.text, Msg: "test duration: " + err.Error()}
	}
	res.URL = m[2]

	if m, _, err = l.expect(reThreads, `"N threads and M connections"`); err != nil {
		return err
	}
	res.Threads, _ = strconv.Atoi(m[1])
	res.Connections, _ = strconv.Atoi(m[2])

	if _, _, err = l.expect(reHeader, "the Thread Stats header"); err != nil {
		return err
	}
	if err := parseLatencyStats(l, &res.Latency); err != nil {
		return err
	}
	return parseRateStats(l, &res.ReqPerSec)
}

// parseDistribution reads the percentile lines after "Latency
// Distribution" (wrk --latency), if there are any.
func parseDistribution(l *lines, res *Result) error {
	if ln, ok := l.peek(); !ok || ln.text != "Latency Distribution" {
		return nil
	}
	l.next()
	for {
		ln, ok := l.peek()
		if !ok {
			break
		}
		m := rePct.FindStringSubmatch(ln.text)
		if m == nil {
			break
		}
		l.next()
		p, _ := strconv.ParseFloat(m[1], 64)
		d, err := parseTime(m[2])
		if err != nil {
			return &ParseError{Line: ln.n, Text: ln.text, Msg: fmt.Sprintf("p%s latency: %v", m[1], err)}
		}
		res.Distribution = append(res.Distribution, Percentile{P: p, Latency: d})
	}
	if len(res.Distribution) == 0 {
		ln, _ := l.peek()
		return &ParseError{Line: ln.n, Text: ln.text, Msg: "expected percentile lines after Latency Distribution"}
	}
	return nil
}

// parseTotals reads the requests, time and bytes line, then the socket
// errors and the non-2xx responses where wrk counted any.
func parseTotals(l *lines, res *Result) error {
	m, ln, err := l.expect(reRequests, `"N requests in T, B read"`)
	if err != nil {
		return err
	}
	if res.Requests, err = strconv.ParseInt(m[1], 10, 64); err != nil {
		return &ParseError{Line: ln.n, Text: ln.text, Msg: "request count: " + err.Error()}
	}
	if res.Elapsed, err = parseTime(m[2]); err != nil {
		return &ParseError{Line: ln.n, Text: ln.text, Msg: "elapsed time: " + err.Error()}
	}
	if res.BytesRead, err = parseBytes(m[3]); err != nil {
		return &ParseError{Line: ln.n, Text: ln.text, Msg: "bytes read: " + err.Error()}
	}

	if ln, ok := l.peek(); ok && strings.HasPrefix(ln.text, "Socket errors:") {
		l.next()
		m := reSocket.FindStringSubmatch(ln.text)
		if m == nil {
			return &ParseError{Line: ln.n, Text: ln.text, Msg: `expected "Socket errors: connect N, read N, write N, timeout N"`}
		}
		for i, p := range []*int64{&res.Errors.Connect, &res.Errors.Read, &res.Errors.Write, &res.Errors.Timeout} {
			if *p, err = strconv.ParseInt(m[i+1], 10, 64); err != nil {
				return &ParseError{Line: ln.n, Text: ln.text, Msg: "error count: " + err.Error()}
			}
		}
	}
	if ln, ok := l.peek(); ok && strings.HasPrefix(ln.text, "Non-2xx") {
		l.next()
		m := reStatus.FindStringSubmatch(ln.text)
		if m == nil {
			return &ParseError{Line: ln.n, Text: ln.text, Msg: `expected "Non-2xx or 3xx responses: N"`}
		}
		if res.Errors.Status, err = strconv.ParseInt(m[1], 10, 64); err != nil {
			return &ParseError{Line: ln.n, Text: ln.text, Msg: "response count: " + err.Error()}
		}
	}
	return nil
}

// parseRates reads the Requests/sec and Transfer/sec lines.
func parseRates(l *lines, res *Result) error {
	m, ln, err := l.expect(reRate, `"Requests/sec: X"`)
	if err != nil {
		return err
	}
	if res.RequestsPerSec, err = parseFloat(m[1]); err != nil {
		return &ParseError{Line: ln.n, Text: ln.text, Msg: "requests/sec: " + err.Error()}
	}
	if m, ln, err = l.expect(reTransfer, `"Transfer/sec: X"`); err != nil {
		return err
	}
	if res.TransferBytesPerSec, err = parseBytes(m[1]); err != nil {
		return &ParseError{Line: ln.n, Text: ln.text, Msg: "transfer/sec: " + err.Error()}
	}
	return nil
}

// parseScripts reads the rest: the topobench script's one block, among
// whatever other scripts printed.
func parseScripts(l *lines, res *Result) error {
	for {
		ln, ok := l.next()
		if !ok {
			return nil
		}
		if !strings.HasPrefix(ln.text, scriptPrefix) {
			continue
		}
		if res.Script != nil {
			return &ParseError{Line: ln.n, Text: ln.text, Msg: "second topobench block"}
		}
		l.i--
		s, err := parseScript(l)
		if err != nil {
			return err
		}
		res.Script = s
	}
}

// statsFields splits a Thread Stats line into its four values.
func statsFields(l *lines, name string) ([]string, line, error) {
	ln, ok := l.next()
	if !ok {
		return nil, ln, &ParseError{Line: ln.n, Msg: "unexpected end of output: missing Thread Stats " + name + " line"}
	}
	f := strings.Fields(ln.text)
	if len(f) != 5 || f[0] != name {
		return nil, ln, &ParseError{Line: ln.n, Text: ln.text, Msg: "expected Thread Stats " + name + " line (name, avg, stdev, max, +/- stdev)"}
	}
	return f[1:], ln, nil
}

func parseLatencyStats(l *lines, s *LatencyStats) error {
	f, ln, err := statsFields(l, "Latency")
	if err != nil {
		return err
	}
	for i, p := range []*time.Duration{&s.Avg, &s.Stdev, &s.Max} {
		if *p, err = parseTime(f[i]); err != nil {
			return &ParseError{Line: ln.n, Text: ln.text, Msg: "latency: " + err.Error()}
		}
	}
	if s.WithinStdev, err = parsePercent(f[3]); err != nil {
		return &ParseError{Line: ln.n, Text: ln.text, Msg: "latency: " + err.Error()}
	}
	return nil
}

func parseRateStats(l *lines, s *RateStats) error {
	f, ln, err := statsFields(l, "Req/Sec")
	if err != nil {
		return err
	}
	for i, p := range []*float64{&s.Avg, &s.Stdev, &s.Max} {
		if *p, err = parseMetric(f[i]); err != nil {
			return &ParseError{Line: ln.n, Text: ln.text, Msg: "req/sec: " + err.Error()}
		}
	}
	if s.WithinStdev, err = parsePercent(f[3]); err != nil {
		return &ParseError{Line: ln.n, Text: ln.text, Msg: "req/sec: " + err.Error()}
	}
	return nil
}

// parseScript reads the block the topobench Lua script prints:
//
//	topobench: begin 1
//	topobench: key value
//	...
//	topobench: end 1
func parseScript(l *lines) (*ScriptStats, error) {
	first, _ := l.next()
	key, val, _ := strings.Cut(strings.TrimSpace(strings.TrimPrefix(first.text, scriptPrefix)), " ")
	if key != "begin" {
		return nil, &ParseError{Line: first.n, Text: first.text, Msg: `topobench block must start with "topobench: begin"`}
	}
	if strings.TrimSpace(val) != "1" {
		return nil, &ParseError{Line: first.n, Text: first.text, Msg: "unknown topobench block version"}
	}
	s := &ScriptStats{}
	b := newScriptBlock(s)
	for {
		ln, ok := l.next()
		if !ok {
			return nil, &ParseError{Line: ln.n, Msg: `unexpected end of output: topobench block without "topobench: end"`}
		}
		if !strings.HasPrefix(ln.text, scriptPrefix) {
			return nil, &ParseError{Line: ln.n, Text: ln.text, Msg: `topobench block interrupted before "topobench: end"`}
		}
		f := strings.Fields(strings.TrimPrefix(ln.text, scriptPrefix))
		if len(f) != 2 {
			return nil, &ParseError{Line: ln.n, Text: ln.text, Msg: `expected "topobench: key value"`}
		}
		if f[0] == "end" {
			if err := b.complete(ln); err != nil {
				return nil, err
			}
			break
		}
		if err := b.set(ln, f[0], f[1]); err != nil {
			return nil, err
		}
	}
	for i, p := range scriptPercentiles {
		s.Percentiles = append(s.Percentiles, Percentile{P: p, Latency: b.pcts[i]})
	}
	return s, nil
}

// scriptBlock is where each key of a topobench block goes, and the keys
// seen so far.
type scriptBlock struct {
	ints   map[string]*int64
	micros map[string]*time.Duration
	pcts   []time.Duration
	seen   map[string]bool
}

func newScriptBlock(s *ScriptStats) *scriptBlock {
	b := &scriptBlock{
		ints: map[string]*int64{
			"requests":       &s.Requests,
			"bytes":          &s.Bytes,
			"errors_connect": &s.Errors.Connect,
			"errors_read":    &s.Errors.Read,
			"errors_write":   &s.Errors.Write,
			"errors_status":  &s.Errors.Status,
			"errors_timeout": &s.Errors.Timeout,
		},
		micros: map[string]*time.Duration{
			"duration_us":      &s.Elapsed,
			"latency_min_us":   &s.LatencyMin,
			"latency_mean_us":  &s.LatencyMean,
			"latency_stdev_us": &s.LatencyStdev,
			"latency_max_us":   &s.LatencyMax,
		},
		pcts: make([]time.Duration, len(scriptPercentiles)),
		seen: map[string]bool{},
	}
	for i, p := range scriptPercentiles {
		b.micros["latency_p"+strconv.FormatFloat(p, 'f', -1, 64)+"_us"] = &b.pcts[i]
	}
	return b
}

// set reads key k's value v, a count or microseconds, once.
func (b *scriptBlock) set(ln line, k, v string) error {
	if b.seen[k] {
		return &ParseError{Line: ln.n, Text: ln.text, Msg: "duplicate topobench key " + k}
	}
	b.seen[k] = true
	if p, ok := b.ints[k]; ok {
		x, err := strconv.ParseInt(v, 10, 64)
		if err != nil || x < 0 {
			return &ParseError{Line: ln.n, Text: ln.text, Msg: "expected a count for " + k}
		}
		*p = x
		return nil
	}
	if p, ok := b.micros[k]; ok {
		x, err := strconv.ParseFloat(v, 64)
		if err != nil || x < 0 || math.IsInf(x, 0) || math.IsNaN(x) {
			return &ParseError{Line: ln.n, Text: ln.text, Msg: "expected microseconds for " + k}
		}
		*p = time.Duration(math.Round(x * float64(time.Microsecond)))
		return nil
	}
	return &ParseError{Line: ln.n, Text: ln.text, Msg: "unknown topobench key " + k}
}

// complete refuses, at the block's end line ln, a block that lacks a key.
func (b *scriptBlock) complete(ln line) error {
	for name := range b.ints {
		if !b.seen[name] {
			return &ParseError{Line: ln.n, Text: ln.text, Msg: "topobench block lacks " + name}
		}
	}
	for name := range b.micros {
		if !b.seen[name] {
			return &ParseError{Line: ln.n, Text: ln.text, Msg: "topobench block lacks " + name}
		}
	}
	return nil
}

// Units wrk prints: time as us, ms, s, m, h (format_time_us, format_time_s),
// bytes with binary prefixes K, M, G, T, P followed by B, and counts with
// metric prefixes k, M, G, T, P.
var (
	timeUnits = []struct {
		suffix string
		d      time.Duration
	}{
		// Two-letter suffixes first so "ms" is not read as "m" + "s".
		{"us", time.Microsecond}, {"ms", time.Millisecond},
		{"s", time.Second}, {"m", time.Minute}, {"h", time.Hour},
	}
	binaryPrefixes = map[string]float64{"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40, "P": 1 << 50}
	metricPrefixes = map[string]float64{"": 1, "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15}
)

// parseTime reads "633.62us", "1.20s", "30s", "1.50m".
func parseTime(s string) (time.Duration, error) {
	for _, u := range timeUnits {
		num, ok := strings.CutSuffix(s, u.suffix)
		if !ok || num == "" || !isNumber(num) {
			continue
		}
		v, err := parseFloat(num)
		if err != nil {
			return 0, err
		}
		return time.Duration(math.Round(v * float64(u.d))), nil
	}
	return 0, fmt.Errorf("bad duration %q (want a number with us, ms, s, m or h)", s)
}

// parseBytes reads "7.25MB", "300.00B", "0.87GB".
func parseBytes(s string) (float64, error) {
	num, ok := strings.CutSuffix(s, "B")
	if ok && num != "" {
		prefix := num[len(num)-1:]
		if f, ok := binaryPrefixes[prefix]; ok && prefix != "" {
			if v, err := parseFloat(num[:len(num)-1]); err == nil {
				return v * f, nil
			}
		} else if v, err := parseFloat(num); err == nil {
			return v, nil
		}
	}
	return 0, fmt.Errorf("bad byte count %q (want a number with B, KB, MB, GB, TB or PB)", s)
}

// parseMetric reads "429.16", "28.22k", "1.20M".
func parseMetric(s string) (float64, error) {
	if s != "" {
		prefix := s[len(s)-1:]
		if f, ok := metricPrefixes[prefix]; ok && prefix != "" {
			if v, err := parseFloat(s[:len(s)-1]); err == nil {
				return v * f, nil
			}
		} else if v, err := parseFloat(s); err == nil {
			return v, nil
		}
	}
	return 0, fmt.Errorf("bad count %q (want a number, optionally with k, M, G, T or P)", s)
}

// parsePercent reads "90.85%"; "nan%" and "-nan%" (no samples) give nil.
func parsePercent(s string) (*float64, error) {
	num, ok := strings.CutSuffix(s, "%")
	if !ok {
		return nil, fmt.Errorf("bad percentage %q", s)
	}
	switch strings.ToLower(num) {
	case "nan", "-nan":
		return nil, nil
	}
	v, err := parseFloat(num)
	if err != nil {
		return nil, fmt.Errorf("bad percentage %q", s)
	}
	return &v, nil
}

// parseFloat accepts plain decimal numbers only (no "inf", "nan", hex).
func parseFloat(s string) (float64, error) {
	if !isNumber(s) {
		return 0, fmt.Errorf("bad number %q", s)
	}
	return strconv.ParseFloat(s, 64)
}

func isNumber(s string) bool {
	digits := 0
	for i, c := range s {
		switch {
		case c >= '0' && c <= '9':
			digits++
		case c == '.':
		case c == '-' && i == 0:
		default:
			return false
		}
	}
	return digits > 0 && strings.Count(s, ".") <= 1
}
