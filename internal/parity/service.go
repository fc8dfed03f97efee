package parity

import (
	"errors"
	"fmt"
	"slices"
)

// ProxyHeaders are the response headers nginx writes itself in front of a
// server: its own Server, Date and Connection (proxy_pass and fastcgi_pass
// hide the upstream's Server and Date, or add theirs where the upstream
// sent none), and Keep-Alive. CheckSameAs leaves them out of the
// comparison of a topology through nginx.
var ProxyHeaders = []string{"Connection", "Date", "Keep-Alive", "Server"}

// CheckSameAs checks the answers of a server that is not cmd/hello — the
// user's own service run as a command target — where its answer is its
// own: every result in rs must have ref's GET and HEAD status, ref's GET
// body, no HEAD body, and ref's header names for GET and HEAD, less
// ProxyHeaders where the topology goes through nginx (ref is the service
// standalone). Header values (a Date, a request id) may differ, and
// nothing is asked of the header block's size or of the status itself:
// a 404 everywhere is parity too. The error names each topology that
// differs and how.
func CheckSameAs(ref Result, rs []Result) error {
	if ref.Err != nil {
		return fmt.Errorf("parity: the reference failed: %w", ref.Err)
	}
	if len(rs) == 0 {
		return errors.New("parity: no topologies checked")
	}
	var errs []error
	for _, r := range rs {
		name := r.Topology.Name
		if r.Err != nil {
			errs = append(errs, r.Err)
			continue
		}
		for _, m := range []struct {
			method    string
			got, want Response
		}{{"GET", r.GET, ref.GET}, {"HEAD", r.HEAD, ref.HEAD}} {
			if m.got.Status != m.want.Status {
				errs = append(errs, fmt.Errorf("%s: %s status %q, %s says %q", name, m.method, m.got.StatusLine, ref.Topology.Name, m.want.StatusLine))
			}
			got, want := m.got.HeaderNames, m.want.HeaderNames
			if r.Topology.ViaNginx() || ref.Topology.ViaNginx() {
				got, want = withoutProxyHeaders(got), withoutProxyHeaders(want)
			}
			if !slices.Equal(got, want) {
				errs = append(errs, fmt.Errorf("%s: %s header names differ from %s's: %s", name, m.method, ref.Topology.Name, nameDiff(got, want)))
			}
		}
		if r.GET.BodySHA256 != ref.GET.BodySHA256 {
			errs = append(errs, fmt.Errorf("%s: body %q differs from %s's %q", name, clip(r.GET.Body), ref.Topology.Name, clip(ref.GET.Body)))
		}
		if len(r.HEAD.Body) != 0 {
			errs = append(errs, fmt.Errorf("%s: HEAD returned a %d-byte body", name, len(r.HEAD.Body)))
		}
	}
	return errors.Join(errs...)
}

func withoutProxyHeaders(names []string) []string {
	return slices.DeleteFunc(slices.Clone(names), func(n string) bool { return slices.Contains(ProxyHeaders, n) })
}
