package results

import (
	"encoding/json"
	"fmt"
	"time"
)

// Records written before Figures existed hold the generator's own report
// instead: "result" (wrk's parsed output) or "engine" (the built-in
// engine's summary), and the command as "wrk_args". Run.UnmarshalJSON
// reads them into Figures and Command through the small mirrors below,
// which hold only the fields the figures come from; the formats are
// frozen, so they do not follow the generators' types.

// legacyRun is the part of an old record that is not in Run any more.
// The reports are read leniently (their other fields are ignored); the
// record around them strictly.
type legacyRun struct {
	WrkArgs []string        `json:"wrk_args"`
	Result  json.RawMessage `json:"result"`
	Engine  json.RawMessage `json:"engine"`
}

type legacyPercentile struct {
	P       float64       `json:"p"`
	Latency time.Duration `json:"latency_ns"`
}

type legacyWrk struct {
	Latency struct {
		Avg time.Duration `json:"avg_ns"`
		Max time.Duration `json:"max_ns"`
	} `json:"latency"`
	Distribution   []legacyPercentile `json:"distribution"`
	Requests       int64              `json:"requests"`
	Errors         Errors             `json:"errors"`
	RequestsPerSec float64            `json:"requests_per_sec"`
	Startup        time.Duration      `json:"startup_ns"`
	Script         *struct {
		LatencyMean time.Duration      `json:"latency_mean_ns"`
		LatencyMax  time.Duration      `json:"latency_max_ns"`
		Percentiles []legacyPercentile `json:"percentiles"`
	} `json:"script"`
}

// percentile is p from the script when it ran, else from the Latency
// Distribution, as wrk's Result.Percentile does.
func (w legacyWrk) percentile(p float64) (time.Duration, bool) {
	if w.Script != nil {
		for _, q := range w.Script.Percentiles {
			if q.P == p {
				return q.Latency, true
			}
		}
	}
	for _, q := range w.Distribution {
		if q.P == p {
			return q.Latency, true
		}
	}
	return 0, false
}

func (w legacyWrk) figures() Figures {
	f := Figures{Requests: w.Requests, ReqPerSec: w.RequestsPerSec, Errors: w.Errors, Max: w.Latency.Max, Startup: w.Startup}
	if w.Script != nil {
		f.Max = w.Script.LatencyMax
	}
	p50, ok50 := w.percentile(50)
	p99, ok99 := w.percentile(99)
	if f.Max > 0 && ok50 && ok99 {
		f.Latency = true
		f.P50, f.P99 = p50, p99
		f.P90, _ = w.percentile(90)
		f.P999, _ = w.percentile(99.9)
		f.P9999, _ = w.percentile(99.99)
		f.Mean = w.Latency.Avg
		if w.Script != nil {
			f.Mean = w.Script.LatencyMean
		}
	}
	return f
}

type legacyEngine struct {
	Requests     int64   `json:"requests"`
	Sent         int64   `json:"sent"`
	TargetRate   float64 `json:"target_rate"`
	AchievedRate float64 `json:"achieved_rate"`
	Late         int64   `json:"late"`
	Dropped      int64   `json:"dropped"`
	Errors       struct {
		Connect int64 `json:"connect"`
		Read    int64 `json:"read"`
		Write   int64 `json:"write"`
		Timeout int64 `json:"timeout"`
		Status  int64 `json:"status"`
	} `json:"errors"`
	Latency struct {
		Mean  float64 `json:"mean"`
		P50   float64 `json:"p50"`
		P90   float64 `json:"p90"`
		P99   float64 `json:"p99"`
		P999  float64 `json:"p99.9"`
		P9999 float64 `json:"p99.99"`
		Max   float64 `json:"max"`
	} `json:"latency_ms"`
	Concurrent int64 `json:"concurrent"`
}

func (e legacyEngine) figures() Figures {
	ms := func(v float64) time.Duration { return time.Duration(v * float64(time.Millisecond)) }
	f := Figures{
		Requests: e.Requests, Sent: e.Sent, ReqPerSec: e.AchievedRate,
		Errors:     Errors{Connect: e.Errors.Connect, Read: e.Errors.Read, Write: e.Errors.Write, Timeout: e.Errors.Timeout, Status: e.Errors.Status},
		TargetRate: e.TargetRate, Late: e.Late, Dropped: e.Dropped, Concurrent: e.Concurrent,
		Histogram: true,
	}
	if l := e.Latency; l.Max > 0 {
		f.Latency = true
		f.Mean, f.P50, f.P90, f.P99, f.P999, f.P9999, f.Max = ms(l.Mean), ms(l.P50), ms(l.P90), ms(l.P99), ms(l.P999), ms(l.P9999), ms(l.Max)
	}
	return f
}

// UnmarshalJSON reads a record, old or new, strictly: an old one's
// generator report becomes Figures and its wrk_args Command.
func (r *Run) UnmarshalJSON(b []byte) error {
	type plain Run
	var v struct {
		plain
		legacyRun
	}
	if err := strictUnmarshal(b, &v); err != nil {
		return err
	}
	*r = Run(v.plain)
	if r.Command == nil {
		r.Command = v.WrkArgs
	}
	if r.Figures != nil {
		return nil
	}
	switch {
	case len(v.Engine) > 0 && string(v.Engine) != "null":
		var e legacyEngine
		if err := json.Unmarshal(v.Engine, &e); err != nil {
			return fmt.Errorf("engine: %w", err)
		}
		r.Figures = new(e.figures())
	case len(v.Result) > 0 && string(v.Result) != "null":
		var w legacyWrk
		if err := json.Unmarshal(v.Result, &w); err != nil {
			return fmt.Errorf("result: %w", err)
		}
		r.Figures = new(w.figures())
	}
	return nil
}
