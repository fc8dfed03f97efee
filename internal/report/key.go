package report

import (
	"strings"

	"github.com/topobench/topobench/internal/analysis"
	"golang.org/x/perf/benchfmt"
)

// groupColumns head the CSV columns that groupValues fill.
func groupColumns() []string {
	var names []string
	for _, d := range (analysis.Group{}).Dims() {
		names = append(names, d.Name)
	}
	return names
}

func groupValues(g analysis.Group) []string {
	var values []string
	for _, d := range g.Dims() {
		values = append(values, d.Value)
	}
	return values
}

// benchName is the cell's name in bench.txt, without the "Benchmark"
// prefix: "Topobench/topology=nginx-http/gomaxprocs=8". Every dimension
// is a key=value sub-name, so benchstat can slice by any of them
// (-col /gomaxprocs, -row /topology).
func benchName(k analysis.Key) benchfmt.Name {
	var b strings.Builder
	b.WriteString("Topobench/topology=" + k.Topology)
	for _, d := range k.Dims() {
		if d.Value != "" {
			b.WriteString("/" + d.Name + "=" + d.Value)
		}
	}
	return benchfmt.Name(b.String())
}
