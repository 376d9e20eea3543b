package web

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"errors"
	"io"
	"mime"
	"mime/multipart"
	"mime/quotedprintable"
	"net/mail"
	"net/textproto"
	"strings"

	"herald/views/outbox"
)

// maxPartBytes bounds what one decoded part may take on the page.
const maxPartBytes = 10 << 20

// readMail takes a raw RFC 5322 message apart for the outbox page: its
// header fields in order (encoded words decoded), and its first text/plain
// and text/html parts, found through nested multiparts and decoded from
// quoted-printable or base64. A message it cannot read is reported in
// Problem, with its headers and source still shown.
func readMail(raw []byte) outbox.Message {
	m := outbox.Message{Raw: string(raw), Headers: headerFields(raw)}
	msg, err := mail.ReadMessage(bytes.NewReader(raw))
	if err != nil {
		m.Problem = "The message could not be read: " + err.Error()
		return m
	}
	if err := walkPart(&m, textproto.MIMEHeader(msg.Header), msg.Body, 0); err != nil {
		m.Problem = "Part of the message could not be read: " + err.Error()
	}
	return m
}

// headerFields are the message's header fields in the order it has them,
// continuation lines unfolded.
func headerFields(raw []byte) []outbox.Header {
	var out []outbox.Header
	dec := new(mime.WordDecoder)
	sc := bufio.NewScanner(bytes.NewReader(raw))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := strings.TrimRight(sc.Text(), "\r")
		if line == "" {
			break
		}
		if (line[0] == ' ' || line[0] == '\t') && len(out) > 0 {
			out[len(out)-1].Value += " " + strings.TrimSpace(line)
			continue
		}
		name, value, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		out = append(out, outbox.Header{Name: strings.TrimSpace(name), Value: strings.TrimSpace(value)})
	}
	for i := range out {
		if v, err := dec.DecodeHeader(out[i].Value); err == nil {
			out[i].Value = v
		}
	}
	return out
}

// walkPart reads one part: a multipart's children in turn (depth-bounded),
// or a text part kept when it is the first of its kind.
func walkPart(m *outbox.Message, h textproto.MIMEHeader, body io.Reader, depth int) error {
	if depth > 8 {
		return errors.New("too deeply nested")
	}
	ct := h.Get("Content-Type")
	if ct == "" {
		ct = "text/plain"
	}
	media, params, err := mime.ParseMediaType(ct)
	if err != nil {
		return err
	}
	if strings.HasPrefix(media, "multipart/") {
		mr := multipart.NewReader(body, params["boundary"])
		for {
			p, err := mr.NextRawPart()
			if err == io.EOF {
				return nil
			}
			if err != nil {
				return err
			}
			if err := walkPart(m, p.Header, p, depth+1); err != nil {
				return err
			}
		}
	}
	if media != "text/plain" && media != "text/html" {
		return nil
	}
	if cd, _, _ := mime.ParseMediaType(h.Get("Content-Disposition")); cd == "attachment" {
		return nil
	}
	var r io.Reader = body
	switch strings.ToLower(strings.TrimSpace(h.Get("Content-Transfer-Encoding"))) {
	case "quoted-printable":
		r = quotedprintable.NewReader(r)
	case "base64":
		r = base64.NewDecoder(base64.StdEncoding, base64Lines{r})
	}
	b, err := io.ReadAll(io.LimitReader(r, maxPartBytes))
	if err != nil {
		return err
	}
	text := toUTF8(b, params["charset"])
	if media == "text/html" && m.HTML == "" {
		m.HTML = text
	} else if media == "text/plain" && m.Text == "" {
		m.Text = text
	}
	return nil
}

// toUTF8 reads a part's bytes in its charset: UTF-8 and US-ASCII as they
// are, ISO-8859-1 by its one-to-one mapping; other charsets are shown as
// they come (herald itself writes only UTF-8).
func toUTF8(b []byte, charset string) string {
	switch strings.ToLower(charset) {
	case "iso-8859-1", "latin1", "latin-1":
		rs := make([]rune, len(b))
		for i, c := range b {
			rs[i] = rune(c)
		}
		return string(rs)
	}
	return strings.ToValidUTF8(string(b), "\uFFFD")
}

// base64Lines drops the line breaks of a base64 body, which the decoder
// does not skip by itself in every position.
type base64Lines struct{ r io.Reader }

func (b base64Lines) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	j := 0
	for _, c := range p[:n] {
		if c != '\r' && c != '\n' && c != ' ' && c != '\t' {
			p[j] = c
			j++
		}
	}
	return j, err
}
