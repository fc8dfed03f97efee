package loadgen

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/topobench/topobench/internal/results"
)

// TestWithSchedule: the schedule's work and wait go in the query, in
// ASCII; the rest of a schedule does not.
func TestWithSchedule(t *testing.T) {
	const url = "http://127.0.0.1:8080/"
	for _, c := range []struct {
		sc   results.Schedule
		want string
	}{
		{results.Schedule{}, url},
		{results.Schedule{Rate: 1000, Fraction: 0.5, Requests: 10}, url},
		{results.Schedule{Work: 50 * time.Microsecond}, url + "?work=50us"},
		{results.Schedule{Work: time.Millisecond}, url + "?work=1ms"},
		{results.Schedule{Work: 1500 * time.Nanosecond}, url + "?work=1.5us"},
		{results.Schedule{Wait: 2 * time.Second}, url + "?wait=2s"},
		{results.Schedule{Work: 200 * time.Microsecond, Wait: 150 * time.Microsecond}, url + "?work=200us&wait=150us"},
		{results.Schedule{Work: -time.Millisecond, Wait: -time.Second}, url},
	} {
		assert.Equal(t, c.want, WithSchedule(url, c.sc), "%+v", c.sc)
	}
}

// TestWithoutSchedule: the engine's target drops the schedule's query
// and keeps the path's own.
func TestWithoutSchedule(t *testing.T) {
	for in, want := range map[string]string{
		"http://h/a":                       "http://h/a",
		"http://h/a?work=1us&wait=2s":      "http://h/a",
		"http://h/a?page=2&work=1us":       "http://h/a?page=2",
		"http://h/a?page=2&q=x&wait=100ms": "http://h/a?page=2&q=x",
	} {
		assert.Equal(t, want, withoutSchedule(in), in)
	}
}
