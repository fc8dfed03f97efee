package rig

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestLoadShare(t *testing.T) {
	for _, tc := range []struct {
		name              string
		cpuSec            float64
		window            time.Duration
		pinned            int
		quota             float64
		share, quotaBound float64
	}{
		{"pinned to one CPU", 0.7, time.Second, 1, 0, 0.7, 0},
		{"pinned to two", 1.8, time.Second, 2, 0, 0.9, 0},
		{"a quota under the CPU list is the bound", 0.19, time.Second, 1, 0.2, 0.95, 0.2},
		{"a quota over the CPU list is not", 0.5, time.Second, 1, 1.5, 0.5, 0},
		{"a quota alone, unpinned", 1.0, 2 * time.Second, 0, 0.5, 1, 0.5},
		{"neither", 1.0, time.Second, 0, 0, 0, 0},
		{"no window", 1.0, 0, 1, 0, 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			share, qb := loadShare(tc.cpuSec, tc.window, tc.pinned, tc.quota)
			assert.InDelta(t, tc.share, share, 1e-9)
			assert.InDelta(t, tc.quotaBound, qb, 1e-9)
		})
	}
}
