package wrk

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var (
	update  = flag.Bool("update", false, "rewrite the golden .json files in testdata from the .txt captures")
	capture = flag.Bool("capture", false, "recapture the wrk4-*.txt files in testdata by running the installed wrk")
)

// TestGolden parses every captured report in testdata and compares the
// Result with its .json golden file.
func TestGolden(t *testing.T) {
	files, err := filepath.Glob("testdata/*.txt")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, txt := range files {
		name := strings.TrimSuffix(filepath.Base(txt), ".txt")
		t.Run(name, func(t *testing.T) {
			f, err := os.Open(txt)
			require.NoError(t, err)
			defer f.Close()
			res, err := Parse(f)
			require.NoError(t, err)
			got, err := json.MarshalIndent(res, "", "\t")
			require.NoError(t, err)
			got = append(got, '\n')
			golden := strings.TrimSuffix(txt, ".txt") + ".json"
			if *update {
				require.NoError(t, os.WriteFile(golden, got, 0o644))
			}
			want, err := os.ReadFile(golden)
			require.NoError(t, err, "run go test ./internal/wrk -update")
			assert.Equal(t, string(want), string(got))
			checkConsistent(t, res)
		})
	}
}

// checkConsistent checks relations every wrk report satisfies, so a golden
// file refreshed with -update cannot silently accept a wrong parse.
func checkConsistent(t *testing.T, r Result) {
	t.Helper()
	assert.NotEmpty(t, r.URL)
	assert.Positive(t, r.Duration)
	assert.GreaterOrEqual(t, r.Connections, r.Threads)
	assert.GreaterOrEqual(t, r.Latency.Max, r.Latency.Avg)
	if r.Elapsed > 0 {
		// Requests/sec is requests over the unrounded runtime; Elapsed is
		// printed with two decimals.
		rate := float64(r.Requests) / r.Elapsed.Seconds()
		assert.InEpsilon(t, r.RequestsPerSec+1e-9, rate+1e-9, 0.01, "requests/sec vs requests/elapsed")
	}
	for i := 1; i < len(r.Distribution); i++ {
		assert.LessOrEqual(t, r.Distribution[i-1].Latency, r.Distribution[i].Latency, "percentiles ascend")
	}
	if s := r.Script; s != nil {
		assert.Equal(t, r.Requests, s.Requests)
		assert.Equal(t, r.Errors, s.Errors, "script and report count the same errors")
		assert.InDelta(t, r.Elapsed.Seconds(), s.Elapsed.Seconds(), 0.0051)
		assert.InEpsilon(t, r.BytesRead+1, float64(s.Bytes)+1, 0.01)
		for i := 1; i < len(s.Percentiles); i++ {
			assert.LessOrEqual(t, s.Percentiles[i-1].Latency, s.Percentiles[i].Latency, "percentiles ascend")
		}
		assert.LessOrEqual(t, s.Percentiles[len(s.Percentiles)-1].Latency, s.LatencyMax)
		assert.LessOrEqual(t, s.LatencyMin, s.LatencyMax)
		for _, p := range r.Distribution {
			exact, _ := r.Percentile(p.P)
			assert.InDelta(t, float64(p.Latency), float64(exact), float64(p.Latency)*0.01+float64(10*time.Microsecond), "p%v", p.P)
		}
	}
}

// reference2013 are the figures the 2013 post printed for its eight wrk
// 3.0.4 runs (-t100 -c5000 -d30s), one row per GOMAXPROCS and topology, as
// internal/analysis/reference/seed-2013-nginx-go.csv has them.
var reference2013 = []struct {
	gomaxprocs int
	topology   string
	rate       float64 // Requests/sec
	requests   int64
	latency    [3]float64 // avg, stdev, max in ms
	errors     Errors     // the Socket errors line
}{
	{1, "standalone", 42745.15, 1281567, [3]float64{116.96, 17.76, 173.96}, Errors{}},
	{1, "nginx-http", 39991.57, 1198450, [3]float64{124.57, 18.26, 209.70}, Errors{}},
	{1, "nginx-fcgi-tcp", 9580.75, 287416, [3]float64{514.57, 119.80, 1210}, Errors{Timeout: 661}},
	{1, "nginx-fcgi-unix", 11670.72, 350162, [3]float64{425.64, 80.53, 925.03}, Errors{Timeout: 210}},
	{8, "standalone", 128402.88, 3837995, [3]float64{39.25, 8.49, 86.45}, Errors{}},
	{8, "nginx-http", 74442.91, 2232068, [3]float64{336.77, 297.88, 632.52}, Errors{}},
	{8, "nginx-fcgi-tcp", 24026.50, 721027, [3]float64{217.69, 121.22, 1800}, Errors{Write: 176, Timeout: 1343}},
	{8, "nginx-fcgi-unix", 30324.77, 909836, [3]float64{694.32, 332.27, 1790}, Errors{}},
}

// TestWrk3Reference parses the wrk 3.0.4 reports reconstructed from the
// 2013 post, as wrk printed them and as copied from the post's web page
// (-nbsp: non-breaking spaces), to the figures the post printed.
func TestWrk3Reference(t *testing.T) {
	for _, ref := range reference2013 {
		for _, suffix := range []string{"", "-nbsp"} {
			name := fmt.Sprintf("wrk3-2013-g%d-%s%s", ref.gomaxprocs, ref.topology, suffix)
			t.Run(name, func(t *testing.T) {
				b, err := os.ReadFile(filepath.Join("testdata", name+".txt"))
				require.NoError(t, err)
				if suffix == "-nbsp" {
					require.Contains(t, string(b), "\u00a0", "a pasted report carries non-breaking spaces")
				}
				r, err := Parse(bytes.NewReader(b))
				require.NoError(t, err)
				assert.Equal(t, 100, r.Threads)
				assert.Equal(t, 5000, r.Connections)
				assert.Equal(t, 30*time.Second, r.Duration)
				assert.Equal(t, ref.rate, r.RequestsPerSec)
				assert.Equal(t, ref.requests, r.Requests)
				ms := func(v float64) time.Duration { return time.Duration(math.Round(v * 1e6)) }
				assert.Equal(t, ms(ref.latency[0]), r.Latency.Avg)
				assert.Equal(t, ms(ref.latency[1]), r.Latency.Stdev)
				assert.Equal(t, ms(ref.latency[2]), r.Latency.Max)
				assert.Equal(t, ref.errors, r.Errors)
			})
		}
	}
}

// TestReference2013MatchesCSV keeps reference2013 equal to the reference
// CSV the report compares against.
func TestReference2013MatchesCSV(t *testing.T) {
	f, err := os.Open("../analysis/reference/seed-2013-nginx-go.csv")
	require.NoError(t, err)
	defer f.Close()
	cr := csv.NewReader(f)
	cr.Comment = '#'
	rows, err := cr.ReadAll()
	require.NoError(t, err)
	require.Len(t, rows, len(reference2013)+1)
	for i, ref := range reference2013 {
		e := ref.errors
		want := []string{
			strconv.Itoa(ref.gomaxprocs), ref.topology,
			strconv.FormatFloat(ref.rate, 'f', 2, 64), strconv.FormatInt(ref.requests, 10),
		}
		for _, v := range ref.latency {
			want = append(want, strconv.FormatFloat(v, 'f', -1, 64))
		}
		for _, v := range []int64{e.Connect, e.Read, e.Write, e.Timeout} {
			want = append(want, strconv.FormatInt(v, 10))
		}
		got := rows[i+1]
		// The CSV prints latencies as the post did ("209.70", "1210").
		for j := 4; j <= 6; j++ {
			v, err := strconv.ParseFloat(got[j], 64)
			require.NoError(t, err)
			got[j] = strconv.FormatFloat(v, 'f', -1, 64)
		}
		assert.Equal(t, want, got, "row %d", i+1)
	}
}

// TestParseUnicodeSpaces: every Unicode space is read as an ASCII space,
// in any position, in every kind of line.
func TestParseUnicodeSpaces(t *testing.T) {
	want, err := Parse(strings.NewReader(good))
	require.NoError(t, err)
	for _, sp := range []string{"\u00a0", "\u2007", "\u202f", "\u3000", "\u2009", "\t", "\u00a0 \u00a0"} {
		t.Run(fmt.Sprintf("%q", sp), func(t *testing.T) {
			in := strings.ReplaceAll(good, " ", sp)
			got, err := Parse(strings.NewReader(in))
			require.NoError(t, err)
			assert.Equal(t, want, got)
		})
	}
	// Not a space: a zero-width space inside a number is still an error.
	_, err = Parse(strings.NewReader(strings.Replace(good, "58967", "589\u200b67", 1)))
	var pe *ParseError
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, 11, pe.Line)
}

func TestUnits(t *testing.T) {
	times := []struct {
		in   string
		want time.Duration
	}{
		{"0.00us", 0},
		{"633.62us", 633620 * time.Nanosecond},
		{"1.47ms", 1470 * time.Microsecond},
		{"1.20s", 1200 * time.Millisecond},
		{"30s", 30 * time.Second},
		{"1.50m", 90 * time.Second},
		{"2m", 2 * time.Minute},
		{"1.00h", time.Hour},
	}
	for _, tc := range times {
		t.Run(tc.in, func(t *testing.T) {
			got, err := parseTime(tc.in)
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
	bytesCases := []struct {
		in   string
		want float64
	}{
		{"0.00B", 0}, {"343.14B", 343.14}, {"123.21KB", 123.21 * 1024},
		{"7.25MB", 7.25 * 1024 * 1024}, {"17.76GB", 17.76 * (1 << 30)}, {"1.50TB", 1.5 * (1 << 40)},
	}
	for _, tc := range bytesCases {
		t.Run(tc.in, func(t *testing.T) {
			got, err := parseBytes(tc.in)
			require.NoError(t, err)
			assert.InDelta(t, tc.want, got, 1e-6)
		})
	}
	metric := []struct {
		in   string
		want float64
	}{{"0.00", 0}, {"429.16", 429.16}, {"12.34k", 12340}, {"1.20M", 1.2e6}}
	for _, tc := range metric {
		t.Run(tc.in, func(t *testing.T) {
			got, err := parseMetric(tc.in)
			require.NoError(t, err)
			assert.InDelta(t, tc.want, got, 1e-6)
		})
	}
	for _, bad := range []string{"", "ms", "12", "12x", "1.2.3ms", "nanms", "infs"} {
		_, err := parseTime(bad)
		assert.Error(t, err, "time %q", bad)
	}
	for _, bad := range []string{"", "B", "12", "12XB", "12kB", "NaNB"} {
		_, err := parseBytes(bad)
		assert.Error(t, err, "bytes %q", bad)
	}
	for _, bad := range []string{"", "k", "12x", "inf", "1e5"} {
		_, err := parseMetric(bad)
		assert.Error(t, err, "count %q", bad)
	}
	p, err := parsePercent("-nan%")
	require.NoError(t, err)
	assert.Nil(t, p)
	p, err = parsePercent("90.85%")
	require.NoError(t, err)
	assert.Equal(t, 90.85, *p)
}

const good = `Running 1s test @ http://127.0.0.1:8080/
  2 threads and 10 connections
  Thread Stats   Avg      Stdev     Max   +/- Stdev
    Latency   633.62us    1.47ms  17.97ms   90.85%
    Req/Sec    28.22k     4.59k   42.25k    76.19%
  Latency Distribution
     50%  134.00us
     75%  310.00us
     90%    1.91ms
     99%    7.78ms
  58967 requests in 1.10s, 7.25MB read
  Socket errors: connect 0, read 12, write 0, timeout 10
  Non-2xx or 3xx responses: 3
Requests/sec:  53606.70
Transfer/sec:      6.59MB
`

func TestParseMalformed(t *testing.T) {
	lines := strings.SplitAfter(good, "\n")
	replace := func(n int, text string) string {
		l := append([]string(nil), lines...)
		l[n-1] = text
		return strings.Join(l, "")
	}
	upTo := func(n int) string { return strings.Join(lines[:n], "") }
	cases := []struct {
		name  string
		in    string
		line  int
		inMsg string
	}{
		{"empty", "", 1, "no wrk output"},
		{"not wrk", "hello\n", 1, "Running"},
		{"usage", "Usage: wrk <options> <url>\n  Options:\n", 1, "Running"},
		{"bad duration", replace(1, "Running 1x test @ http://127.0.0.1:8080/\n"), 1, "test duration"},
		{"truncated after header", upTo(2), 3, "unexpected end of output: missing the Thread Stats header"},
		{"truncated in stats", upTo(4), 5, "Req/Sec"},
		{"bad latency unit", replace(4, "    Latency   633.62xs    1.47ms  17.97ms   90.85%\n"), 4, "bad duration"},
		{"short stats line", replace(5, "    Req/Sec    28.22k     4.59k   42.25k\n"), 5, "Req/Sec"},
		{"bad count", replace(5, "    Req/Sec    28.22q     4.59k   42.25k    76.19%\n"), 5, "bad count"},
		{"bad percent", replace(5, "    Req/Sec    28.22k     4.59k   42.25k    76.19\n"), 5, "percentage"},
		{"bad percentile", replace(8, "     90%    1.91zz\n"), 8, "p90 latency"},
		{"empty distribution", upTo(6) + strings.Join(lines[10:], ""), 7, "expected percentile lines"},
		{"bad requests line", replace(11, "  58967 requests in 1.10s\n"), 11, "N requests in T, B read"},
		{"bad bytes", replace(11, "  58967 requests in 1.10s, 7.25QB read\n"), 11, "bytes read"},
		{"bad socket errors", replace(12, "  Socket errors: connect 0, read 12\n"), 12, "Socket errors"},
		{"bad non2xx", replace(13, "  Non-2xx or 3xx responses: many\n"), 13, "Non-2xx"},
		{"missing rate", replace(14, "\n"), 15, "Requests/sec"},
		{"bad rate", replace(14, "Requests/sec:  fast\n"), 14, "requests/sec"},
		{"truncated at end", upTo(14), 15, "Transfer/sec"},
		{"bad transfer", replace(15, "Transfer/sec:      6.59\n"), 15, "transfer/sec"},
		{"script without end", good + "topobench: begin 1\ntopobench: requests 1\n", 18, "without \"topobench: end\""},
		{"script interrupted", good + "topobench: begin 1\nhello\n", 17, "interrupted"},
		{"script missing key", good + "topobench: begin 1\ntopobench: end 1\n", 17, "lacks"},
		{"script unknown key", good + "topobench: begin 1\ntopobench: colour blue\n", 17, "unknown topobench key"},
		{"script bad value", good + "topobench: begin 1\ntopobench: requests -3\n", 17, "expected a count"},
		{"script bad version", good + "topobench: begin 2\n", 16, "version"},
		{"script no begin", good + "topobench: requests 3\n", 16, "must start"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse(strings.NewReader(tc.in))
			var pe *ParseError
			require.ErrorAs(t, err, &pe)
			assert.Equal(t, tc.line, pe.Line, "line of %v", err)
			assert.Contains(t, err.Error(), tc.inMsg)
			assert.Contains(t, err.Error(), fmt.Sprintf("line %d:", tc.line))
		})
	}
}

func TestParseGoodAndExtras(t *testing.T) {
	r, err := Parse(strings.NewReader(strings.ReplaceAll(good, "\n", "\r\n")))
	require.NoError(t, err, "CRLF line ends")
	assert.Equal(t, Errors{Read: 12, Timeout: 10, Status: 3}, r.Errors)
	assert.Equal(t, int64(25), r.Errors.Total())
	assert.Equal(t, int64(22), r.Errors.Socket())
	p99, ok := r.Percentile(99)
	assert.True(t, ok)
	assert.Equal(t, 7780*time.Microsecond, p99)
	_, ok = r.Percentile(99.9)
	assert.False(t, ok, "p99.9 needs the script")
	assert.Equal(t, 17970*time.Microsecond, r.MaxLatency())

	// Another script's output after the report is ignored.
	r, err = Parse(strings.NewReader(good + "my script says hi\n"))
	require.NoError(t, err)
	assert.Nil(t, r.Script)
}

// TestCapture reruns the captures in testdata with the installed wrk
// against the in-process test server. Run by hand with -capture, then
// -update to refresh the golden files.
func TestCapture(t *testing.T) {
	if !*capture {
		t.Skip("recapture with -capture")
	}
	base := startServer(t)
	script, err := WriteScript(t.TempDir())
	require.NoError(t, err)
	captures := []struct {
		name string
		opt  Options
	}{
		{"wrk4-latency", Options{URL: base + "/", Threads: 2, Connections: 10, Duration: time.Second, Latency: true}},
		{"wrk4-plain", Options{URL: base + "/", Threads: 2, Connections: 10, Duration: time.Second}},
		{"wrk4-socket-errors", Options{URL: base + "/flaky", Threads: 2, Connections: 10, Duration: 2 * time.Second, Timeout: time.Second, Latency: true}},
		{"wrk4-non2xx", Options{URL: base + "/missing", Threads: 2, Connections: 10, Duration: time.Second, Latency: true}},
		{"wrk4-seconds", Options{URL: base + "/slow", Threads: 1, Connections: 4, Duration: 3 * time.Second, Latency: true}},
		{"wrk4-no-samples", Options{URL: base + "/hang", Threads: 2, Connections: 4, Duration: 3 * time.Second, Timeout: time.Second, Latency: true}},
		{"wrk4-script", Options{URL: base + "/", Threads: 2, Connections: 10, Duration: time.Second, Latency: true, Script: script}},
		{"wrk4-script-errors", Options{URL: base + "/flaky", Threads: 2, Connections: 10, Duration: 2 * time.Second, Timeout: time.Second, Script: script}},
		{"wrk4-script-no-samples", Options{URL: base + "/hang", Threads: 2, Connections: 4, Duration: 3 * time.Second, Timeout: time.Second, Script: script}},
		{"wrk4-t100-c1000", Options{URL: base + "/", Threads: 100, Connections: 1000, Duration: 2 * time.Second, Latency: true, Script: script}},
	}
	for _, c := range captures {
		_, raw, err := Run(context.Background(), c.opt)
		var pe *ParseError
		if err != nil && !errors.As(err, &pe) {
			require.NoError(t, err, c.name)
		}
		require.NoError(t, os.WriteFile(filepath.Join("testdata", c.name+".txt"), raw, 0o644))
		t.Logf("%s: %s", c.name, strings.Join(c.opt.Command(), " "))
	}
}
