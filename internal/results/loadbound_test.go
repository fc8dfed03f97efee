package results

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestLoadBound(t *testing.T) {
	for _, tc := range []struct {
		name  string
		run   Run
		bound bool
		use   string
	}{
		{"under", Run{LoadShare: 0.7}, false, "used 70% of its CPUs"},
		{"at 90%", Run{LoadShare: 0.9}, true, "used 90% of its CPUs"},
		{"of a quota", Run{LoadShare: 0.95, LoadQuota: 0.2, LoadThrottled: 0.6}, true,
			"used 95% of its cgroup quota of 0.20 CPU and was throttled in 60% of the quota's periods"},
		{"throttled in bursts under the average", Run{LoadShare: 0.53, LoadQuota: 0.05, LoadThrottled: 0.29}, true,
			"used 53% of its cgroup quota of 0.05 CPU and was throttled in 29% of the quota's periods"},
		{"seldom throttled", Run{LoadShare: 0.3, LoadQuota: 1, LoadThrottled: 0.05}, false,
			"used 30% of its cgroup quota of 1.00 CPU and was throttled in 5% of the quota's periods"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.bound, tc.run.LoadBound())
			assert.Equal(t, tc.use, tc.run.LoadUse())
		})
	}
}
