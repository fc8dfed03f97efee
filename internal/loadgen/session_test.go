package loadgen

import (
	"context"
	"encoding/json"
	"encoding/pem"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/topobench/topobench/internal/load"
	"github.com/topobench/topobench/internal/results"
)

// fakeClient answers a session's commands without an engine, logging them.
type fakeClient struct {
	log []string
}

func (c *fakeClient) Open(_ context.Context, name string, s load.Spec) error {
	c.log = append(c.log, "open "+name+" "+s.Target.String())
	return nil
}

func (c *fakeClient) Window(_ context.Context, name string, lead, d time.Duration, _ []string) (engineWindow, error) {
	line := "window " + name + " " + d.String()
	w := engineWindow{
		Figures:    results.Figures{Requests: 2000, ReqPerSec: 1000},
		CPU:        results.Usage{User: 0.2, System: 0.1},
		Reconnects: 3, Drain: 40 * time.Millisecond, Drained: 120,
		Histogram: []byte("HISTFAAAA\n"), Raw: []byte(`{"requests":2000}`),
	}
	if lead > 0 {
		line += " lead " + lead.String()
		w.Lead, w.LeadAnswers = lead, 300
	}
	c.log = append(c.log, line)
	return w, nil
}

func (c *fakeClient) Close(_ context.Context, name string) error {
	c.log = append(c.log, "close "+name)
	return nil
}

func (c *fakeClient) Quit() error {
	c.log = append(c.log, "quit")
	return nil
}

// TestEngineSession: the session child is started once, each window's
// record holds what the session answered (figures, the load's CPU, the
// drain, the lead, the reconnects, the histogram beside it), the paired
// design's lead goes to measured windows only, and end closes the child's
// input and waits for it. A script that reads its input until it
// closes stands in for the engine.
func TestEngineSession(t *testing.T) {
	dir := t.TempDir()
	cat := filepath.Join(dir, "engine")
	require.NoError(t, os.WriteFile(cat, []byte("#!/bin/sh\nexec cat >/dev/null\n"), 0o755))
	require.NoError(t, results.Create(dir))
	client := &fakeClient{}
	p := smallPlan("standalone")
	p.Paired = &results.Paired{Pairs: 1, Lead: 500 * time.Millisecond}
	g := &builtinGen{plan: p, bin: cat, dir: dir, client: func(w io.Writer, r io.Reader) engineClient { return client }}
	sess, err := g.Begin(context.Background(), true)
	require.NoError(t, err)
	require.True(t, sess.Keeps())
	c := results.Cell{Topology: "standalone", GOMAXPROCS: 1, Connections: 100, Load: results.LoadBuiltin, Rep: 1}
	require.NoError(t, sess.Open(context.Background(), "standalone", c, "http://127.0.0.1:8080/"))
	_, err = sess.Window(context.Background(), "standalone", time.Second, nil)
	require.NoError(t, err, "a warmup window")
	run := results.Run{Cell: c}
	raw, err := sess.Window(context.Background(), "standalone", 2*time.Second, &run)
	require.NoError(t, err)
	assert.JSONEq(t, `{"requests":2000}`, string(raw))
	require.NotNil(t, run.Figures)
	assert.Equal(t, int64(2000), run.Figures.Requests)
	assert.InDelta(t, 0.3, run.CPU.Load.Total(), 1e-9)
	assert.Equal(t, 40*time.Millisecond, run.Drain)
	assert.Equal(t, int64(3), run.Reconnects)
	assert.Equal(t, 500*time.Millisecond, run.Lead)
	assert.Equal(t, int64(2420), run.ServedRequests(), "the servers served the lead and the drain too")
	assert.Equal(t, []string{cat, "load", "-session", "window", "standalone", "2s", "lead", "500ms"}, run.Command)
	b, err := os.ReadFile(filepath.Join(dir, results.RunsDir, c.Key()+".hdr"))
	require.NoError(t, err)
	assert.Equal(t, "HISTFAAAA\n", string(b))
	_, err = sess.Window(context.Background(), "nginx-http", time.Second, &results.Run{})
	require.ErrorContains(t, err, `no pool "nginx-http" open`)
	require.NoError(t, sess.Close(context.Background(), "standalone"))
	require.NoError(t, sess.End(), "cat exits when its input closes")
	assert.Equal(t, []string{"open standalone http://127.0.0.1:8080/", "window standalone 1s", "window standalone 2s lead 500ms", "close standalone", "quit"}, client.log)

	_, err = (&builtinGen{plan: p, bin: cat, dir: dir}).Begin(context.Background(), true)
	require.ErrorContains(t, err, "not in this build", "an engine without a session says so")
}

// TestEngineWindowBatching: a real session's window on the event loops
// reaches the record with its batching figure (ready connections per
// wake-up) and its loops, in the figures and their JSON.
func TestEngineWindowBatching(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "Hello World\n") }))
	t.Cleanup(srv.Close)
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- load.ServeSession(context.Background(), inR, outW, 1); outW.Close() }()
	t.Cleanup(func() { inW.Close(); require.NoError(t, <-done) })
	c := newEngineClient(inW, outR)

	spec := load.DefaultSpec()
	tg, err := load.ParseURL(srv.URL + "/")
	require.NoError(t, err)
	spec.Target, spec.Connections, spec.Threads = tg, 8, 4
	ctx := context.Background()
	require.NoError(t, c.Open(ctx, "a", spec))
	w, err := c.Window(ctx, "a", 0, 200*time.Millisecond, nil)
	require.NoError(t, err)
	require.Positive(t, w.Figures.Requests)
	assert.Equal(t, 4, w.Figures.Threads)
	assert.GreaterOrEqual(t, w.Figures.ReadyPerWake, 1.0)
	assert.LessOrEqual(t, w.Figures.ReadyPerWake, 2.0, "a loop has 2 connections")
	b, err := json.Marshal(w.Figures)
	require.NoError(t, err)
	var back results.Figures
	require.NoError(t, json.Unmarshal(b, &back))
	assert.Equal(t, w.Figures.ReadyPerWake, back.ReadyPerWake, "recorded as %s", b)
	require.NoError(t, c.Close(ctx, "a"))
	require.NoError(t, c.Quit())
}

// TestEngineSessionTLS: a real session's pool opened from the spec an
// https:// cell gets (WithTLS) speaks TLS to a real TLS server, trusting
// only the certificate it was given.
func TestEngineSessionTLS(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "Hello World\n") }))
	t.Cleanup(srv.Close)
	ca := filepath.Join(t.TempDir(), "ca.pem")
	require.NoError(t, os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o644))
	p := smallPlan("standalone-tls")
	p.Loads = []results.Generator{results.LoadBuiltin}
	gen, err := NewBuiltin(p, t.TempDir(), WithBin("/bin/topobench"), WithTLS(load.TLS{CA: ca}))
	require.NoError(t, err)
	cell := results.Cell{Topology: "standalone-tls", GOMAXPROCS: 1, Connections: 4, Load: results.LoadBuiltin, Rep: 1}
	spec, err := gen.(*builtinGen).spec(cell, srv.URL+"/", time.Second, false)
	require.NoError(t, err)

	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- load.ServeSession(context.Background(), inR, outW, 1); outW.Close() }()
	t.Cleanup(func() { inW.Close(); require.NoError(t, <-done) })
	c := newEngineClient(inW, outR)
	ctx := context.Background()
	require.NoError(t, c.Open(ctx, "tls", spec))
	w, err := c.Window(ctx, "tls", 0, 200*time.Millisecond, nil)
	require.NoError(t, err)
	assert.Positive(t, w.Figures.Requests)
	assert.Zero(t, w.Figures.Errors, "%+v", w.Figures.Errors)
	require.NoError(t, c.Close(ctx, "tls"))
	require.NoError(t, c.Quit())
}
