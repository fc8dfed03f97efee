package h2load

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/topobench/topobench/internal/results"
)

func parseFile(t *testing.T, name string) (Result, error) {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", name))
	require.NoError(t, err)
	defer f.Close()
	return Parse(f)
}

// TestParse reads each real capture in testdata (see testdata/README.md).
func TestParse(t *testing.T) {
	us := time.Microsecond
	tls13 := &TLS{Protocol: "TLSv1.3", Cipher: "TLS_AES_128_GCM_SHA256", TempKey: "X25519 253 bits"}
	for _, tc := range []struct {
		file     string
		protocol string
		tls      *TLS
		elapsed  time.Duration
		rate     float64
		requests Requests
		status   Status
		traffic  Traffic
		request  Timing
		connect  Timing
		clients  Rates
		errors   results.Errors
	}{
		{
			file: "h2-tls.txt", protocol: "h2", tls: tls13, elapsed: time.Second, rate: 17396,
			requests: Requests{Total: 17396, Started: 17436, Done: 17396, Succeeded: 17396},
			status:   Status{S2xx: 17429},
			traffic:  Traffic{Total: 609814, Headers: 87393, Data: 208752, Savings: 94.55},
			request:  Timing{Min: 313 * us, Max: 7650 * us, Mean: 2240 * us, SD: 957 * us, WithinSDPct: 81.86},
			connect:  Timing{Min: 2110 * us, Max: 3510 * us, Mean: 2820 * us, SD: 601 * us, WithinSDPct: 50},
			clients:  Rates{Min: 4335.36, Max: 4369.40, Mean: 4347.79, SD: 14.88, WithinSDPct: 75},
		},
		{
			file: "h1-tls-t2.txt", protocol: "http/1.1", tls: tls13, elapsed: time.Second, rate: 17014,
			requests: Requests{Total: 17014, Started: 17018, Done: 17014, Succeeded: 17014},
			status:   Status{S2xx: 17014},
			traffic:  Traffic{Total: 2603142, Headers: 1735632, Data: 204192},
			request:  Timing{Min: 29 * us, Max: 72780 * us, Mean: 229 * us, SD: 797 * us, WithinSDPct: 95.79},
			connect:  Timing{Min: 3430 * us, Max: 6120 * us, Mean: 4680 * us, SD: 1170 * us, WithinSDPct: 50},
			clients:  Rates{Min: 3699.22, Max: 4802.43, Mean: 4250.32, SD: 499.38, WithinSDPct: 50},
		},
		{
			file: "h1-plain.txt", protocol: "http/1.1", elapsed: time.Second, rate: 24803,
			requests: Requests{Total: 24803, Started: 24807, Done: 24803, Succeeded: 24803},
			status:   Status{S2xx: 24803},
			traffic:  Traffic{Total: 3794859, Headers: 2530314, Data: 297684},
			request:  Timing{Min: 28 * us, Max: 11460 * us, Mean: 160 * us, SD: 504 * us, WithinSDPct: 94.29},
			connect:  Timing{Min: 12 * us, Max: 50 * us, Mean: 32 * us, SD: 15 * us, WithinSDPct: 50},
			clients:  Rates{Min: 4884.34, Max: 7464.76, Mean: 6194.90, SD: 1063.01, WithinSDPct: 50},
		},
		{
			file: "h1-tls-400.txt", protocol: "http/1.1", tls: tls13, elapsed: time.Second, rate: 13561,
			requests: Requests{Total: 13561, Started: 13563, Done: 13561, Failed: 13561},
			status:   Status{S4xx: 13561},
			traffic:  Traffic{Total: 2956298, Headers: 1383222, Data: 922148},
			request:  Timing{Min: 27 * us, Max: 6030 * us, Mean: 146 * us, SD: 349 * us, WithinSDPct: 95.91},
			connect:  Timing{Min: 4990 * us, Max: 5750 * us, Mean: 5370 * us, SD: 535 * us, WithinSDPct: 100},
			clients:  Rates{Min: 6074.65, Max: 7484.17, Mean: 6779.41, SD: 996.68, WithinSDPct: 100},
			errors:   results.Errors{Status: 13561},
		},
	} {
		t.Run(tc.file, func(t *testing.T) {
			r, err := parseFile(t, tc.file)
			require.NoError(t, err)
			assert.Equal(t, tc.protocol, r.Protocol)
			assert.Equal(t, tc.tls, r.TLS)
			assert.Equal(t, tc.elapsed, r.Elapsed)
			assert.InDelta(t, tc.rate, r.ReqPerSec, 1e-9)
			assert.Equal(t, tc.requests, r.Requests)
			assert.Equal(t, tc.status, r.Status)
			assert.Equal(t, tc.traffic, r.Traffic)
			assert.Equal(t, tc.request, r.Request)
			assert.Equal(t, tc.connect, r.Connect)
			assert.Equal(t, tc.clients, r.ClientRate)
			assert.NotZero(t, r.FirstByte.Max, "time to 1st byte")

			f := r.Figures()
			assert.Equal(t, tc.requests.Done, f.Requests)
			assert.Equal(t, tc.rate, f.ReqPerSec)
			assert.Equal(t, tc.errors, f.Errors)
			assert.Equal(t, tc.request.Mean, f.Mean)
			assert.Equal(t, tc.request.Max, f.Max)
			assert.False(t, f.Latency, "h2load prints no percentiles")
			assert.Equal(t, tc.protocol, f.Protocol)
		})
	}
}

// TestParseNoAnswer: h2load exits 0 with all zeros when nothing listens,
// and after a protocol nobody answers; both are errors that say which.
func TestParseNoAnswer(t *testing.T) {
	for _, tc := range []struct {
		file, want string
	}{
		{"refused-h1.txt", "h2load got no answer: no connection was set up (refused, or the TLS handshake failed)"},
		{"h2c-plain-h1-server.txt", "h2load got no answer: connected over h2c, 2 requests started, none answered"},
	} {
		t.Run(tc.file, func(t *testing.T) {
			_, err := parseFile(t, tc.file)
			require.ErrorIs(t, err, ErrNoAnswer)
			assert.EqualError(t, err, tc.want)
		})
	}
}

// TestParseBad: what is not an h2load report, or is cut short, is an error
// naming what is missing.
func TestParseBad(t *testing.T) {
	whole, err := os.ReadFile(filepath.Join("testdata", "h1-plain.txt"))
	require.NoError(t, err)
	drop := func(prefix string) string {
		var keep []string
		for _, l := range strings.Split(string(whole), "\n") {
			if !strings.HasPrefix(l, prefix) {
				keep = append(keep, l)
			}
		}
		return strings.Join(keep, "\n")
	}
	for _, tc := range []struct {
		name, in, want string
	}{
		{"empty", "", `no "finished" line in h2load output`},
		{"usage", "-c, -t: the number of clients must be greater than or equal to the number of threads.\n", `no "finished" line`},
		{"no requests line", drop("requests:"), `no "requests" line`},
		{"no request times", drop("time for request"), `no "time for request" line`},
		{"bad duration", strings.Replace(string(whole), "28us", "28xs", 1), `h2load line "time for request:`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse(strings.NewReader(tc.in))
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
			assert.NotErrorIs(t, err, ErrNoAnswer)
		})
	}
}
