package wrk

import (
	_ "embed"
	"fmt"
	"os"
	"path/filepath"
)

// Script is the Lua script whose done() callback prints the exact figures
// Parse reads into Result.Script.
//
//go:embed script.lua
var Script string

// ScriptName is the file name WriteScript uses.
const ScriptName = "topobench.lua"

// WriteScript writes Script into dir (the run directory, so the script that
// produced a result is kept beside it) and returns its path for
// Options.Script.
func WriteScript(dir string) (string, error) {
	path := filepath.Join(dir, ScriptName)
	if err := os.WriteFile(path, []byte(Script), 0o644); err != nil {
		return "", fmt.Errorf("writing wrk script: %w", err)
	}
	return path, nil
}
