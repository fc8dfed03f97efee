package sweep

// prepareAccounting finds where the servers' groups go (rig.Rig's
// accounting groups), unless the servers run elsewhere.
func (s *sweep) prepareAccounting() {
	s.rig.PrepareAccounting(s.HelloAgent != "" || s.Cluster != nil)
}

// prepareWeights readies a duet's two sides' weight groups
// (rig.Rig.PrepareWeights); plan.Check refused a duet whose servers run
// elsewhere.
func (s *sweep) prepareWeights() error {
	if s.plan.Paired == nil || !s.plan.Paired.Duet {
		return nil
	}
	return s.rig.PrepareWeights()
}
