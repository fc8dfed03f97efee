// Package target builds and runs the servers topobench compares with
// cmd/hello: the seeds' Erlang, Java thread-per-connection, Java fixed
// pool, Netty and Jetty servers, whose sources are in targets/, and the
// user's own HTTP server given as a command line. Each seed target answers
// GET and HEAD with cmd/hello's bytes and takes the sweep's processor value
// (Erlang's +S N, the JVM's -XX:ActiveProcessorCount=N).
//
// A Target is data: its name, its model, the commands and jars it needs
// with the Debian package of each, and the command line it runs with.
// Build compiles it with javac or erlc (no build tool) into a directory and
// returns a Program; Program.Start runs it under internal/proc and returns
// once it has written its ready line and answered a real request. Go's
// cmd/hello is the "go" target; internal/hellorun runs it.
//
// A running target ("listen:IP:PORT", "listen:unix:PATH", Runtime
// Running, see ParseRunning) is a service the user already runs, on
// loopback or a unix socket: Build and Check need nothing, Attach checks
// it answers and finds the process that holds its listening socket (its
// CPU time is the server's), and its Stop stops nothing.
//
// A command target ("cmd:PATH ARGS", Runtime Cmd, see ParseCommand) is the
// user's service: the command line is split as a shell would, and its
// placeholders say where to listen ({addr} for TCP host:port, {host} and
// {port} for its halves, {unix} for a unix socket path) and with how many
// processors ({procs}; GOMAXPROCS is set in its environment too). Build
// only finds the program; Start runs it in a process group of its own in
// the harness's working directory, and it is ready once an HTTP GET of
// Config.Path (default "/") gets any answer below 500 at every place it
// listens, within CommandStartTimeout. A command that does not start,
// exits, or does not answer in time is one error naming it, with the tail
// of its stderr; Stop sends SIGTERM to the group, kills it after the grace
// period, and nothing it forked is left running. Its answers are its own:
// parity.CheckSameAs compares every topology with its standalone answer
// instead of cmd/hello's bytes.
//
// Handler work (?work=, cmd/hello's calibrated CPU time per request) is
// cmd/hello's alone: SupportsWork says which targets take it. The seed
// targets answer a request that asks for work with a 400, so a sweep that
// asks for it cannot measure them as if they had done it.
package target

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/topobench/topobench/internal/proc"
	"github.com/topobench/topobench/targets"
)

// Go is the name of cmd/hello as a target; internal/hellorun runs it.
const Go = "go"

// Runtime is what runs a target's compiled program.
type Runtime string

const (
	Erlang Runtime = "erlang"
	Java   Runtime = "java"
	// Cmd is a command target: the user's own server (ParseCommand).
	Cmd Runtime = "cmd"
)

// JVMHeap is the fixed heap every Java target runs with (-Xms and -Xmx),
// so that heap sizing is the same for all and stated in the report.
const JVMHeap = "256m"

// DefaultPoolThreads is java-pool's thread count unless Config says
// otherwise: the 2007 server's 5.
const DefaultPoolThreads = 5

// JarDir is where Debian installs Java libraries.
const JarDir = "/usr/share/java"

// Tool is a command (looked up in PATH) or a file (an absolute path, such
// as a jar) that a target needs, and the Debian package that provides it.
type Tool struct {
	Path    string
	Package string
}

// ErrMissingTool matches (with errors.Is) the error of a target whose
// toolchain is not installed.
var ErrMissingTool = errors.New("toolchain missing")

// MissingToolError names a tool a target needs and the package to install.
type MissingToolError struct {
	Target string
	Tool   Tool
}

func (e *MissingToolError) Error() string {
	return fmt.Sprintf("target %s needs %s: install the Debian package %s (apt-get install %s)",
		e.Target, e.Tool.Path, e.Tool.Package, e.Tool.Package)
}

func (e *MissingToolError) Is(err error) bool { return err == ErrMissingTool }

// Target is one server program.
type Target struct {
	// Name is the -targets name and the prefix of its ready line.
	Name string
	// Model says how it serves connections, for the report.
	Model string
	// Runtime runs it.
	Runtime Runtime
	// Sources are its folders in targets/, compiled together.
	Sources []string
	// Main is the Erlang module or Java class to run.
	Main string
	// BuildTools are the commands and jars needed to compile it, RunTools
	// those needed to run it (the jars are on the class path of both).
	BuildTools, RunTools []Tool
	// Deviation says where its bytes differ from cmd/hello's, if anywhere.
	Deviation string
	// Argv is a command target's command line, program first, with its
	// placeholders (ParseCommand); Build makes the program's path
	// absolute.
	Argv []string
	// Work says whether it spends the CPU time a request's ?work=DURATION
	// asks for (see SupportsWork).
	Work bool
	// listen is where a running target listens (ParseRunning).
	listen endpoint
}

// SupportsWork reports whether the target named name answers ?work=D by
// spending D of calibrated CPU time before its answer, as cmd/hello does:
// true for "go" (and ""), false for every other target. A sweep with
// handler work measures only those; the report names the others. (The
// seed targets would need their own calibration against their thread's
// CPU clock, as internal/hello does; a command target is the user's code.)
func SupportsWork(name string) bool {
	if name == "" || name == Go {
		return true
	}
	t, err := Lookup(name)
	return err == nil && t.Work
}

func javaTools(jars ...Tool) (build, run []Tool) {
	build = append([]Tool{{"javac", "openjdk-17-jdk-headless"}}, jars...)
	run = append([]Tool{{"java", "openjdk-17-jre-headless"}}, jars...)
	return build, run
}

func jars(pkg string, names ...string) []Tool {
	ts := make([]Tool, len(names))
	for i, n := range names {
		ts[i] = Tool{filepath.Join(JarDir, n+".jar"), pkg}
	}
	return ts
}

// All returns the targets other than Go, in report order.
func All() []Target {
	erl := []Tool{{"erlc", "erlang-base"}}
	erlRun := []Tool{{"erl", "erlang-base"}}
	threadsB, threadsR := javaTools()
	nettyB, nettyR := javaTools(jars("libnetty-java", "netty-buffer", "netty-codec", "netty-codec-http",
		"netty-common", "netty-handler", "netty-resolver", "netty-transport")...)
	jettyB, jettyR := javaTools(append(jars("libjetty9-java", "jetty9-server", "jetty9-http", "jetty9-io", "jetty9-util"),
		jars("libservlet-api-java", "servlet-api")...)...)
	return []Target{
		{Name: "erlang", Model: "gen_tcp, one Erlang process per connection", Runtime: Erlang,
			Sources: []string{"erlang"}, Main: "hello", BuildTools: erl, RunTools: erlRun},
		{Name: "java-threads", Model: "ServerSocket, one thread per connection", Runtime: Java,
			Sources: []string{"java-common", "java-threads"}, Main: "ThreadsServer", BuildTools: threadsB, RunTools: threadsR},
		{Name: "java-pool", Model: "ServerSocket, a fixed thread pool owning each connection until it closes", Runtime: Java,
			Sources: []string{"java-common", "java-pool"}, Main: "PoolServer", BuildTools: threadsB, RunTools: threadsR},
		{Name: "java-netty", Model: "Netty 4 HTTP codec on NIO event loops", Runtime: Java,
			Sources: []string{"java-common", "java-netty"}, Main: "NettyServer", BuildTools: nettyB, RunTools: nettyR},
		{Name: "java-jetty", Model: "embedded Jetty 9, thread-blocking handler", Runtime: Java,
			Sources: []string{"java-common", "java-jetty"}, Main: "JettyServer", BuildTools: jettyB, RunTools: jettyR,
			Deviation: "Jetty writes Content-Length after the other headers (same lines, same 141 bytes)"},
	}
}

// Names returns the names of All.
func Names() []string {
	var names []string
	for _, t := range All() {
		names = append(names, t.Name)
	}
	return names
}

// Lookup finds a target other than Go by name; a name starting with
// CommandPrefix is parsed as a command target (ParseCommand).
func Lookup(name string) (Target, error) {
	if IsCommand(name) {
		return ParseCommand(name)
	}
	if IsRunning(name) {
		return ParseRunning(name)
	}
	for _, t := range All() {
		if t.Name == name {
			return t, nil
		}
	}
	if name == Go {
		return Target{}, fmt.Errorf("target %q is cmd/hello: run it with internal/hellorun", Go)
	}
	return Target{}, fmt.Errorf("unknown target %q (known: %s, %s, %s'PATH ARGS' for your own server, or %sIP:PORT for one already running)", name, Go, strings.Join(Names(), ", "), CommandPrefix, RunningPrefix)
}

// check returns a *MissingToolError for the first tool of tools that is
// not installed.
func (t Target) check(tools []Tool) error {
	for _, tool := range tools {
		var err error
		if filepath.IsAbs(tool.Path) {
			_, err = os.Stat(tool.Path)
		} else {
			_, err = exec.LookPath(tool.Path)
		}
		if err != nil {
			return &MissingToolError{Target: t.Name, Tool: tool}
		}
	}
	return nil
}

// Check reports whether everything needed to build and run t is
// installed; the error names the Debian package of the first thing missing.
func (t Target) Check() error {
	if t.Runtime == Running {
		return nil // nothing of it runs here
	}
	if t.Runtime == Cmd {
		_, err := t.checkCommand()
		return err
	}
	if err := t.check(t.BuildTools); err != nil {
		return err
	}
	return t.check(t.RunTools)
}

// Packages returns the Debian packages t needs, sorted.
func (t Target) Packages() []string {
	seen := map[string]bool{}
	var pkgs []string
	for _, tool := range append(append([]Tool(nil), t.BuildTools...), t.RunTools...) {
		if !seen[tool.Package] {
			seen[tool.Package] = true
			pkgs = append(pkgs, tool.Package)
		}
	}
	sort.Strings(pkgs)
	return pkgs
}

func (t Target) classPath(classes string) string {
	parts := []string{classes}
	for _, tool := range t.RunTools {
		if strings.HasSuffix(tool.Path, ".jar") {
			parts = append(parts, tool.Path)
		}
	}
	return strings.Join(parts, string(os.PathListSeparator))
}

// Program is a built target.
type Program struct {
	Target Target
	// Dir holds the sources as compiled and the compiled program; for a
	// command target it is the working directory it runs in.
	Dir string
}

// Build copies t's sources into dir and compiles them there. The error of
// a missing compiler or library matches ErrMissingTool and names the
// Debian package to install; a compile error carries the compiler's output.
//
// A command target has nothing to compile: Build finds its program (a
// path, or a name in PATH) and dir is not used.
func (t Target) Build(ctx context.Context, dir string) (*Program, error) {
	if t.Runtime == Running {
		return &Program{Target: t}, nil
	}
	if t.Runtime == Cmd {
		return t.buildCommand()
	}
	if err := t.check(t.BuildTools); err != nil {
		return nil, fmt.Errorf("building %s: %w", t.Name, err)
	}
	dir, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("building %s: %w", t.Name, err)
	}
	src := filepath.Join(dir, "src")
	files, err := copySources(t.Sources, src)
	if err != nil {
		return nil, fmt.Errorf("building %s: %w", t.Name, err)
	}
	out := filepath.Join(dir, "out")
	if err := os.MkdirAll(out, 0o755); err != nil {
		return nil, fmt.Errorf("building %s: %w", t.Name, err)
	}
	var cmd *exec.Cmd
	switch t.Runtime {
	case Erlang:
		cmd = exec.CommandContext(ctx, "erlc", append([]string{"-o", out}, files...)...)
	case Java:
		cmd = exec.CommandContext(ctx, "javac", append([]string{"-d", out, "-cp", t.classPath(out)}, files...)...)
	default:
		return nil, fmt.Errorf("building %s: unknown runtime %q", t.Name, t.Runtime)
	}
	if msg, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("building %s: %s: %w\n%s", t.Name, cmd.Args[0], err, proc.Indent(strings.TrimSpace(string(msg)), "    "))
	}
	return &Program{Target: t, Dir: dir}, nil
}

// copySources writes the files of the given targets/ folders under dst and
// returns the paths of those to compile.
func copySources(folders []string, dst string) ([]string, error) {
	var files []string
	for _, folder := range folders {
		err := fs.WalkDir(targets.Sources, folder, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			b, err := fs.ReadFile(targets.Sources, p)
			if err != nil {
				return err
			}
			to := filepath.Join(dst, filepath.FromSlash(p))
			if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
				return err
			}
			if err := os.WriteFile(to, b, 0o644); err != nil {
				return err
			}
			if ext := path.Ext(p); ext == ".erl" || ext == ".java" {
				files = append(files, to)
			}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("copying sources of %s: %w", folder, err)
		}
	}
	return files, nil
}

// JVMOptions are the options every Java target runs with for procs
// processors (0: the JVM's own count).
func JVMOptions(procs int) []string {
	opts := []string{"-Xms" + JVMHeap, "-Xmx" + JVMHeap}
	if procs > 0 {
		opts = append(opts, "-XX:ActiveProcessorCount="+strconv.Itoa(procs))
	}
	return opts
}

// Command returns the command line that runs p with cfg: the program and
// its arguments, for running and for the report.
func (p *Program) Command(cfg Config) []string {
	out := filepath.Join(p.Dir, "out")
	switch p.Target.Runtime {
	case Running:
		return nil // the user's, started elsewhere
	case Cmd:
		return p.commandLine(cfg)
	case Erlang:
		args := []string{"erl", "-noshell", "-noinput"}
		if cfg.Procs > 0 {
			args = append(args, "+S", strconv.Itoa(cfg.Procs))
		}
		return append(args, "-pa", out, "-run", p.Target.Main, "main", cfg.Addr)
	default:
		args := append([]string{"java"}, JVMOptions(cfg.Procs)...)
		args = append(args, "-cp", p.Target.classPath(out), p.Target.Main)
		if p.Target.Name == "java-pool" {
			n := cfg.PoolThreads
			if n <= 0 {
				n = DefaultPoolThreads
			}
			args = append(args, "-threads", strconv.Itoa(n))
		}
		return append(args, cfg.Addr)
	}
}
