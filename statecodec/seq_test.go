package statecodec_test

import (
	"bytes"
	"math"
	"testing"

	"github.com/beamagents/beamagents/statecodec"
)

func TestSeqCell(t *testing.T) {
	tests := []struct {
		name string
		seq  int64
		want []byte
	}{
		{"new key is an empty cell", 0, nil},
		{"one", 1, []byte{0x08, 0x01}},
		{"300", 300, []byte{0x08, 0xac, 0x02}},
		{"max", math.MaxInt64, []byte{0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b, err := statecodec.EncodeSeq(tc.seq)
			if err != nil || !bytes.Equal(b, tc.want) {
				t.Fatalf("EncodeSeq(%d) = %x, %v; want %x", tc.seq, b, err, tc.want)
			}
			if got, err := statecodec.DecodeSeq(b); got != tc.seq || err != nil {
				t.Fatalf("DecodeSeq = %d, %v", got, err)
			}
		})
	}
	if _, err := statecodec.EncodeSeq(-1); err == nil {
		t.Fatal("negative seq encoded")
	} else {
		wantErr(t, err, statecodec.ErrInvalidArgument, statecodec.CellSeq)
	}
}

func TestDecodeSeqRefusesCorruptCells(t *testing.T) {
	tests := []struct {
		name string
		in   []byte
	}{
		{"negative", []byte{0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}},
		{"truncated varint", []byte{0x08, 0x80}},
		{"bad tag", []byte{0x80}},
		{"other field", []byte{0x10, 0x01}},
		{"field 1 as bytes", []byte{0x0a, 0x01, 0x01}},
		{"trailing garbage", []byte{0x08, 0x01, 0xff}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := statecodec.DecodeSeq(tc.in)
			wantErr(t, err, statecodec.ErrCorrupt, statecodec.CellSeq)
		})
	}
}

func TestDecodeSeqLastValueWins(t *testing.T) {
	if got, err := statecodec.DecodeSeq([]byte{0x08, 0x01, 0x08, 0x05}); got != 5 || err != nil {
		t.Fatalf("DecodeSeq = %d, %v", got, err)
	}
}
