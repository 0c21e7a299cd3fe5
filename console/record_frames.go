package console

import (
	"encoding/binary"
)

// MaxRecordBytes bounds one framed record; a longer frame means the file is not a record file.
const MaxRecordBytes = 256 << 20

// SplitFrames splits data, varint-length-delimited records as the file sinks write them,
// into whole records. It returns how many bytes the records took: a frame cut off at the end
// (a file still being written) is left for the next read. broken is set when the framing is
// not valid where the records stop (an overlong varint or an impossible length): what
// follows cannot be read as records.
func SplitFrames(data []byte) (recs [][]byte, used int, broken bool) {
	for used < len(data) {
		size, w := binary.Uvarint(data[used:])
		switch {
		case w < 0, w > 0 && size > MaxRecordBytes:
			return recs, used, true
		case w == 0, size > uint64(len(data)-used-w):
			return recs, used, false
		}
		recs = append(recs, data[used+w:used+w+int(size)])
		used += w + int(size)
	}
	return recs, used, false
}
