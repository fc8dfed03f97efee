package plan

import (
	"fmt"
	"strings"
)

// Describe is the plan's shape for the progress line.
func (p Plan) Describe() string {
	parts := []string{fmt.Sprintf("%d topologies", len(p.Topologies)), fmt.Sprintf("GOMAXPROCS %v", p.GOMAXPROCS)}
	if len(p.TargetList()) > 1 {
		parts = append([]string{fmt.Sprintf("targets %v", p.TargetList())}, parts...)
	}
	if len(p.Connections) > 1 {
		parts = append(parts, fmt.Sprintf("connections %v", p.Connections))
	}
	if len(p.LoadList()) > 1 {
		parts = append(parts, fmt.Sprintf("loads %v", p.LoadList()))
	}
	if len(p.Schedules) > 0 {
		parts = append(parts, fmt.Sprintf("%d schedules", len(p.Schedules)))
	}
	return strings.Join(append(parts, fmt.Sprintf("%d reps", p.Reps)), " x ")
}

// DescribePaired is the paired plan's shape for the progress line.
func (p Plan) DescribePaired() string {
	return fmt.Sprintf("%d topologies and the A/A x GOMAXPROCS %v, %d pairs each", len(p.Topologies)-1, p.GOMAXPROCS, p.Paired.Pairs)
}
