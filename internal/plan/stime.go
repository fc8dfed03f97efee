package plan

import (
	"slices"

	"github.com/topobench/topobench/internal/results"
	"github.com/topobench/topobench/internal/stime"
	"github.com/topobench/topobench/internal/topology"
)

// MaxStimeProcs bounds -connections under -load s_time, where each is an
// s_time process of its own making a connection at a time: past a few
// per core the processes measure the scheduler, not the handshakes.
const MaxStimeProcs = stime.MaxProcs

// checkStime checks -load s_time: it makes a TLS connection a request
// (a full handshake and one GET), so it loads TLS topologies only, beside
// loads that open a connection a request too (-close) and resume no
// session, a run a window in the rounds design.
func (p Plan) checkStime(tops []topology.Topology) error {
	if !slices.Contains(p.Generators(), results.LoadStime) {
		return nil
	}
	for _, t := range tops {
		if !t.TLS {
			return Errorf(Load, "s_time speaks TLS only, and %s is plain HTTP; give TLS topologies alone", t.Name)
		}
	}
	for _, c := range p.Connections {
		if c > MaxStimeProcs {
			return Errorf(Connections, "%d: s_time runs a process a connection, want at most %d", c, MaxStimeProcs)
		}
	}
	switch {
	case p.Paired != nil:
		return Errorf(Design, "%s: s_time makes a connection a request, which no pool kept across windows does; measure it with -design rounds", p.Paired.Design())
	case !p.Close:
		return Errorf(Close, "-load s_time makes a connection a request; give -close so that the other loads do too")
	case p.TLSSettings().Resume:
		return Errorf(TLSResume, "on: s_time -new makes a full handshake every connection; give -tls-resume off")
	}
	for _, sc := range p.Schedules {
		if sc.Requests > 0 {
			return Errorf(Requests, "%d: s_time runs for a duration, not a count of requests", sc.Requests)
		}
	}
	return nil
}
