package target_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/topobench/topobench/internal/target"
)

func TestLookup(t *testing.T) {
	for _, name := range target.Names() {
		tg, err := target.Lookup(name)
		require.NoError(t, err)
		assert.Equal(t, name, tg.Name)
	}
	assert.Equal(t, []string{"erlang", "java-threads", "java-pool", "java-netty", "java-jetty"}, target.Names())

	_, err := target.Lookup("go")
	assert.ErrorContains(t, err, "internal/hellorun")
	_, err = target.Lookup("rust")
	assert.EqualError(t, err, `unknown target "rust" (known: go, erlang, java-threads, java-pool, java-netty, java-jetty, cmd:'PATH ARGS' for your own server, or listen:IP:PORT for one already running)`)
}

func TestCommand(t *testing.T) {
	dir := "/b"
	tests := []struct {
		name string
		cfg  target.Config
		want []string
	}{
		{"erlang", target.Config{Addr: "127.0.0.1:1", Procs: 2},
			[]string{"erl", "-noshell", "-noinput", "+S", "2", "-pa", "/b/out", "-run", "hello", "main", "127.0.0.1:1"}},
		{"erlang", target.Config{Addr: "127.0.0.1:1"},
			[]string{"erl", "-noshell", "-noinput", "-pa", "/b/out", "-run", "hello", "main", "127.0.0.1:1"}},
		{"java-threads", target.Config{Addr: "127.0.0.1:1", Procs: 1},
			[]string{"java", "-Xms256m", "-Xmx256m", "-XX:ActiveProcessorCount=1", "-cp", "/b/out", "ThreadsServer", "127.0.0.1:1"}},
		{"java-pool", target.Config{Addr: "127.0.0.1:1", Procs: 2},
			[]string{"java", "-Xms256m", "-Xmx256m", "-XX:ActiveProcessorCount=2", "-cp", "/b/out", "PoolServer", "-threads", "5", "127.0.0.1:1"}},
		{"java-pool", target.Config{Addr: "127.0.0.1:1", PoolThreads: 50},
			[]string{"java", "-Xms256m", "-Xmx256m", "-cp", "/b/out", "PoolServer", "-threads", "50", "127.0.0.1:1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tg, err := target.Lookup(tt.name)
			require.NoError(t, err)
			p := &target.Program{Target: tg, Dir: dir}
			assert.Equal(t, tt.want, p.Command(tt.cfg))
		})
	}

	// Library targets put their Debian jars on the class path.
	tg, err := target.Lookup("java-netty")
	require.NoError(t, err)
	cmd := (&target.Program{Target: tg, Dir: dir}).Command(target.Config{Addr: "127.0.0.1:1"})
	assert.Contains(t, cmd[4], "/b/out:/usr/share/java/netty-buffer.jar:")
	assert.Contains(t, cmd[4], "/usr/share/java/netty-codec-http.jar")
}

func TestPackages(t *testing.T) {
	want := map[string][]string{
		"erlang":       {"erlang-base"},
		"java-threads": {"openjdk-17-jdk-headless", "openjdk-17-jre-headless"},
		"java-pool":    {"openjdk-17-jdk-headless", "openjdk-17-jre-headless"},
		"java-netty":   {"libnetty-java", "openjdk-17-jdk-headless", "openjdk-17-jre-headless"},
		"java-jetty":   {"libjetty9-java", "libservlet-api-java", "openjdk-17-jdk-headless", "openjdk-17-jre-headless"},
	}
	for _, tg := range target.All() {
		assert.Equal(t, want[tg.Name], tg.Packages(), tg.Name)
	}
}

// TestMissingToolchain points PATH at an empty directory (and jars at a
// missing one): every target must refuse to build or start with one line
// naming the Debian package to install.
func TestMissingToolchain(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	wantPkg := map[string]string{
		"erlang": "erlang-base", "java-threads": "openjdk-17-jdk-headless", "java-pool": "openjdk-17-jdk-headless",
		"java-netty": "openjdk-17-jdk-headless", "java-jetty": "openjdk-17-jdk-headless",
	}
	for _, tg := range target.All() {
		t.Run(tg.Name, func(t *testing.T) {
			_, err := tg.Build(context.Background(), t.TempDir())
			require.Error(t, err)
			assert.True(t, errors.Is(err, target.ErrMissingTool), "%v", err)
			var me *target.MissingToolError
			require.True(t, errors.As(err, &me))
			assert.Equal(t, wantPkg[tg.Name], me.Tool.Package)
			assert.NotContains(t, err.Error(), "\n")
			assert.Contains(t, err.Error(), "building "+tg.Name+": target "+tg.Name+" needs ")
			assert.Contains(t, err.Error(), "install the Debian package "+wantPkg[tg.Name])
			assert.ErrorIs(t, tg.Check(), target.ErrMissingTool)

			// A program built elsewhere does not start without its runtime.
			_, err = (&target.Program{Target: tg, Dir: t.TempDir()}).Start(context.Background(), target.Config{Addr: "127.0.0.1:1"})
			assert.ErrorIs(t, err, target.ErrMissingTool)
			assert.NotContains(t, err.Error(), "\n")
		})
	}
}

func TestMissingJar(t *testing.T) {
	if _, err := os.Stat("/usr/bin/javac"); err != nil {
		t.Skip("needs javac to get past the compiler check")
	}
	for _, name := range []string{"java-netty", "java-jetty"} {
		t.Run(name, func(t *testing.T) {
			tg, err := target.Lookup(name)
			require.NoError(t, err)
			gone := filepath.Join(t.TempDir(), "none")
			var pkg string
			for i, tool := range tg.BuildTools {
				if strings.HasSuffix(tool.Path, ".jar") {
					tg.BuildTools[i].Path = filepath.Join(gone, filepath.Base(tool.Path))
					pkg = tool.Package
					break
				}
			}
			_, err = tg.Build(context.Background(), t.TempDir())
			require.ErrorIs(t, err, target.ErrMissingTool)
			assert.Contains(t, err.Error(), "install the Debian package "+pkg)
			assert.Contains(t, err.Error(), gone)
		})
	}
}

func TestStartRejectsAddress(t *testing.T) {
	tg, err := target.Lookup("erlang")
	require.NoError(t, err)
	p := &target.Program{Target: tg, Dir: t.TempDir()}
	for _, addr := range []string{"", "127.0.0.1", "localhost:8080", "127.0.0.1:0", "127.0.0.1:99999", "127.0.0.1:http"} {
		t.Run(addr, func(t *testing.T) {
			_, err := p.Start(context.Background(), target.Config{Addr: addr})
			require.Error(t, err)
			assert.Contains(t, err.Error(), "starting erlang: address")
			assert.NotContains(t, err.Error(), "\n")
		})
	}
}
