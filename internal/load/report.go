package load

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// A report is how a generator on another machine hands its run back
// through a channel that carries only text lines, such as a container's
// log: the summary as JSON on one marked line, then the encoded histogram
// (hdr.WriteEncoded's base64) cut into numbered marked lines short enough
// that no log driver splits them (Docker's cuts lines at 16 KiB).
//
//	topobench-summary {"target":...}
//	topobench-hdr 1/2 HISTFAAA...
//	topobench-hdr 2/2 ...
//
// ReadReport finds the markers anywhere in a line, so prefixes a log
// collector adds (task names, timestamps) do no harm.
const (
	summaryMark = "topobench-summary "
	hdrMark     = "topobench-hdr "
	hdrChunk    = 4000
)

// ErrNoReport is returned by ReadReport for output holding no complete
// report.
var ErrNoReport = errors.New("no topobench report in the output")

// WriteReport writes res as a report.
func WriteReport(w io.Writer, res *Result) error {
	js, err := json.Marshal(res.Summary)
	if err != nil {
		return err
	}
	enc, err := res.Histogram.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
	if err != nil {
		return fmt.Errorf("encoding histogram: %w", err)
	}
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "%s%s\n", summaryMark, js)
	n := (len(enc) + hdrChunk - 1) / hdrChunk
	for i := range n {
		fmt.Fprintf(bw, "%s%d/%d %s\n", hdrMark, i+1, n, enc[i*hdrChunk:min((i+1)*hdrChunk, len(enc))])
	}
	return bw.Flush()
}

// ReadReport reads the report written by WriteReport out of r, skipping
// other lines; its histogram is the generator's, exactly.
func ReadReport(r io.Reader) (*Result, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	var (
		res    Result
		found  bool
		chunks []string
		total  int
		line   int
	)
	for sc.Scan() {
		line++
		text := sc.Text()
		if i := strings.Index(text, summaryMark); i >= 0 {
			if found {
				return nil, fmt.Errorf("report line %d: a second summary", line)
			}
			if err := json.Unmarshal([]byte(text[i+len(summaryMark):]), &res.Summary); err != nil {
				return nil, fmt.Errorf("report line %d: summary: %w", line, err)
			}
			found = true
			continue
		}
		i := strings.Index(text, hdrMark)
		if i < 0 {
			continue
		}
		pos, data, ok := strings.Cut(text[i+len(hdrMark):], " ")
		num, of, ok2 := strings.Cut(pos, "/")
		k, err1 := strconv.Atoi(num)
		n, err2 := strconv.Atoi(of)
		if !ok || !ok2 || err1 != nil || err2 != nil || n < 1 || k < 1 || k > n {
			return nil, fmt.Errorf("report line %d: histogram chunk: want K/N DATA", line)
		}
		if total == 0 {
			total, chunks = n, make([]string, n)
		}
		if n != total || chunks[k-1] != "" {
			return nil, fmt.Errorf("report line %d: histogram chunk %d/%d does not fit the chunks before it", line, k, n)
		}
		chunks[k-1] = strings.TrimSpace(data)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if !found && total == 0 {
		return nil, ErrNoReport
	}
	if !found {
		return nil, fmt.Errorf("%w: histogram without summary", ErrNoReport)
	}
	if total == 0 {
		return nil, fmt.Errorf("%w: summary without histogram", ErrNoReport)
	}
	for k, c := range chunks {
		if c == "" {
			return nil, fmt.Errorf("%w: histogram chunk %d/%d missing", ErrNoReport, k+1, total)
		}
	}
	h, err := hdrhistogram.Decode(bytes.TrimSpace([]byte(strings.Join(chunks, ""))))
	if err != nil {
		return nil, fmt.Errorf("report: decoding histogram: %w", err)
	}
	res.Histogram = h
	return &res, nil
}
