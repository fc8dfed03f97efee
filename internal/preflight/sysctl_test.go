package preflight

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/topobench/topobench/tuning"
)

func TestParseSysctl(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   string
		want []Setting
		err  string
	}{
		{
			name: "comments, blanks and spacing",
			in:   "# about somaxconn\n;  more\nnet.core.somaxconn=65535\n\n  net.ipv4.ip_local_port_range =  1025\t65535  \n",
			want: []Setting{
				{Key: "net.core.somaxconn", Value: "65535", Line: 3, Comment: "about somaxconn more"},
				{Key: "net.ipv4.ip_local_port_range", Value: "1025 65535", Line: 5},
			},
		},
		{
			name: "blank line ends a comment block",
			in:   "# header\n\nvm.overcommit_memory = 1\n",
			want: []Setting{{Key: "vm.overcommit_memory", Value: "1", Line: 3}},
		},
		{
			name: "ignore-errors prefix and slashed keys",
			in:   "-net.ipv4.tcp_tw_recycle = 1\nnet/ipv4/conf/eth0.1/rp_filter = 0\n",
			want: []Setting{
				{Key: "net.ipv4.tcp_tw_recycle", Value: "1", Line: 1, IgnoreErrors: true},
				{Key: "net/ipv4/conf/eth0.1/rp_filter", Value: "0", Line: 2},
			},
		},
		{name: "no equals", in: "# x\nnet.core.somaxconn 65535\n", err: "test.conf:2: want key = value"},
		{name: "no key", in: "= 1\n", err: "test.conf:1: no key before ="},
		{name: "no value", in: "\n\nvm.swappiness =\n", err: "test.conf:3: vm.swappiness has no value"},
		{name: "blank in key", in: "net core = 1\n", err: `test.conf:1: key "net core" has blanks`},
		{name: "glob", in: "net.ipv4.conf.*.rp_filter = 1\n", err: "has blanks or a glob"},
		{name: "malformed key", in: "net..core = 1\n", err: `test.conf:1: malformed key "net..core"`},
		{name: "duplicate", in: "fs.file-max = 1\nfs/file-max = 2\n", err: "test.conf:2: fs/file-max already set on line 1"},
		{name: "empty", in: "", want: nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseSysctl(strings.NewReader(tc.in), "test.conf")
			if tc.err != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tc.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestSettingPaths(t *testing.T) {
	for _, tc := range []struct{ key, path, name string }{
		{"net.core.somaxconn", "net/core/somaxconn", "net.core.somaxconn"},
		{"net/ipv4/conf/eth0.1/rp_filter", "net/ipv4/conf/eth0.1/rp_filter", "net.ipv4.conf.eth0.1.rp_filter"},
		{"fs.file-max", "fs/file-max", "fs.file-max"},
	} {
		s := Setting{Key: tc.key}
		assert.Equal(t, tc.path, s.ProcPath())
		assert.Equal(t, tc.name, s.Name())
	}
}

// TestRepoSysctlConf checks the shipped file: it parses, every setting says
// what it does, tcp_tw_recycle is gone and tcp_tw_reuse keeps today's default.
func TestRepoSysctlConf(t *testing.T) {
	b, err := tuning.Files.ReadFile("sysctl.conf")
	require.NoError(t, err)
	settings, err := ParseSysctl(bytes.NewReader(b), "sysctl.conf")
	require.NoError(t, err)
	byName := map[string]string{}
	for _, s := range settings {
		byName[s.Name()] = s.Value
		assert.NotEmpty(t, s.Comment, "%s (line %d) has no comment", s.Key, s.Line)
		assert.False(t, s.IgnoreErrors, s.Key)
	}
	assert.NotContains(t, byName, "net.ipv4.tcp_tw_recycle")
	assert.Contains(t, string(b), "tcp_tw_recycle", "the file says why it is left out")
	assert.Equal(t, "2", byName["net.ipv4.tcp_tw_reuse"])
	// The reference run's values (PRODUCT.md).
	for k, v := range map[string]string{
		"net.core.somaxconn":           "65535",
		"net.core.netdev_max_backlog":  "4096",
		"net.core.rmem_max":            "16777216",
		"net.core.wmem_max":            "16777216",
		"net.ipv4.ip_local_port_range": "1025 65535",
		"net.ipv4.tcp_fin_timeout":     "30",
		"net.ipv4.tcp_keepalive_time":  "30",
		"net.ipv4.tcp_max_syn_backlog": "20480",
		"net.ipv4.tcp_max_tw_buckets":  "400000",
		"net.ipv4.tcp_no_metrics_save": "1",
		"net.ipv4.tcp_syn_retries":     "2",
		"net.ipv4.tcp_synack_retries":  "2",
		"vm.min_free_kbytes":           "65536",
		"vm.overcommit_memory":         "1",
	} {
		assert.Equal(t, v, byName[k], k)
	}
}

func TestRepoLimitsConf(t *testing.T) {
	b, err := tuning.Files.ReadFile("limits.conf")
	require.NoError(t, err)
	var entries int
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) == 0 || strings.HasPrefix(f[0], "#") {
			continue
		}
		require.Len(t, f, 4, "limits.conf line %q", line)
		assert.Equal(t, "nofile", f[2])
		assert.Equal(t, "200000", f[3])
		entries++
	}
	assert.Equal(t, 4, entries)
}

func TestParse2013File(t *testing.T) {
	f, err := os.Open("testdata/sysctl-2013.conf")
	require.NoError(t, err)
	defer f.Close()
	settings, err := ParseSysctl(f, "testdata/sysctl-2013.conf")
	require.NoError(t, err)
	assert.Len(t, settings, 18)
	assert.Equal(t, Setting{Key: "net.ipv4.tcp_tw_recycle", Value: "1", Line: 19}, settings[14])
}
