package rig

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestNoPairNoNamespaces: a rig without namespaces, or none at all, puts
// the servers and the load on loopback, and has nothing to close.
func TestNoPairNoNamespaces(t *testing.T) {
	for name, r := range map[string]*Rig{"nil": nil, "new": New(Config{})} {
		t.Run(name, func(t *testing.T) {
			assert.False(t, r.Isolated())
			assert.Empty(t, r.ServerNS())
			assert.Empty(t, r.ClientNS())
			assert.False(t, r.LoadTarget().IsValid(), "load goes to loopback only")
			assert.Nil(t, r.NetnsSysctls())
			r.CloseNetns() // nothing to close
		})
	}
}

// TestCopySysctlsWithoutSysctl: a minimal root without procps gets the
// install step named, not ip's exit status.
func TestCopySysctlsWithoutSysctl(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	err := copySysctls(context.Background(), "tb-0-0-srv", map[string]string{"net.core.somaxconn": "4096"})
	require.Error(t, err)
	assert.Equal(t, "copying network settings into namespace tb-0-0-srv: sysctl not found in PATH (procps: .ci/install-tools)", err.Error())
	assert.NoError(t, copySysctls(context.Background(), "tb-0-0-srv", map[string]string{"fs.file-max": "2097152"}), "nothing per namespace to copy")
}
