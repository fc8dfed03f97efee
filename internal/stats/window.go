package stats

import (
	"math"
	"time"
)

// WindowSample is what one window length measured: per-window rates of
// standalone and of a path, in time order. When both have the same
// length they are pairs, standalone's window beside the path's.
type WindowSample struct {
	Window           time.Duration
	Standalone, Path []float64
	// Duet says a pair's two windows ran at once (-design duet): a pair
	// then takes one window's time, and its overhead is shared.
	Duet bool
}

// WindowSpread is how much one window length's rates stray, and what
// a ratio measured with it needs.
type WindowSpread struct {
	Window time.Duration
	Pairs  int
	// StandaloneCV and PathCV are each side's coefficient of variation
	// from window to window (standard deviation over mean); NaN with
	// fewer than 2 windows.
	StandaloneCV, PathCV float64
	// RatioSD is the standard deviation of the log of a pair's ratio,
	// about the ratio's relative spread; Lag1 the autocorrelation of
	// neighbouring pairs' log ratios. Unpaired samples combine the two
	// sides' log spreads as if independent, and Lag1 is 0. NaN when
	// there are too few windows.
	RatioSD, Lag1 float64
	// PairsNeeded is the pairs the design expects a ratio of this
	// spread and correlation to need for the precision, the pilot at
	// least; 0 when not even MaxPairs reach it. Needed is the measured time those pairs
	// take: each two windows and the overhead of a pair (the drains), or
	// under the duet one window and half of it.
	PairsNeeded int
	Needed      time.Duration
	// AtMax is the half-width expected at MaxPairs: how precise the
	// ratio gets at most, for a path that never reaches the precision.
	AtMax float64
}

// WindowSpreads is each window length's spread, and the measured time a
// ratio needs at it for precision under the design d, with overhead the
// unmeasured time of a pair besides its two windows. The sweep measures
// the samples; this only does the arithmetic, so the choice of window
// length is from measurement and can be shown. The expectation takes the
// pairs to come with the spread and lag-1 autocorrelation measured, and
// the design's interval with the correlation measured as its allowance.
func WindowSpreads(samples []WindowSample, d PairedDesign, precision float64, overhead time.Duration) []WindowSpread {
	out := make([]WindowSpread, 0, len(samples))
	for _, s := range samples {
		w := WindowSpread{Window: s.Window, StandaloneCV: cv(s.Standalone), PathCV: cv(s.Path), RatioSD: math.NaN(), AtMax: math.Inf(1)}
		if len(s.Standalone) == len(s.Path) {
			rs, err := Pairwise(s.Path, s.Standalone)
			if err == nil && len(rs) >= 2 && positive(rs) {
				xs := logs(rs)
				w.Pairs, w.RatioSD, w.Lag1 = len(rs), math.Sqrt(variance(xs)), lag1(xs)
			}
		} else if len(s.Standalone) >= 2 && len(s.Path) >= 2 && positive(s.Standalone) && positive(s.Path) {
			w.RatioSD = math.Hypot(math.Sqrt(variance(logs(s.Standalone))), math.Sqrt(variance(logs(s.Path))))
		}
		if !math.IsNaN(w.RatioSD) {
			rho := math.Max(0, w.Lag1)
			for n := d.Pilot; n <= d.MaxPairs; n++ {
				w.AtMax = expectedHalfWidth(w.RatioSD, rho, n, d)
				if w.AtMax <= precision && w.PairsNeeded == 0 {
					w.PairsNeeded = n
					w.Needed = time.Duration(n) * (2*s.Window + overhead)
					if s.Duet {
						w.Needed = time.Duration(n) * (s.Window + overhead/2)
					}
				}
			}
		}
		out = append(out, w)
	}
	return out
}

// expectedHalfWidth is the half-width the design is expected to give n
// pairs of log-ratio spread sd and lag-1 autocorrelation rho.
func expectedHalfWidth(sd, rho float64, n int, d PairedDesign) float64 {
	return math.Exp(logHalfWidth(sd, rho, n, d.lookLevel())) - 1
}

// FastestWindow is the window length whose ratio reaches the precision in
// the least measured time; false when none does.
func FastestWindow(spreads []WindowSpread) (WindowSpread, bool) {
	var best WindowSpread
	found := false
	for _, w := range spreads {
		if w.PairsNeeded > 0 && (!found || w.Needed < best.Needed) {
			best, found = w, true
		}
	}
	return best, found
}

func cv(xs []float64) float64 {
	if len(xs) < 2 {
		return math.NaN()
	}
	return math.Sqrt(variance(xs)) / meanOf(xs)
}

func positive(xs []float64) bool {
	for _, x := range xs {
		if !(x > 0) || math.IsInf(x, 0) {
			return false
		}
	}
	return true
}

func logs(xs []float64) []float64 {
	out := make([]float64, len(xs))
	for i, x := range xs {
		out[i] = math.Log(x)
	}
	return out
}
