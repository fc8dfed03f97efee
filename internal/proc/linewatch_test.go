package proc

import (
	"io"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestLineWatch(t *testing.T) {
	tests := []struct {
		name   string
		writes []string
		found  bool
		line   string
	}{
		{"whole line", []string{"x: ready on 1\n"}, true, "x: ready on 1"},
		{"split across writes", []string{"starting\nx: re", "ady on 1", "\n"}, true, "x: ready on 1"},
		{"first of two", []string{"x: ready 1\nx: ready 2\n"}, true, "x: ready 1"},
		{"prefix not at line start", []string{"not x: ready\n"}, false, ""},
		{"no newline yet", []string{"x: ready"}, false, ""},
		{"other lines only", []string{"a\nb\n"}, false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := NewLineWatch("x: ready")
			for _, s := range tt.writes {
				n, err := io.WriteString(w, s)
				assert.NoError(t, err)
				assert.Equal(t, len(s), n)
			}
			select {
			case <-w.Found():
				assert.True(t, tt.found, "found a line that is not the one")
			default:
				assert.False(t, tt.found, "missed the line")
			}
			assert.Equal(t, tt.line, w.Line())
		})
	}
}
