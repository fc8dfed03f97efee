package parity

// Report is what `topobench parity -at ADDR` prints as JSON, for a
// harness on another machine (compare -swarm runs it as a job on a load
// node): the topologies checked and why each refused one must not be
// measured.
type Report struct {
	Checked []string          `json:"checked"`
	Refused map[string]string `json:"refused"`
}
