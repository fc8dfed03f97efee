package report

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestShellJoin(t *testing.T) {
	assert.Equal(t, "topobench compare -targets 'cmd:./api -listen {addr}' -path '/api/x?page=2&n=1'",
		shellJoin([]string{"topobench", "compare", "-targets", "cmd:./api -listen {addr}", "-path", "/api/x?page=2&n=1"}),
		"a query's ? and & are quoted too")
	assert.Equal(t, `-targets 'go,cmd:'\''./api -tags a,b -listen {addr}'\'''`,
		shellJoin([]string{"-targets", "go,cmd:'./api -tags a,b -listen {addr}'"}))
	assert.Equal(t, "-out ''", shellJoin([]string{"-out", ""}))
}
