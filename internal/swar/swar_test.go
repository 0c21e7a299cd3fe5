package swar

import (
	"encoding/binary"
	"testing"
)

func TestLoad64(t *testing.T) {
	for _, s := range []string{"01234567", "\x00\xff\x80\x7f abcd", "longer than eight bytes"} {
		if got, want := Load64(s), binary.LittleEndian.Uint64([]byte(s)); got != want {
			t.Errorf("Load64(%q) = %#x, want %#x", s, got, want)
		}
	}
	if Ones*'"' != 0x2222222222222222 || High != Ones*0x80 {
		t.Fatal("lane constants")
	}
}
