package swarmtest

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// othersCanLock reports whether another open file, as another test binary
// has, can take the lock now.
func othersCanLock(t *testing.T) bool {
	f, err := os.OpenFile(lockPath, os.O_CREATE|os.O_RDWR, 0o644)
	require.NoError(t, err)
	defer f.Close()
	return syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) == nil
}

// TestLockHost: a test binary's LockHost calls nest (New takes it again
// inside a test holding it) and other binaries wait until the last hold
// ends.
func TestLockHost(t *testing.T) {
	// Not the real one: swarm tests of other packages may hold it now.
	lockPath = filepath.Join(t.TempDir(), "lock")
	t.Cleanup(func() { lockPath = LockPath })
	require.True(t, othersCanLock(t))
	t.Run("outer", func(t *testing.T) {
		LockHost(t)
		assert.False(t, othersCanLock(t))
		t.Run("inner", func(t *testing.T) {
			LockHost(t)
			assert.False(t, othersCanLock(t))
		})
		assert.False(t, othersCanLock(t), "the outer hold remains")
	})
	assert.True(t, othersCanLock(t), "released when the last hold ends")
}
