package fastcgi

// This file is the wire format of FastCGI 1.0: record headers, the fixed
// bodies of BEGIN_REQUEST/END_REQUEST/UNKNOWN_TYPE, and name-value pairs.
// Everything here works on caller-owned byte slices and never allocates.

import (
	"errors"
	"fmt"
)

// Record types.
const (
	typeBeginRequest    = 1
	typeAbortRequest    = 2
	typeEndRequest      = 3
	typeParams          = 4
	typeStdin           = 5
	typeStdout          = 6
	typeStderr          = 7
	typeData            = 8
	typeGetValues       = 9
	typeGetValuesResult = 10
	typeUnknownType     = 11
)

const (
	version1   = 1
	headerLen  = 8
	maxContent = 65535
	maxPadding = 255
	// maxRecord is the largest record a peer can send: header, 64 KiB of
	// content and 255 bytes of padding.
	maxRecord = headerLen + maxContent + maxPadding

	roleResponder = 1
	flagKeepConn  = 1
)

// Protocol status of END_REQUEST.
const (
	statusRequestComplete = 0
	statusCantMPXConn     = 1
	statusOverloaded      = 2
	statusUnknownRole     = 3
)

// header is a decoded record header.
type header struct {
	version uint8
	typ     uint8
	id      uint16
	length  uint16 // content length
	padding uint8
}

// size is the record's length on the wire.
func (h header) size() int { return headerLen + int(h.length) + int(h.padding) }

var errVersion = errors.New("fastcgi: unsupported record version")

// parseHeader decodes the 8 bytes at the start of b, which must hold at
// least headerLen bytes.
func parseHeader(b []byte) (header, error) {
	_ = b[7]
	h := header{
		version: b[0],
		typ:     b[1],
		id:      uint16(b[2])<<8 | uint16(b[3]),
		length:  uint16(b[4])<<8 | uint16(b[5]),
		padding: b[6],
	}
	if h.version != version1 {
		return h, fmt.Errorf("%w %d", errVersion, h.version)
	}
	return h, nil
}

// appendHeader appends a record header for n content bytes padded to a
// multiple of 8, as the specification recommends.
func appendHeader(b []byte, typ uint8, id uint16, n int) []byte {
	return append(b, version1, typ, byte(id>>8), byte(id), byte(n>>8), byte(n), byte(-n&7), 0)
}

// putHeader writes a header for n content bytes into b[:8].
func putHeader(b []byte, typ uint8, id uint16, n int) {
	_ = b[7]
	b[0], b[1], b[2], b[3] = version1, typ, byte(id>>8), byte(id)
	b[4], b[5], b[6], b[7] = byte(n>>8), byte(n), byte(-n&7), 0
}

// zeros supplies padding.
var zeros [8]byte

// appendRecord appends one complete record; len(content) must not exceed
// maxContent.
func appendRecord(b []byte, typ uint8, id uint16, content []byte) []byte {
	b = appendHeader(b, typ, id, len(content))
	b = append(b, content...)
	return append(b, zeros[:-len(content)&7]...)
}

// appendEndRequest appends END_REQUEST with an application status of 0.
func appendEndRequest(b []byte, id uint16, protocolStatus uint8) []byte {
	b = appendHeader(b, typeEndRequest, id, 8)
	return append(b, 0, 0, 0, 0, protocolStatus, 0, 0, 0)
}

// appendUnknownType appends the reply to a record type we do not know.
func appendUnknownType(b []byte, typ uint8) []byte {
	b = appendHeader(b, typeUnknownType, 0, 8)
	return append(b, typ, 0, 0, 0, 0, 0, 0, 0)
}

// beginRequest is the body of BEGIN_REQUEST.
type beginRequest struct {
	role  uint16
	flags uint8
}

var errBeginLen = errors.New("fastcgi: BEGIN_REQUEST body is not 8 bytes")

func parseBeginRequest(content []byte) (beginRequest, error) {
	if len(content) != 8 {
		return beginRequest{}, errBeginLen
	}
	return beginRequest{role: uint16(content[0])<<8 | uint16(content[1]), flags: content[2]}, nil
}

// readLength decodes a name or value length: one byte below 128, else four
// bytes big-endian with the top bit cleared. n is 0 if b is too short.
func readLength(b []byte) (length uint32, n int) {
	if len(b) == 0 {
		return 0, 0
	}
	if b[0]&0x80 == 0 {
		return uint32(b[0]), 1
	}
	if len(b) < 4 {
		return 0, 0
	}
	return uint32(b[0]&0x7f)<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3]), 4
}

// nextPair splits the first name-value pair off b. ok is false when b does
// not start with a complete pair; the lengths are checked against len(b)
// in 64-bit arithmetic, so a length near 2^31 cannot wrap (compare
// golang.org/issue/81293, the same parser in net/http/fcgi on 32-bit).
func nextPair(b []byte) (name, value, rest []byte, ok bool) {
	nl, n1 := readLength(b)
	if n1 == 0 {
		return nil, nil, nil, false
	}
	vl, n2 := readLength(b[n1:])
	if n2 == 0 {
		return nil, nil, nil, false
	}
	b = b[n1+n2:]
	if uint64(nl)+uint64(vl) > uint64(len(b)) {
		return nil, nil, nil, false
	}
	return b[:nl], b[nl : nl+vl], b[nl+vl:], true
}

// appendLength encodes a name or value length.
func appendLength(b []byte, n int) []byte {
	if n < 128 {
		return append(b, byte(n))
	}
	return append(b, byte(n>>24)|0x80, byte(n>>16), byte(n>>8), byte(n))
}

// appendPair encodes one name-value pair.
func appendPair(b []byte, name, value string) []byte {
	b = appendLength(b, len(name))
	b = appendLength(b, len(value))
	b = append(b, name...)
	return append(b, value...)
}
