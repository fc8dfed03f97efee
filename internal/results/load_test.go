package results

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// newDir makes a results directory holding env.json for plan.
func newDir(t *testing.T, plan Plan) string {
	t.Helper()
	dir := t.TempDir()
	require.NoError(t, Create(dir))
	env := sampleEnv()
	env.Plan = plan
	require.NoError(t, WriteEnv(dir, env))
	return dir
}

// loadedKeys writes the cells (in the order given) and lists the keys
// Load returns them in.
func loadedKeys(t *testing.T, plan Plan, cells []Cell) []string {
	t.Helper()
	dir := newDir(t, plan)
	for _, c := range cells {
		require.NoError(t, WriteRun(dir, Run{Cell: c, Figures: &Figures{Requests: 1}}, nil))
	}
	_, runs, err := Load(dir)
	require.NoError(t, err)
	var out []string
	for _, r := range runs {
		out = append(out, r.Key())
	}
	return out
}

// TestLoadOrder checks the order of the runs Load returns, one dimension
// at a time: every consumer (the report's tables, resume, diff) reads
// them in it.
func TestLoadOrder(t *testing.T) {
	plan := Plan{Topologies: []string{"standalone", "nginx-http", "nginx-return"}}
	c := func(f func(*Cell)) Cell {
		cell := Cell{Topology: "standalone", GOMAXPROCS: 1, Rep: 1}
		f(&cell)
		return cell
	}
	tests := []struct {
		name string
		want []Cell // in the order Load must return them
	}{
		{"target by name, go included", []Cell{
			c(func(c *Cell) { c.Target = "erlang" }),
			c(func(c *Cell) { c.Target = "" }),
			c(func(c *Cell) { c.Target = "java-threads" }),
		}},
		{"gomaxprocs numerically", []Cell{
			c(func(c *Cell) { c.GOMAXPROCS = 2 }),
			c(func(c *Cell) { c.GOMAXPROCS = 8 }),
			c(func(c *Cell) { c.GOMAXPROCS = 16 }),
		}},
		{"topology in the plan's order", []Cell{
			c(func(c *Cell) { c.Topology = "standalone" }),
			c(func(c *Cell) { c.Topology = "nginx-http" }),
			c(func(c *Cell) { c.Topology = "nginx-return" }),
		}},
		{"connections numerically", []Cell{
			c(func(c *Cell) { c.Connections = 30 }),
			c(func(c *Cell) { c.Connections = 100 }),
			c(func(c *Cell) { c.Connections = 1000 }),
		}},
		{"load generator by name", []Cell{
			c(func(c *Cell) { c.Load = LoadBuiltin }),
			c(func(c *Cell) { c.Load = LoadWrk }),
		}},
		{"the probe after the rates", []Cell{
			c(func(c *Cell) { c.Load, c.Rate = LoadBuiltin, 10 }),
			c(func(c *Cell) {
				c.Load, c.Schedule = LoadBuiltin, Schedule{Name: "concurrency-level", Probe: true, Requests: 10}
			}),
		}},
		{"rate numerically", []Cell{
			c(func(c *Cell) { c.Load, c.Rate = LoadBuiltin, 0 }),
			c(func(c *Cell) { c.Load, c.Rate = LoadBuiltin, 1000 }),
			c(func(c *Cell) { c.Load, c.Rate = LoadBuiltin, 10000 }),
		}},
		{"wait", []Cell{
			c(func(c *Cell) { c.Wait = 0 }),
			c(func(c *Cell) { c.Wait = 100 * time.Millisecond }),
			c(func(c *Cell) { c.Wait = time.Second }),
		}},
		{"rep numerically", []Cell{
			c(func(c *Cell) { c.Rep = 2 }),
			c(func(c *Cell) { c.Rep = 10 }),
			c(func(c *Cell) { c.Rep = 11 }),
		}},
		{"outer dimensions first", []Cell{
			c(func(c *Cell) { c.Target, c.GOMAXPROCS, c.Rep = "erlang", 8, 2 }),
			c(func(c *Cell) { c.GOMAXPROCS, c.Topology, c.Rep = 1, "nginx-http", 3 }),
			c(func(c *Cell) { c.GOMAXPROCS, c.Topology, c.Rep = 2, "standalone", 1 }),
			c(func(c *Cell) { c.GOMAXPROCS, c.Connections = 2, 30 }),
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var want []string
			for _, c := range tt.want {
				want = append(want, c.Key())
			}
			// Written in reverse, so the file names' order cannot pass for
			// the sort.
			rev := make([]Cell, 0, len(tt.want))
			for i := len(tt.want) - 1; i >= 0; i-- {
				rev = append(rev, tt.want[i])
			}
			assert.Equal(t, want, loadedKeys(t, plan, rev))
		})
	}
}

// TestLoadOrderTopologyOutsidePlan: records of topologies the plan does
// not name (a directory a sweep was copied into) come after the plan's,
// by name, whatever order the plan's topologies are in.
func TestLoadOrderTopologyOutsidePlan(t *testing.T) {
	plan := Plan{Topologies: []string{"standalone", "nginx-http"}}
	cell := func(top string) Cell { return Cell{Topology: top, GOMAXPROCS: 1, Rep: 1} }
	got := loadedKeys(t, plan, []Cell{cell("nginx-x"), cell("aaa"), cell("nginx-http"), cell("standalone")})
	assert.Equal(t, []string{"g1-standalone-r1", "g1-nginx-http-r1", "g1-aaa-r1", "g1-nginx-x-r1"}, got)

	// The order is a strict weak order over any three cells.
	order := map[string]int{"standalone": 1, "nginx-http": 2}
	cells := []Cell{cell("standalone"), cell("nginx-http"), cell("nginx-x"), cell("aaa"), cell("zzz")}
	for _, a := range cells {
		assert.False(t, cellLess(a, a, order), "irreflexive")
		for _, b := range cells {
			for _, c := range cells {
				if cellLess(a, b, order) && cellLess(b, c, order) {
					assert.True(t, cellLess(a, c, order), "%s < %s < %s", a.Topology, b.Topology, c.Topology)
				}
			}
		}
	}
	sorted := func(cs []Cell) []string {
		s := append([]Cell(nil), cs...)
		sort.SliceStable(s, func(i, j int) bool { return cellLess(s[i], s[j], order) })
		var names []string
		for _, c := range s {
			names = append(names, c.Topology)
		}
		return names
	}
	rev := []Cell{cells[4], cells[3], cells[2], cells[1], cells[0]}
	assert.Equal(t, sorted(cells), sorted(rev), "the input order does not matter")
}

func TestCreate(t *testing.T) {
	t.Run("new directory, parents included", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "a", "b")
		require.NoError(t, Create(dir))
		assert.DirExists(t, filepath.Join(dir, RunsDir))
	})
	t.Run("an existing empty directory", func(t *testing.T) {
		dir := t.TempDir()
		require.NoError(t, Create(dir))
		require.NoError(t, Create(dir), "no sweep yet: still usable")
	})
	t.Run("a directory with a sweep", func(t *testing.T) {
		dir := t.TempDir()
		require.NoError(t, Create(dir))
		require.NoError(t, WriteEnv(dir, sampleEnv()))
		err := Create(dir)
		assert.ErrorContains(t, err, dir)
		assert.ErrorContains(t, err, "already holds a sweep (env.json exists)")
	})
	t.Run("a file in the way", func(t *testing.T) {
		file := filepath.Join(t.TempDir(), "f")
		require.NoError(t, os.WriteFile(file, []byte("x"), 0o644))
		assert.ErrorContains(t, Create(file), "creating results directory")
	})
}

func TestLoadRecordErrors(t *testing.T) {
	valid := `{"topology": "standalone", "gomaxprocs": 1, "rep": 1}`
	tests := []struct {
		name, file, content, msg string
	}{
		{"not JSON", "g1-standalone-r1.json", "wrk output", "invalid character"},
		{"empty", "g1-standalone-r1.json", "", "EOF"},
		{"unknown field", "g1-standalone-r1.json", `{"topology": "standalone", "gomaxprocs": 1, "rep": 1, "figure": 1}`, `unknown field "figure"`},
		{"trailing data", "g1-standalone-r1.json", valid + "\n{}", "trailing data"},
		{"no topology", "g1--r1.json", `{"gomaxprocs": 1, "rep": 1}`, `bad topology ""`},
		{"a path for a topology", "g1-a-r1.json", `{"topology": "a/b", "gomaxprocs": 1, "rep": 1}`, `bad topology "a/b"`},
		{"zero gomaxprocs", "g0-standalone-r1.json", `{"topology": "standalone", "gomaxprocs": 0, "rep": 1}`, "gomaxprocs 0"},
		{"named for another rep", "g1-standalone-r2.json", valid, "record is for g1-standalone-r1.json"},
		{"named for another target", "g1-standalone-r1.json", `{"target": "erlang", "topology": "standalone", "gomaxprocs": 1, "rep": 1}`,
			"record is for erlang-g1-standalone-r1.json"},
		{"named for another schedule", "g1-standalone-builtin-r1.json", `{"topology": "standalone", "gomaxprocs": 1, "load": "builtin", "rate": 5, "rep": 1}`,
			"record is for g1-standalone-builtin-rate5-r1.json"},
		{"a bad old report", "g1-standalone-r1.json", `{"topology": "standalone", "gomaxprocs": 1, "rep": 1, "result": {"requests": "many"}}`, "result: json"},
		{"a bad old engine summary", "g1-standalone-r1.json", `{"topology": "standalone", "gomaxprocs": 1, "rep": 1, "engine": [1]}`, "engine: json"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := newDir(t, sampleEnv().Plan)
			path := filepath.Join(dir, RunsDir, tt.file)
			require.NoError(t, os.WriteFile(path, []byte(tt.content), 0o644))
			_, runs, err := Load(dir)
			require.Error(t, err)
			assert.Nil(t, runs)
			assert.True(t, strings.HasPrefix(err.Error(), path+": "), "the error names the file: %v", err)
			assert.ErrorContains(t, err, tt.msg)
		})
	}
}

// TestLoadIgnoresOtherFiles: only runs/*.json are records; the raw
// output, histograms and WriteExtra's files beside them are not.
func TestLoadIgnoresOtherFiles(t *testing.T) {
	dir := newDir(t, sampleEnv().Plan)
	run := sampleRun(1, "standalone", 1)
	require.NoError(t, WriteRun(dir, run, []byte("raw")))
	require.NoError(t, WriteExtra(dir, run.Cell, "hdr", []byte{0, 1, 2}))
	require.NoError(t, WriteExtra(dir, run.Cell, "state.txt", []byte("hung")))
	require.NoError(t, os.Mkdir(filepath.Join(dir, "logs"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "logs", "x.json"), []byte("{"), 0o644))
	_, runs, err := Load(dir)
	require.NoError(t, err)
	require.Len(t, runs, 1)
	assert.Equal(t, run, runs[0])

	b, err := os.ReadFile(filepath.Join(dir, RunsDir, "g1-standalone-c5000-r1.state.txt"))
	require.NoError(t, err)
	assert.Equal(t, "hung", string(b))
}

// TestWritesLeaveNoTemporaries: WriteEnv, WriteRun and WriteExtra write
// whole files under their final names and nothing else, also when they
// replace an earlier version.
func TestWritesLeaveNoTemporaries(t *testing.T) {
	dir := newDir(t, sampleEnv().Plan)
	run := sampleRun(8, "nginx-http", 3)
	for i := 0; i < 2; i++ {
		require.NoError(t, WriteEnv(dir, sampleEnv()))
		require.NoError(t, WriteRun(dir, run, []byte("raw")))
		require.NoError(t, WriteExtra(dir, run.Cell, "hgrm", []byte("text")))
	}
	names := func(d string) []string {
		entries, err := os.ReadDir(d)
		require.NoError(t, err)
		var out []string
		for _, e := range entries {
			out = append(out, e.Name())
		}
		return out
	}
	assert.Equal(t, []string{EnvFile, RunsDir}, names(dir))
	assert.Equal(t, []string{"g8-nginx-http-c5000-r3.hgrm", "g8-nginx-http-c5000-r3.json", "g8-nginx-http-c5000-r3.txt"}, names(filepath.Join(dir, RunsDir)))
	st, err := os.Stat(filepath.Join(dir, RunsDir, "g8-nginx-http-c5000-r3.json"))
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o644), st.Mode().Perm(), "readable by others, as a plain write would make it")
}

// TestWriteRunWithoutRaw: no raw output, no .txt.
func TestWriteRunWithoutRaw(t *testing.T) {
	dir := newDir(t, sampleEnv().Plan)
	run := sampleRun(1, "standalone", 1)
	require.NoError(t, WriteRun(dir, run, nil))
	assert.NoFileExists(t, RawPath(dir, run))
	assert.FileExists(t, filepath.Join(dir, RunsDir, run.Name()+".json"))
}

// TestWriteFailsWithoutRunsDir: a write into a directory Create did not
// make fails, naming the file, and leaves nothing behind.
func TestWriteFailsWithoutRunsDir(t *testing.T) {
	dir := t.TempDir()
	err := WriteRun(dir, sampleRun(1, "standalone", 1), []byte("raw"))
	assert.ErrorContains(t, err, filepath.Join(dir, RunsDir, "g1-standalone-c5000-r1.txt"))
	err = WriteExtra(dir, Cell{Topology: "standalone", GOMAXPROCS: 1, Rep: 1}, "hdr", nil)
	assert.ErrorContains(t, err, "g1-standalone-r1.hdr")
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Empty(t, entries)
}

func TestWriteRunRejects(t *testing.T) {
	dir := newDir(t, sampleEnv().Plan)
	for _, tt := range []struct {
		name string
		cell Cell
		msg  string
	}{
		{"empty topology", Cell{GOMAXPROCS: 1, Rep: 1}, `bad topology ""`},
		{"a space", Cell{Topology: "nginx http", GOMAXPROCS: 1, Rep: 1}, `bad topology "nginx http"`},
		{"a backslash", Cell{Topology: `a\b`, GOMAXPROCS: 1, Rep: 1}, "bad topology"},
		{"negative gomaxprocs", Cell{Topology: "standalone", GOMAXPROCS: -1, Rep: 1}, "gomaxprocs -1, want at least 1"},
		{"rep 0", Cell{Topology: "standalone", GOMAXPROCS: 1}, "rep 0, want at least 1 (repetitions count from 1)"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := WriteRun(dir, Run{Cell: tt.cell}, []byte("raw"))
			assert.ErrorContains(t, err, "writing run: "+tt.msg)
		})
	}
	entries, err := os.ReadDir(filepath.Join(dir, RunsDir))
	require.NoError(t, err)
	assert.Empty(t, entries, "nothing written for a refused record, not even the raw output")
}

// TestEnvRoundTrip: env.json keeps every field, and a running sweep's
// zero End is left out rather than written as year 1.
func TestEnvRoundTrip(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, Create(dir))
	env := sampleEnv()
	env.End = time.Time{}
	env.Interrupted = true
	env.Targets = map[string]string{"erlang": "process per connection"}
	require.NoError(t, WriteEnv(dir, env))
	b, err := os.ReadFile(filepath.Join(dir, EnvFile))
	require.NoError(t, err)
	assert.NotContains(t, string(b), `"end"`)
	got, runs, err := Load(dir)
	require.NoError(t, err)
	assert.Equal(t, env, got)
	assert.Empty(t, runs)
}
