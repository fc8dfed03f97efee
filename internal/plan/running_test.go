package plan

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/topobench/topobench/internal/results"
)

func TestValidateRunningTargets(t *testing.T) {
	const svc = "listen:127.0.0.1:8080"
	one := func(p *Plan) { p.GOMAXPROCS = []int{1} }
	for _, tt := range []struct {
		name    string
		targets []string
		change  func(*Plan)
		field   Field
		want    string // "" for a valid plan
	}{
		{"tcp", []string{svc}, one, "", ""},
		{"unix", []string{"listen:unix:/run/api.sock"}, one, "", ""},
		{"with go", []string{"go", svc}, one, "", ""},
		{"paired", []string{svc}, func(p *Plan) { one(p); p.Paired = &results.Paired{Pairs: 3} }, "", ""},
		{"not loopback", []string{"listen:192.168.1.2:8080"}, one, Targets, "-targets: target \"listen:192.168.1.2:8080\": 192.168.1.2 is not in 127.0.0.0/8"},
		{"a name", []string{"listen:localhost:8080"}, one, Targets, "want listen:IP:PORT"},
		{"a relative socket", []string{"listen:unix:api.sock"}, one, Targets, "absolute"},
		{"unknown", []string{"listn:127.0.0.1:8080"}, one, Targets, "listen:IP:PORT for one already running"},
		{"duet", []string{svc}, func(p *Plan) { one(p); p.Paired = &results.Paired{Pairs: 3, Duet: true} }, Design,
			"-design: duet: " + svc + " is one running process, and a duet's two sides each need a process of their own in groups of equal CPU weight; use -design paired (or -preset paired)"},
		{"own standalone", []string{svc}, func(p *Plan) { one(p); p.Paired = &results.Paired{Pairs: 3, Own: true} }, StandaloneProcess, "give -standalone-process shared"},
		{"netns", []string{svc}, func(p *Plan) { one(p); p.Isolation = results.IsolateNetns }, Isolate, "use -isolate none"},
		{"pinned", []string{svc}, func(p *Plan) { one(p); p.PinServer = "1" }, PinServer, "-pin-server: " + svc + " is not the sweep's to pin to CPUs; give -cpus none"},
		{"two processor values", []string{svc}, nil, GOMAXPROCS, "-gomaxprocs: " + svc + " runs with processors of its own"},
		{"handler wait", []string{svc}, func(p *Plan) { one(p); p.Schedules = []results.Schedule{{Wait: 1000}} }, Wait, "-wait: a command or running target"},
		{"handler work", []string{svc}, func(p *Plan) { one(p); p.Schedules = []results.Schedule{{Work: 1000}} }, Work, "does not take handler work"},
		{"two of one address", []string{svc, svc}, one, Targets, "listed twice"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p := DefaultPlan()
			p.Targets = tt.targets
			if tt.change != nil {
				tt.change(&p)
			}
			err := p.Validate(Where{})
			if tt.want == "" {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, ErrPlan)
			var fe *FieldError
			require.ErrorAs(t, err, &fe)
			assert.Equal(t, tt.field, fe.Field)
			assert.Contains(t, err.Error(), tt.want)
			assert.NotContains(t, err.Error(), "\n", "one line")
		})
	}
}
