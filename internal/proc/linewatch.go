package proc

import (
	"bytes"
	"sync"
)

// LineWatch is a Writer (for a child's stderr) that closes Found once a line
// starting with a prefix goes through it, such as a server's ready line.
type LineWatch struct {
	prefix []byte
	found  chan struct{}
	mu     sync.Mutex
	line   []byte
	done   bool
	match  string
}

// NewLineWatch returns a LineWatch for lines starting with prefix.
func NewLineWatch(prefix string) *LineWatch {
	return &LineWatch{prefix: []byte(prefix), found: make(chan struct{})}
}

// Found is closed once the line has been written.
func (w *LineWatch) Found() <-chan struct{} { return w.found }

// Line is the line that closed Found, without its newline; empty before.
func (w *LineWatch) Line() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.match
}

func (w *LineWatch) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.done {
		return len(p), nil
	}
	rest := p
	for len(rest) > 0 {
		i := bytes.IndexByte(rest, '\n')
		if i < 0 {
			if len(w.line) < 4<<10 { // a line that long is not the one
				w.line = append(w.line, rest...)
			}
			break
		}
		w.line = append(w.line, rest[:i]...)
		if bytes.HasPrefix(w.line, w.prefix) {
			w.done = true
			w.match = string(w.line)
			close(w.found)
			break
		}
		w.line = w.line[:0]
		rest = rest[i+1:]
	}
	return len(p), nil
}
