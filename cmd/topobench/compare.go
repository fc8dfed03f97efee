package main

import (
	"context"
	"errors"
	"io"
)

// TODO(owner): placeholder until the subcommand lands.
func runCompare(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return errors.New("compare: not yet implemented")
}
