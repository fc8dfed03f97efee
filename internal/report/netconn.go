package report

import (
	"fmt"
	"strconv"

	"github.com/topobench/topobench/internal/analysis"
	"github.com/topobench/topobench/internal/numfmt"
)

// connView is the part of summary.md and report.html about the
// connections the servers were sent: whether their listen queues held
// them, and how many upstream connections nginx opened (what a pool
// smaller than the load costs). Empty when no run read the servers' TCP
// counters.
type connView struct {
	ConnSentences []string
	ConnHead      []string
	ConnRows      [][]string
}

func (s summary) connView() connView { return connections(s.Summary) }

func connections(s analysis.Summary) connView {
	var v connView
	if len(s.Net) == 0 {
		return v
	}
	for _, k := range s.KeepaliveCosts {
		v.ConnSentences = append(v.ConnSentences, keepaliveSentence(k))
	}
	v.ConnHead = []string{"group", "topology", "req/s", "upstream keepalive", "upstream opened / 1,000 req", "runs with listen overflows", "listen overflows", "SYN cookies"}
	for _, c := range s.Net {
		ka, per1k := "–", "–"
		if c.Keepalive > 0 {
			ka = strconv.Itoa(c.Keepalive)
		}
		if iv := c.UpstreamPer1k; iv != nil {
			per1k = perThousand(iv.Center)
		}
		group := c.Group.String()
		switch {
		case s.CrossCheck(analysis.Cell{Key: c.Key}):
			group = fmt.Sprintf("cross-check (%s)", c.Load) // no group of its own
		case group == "":
			group = "all runs"
		}
		v.ConnRows = append(v.ConnRows, []string{
			group, c.Topology, numfmt.Count(c.ReqPerSec), ka, per1k,
			fmt.Sprintf("%d of %d", c.OverflowRuns, c.Runs), strconv.FormatInt(c.ListenOverflows, 10), strconv.FormatInt(c.SyncookiesSent, 10),
		})
	}
	return v
}

// keepaliveSentence says plainly whether a pool smaller than the load
// cost the topology throughput.
func keepaliveSentence(k analysis.KeepaliveCost) string {
	g := k.Small
	g.Keepalive = 0
	head := fmt.Sprintf("**%s** (%s): an upstream pool of %d per nginx worker, against one of %d that holds the load", k.Topology, g, k.SmallPool, k.LargePool)
	churn := ""
	if k.SmallVsStandalone != nil && k.LargeVsStandalone != nil {
		churn = fmt.Sprintf("; against standalone in the same start of the servers, %s and %s", fmtRatio(k.SmallVsStandalone), fmtRatio(k.LargeVsStandalone))
	}
	if k.SmallPer1k != nil && k.LargePer1k != nil {
		churn += fmt.Sprintf("; nginx opened %s upstream connections per 1,000 requests against %s", perThousand(k.SmallPer1k.Center), perThousand(k.LargePer1k.Center))
	}
	switch {
	case k.Ratio == nil:
		return head + ": not compared, one of the two has no successful run" + churn + "."
	case k.Costs():
		return fmt.Sprintf("%s, **cost throughput**: %s req/s against %s, %s%s.", head, numfmt.Count(k.SmallRate), numfmt.Count(k.LargeRate), fmtRatio(k.Ratio), churn)
	case k.Ratio.Differs:
		return fmt.Sprintf("%s, was faster: %s req/s against %s, %s%s.", head, numfmt.Count(k.SmallRate), numfmt.Count(k.LargeRate), fmtRatio(k.Ratio), churn)
	}
	return fmt.Sprintf("%s: no cost these runs show (%s req/s against %s, %s; the interval includes 1 or is unknown)%s.", head, numfmt.Count(k.SmallRate), numfmt.Count(k.LargeRate), fmtRatio(k.Ratio), churn)
}

// perThousand formats connections per 1,000 requests: a tenth is the
// resolution that tells a warm pool (0.0) from churn.
func perThousand(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) }
