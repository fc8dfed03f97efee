package sweep

import (
	"github.com/topobench/topobench/internal/results"
)

// record writes a run to the results directory and keeps it with the
// sweep's records (s.runs), in the order results.Load gives them, so
// that nothing reads the directory again while the sweep runs. A run
// measured again (a failed cell of a resumed sweep) replaces its record.
func (s *sweep) record(run results.Run, raw []byte) error {
	if err := results.WriteRun(s.Dir, run, raw); err != nil {
		return err
	}
	name := run.Name()
	for i := range s.runs {
		if s.runs[i].Name() == name {
			s.runs[i] = run
			return nil
		}
	}
	s.runs = append(s.runs, run)
	s.plan.SortRuns(s.runs)
	return nil
}

// resumeFrom takes the records of the sweep being resumed: the cells
// measured already are not measured again.
func (s *sweep) resumeFrom(runs []results.Run) {
	s.runs = runs
	for _, r := range runs {
		if !r.Failed() {
			s.done[r.Key()] = true
		}
	}
}
