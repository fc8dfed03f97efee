// Package hdr keeps latency samples as HdrHistogram histograms: the range
// every generator records in (1 µs to 60 s, 3 significant digits), the
// files beside a run's record (an encoded line, exact and mergeable, and
// HdrHistogram's percentile text), and the exact merge of several, whose
// percentiles are those of all the samples together.
package hdr

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// File names WriteFiles uses under its directory, after the name prefix.
const (
	EncodedExt     = ".hdr"  // base64 V2 compressed histogram, one line
	PercentilesExt = ".hgrm" // percentile distribution text, milliseconds
)

// WriteEncoded writes h in HdrHistogram's V2 compressed encoding as one line
// of base64, the form HdrHistogram's tools exchange; ReadEncoded reads it
// back exactly, and histograms so read merge without loss.
func WriteEncoded(w io.Writer, h *hdrhistogram.Histogram) error {
	b, err := h.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
	if err != nil {
		return fmt.Errorf("encoding histogram: %w", err)
	}
	_, err = fmt.Fprintf(w, "%s\n", b)
	return err
}

// ReadEncoded reads a histogram written by WriteEncoded.
func ReadEncoded(r io.Reader) (*hdrhistogram.Histogram, error) {
	b, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	h, err := hdrhistogram.Decode(bytes.TrimSpace(b))
	if err != nil {
		return nil, fmt.Errorf("decoding histogram: %w", err)
	}
	return h, nil
}

// WritePercentiles writes the percentile distribution as HdrHistogram's
// tools print it (.hgrm), values in milliseconds, 5 ticks per half
// distance.
func WritePercentiles(w io.Writer, h *hdrhistogram.Histogram) error {
	_, err := h.PercentilesPrint(w, 5, 1000)
	return err
}

// PercentileRow is one row of an .hgrm file.
type PercentileRow struct {
	ValueMs    float64
	Percentile float64 // 0 to 1
	TotalCount int64
}

// ReadPercentiles parses .hgrm text: the header line, then rows of value,
// percentile, total count and 1/(1-percentile); lines starting with # are
// the footer.
func ReadPercentiles(r io.Reader) ([]PercentileRow, error) {
	sc := bufio.NewScanner(r)
	var rows []PercentileRow
	line := 0
	for sc.Scan() {
		line++
		f := strings.Fields(sc.Text())
		if len(f) == 0 || strings.HasPrefix(f[0], "#") || f[0] == "Value" {
			continue
		}
		if len(f) != 4 {
			return nil, fmt.Errorf("hgrm line %d: want 4 fields, got %d", line, len(f))
		}
		v, err1 := strconv.ParseFloat(f[0], 64)
		p, err2 := strconv.ParseFloat(f[1], 64)
		n, err3 := strconv.ParseInt(f[2], 10, 64)
		if err1 != nil || err2 != nil || err3 != nil {
			return nil, fmt.Errorf("hgrm line %d: bad number in %q", line, sc.Text())
		}
		rows = append(rows, PercentileRow{ValueMs: v, Percentile: p, TotalCount: n})
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(rows) == 0 {
		return nil, fmt.Errorf("hgrm: no rows")
	}
	return rows, nil
}

// WriteFiles saves the histogram as DIR/NAME.hdr and DIR/NAME.hgrm.
func WriteFiles(dir, name string, h *hdrhistogram.Histogram) error {
	for _, f := range []struct {
		ext   string
		write func(io.Writer, *hdrhistogram.Histogram) error
	}{{EncodedExt, WriteEncoded}, {PercentilesExt, WritePercentiles}} {
		var b bytes.Buffer
		if err := f.write(&b, h); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, name+f.ext), b.Bytes(), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// ReadFile reads a histogram saved by WriteFiles (the .hdr file).
func ReadFile(path string) (*hdrhistogram.Histogram, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	h, err := ReadEncoded(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return h, nil
}

// The range every histogram records, in µs.
const (
	LowestMicros  = 1
	HighestMicros = 60_000_000
	SigFigs       = 3
)

// New returns an empty histogram with that range.
func New() *hdrhistogram.Histogram {
	return hdrhistogram.New(LowestMicros, HighestMicros, SigFigs)
}

// ErrMergeLoss is returned when a histogram holds values outside the
// range, which merging would drop.
var ErrMergeLoss = errors.New("histogram values outside the range")

// Merge returns one histogram holding every value of hs, as if all had
// been recorded into it: counts add bucket by bucket, so its percentiles
// are those of all the samples together. Averaging the generators'
// percentiles instead is wrong whenever they saw different distributions.
// The inputs are not changed.
func Merge(hs ...*hdrhistogram.Histogram) (*hdrhistogram.Histogram, error) {
	m := New()
	for i, h := range hs {
		if h == nil {
			return nil, fmt.Errorf("merging histogram %d: none", i)
		}
		if dropped := m.Merge(h); dropped > 0 {
			return nil, fmt.Errorf("merging histogram %d: %d values: %w", i, dropped, ErrMergeLoss)
		}
	}
	return m, nil
}
