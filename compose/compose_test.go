package compose

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/compose-spec/compose-go/v2/cli"
	"github.com/compose-spec/compose-go/v2/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/topobench/topobench/internal/nginxconf"
	"github.com/topobench/topobench/internal/topology"
)

const composeFile = "docker-compose.yml"

// sockDir is where hello's unix sockets live in the containers: /tmp, as in
// the reference run, on a volume hello and nginx share.
const sockDir = "/tmp"

func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("..")
	require.NoError(t, err)
	require.FileExists(t, filepath.Join(root, "go.mod"))
	return root
}

// load reads the compose file as docker compose would, with env as the
// whole environment (nil: every knob at its default).
func load(t *testing.T, env ...string) *types.Project {
	t.Helper()
	opts, err := cli.NewProjectOptions([]string{composeFile},
		cli.WithWorkingDirectory("."),
		cli.WithName("topobench"),
		cli.WithEnv(env),
		cli.WithResolvedPaths(true),
	)
	require.NoError(t, err)
	p, err := opts.LoadProject(context.Background())
	require.NoError(t, err, "loading %s", composeFile)
	return p
}

func service(t *testing.T, p *types.Project, name string) types.ServiceConfig {
	t.Helper()
	s, err := p.GetService(name)
	require.NoError(t, err)
	return s
}

// procdCommand splits a procd command line into its flags (name -> values)
// and the program with its arguments after "--".
func procdCommand(t *testing.T, cmd []string) (flags map[string][]string, program []string) {
	t.Helper()
	i := slices.Index(cmd, "--")
	require.GreaterOrEqual(t, i, 0, "procd command without -- before the program: %q", cmd)
	flags = map[string][]string{}
	for _, f := range cmd[:i] {
		name, val, ok := strings.Cut(strings.TrimLeft(f, "-"), "=")
		require.True(t, ok && strings.HasPrefix(f, "-"), "procd flag %q: want -name=value", f)
		flags[name] = append(flags[name], val)
	}
	return flags, cmd[i+1:]
}

// harnessFlags parses "compare -name=value ..." into name -> value.
func harnessFlags(t *testing.T, cmd []string) map[string]string {
	t.Helper()
	require.NotEmpty(t, cmd)
	require.Equal(t, "compare", cmd[0])
	flags := map[string]string{}
	for _, f := range cmd[1:] {
		name, val, ok := strings.Cut(strings.TrimLeft(f, "-"), "=")
		require.True(t, ok && strings.HasPrefix(f, "-"), "harness flag %q: want -name=value", f)
		require.NotContains(t, flags, name, "harness flag -%s given twice", name)
		flags[name] = val
	}
	return flags
}

func TestServices(t *testing.T) {
	p := load(t)
	assert.ElementsMatch(t, []string{"hello", "nginx", "harness"}, p.ServiceNames())
	images := map[string]string{}
	for _, s := range p.Services {
		assert.NotEmpty(t, s.Image, "%s: no image name", s.Name)
		if other, ok := images[s.Image]; ok {
			t.Errorf("%s and %s share image %s", s.Name, other, s.Image)
		}
		images[s.Image] = s.Name
		require.NotNil(t, s.Init, "%s: init not set", s.Name)
		assert.True(t, *s.Init, "%s: needs an init to reap nginx's and wrk's children", s.Name)
		assert.Empty(t, s.Ports, "%s publishes ports; the run is loopback-only", s.Name)
	}
}

// TestOneNetworkNamespace: hello owns a namespace with no network but
// loopback; the others join it, so every address is the host's loopback one.
func TestOneNetworkNamespace(t *testing.T) {
	p := load(t)
	assert.Equal(t, "none", service(t, p, "hello").NetworkMode)
	for _, name := range []string{"nginx", "harness"} {
		s := service(t, p, name)
		assert.Equal(t, "service:hello", s.NetworkMode, name)
		assert.Contains(t, s.DependsOn, "hello", name)
		assert.Empty(t, s.Sysctls, "%s: sysctls belong to hello, which owns the namespace", name)
	}
}

func TestBuilds(t *testing.T) {
	root := repoRoot(t)
	p := load(t)
	df := parseDockerfile(t, filepath.Join(root, "compose", "Dockerfile"))
	for _, s := range p.Services {
		t.Run(s.Name, func(t *testing.T) {
			require.NotNil(t, s.Build, "built from source, not pulled")
			assert.Equal(t, root, s.Build.Context, "build context is the repository root")
			path := s.Build.Dockerfile
			if !filepath.IsAbs(path) {
				path = filepath.Join(s.Build.Context, path)
			}
			assert.FileExists(t, path)
			assert.Equal(t, filepath.Join(root, "compose", "Dockerfile"), path)
			_, ok := df.stage(s.Build.Target)
			assert.True(t, ok, "target %q is no stage of the Dockerfile", s.Build.Target)
			for arg := range s.Build.Args {
				assert.Contains(t, df.args, arg, "build arg %s is not an ARG of the Dockerfile", arg)
			}
		})
	}
}

// TestBuildCopiesEverythingTheBinariesNeed: the build stage copies only
// parts of the checkout; every package the binaries import from this
// module, and every file those packages embed, must be among them.
func TestBuildCopiesEverythingTheBinariesNeed(t *testing.T) {
	root := repoRoot(t)
	df := parseDockerfile(t, filepath.Join(root, "compose", "Dockerfile"))
	build, ok := df.stage("build")
	require.True(t, ok, "no build stage")

	var copied []string
	var buildLine string
	for _, in := range build.instrs {
		switch in.cmd {
		case "COPY":
			f := strings.Fields(in.args)
			require.GreaterOrEqual(t, len(f), 2, "COPY %s", in.args)
			copied = append(copied, f[:len(f)-1]...)
		case "RUN":
			if strings.Contains(in.args, "go build") {
				buildLine = in.args
			}
		}
	}
	bins := []string{"./cmd/hello", "./cmd/procd", "./cmd/topobench"}
	for _, b := range bins {
		assert.Contains(t, strings.Fields(buildLine), b, "the build stage does not build %s", b)
	}

	isCopied := func(rel string) bool {
		for _, src := range copied {
			src = strings.TrimPrefix(filepath.Clean(src), "./")
			if ok, _ := filepath.Match(src, rel); ok {
				return true
			}
			if rel == src || strings.HasPrefix(rel, src+"/") {
				return true
			}
		}
		return false
	}
	cmd := exec.Command("go", append([]string{"list", "-deps", "-json=Dir,GoFiles,EmbedFiles,Module"}, bins...)...)
	cmd.Dir = root
	out, err := cmd.Output()
	require.NoError(t, err, "go list: %s", stderrOf(err))
	dec := json.NewDecoder(strings.NewReader(string(out)))
	n := 0
	for dec.More() {
		var pkg struct {
			Dir        string
			GoFiles    []string
			EmbedFiles []string
			Module     *struct{ Main bool }
		}
		require.NoError(t, dec.Decode(&pkg))
		if pkg.Module == nil || !pkg.Module.Main {
			continue // standard library or a module from the proxy
		}
		n++
		rel, err := filepath.Rel(root, pkg.Dir)
		require.NoError(t, err)
		for _, f := range append(pkg.GoFiles, pkg.EmbedFiles...) {
			file := filepath.ToSlash(filepath.Join(rel, f))
			assert.True(t, isCopied(file), "%s is needed by the binaries but not copied into the build stage", file)
		}
	}
	assert.Greater(t, n, 5, "go list found too few of this module's packages")
}

// TestProgramsAreInTheirImages: what the compose file runs is put there by
// the Dockerfile stage the service builds.
func TestProgramsAreInTheirImages(t *testing.T) {
	root := repoRoot(t)
	p := load(t)
	df := parseDockerfile(t, filepath.Join(root, "compose", "Dockerfile"))
	hello, nginx, harness := service(t, p, "hello"), service(t, p, "nginx"), service(t, p, "harness")
	_, helloProg := procdCommand(t, hello.Command)
	nginxFlags, nginxProg := procdCommand(t, nginx.Command)
	prepare := strings.Fields(nginxFlags["prepare"][0])
	want := map[string][]string{
		"hello":   {"/usr/local/bin/procd", helloProg[0]},
		"nginx":   {"/usr/local/bin/procd", nginxProg[0], prepare[0]},
		"harness": {"/usr/local/bin/topobench", "/usr/bin/wrk"},
	}
	for _, s := range []types.ServiceConfig{hello, nginx, harness} {
		st, ok := df.stage(s.Build.Target)
		require.True(t, ok, s.Build.Target)
		for _, prog := range want[s.Name] {
			assert.True(t, df.provides(st, prog), "%s: stage %s does not provide %s", s.Name, st.name, prog)
		}
		if s.HealthCheck != nil {
			assert.True(t, df.provides(st, s.HealthCheck.Test[1]), "%s: healthcheck runs %s, not in the image", s.Name, s.HealthCheck.Test[1])
		}
	}
	assert.Equal(t, `["/usr/local/bin/procd"]`, df.entrypoint(t, "hello"))
	assert.Equal(t, `["/usr/local/bin/procd"]`, df.entrypoint(t, "nginx"))
	assert.Equal(t, `["/usr/local/bin/topobench"]`, df.entrypoint(t, "harness"))
}

// helloReady returns the targets procd must see answering before cmd/hello
// counts as started: every listener of the reference layout.
func helloReady(l topology.Layout) []string {
	var ready []string
	seen := map[topology.Backend]bool{}
	for _, tp := range topology.All() {
		network, addr, ok := l.BackendAddr(tp)
		if !ok || seen[tp.Backend] {
			continue
		}
		seen[tp.Backend] = true
		switch {
		case tp.Backend == topology.HTTPTCP:
			ready = append(ready, "http://"+addr+"/")
		case network == "tcp":
			ready = append(ready, "tcp:"+addr)
		default:
			ready = append(ready, "unix:"+addr)
		}
	}
	return ready
}

func TestHelloAgreesWithLayoutAndFlags(t *testing.T) {
	p := load(t)
	hello := service(t, p, "hello")
	flags, prog := procdCommand(t, hello.Command)
	layout := topology.DefaultLayout(sockDir)

	require.NotEmpty(t, prog)
	assert.Equal(t, "/usr/local/bin/hello", prog[0])
	assert.Equal(t, layout.HelloArgs(topology.All()), prog[1:],
		"hello's listeners must be topology.DefaultLayout(%q), the addresses nginx and the harness use", sockDir)
	assert.ElementsMatch(t, helloReady(layout), flags["ready"])
	assert.Equal(t, []string{"GOMAXPROCS"}, flags["env"], "the harness sets GOMAXPROCS per restart, nothing else")
	checkAgentAddr(t, flags["listen"], layout)

	// cmd/hello must accept every flag the compose file gives it.
	known := helpFlags(t, buildCmd(t, "hello"))
	for _, a := range prog[1:] {
		name, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
		assert.Contains(t, known, name, "cmd/hello has no flag -%s", name)
	}
}

// checkAgentAddr: a procd API is one loopback address that collides with
// no listener of the layout.
func checkAgentAddr(t *testing.T, listen []string, l topology.Layout) {
	t.Helper()
	require.Len(t, listen, 1)
	host, port, err := net.SplitHostPort(listen[0])
	require.NoError(t, err)
	assert.True(t, net.ParseIP(host).IsLoopback(), "procd API %s is not on loopback", listen[0])
	taken := []string{l.HTTP, l.FCGITCP, l.FastTCP}
	for _, p := range l.NginxPorts {
		taken = append(taken, "127.0.0.1:"+strconv.Itoa(p))
	}
	for _, a := range taken {
		_, p, _ := net.SplitHostPort(a)
		assert.NotEqual(t, p, port, "procd API %s collides with %s", listen[0], a)
	}
}

var (
	listenRE   = regexp.MustCompile(`(?m)^\s*listen\s+([^\s;]+)`)
	upstreamRE = regexp.MustCompile(`(?m)^\s*server\s+([^\s;{]+)\s*;`)
)

// TestNginxAgreesWithRenderedConfig renders the nginx/ templates the way the
// nginx service does (topobench nginx-conf, reference layout, sockets in
// /tmp) and checks the service's readiness targets against the rendered
// listen directives and hello's listeners against the upstreams.
func TestNginxAgreesWithRenderedConfig(t *testing.T) {
	p := load(t)
	nginx := service(t, p, "nginx")
	flags, prog := procdCommand(t, nginx.Command)
	layout := topology.DefaultLayout(sockDir)

	// -prepare renders into the prefix nginx runs with.
	require.Len(t, flags["prepare"], 1)
	prepare := strings.Fields(flags["prepare"][0])
	require.GreaterOrEqual(t, len(prepare), 2)
	assert.Equal(t, "nginx-conf", prepare[1])
	prepFlags := map[string]string{}
	for i := 2; i+1 < len(prepare); i += 2 {
		prepFlags[strings.TrimLeft(prepare[i], "-")] = prepare[i+1]
	}
	prefix := prepFlags["out"]
	require.NotEmpty(t, prefix, "nginx-conf needs -out")
	assert.Equal(t, sockDir, prepFlags["sockdir"])
	known := helpFlags(t, buildCmd(t, "topobench"), "nginx-conf")
	for name := range prepFlags {
		assert.Contains(t, known, name, "topobench nginx-conf has no flag -%s", name)
	}
	assert.Equal(t, []string{"/usr/sbin/nginx", "-p", prefix, "-c", prefix + "/nginx.conf", "-e", prefix + "/error.log", "-g", "daemon off;"}, prog)
	require.Len(t, flags["stop-signal"], 1)
	assert.Equal(t, "QUIT", flags["stop-signal"][0], "nginx finishes requests in flight on QUIT, as the harness stops it")
	assert.Equal(t, []string{"-v"}, flags["version-args"], "the harness records nginx's version from procd's status")
	checkAgentAddr(t, flags["listen"], layout)

	dir := t.TempDir()
	require.NoError(t, nginxconf.Render(dir, nginxconf.Params{
		Layout:             layout,
		Prefix:             prefix,
		Vhosts:             nginxconf.AllVhosts(),
		WorkerRlimitNofile: 20000,
	}))
	var listens, upstreams []string
	for _, vh := range nginxconf.AllVhosts() {
		data, err := os.ReadFile(filepath.Join(dir, vh))
		require.NoError(t, err, "vhost %s not rendered", vh)
		for _, m := range listenRE.FindAllStringSubmatch(string(data), -1) {
			listens = append(listens, "http://"+m[1]+"/")
		}
		for _, m := range upstreamRE.FindAllStringSubmatch(string(data), -1) {
			upstreams = append(upstreams, m[1])
		}
	}
	require.Len(t, listens, len(nginxconf.AllVhosts()), "one listen per vhost")
	assert.ElementsMatch(t, listens, flags["ready"], "nginx's readiness targets must be its rendered listen addresses")

	_, helloProg := procdCommand(t, service(t, p, "hello").Command)
	var helloAddrs []string
	for _, a := range helloProg[1:] {
		_, v, _ := strings.Cut(a, "=")
		if strings.HasPrefix(v, "/") {
			v = "unix:" + v
		}
		if v != "" {
			helloAddrs = append(helloAddrs, v)
		}
	}
	require.NotEmpty(t, upstreams)
	for _, u := range upstreams {
		assert.Contains(t, helloAddrs, u, "nginx upstream %s is no listener of the hello service", u)
	}
}

// TestSocketsAreShared: hello creates its unix sockets on a tmpfs volume at
// /tmp that nginx (and the harness) mount at the same path.
func TestSocketsAreShared(t *testing.T) {
	p := load(t)
	var vol string
	for _, name := range []string{"hello", "nginx", "harness"} {
		s := service(t, p, name)
		found := false
		for _, v := range s.Volumes {
			if v.Target == sockDir {
				assert.Equal(t, types.VolumeTypeVolume, v.Type, "%s: %s must be the shared volume", name, sockDir)
				if vol == "" {
					vol = v.Source
				}
				assert.Equal(t, vol, v.Source, "%s mounts another volume at %s", name, sockDir)
				found = true
			}
		}
		assert.True(t, found, "%s does not mount the socket volume at %s", name, sockDir)
	}
	require.Contains(t, p.Volumes, vol)
	assert.Equal(t, "tmpfs", p.Volumes[vol].DriverOpts["type"], "the socket volume is a tmpfs: no stale socket outlives a run")
}

func TestSysctlsAgreeWithSysctlConf(t *testing.T) {
	root := repoRoot(t)
	conf := parseSysctlConf(t, filepath.Join(root, "tuning", "sysctl.conf"))
	// What a container with its own network namespace may set: the
	// namespaced keys. fs.*, vm.* and the other net.core.* keys are
	// system-wide; the host sets them.
	want := map[string]string{}
	for k, v := range conf {
		if strings.HasPrefix(k, "net.ipv4.") || k == "net.core.somaxconn" {
			want[k] = v
		}
	}
	require.Contains(t, want, "net.core.somaxconn")
	require.Contains(t, want, "net.ipv4.ip_local_port_range")

	got := map[string]string{}
	for k, v := range service(t, load(t), "hello").Sysctls {
		got[k] = strings.Join(strings.Fields(v), " ")
	}
	assert.Equal(t, want, got, "hello's sysctls must be sysctl.conf's namespaced settings")
}

func TestNofileAgreesWithLimitsConf(t *testing.T) {
	root := repoRoot(t)
	want := limitsNofile(t, filepath.Join(root, "tuning", "limits.conf"))
	for _, env := range [][]string{nil, {"TOPOBENCH_NOFILE=20000"}} {
		p := load(t, env...)
		for _, s := range p.Services {
			u := s.Ulimits["nofile"]
			require.NotNil(t, u, "%s: no nofile ulimit", s.Name)
			n := want
			if env != nil {
				n = 20000
			}
			assert.Equal(t, n, u.Soft, "%s soft nofile with %v", s.Name, env)
			assert.Equal(t, n, u.Hard, "%s hard nofile with %v", s.Name, env)
		}
	}
}

func TestHealthchecksGateTheHarness(t *testing.T) {
	p := load(t)
	for _, name := range []string{"hello", "nginx"} {
		s := service(t, p, name)
		flags, _ := procdCommand(t, s.Command)
		require.NotNil(t, s.HealthCheck, name)
		assert.Equal(t, types.HealthCheckTest{"CMD", "/usr/local/bin/procd", "-check=http://" + flags["listen"][0] + "/healthz"}, s.HealthCheck.Test, name)
		// The harness waits long enough for procd's own readiness bound (10s).
		require.NotNil(t, s.HealthCheck.Retries)
		require.NotNil(t, s.HealthCheck.Interval)
		assert.GreaterOrEqual(t, float64(*s.HealthCheck.Retries)*float64(*s.HealthCheck.Interval), 10e9, name)
	}
	h := service(t, p, "harness")
	for _, dep := range []string{"hello", "nginx"} {
		require.Contains(t, h.DependsOn, dep)
		assert.Equal(t, types.ServiceConditionHealthy, h.DependsOn[dep].Condition, "harness must wait for %s's healthcheck", dep)
	}
}

// TestHarnessFlags: the harness runs the 2013 preset (the duet needs its
// servers here), every flag it is given exists in topobench compare (the
// agents' among the plumbing no help shows), each knob's default is the
// preset's own, the agent URLs are where procd listens, and the knobs
// reach the command line.
func TestHarnessFlags(t *testing.T) {
	p := load(t)
	h := harnessFlags(t, service(t, p, "harness").Command)
	require.Equal(t, "2013", h["preset"])
	bin := buildCmd(t, "topobench")
	defaults := helpFlags(t, bin, "compare", "-preset", "2013", "-help-all")
	plumbing := []string{"hello-agent", "nginx-agent", "sockdir"}
	for name := range h {
		if !slices.Contains(plumbing, name) {
			assert.Contains(t, defaults, name, "topobench compare has no flag -%s", name)
		}
	}
	args := []string{"compare"}
	for _, name := range plumbing {
		assert.NotContains(t, defaults, name, "-%s is plumbing, in no help", name)
		args = append(args, "-"+name+"="+h[name])
	}
	out, err := exec.Command(bin, append(args, "-h")...).CombinedOutput()
	assert.NoError(t, err, "topobench compare takes the agents' flags:\n%s", out)

	helloFlags, _ := procdCommand(t, service(t, p, "hello").Command)
	nginxFlags, _ := procdCommand(t, service(t, p, "nginx").Command)
	assert.Equal(t, "http://"+helloFlags["listen"][0], h["hello-agent"])
	assert.Equal(t, "http://"+nginxFlags["listen"][0], h["nginx-agent"])
	assert.Equal(t, sockDir, h["sockdir"])
	assert.NotContains(t, h, "out", "compare's default results/<timestamp> is what lands in the mounted results/")
	assert.NotContains(t, h, "pin-server", "the servers run in other containers")

	for flag, knob := range knobFlags {
		def, ok := defaults[flag]
		if !ok {
			continue // reported above
		}
		assert.Equal(t, def, h[flag], "-%s: the %s default must be compare's", flag, knob)
	}

	var env []string
	want := map[string]string{}
	for flag, knob := range knobFlags {
		v := "knob-" + flag
		env = append(env, knob+"="+v)
		want[flag] = v
	}
	got := harnessFlags(t, service(t, load(t, env...), "harness").Command)
	for flag, v := range want {
		assert.Equal(t, v, got[flag], "%s does not reach -%s", knobFlags[flag], flag)
	}
}

// knobFlags maps the harness flags set from the environment to their
// variables.
var knobFlags = map[string]string{
	"topologies":  "TOPOBENCH_TOPOLOGIES",
	"gomaxprocs":  "TOPOBENCH_GOMAXPROCS",
	"reps":        "TOPOBENCH_REPS",
	"duration":    "TOPOBENCH_DURATION",
	"warmup":      "TOPOBENCH_WARMUP",
	"threads":     "TOPOBENCH_THREADS",
	"connections": "TOPOBENCH_CONNECTIONS",
	"timeout":     "TOPOBENCH_TIMEOUT",
}

// TestResultsMount: compare runs in the mounted results directory's parent,
// and the mounted directory is this checkout's git-ignored results/ unless
// TOPOBENCH_RESULTS points elsewhere. Every other bind source must exist.
func TestResultsMount(t *testing.T) {
	root := repoRoot(t)
	check := func(env []string, wantSource string) {
		h := service(t, load(t, env...), "harness")
		found := false
		for _, v := range h.Volumes {
			if v.Type != types.VolumeTypeBind {
				continue
			}
			if v.Target == filepath.Join(h.WorkingDir, "results") {
				assert.Equal(t, wantSource, v.Source)
				assert.False(t, v.ReadOnly)
				found = true
				continue
			}
			assert.FileExists(t, v.Source)
		}
		assert.True(t, found, "no results directory mounted at %s/results", h.WorkingDir)
	}
	check(nil, filepath.Join(root, "results"))
	other := t.TempDir()
	check([]string{"TOPOBENCH_RESULTS=" + other}, other)

	ignore, err := os.ReadFile(filepath.Join(root, ".gitignore"))
	require.NoError(t, err)
	assert.Regexp(t, `(?m)^/?results/?$`, string(ignore), "results/ must be git-ignored")
	for _, s := range load(t).Services {
		for _, v := range s.Volumes {
			if v.Type == types.VolumeTypeBind && s.Name != "harness" {
				assert.FileExists(t, v.Source, "%s binds %s", s.Name, v.Source)
			}
		}
	}
}

var knobRE = regexp.MustCompile(`\$\{(TOPOBENCH_[A-Z_]+):-([^}]*)\}`)

// TestDocsDocumentKnobs: every TOPOBENCH_* variable the compose file
// reads is in docs/containers.md, with its default.
func TestDocsDocumentKnobs(t *testing.T) {
	root := repoRoot(t)
	raw, err := os.ReadFile(composeFile)
	require.NoError(t, err)
	doc, err := os.ReadFile(filepath.Join(root, "docs", "containers.md"))
	require.NoError(t, err)
	section := string(doc)

	knobs := map[string]string{}
	for _, m := range knobRE.FindAllStringSubmatch(string(raw), -1) {
		if d, ok := knobs[m[1]]; ok {
			assert.Equal(t, d, m[2], "%s has two defaults", m[1])
		}
		knobs[m[1]] = m[2]
	}
	require.NotEmpty(t, knobs)
	for _, knob := range knobFlags {
		assert.Contains(t, knobs, knob, "%s is not read by the compose file", knob)
	}
	for name, def := range knobs {
		row := regexp.MustCompile("(?m)^\\|\\s*`" + name + "`.*$").FindString(section)
		if !assert.NotEmpty(t, row, "docs/containers.md does not list %s", name) {
			continue
		}
		if name == "TOPOBENCH_TOPOLOGIES" {
			assert.Contains(t, row, "all", "%s: docs/containers.md should say the default is all topologies", name)
			continue
		}
		assert.Contains(t, row, "`"+def+"`", "docs/containers.md gives %s another default than %q", name, def)
	}
}

// --- helpers: building the binaries and reading their flags --------------

var (
	binOnce sync.Map // name -> *binResult
	binDir  string
)

type binResult struct {
	once sync.Once
	path string
	err  error
}

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "tb-compose")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binDir = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// buildCmd builds ./cmd/NAME once per test binary.
func buildCmd(t *testing.T, name string) string {
	t.Helper()
	v, _ := binOnce.LoadOrStore(name, &binResult{})
	r := v.(*binResult)
	r.once.Do(func() {
		r.path = filepath.Join(binDir, name)
		cmd := exec.Command("go", "build", "-o", r.path, "./cmd/"+name)
		cmd.Dir = ".."
		if out, err := cmd.CombinedOutput(); err != nil {
			r.err = fmt.Errorf("go build ./cmd/%s: %v\n%s", name, err, out)
		}
	})
	require.NoError(t, r.err)
	return r.path
}

var flagLineRE = regexp.MustCompile(`^  -([A-Za-z0-9][\w.-]*)`)

// helpFlags runs "bin [sub] -h" and returns each flag with its default as
// flag.PrintDefaults shows it ("" when it shows none).
func helpFlags(t *testing.T, bin string, sub ...string) map[string]string {
	t.Helper()
	out, _ := exec.Command(bin, append(sub, "-h")...).CombinedOutput() // -h exits 2
	flags := map[string]string{}
	var name string
	var usage strings.Builder
	flush := func() {
		if name != "" {
			flags[name] = defaultOf(usage.String())
		}
		usage.Reset()
	}
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	for sc.Scan() {
		line := sc.Text()
		if m := flagLineRE.FindStringSubmatch(line); m != nil {
			flush()
			name = m[1]
			usage.WriteString(line)
			continue
		}
		if name != "" && strings.HasPrefix(line, " ") {
			usage.WriteString(" " + strings.TrimSpace(line))
			continue
		}
		flush() // a group's heading ends the flag before it
		name = ""
	}
	flush()
	require.NotEmpty(t, flags, "no flags in %s %v -h:\n%s", bin, sub, out)
	return flags
}

var defaultRE = regexp.MustCompile(`\(default (.*)\)\s*$`)

func defaultOf(usage string) string {
	m := defaultRE.FindStringSubmatch(usage)
	if m == nil {
		return ""
	}
	if s, err := strconv.Unquote(m[1]); err == nil {
		return s
	}
	return m[1]
}

func stderrOf(err error) string {
	if ee, ok := err.(*exec.ExitError); ok {
		return string(ee.Stderr)
	}
	return ""
}

// --- helpers: sysctl.conf, limits.conf -------------------------------------

func parseSysctlConf(t *testing.T, path string) map[string]string {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	conf := map[string]string{}
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") || strings.HasPrefix(line, ";") {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		require.True(t, ok, "%s:%d: no '='", path, n)
		conf[strings.TrimSpace(k)] = strings.Join(strings.Fields(v), " ")
	}
	require.NoError(t, sc.Err())
	return conf
}

// limitsNofile returns the nofile value limits.conf sets, requiring one
// value for soft and hard alike.
func limitsNofile(t *testing.T, path string) int {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	values := map[string]bool{}
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		if len(f) == 4 && !strings.HasPrefix(f[0], "#") && f[2] == "nofile" {
			values[f[3]] = true
		}
	}
	require.Len(t, values, 1, "%s: want one nofile value", path)
	for v := range values {
		n, err := strconv.Atoi(v)
		require.NoError(t, err)
		return n
	}
	return 0
}

// --- helpers: the Dockerfile -----------------------------------------------

type instr struct{ cmd, args string }

type stage struct {
	name, from string
	instrs     []instr
}

type dockerfile struct {
	args   []string // ARG names, global and per stage
	stages []stage
}

func parseDockerfile(t *testing.T, path string) *dockerfile {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	df := &dockerfile{}
	var cur strings.Builder
	var lines []string
	for _, l := range strings.Split(string(data), "\n") {
		tl := strings.TrimSpace(l)
		if strings.HasPrefix(tl, "#") || (tl == "" && cur.Len() == 0) {
			continue
		}
		if strings.HasSuffix(tl, "\\") {
			cur.WriteString(strings.TrimSuffix(tl, "\\") + " ")
			continue
		}
		cur.WriteString(tl)
		lines = append(lines, cur.String())
		cur.Reset()
	}
	for _, l := range lines {
		cmd, args, _ := strings.Cut(l, " ")
		cmd = strings.ToUpper(cmd)
		args = strings.TrimSpace(args)
		switch cmd {
		case "FROM":
			f := strings.Fields(args)
			st := stage{from: f[0]}
			if len(f) == 3 && strings.EqualFold(f[1], "AS") {
				st.name = f[2]
			}
			df.stages = append(df.stages, st)
			continue
		case "ARG":
			name, _, _ := strings.Cut(args, "=")
			df.args = append(df.args, name)
		}
		if len(df.stages) > 0 {
			s := &df.stages[len(df.stages)-1]
			s.instrs = append(s.instrs, instr{cmd, args})
		}
	}
	require.NotEmpty(t, df.stages, "%s: no stages", path)
	return df
}

func (df *dockerfile) stage(name string) (stage, bool) {
	for _, s := range df.stages {
		if s.name == name {
			return s, true
		}
	}
	return stage{}, false
}

func (df *dockerfile) entrypoint(t *testing.T, name string) string {
	t.Helper()
	s, ok := df.stage(name)
	require.True(t, ok, name)
	ep := ""
	for _, in := range s.instrs {
		if in.cmd == "ENTRYPOINT" {
			ep = in.args
		}
	}
	var v []string
	require.NoError(t, json.Unmarshal([]byte(ep), &v), "stage %s: ENTRYPOINT %q is not exec form", name, ep)
	b, _ := json.Marshal(v)
	return string(b)
}

// provides reports whether stage s puts prog into its image: copied from a
// binary the build stage compiles, or installed by apt-get as the Debian
// package of that name (nginx -> /usr/sbin/nginx, wrk -> /usr/bin/wrk).
func (df *dockerfile) provides(s stage, prog string) bool {
	dir, base := filepath.Split(prog)
	build, _ := df.stage("build")
	builds := func(name string) bool {
		for _, in := range build.instrs {
			if in.cmd == "RUN" && strings.Contains(in.args, "go build") && slices.Contains(strings.Fields(in.args), "./cmd/"+name) {
				return true
			}
		}
		return false
	}
	debian := map[string]string{"/usr/sbin/nginx": "nginx", "/usr/bin/wrk": "wrk"}
	for _, in := range s.instrs {
		f := strings.Fields(in.args)
		switch {
		case in.cmd == "COPY" && len(f) >= 3 && f[0] == "--from=build":
			if f[len(f)-1] != dir {
				continue
			}
			for _, src := range f[1 : len(f)-1] {
				if filepath.Base(src) == base && builds(base) {
					return true
				}
			}
		case in.cmd == "RUN" && strings.Contains(in.args, "apt-get") && strings.Contains(in.args, "install"):
			if pkg, ok := debian[prog]; ok && slices.Contains(f, pkg) {
				return true
			}
		}
	}
	return false
}
