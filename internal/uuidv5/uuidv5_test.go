package uuidv5_test

import (
	"encoding/hex"
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/google/uuid"

	"github.com/beamagents/beamagents/internal/uuidv5"
)

// Sum agrees with the uuid library's version-5 derivation over the same name, for keys of
// any bytes and seqs of any sign.
func TestSumMatchesTheUUIDLibrary(t *testing.T) {
	ns := uuid.MustParse("6f3e9d2a-1c47-5b8e-9a10-2d4f6b8c0e11")
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 200 {
		key := make([]byte, r.IntN(40))
		for j := range key {
			key[j] = byte(r.UintN(256))
		}
		seq, step := int64(r.Uint64()), uint64(r.Uint32())
		name := hex.EncodeToString(key) + "|" + strconv.FormatInt(seq, 10) + "|" + strconv.FormatUint(step, 10) + "|x"
		want := uuid.NewSHA1(ns, []byte(name))
		b := uuidv5.Field(uuidv5.Uint(uuidv5.Begin(nil, ns, key, seq), step), "x")
		if got := uuid.UUID(uuidv5.Sum(b)); got != want {
			t.Fatalf("case %d (%q): Sum = %s, uuid.NewSHA1 = %s", i, name, got, want)
		}
	}
}

func TestDeriveAllocatesNothing(t *testing.T) {
	ns := uuid.MustParse("b1d7c4e2-93a6-5f08-8c31-7e5a9d0f2b46")
	key := []byte("customer-0042")
	if n := testing.AllocsPerRun(100, func() {
		var buf [128]byte
		_ = uuidv5.Sum(uuidv5.Uint(uuidv5.Begin(buf[:0], ns, key, 7), 2))
	}); n != 0 {
		t.Fatalf("%v allocations per derivation", n)
	}
}
