package hello

import (
	"context"
	"errors"
	"fmt"
	"net"

	"github.com/topobench/topobench/internal/fastcgi"
)

// fastServer runs internal/fastcgi.
type fastServer struct {
	l   net.Listener
	srv *fastcgi.Server
}

func newFastServer(l net.Listener, opt Options) (*fastServer, error) {
	return &fastServer{l: l, srv: &fastcgi.Server{
		Handler:           opt.Handler,
		ReadHeaderTimeout: opt.ReadHeaderTimeout,
		IdleTimeout:       opt.IdleTimeout,
		WriteTimeout:      opt.WriteTimeout,
		ErrorLog:          opt.ErrorLog,
	}}, nil
}

func (s *fastServer) serve() error {
	err := s.srv.Serve(s.l)
	if errors.Is(err, fastcgi.ErrServerClosed) {
		return nil
	}
	return err
}

func (s *fastServer) shutdown(ctx context.Context) (int, error) {
	if err := s.srv.Shutdown(ctx); err != nil {
		s.srv.Close()
		return s.srv.Cut(), fmt.Errorf("requests still in flight after the grace period; connections closed: %w", err)
	}
	return s.srv.Cut(), nil
}
