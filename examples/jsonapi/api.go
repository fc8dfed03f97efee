package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"os"
	"sync"
	"syscall"
	"time"
)

type config struct {
	listen, unix      string
	readHeaderTimeout time.Duration
	readTimeout       time.Duration
	writeTimeout      time.Duration
	idleTimeout       time.Duration
	grace             time.Duration
}

func parseArgs(args []string, stderr io.Writer) (config, error) {
	flags := flag.NewFlagSet("jsonapi", flag.ContinueOnError)
	flags.SetOutput(io.Discard)
	var c config
	flags.StringVar(&c.listen, "listen", "127.0.0.1:8090", "HTTP on TCP `address` (empty: off)")
	flags.StringVar(&c.unix, "unix", "", "HTTP on a unix socket `path` as well")
	flags.DurationVar(&c.readHeaderTimeout, "read-header-timeout", 5*time.Second, "limit for reading a request header")
	flags.DurationVar(&c.readTimeout, "read-timeout", 10*time.Second, "limit for reading a whole request")
	flags.DurationVar(&c.writeTimeout, "write-timeout", 10*time.Second, "limit for writing a response")
	flags.DurationVar(&c.idleTimeout, "idle-timeout", 2*time.Minute, "close kept-alive connections idle this long")
	flags.DurationVar(&c.grace, "grace", 5*time.Second, "time in-flight requests get after SIGTERM")
	if err := flags.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(stderr, "usage: jsonapi [-listen ADDR] [-unix PATH] [flags]")
			flags.SetOutput(stderr)
			flags.PrintDefaults()
			return c, err
		}
		return c, usageError{err}
	}
	if flags.NArg() > 0 {
		return c, usageError{fmt.Errorf("unexpected argument %q", flags.Arg(0))}
	}
	if c.listen == "" && c.unix == "" {
		return c, usageError{errors.New("give -listen ADDR, -unix PATH or both")}
	}
	if c.listen != "" {
		if _, _, err := net.SplitHostPort(c.listen); err != nil {
			return c, usageError{fmt.Errorf("-listen: %q is not a host:port address", c.listen)}
		}
	}
	for _, d := range []struct {
		name string
		v    time.Duration
	}{{"read-header-timeout", c.readHeaderTimeout}, {"read-timeout", c.readTimeout},
		{"write-timeout", c.writeTimeout}, {"idle-timeout", c.idleTimeout}, {"grace", c.grace}} {
		if d.v <= 0 {
			return c, usageError{fmt.Errorf("-%s: must be positive, got %v", d.name, d.v)}
		}
	}
	return c, nil
}

// Item is one entry of the document.
type Item struct {
	ID    int      `json:"id"`
	Name  string   `json:"name"`
	Price float64  `json:"price"`
	Tags  []string `json:"tags"`
}

// Document is what every GET gets.
type Document struct {
	Path  string `json:"path"`
	Count int    `json:"count"`
	Items []Item `json:"items"`
}

var items = []Item{
	{1, "espresso", 2.5, []string{"coffee", "hot"}},
	{2, "flat white", 3.2, []string{"coffee", "milk", "hot"}},
	{3, "cold brew", 3.8, []string{"coffee", "cold"}},
	{4, "green tea", 2.1, []string{"tea", "hot"}},
	{5, "lemonade", 2.9, []string{"cold", "sweet"}},
}

// api answers every GET and HEAD with the Document for its path.
func api(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		h.Set("Allow", "GET, HEAD")
		w.WriteHeader(http.StatusMethodNotAllowed)
		json.NewEncoder(w).Encode(map[string]string{"error": "method not allowed"})
		return
	}
	b, err := json.Marshal(Document{Path: r.URL.Path, Count: len(items), Items: items})
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	b = append(b, '\n')
	h.Set("Content-Length", fmt.Sprint(len(b)))
	if r.Method == http.MethodGet {
		w.Write(b)
	}
}

// listen opens the listeners cfg asks for.
func listen(cfg config) ([]net.Listener, error) {
	var ls []net.Listener
	if cfg.listen != "" {
		l, err := net.Listen("tcp", cfg.listen)
		if err != nil {
			return nil, fmt.Errorf("-listen: %w", err)
		}
		ls = append(ls, l)
	}
	if cfg.unix != "" {
		if err := clearStale(cfg.unix); err != nil {
			closeAll(ls)
			return nil, fmt.Errorf("-unix: %w", err)
		}
		l, err := net.Listen("unix", cfg.unix)
		if err != nil {
			closeAll(ls)
			return nil, fmt.Errorf("-unix: %w", err)
		}
		// nginx's workers may run as another user.
		if err := os.Chmod(cfg.unix, 0o666); err != nil {
			closeAll(append(ls, l))
			return nil, fmt.Errorf("-unix: %w", err)
		}
		ls = append(ls, l)
	}
	return ls, nil
}

func closeAll(ls []net.Listener) {
	for _, l := range ls {
		l.Close()
	}
}

// clearStale removes a socket file nobody listens on (left by a crash)
// and refuses anything else at path.
func clearStale(path string) error {
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if fi.Mode().Type() != fs.ModeSocket {
		return fmt.Errorf("%s exists and is not a socket", path)
	}
	c, err := net.DialTimeout("unix", path, time.Second)
	if err == nil {
		c.Close()
		return fmt.Errorf("%s: another server is listening there", path)
	}
	if !errors.Is(err, syscall.ECONNREFUSED) {
		return fmt.Errorf("%s: %w", path, err)
	}
	return os.Remove(path)
}

// serve runs the API on every listener until ctx ends, then shuts down
// within cfg.grace.
func serve(ctx context.Context, cfg config, stderr io.Writer) error {
	ls, err := listen(cfg)
	if err != nil {
		return err
	}
	srv := &http.Server{
		Handler:           http.HandlerFunc(api),
		ReadHeaderTimeout: cfg.readHeaderTimeout,
		ReadTimeout:       cfg.readTimeout,
		WriteTimeout:      cfg.writeTimeout,
		IdleTimeout:       cfg.idleTimeout,
		MaxHeaderBytes:    64 << 10,
	}
	errc := make(chan error, len(ls))
	var wg sync.WaitGroup
	for _, l := range ls {
		fmt.Fprintf(stderr, "jsonapi: listening on %s %s\n", l.Addr().Network(), l.Addr())
		wg.Go(func() {
			if err := srv.Serve(l); !errors.Is(err, http.ErrServerClosed) {
				errc <- fmt.Errorf("serving on %s: %w", l.Addr(), err)
			}
		})
	}
	var serveErr error
	select {
	case <-ctx.Done():
	case serveErr = <-errc:
	}
	sctx, cancel := context.WithTimeout(context.Background(), cfg.grace)
	defer cancel()
	err = srv.Shutdown(sctx)
	if err != nil {
		srv.Close()
		err = fmt.Errorf("requests still in flight after %v; closed: %w", cfg.grace, err)
	}
	wg.Wait()
	closeAll(ls) // removes the unix socket file
	return errors.Join(serveErr, err)
}
