package main

import (
	"context"
	"errors"
	"io"
)

// TODO(owner): placeholder until the subcommand lands.
func runParity(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return errors.New("parity: not yet implemented")
}
