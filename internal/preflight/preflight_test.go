package preflight

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden")

func repoSettings(t *testing.T) []Setting {
	t.Helper()
	s, err := Wanted(Options{})
	require.NoError(t, err)
	return s
}

// captured are the readings of a 2-core VM (Debian 12, kernel 6.18): sysctls
// from testdata/procsys, copied from its /proc/sys; open files capped at
// 20000.
func captured(t *testing.T, settings []Setting) Readings {
	t.Helper()
	rd := Readings{
		NofileSoft: 20000, NofileHard: 20000, Cores: 2,
		Nginx: "1.22.1 (/usr/sbin/nginx)", Wrk: "debian/4.1.0-3+b2 (/usr/bin/wrk)",
	}
	rd.Sysctl, rd.SysctlErr = ReadSysctls(settings, "testdata/procsys")
	require.Empty(t, rd.SysctlErr)
	return rd
}

func TestReportGolden(t *testing.T) {
	settings := repoSettings(t)
	for _, n := range []int{5000, 12000} {
		rep := Evaluate(settings, captured(t, settings), n)
		var b bytes.Buffer
		require.NoError(t, rep.Write(&b))
		golden := filepath.Join("testdata", "report-c"+strconv.Itoa(n)+".golden")
		if *update {
			require.NoError(t, os.WriteFile(golden, b.Bytes(), 0o644))
			continue
		}
		want, err := os.ReadFile(golden)
		require.NoError(t, err, "go test -update creates it")
		assert.Equal(t, string(want), b.String())
	}
}

func row(t *testing.T, rep Report, name string) Row {
	t.Helper()
	for _, r := range rep.Rows {
		if r.Setting == name {
			return r
		}
	}
	t.Fatalf("no row %q", name)
	return Row{}
}

func TestVerdicts(t *testing.T) {
	settings := repoSettings(t)
	for _, tc := range []struct {
		name    string
		n       int
		edit    func(rd *Readings)
		row     string
		status  Status
		note    string // substring
		fatal   bool
		toApply []string
	}{
		{name: "this machine at -c 5000: hard 20000 suffices", n: 5000,
			row: "open files (hard)", status: Short, note: "enough for -c 5000"},
		{name: "this machine at -c 10000: an nginx worker needs 20064", n: 10000,
			row: "open files (hard)", status: Fatal, note: "use -c 9968 or less", fatal: true},
		{name: "hard limit at the reference", n: 5000, edit: func(rd *Readings) { rd.NofileSoft, rd.NofileHard = 200000, 1<<20 },
			row: "open files (hard)", status: OK},
		{name: "unlimited hard limit", n: 9000, edit: func(rd *Readings) { rd.NofileSoft, rd.NofileHard = 1<<20, ^uint64(0) },
			row: "nginx worker_rlimit_nofile", status: Info, note: "as in the reference run"},
		{name: "low soft limit can be raised", n: 5000, edit: func(rd *Readings) { rd.NofileSoft = 1024 },
			row: "open files (soft)", status: Short, note: "ulimit -n 20000"},
		{name: "low soft and hard limits", n: 5000, edit: func(rd *Readings) { rd.NofileSoft, rd.NofileHard = 1024, 4096 },
			row: "open files (soft)", status: Fatal, fatal: true},
		{name: "fs.file-max below what the run holds", n: 5000, edit: func(rd *Readings) { rd.Sysctl["fs/file-max"] = "16384" },
			row: "fs.file-max", status: Fatal, note: "~20384 descriptors", fatal: true, toApply: []string{"fs.file-max"}},
		{name: "port range narrower than the connections", n: 5000, edit: func(rd *Readings) { rd.Sysctl["net/ipv4/ip_local_port_range"] = "60000 61000" },
			row: "net.ipv4.ip_local_port_range", status: Fatal, note: "the range has 1001", fatal: true},
		{name: "port range as wide as wanted", n: 5000, edit: func(rd *Readings) { rd.Sysctl["net/ipv4/ip_local_port_range"] = "1024 65535" },
			row: "net.ipv4.ip_local_port_range", status: OK},
		{name: "somaxconn under the burst", n: 5000, edit: func(rd *Readings) { rd.Sysctl["net/core/somaxconn"] = "4096" }, fatal: true, toApply: []string{"net.core.somaxconn"},
			row: "net.core.somaxconn", status: Fatal, note: "4096 caps nginx's listen backlog of 5000 (-connections 5000): a burst of connects overflows it; raise it (sysctl -w net.core.somaxconn=65535, or topobench preflight -apply) or lower -connections"},
		{name: "somaxconn short of the reference, enough for the load", n: 1000, edit: func(rd *Readings) { rd.Sysctl["net/core/somaxconn"] = "4096" },
			row: "net.core.somaxconn", status: Short, note: "listen queues cap at 4096, enough for a burst of 1000 connects"},
		{name: "somaxconn at the reference", n: 5000, edit: func(rd *Readings) { rd.Sysctl["net/core/somaxconn"] = "65535" },
			row: "net.core.somaxconn", status: OK},
		{name: "tcp_tw_reuse 1 reuses more than wanted", n: 5000, edit: func(rd *Readings) { rd.Sysctl["net/ipv4/tcp_tw_reuse"] = "1" },
			row: "net.ipv4.tcp_tw_reuse", status: OK},
		{name: "tcp_tw_reuse off", n: 5000, edit: func(rd *Readings) { rd.Sysctl["net/ipv4/tcp_tw_reuse"] = "0" },
			row: "net.ipv4.tcp_tw_reuse", status: Short, note: "not reused"},
		{name: "shorter fin timeout is fine", n: 5000, edit: func(rd *Readings) { rd.Sysctl["net/ipv4/tcp_fin_timeout"] = "10" },
			row: "net.ipv4.tcp_fin_timeout", status: OK},
		{name: "setting the kernel lacks", n: 5000, edit: func(rd *Readings) { delete(rd.Sysctl, "vm/min_free_kbytes") },
			row: "vm.min_free_kbytes", status: Absent},
		{name: "unreadable setting", n: 5000, edit: func(rd *Readings) { rd.SysctlErr["vm/min_free_kbytes"] = errors.New("permission denied") },
			row: "vm.min_free_kbytes", status: Absent, note: "permission denied"},
		{name: "no wrk", n: 5000, edit: func(rd *Readings) { rd.Wrk, rd.WrkErr = "", errors.New("wrk not found in PATH") },
			row: "wrk", status: Fatal, note: "wrk not found in PATH", fatal: true},
		{name: "no nginx", n: 5000, edit: func(rd *Readings) { rd.Nginx = "" },
			row: "nginx", status: Fatal, fatal: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rd := captured(t, settings)
			// This machine with somaxconn raised (its 4096 is fatal at
			// -c5000, the case below).
			rd.Sysctl["net/core/somaxconn"] = "65535"
			if tc.edit != nil {
				tc.edit(&rd)
			}
			rep := Evaluate(settings, rd, tc.n)
			r := row(t, rep, tc.row)
			assert.Equal(t, tc.status, r.Status, r.Note)
			assert.Contains(t, r.Note, tc.note)
			if tc.fatal {
				err := rep.Fatal()
				require.Error(t, err)
				assert.Contains(t, err.Error(), tc.row+": ")
				assert.NotContains(t, err.Error(), "\n", "one line")
			} else {
				assert.NoError(t, rep.Fatal())
			}
			var names []string
			for _, s := range rep.ToApply() {
				names = append(names, s.Name())
			}
			for _, want := range tc.toApply {
				assert.Contains(t, names, want)
			}
		})
	}
}

func TestToApplyIsWhatFallsShort(t *testing.T) {
	settings := repoSettings(t)
	rep := Evaluate(settings, captured(t, settings), 5000)
	var names []string
	for _, s := range rep.ToApply() {
		names = append(names, s.Name())
	}
	// From the captured VM: the defaults below the reference.
	assert.Equal(t, []string{
		"net.core.somaxconn", "net.core.netdev_max_backlog", "net.core.rmem_max", "net.core.wmem_max",
		"net.ipv4.ip_local_port_range", "net.ipv4.tcp_fin_timeout", "net.ipv4.tcp_keepalive_time",
		"net.ipv4.tcp_max_syn_backlog", "net.ipv4.tcp_max_tw_buckets", "net.ipv4.tcp_no_metrics_save",
		"net.ipv4.tcp_syn_retries", "net.ipv4.tcp_synack_retries", "vm.overcommit_memory",
	}, names)
}

func TestOld2013FileOnCurrentKernel(t *testing.T) {
	f, err := os.Open("testdata/sysctl-2013.conf")
	require.NoError(t, err)
	defer f.Close()
	settings, err := ParseSysctl(f, "sysctl-2013.conf")
	require.NoError(t, err)
	rd := Readings{NofileSoft: 20000, NofileHard: 20000, Cores: 2, Nginx: "x", Wrk: "y"}
	rd.Sysctl, rd.SysctlErr = ReadSysctls(settings, "testdata/procsys")
	rep := Evaluate(settings, rd, 5000)
	r := row(t, rep, "net.ipv4.tcp_tw_recycle")
	assert.Equal(t, Absent, r.Status)
	assert.Equal(t, "no such setting", r.InEffect)
	// fs.nr_open wants 200000, the kernel has more: fine.
	assert.Equal(t, OK, row(t, rep, "fs.nr_open").Status)
}

// copyTree copies testdata/procsys so Apply can write to it.
func copyTree(t *testing.T) string {
	t.Helper()
	dst := t.TempDir()
	require.NoError(t, os.CopyFS(dst, os.DirFS("testdata/procsys")))
	return dst
}

func TestApply(t *testing.T) {
	settings := repoSettings(t)
	tree := copyTree(t)
	rd := captured(t, settings)
	rep := Evaluate(settings, rd, 5000)
	todo := append(rep.ToApply(), Setting{Key: "net.ipv4.tcp_tw_recycle", Value: "1"})
	got := Apply(todo, tree)
	require.Len(t, got, len(todo))
	for _, a := range got[:len(got)-1] {
		assert.NoError(t, a.Err, a.Setting.Key)
	}
	refused := got[len(got)-1].Err
	require.Error(t, refused, "a setting the kernel lacks is refused, not created")
	assert.ErrorIs(t, refused, os.ErrNotExist)
	assert.Contains(t, refused.Error(), "net.ipv4.tcp_tw_recycle = 1")
	assert.NoFileExists(t, filepath.Join(tree, "net/ipv4/tcp_tw_recycle"))

	// Read back: nothing falls short any more.
	rd.Sysctl, rd.SysctlErr = ReadSysctls(settings, tree)
	assert.Empty(t, Evaluate(settings, rd, 5000).ToApply())
	b, err := os.ReadFile(filepath.Join(tree, "net/ipv4/ip_local_port_range"))
	require.NoError(t, err)
	assert.Equal(t, "1025 65535\n", string(b))
}

func TestOpenFilesNeed(t *testing.T) {
	need := OpenFilesNeed(5000)
	assert.Equal(t, Need{Wrk: 5256, Nginx: 10064, Hello: 5064}, need)
	assert.Equal(t, 10064, need.Max())
	assert.LessOrEqual(t, need.Max(), 20000, "a 5000-connection run fits a hard limit of 20000")
	assert.Greater(t, OpenFilesNeed(maxConnections(20000)+1).Max(), 20000)
	assert.LessOrEqual(t, OpenFilesNeed(maxConnections(20000)).Max(), 20000)
}

// TestCheckThisMachine reads the real /proc/sys, limits and tools.
func TestCheckThisMachine(t *testing.T) {
	rep, err := Check(context.Background(), Options{Connections: 5000})
	require.NoError(t, err)
	assert.Len(t, rep.Rows, 3+len(repoSettings(t))+3)
	var rl syscall.Rlimit
	require.NoError(t, syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl))
	somaxconn, err := os.ReadFile("/proc/sys/net/core/somaxconn")
	require.NoError(t, err)
	switch n, _ := strconv.Atoi(strings.TrimSpace(string(somaxconn))); {
	case n < 5000:
		// nginx's backlog for -c5000 does not fit under it.
		require.Error(t, rep.Fatal())
		assert.Contains(t, rep.Fatal().Error(), "net.core.somaxconn: "+strconv.Itoa(n)+" caps nginx's listen backlog of 5000 (-connections 5000)")
	case rl.Max >= uint64(OpenFilesNeed(5000).Max()) && rl.Cur >= uint64(OpenFilesNeed(5000).Wrk):
		// wrk and nginx are installed wherever the tests run.
		assert.NoError(t, rep.Fatal())
	}
	assert.NotEqual(t, "missing", row(t, rep, "nginx").InEffect)
	assert.NotEqual(t, "missing", row(t, rep, "wrk").InEffect)
}

func TestWantedRejectsBadFile(t *testing.T) {
	_, err := Wanted(Options{SysctlConf: strings.NewReader("# ok\nnet.core.somaxconn\n"), SysctlName: "/etc/sysctl.d/x.conf"})
	require.Error(t, err)
	assert.Equal(t, `/etc/sysctl.d/x.conf:2: want key = value, got "net.core.somaxconn"`, err.Error())
}

// TestOnlyTheToolsNeeded: with wrk hidden from PATH, a run that does not
// use it has no wrk row and nothing fatal about it; one that does gets the
// install step.
func TestOnlyTheToolsNeeded(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	for _, tt := range []struct {
		name      string
		tools     []Tool
		wantRows  []string
		wantFatal string
	}{
		{"none", []Tool{}, nil, ""},
		{"wrk", []Tool{Wrk}, []string{"wrk"}, "wrk not found in PATH (install it: .ci/install-tools)"},
		{"nil means all", nil, []string{"nginx", "wrk"}, "wrk not found in PATH"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rd := ReadTools(context.Background(), nil, t.TempDir(), tt.tools)
			rd.NofileSoft, rd.NofileHard = 1<<20, 1<<20
			rep := Evaluate(nil, rd, 100)
			var rows []string
			for _, r := range rep.Rows {
				if r.Setting == "wrk" || r.Setting == "nginx" {
					rows = append(rows, r.Setting)
				}
			}
			assert.Equal(t, tt.wantRows, rows)
			if tt.wantFatal == "" {
				assert.NoError(t, rep.Fatal())
				return
			}
			require.Error(t, rep.Fatal())
			assert.Contains(t, rep.Fatal().Error(), tt.wantFatal)
		})
	}
}

// TestSomaxconnInNamespaces: a host somaxconn below nginx's backlog is
// fatal when nginx listens on the host, and only short when the run's own
// namespaces (which get the backlog) hold the listeners.
func TestSomaxconnInNamespaces(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "net", "core"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "net", "core", "somaxconn"), []byte("4096\n"), 0o644))
	for _, tc := range []struct {
		name       string
		namespaces bool
		want       Status
	}{
		{"host", false, Fatal},
		{"namespaces", true, Short},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rep, err := Check(context.Background(), Options{Connections: 5000, ProcSys: dir, Tools: []Tool{},
				SysctlConf: strings.NewReader("net.core.somaxconn = 65535\n"), Namespaces: tc.namespaces})
			require.NoError(t, err)
			var row *Row
			for i := range rep.Rows {
				if rep.Rows[i].Setting == "net.core.somaxconn" {
					row = &rep.Rows[i]
				}
			}
			require.NotNil(t, row)
			assert.Equal(t, tc.want, row.Status, row.Note)
			assert.Contains(t, row.Note, "5000")
		})
	}
}
