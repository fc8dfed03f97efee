package sweep

import (
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/topobench/topobench/internal/loadgen"
	"github.com/topobench/topobench/internal/results"
)

var updateEquivalence = flag.Bool("update-equivalence", false, "rewrite testdata/equivalence/*.json from this tree's records")

// machineKeys are the record fields read from this machine as the test
// runs (its CPU counters, its clock where no fake moves it: the rounds design times its warmups by the wall clock), not from the
// fakes: the equivalence leaves them out.
var machineKeys = []string{"start", "wall_ns", "noise", "settle", "load_share", "load_quota", "servers", "load_call_s", "warmup_ns"}

// TestRecordsEquivalence: a short sweep of each design over fake servers
// and a fake load session records every field as the golden records
// (made from the tree before the designs shared one measurement step)
// say, but for the fields the machine gives.
func TestRecordsEquivalence(t *testing.T) {
	for _, tc := range []struct {
		name string
		plan func() Plan
		gen  func(*fakeSweep, *fakeClock) loadgen.Generator
		cg   bool
	}{
		{"rounds", func() Plan { return smallPlan("standalone", "nginx-http") }, nil, false},
		{"paired", pairedPlan, func(f *fakeSweep, c *fakeClock) loadgen.Generator {
			return &keptGen{rate: steadyRate, clock: c, drain: 40 * time.Millisecond}
		}, false},
		{"duet", duetPlan, func(f *fakeSweep, c *fakeClock) loadgen.Generator {
			return &duetGen{keptGen: &keptGen{rate: steadyRate, clock: c, drain: 40 * time.Millisecond}, bias: 1.02}
		}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakeSweep(t, tc.plan())
			if tc.cg {
				needWeights(t, f)
			}
			clock := &fakeClock{t: time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)}
			if tc.gen != nil {
				f.clock.now = clock.now
				f.generators[results.LoadBuiltin] = tc.gen(f, clock)
				f.generators[results.LoadWrk] = f.generators[results.LoadBuiltin]
			}
			require.NoError(t, f.measure(context.Background()))
			got := normalized(t, f.runs(t))
			path := filepath.Join("testdata", "equivalence", tc.name+".json")
			if *updateEquivalence {
				require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
				require.NoError(t, os.WriteFile(path, got, 0o644))
			}
			want, err := os.ReadFile(path)
			require.NoError(t, err)
			assert.JSONEq(t, string(want), string(got))
		})
	}
}

// normalized is runs as indented JSON without the machine's fields.
func normalized(t *testing.T, runs []results.Run) []byte {
	t.Helper()
	b, err := json.Marshal(runs)
	require.NoError(t, err)
	var rs []map[string]any
	require.NoError(t, json.Unmarshal(b, &rs))
	for _, r := range rs {
		drop(r)
	}
	out, err := json.MarshalIndent(rs, "", "  ")
	require.NoError(t, err)
	return append(out, '\n')
}

func drop(m map[string]any) {
	for _, k := range machineKeys {
		delete(m, k)
	}
	for _, v := range m {
		if sub, ok := v.(map[string]any); ok {
			drop(sub)
		}
	}
}
