package records

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// ReadFrames streams the records of r (after its header) to emit, holding one record at a
// time: how a file too large to hold is read. A record over max bytes is a broken frame. It
// stops at the first broken or cut frame (bad, an *Error of CodeFraming naming the frame's
// byte) or at a read failure of r (err).
func ReadFrames(r *bufio.Reader, max uint64, emit func([]byte)) (bad, err error) {
	for off := int64(0); ; {
		n, w, err := readFrameLen(r)
		switch {
		case err == io.EOF && w == 0:
			return nil, nil
		case err == io.EOF || errors.Is(err, errOverflow):
			return framing(off, ""), nil
		case err != nil:
			return nil, err
		case n > max:
			return framing(off, fmt.Sprintf(": a frame of %d bytes exceeds the record bound of %d", n, max)), nil
		}
		rec := make([]byte, n)
		if _, err := io.ReadFull(r, rec); errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return framing(off, ""), nil
		} else if err != nil {
			return nil, err
		}
		emit(rec)
		off += int64(w) + int64(n)
	}
}

func framing(off int64, more string) error {
	return &Error{Code: CodeFraming, Detail: fmt.Sprintf("broken record framing at byte %d%s", off, more)}
}

var errOverflow = errors.New("a frame length overflows 64 bits")

// readFrameLen reads one uvarint and its width; io.EOF after w > 0 bytes is a cut frame.
func readFrameLen(r *bufio.Reader) (n uint64, w int, err error) {
	var shift uint
	for w < binary.MaxVarintLen64 {
		b, err := r.ReadByte()
		if err != nil {
			return 0, w, err
		}
		w++
		if w == binary.MaxVarintLen64 && b > 1 {
			return 0, w, errOverflow
		}
		n |= uint64(b&0x7f) << shift
		if b < 0x80 {
			return n, w, nil
		}
		shift += 7
	}
	return 0, w, errOverflow
}
