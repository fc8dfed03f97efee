package main

import (
	"context"
	"errors"
	"io"
)

// TODO(owner): placeholder until the subcommand lands.
func runPreflight(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return errors.New("preflight: not yet implemented")
}
