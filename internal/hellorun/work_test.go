package hellorun_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/topobench/topobench/internal/hellorun"
	"github.com/topobench/topobench/internal/procstat"
	"github.com/topobench/topobench/internal/testenv"
)

// TestWorkCostsItsCPUTime holds a real cmd/hello to its calibration: a
// request with work=200us must cost the process 200 µs ± 15% more CPU time
// (user + system, from /proc/PID/stat) than one with work=0. The two kinds
// run in alternating blocks on one kept-alive connection, so drift of a
// shared machine hits both alike, and the difference of their totals
// cancels what every request costs besides the work. /proc counts in 10 ms
// ticks: 6000 requests of each kind put that within 1% of the result.
func TestWorkCostsItsCPUTime(t *testing.T) {
	if testing.Short() {
		t.Skip("runs cmd/hello and measures its CPU time")
	}
	const (
		work   = 200 * time.Microsecond
		rounds = 6
		block  = 1000 // requests of one kind in a row
	)
	l := layout(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	s, err := hellorun.Start(ctx, hellorun.Config{Bin: testenv.HelloBin(t), Layout: l, Topologies: tops(t, "standalone"), GOMAXPROCS: 1})
	require.NoError(t, err)
	defer func() { assert.NoError(t, s.Stop()) }()
	require.Positive(t, s.WorkCalibration())

	c, err := net.Dial("tcp", l.HTTP)
	require.NoError(t, err)
	defer c.Close()
	require.NoError(t, c.SetDeadline(time.Now().Add(90*time.Second)))
	br := bufio.NewReader(c)
	get := func(uri string) error {
		if _, err := io.WriteString(c, "GET "+uri+" HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
			return err
		}
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			return err
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			return err
		}
		if resp.StatusCode != 200 || string(b) != "Hello World\n" {
			return fmt.Errorf("GET %s: status %d, body %q", uri, resp.StatusCode, b)
		}
		return nil
	}
	cpu := func() time.Duration {
		p, err := procstat.FS("/proc").Process(s.Pid())
		require.NoError(t, err)
		return p.Self.Total()
	}
	run := func(uri string) time.Duration {
		before := cpu()
		for range block {
			require.NoError(t, get(uri))
		}
		return cpu() - before
	}
	withWork, without := "/?work="+work.String(), "/?work=0"
	for range 200 { // warm up: connection, Date cache, page faults
		require.NoError(t, get(withWork))
	}
	// Up to three measurements, each against the machine's speed at the
	// time: on a shared host the CPU time a unit of work costs drifts, so
	// a second cmd/hello calibrates after each (this test binary may be
	// built with -race, which slows its own loops) and the expected cost
	// is scaled by the drift. Three misses fail.
	calibrateNow := func() float64 {
		s2, err := hellorun.Start(ctx, hellorun.Config{Bin: testenv.HelloBin(t), Layout: layout(t), Topologies: tops(t, "standalone"), GOMAXPROCS: 1})
		require.NoError(t, err)
		defer func() { assert.NoError(t, s2.Stop()) }()
		return s2.WorkCalibration()
	}
	var per, want time.Duration
	for attempt := 1; attempt <= 3; attempt++ {
		var cpuWork, cpuPlain time.Duration
		began := time.Now()
		for range rounds {
			cpuWork += run(withWork)
			cpuPlain += run(without)
		}
		n := time.Duration(rounds * block)
		per = (cpuWork - cpuPlain) / n
		now := calibrateNow()
		want = time.Duration(float64(work) * s.WorkCalibration() / now)
		t.Logf("attempt %d: calibration %.4g units/us at start-up, %.4g now (so %v of work is %v now); %d requests each in %v: work=%v %v CPU (%v/req), work=0 %v CPU (%v/req); difference %v a request (%.1f%% of %v)",
			attempt, s.WorkCalibration(), now, work, want, n, time.Since(began).Round(time.Millisecond), work, cpuWork, cpuWork/n, cpuPlain, cpuPlain/n,
			per, 100*float64(per)/float64(want), want)
		if within(per, want) {
			break
		}
	}
	assert.True(t, within(per, want), "a work=%v request cost %v more CPU than work=0 (%v expected at the machine's speed now; want %.0f%% to %.0f%% of it)",
		work, per, want, 100*(1-workBelow), 100*(1+workAbove))
}

// A request's work may cost 15% less than calibrated and 30% more. With
// the calibration in handler-sized bursts it measured 109-113% on a quiet
// 2-core VM (112-124% with the earlier long-loop calibration), 93-110% on
// a busy one, and 120-124% in three attempts of one CI run beside the
// other packages' tests: a burst preempted by another process finds the
// caches colder than any calibration does. The bound still catches a
// calibration off by a factor, a unit counted twice or not at all.
const workBelow, workAbove = 0.15, 0.30

func within(per, want time.Duration) bool {
	return float64(per) >= (1-workBelow)*float64(want) && float64(per) <= (1+workAbove)*float64(want)
}
