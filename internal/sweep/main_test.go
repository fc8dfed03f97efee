package sweep

import (
	"os"
	"testing"

	"github.com/topobench/topobench/internal/testenv"
)

func TestMain(m *testing.M) {
	code := m.Run()
	testenv.Cleanup()
	os.Exit(code)
}
