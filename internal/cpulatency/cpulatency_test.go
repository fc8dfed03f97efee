package cpulatency

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestAcquire(t *testing.T) {
	t.Run("writes a zero and holds the file", func(t *testing.T) {
		dev := filepath.Join(t.TempDir(), "dev")
		require.NoError(t, os.WriteFile(dev, []byte{9, 9, 9, 9, 9}, 0o600))
		h, err := Acquire(dev)
		require.NoError(t, err)
		b, err := os.ReadFile(dev)
		require.NoError(t, err)
		assert.Equal(t, uint32(0), binary.NativeEndian.Uint32(b[:4]))
		require.NoError(t, h.Release())
		assert.NoError(t, h.Release(), "a second release is a no-op")
	})
	t.Run("a missing device names itself", func(t *testing.T) {
		_, err := Acquire(filepath.Join(t.TempDir(), "none"))
		require.Error(t, err)
		assert.ErrorIs(t, err, os.ErrNotExist)
		assert.Contains(t, err.Error(), "holding cpu latency at 0")
	})
	t.Run("the kernel's device", func(t *testing.T) {
		if testing.Short() {
			t.Skip("-short: no kernel device")
		}
		if os.Geteuid() != 0 {
			t.Skip("needs root to write " + Device)
		}
		h, err := Acquire(Device)
		require.NoError(t, err)
		assert.NoError(t, h.Release())
	})
}
