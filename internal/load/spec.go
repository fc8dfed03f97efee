package load

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/topobench/topobench/internal/hdr"
)

// Spec is one run of the engine as data: what `topobench load` does,
// whether its flags or a JSON file (`topobench load -spec FILE`) say it.
// The sweep hands its child engine a Spec and records it beside the run;
// a remote load node receives the same.
//
// The engine's own Options are embedded, so an option added there is a
// spec field too. The rest says how the run is shaped (a handler wait, the
// concurrency-level probe) and where its results go.
//
// In JSON the keys are the load command's flag names and the values are
// written as the flags take them: the target is the command's URL
// argument, http://127.0.0.1:PORT/path or unix:/path/to.sock:/path;
// durations are Go duration strings ("15s", "100ms"), the allowed address
// is an IP address. A key left out keeps DefaultSpec's value; unknown keys
// are refused. For example:
//
//	{"target": "http://127.0.0.1:8080/", "connections": 100, "rate": 1000,
//	 "arrivals": "poisson", "requests": 100000, "wait": "1s",
//	 "timeout": "3s", "seed": 1, "procs": 1, "json": true}
//
// Zero values mean the engine's defaults: Timeout 2s (a probe: Within
// plus Wait), MaxConnections the larger of Connections and 10000,
// Arrivals poisson, and with neither Requests nor Duration a run of
// DefaultDuration.
type Spec struct {
	Options

	// Wait asks the server to hold each answer this long (cmd/hello's
	// ?wait=, added to the target's query); at most 60s.
	Wait time.Duration `json:"wait,omitzero"`
	// Probe > 0 runs the concurrency-level probe (see Probe) with this
	// many requests at once instead of a load run; it needs Wait, and
	// Rate, Requests and Duration do not apply.
	Probe int `json:"probe,omitzero"`
	// Within bounds a concurrently served answer of a probe (default
	// ProbeWithin(Wait)).
	Within time.Duration `json:"within,omitzero"`

	// Procs is the engine's GOMAXPROCS while it runs: one P costs the
	// least CPU per request and leaves the other cores to the servers.
	// The closed loop's event loops each get a P on top while they run
	// (see Options.Threads); the CPUs the engine may use are its cpuset's.
	Procs int `json:"procs"`
	// Out, if set, is a directory Run writes latency.hdr, latency.hgrm
	// and summary.json to.
	Out string `json:"out,omitzero"`
	// JSON prints the summary as one JSON object instead of text.
	JSON bool `json:"json,omitzero"`
	// Quiet turns the progress line on stderr off.
	Quiet bool `json:"quiet,omitzero"`
	// Report prints the summary and the encoded histogram as marked text
	// lines (WriteReport) instead: a harness collects them from a
	// container's log (a load job on a cluster node).
	Report bool `json:"report,omitzero"`
}

// DefaultDuration is how long a run without Requests or Duration lasts.
const DefaultDuration = 10 * time.Second

// DefaultSpec is a spec's values where neither a flag nor a JSON key sets
// them: 10 connections, closed loop, seed 1, one P.
func DefaultSpec() Spec {
	return Spec{Options: Options{Connections: 10, Seed: 1}, Procs: 1}
}

// FieldError is an invalid spec or options field, named by its JSON key,
// which is also the load command's flag.
type FieldError struct {
	Field string
	Err   error
}

func (e *FieldError) Error() string { return e.Field + ": " + e.Err.Error() }
func (e *FieldError) Unwrap() error { return e.Err }

func fieldErr(field, format string, args ...any) error {
	return &FieldError{Field: field, Err: fmt.Errorf(format, args...)}
}

// ErrNoneSucceeded is returned by Spec.Run when the run ended without a
// single answer below status 400.
var ErrNoneSucceeded = errors.New("no request succeeded")

// ExitNoneSucceeded is the exit status of `topobench load` for
// ErrNoneSucceeded (1 is any other failure, 2 bad input), so that a
// parent tells a run that measured only errors from one that did not run.
const ExitNoneSucceeded = 3

// Validate checks the spec. Every error is a *FieldError; the engine's
// own checks (Options, ProbeOptions) are the ones Run and Probe make.
func (s Spec) Validate() error {
	if s.Procs < 1 {
		return fieldErr("procs", "%d: want at least 1", s.Procs)
	}
	if s.Wait < 0 || s.Wait > hdr.HighestMicros*time.Microsecond {
		return fieldErr("wait", "%v: want 0 to 60s", s.Wait)
	}
	if s.Probe < 0 {
		return fieldErr("probe", "%d: must not be negative", s.Probe)
	}
	if s.Probe == 0 {
		if s.Within != 0 {
			return fieldErr("within", "applies to probe only")
		}
		o := s.RunOptions()
		return o.fill()
	}
	for _, f := range []struct {
		name string
		set  bool
	}{{"rate", s.Rate != 0}, {"requests", s.Requests != 0}, {"duration", s.Duration != 0}, {"start-at", !s.StartAt.IsZero()}} {
		if f.set {
			return fieldErr(f.name, "does not apply to a probe, which sends its %d requests at once", s.Probe)
		}
	}
	if s.Wait == 0 {
		return fieldErr("wait", "a probe needs one: it tells concurrent answers from queued ones by the handler wait")
	}
	o := s.ProbeOptions()
	return o.fill()
}

// RunOptions are the Options of a load run of s (Probe == 0): the wait
// added to the target, DefaultDuration when the run has no other bound.
// Run checks them.
func (s Spec) RunOptions() Options {
	o := s.Options
	o.Target = s.target()
	if s.Wait > 0 {
		o.primeTarget = s.Target
	}
	if o.Requests == 0 && o.Duration == 0 {
		o.Duration = DefaultDuration
	}
	return o
}

// ProbeOptions are the options of the probe s describes (Probe > 0).
func (s Spec) ProbeOptions() ProbeOptions {
	return ProbeOptions{Target: s.target(), Allow: s.Allow, AllowRemote: s.AllowRemote, Requests: s.Probe, Wait: s.Wait, Within: s.Within, Timeout: s.Timeout, TLS: s.TLS}
}

func (s Spec) target() Target {
	if s.Wait > 0 && s.Target.Network != "" {
		return s.Target.WithQuery("wait", s.Wait.String())
	}
	return s.Target
}

// Run validates s and runs it: the load run or the probe, on Procs Ps,
// with a progress line on stderr every second unless Quiet; then prints
// the summary to stdout (text, or JSON) and writes the files of Out. An
// interrupted run (ctx ended) is reported and returns an error; so does a
// run in which no request succeeded (ErrNoneSucceeded). A *FieldError
// means s was invalid and nothing ran.
func (s Spec) Run(ctx context.Context, stdout, stderr io.Writer) (*Result, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(s.Procs))
	if s.Out != "" {
		if err := os.MkdirAll(s.Out, 0o755); err != nil {
			return nil, &FieldError{"out", err}
		}
	}
	var res *Result
	var err error
	if s.Probe > 0 {
		res, err = Probe(ctx, s.ProbeOptions())
	} else {
		o := s.RunOptions()
		if !s.Quiet {
			o.Progress = func(p Progress) {
				fmt.Fprintf(stderr, "load: %4.0fs  sent %d  answered %d  errors %d  %.0f req/s  %d connections\n",
					p.Elapsed.Seconds(), p.Sent, p.Answered, p.Errors, p.Rate, p.Connections)
			}
		}
		res, err = Run(ctx, o)
	}
	if err != nil {
		return nil, err
	}
	sum := res.Summary
	switch {
	case s.Report:
		err = WriteReport(stdout, res)
	case s.JSON:
		err = json.NewEncoder(stdout).Encode(sum)
	default:
		err = sum.WriteText(stdout)
	}
	if err != nil {
		return res, err
	}
	if s.Out != "" {
		if err := writeFiles(s.Out, res); err != nil {
			return res, fmt.Errorf("out: %w", err)
		}
	}
	if sum.Interrupted {
		return res, fmt.Errorf("interrupted after %.1fs", sum.ElapsedSeconds)
	}
	if sum.Requests-sum.Errors.Status <= 0 {
		e := sum.Errors
		return res, fmt.Errorf("%w: %d sent, %d answered; errors: connect %d, read %d, write %d, timeout %d, status>=400 %d",
			ErrNoneSucceeded, sum.Sent, sum.Requests, e.Connect, e.Read, e.Write, e.Timeout, e.Status)
	}
	return res, nil
}

// writeFiles writes the histogram (latency.hdr, latency.hgrm) and
// summary.json to dir.
func writeFiles(dir string, res *Result) error {
	if err := hdr.WriteFiles(dir, "latency", res.Histogram); err != nil {
		return err
	}
	b, err := json.MarshalIndent(res.Summary, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "summary.json"), append(b, '\n'), 0o644)
}

// ReadSpec decodes a JSON spec over DefaultSpec: keys left out keep the
// default. Errors name the key (*FieldError where the key is known).
func ReadSpec(r io.Reader) (Spec, error) {
	b, err := io.ReadAll(r)
	if err != nil {
		return Spec{}, err
	}
	s := DefaultSpec()
	if err := json.Unmarshal(b, &s); err != nil {
		return Spec{}, err
	}
	return s, nil
}

// plainSpec is Spec without its JSON methods; specJSON shadows the fields
// whose JSON form is a string (dominant by depth, see encoding/json), so
// that the embedded Options need no JSON methods of their own.
type plainSpec Spec

type specJSON struct {
	Target *string `json:"target,omitempty"`
	Allow  *string `json:"allow,omitempty"`
	plainSpec
	Duration *string `json:"duration,omitempty"`
	Timeout  *string `json:"timeout,omitempty"`
	Wait     *string `json:"wait,omitempty"`
	Within   *string `json:"within,omitempty"`

	TLSCA         *string `json:"tls-ca,omitempty"`
	TLSServerName *string `json:"tls-server-name,omitempty"`
	TLSVersion    *string `json:"tls-version,omitempty"`
	TLSKeyType    *string `json:"tls-key-type,omitempty"`
	TLSResume     *bool   `json:"tls-resume,omitempty"`
}

// durField is a duration field: its key, its string in specJSON and its
// value in the spec.
type durField struct {
	key string
	str **string
	d   *time.Duration
}

func (j *specJSON) durations() []durField {
	return []durField{
		{"duration", &j.Duration, &j.plainSpec.Duration},
		{"timeout", &j.Timeout, &j.plainSpec.Timeout},
		{"wait", &j.Wait, &j.plainSpec.Wait},
		{"within", &j.Within, &j.plainSpec.Within},
	}
}

// MarshalJSON writes s with the keys and value forms described at Spec.
func (s Spec) MarshalJSON() ([]byte, error) {
	j := specJSON{plainSpec: plainSpec(s)}
	str := func(v string) *string { return &v }
	if s.Target.Network != "" {
		j.Target = str(s.Target.String())
	}
	if s.Allow.IsValid() {
		j.Allow = str(s.Allow.String())
	}
	for _, f := range j.durations() {
		if *f.d != 0 {
			*f.str = str(f.d.String())
		}
	}
	j.putTLS(s.TLS)
	return json.Marshal(j)
}

// UnmarshalJSON reads the form MarshalJSON writes over s's values.
func (s *Spec) UnmarshalJSON(b []byte) error {
	j := specJSON{plainSpec: plainSpec(*s)}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&j); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field != "" {
			// The key, without the path through the embedded structs.
			key := te.Field[strings.LastIndex(te.Field, ".")+1:]
			return &FieldError{key, fmt.Errorf("want a JSON %s", te.Type)}
		}
		return err
	}
	if j.Target != nil {
		t, err := ParseURL(*j.Target)
		if err != nil {
			return &FieldError{"target", err}
		}
		j.plainSpec.Target = t
	}
	if j.Allow != nil {
		j.plainSpec.Allow = netip.Addr{}
		if *j.Allow != "" {
			a, err := netip.ParseAddr(*j.Allow)
			if err != nil {
				return &FieldError{"allow", err}
			}
			j.plainSpec.Allow = a
		}
	}
	for _, f := range j.durations() {
		if *f.str == nil {
			continue
		}
		d, err := time.ParseDuration(**f.str)
		if err != nil {
			return &FieldError{f.key, fmt.Errorf("%q: want a Go duration such as \"15s\"", **f.str)}
		}
		*f.d = d
	}
	if err := j.getTLS(&j.plainSpec.TLS); err != nil {
		return err
	}
	*s = Spec(j.plainSpec)
	return nil
}
