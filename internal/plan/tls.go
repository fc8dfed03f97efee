package plan

import (
	"fmt"
	"slices"
	"strings"

	"github.com/topobench/topobench/internal/results"
	"github.com/topobench/topobench/internal/tlscert"
	"github.com/topobench/topobench/internal/topology"
)

// HasTLS reports whether a topology of the plan speaks TLS to the client
// (topology.TLS); a name Lookup does not know is Check's to refuse.
func (p Plan) HasTLS() bool {
	return slices.ContainsFunc(p.Topologies, func(name string) bool {
		t, err := topology.Lookup(name)
		return err == nil && t.TLS
	})
}

// TLSSettings is the plan's TLS: its TLS field, or the defaults (P-256,
// TLS 1.3, no resumption) where it has none.
func (p Plan) TLSSettings() tlscert.Settings {
	if p.TLS == nil {
		return tlscert.Settings{}
	}
	return *p.TLS
}

// SetTLS sets the TLS field, with f's change to it, as -tls-key,
// -tls-version and -tls-resume do. The field is p's own afterwards: a
// preset's plan shares nothing with it.
func (p *Plan) SetTLS(f func(*tlscert.Settings)) {
	s := p.TLSSettings()
	f(&s)
	p.TLS = &s
}

// DefaultTLS gives a plan with a TLS topology and no TLS field the
// defaults, so that env.json names what the servers ran with.
func (p *Plan) DefaultTLS() {
	if p.TLS == nil && p.HasTLS() {
		p.SetTLS(func(*tlscert.Settings) {})
	}
}

// ParseTLSResume reads -tls-resume: on or off.
func ParseTLSResume(s string) (bool, error) {
	switch s {
	case "on":
		return true, nil
	case "off":
		return false, nil
	}
	return false, fmt.Errorf("%q, want on or off", s)
}

// checkTLS checks the TLS field against the topologies that speak TLS:
// settings with none of them would be recorded and measure nothing, and
// the loads that cannot speak TLS are refused them.
func (p Plan) checkTLS(tops []topology.Topology) error {
	var first *topology.Topology
	for i := range tops {
		if tops[i].TLS {
			first = &tops[i]
			break
		}
	}
	if first == nil {
		if p.TLS != nil {
			return Errorf(Topologies, "names no topology over TLS (%s), and -tls-key, -tls-version or -tls-resume applies to them alone", strings.Join(topology.TLSNames(), ", "))
		}
		return nil
	}
	if s := p.TLSSettings(); s.Check() != nil {
		if s.Key != tlscert.P256 && s.Key != tlscert.RSA2048 {
			return Errorf(TLSKey, "%v, want p256 or rsa2048", s.Key)
		}
		return Errorf(TLSVersion, "%v, want 1.3 or 1.2", s.Version)
	}
	if p.EngineLoops && slices.Contains(p.Generators(), results.LoadBuiltin) {
		return Errorf(Engine, "loops: the event loops speak no TLS, which %s does; give -engine goroutines", first.Name)
	}
	for _, l := range p.Generators() {
		if !tlsLoads[l] {
			return Errorf(Topologies, "%s speaks TLS, which -load %s cannot load yet (measure %s)", first.Name, l, strings.Join(topology.Names(), ", "))
		}
	}
	return nil
}

// tlsLoads are the load generators that speak TLS: wrk, h2load and
// s_time (OpenSSL, trusting any certificate, resuming no session; h2load
// over HTTP/2 with -streams) and the engine's goroutines (internal/load's
// TLS, trusting the sweep's certificate).
var tlsLoads = map[results.Generator]bool{results.LoadWrk: true, results.LoadBuiltin: true, results.LoadH2load: true, results.LoadStime: true}

// checkTLSHere refuses TLS where the servers run elsewhere: the agents and
// the cluster start cmd/hello and nginx without the run's certificate.
func (p Plan) checkTLSHere(w Where, tops []topology.Topology) error {
	if i := slices.IndexFunc(tops, func(t topology.Topology) bool { return t.TLS }); i >= 0 && w.elsewhere() {
		return Errorf(Topologies, "%s speaks TLS, whose servers run here only, not through agents or a cluster", tops[i].Name)
	}
	return nil
}
