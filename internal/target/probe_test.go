package target

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestProbeAddr(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"127.0.0.1:8080", "127.0.0.1:8080"},
		{"0.0.0.0:8080", "127.0.0.1:8080"},
		{"[::]:8080", "[::1]:8080"},
		{"169.254.77.1:80", "169.254.77.1:80"},
	} {
		t.Run(tt.in, func(t *testing.T) {
			assert.Equal(t, tt.want, probeAddr(tt.in))
		})
	}
}
