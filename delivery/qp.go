package delivery

import (
	"slices"
	"sync"
)

// appendQP appends s quoted-printable encoded to dst. It mirrors the text mode
// of the standard library's mime/quotedprintable.Writer (Binary false) followed
// by Close, byte for byte, but copies runs of plain bytes at once instead of
// looking at one byte at a time:
//
//   - printable ASCII except '=', space and tab are copied; every other byte
//     except CR and LF becomes "=XX" (upper-case hex);
//   - CRLF, a bare LF and a bare CR each become CRLF; a space or tab just
//     before a line break or at the very end is encoded ("=20", "=09");
//   - an output line holds at most 75 characters before a soft line break
//     "=\r\n" (76 with its '='); an "=XX" is never split across lines;
//   - like the standard library, a CR leaves an LF pending until the next
//     plain byte: in "\r=\n" the LF is swallowed by the CR's line break, so the
//     output is "\r\n=3D" (an inherited quirk, kept for identity).
func appendQP(dst []byte, s string) []byte {
	dst = slices.Grow(dst, len(s)+len(s)/8)
	const maxLine = 75 // characters before a soft line break's '='
	line := 0          // characters on the current output line
	cr := false        // the last line break came from a CR (a following LF is part of it)
	for k := 0; k < len(s); {
		switch c := s[k]; qpClass[c] {
		case qpPlain:
			for k < len(s) && qpClass[s[k]] == qpPlain {
				if line == maxLine {
					dst = append(dst, "=\r\n"...)
					line = 0
				}
				end := min(len(s), k+maxLine-line)
				j := k + 1
				for j < end && qpClass[s[j]] == qpPlain {
					j++
				}
				dst = append(dst, s[k:j]...)
				line += j - k
				k = j
			}
			cr = false
		case qpBreak:
			k++
			if c == '\n' && cr {
				cr = false
				continue
			}
			cr = c == '\r'
			dst, line = qpEncodeTrailingSpace(dst, line)
			dst = append(dst, '\r', '\n')
			line = 0
		default:
			if line > maxLine-3 {
				dst = append(dst, "=\r\n"...)
				line = 0
			}
			dst = append(dst, '=', qpHex[c>>4], qpHex[c&0x0f])
			line += 3
			k++
		}
	}
	dst, _ = qpEncodeTrailingSpace(dst, line)
	return dst
}

// qpEncodeTrailingSpace encodes a space or tab that ends the current output
// line, as the line is about to end.
func qpEncodeTrailingSpace(dst []byte, line int) ([]byte, int) {
	if line == 0 {
		return dst, 0
	}
	c := dst[len(dst)-1]
	if c != ' ' && c != '\t' {
		return dst, line
	}
	dst, line = dst[:len(dst)-1], line-1
	if line > 75-3 {
		dst = append(dst, "=\r\n"...)
		line = 0
	}
	return append(dst, '=', qpHex[c>>4], qpHex[c&0x0f]), line + 3
}

const qpHex = "0123456789ABCDEF"

// Byte classes of quoted-printable's text mode.
const (
	qpEncoded = iota // written as "=XX"
	qpPlain          // copied as is
	qpBreak          // CR or LF: a line break
)

var qpClass = func() (t [256]byte) {
	for c := '!'; c <= '~'; c++ {
		t[c] = qpPlain
	}
	t['='] = qpEncoded
	t[' '], t['\t'] = qpPlain, qpPlain
	t['\r'], t['\n'] = qpBreak, qpBreak
	return t
}()

// qpBufs recycles writeQP's output buffers (*[]byte).
var qpBufs = sync.Pool{New: func() any { return new([]byte) }}
