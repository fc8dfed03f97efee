package backend

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestLineWatch(t *testing.T) {
	tests := []struct {
		name   string
		writes []string
		found  bool
	}{
		{"whole line", []string{"hello: ready: 3 listeners\n"}, true},
		{"split across writes", []string{"hello: http on tcp\nhel", "lo: re", "ady: 1\n"}, true},
		{"after other lines in one write", []string{"a\nb\nhello: ready\nc\n"}, true},
		{"not at line start", []string{"x hello: ready\n"}, false},
		{"line not finished", []string{"hello: ready"}, false},
		{"near miss", []string{"hello: readiness\n"}, false},
		{"different line", []string{"hello: stopped\n"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newLineWatch(ReadyLine)
			for _, s := range tt.writes {
				n, err := w.Write([]byte(s))
				require.NoError(t, err)
				require.Equal(t, len(s), n)
			}
			select {
			case <-w.found:
				assert.True(t, tt.found, "found")
			default:
				assert.False(t, tt.found, "not found")
			}
		})
	}
}
