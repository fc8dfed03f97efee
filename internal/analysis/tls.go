package analysis

import (
	"cmp"
	"slices"

	"github.com/topobench/topobench/internal/results"
	"github.com/topobench/topobench/internal/tlscert"
	"github.com/topobench/topobench/internal/topology"
)

// TLSTable is what TLS costs on each path that speaks it to the client:
// Go terminating it itself (standalone-tls) or nginx terminating it in
// front of Go, over kept connections or a handshake a request (-close).
// Every figure is one the summary already holds (the cells' rates, their
// ratios to standalone-tls, nginx's and the backend's CPU per request,
// the two generators' round-by-round ratio); the table only picks the TLS
// cells and names what each measured.
type TLSTable struct {
	// TLS is the plan's TLS settings (the defaults when it recorded
	// none), Suite the cipher suite both servers use, by Go's name.
	TLS   tlscert.Settings    `json:"tls"`
	Suite string              `json:"suite"`
	Loads []results.Generator `json:"loads"`
	// Streams is h2load's streams a connection (HTTP/2) when h2load ran
	// with -streams; zero is HTTP/1.1.
	Streams     int   `json:"streams,omitempty"`
	Connections []int `json:"connections"`
	// Handshakes says every request opened a connection (-close): each
	// rate is handshakes per second and each µs per handshake.
	Handshakes bool `json:"handshakes"`
	// AllTLS says every topology of the plan speaks TLS, so the table
	// is the sweep's answer rather than one section of it.
	AllTLS bool     `json:"all_tls"`
	Rows   []TLSRow `json:"rows"`
}

// TLSRow is one TLS cell.
type TLSRow struct {
	Key Key `json:"key"`
	// Terminates is who speaks TLS to the client: "Go" or "nginx".
	// Upstream is how nginx reaches Go ("TCP", "unix socket"); empty
	// where Go terminates.
	Terminates string `json:"terminates"`
	Upstream   string `json:"upstream,omitempty"`
	// Baseline marks the row the others' ratios are to (standalone-tls).
	Baseline bool `json:"baseline,omitempty"`
	Reps     int  `json:"reps"`
	Failed   int  `json:"failed,omitempty"`
	// Rate is the median req/s (handshakes/s under -close) with its
	// interval; Ratio the cell's RatioToStandalone, to standalone-tls.
	Rate  Interval `json:"rate"`
	Ratio *Ratio   `json:"ratio,omitempty"`
	// NginxUS and BackendUS are nginx's and Go's CPU µs per request (per
	// handshake under -close); nil where not measured or not on the path.
	NginxUS   *Interval `json:"nginx_us,omitempty"`
	BackendUS *Interval `json:"backend_us,omitempty"`
	// VsLoad is this generator's rate over the plan's first's on the
	// same cell, round by round (Summary.Loads); nil for the first.
	VsLoad *Ratio `json:"vs_first_load,omitempty"`
	// LoadBound says most runs' load generator set the pace: the rate is
	// a floor of the path's, not its measure. Notes are the cell's.
	LoadBound bool     `json:"load_bound,omitempty"`
	Notes     []string `json:"notes,omitempty"`
}

// Flagged reports whether a warning applies to the row's cell.
func (r TLSRow) Flagged() bool { return r.LoadBound || len(r.Notes) > 0 }

// TLSTable lists the TLS cells with what they measured; nil when the
// plan has no TLS topology. Rows go group by group (the load set aside),
// then path by path, then generator by generator in the plan's order, so
// two generators on one path are neighbours.
func (s *Summary) TLSTable() *TLSTable {
	p := s.Env.Plan
	all, some := true, false
	for _, name := range p.Topologies {
		t, err := topology.Lookup(name)
		tls := err == nil && t.TLS
		some, all = some || tls, all && tls
	}
	if !some {
		return nil
	}
	t := &TLSTable{Loads: p.LoadList(), Connections: p.Connections, Handshakes: p.Close, AllTLS: all}
	if p.TLS != nil {
		t.TLS = *p.TLS
	}
	t.Suite = t.TLS.GoCipher()
	if slices.Contains(t.Loads, results.LoadH2load) {
		t.Streams = p.Streams
	}
	for _, c := range s.Cells {
		if top, err := topology.Lookup(c.Topology); err == nil && top.TLS && !s.CrossCheck(c) {
			t.Rows = append(t.Rows, s.tlsRow(c, top))
		}
	}
	loadAt := func(g results.Generator) int { return slices.Index(t.Loads, g) }
	order := topologyOrder(p.Topologies, nil)
	slices.SortStableFunc(t.Rows, func(a, b TLSRow) int {
		ga, gb := a.Key.Group, b.Key.Group
		ga.Load, gb.Load = "", ""
		return cmp.Or(CompareGroups(ga, gb), cmp.Compare(order[a.Key.Topology], order[b.Key.Topology]),
			cmp.Compare(loadAt(a.Key.Load), loadAt(b.Key.Load)))
	})
	return t
}

// tlsRow is cell c of TLS topology top as the TLS table shows it.
func (s *Summary) tlsRow(c Cell, top topology.Topology) TLSRow {
	r := TLSRow{Key: c.Key, Terminates: "Go", Baseline: c.Topology == top.BaselineName(), Reps: c.Reps, Failed: c.Failed,
		LoadBound: c.LoadBound(), Notes: c.Notes}
	if top.ViaNginx() {
		r.Terminates, r.Upstream = "nginx", "TCP"
		if top.Backend == topology.HTTPUnix {
			r.Upstream = "unix socket"
		}
	}
	if c.Reps > 0 {
		r.Rate = c.ReqPerSec.Interval(c.Reps)
	}
	if !r.Baseline {
		r.Ratio = c.RatioToStandalone
	}
	if c.CPU != nil {
		if top.ViaNginx() {
			r.NginxUS = c.CPU.Nginx
		}
		r.BackendUS = c.CPU.Server
	}
	for _, l := range s.Loads {
		if l.Key == c.Key {
			r.VsLoad = l.Rate
		}
	}
	return r
}
