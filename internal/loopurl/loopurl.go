// Package loopurl holds the one rule every load generator's URL obeys:
// load goes to loopback (127.0.0.0/8, ::1, localhost) or to the one
// server address a run created itself, never further.
package loopurl

import (
	"fmt"
	"net"
	"net/netip"
	"net/url"
)

// Check parses raw, an http:// or https:// URL, and accepts it only on
// loopback or at allow (when valid); tool names the generator in the
// error.
func Check(tool, raw string, allow netip.Addr) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
		return nil, fmt.Errorf("%s URL %q: want http:// or https://", tool, raw)
	}
	host := u.Hostname()
	if ip := net.ParseIP(host); host == "localhost" || ip != nil && ip.IsLoopback() {
		return u, nil
	}
	if a, err := netip.ParseAddr(host); err == nil && allow.IsValid() && a == allow {
		return u, nil
	}
	if allow.IsValid() {
		return nil, fmt.Errorf("%s URL %q: load goes to loopback (127.0.0.0/8, ::1 or localhost) or %s only", tool, raw, allow)
	}
	return nil, fmt.Errorf("%s URL %q: load goes to loopback only (127.0.0.0/8, ::1 or localhost)", tool, raw)
}
