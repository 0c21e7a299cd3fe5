package backend

import (
	"encoding/binary"
	"fmt"

	"github.com/beamagents/beamagents/ltm"
)

// A record is how the Redis and Bigtable backends store an entry's state: its seq as 8
// big-endian bytes, a kind byte, then the value (none for a tombstone). Seqs are never
// negative, so records compare byte-wise in the order of their seqs: Redis's script and
// Bigtable's value-range filter check the seq guard on the bytes alone. A future layout
// takes a new kind byte.
const (
	recordKindValue     = 'v'
	recordKindTombstone = 't'
	recordHeaderBytes   = 9
)

// record is a decoded record.
type record struct {
	seq   int64
	live  bool
	value []byte
}

func encodeRecord(r record) []byte {
	b := make([]byte, recordHeaderBytes, recordHeaderBytes+len(r.value))
	binary.BigEndian.PutUint64(b, uint64(r.seq))
	if !r.live {
		b[8] = recordKindTombstone
		return b
	}
	b[8] = recordKindValue
	return append(b, r.value...)
}

// decodeRecord reads encodeRecord's bytes; the value aliases b.
func decodeRecord(b []byte) (record, error) {
	if len(b) < recordHeaderBytes {
		return record{}, corrupt("record of %d bytes is shorter than its header", len(b))
	}
	seq := int64(binary.BigEndian.Uint64(b))
	if seq < 0 {
		return record{}, corrupt("record seq %d is negative", seq)
	}
	switch b[8] {
	case recordKindValue:
		if len(b)-recordHeaderBytes > ltm.MaxValueBytes {
			return record{}, corrupt("record value of %d bytes is over the bound", len(b)-recordHeaderBytes)
		}
		return record{seq: seq, live: true, value: b[recordHeaderBytes:]}, nil
	case recordKindTombstone:
		if len(b) != recordHeaderBytes {
			return record{}, corrupt("tombstone record carries %d value bytes", len(b)-recordHeaderBytes)
		}
		return record{seq: seq}, nil
	}
	return record{}, corrupt("record kind %#x is unknown", b[8])
}

// scopeKey is the unambiguous byte prefix of every key of (entity, namespace): each part
// length-prefixed, so a key's bytes follow it verbatim and a key prefix is a byte prefix.
func scopeKey(entity []byte, namespace string) []byte {
	b := make([]byte, 0, 4+len(entity)+len(namespace))
	b = binary.AppendUvarint(b, uint64(len(entity)))
	b = append(b, entity...)
	b = binary.AppendUvarint(b, uint64(len(namespace)))
	return append(b, namespace...)
}

func corrupt(format string, args ...any) error {
	return &ltm.Error{Code: ltm.CodeCorrupt, Detail: fmt.Sprintf(format, args...)}
}
