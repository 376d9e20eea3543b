package service

import "io"

// LimitReader reads from r and fails with tooLarge once more than n bytes
// were read (uploads: the body is read as a stream, so its size is known
// only as it arrives).
func LimitReader(r io.Reader, n int64, tooLarge error) io.Reader {
	return &limitedReader{r: r, n: n, err: tooLarge}
}

type limitedReader struct {
	r   io.Reader
	n   int64
	err error
}

func (l *limitedReader) Read(p []byte) (int, error) {
	if l.n < 0 {
		return 0, l.err
	}
	n, err := l.r.Read(p)
	l.n -= int64(n)
	if l.n < 0 {
		return n, l.err
	}
	return n, err
}
