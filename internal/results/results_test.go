package results

import (
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func sampleEnv() Env {
	return Env{
		Command:      []string{"topobench", "compare", "-reps", "2"},
		Start:        time.Date(2026, 11, 21, 22, 30, 0, 0, time.UTC),
		End:          time.Date(2026, 11, 21, 22, 40, 0, 0, time.UTC),
		CPUModel:     "Test CPU",
		CPUs:         2,
		Kernel:       "6.1.0",
		GoVersion:    "go1.26.8",
		NginxVersion: "1.22.1",
		WrkVersion:   "4.1.0",
		Sysctls:      map[string]string{"net.core.somaxconn": "4096"},
		Limits:       map[string]string{"nofile_soft": "20000", "nofile_hard": "20000"},
		Plan: Plan{
			Topologies: []string{"standalone", "nginx-http"}, GOMAXPROCS: []int{1, 8}, Reps: 2,
			Duration: 30 * time.Second, Warmup: 3 * time.Second, Threads: 100, Connections: []int{5000}, Timeout: 2 * time.Second,
		},
	}
}

func sampleRun(g int, topo string, rep int) Run {
	return Run{
		Cell:    Cell{Topology: topo, GOMAXPROCS: g, Connections: 5000, Rep: rep},
		Start:   time.Date(2026, 11, 21, 22, 31, rep, 0, time.UTC),
		Wall:    30*time.Second + 120*time.Millisecond,
		Command: []string{"wrk", "-t100", "-c5000", "-d30s", "http://127.0.0.1:8080/"},
		URL:     "http://127.0.0.1:8080/",
		Figures: &Figures{Requests: 1000000, ReqPerSec: 33333.33, Errors: Errors{Timeout: 3}},
	}
}

func TestRoundTrip(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "20261121-223000")
	require.NoError(t, Create(dir))
	env := sampleEnv()
	require.NoError(t, WriteEnv(dir, env))

	// Written out of order; Load sorts by GOMAXPROCS, plan order, rep.
	written := []Run{
		sampleRun(8, "standalone", 1),
		sampleRun(1, "nginx-http", 2),
		sampleRun(1, "standalone", 2),
		sampleRun(1, "nginx-http", 1),
		sampleRun(1, "standalone", 1),
	}
	failed := sampleRun(8, "nginx-http", 1)
	failed.Figures, failed.Error = nil, "starting nginx: exit status 1"
	written = append(written, failed)
	for _, r := range written {
		require.NoError(t, WriteRun(dir, r, []byte("raw "+r.Name()+"\n")))
	}
	raw, err := os.ReadFile(RawPath(dir, written[0]))
	require.NoError(t, err)
	assert.Equal(t, "raw g8-standalone-c5000-r1\n", string(raw))
	assert.FileExists(t, filepath.Join(dir, "runs", "g1-nginx-http-c5000-r2.json"))
	assert.FileExists(t, filepath.Join(dir, "runs", "g1-nginx-http-c5000-r2.txt"))

	gotEnv, runs, err := Load(dir)
	require.NoError(t, err)
	assert.Equal(t, env, gotEnv)
	var names []string
	for _, r := range runs {
		names = append(names, r.Name())
	}
	assert.Equal(t, []string{
		"g1-standalone-c5000-r1", "g1-standalone-c5000-r2", "g1-nginx-http-c5000-r1", "g1-nginx-http-c5000-r2",
		"g8-standalone-c5000-r1", "g8-nginx-http-c5000-r1",
	}, names)
	assert.Equal(t, written[0], runs[4])
	assert.True(t, runs[5].Failed())
	assert.False(t, runs[0].Failed())

	// No temporary files are left behind.
	entries, err := os.ReadDir(filepath.Join(dir, "runs"))
	require.NoError(t, err)
	assert.Len(t, entries, 2*len(written))

	assert.ErrorContains(t, Create(dir), "already holds a sweep")
}

func TestLoadErrors(t *testing.T) {
	empty := t.TempDir()
	_, _, err := Load(empty)
	assert.ErrorContains(t, err, "is not a results directory: no env.json")

	_, _, err = Load(filepath.Join(empty, "missing"))
	assert.ErrorContains(t, err, "missing")

	file := filepath.Join(empty, "file")
	require.NoError(t, os.WriteFile(file, nil, 0o644))
	_, _, err = Load(file)
	assert.ErrorContains(t, err, "not a directory")

	mk := func(t *testing.T) string {
		dir := t.TempDir()
		require.NoError(t, Create(dir))
		require.NoError(t, WriteEnv(dir, sampleEnv()))
		return dir
	}
	cases := []struct {
		name, file, content, msg string
	}{
		{"bad env", "env.json", "{", "env.json: unexpected EOF"},
		{"foreign env", "env.json", `{"hello": 1}`, `env.json: json: unknown field "hello"`},
		{"bad run", "runs/g1-standalone-r1.json", `{"topology": 3}`, "runs/g1-standalone-r1.json: json: cannot unmarshal"},
		{"zero rep", "runs/g1-standalone-r0.json", `{"topology": "standalone", "gomaxprocs": 1, "rep": 0}`, "g1-standalone-r0.json: rep 0"},
		{"misnamed", "runs/g1-standalone-r1.json", `{"topology": "standalone", "gomaxprocs": 8, "rep": 1}`, "g1-standalone-r1.json: record is for g8-standalone-r1.json"},
		{"trailing", "runs/g1-standalone-r1.json", `{"topology": "standalone", "gomaxprocs": 1, "rep": 1} {}`, "trailing data"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := mk(t)
			require.NoError(t, os.WriteFile(filepath.Join(dir, tc.file), []byte(tc.content), 0o644))
			_, _, err := Load(dir)
			require.Error(t, err)
			assert.Contains(t, err.Error(), filepath.Join(dir, tc.file))
			assert.Contains(t, err.Error(), tc.msg)
		})
	}
}

func TestWriteRunRejectsBadRecord(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, Create(dir))
	err := WriteRun(dir, Run{Cell: Cell{Topology: "../x", GOMAXPROCS: 1, Rep: 1}}, nil)
	assert.ErrorContains(t, err, "bad topology")
	err = WriteRun(dir, Run{Cell: Cell{Topology: "standalone", GOMAXPROCS: 0, Rep: 1}}, nil)
	assert.ErrorContains(t, err, "gomaxprocs 0")
}

func TestFillHost(t *testing.T) {
	var env Env
	FillHost(&env)
	assert.Equal(t, runtime.NumCPU(), env.CPUs)
	assert.Equal(t, runtime.Version(), env.GoVersion)
	assert.NotEmpty(t, env.CPUModel)
	if runtime.GOOS == "linux" {
		assert.NotEqual(t, "unknown", env.Kernel)
		assert.NotEmpty(t, env.Limits["nofile_soft"])
		s := ReadSysctls([]string{"net.core.somaxconn", "net.ipv4.no_such_thing"})
		assert.NotEqual(t, "unavailable", s["net.core.somaxconn"])
		assert.Equal(t, "unavailable", s["net.ipv4.no_such_thing"])
	}
}

func TestCellKey(t *testing.T) {
	tests := []struct {
		cell Cell
		want string
	}{
		{Cell{Topology: "nginx-http", GOMAXPROCS: 8, Rep: 2}, "g8-nginx-http-r2"},
		{Cell{Target: "go", Topology: "standalone", GOMAXPROCS: 1, Connections: 5000, Load: LoadWrk, Rep: 1}, "g1-standalone-c5000-r1"},
		{Cell{Target: "erlang", Topology: "nginx-http", GOMAXPROCS: 1, Connections: 1000, Load: LoadBuiltin, Schedule: Schedule{Rate: 1000, Wait: 100 * time.Millisecond}, Rep: 3},
			"erlang-g1-nginx-http-c1000-builtin-rate1000-wait100ms-r3"},
		{Cell{Topology: "standalone", GOMAXPROCS: 2, Load: LoadBuiltin, Schedule: Schedule{Rate: 2.5}, Rep: 1}, "g2-standalone-builtin-rate2.5-r1"},
		{Cell{Topology: "standalone", GOMAXPROCS: 2, Connections: 1000, Load: LoadBuiltin, Schedule: Schedule{Name: "slow-requests", Rate: 1000, Wait: time.Second, Requests: 100000}, Rep: 1}, "g2-standalone-c1000-builtin-slow-requests-r1"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			assert.Equal(t, tt.want, tt.cell.Key())
			// A record is found again under the same name.
			assert.Equal(t, tt.want, Run{Cell: tt.cell}.Name())
		})
	}
}

func TestPlanReadsOldConnections(t *testing.T) {
	var p Plan
	require.NoError(t, json.Unmarshal([]byte(`{"topologies":["standalone"],"gomaxprocs":[1],"connections":5000,"reps":1,"duration_ns":1,"warmup_ns":0,"threads":1,"timeout_ns":1}`), &p))
	assert.Equal(t, []int{5000}, p.Connections)
	require.NoError(t, json.Unmarshal([]byte(`{"topologies":["standalone"],"gomaxprocs":[1],"connections":[30,100],"reps":1,"duration_ns":1,"warmup_ns":0,"threads":1,"timeout_ns":1}`), &p))
	assert.Equal(t, []int{30, 100}, p.Connections)
	assert.Error(t, json.Unmarshal([]byte(`{"topologies":["standalone"],"bogus":1}`), &p), "unknown fields are still refused")
}
