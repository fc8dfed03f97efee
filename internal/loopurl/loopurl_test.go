package loopurl

import (
	"net/netip"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCheck: loopback and the allowed address pass, anything else is
// refused naming the tool and the URL.
func TestCheck(t *testing.T) {
	allow := netip.MustParseAddr("169.254.77.1")
	tests := []struct {
		name, url string
		allow     netip.Addr
		err       string
	}{
		{"ipv4 loopback", "http://127.0.0.1:8080/", netip.Addr{}, ""},
		{"another loopback", "https://127.9.9.9/", netip.Addr{}, ""},
		{"ipv6 loopback", "http://[::1]:8080/", netip.Addr{}, ""},
		{"localhost", "http://localhost/", netip.Addr{}, ""},
		{"the run's address", "http://169.254.77.1:8081/", allow, ""},
		{"elsewhere", "http://10.0.0.1/", netip.Addr{}, `wrk URL "http://10.0.0.1/": load goes to loopback only`},
		{"elsewhere, with an address allowed", "http://10.0.0.1/", allow, "or 169.254.77.1 only"},
		{"no scheme", "127.0.0.1:8080", netip.Addr{}, "want http:// or https://"},
		{"another scheme", "ftp://127.0.0.1/", netip.Addr{}, "want http:// or https://"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u, err := Check("wrk", tt.url, tt.allow)
			if tt.err == "" {
				require.NoError(t, err)
				assert.Equal(t, tt.url, u.String())
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.err)
		})
	}
}
