package delivery

// A forgiving reading of MIME for reports. Mail servers write bounces by
// hand, and many get MIME wrong: a part's header line folded without
// indentation ("boundary=…" on a line of its own), a media type with a
// stray character, a missing final boundary. net/mime/multipart stops at
// the first such fault and the report is lost, so reports are cut into
// parts here, with the same rules and more patience.

import (
	"bytes"
	"mime"
	"net/textproto"
	"regexp"
	"strings"
)

// boundaryParam finds a boundary where mime.ParseMediaType gave up.
var boundaryParam = regexp.MustCompile(`(?i)boundary\s*=\s*(?:"([^"]+)"|([^\s;]+))`)

// mediaType reads a Content-Type: its media type, lower-cased, and its
// boundary. A missing or unreadable type is text/plain (RFC 2045 5.2).
func mediaType(ct string) (mt, boundary string) {
	if strings.TrimSpace(ct) == "" {
		return "text/plain", ""
	}
	mt, params, err := mime.ParseMediaType(ct)
	if err == nil {
		return mt, params["boundary"]
	}
	mt = strings.ToLower(strings.TrimSpace(strings.SplitN(ct, ";", 2)[0]))
	if m := boundaryParam.FindStringSubmatch(ct); m != nil {
		boundary = m[1] + m[2]
	}
	if !strings.Contains(mt, "/") {
		mt = "application/octet-stream"
	}
	return mt, boundary
}

// splitParts cuts a multipart body into its parts: what lies between
// lines that are "--boundary" (trailing spaces allowed), up to
// "--boundary--" or the end. The preamble is not a part.
func splitParts(body []byte, boundary string, max int) [][]byte {
	delim := []byte("--" + boundary)
	var parts [][]byte
	start := -1
	for pos := 0; pos <= len(body) && len(parts) < max; {
		end := bytes.IndexByte(body[pos:], '\n')
		line := body[pos:]
		next := len(body) + 1
		if end >= 0 {
			line = body[pos : pos+end]
			next = pos + end + 1
		}
		trimmed := bytes.TrimRight(line, " \t\r")
		if bytes.HasPrefix(trimmed, delim) {
			rest := trimmed[len(delim):]
			if len(rest) == 0 || bytes.Equal(rest, []byte("--")) {
				if start >= 0 {
					parts = append(parts, trimPartEnd(body[start:pos]))
				}
				if len(rest) > 0 {
					return parts // the closing delimiter
				}
				start = next
				if start > len(body) {
					start = len(body)
				}
			}
		}
		pos = next
	}
	if start >= 0 && start < len(body) && len(parts) < max {
		parts = append(parts, trimPartEnd(body[start:])) // no closing delimiter
	}
	return parts
}

// trimPartEnd drops the line break that belongs to the next delimiter.
func trimPartEnd(b []byte) []byte {
	b = bytes.TrimSuffix(b, []byte("\n"))
	return bytes.TrimSuffix(b, []byte("\r"))
}

// readPart splits a part into its header and its body. Header lines that
// neither start a field nor are indented continue the field before them.
func readPart(p []byte) (textproto.MIMEHeader, []byte) {
	h := textproto.MIMEHeader{}
	var key string
	pos := 0
	for pos < len(p) {
		end := bytes.IndexByte(p[pos:], '\n')
		next := len(p)
		line := p[pos:]
		if end >= 0 {
			line = p[pos : pos+end]
			next = pos + end + 1
		}
		line = bytes.TrimRight(line, "\r")
		if len(bytes.TrimSpace(line)) == 0 {
			return h, p[next:]
		}
		colon := bytes.IndexByte(line, ':')
		switch {
		case line[0] == ' ' || line[0] == '\t' || colon <= 0 || bytes.ContainsAny(line[:colon], " \t"):
			if key != "" {
				vs := h[key]
				vs[len(vs)-1] += " " + strings.TrimSpace(string(line))
			} else if pos == 0 {
				return h, p // no header at all: all of it is body
			}
		default:
			key = textproto.CanonicalMIMEHeaderKey(string(line[:colon]))
			h[key] = append(h[key], strings.TrimSpace(string(line[colon+1:])))
		}
		pos = next
	}
	return h, nil
}
