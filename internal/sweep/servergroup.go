package sweep

// prepareAccounting finds where the servers' groups go (rig.Rig's
// accounting groups), unless the servers run elsewhere.
func (s *sweep) prepareAccounting() {
	s.rig.PrepareAccounting(s.HelloAgent != "" || s.Cluster != nil)
}

// prepareWeights readies a duet's two sides' weight groups
// (rig.Rig.PrepareWeights), and refuses the paired designs' own
// standalone process where the servers are not started here (the rig
// starts it here).
func (s *sweep) prepareWeights() error {
	if s.plan.Paired == nil {
		return nil
	}
	if s.plan.Paired.Own && !s.plan.Paired.Duet && (s.HelloAgent != "" || s.Cluster != nil) {
		return planErr("-standalone-process own: starts standalone's server here, not through agents or a cluster; give -standalone-process shared")
	}
	if !s.plan.Paired.Duet {
		return nil
	}
	if s.HelloAgent != "" || s.Cluster != nil {
		return planErr("-design duet: runs its two sides' servers here, not through agents or a cluster")
	}
	return s.rig.PrepareWeights()
}
