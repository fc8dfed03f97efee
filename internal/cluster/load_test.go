package cluster

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/topobench/topobench/internal/hdr"
	"github.com/topobench/topobench/internal/load"
)

func TestParseRoles(t *testing.T) {
	for in, want := range map[string][]Role{
		"":                nil,
		"load":            {RoleLoad},
		"server":          {RoleServer},
		"server,load":     {RoleServer, RoleLoad},
		" load , server ": {RoleLoad, RoleServer},
		"load,load,gpu":   {RoleLoad},
		"Server":          nil,
	} {
		assert.Equal(t, want, ParseRoles(in), "%q", in)
	}
}

func TestSelect(t *testing.T) {
	nodes := []Node{
		{ID: "a", Roles: []Role{RoleServer}, Ready: true},
		{ID: "b", Roles: []Role{RoleLoad}, Ready: true},
		{ID: "c", Roles: []Role{RoleLoad, RoleServer}, Ready: true},
		{ID: "d", Roles: []Role{RoleLoad}, Ready: false},
	}
	ls, err := Select(nodes, RoleLoad)
	require.NoError(t, err)
	assert.Equal(t, []string{"b", "c"}, ids(ls))
	_, err = Select(nodes[:1], RoleLoad)
	assert.ErrorIs(t, err, ErrNoNodes)
	assert.EqualError(t, err, "no ready node labelled topobench.role=load")
}

func ids(ns []Node) []string {
	var out []string
	for _, n := range ns {
		out = append(out, n.ID)
	}
	return out
}

// flag returns the value after name in cmd.
func flag(t *testing.T, cmd []string, name string) string {
	t.Helper()
	i := slices.Index(cmd, name)
	require.GreaterOrEqual(t, i, 0, "%s not in %q", name, cmd)
	return cmd[i+1]
}

func TestJobs(t *testing.T) {
	at := time.Date(2026, 11, 24, 19, 0, 5, 250_000_000, time.UTC)
	spec := LoadSpec{Name: "cell3", Image: "img", URL: "http://169.254.1.2:8080/", Allow: "169.254.1.2",
		Nodes: []Node{{ID: "n1"}, {ID: "n2"}, {ID: "n3"}}, Rate: 3000, Connections: 10, MaxConnections: 3000,
		Duration: 15 * time.Second, Timeout: 2 * time.Second, Arrivals: load.Uniform, Seed: 5, Procs: 1, Extra: []string{"-wait", "1ms"}}
	jobs, shares, err := spec.Jobs(at)
	require.NoError(t, err)
	require.Len(t, jobs, 3)
	seeds := map[string]bool{}
	total := 0.0
	for i, j := range jobs {
		assert.Equal(t, fmt.Sprintf("cell3-%d", i), j.Name)
		assert.Equal(t, spec.Nodes[i].ID, j.Node)
		assert.Equal(t, "img", j.Image)
		assert.Equal(t, []string{DefaultProgram, "load", "-quiet", "-report"}, j.Cmd[:4])
		assert.Equal(t, "2026-11-24T19:00:05.25Z", flag(t, j.Cmd, "-start-at"))
		assert.Equal(t, "15s", flag(t, j.Cmd, "-duration"))
		assert.Equal(t, "169.254.1.2", flag(t, j.Cmd, "-allow"))
		assert.Equal(t, "uniform", flag(t, j.Cmd, "-arrivals"))
		assert.Equal(t, "1000", flag(t, j.Cmd, "-max-connections"))
		assert.Equal(t, "1ms", flag(t, j.Cmd, "-wait"))
		assert.Equal(t, spec.URL, j.Cmd[len(j.Cmd)-1])
		r, err := strconv.ParseFloat(flag(t, j.Cmd, "-rate"), 64)
		require.NoError(t, err)
		total += r
		seeds[flag(t, j.Cmd, "-seed")] = true
		assert.Equal(t, strconv.FormatUint(shares[i].Seed, 10), flag(t, j.Cmd, "-seed"))
	}
	assert.InEpsilon(t, 3000, total, 0.01)
	assert.Len(t, seeds, 3)
	// Connections 10 among 3: 4, 3, 3.
	assert.Equal(t, []string{"4", "3", "3"}, []string{flag(t, jobs[0].Cmd, "-connections"), flag(t, jobs[1].Cmd, "-connections"), flag(t, jobs[2].Cmd, "-connections")})
	assert.NotContains(t, jobs[0].Cmd, "-allow-remote", "strict unless asked")
	assert.NotContains(t, jobs[0].Cmd, "-no-prime")
	unprimed := spec
	unprimed.NoPrime = true
	jobs, _, err = unprimed.Jobs(at)
	require.NoError(t, err)
	assert.Contains(t, jobs[0].Cmd, "-no-prime")

	remote := spec
	remote.URL, remote.Allow, remote.AllowRemote = "http://10.0.0.2:8080/", "10.0.0.2", true
	rjobs, _, err := remote.Jobs(at)
	require.NoError(t, err)
	for _, j := range rjobs {
		assert.Equal(t, "10.0.0.2", flag(t, j.Cmd, "-allow"))
		assert.Contains(t, j.Cmd, "-allow-remote")
		assert.Equal(t, remote.URL, j.Cmd[len(j.Cmd)-1])
	}

	for name, mod := range map[string]func(*LoadSpec){
		"no duration": func(s *LoadSpec) { s.Duration = 0 },
		"no nodes":    func(s *LoadSpec) { s.Nodes = nil },
		"no image":    func(s *LoadSpec) { s.Image = "" },
		"bad split":   func(s *LoadSpec) { s.Rate, s.Connections = 0, 2 },
	} {
		t.Run(name, func(t *testing.T) {
			s := spec
			mod(&s)
			_, _, err := s.Jobs(at)
			assert.Error(t, err)
		})
	}
	s := spec
	s.Nodes = nil
	_, _, err = s.Jobs(at)
	assert.ErrorIs(t, err, ErrNoNodes)
}

// fakeCluster answers RunJobs with reports of made-up runs: the planning
// and merging of RunLoad, without machines. The swarm package's test
// runs the real thing.
type fakeCluster struct {
	clocks map[string]Clock
	// run makes a job's report from its command line.
	run  func(j Job) (*load.Result, error)
	jobs []Job
}

func (f *fakeCluster) Nodes(context.Context) ([]Node, error)            { return nil, nil }
func (f *fakeCluster) PlaceImage(context.Context, string, []Node) error { return nil }
func (f *fakeCluster) StartServer(context.Context, Server) error        { return nil }
func (f *fakeCluster) StopServer(context.Context, string) error         { return nil }
func (f *fakeCluster) Cleanup(context.Context) error                    { return nil }
func (f *fakeCluster) Clock(_ context.Context, n Node) (Clock, error) {
	c, ok := f.clocks[n.ID]
	if !ok {
		return Clock{}, errors.New("unknown clock")
	}
	return c, nil
}

func (f *fakeCluster) RunJobs(_ context.Context, jobs []Job, _ time.Time) ([]JobOutput, error) {
	f.jobs = jobs
	outs := make([]JobOutput, len(jobs))
	for i, j := range jobs {
		outs[i].Job = j
		res, err := f.run(j)
		if err != nil {
			outs[i].Stderr = []byte(err.Error())
			continue
		}
		var b bytes.Buffer
		if err := load.WriteReport(&b, res); err != nil {
			return nil, err
		}
		outs[i].Stdout = append([]byte("some other line\n"), b.Bytes()...)
	}
	return outs, nil
}

// reportFor makes a run for job j that began skew after its -start-at,
// with latencies around base µs.
func reportFor(t *testing.T, j Job, skew time.Duration, base int64, n int) *load.Result {
	at, err := time.Parse(time.RFC3339Nano, flag(t, j.Cmd, "-start-at"))
	require.NoError(t, err)
	seed, err := strconv.ParseUint(flag(t, j.Cmd, "-seed"), 10, 64)
	require.NoError(t, err)
	rng := rand.New(rand.NewPCG(seed, 1))
	h := hdr.New()
	for range n {
		h.RecordValue(base + rng.Int64N(base))
	}
	return &load.Result{Histogram: h, Summary: load.Summary{Mode: "closed", Requests: int64(n), Sent: int64(n), StartAt: at,
		StartSkewMs: float64(skew) / float64(time.Millisecond), Seed: seed, Latency: load.LatencyOf(h)}}
}

func TestRunLoadMerges(t *testing.T) {
	nodes := []Node{{ID: "fast", Ready: true}, {ID: "slow", Ready: true}}
	f := &fakeCluster{
		clocks: map[string]Clock{"fast": {Known: true}, "slow": {Offset: 30 * time.Millisecond, Uncertainty: time.Millisecond, Known: true}},
	}
	f.run = func(j Job) (*load.Result, error) {
		if j.Node == "fast" {
			return reportFor(t, j, time.Millisecond, 100, 9000), nil
		}
		// 31 ms late by its own clock, which is 30 ms ahead: 1 ms late.
		return reportFor(t, j, 31*time.Millisecond, 5000, 1000), nil
	}
	spec := LoadSpec{Name: "c", Image: "i", URL: "http://127.0.0.1:1/", Nodes: nodes, Connections: 4, Duration: time.Second, Lead: 10 * time.Millisecond}
	res, err := RunLoad(context.Background(), f, spec)
	require.NoError(t, err)
	require.Len(t, res.Nodes, 2)
	assert.True(t, res.Valid(), "%+v", res.Nodes)
	assert.Equal(t, time.Millisecond, res.Nodes[0].Skew)
	assert.InDelta(t, float64(time.Millisecond), float64(res.Nodes[1].Skew), float64(time.Microsecond))
	assert.EqualValues(t, 10_000, res.Summary.Requests)
	assert.EqualValues(t, 10_000, res.Histogram.TotalCount())
	// The merged p99 is the slow node's (its 10% of the samples hold
	// the whole top percent); the average of p99s is not.
	avg := (res.Nodes[0].Summary.Latency.P99 + res.Nodes[1].Summary.Latency.P99) / 2
	assert.Greater(t, res.Summary.Latency.P99, 5.0)
	assert.Less(t, avg, res.Summary.Latency.P99*0.8)
	m, err := hdr.Merge(res.Nodes[0].Histogram, res.Nodes[1].Histogram)
	require.NoError(t, err)
	assert.True(t, m.Equals(res.Histogram))
	assert.NotEqual(t, res.Nodes[0].Summary.Seed, res.Nodes[1].Summary.Seed)
}

func TestRunLoadInvalid(t *testing.T) {
	nodes := []Node{{ID: "a", Ready: true}, {ID: "b", Ready: true}}
	for name, tc := range map[string]struct {
		clock   Clock
		skew    time.Duration
		invalid string
	}{
		"late":                        {Clock{Known: true}, 80 * time.Millisecond, "past the tolerance"},
		"early by its clock's offset": {Clock{Offset: 100 * time.Millisecond, Known: true}, time.Millisecond, "past the tolerance"},
		"late but its clock ahead":    {Clock{Offset: 79 * time.Millisecond, Known: true}, 80 * time.Millisecond, ""},
		"clock unknown, on time":      {Clock{}, 2 * time.Millisecond, ""},
	} {
		t.Run(name, func(t *testing.T) {
			f := &fakeCluster{clocks: map[string]Clock{"a": {Known: true}}}
			if tc.clock.Known {
				f.clocks["b"] = tc.clock
			}
			f.run = func(j Job) (*load.Result, error) {
				if j.Node == "b" {
					return reportFor(t, j, tc.skew, 100, 10), nil
				}
				return reportFor(t, j, 0, 100, 10), nil
			}
			res, err := RunLoad(context.Background(), f, LoadSpec{Name: "c", Image: "i", URL: "u", Nodes: nodes, Connections: 2, Duration: time.Second, Lead: time.Millisecond})
			require.NoError(t, err)
			assert.Empty(t, res.Nodes[0].Invalid)
			if tc.invalid == "" {
				assert.Empty(t, res.Nodes[1].Invalid)
				assert.True(t, res.Valid())
			} else {
				assert.Contains(t, res.Nodes[1].Invalid, tc.invalid)
				assert.False(t, res.Valid())
			}
		})
	}
}

func TestRunLoadNoReport(t *testing.T) {
	f := &fakeCluster{run: func(j Job) (*load.Result, error) { return nil, errors.New("load: interrupted after 0.2s") }}
	_, err := RunLoad(context.Background(), f, LoadSpec{Name: "c", Image: "i", URL: "u", Nodes: []Node{{ID: "a", Hostname: "h"}}, Connections: 1, Duration: time.Second, Lead: time.Millisecond})
	require.ErrorIs(t, err, load.ErrNoReport)
	assert.Contains(t, err.Error(), "interrupted after 0.2s")
	assert.Contains(t, err.Error(), "h (a)")
}
