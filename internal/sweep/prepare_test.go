package sweep

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/topobench/topobench/internal/cpuset"
	"github.com/topobench/topobench/internal/netns"
	"github.com/topobench/topobench/internal/results"
)

// TestRunRefusesBadPlansBeforeAnything: a plan error comes back as
// ErrPlan, one line naming the flag, and nothing is created.
func TestRunRefusesBadPlansBeforeAnything(t *testing.T) {
	allowed, err := cpuset.Allowed()
	require.NoError(t, err)
	outside := allowed.CPUs()[len(allowed.CPUs())-1] + 1
	notes := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(notes, "summary.md"), []byte("mine"), 0o644))
	for _, tt := range []struct {
		name   string
		change func(*Options)
		want   string
	}{
		{"unknown topology", func(o *Options) { o.Plan.Topologies = []string{"nginx-php"} }, "-topologies"},
		{"a year a cell", func(o *Options) { o.Plan.Duration = 999999 * time.Hour }, "-duration: 999999h0m0s, want at most 1h0m0s"},
		{"a hundred thousand processors", func(o *Options) { o.Plan.GOMAXPROCS = []int{100000} }, "-gomaxprocs: 100000, want at most 1024"},
		{"a CPU the machine lacks", func(o *Options) { o.Plan.PinServer = cpuset.Of(outside).String() }, "-pin-server: CPU list"},
		{"a load CPU the machine lacks", func(o *Options) { o.Plan.PinLoad = cpuset.Of(outside).String() }, "-pin-load: CPU list"},
		{"someone else's directory", func(o *Options) { o.Dir = notes }, "-out: " + notes + " is not empty and holds no topobench run"},
		{"pinned servers elsewhere", func(o *Options) { o.HelloAgent, o.Plan.PinServer = "http://127.0.0.1:7070", "0" }, "-pin-server: the servers run elsewhere"},
		{"free ports elsewhere", func(o *Options) { o.HelloAgent, o.FreePorts = "http://127.0.0.1:7070", true }, "-free-ports: with -hello-agent"},
		{"nginx topologies without an nginx agent", func(o *Options) { o.HelloAgent = "http://127.0.0.1:7070" }, "-nginx-agent: topologies through nginx need it"},
		{"an nginx agent alone", func(o *Options) { o.NginxAgent = "http://127.0.0.1:7071" }, "-nginx-agent: needs -hello-agent"},
		{"speed probes with servers elsewhere", func(o *Options) {
			o.HelloAgent, o.NginxAgent, o.Plan.SpeedProbe = "http://127.0.0.1:7070", "http://127.0.0.1:7071", true
		}, "-speed-probe: it measures this machine's CPUs"},
		{"netns with agents", func(o *Options) {
			o.HelloAgent, o.NginxAgent, o.Plan.Isolation = "http://127.0.0.1:7070", "http://127.0.0.1:7071", results.IsolateNetns
		}, "-isolate: netns: the servers run elsewhere"},
		{"a link delay on loopback", func(o *Options) {
			o.Plan.Isolation, o.Plan.LinkDelay = results.IsolateNone, 100*time.Microsecond
		}, "-link-delay: needs -isolate netns"},
		{"no such run to resume", func(o *Options) { o.Resume, o.Dir = true, t.TempDir() }, "-resume: "},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "out")
			o := Options{Plan: smallPlan("standalone", "nginx-http"), Dir: dir, Progress: &bytes.Buffer{}, Log: &bytes.Buffer{}}
			o.Plan.PinLoad, o.Plan.PinServer = "", ""
			tt.change(&o)
			_, err := Run(context.Background(), o)
			require.Error(t, err)
			assert.True(t, errors.Is(err, ErrPlan), "%v", err)
			assert.Contains(t, err.Error(), tt.want)
			assert.NotContains(t, err.Error(), "\n", "one line")
			assert.NoDirExists(t, dir, "nothing created")
		})
	}
}

// TestAddresses: the reference addresses with sockets under the run
// directory, the agents' socket directory, free ports, and a directory
// too deep for a unix socket refused with the flag to change.
func TestAddresses(t *testing.T) {
	dir := t.TempDir()
	s := &sweep{Options: Options{Dir: dir}}
	l, err := s.addresses()
	require.NoError(t, err)
	assert.Equal(t, "127.0.0.1:8080", l.HTTP)
	assert.Equal(t, filepath.Join(dir, "sock"), filepath.Dir(l.FCGIUnix))
	assert.DirExists(t, filepath.Join(dir, "sock"))

	s = &sweep{Options: Options{Dir: dir, HelloAgent: "http://127.0.0.1:7070", SockDir: "/tmp"}}
	l, err = s.addresses()
	require.NoError(t, err)
	assert.Equal(t, "/tmp", filepath.Dir(l.FCGIUnix))

	s = &sweep{Options: Options{Dir: dir, FreePorts: true}}
	l, err = s.addresses()
	require.NoError(t, err)
	assert.NotEqual(t, "127.0.0.1:8080", l.HTTP)

	deep := filepath.Join(dir, strings.Repeat("d", 90))
	s = &sweep{Options: Options{Dir: deep}}
	_, err = s.addresses()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "too long")
	assert.Contains(t, err.Error(), "use a shorter -out")
}

// TestChooseIsolation: netns where the harness can make namespaces,
// loopback with agents, for an old resumed run, or where it cannot.
func TestChooseIsolation(t *testing.T) {
	can, _ := netns.Possible()
	for _, tt := range []struct {
		name   string
		iso    string
		agent  string
		resume bool
		want   string
	}{
		{"agents share loopback", "", "http://127.0.0.1:7070", false, results.IsolateNone},
		{"a run recorded before isolation", "", "", true, results.IsolateNone},
		{"asked for none", results.IsolateNone, "", false, results.IsolateNone},
		{"the default", "", "", false, map[bool]string{true: results.IsolateNetns, false: results.IsolateNone}[can]},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var log bytes.Buffer
			p := smallPlan("standalone")
			p.Isolation = tt.iso
			s := &sweep{Options: Options{HelloAgent: tt.agent, Resume: tt.resume, Log: &log}, plan: p}
			require.NoError(t, s.chooseIsolation())
			assert.Equal(t, tt.want, s.plan.Isolation)
			assert.Equal(t, tt.want, s.env.Plan.Isolation, "recorded")
			if !can && tt.iso == "" && tt.agent == "" && !tt.resume {
				assert.Contains(t, log.String(), "note: -isolate none:")
			}
		})
	}
	if !can {
		p := smallPlan("standalone")
		p.Isolation = results.IsolateNetns
		err := (&sweep{plan: p}).chooseIsolation()
		require.ErrorIs(t, err, ErrPlan)
		assert.Contains(t, err.Error(), "-isolate: netns: ")
	}
}

func TestTargetPrefix(t *testing.T) {
	assert.Equal(t, "", targetPrefix(""))
	assert.Equal(t, "", targetPrefix(results.TargetGo))
	assert.Equal(t, "erlang ", targetPrefix("erlang"))
}

func TestCheckTargets(t *testing.T) {
	assert.NoError(t, checkTargets([]string{results.TargetGo}))
	err := checkTargets([]string{"cobol"})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "-targets: ")
	err = checkTargets([]string{"cmd:/nonexistent/api -listen {addr}"})
	require.ErrorIs(t, err, ErrPlan)
	assert.Contains(t, err.Error(), "-targets: target cmd:/nonexistent/api -listen {addr}: program /nonexistent/api")
}

func TestOutcomeKept(t *testing.T) {
	assert.Equal(t, 6, Outcome{Measured: 3, Skipped: 2, Failed: 1, Total: 9}.Kept())
}
