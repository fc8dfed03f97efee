package main

import (
	"context"
	"errors"
	"io"
)

// TODO(owner): placeholder until the subcommand lands.
func runNginxConf(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return errors.New("nginxconf: not yet implemented")
}
