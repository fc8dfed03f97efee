package supervise

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCPUEndpoint: GET /cpu reports the program's CPU time as the agent's
// /proc has it, growing with the work the program does; with nothing
// running it says so instead of giving zeros.
func TestCPUEndpoint(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a program")
	}
	addr := freeAddr(t)
	s := newSupervisor(t, Config{
		Args:  []string{"helper", "serve", addr},
		Ready: []string{"http://" + addr + "/"},
	})
	api := httptest.NewServer(s.Handler())
	t.Cleanup(api.Close)
	c := Client{URL: api.URL}
	ctx := context.Background()

	_, err := c.CPU(ctx)
	require.Error(t, err, "nothing runs yet")
	assert.Contains(t, err.Error(), ErrNotRunning.Error())

	st, err := c.Restart(ctx)
	require.NoError(t, err)
	before, err := c.CPU(ctx)
	require.NoError(t, err)
	assert.Equal(t, st.Pid, before.Pid)
	get(t, "http://"+addr+"/burn")
	after, err := c.CPU(ctx)
	require.NoError(t, err)
	used := after.Times().Sub(before.Times()).Total()
	assert.GreaterOrEqual(t, used.Seconds(), 0.25, "300 ms of CPU time shows (before %+v, after %+v)", before, after)
	assert.Less(t, used.Seconds(), 5.0)

	_, err = c.Stop(ctx)
	require.NoError(t, err)
	resp, err := http.Get(api.URL + "/cpu")
	require.NoError(t, err)
	defer resp.Body.Close()
	assert.Equal(t, http.StatusServiceUnavailable, resp.StatusCode)
	var body map[string]any
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&body))
	assert.Equal(t, ErrNotRunning.Error(), body["error"])
}

// TestCPUFromAnOldAgent: an agent without the endpoint is an error, not
// a zero: the figure was not measured.
func TestCPUFromAnOldAgent(t *testing.T) {
	old := httptest.NewServer(http.NotFoundHandler())
	t.Cleanup(old.Close)
	_, err := Client{URL: old.URL}.CPU(context.Background())
	require.Error(t, err)
	assert.Contains(t, err.Error(), "404")
}
