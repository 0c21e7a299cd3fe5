package records

import (
	"encoding/binary"
	"fmt"
)

// MaxFrameBytes bounds one record of a file read as it grows (SplitFrames): a longer frame
// means the file is not a record file.
const MaxFrameBytes = 256 << 20

// AppendFrame appends rec to b as one frame: its length as a uvarint, then its bytes.
func AppendFrame(b, rec []byte) []byte {
	return append(binary.AppendUvarint(b, uint64(len(rec))), rec...)
}

// Frames splits data, a whole file's records after its header, into its length-delimited
// records. A frame broken or cut short at byte n ends it: Frames then returns the records
// before n and an *Error of CodeFraming naming n.
func Frames(data []byte) ([][]byte, error) {
	var out [][]byte
	for off := 0; off < len(data); {
		n, w := binary.Uvarint(data[off:])
		if w <= 0 || n > uint64(len(data)-off-w) {
			return out, &Error{Code: CodeFraming, Detail: fmt.Sprintf("broken record framing at byte %d", off)}
		}
		out = append(out, data[off+w:off+w+int(n)])
		off += w + int(n)
	}
	return out, nil
}

// SplitFrames splits data, the records of a file that may still be growing, into whole
// records. It returns how many bytes the records took: a frame cut off at the end (a file
// still being written) is left for the next read. broken is set when the framing is not valid
// where the records stop (an overlong varint, or a length over MaxFrameBytes): what follows
// cannot be read as records.
func SplitFrames(data []byte) (recs [][]byte, used int, broken bool) {
	for used < len(data) {
		size, w := binary.Uvarint(data[used:])
		switch {
		case w < 0, w > 0 && size > MaxFrameBytes:
			return recs, used, true
		case w == 0, size > uint64(len(data)-used-w):
			return recs, used, false
		}
		recs = append(recs, data[used+w:used+w+int(size)])
		used += w + int(size)
	}
	return recs, used, false
}

// FrameSize is how many bytes the frame at the start of data takes, its length prefix
// included; ok is false while data ends inside the prefix, and when the prefix is broken or
// announces more than MaxFrameBytes.
func FrameSize(data []byte) (size int64, ok bool) {
	n, w := binary.Uvarint(data)
	if w <= 0 || n > MaxFrameBytes {
		return 0, false
	}
	return int64(w) + int64(n), true
}
