package main

import (
	"os"
	"testing"

	"github.com/topobench/topobench/internal/testenv"
)

// runAsMainEnv makes the test binary act as topobench itself: the sweep
// runs the built-in engine as "<its own binary> load ...", and under go
// test its own binary is this one.
const runAsMainEnv = "TOPOBENCH_TEST_RUN_AS_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(runAsMainEnv) == "1" {
		main()
		return
	}
	code := m.Run()
	testenv.Cleanup() // the examples/jsonapi build
	os.Exit(code)
}
