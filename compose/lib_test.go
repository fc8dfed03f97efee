package compose

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// libSh runs script after sourcing lib.sh, with PATH set to path (plus
// the directories of bash and the core utilities when path is not empty).
func libSh(t *testing.T, path, script string) (string, error) {
	t.Helper()
	lib, err := filepath.Abs("lib.sh")
	require.NoError(t, err)
	cmd := exec.Command("bash", "-c", `. "$0"; `+script, lib)
	cmd.Env = os.Environ()
	if path != "" {
		cmd.Env = append(cmd.Env, "PATH="+path+":/usr/bin:/bin")
	}
	out, err := cmd.CombinedOutput()
	return strings.TrimSpace(string(out)), err
}

// fakeBin writes an executable shell script named name into dir.
func fakeBin(t *testing.T, dir, name, body string) {
	t.Helper()
	require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte("#!/bin/sh\n"+body+"\n"), 0o755))
}

// TestFindCompose: v2 when `docker compose` works, v1 (docker-compose)
// when only it does, as on Debian bookworm, and a failure with neither.
func TestFindCompose(t *testing.T) {
	for _, tt := range []struct {
		name         string
		docker, dcV1 string // fake scripts' bodies; "" leaves that one out
		want         string
		fails        bool
	}{
		{"v2", `[ "$1" = compose ] && exit 0; exit 1`, "", "docker compose", false},
		{"v2 over v1", `[ "$1" = compose ] && exit 0; exit 1`, "exit 0", "docker compose", false},
		{"only v1", `echo "docker: 'compose' is not a docker command." >&2; exit 1`, "exit 0", "docker-compose", false},
		{"a broken v1", `exit 1`, "exit 1", "", true},
		{"neither", `exit 1`, "", "", true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			// Only the fakes: no real docker may answer from /usr/bin.
			isolated := t.TempDir()
			for _, tool := range []string{"bash", "sh", "cat"} {
				p, err := exec.LookPath(tool)
				require.NoError(t, err)
				require.NoError(t, os.Symlink(p, filepath.Join(isolated, tool)))
			}
			fakeBin(t, dir, "docker", tt.docker)
			if tt.dcV1 != "" {
				fakeBin(t, dir, "docker-compose", tt.dcV1)
			}
			lib, err := filepath.Abs("lib.sh")
			require.NoError(t, err)
			cmd := exec.Command(filepath.Join(isolated, "bash"), "-c", `. "$0"; find_compose; s=$?; echo "${compose[*]}"; exit $s`, lib)
			cmd.Env = []string{"PATH=" + dir + ":" + isolated}
			out, err := cmd.CombinedOutput()
			if tt.fails {
				assert.Error(t, err, "%s", out)
				return
			}
			require.NoError(t, err, "%s", out)
			assert.Equal(t, tt.want, strings.TrimSpace(string(out)))
		})
	}
}

// TestComposeWrapperTakesTheFile: compose/dc runs the CLI found on
// compose/docker-compose.yml from any directory, passing the arguments on.
func TestComposeWrapperTakesTheFile(t *testing.T) {
	dir := t.TempDir()
	fakeBin(t, dir, "docker", `exit 1`)
	fakeBin(t, dir, "docker-compose", `[ "$1" = version ] && exit 0; echo "$@"`)
	dc, err := filepath.Abs("dc")
	require.NoError(t, err)
	cmd := exec.Command(dc, "up", "--build", "--exit-code-from", "harness")
	cmd.Dir = t.TempDir()
	cmd.Env = append(os.Environ(), "PATH="+dir+":/usr/bin:/bin")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	file, err := filepath.Abs(composeFile)
	require.NoError(t, err)
	assert.Equal(t, "-f "+file+" up --build --exit-code-from harness", strings.TrimSpace(string(out)))

	fakeBin(t, dir, "docker-compose", `exit 1`)
	none := exec.Command(dc, "version")
	none.Env = cmd.Env
	out, err = none.CombinedOutput()
	require.Error(t, err)
	assert.Equal(t, "compose/dc: no compose CLI: neither 'docker compose' nor docker-compose works (make compose installs one)", strings.TrimSpace(string(out)))
}

// TestDaemonOpenFiles: the daemons get fs.nr_open (at most 1048576), and
// with_nofile sets a child's limits to it, or says why not and goes on.
func TestDaemonOpenFiles(t *testing.T) {
	out, err := libSh(t, "", "daemon_nofile")
	require.NoError(t, err)
	want := 1048576
	if b, err := os.ReadFile("/proc/sys/fs/nr_open"); err == nil {
		if n, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
			want = min(n, want)
		}
	}
	assert.Equal(t, strconv.Itoa(want), out)

	out, err = libSh(t, "", `with_nofile 1024 sh -c 'echo $(ulimit -Sn) $(ulimit -Hn)'`)
	require.NoError(t, err)
	assert.Equal(t, "1024 1024", out, "lowering is always allowed")

	// Raising past the hard limit needs CAP_SYS_RESOURCE: either it
	// happens or the child runs with what it had, and the reason is said.
	out, err = libSh(t, "", `with_nofile 1048576 sh -c 'echo $(ulimit -Hn)'`)
	require.NoError(t, err)
	if !strings.HasSuffix(out, "1048576") {
		assert.Contains(t, out, "compose: could not raise the open-files limit to 1048576 for sh; it keeps")
	}
}
