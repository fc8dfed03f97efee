package wrk

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestParseVersion reads the version from wrk -v's output: the capture
// of the installed wrk (testdata/version-v.out), and lines that hold none.
func TestParseVersion(t *testing.T) {
	captured, err := os.ReadFile("testdata/version-v.out")
	require.NoError(t, err)
	tests := []struct {
		name, in, want string
		wantErr        bool
	}{
		{name: "captured wrk 4.1.0, Debian's build", in: string(captured), want: "debian/4.1.0-3+b2"},
		{name: "upstream wrk", in: "wrk 4.1.0 [epoll] Copyright (C) 2012 Will Glozer\nUsage: wrk <options> <url>\n", want: "4.1.0"},
		{name: "one line without a newline", in: "wrk 4.2.0 [kqueue] Copyright (C) 2012 Will Glozer", want: "4.2.0"},
		{name: "usage only", in: "Usage: wrk <options> <url>\n", wantErr: true},
		{name: "nothing", in: "", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseVersion(strings.NewReader(tt.in))
			if tt.wantErr {
				assert.Error(t, err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}
