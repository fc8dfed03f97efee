package numfmt

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestCount(t *testing.T) {
	for in, want := range map[float64]string{0: "0", 999.4: "999", 999.5: "1,000", 128402.88: "128,403", 1234567: "1,234,567", -1500: "-1,500"} {
		assert.Equal(t, want, Count(in), "%v", in)
	}
}

func TestDur(t *testing.T) {
	for in, want := range map[time.Duration]string{
		177 * time.Microsecond: "177 µs", 1910 * time.Microsecond: "1.91 ms", 17130 * time.Microsecond: "17.1 ms",
		346680 * time.Microsecond: "347 ms", 1230 * time.Millisecond: "1.23 s",
	} {
		assert.Equal(t, want, Dur(in), "%v", in)
	}
}

func TestSmall(t *testing.T) {
	assert.Equal(t, "1 CPU", Plural(1, "CPU"))
	assert.Equal(t, "2 CPUs", Plural(2, "CPU"))
	assert.Equal(t, "5%", Pct(0.05))
	assert.Equal(t, "∞", HalfWidth(1/zero()))
	assert.Equal(t, "3%", HalfWidth(0.03))
	assert.Equal(t, "12 MiB", Bytes(12<<20))
	assert.Equal(t, "12 KiB", Bytes(12<<10))
	assert.Equal(t, "unknown", Bytes(0))
	assert.Equal(t, "9.5", Micros(9.5))
	assert.Equal(t, "12", Micros(12.4))
	assert.Equal(t, "0.400", Figure(0.4))
	assert.Equal(t, "1,234", Figure(1234))
}

func zero() float64 { return 0 }
