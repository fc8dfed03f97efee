// Package fcgiclient is a small, real FastCGI client (the tests, the
// readiness probes of cmd/hello and procd use it): it speaks to a
// FastCGI responder over TCP or a unix socket the way nginx does
// (BEGIN_REQUEST with FCGI_KEEP_CONN, the CGI parameters of nginx's
// fastcgi_params, STDIN, then STDOUT/STDERR until END_REQUEST) and returns
// the parsed response, so the same connection can carry many requests with
// the same request id.
//
// The low-level encoders (AppendHeader, AppendRecord, AppendPair, ...) and
// the record Reader are exported so conformance tests can build byte
// sequences no well-behaved client would send.
//
// The wire format is the FastCGI 1.0 specification.
package fcgiclient

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// Record types.
const (
	TypeBeginRequest    uint8 = 1
	TypeAbortRequest    uint8 = 2
	TypeEndRequest      uint8 = 3
	TypeParams          uint8 = 4
	TypeStdin           uint8 = 5
	TypeStdout          uint8 = 6
	TypeStderr          uint8 = 7
	TypeData            uint8 = 8
	TypeGetValues       uint8 = 9
	TypeGetValuesResult uint8 = 10
	TypeUnknownType     uint8 = 11
)

// Protocol constants.
const (
	Version1 uint8 = 1
	// HeaderLen is the size of a record header.
	HeaderLen = 8
	// MaxContent is the largest content one record can carry.
	MaxContent = 65535

	RoleResponder  uint16 = 1
	RoleAuthorizer uint16 = 2
	RoleFilter     uint16 = 3

	// FlagKeepConn asks the application not to close the connection after
	// the request.
	FlagKeepConn uint8 = 1
)

// Protocol status of an END_REQUEST record.
const (
	StatusRequestComplete uint8 = 0
	StatusCantMPXConn     uint8 = 1
	StatusOverloaded      uint8 = 2
	StatusUnknownRole     uint8 = 3
)

var typeNames = [...]string{
	TypeBeginRequest:    "BEGIN_REQUEST",
	TypeAbortRequest:    "ABORT_REQUEST",
	TypeEndRequest:      "END_REQUEST",
	TypeParams:          "PARAMS",
	TypeStdin:           "STDIN",
	TypeStdout:          "STDOUT",
	TypeStderr:          "STDERR",
	TypeData:            "DATA",
	TypeGetValues:       "GET_VALUES",
	TypeGetValuesResult: "GET_VALUES_RESULT",
	TypeUnknownType:     "UNKNOWN_TYPE",
}

// TypeName returns the specification's name of a record type.
func TypeName(t uint8) string {
	if int(t) < len(typeNames) && typeNames[t] != "" {
		return typeNames[t]
	}
	return fmt.Sprintf("type %d", t)
}

// Header is a record header as it appears on the wire.
type Header struct {
	Version       uint8
	Type          uint8
	ID            uint16
	ContentLength uint16
	PaddingLength uint8
	Reserved      uint8
}

// AppendHeader appends the 8 bytes of h.
func AppendHeader(dst []byte, h Header) []byte {
	return append(dst, h.Version, h.Type,
		byte(h.ID>>8), byte(h.ID),
		byte(h.ContentLength>>8), byte(h.ContentLength),
		h.PaddingLength, h.Reserved)
}

// ParseHeader decodes the first 8 bytes of b.
func ParseHeader(b []byte) (Header, error) {
	if len(b) < HeaderLen {
		return Header{}, fmt.Errorf("fcgi header: %d bytes, want %d", len(b), HeaderLen)
	}
	return Header{
		Version:       b[0],
		Type:          b[1],
		ID:            binary.BigEndian.Uint16(b[2:]),
		ContentLength: binary.BigEndian.Uint16(b[4:]),
		PaddingLength: b[6],
		Reserved:      b[7],
	}, nil
}

// padding returns what pads n bytes of content to a multiple of 8, as nginx
// and net/http/fcgi do.
func padding(n int) uint8 { return uint8(-n & 7) }

// AppendRecord appends content as records of type typ. Content longer than
// MaxContent is split over several records; empty content yields one empty
// record, which ends a stream (PARAMS, STDIN, STDOUT, ...). Each record is
// padded to a multiple of 8 bytes.
func AppendRecord(dst []byte, typ uint8, id uint16, content []byte) []byte {
	for {
		n := min(len(content), MaxContent)
		pad := padding(n)
		dst = AppendHeader(dst, Header{Version: Version1, Type: typ, ID: id, ContentLength: uint16(n), PaddingLength: pad})
		dst = append(dst, content[:n]...)
		for range pad {
			dst = append(dst, 0)
		}
		content = content[n:]
		if len(content) == 0 {
			return dst
		}
	}
}

// AppendStream appends content as a stream: its records followed by the
// empty record that closes the stream.
func AppendStream(dst []byte, typ uint8, id uint16, content []byte) []byte {
	if len(content) > 0 {
		dst = AppendRecord(dst, typ, id, content)
	}
	return AppendRecord(dst, typ, id, nil)
}

// AppendBeginRequest appends a BEGIN_REQUEST record.
func AppendBeginRequest(dst []byte, id, role uint16, flags uint8) []byte {
	body := [8]byte{byte(role >> 8), byte(role), flags}
	return AppendRecord(dst, TypeBeginRequest, id, body[:])
}

// BeginRequest is the body of a BEGIN_REQUEST record.
type BeginRequest struct {
	Role  uint16
	Flags uint8
}

// ParseBeginRequest decodes the content of a BEGIN_REQUEST record.
func ParseBeginRequest(content []byte) (BeginRequest, error) {
	if len(content) != 8 {
		return BeginRequest{}, fmt.Errorf("BEGIN_REQUEST body: %d bytes, want 8", len(content))
	}
	return BeginRequest{Role: binary.BigEndian.Uint16(content), Flags: content[2]}, nil
}

// EndRequest is the body of an END_REQUEST record.
type EndRequest struct {
	AppStatus      uint32
	ProtocolStatus uint8
}

// AppendEndRequest appends an END_REQUEST record (for fake servers in
// tests of this package's callers).
func AppendEndRequest(dst []byte, id uint16, e EndRequest) []byte {
	var body [8]byte
	binary.BigEndian.PutUint32(body[:], e.AppStatus)
	body[4] = e.ProtocolStatus
	return AppendRecord(dst, TypeEndRequest, id, body[:])
}

// ParseEndRequest decodes the content of an END_REQUEST record.
func ParseEndRequest(content []byte) (EndRequest, error) {
	if len(content) != 8 {
		return EndRequest{}, fmt.Errorf("END_REQUEST body: %d bytes, want 8", len(content))
	}
	return EndRequest{AppStatus: binary.BigEndian.Uint32(content), ProtocolStatus: content[4]}, nil
}

// Param is one name-value pair of a PARAMS or GET_VALUES record.
type Param struct {
	Name, Value string
}

// appendLen appends a name-value pair length: one byte below 128, else four
// bytes with the high bit set.
func appendLen(dst []byte, n int) []byte {
	if n < 128 {
		return append(dst, byte(n))
	}
	return binary.BigEndian.AppendUint32(dst, uint32(n)|1<<31)
}

// AppendPair appends one encoded name-value pair.
func AppendPair(dst []byte, name, value string) []byte {
	dst = appendLen(dst, len(name))
	dst = appendLen(dst, len(value))
	dst = append(dst, name...)
	return append(dst, value...)
}

// AppendPairs appends encoded name-value pairs (record content, not records).
func AppendPairs(dst []byte, ps []Param) []byte {
	for _, p := range ps {
		dst = AppendPair(dst, p.Name, p.Value)
	}
	return dst
}

func readLen(b []byte) (n, used int, err error) {
	if len(b) == 0 {
		return 0, 0, io.ErrUnexpectedEOF
	}
	if b[0]&0x80 == 0 {
		return int(b[0]), 1, nil
	}
	if len(b) < 4 {
		return 0, 0, io.ErrUnexpectedEOF
	}
	return int(binary.BigEndian.Uint32(b) &^ (1 << 31)), 4, nil
}

// ParsePairs decodes name-value pairs, in order.
func ParsePairs(b []byte) ([]Param, error) {
	var ps []Param
	for off := 0; off < len(b); {
		nlen, n, err := readLen(b[off:])
		if err != nil {
			return ps, fmt.Errorf("name-value pair at byte %d: name length: %w", off, err)
		}
		vlen, v, err := readLen(b[off+n:])
		if err != nil {
			return ps, fmt.Errorf("name-value pair at byte %d: value length: %w", off, err)
		}
		start := off + n + v
		if nlen > len(b)-start || vlen > len(b)-start-nlen {
			return ps, fmt.Errorf("name-value pair at byte %d: lengths %d+%d exceed the %d bytes left: %w",
				off, nlen, vlen, len(b)-start, io.ErrUnexpectedEOF)
		}
		ps = append(ps, Param{Name: string(b[start : start+nlen]), Value: string(b[start+nlen : start+nlen+vlen])})
		off = start + nlen + vlen
	}
	return ps, nil
}

// Record is one decoded record. Content excludes the padding.
type Record struct {
	Header
	Content []byte
}

// Reader reads records from a stream, reusing one buffer: a Record's
// Content is valid only until the next call to Next.
type Reader struct {
	r   io.Reader
	hdr [HeaderLen]byte
	buf []byte
}

// NewReader returns a Reader reading from r. Wrap r in a bufio.Reader to
// read several records per system call.
func NewReader(r io.Reader) *Reader { return &Reader{r: r} }

// ErrVersion reports a record whose version is not 1.
var ErrVersion = errors.New("fcgi: unsupported record version")

// Next reads one record. At a clean end of stream it returns io.EOF; a
// stream cut inside a record gives io.ErrUnexpectedEOF.
func (r *Reader) Next() (Record, error) {
	if _, err := io.ReadFull(r.r, r.hdr[:]); err != nil {
		return Record{}, err
	}
	h, _ := ParseHeader(r.hdr[:])
	if h.Version != Version1 {
		return Record{Header: h}, fmt.Errorf("%w %d", ErrVersion, h.Version)
	}
	n := int(h.ContentLength) + int(h.PaddingLength)
	if cap(r.buf) < n {
		r.buf = make([]byte, n, max(n, 2*cap(r.buf)))
	}
	r.buf = r.buf[:n]
	if _, err := io.ReadFull(r.r, r.buf); err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return Record{Header: h}, fmt.Errorf("reading %s content: %w", TypeName(h.Type), err)
	}
	return Record{Header: h, Content: r.buf[:h.ContentLength]}, nil
}
