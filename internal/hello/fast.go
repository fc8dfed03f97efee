package hello

import (
	"context"
	"errors"
	"net"

	"github.com/topobench/topobench/internal/fastcgi"
)

// fastServer runs internal/fastcgi.
type fastServer struct {
	l   net.Listener
	srv *fastcgi.Server
}

func newFastServer(l net.Listener, opt Options) (*fastServer, error) {
	return &fastServer{l: l, srv: &fastcgi.Server{Handler: opt.Handler}}, nil
}

func (s *fastServer) serve() error {
	err := s.srv.Serve(s.l)
	if errors.Is(err, fastcgi.ErrServerClosed) {
		return nil
	}
	return err
}

func (s *fastServer) shutdown(ctx context.Context) error {
	return s.srv.Shutdown(ctx)
}
