package statecodec

import (
	"fmt"

	"google.golang.org/protobuf/encoding/protowire"
)

// seqField is the field number of the [CellSeq] encoding, the wire form of
// `message Seq { int64 next = 1; }`.
const seqField protowire.Number = 1

// EncodeSeq encodes the key's next activation number for [CellSeq]. Zero (a new key) encodes
// as no bytes; a negative seq gives [ErrInvalidArgument].
func EncodeSeq(seq int64) ([]byte, error) {
	if seq < 0 {
		return nil, invalid(CellSeq, "negative seq")
	}
	if seq == 0 {
		return nil, nil
	}
	return protowire.AppendVarint(protowire.AppendTag(nil, seqField, protowire.VarintType), uint64(seq)), nil
}

// DecodeSeq decodes a [CellSeq] cell; empty bytes give 0. Anything but field 1 as a
// non-negative varint gives [ErrCorrupt]: the cell has no room for unknown fields, a new
// encoding takes a new state id.
func DecodeSeq(b []byte) (int64, error) {
	var seq int64
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return 0, corruptSeq(protowire.ParseError(n))
		}
		if num != seqField || typ != protowire.VarintType {
			return 0, corruptSeq(fmt.Errorf("unexpected field %d (wire type %d)", num, typ))
		}
		v, vn := protowire.ConsumeVarint(b[n:])
		if vn < 0 {
			return 0, corruptSeq(protowire.ParseError(vn))
		}
		seq = int64(v) // proto's last-one-wins rule for a repeated scalar
		b = b[n+vn:]
	}
	if seq < 0 {
		return 0, corruptSeq(fmt.Errorf("negative seq %d", seq))
	}
	return seq, nil
}

func corruptSeq(err error) error { return &Error{Code: CodeCorrupt, Cell: CellSeq, Err: err} }
