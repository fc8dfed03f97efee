package load

import (
	"fmt"
	"math"
	"math/rand/v2"
	"time"
)

// Arrivals is how open mode spaces the intended start times.
type Arrivals string

const (
	// Poisson draws exponential gaps with mean 1/rate: independent
	// arrivals, as the 2016 study drove its servers.
	Poisson Arrivals = "poisson"
	// Uniform spaces requests exactly 1/rate apart.
	Uniform Arrivals = "uniform"
)

// ParseArrivals accepts "poisson" or "uniform".
func ParseArrivals(s string) (Arrivals, error) {
	switch a := Arrivals(s); a {
	case Poisson, Uniform:
		return a, nil
	}
	return "", fmt.Errorf("arrivals %q: want poisson or uniform", s)
}

// schedule yields intended start times as offsets from the run's start.
type schedule struct {
	arrivals Arrivals
	mean     float64 // ns between requests
	rng      *rand.Rand
	t        float64 // ns; float so uniform gaps do not round down
}

func newSchedule(a Arrivals, rate float64, seed uint64) *schedule {
	return &schedule{arrivals: a, mean: float64(time.Second) / rate, rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))}
}

// next returns the intended start of the next request. The first request is
// due at once; the gaps follow.
func (s *schedule) next() time.Duration {
	due := s.t
	switch s.arrivals {
	case Poisson:
		s.t += s.rng.ExpFloat64() * s.mean
	default:
		s.t += s.mean
	}
	return time.Duration(math.Round(due))
}
