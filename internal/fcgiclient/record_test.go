package fcgiclient

import (
	"bytes"
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestAppendRecord(t *testing.T) {
	big := bytes.Repeat([]byte{'x'}, MaxContent+3)
	// The second record of big: 3 bytes of content and 5 of padding.
	bigTail := []byte{1, 6, 0, 1, 0, 3, 5, 0, 'x', 'x', 'x', 0, 0, 0, 0, 0}
	tests := []struct {
		name    string
		typ     uint8
		id      uint16
		content []byte
		want    []byte
	}{
		{"empty ends a stream", TypeStdin, 1, nil,
			[]byte{1, 5, 0, 1, 0, 0, 0, 0}},
		{"padded to 8", TypeStdout, 1, []byte("hello"),
			[]byte{1, 6, 0, 1, 0, 5, 3, 0, 'h', 'e', 'l', 'l', 'o', 0, 0, 0}},
		{"exact multiple of 8 has no padding", TypeStdout, 0x0102, []byte("12345678"),
			[]byte{1, 6, 1, 2, 0, 8, 0, 0, '1', '2', '3', '4', '5', '6', '7', '8'}},
		{"abort request", TypeAbortRequest, 7, nil,
			[]byte{1, 2, 0, 7, 0, 0, 0, 0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, AppendRecord(nil, tt.typ, tt.id, tt.content))
		})
	}
	t.Run("split above 65535", func(t *testing.T) {
		got := AppendRecord(nil, TypeStdout, 1, big)
		// First record: 65535 bytes of content, 1 of padding.
		require.Equal(t, []byte{1, 6, 0, 1, 0xff, 0xff, 1, 0}, got[:8])
		first := HeaderLen + MaxContent + 1
		require.Len(t, got, first+len(bigTail))
		assert.Equal(t, bigTail, got[first:])
	})
}

func TestAppendStream(t *testing.T) {
	assert.Equal(t, []byte{1, 4, 0, 1, 0, 0, 0, 0}, AppendStream(nil, TypeParams, 1, nil))
	assert.Equal(t, []byte{
		1, 4, 0, 1, 0, 2, 6, 0, 1, 0, 0, 0, 0, 0, 0, 0,
		1, 4, 0, 1, 0, 0, 0, 0,
	}, AppendStream(nil, TypeParams, 1, []byte{1, 0}))
}

func TestBeginEndRequest(t *testing.T) {
	got := AppendBeginRequest(nil, 1, RoleResponder, FlagKeepConn)
	assert.Equal(t, []byte{1, 1, 0, 1, 0, 8, 0, 0, 0, 1, 1, 0, 0, 0, 0, 0}, got)
	br, err := ParseBeginRequest(got[HeaderLen:])
	require.NoError(t, err)
	assert.Equal(t, BeginRequest{Role: RoleResponder, Flags: FlagKeepConn}, br)

	end := []byte{0, 0, 1, 2, StatusUnknownRole, 0, 0, 0}
	e, err := ParseEndRequest(end)
	require.NoError(t, err)
	assert.Equal(t, EndRequest{AppStatus: 258, ProtocolStatus: StatusUnknownRole}, e)
	assert.Equal(t, append([]byte{1, 3, 0, 9, 0, 8, 0, 0}, end...), AppendEndRequest(nil, 9, e))

	_, err = ParseEndRequest(end[:7])
	assert.ErrorContains(t, err, "7 bytes, want 8")
}

func TestPairs(t *testing.T) {
	n127, n128 := strings.Repeat("n", 127), strings.Repeat("n", 128)
	v300 := strings.Repeat("v", 300)
	tests := []struct {
		name  string
		pairs []Param
		want  []byte
	}{
		{"one-byte lengths", []Param{{"A", "bc"}},
			[]byte{1, 2, 'A', 'b', 'c'}},
		{"empty value", []Param{{"CONTENT_LENGTH", ""}},
			append([]byte{14, 0}, "CONTENT_LENGTH"...)},
		{"127 still one byte", []Param{{n127, "x"}},
			append(append([]byte{127, 1}, n127...), 'x')},
		{"128 takes four bytes", []Param{{n128, "x"}},
			append(append([]byte{0x80, 0, 0, 128, 1}, n128...), 'x')},
		{"four-byte value length", []Param{{"V", v300}},
			append([]byte{1, 0x80, 0, 1, 44, 'V'}, v300...)},
		{"two pairs keep order", []Param{{"B", "1"}, {"A", "2"}},
			[]byte{1, 1, 'B', '1', 1, 1, 'A', '2'}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := AppendPairs(nil, tt.pairs)
			assert.Equal(t, tt.want, got)
			back, err := ParsePairs(got)
			require.NoError(t, err)
			assert.Equal(t, tt.pairs, back)
		})
	}
}

func TestParsePairsErrors(t *testing.T) {
	tests := []struct {
		name string
		in   []byte
		want string
	}{
		{"name length cut", []byte{0x80, 0}, "name length"},
		{"value length missing", []byte{1}, "value length"},
		{"content short", []byte{3, 1, 'a', 'b'}, "exceed"},
		{"huge four-byte length", []byte{0xff, 0xff, 0xff, 0xff, 0}, "exceed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParsePairs(tt.in)
			require.Error(t, err)
			assert.ErrorIs(t, err, io.ErrUnexpectedEOF)
			assert.ErrorContains(t, err, tt.want)
		})
	}
}

func TestReader(t *testing.T) {
	var stream []byte
	stream = append(stream, 1, 6, 0, 1, 0, 5, 3, 0, 'h', 'e', 'l', 'l', 'o', 0, 0, 0) // STDOUT "hello", padded
	stream = append(stream, 1, 6, 0, 1, 0, 2, 0, 0, 'h', 'i')                         // unpadded is legal too
	stream = append(stream, 1, 3, 0, 1, 0, 8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)           // END_REQUEST
	r := NewReader(bytes.NewReader(stream))

	rec, err := r.Next()
	require.NoError(t, err)
	assert.Equal(t, Header{Version: 1, Type: TypeStdout, ID: 1, ContentLength: 5, PaddingLength: 3}, rec.Header)
	assert.Equal(t, "hello", string(rec.Content))

	rec, err = r.Next()
	require.NoError(t, err)
	assert.Equal(t, "hi", string(rec.Content))

	rec, err = r.Next()
	require.NoError(t, err)
	assert.Equal(t, TypeEndRequest, rec.Type)

	_, err = r.Next()
	assert.ErrorIs(t, err, io.EOF)
}

func TestReaderErrors(t *testing.T) {
	tests := []struct {
		name string
		in   []byte
		is   error
	}{
		{"short header", []byte{1, 6, 0}, io.ErrUnexpectedEOF},
		{"short content", []byte{1, 6, 0, 1, 0, 5, 0, 0, 'h'}, io.ErrUnexpectedEOF},
		{"missing padding", []byte{1, 6, 0, 1, 0, 1, 7, 0, 'h'}, io.ErrUnexpectedEOF},
		{"version 2", []byte{2, 6, 0, 1, 0, 0, 0, 0}, ErrVersion},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := NewReader(bytes.NewReader(tt.in)).Next()
			assert.ErrorIs(t, err, tt.is)
		})
	}
}

func TestParseStdout(t *testing.T) {
	tests := []struct {
		name   string
		in     string
		status int
		names  []string
		raw    string
		body   string
	}{
		{"status and headers",
			"Status: 404 Not Found\r\nContent-Type: text/plain\r\nX-A: 1\r\nx-a: 2\r\n\r\nnope",
			404, []string{"Content-Type", "X-A", "x-a"},
			"Status: 404 Not Found\r\nContent-Type: text/plain\r\nX-A: 1\r\nx-a: 2\r\n\r\n", "nope"},
		{"no status means 200", "Content-Length: 2\r\n\r\nok", 200, []string{"Content-Length"},
			"Content-Length: 2\r\n\r\n", "ok"},
		{"bare LF", "Status: 302\nLocation: /x\n\n", 302, []string{"Location"}, "Status: 302\nLocation: /x\n\n", ""},
		{"body keeps blank lines", "A: b\r\n\r\n\r\n\r\n", 200, []string{"A"}, "A: b\r\n\r\n", "\r\n\r\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, err := ParseStdout([]byte(tt.in))
			require.NoError(t, err)
			assert.Equal(t, tt.status, resp.Status)
			assert.Equal(t, tt.names, resp.HeaderNames)
			assert.Equal(t, tt.raw, string(resp.RawHeader))
			assert.Equal(t, tt.body, string(resp.Body))
		})
	}
	resp, err := ParseStdout([]byte("X-A: 1\r\nx-a: 2\r\n\r\n"))
	require.NoError(t, err)
	assert.Equal(t, []string{"1", "2"}, resp.Header["X-A"])

	for _, bad := range []string{"Status: 200 OK\r\n", "no colon\r\n\r\n", "Status: abc\r\n\r\n", "Bad Name: x\r\n\r\n"} {
		_, err := ParseStdout([]byte(bad))
		assert.Error(t, err, "%q", bad)
	}
}

func TestRequestEncode(t *testing.T) {
	req := &Request{Method: "POST", URI: "/a/b?x=1", Host: "example.test",
		Header: map[string][]string{"Content-Type": {"text/plain"}, "X-Trace": {"1", "2"}},
		Body:   []byte("abc"), Extra: []Param{{"REMOTE_PORT", "5"}, {"HTTPS", "on"}}}
	ps := req.CGIParams()
	m := map[string]string{}
	for _, p := range ps {
		_, dup := m[p.Name]
		require.False(t, dup, "param %s sent twice", p.Name)
		m[p.Name] = p.Value
	}
	assert.Equal(t, "POST", m["REQUEST_METHOD"])
	assert.Equal(t, "/a/b?x=1", m["REQUEST_URI"])
	assert.Equal(t, "/a/b", m["SCRIPT_NAME"])
	assert.Equal(t, "x=1", m["QUERY_STRING"])
	assert.Equal(t, "3", m["CONTENT_LENGTH"])
	assert.Equal(t, "text/plain", m["CONTENT_TYPE"])
	assert.Equal(t, "example.test", m["HTTP_HOST"])
	assert.Equal(t, "1, 2", m["HTTP_X_TRACE"])
	assert.Equal(t, "5", m["REMOTE_PORT"])
	assert.Equal(t, "on", m["HTTPS"])
	assert.Equal(t, "HTTPS", ps[len(ps)-1].Name)

	// The byte sequence: BEGIN_REQUEST (keep-conn), PARAMS, empty PARAMS,
	// STDIN, empty STDIN.
	r := NewReader(bytes.NewReader(req.Encode(nil)))
	var types []uint8
	var params, stdin []byte
	for {
		rec, err := r.Next()
		if err == io.EOF {
			break
		}
		require.NoError(t, err)
		assert.Equal(t, uint16(1), rec.ID)
		types = append(types, rec.Type)
		switch rec.Type {
		case TypeBeginRequest:
			br, err := ParseBeginRequest(rec.Content)
			require.NoError(t, err)
			assert.Equal(t, BeginRequest{Role: RoleResponder, Flags: FlagKeepConn}, br)
		case TypeParams:
			params = append(params, rec.Content...)
		case TypeStdin:
			stdin = append(stdin, rec.Content...)
		}
	}
	assert.Equal(t, []uint8{TypeBeginRequest, TypeParams, TypeParams, TypeStdin, TypeStdin}, types)
	back, err := ParsePairs(params)
	require.NoError(t, err)
	assert.Equal(t, ps, back)
	assert.Equal(t, "abc", string(stdin))

	// Defaults: GET /, no body (one empty STDIN), close flag honoured.
	enc := (&Request{ID: 3, CloseConn: true}).Encode(nil)
	assert.Equal(t, []byte{1, 1, 0, 3, 0, 8, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0}, enc[:16])
	assert.Equal(t, []byte{1, 5, 0, 3, 0, 0, 0, 0}, enc[len(enc)-8:])
}
