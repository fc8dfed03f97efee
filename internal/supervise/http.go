package supervise

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"time"
)

// RestartRequest is the body of POST /restart.
type RestartRequest struct {
	// Env are NAME=VALUE pairs for the new copy (names from Config.Env).
	Env []string `json:"env,omitempty"`
}

// Handler serves the supervisor's API:
//
//	GET  /healthz  200 when the program runs and answered its Ready targets, else 503
//	GET  /status   the Status as JSON
//	POST /restart  body RestartRequest; stops the program, starts it again, waits
//	               until it is ready; 200 with the Status, 400 for a refused
//	               request, 503 with the Status (Error set) when the start failed
//	POST /stop     stops the program; 200 with the Status, 500 (Error set) when
//	               it had to be killed
//	GET  /cpu      the CPU time of the program's process tree so far (CPU) as
//	               JSON; 503 with {"error": ...} when it does not run
//
// The API is for programs, not browsers: a browser on the host could
// otherwise be made to restart the program by any web page. Every request
// must name a loopback address or localhost as its Host (a page that
// rebinds its DNS name to 127.0.0.1 sends its own name) and carry no
// Origin header (browsers send one on cross-origin requests and on every
// POST), else 403; a POST must be Content-Type: application/json, else
// 415, which a page can only send after a CORS preflight the API never
// grants.
//
// Config.AllowHosts adds addresses a Host may name besides loopback: the
// address of a node whose harness runs on another machine (procd
// -allow-host). The Origin and Content-Type rules still hold.
func (s *Supervisor) Handler() http.Handler {
	return guard(s.mux(), s.cfg.AllowHosts)
}

// guard applies Handler's rules on Host, Origin and Content-Type.
func guard(next http.Handler, allow []netip.Addr) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !loopbackHost(r.Host) && !allowedHost(r.Host, allow) {
			http.Error(w, fmt.Sprintf("Host %q refused: the API answers only a loopback address, localhost or an address given with -allow-host", r.Host), http.StatusForbidden)
			return
		}
		if o := r.Header.Get("Origin"); o != "" {
			http.Error(w, fmt.Sprintf("Origin %q refused: the API is not for browsers", o), http.StatusForbidden)
			return
		}
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
				http.Error(w, r.Method+" needs Content-Type: application/json", http.StatusUnsupportedMediaType)
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

// loopbackHost reports whether a Host header names localhost or a loopback
// address, with or without a port.
func loopbackHost(host string) bool {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// allowedHost reports whether a Host header names one of allow (an
// address, never a name: a name can be rebound), with or without a port.
func allowedHost(host string, allow []netip.Addr) bool {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	a, err := netip.ParseAddr(strings.TrimSuffix(strings.TrimPrefix(host, "["), "]"))
	if err != nil {
		return false
	}
	for _, b := range allow {
		if a.Unmap() == b.Unmap() {
			return true
		}
	}
	return false
}

func (s *Supervisor) mux() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		st := s.Status()
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		if !st.Running || !st.Ready {
			w.WriteHeader(http.StatusServiceUnavailable)
			why := st.Error
			if why == "" {
				why = "not running"
			}
			fmt.Fprintf(w, "%s: %s\n", s.Name(), why)
			return
		}
		fmt.Fprintf(w, "%s ready, pid %d\n", s.Name(), st.Pid)
	})
	mux.HandleFunc("GET /status", func(w http.ResponseWriter, r *http.Request) {
		writeStatus(w, http.StatusOK, s.Status())
	})
	mux.HandleFunc("POST /restart", func(w http.ResponseWriter, r *http.Request) {
		var req RestartRequest
		body, err := io.ReadAll(io.LimitReader(r.Body, 1<<16))
		if err == nil && len(strings.TrimSpace(string(body))) > 0 {
			err = json.Unmarshal(body, &req)
		}
		if err != nil {
			http.Error(w, "restart request: "+err.Error(), http.StatusBadRequest)
			return
		}
		if err := s.checkEnv(req.Env); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		st, err := s.Start(r.Context(), req.Env)
		if err != nil {
			writeStatus(w, http.StatusServiceUnavailable, st)
			return
		}
		writeStatus(w, http.StatusOK, st)
	})
	mux.HandleFunc("GET /cpu", s.serveCPU)
	mux.HandleFunc("POST /stop", func(w http.ResponseWriter, r *http.Request) {
		if err := s.Stop(); err != nil {
			st := s.Status()
			st.Error = err.Error()
			writeStatus(w, http.StatusInternalServerError, st)
			return
		}
		writeStatus(w, http.StatusOK, s.Status())
	})
	return mux
}

func writeStatus(w http.ResponseWriter, code int, st Status) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(st)
}

// Client talks to a supervisor's API.
type Client struct {
	// URL is the supervisor's base URL, e.g. http://127.0.0.1:7070.
	URL string
	// HTTP is the client to use; http.DefaultClient if nil. Restart can take
	// as long as stopping, preparing and readying the program: bound it with
	// the context rather than a client timeout.
	HTTP *http.Client
}

// Restart stops the program and starts it again with env (NAME=VALUE
// pairs), returning once it is ready. A failed start comes back as an error
// carrying the supervisor's account, stderr tail included.
func (c Client) Restart(ctx context.Context, env ...string) (Status, error) {
	body, err := json.Marshal(RestartRequest{Env: env})
	if err != nil {
		return Status{}, err
	}
	st, err := c.do(ctx, http.MethodPost, "/restart", string(body))
	if err != nil {
		return st, fmt.Errorf("restarting via %s: %w", c.URL, err)
	}
	return st, nil
}

// Stop stops the program.
func (c Client) Stop(ctx context.Context) (Status, error) {
	st, err := c.do(ctx, http.MethodPost, "/stop", "")
	if err != nil {
		return st, fmt.Errorf("stopping via %s: %w", c.URL, err)
	}
	return st, nil
}

// Status asks for the program's state; Status.Error says why it exited if
// it did so on its own.
func (c Client) Status(ctx context.Context) (Status, error) {
	st, err := c.do(ctx, http.MethodGet, "/status", "")
	if err != nil {
		return st, fmt.Errorf("asking %s: %w", c.URL, err)
	}
	return st, nil
}

func (c Client) do(ctx context.Context, method, path, body string) (Status, error) {
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, strings.TrimSuffix(c.URL, "/")+path, rd)
	if err != nil {
		return Status{}, err
	}
	if method == http.MethodPost {
		// The API refuses a POST of any other type (see Handler).
		req.Header.Set("Content-Type", "application/json")
	}
	hc := c.HTTP
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(req)
	if err != nil {
		return Status{}, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return Status{}, err
	}
	var st Status
	if jerr := json.Unmarshal(data, &st); jerr != nil {
		return Status{}, fmt.Errorf("%s: %s", resp.Status, strings.TrimSpace(string(data)))
	}
	if resp.StatusCode != http.StatusOK {
		if st.Error != "" {
			return st, errors.New(st.Error)
		}
		return st, errors.New(resp.Status)
	}
	return st, nil
}

// Check sends one GET to url (a supervisor's /healthz, for a container
// healthcheck) and succeeds on 200; otherwise the error carries the answer.
func Check(ctx context.Context, url string, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<16))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %s: %s", url, resp.Status, strings.TrimSpace(string(data)))
	}
	return nil
}
