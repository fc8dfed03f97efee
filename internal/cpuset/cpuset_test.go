package cpuset

import (
	"flag"
	"io"
	"os"
	"os/exec"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParse(t *testing.T) {
	tests := []struct {
		in   string
		cpus []int
		str  string
	}{
		{"0", []int{0}, "0"},
		{"1", []int{1}, "1"},
		{"0-3", []int{0, 1, 2, 3}, "0-3"},
		{"0-1,3", []int{0, 1, 3}, "0-1,3"},
		{"3,0-1", []int{0, 1, 3}, "0-1,3"},
		{"0,1,2,5", []int{0, 1, 2, 5}, "0-2,5"},
		{"2-4,0-3", []int{0, 1, 2, 3, 4}, "0-4"},
		{"1,1,1", []int{1}, "1"},
		{"0-6:2", []int{0, 2, 4, 6}, "0,2,4,6"},
		{"0-7:2,1", []int{0, 1, 2, 4, 6}, "0-2,4,6"},
		{"4-4", []int{4}, "4"},
		{"007", []int{7}, "7"},
		{" 0-1\n", []int{0, 1}, "0-1"},
		{"65535", []int{65535}, "65535"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			s, err := Parse(tt.in)
			require.NoError(t, err)
			assert.Equal(t, tt.cpus, s.CPUs())
			assert.Equal(t, tt.str, s.String())
			assert.Equal(t, len(tt.cpus), s.Len())
			again, err := Parse(s.String())
			require.NoError(t, err)
			assert.Equal(t, s, again, "String round-trips")
			assert.Equal(t, s, Of(tt.cpus...))
		})
	}
}

func TestParseRejects(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", `CPU list "": is empty`},
		{"  ", "is empty"},
		{"abc", `CPU list "abc": "abc" is not a CPU number or range; want CPU numbers such as 0 or 0-1,3`},
		{"0,abc", `"abc" is not a CPU number`},
		{"-1", `"-1" is not a CPU number`},
		{"+1", `"+1" is not a CPU number`},
		{"1-", `"1-" is not a CPU number`},
		{"-", `"-" is not a CPU number`},
		{"1-2-3", `"1-2-3" is not a CPU number`},
		{"0x1", `"0x1" is not a CPU number`},
		{"1.5", `"1.5" is not a CPU number`},
		{"0, 1", `" 1" is not a CPU number`},
		{"0;1", `"0;1" is not a CPU number`},
		{"3-1", `"3-1" is a range that runs backwards`},
		{"0,,1", "has an empty element"},
		{"0,", "has an empty element"},
		{",0", "has an empty element"},
		{"4:2", `"4:2" has a stride but no range`},
		{"0-4:0", `"0-4:0" has a stride that is not a positive integer`},
		{"0-4:x", "stride that is not a positive integer"},
		{"0-4:", "stride that is not a positive integer"},
		{"0-4:+1", "stride that is not a positive integer"},
		{"65536", `"65536" names a CPU beyond 65535`},
		{"0-99999999999999999999", "names a CPU beyond 65535"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			_, err := Parse(tt.in)
			var pe *ParseError
			require.ErrorAs(t, err, &pe)
			assert.Equal(t, tt.in, pe.List)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}

func TestZeroAndFlag(t *testing.T) {
	var s CPUSet
	assert.True(t, s.IsEmpty())
	assert.Equal(t, "", s.String())
	assert.Empty(t, s.CPUs())
	assert.False(t, s.Contains(0))

	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Var(&s, "pin-load", "CPUs for wrk")
	require.NoError(t, fs.Parse([]string{"-pin-load", "1,0"}))
	assert.Equal(t, "0-1", s.String())
	require.NoError(t, fs.Parse([]string{"-pin-load", ""}))
	assert.True(t, s.IsEmpty(), `"" means unpinned`)

	err := fs.Parse([]string{"-pin-load", "abc"})
	require.Error(t, err)
	assert.Contains(t, err.Error(), `invalid value "abc" for flag -pin-load: CPU list "abc": "abc" is not a CPU number`)
}

func TestWithin(t *testing.T) {
	allowed := Of(0, 1)
	require.NoError(t, Of(1).Within(allowed))
	require.NoError(t, Of(0, 1).Within(allowed))
	require.NoError(t, CPUSet{}.Within(allowed))
	err := Of(0, 1, 5).Within(allowed)
	require.Error(t, err)
	assert.Equal(t, `CPU list "0-1,5": CPU 5 is not one this process may run on (0-1)`, err.Error())
}

func TestAllowedFromStatus(t *testing.T) {
	// Lines as the kernel prints them in /proc/PID/status.
	s, err := allowedFromStatus([]byte("Name:\twrk\nCpus_allowed:\tf3\nCpus_allowed_list:\t0-1,4-7\nMems_allowed_list:\t0\n"))
	require.NoError(t, err)
	assert.Equal(t, "0-1,4-7", s.String())

	_, err = allowedFromStatus([]byte("Name:\twrk\n"))
	assert.ErrorContains(t, err, "no Cpus_allowed_list")
	_, err = allowedFromStatus([]byte("Cpus_allowed_list:\tzz\n"))
	assert.ErrorContains(t, err, `reading Cpus_allowed_list: CPU list "\tzz"`)
}

// TestAllowedAgreesWithTaskset reads this process's CPUs from the kernel
// and checks them against taskset, which the harness pins with.
func TestAllowedAgreesWithTaskset(t *testing.T) {
	if _, err := os.Stat("/proc/self/status"); err != nil {
		t.Skip("no /proc")
	}
	s, err := Allowed()
	require.NoError(t, err)
	require.False(t, s.IsEmpty())
	if testing.Short() {
		return
	}
	bin, err := exec.LookPath("taskset")
	if err != nil {
		t.Skip("taskset not installed")
	}
	// Every allowed CPU is accepted; the first one past them is refused.
	out, err := exec.Command(bin, "-c", s.String(), "true").CombinedOutput()
	require.NoError(t, err, "%s", out)
	beyond := s.CPUs()[s.Len()-1] + 1
	out, err = exec.Command(bin, "-c", Of(beyond).String(), "true").CombinedOutput()
	if err == nil {
		t.Skipf("taskset accepted CPU %d outside this process's affinity %s (it can widen affinity here)", beyond, s)
	}
	assert.Error(t, Of(beyond).Within(s), "taskset refused CPU %d: %s", beyond, out)
}
