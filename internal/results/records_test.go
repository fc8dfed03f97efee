package results

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRequestPath(t *testing.T) {
	for _, tc := range []struct{ path, want string }{
		{"", "/"},
		{"/", "/"},
		{"/api/items?limit=10", "/api/items?limit=10"},
	} {
		t.Run(tc.want, func(t *testing.T) {
			assert.Equal(t, tc.want, Plan{Path: tc.path}.RequestPath())
		})
	}
}

func TestRepsAutoLevel(t *testing.T) {
	for _, tc := range []struct {
		name string
		auto RepsAuto
		want float64
	}{
		{"a record from before the sequential design: 95%", RepsAuto{Max: 12, Within: 0.05}, 0.95},
		{"the per-look level of a design", RepsAuto{Max: 12, Within: 0.05, Confidence: 0.9917}, 0.9917},
		{"a budget's", RepsAuto{Max: 14, Within: 0.05, Confidence: 0.99, Budget: 10 * time.Minute}, 0.99},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, tc.auto.Level())
		})
	}
}

// keysOf decodes a JSON object's keys, and those of the objects in it
// named by path ("cluster", "cluster.harness").
func keysOf(t *testing.T, b []byte, path ...string) []string {
	t.Helper()
	var m map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(b, &m))
	for _, p := range path {
		require.Contains(t, m, p)
		b = m[p]
		m = nil
		require.NoError(t, json.Unmarshal(b, &m))
	}
	var keys []string
	for k := range m {
		keys = append(keys, k)
	}
	return keys
}

func clusterEnv() *ClusterEnv {
	node := func(id, host, addr string, off time.Duration, roles ...string) EnvNode {
		return EnvNode{ID: id, Hostname: host, Addr: addr, Roles: roles, ClockOffset: off, ClockUncertainty: 40 * time.Microsecond, ClockKnown: true}
	}
	return &ClusterEnv{
		Backend: "swarm", Image: "topobench-cluster:1f6fd86",
		Harness: node("mgr1", "manager", "169.254.201.1", 0, "load"),
		Server:  node("wrk2", "worker", "169.254.201.2", -3*time.Millisecond, "server"),
		Load: []EnvNode{node("mgr1", "manager", "169.254.201.1", 0, "load"),
			{ID: "wrk3", Hostname: "far", Addr: "10.0.0.3"}},
		ServerAddr: "169.254.201.2", Parity: "load node mgr1", Remote: true,
		Lead: 2 * time.Second, Tolerance: 500 * time.Millisecond,
	}
}

func cpuSplit() *CPUSplit {
	return &CPUSplit{
		CPUs: 4, Load: "0", Server: "1-3", CalibrationLoad: "0", CalibrationServer: "1-3",
		Generator: LoadWrk, Connections: 5000, GOMAXPROCS: 8, Duration: 2 * time.Second, Took: 14500 * time.Millisecond,
		Figures: []SplitFigure{
			{Topology: "standalone", ReqPerSec: 52000, LoadUS: 9.5, ServerUS: 21, LoadShare: 0.49, Predicted: 0.61},
			{Topology: "nginx-return", Reference: true, ReqPerSec: 90000, LoadUS: 9.1, ServerUS: 11, LoadShare: 0.82, Parallel: 1, Predicted: 0.97},
		},
		Headroom: false, Note: "nginx-return will be load-bound (predicted 97% of the load CPUs)",
	}
}

// TestEnvSinceWave3: env.json keeps the set-up warnings, the time spent,
// the work calibration, the sequential design's level and budget, the
// cluster and the CPU split, under their names on disk, and a sweep on
// one machine that set none of them writes none.
func TestEnvSinceWave3(t *testing.T) {
	full := sampleEnv()
	full.WorkCalibration = 312.5
	full.Spent = 9*time.Minute + 41*time.Second
	full.Warnings = []string{"net.core.somaxconn not copied into the namespace: permission denied", "nginx did not stop within 5s"}
	full.Plan.Path = "/api/items"
	full.Plan.RepsAuto = &RepsAuto{Max: 14, Within: 0.05, Confidence: 0.99, Budget: 10 * time.Minute}
	full.Cluster = clusterEnv()
	full.CPUSplit = cpuSplit()

	for _, tc := range []struct {
		name    string
		env     Env
		has     []string // top-level keys that must be there
		hasNot  []string // and those that must not
		nested  map[string][]string
		missing map[string][]string
	}{
		{"everything", full,
			[]string{"work_units_per_us", "spent_ns", "warnings", "cluster", "cpu_split"}, nil,
			map[string][]string{
				"cluster":         {"backend", "image", "harness", "server", "load", "server_addr", "parity_from", "remote", "lead_ns", "tolerance_ns"},
				"cluster.harness": {"id", "hostname", "addr", "roles", "clock_offset_ns", "clock_uncertainty_ns", "clock_known"},
				"cpu_split":       {"cpus", "load", "server", "calibration_load", "calibration_server", "generator", "connections", "gomaxprocs", "duration_ns", "took_ns", "figures", "headroom", "note"},
				"plan":            {"path", "reps_auto"},
				"plan.reps_auto":  {"max", "within", "confidence", "budget_ns"},
			}, nil},
		{"one machine, nothing of it", sampleEnv(), nil,
			[]string{"work_units_per_us", "spent_ns", "warnings", "cluster", "cpu_split"}, nil,
			map[string][]string{"plan": {"path", "reps_auto"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			require.NoError(t, Create(dir))
			require.NoError(t, WriteEnv(dir, tc.env))
			b, err := os.ReadFile(filepath.Join(dir, EnvFile))
			require.NoError(t, err)
			top := keysOf(t, b)
			for _, k := range tc.has {
				assert.Contains(t, top, k)
			}
			for _, k := range tc.hasNot {
				assert.NotContains(t, top, k)
			}
			for path, keys := range tc.nested {
				got := keysOf(t, b, strings.Split(path, ".")...)
				assert.Subset(t, got, keys, path)
			}
			for path, keys := range tc.missing {
				got := keysOf(t, b, strings.Split(path, ".")...)
				for _, k := range keys {
					assert.NotContains(t, got, k, path)
				}
			}
			env, runs, err := Load(dir)
			require.NoError(t, err)
			assert.Empty(t, runs)
			assert.Equal(t, tc.env, env)
		})
	}
}

// TestSplitFigureKeys: each calibrated path keeps its figures under the
// names the report reads; a path whose servers may use all they are
// given has no "parallel", and one that is no ceiling no "reference".
func TestSplitFigureKeys(t *testing.T) {
	for _, tc := range []struct {
		name     string
		fig      SplitFigure
		has, not []string
	}{
		{"a path", cpuSplit().Figures[0],
			[]string{"topology", "req_per_sec", "load_us", "server_us", "load_share", "predicted_load_share"}, []string{"reference", "parallel"}},
		{"a ceiling on one CPU", cpuSplit().Figures[1],
			[]string{"topology", "reference", "parallel", "predicted_load_share"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := json.Marshal(tc.fig)
			require.NoError(t, err)
			keys := keysOf(t, b)
			assert.Subset(t, keys, tc.has)
			for _, k := range tc.not {
				assert.NotContains(t, keys, k)
			}
		})
	}
}

// TestRunCPUAbsentNotZero: a part whose CPU time was not measured is
// absent from the record and loads as nil; one measured at zero stays a
// zero.
func TestRunCPUAbsentNotZero(t *testing.T) {
	load := Usage{User: 1.5, System: 0.5}
	for _, tc := range []struct {
		name     string
		cpu      *CPU
		has, not []string
	}{
		{"every part", &CPU{Load: load, Nginx: &Usage{User: 2}, Server: &Usage{User: 3, System: 1}}, []string{"load", "nginx", "server"}, nil},
		{"no nginx in the path", &CPU{Load: load, Server: &Usage{User: 3}}, []string{"load", "server"}, []string{"nginx"}},
		{"a server out of sight", &CPU{Load: load, Nginx: &Usage{User: 2}}, []string{"load", "nginx"}, []string{"server"}},
		{"measured at zero", &CPU{Load: load, Nginx: &Usage{}, Server: &Usage{}}, []string{"load", "nginx", "server"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			require.NoError(t, Create(dir))
			require.NoError(t, WriteEnv(dir, sampleEnv()))
			r := sampleRun(1, "standalone", 1)
			r.CPU = tc.cpu
			require.NoError(t, WriteRun(dir, r, nil))
			b, err := os.ReadFile(filepath.Join(dir, "runs", r.Name()+".json"))
			require.NoError(t, err)
			keys := keysOf(t, b, "cpu")
			assert.Subset(t, keys, tc.has)
			for _, k := range tc.not {
				assert.NotContains(t, keys, k)
			}
			_, runs, err := Load(dir)
			require.NoError(t, err)
			require.Len(t, runs, 1)
			assert.Equal(t, tc.cpu, runs[0].CPU)
		})
	}
}

// TestRunSinceWave3: a run's fraction of capacity, warm-up, load-bound
// figures and a cluster run's per-node parts come back from disk as
// written, under the cell's file key.
func TestRunSinceWave3(t *testing.T) {
	node := func(id string, rate float64, skew time.Duration, reqs int64) NodeFigures {
		return NodeFigures{Node: id, Hostname: "host-" + id, Rate: rate, Connections: 32, Seed: 7,
			StartSkew: skew, ClockOffset: -skew / 2, ClockUncertainty: 30 * time.Microsecond, ClockKnown: true, Slack: 800 * time.Millisecond,
			Figures: Figures{Requests: reqs, ReqPerSec: float64(reqs) / 3}, CPU: 0.8, Procs: 1}
	}
	for _, tc := range []struct {
		name string
		edit func(*Run)
		key  string
	}{
		{"at a fraction of capacity", func(r *Run) {
			r.Load, r.Schedule = LoadBuiltin, Schedule{Fraction: 0.5, Rate: 16000}
			r.Warmup = 1200 * time.Millisecond
		}, "g1-nginx-http-c5000-builtin-frac0.5-r2"},
		{"load-bound under a quota", func(r *Run) {
			r.LoadShare, r.LoadQuota, r.LoadThrottled = 0.53, 0.05, 0.29
		}, "g1-nginx-http-c5000-r2"},
		{"on a cluster", func(r *Run) {
			r.Load, r.Schedule = LoadBuiltin, Schedule{Rate: 2000}
			r.Nodes = []NodeFigures{node("mgr1", 1000, 0, 3000), node("wrk2", 1000, 40*time.Millisecond, 2990)}
			r.Nodes[1].LoadBound = true
		}, "g1-nginx-http-c5000-builtin-rate2000-r2"},
		{"a late node fails the run", func(r *Run) {
			r.Load, r.Schedule = LoadBuiltin, Schedule{Rate: 2000}
			late := node("wrk2", 1000, 900*time.Millisecond, 0)
			late.Invalid = "started 900ms late (tolerance 500ms)"
			r.Nodes = []NodeFigures{node("mgr1", 1000, 0, 3000), late}
			r.Error = "load node wrk2 " + late.Invalid
		}, "g1-nginx-http-c5000-builtin-rate2000-r2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			require.NoError(t, Create(dir))
			require.NoError(t, WriteEnv(dir, sampleEnv()))
			r := sampleRun(1, "nginx-http", 2)
			tc.edit(&r)
			assert.Equal(t, tc.key, r.Name())
			require.NoError(t, WriteRun(dir, r, nil))
			assert.FileExists(t, filepath.Join(dir, "runs", tc.key+".json"))
			_, runs, err := Load(dir)
			require.NoError(t, err)
			require.Len(t, runs, 1)
			assert.Equal(t, r, runs[0])
			assert.Equal(t, r.Error != "", runs[0].Failed())
		})
	}
}
