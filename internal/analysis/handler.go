package analysis

import (
	"math"
	"slices"
	"time"

	"github.com/topobench/topobench/internal/results"
	"github.com/topobench/topobench/internal/topology"
)

// What nginx costs a user's handler, in the pair designs. A handler that
// spends w µs of CPU a request adds w to both sides of a pair. With the
// servers sharing one CPU budget, saturated, a side serves CPUs ÷ (µs a
// request): standalone at C ÷ (s + w), a path through nginx at
// C ÷ (n + b + w), where s is standalone's server's µs a request, n
// nginx's and b the backend's behind it, all measured at w = 0. The
// ratio a handler of w µs would read is then
//
//	(s + w) ÷ (n + b + w)
//
// and nginx's share of the capacity is one less it. The duet fits the
// same model: each side has half the servers' CPUs, C/2 ÷ (s + w)
// against C/2 ÷ (n + b + w), and the halves cancel in the ratio. Where
// the sweep measured a group with w > 0 too, the prediction meets the
// measured ratio and its interval (HandlerCost.Checks).

// HandlerWorks are the handler costs the answer predicts nginx's share at.
var HandlerWorks = []time.Duration{0, 50 * time.Microsecond, 200 * time.Microsecond, time.Millisecond}

// HandlerRatio is the model's ratio to standalone of a path whose no-work
// costs are n + b µs a request (nginx's, the backend's), against
// standalone's s, for a handler of w; NaN unless s and n + b are positive.
func HandlerRatio(s, n, b float64, w time.Duration) float64 {
	if !(s > 0) || !(n+b > 0) {
		return math.NaN()
	}
	us := float64(w) / float64(time.Microsecond)
	return (s + us) / (n + b + us)
}

// HandlerPoint is the model's ratio at one handler cost, and the share of
// capacity nginx costs there (1 - Ratio).
type HandlerPoint struct {
	Work  time.Duration `json:"work_ns"`
	Ratio float64       `json:"ratio"`
	Share float64       `json:"share"`
}

// HandlerCheck sets the prediction beside a group measured at Work:
// Inside says the prediction falls in the measured interval. AtCosts is
// the cell's CostRatio, the model's ratio from the costs measured at Work
// itself: where it meets Measured and Predicted does not, the model holds
// and the costs moved with the rate.
type HandlerCheck struct {
	Work      time.Duration `json:"work_ns"`
	Predicted float64       `json:"predicted"`
	AtCosts   *Ratio        `json:"at_costs,omitempty"`
	Measured  Ratio         `json:"measured"`
	Inside    bool          `json:"inside"`
}

// HandlerCost is one own-service path's prediction from its group at no
// handler work: the costs it rests on (µs a request; N and B NaN where
// only their sum P was measured), the points at HandlerWorks and the
// checks against the groups measured with work.
type HandlerCost struct {
	Group    Group          `json:"group"`
	Topology string         `json:"topology"`
	S, N, B  float64        `json:"-"`
	P        float64        `json:"-"`
	Points   []HandlerPoint `json:"points"`
	Checks   []HandlerCheck `json:"checks,omitempty"`
}

// OwnService reports whether top is a path a user's own HTTP service can
// stand behind: nginx's proxy_pass to an HTTP backend, TCP or unix.
func OwnService(top string) bool {
	t, err := topology.Lookup(top)
	return err == nil && !topology.IsBaseline(top) && t.Vhost != "" && (t.Backend == topology.HTTPTCP || t.Backend == topology.HTTPUnix)
}

// HandlerCosts are the own-service paths' predictions in every paired
// closed-loop group at no handler work whose CPU was measured, in table
// order.
func (s Summary) HandlerCosts() []HandlerCost {
	var out []HandlerCost
	for _, g := range s.Groups() {
		if g.Schedule != (results.Schedule{}) {
			continue
		}
		for _, top := range s.Topologies() {
			if h, ok := s.handlerCost(g, top); ok {
				out = append(out, h)
			}
		}
	}
	return out
}

func (s Summary) handlerCost(g Group, top string) (HandlerCost, bool) {
	c, ok := s.Cell(Key{g, top})
	st, sok := s.Cell(Key{g, topology.BaselineOf(top)})
	if !OwnService(top) || !ok || !sok || len(c.Pairs) == 0 || c.CPU == nil || st.CPU == nil {
		return HandlerCost{}, false
	}
	h := HandlerCost{Group: g, Topology: top, S: servers(st.CPU), N: c.CPU.Nginx.Median(), B: c.CPU.Server.Median(), P: servers(c.CPU)}
	if math.IsNaN(h.S) || math.IsNaN(h.P) {
		return HandlerCost{}, false
	}
	for _, w := range HandlerWorks {
		r := HandlerRatio(h.S, h.P, 0, w)
		h.Points = append(h.Points, HandlerPoint{Work: w, Ratio: r, Share: 1 - r})
	}
	for _, mc := range s.Cells {
		if mc.Topology != top || mc.Schedule.Work == 0 || mc.Group != groupAt(g, mc.Schedule.Work) || mc.RatioToStandalone == nil {
			continue
		}
		pred := HandlerRatio(h.S, h.P, 0, mc.Schedule.Work)
		m := *mc.RatioToStandalone
		h.Checks = append(h.Checks, HandlerCheck{Work: mc.Schedule.Work, Predicted: pred, AtCosts: mc.CostRatio,
			Measured: m, Inside: m.Known() && !m.Excludes(pred)})
	}
	slices.SortFunc(h.Checks, func(a, b HandlerCheck) int { return int(a.Work - b.Work) })
	return h, true
}

// groupAt is g at handler work w.
func groupAt(g Group, w time.Duration) Group {
	g.Schedule.Work = w
	return g
}

// servers is the servers' µs a request of a cell: the measured sum where
// there is one (the duet's groups' accounting), else nginx's and the
// server's; NaN where neither was measured.
func servers(c *CPUPerRequest) float64 {
	if v := c.Servers.Median(); !math.IsNaN(v) && v > 0 {
		return v
	}
	n, v := c.Nginx.Median(), c.Server.Median()
	if math.IsNaN(n) {
		n = 0
	}
	if !(v > 0) {
		return math.NaN()
	}
	return n + v
}
