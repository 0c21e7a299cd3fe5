package intent_test

import (
	"testing"

	"github.com/google/uuid"

	"github.com/beamagents/beamagents/intent"
)

// Known answers, computed independently of this code with Python's standard library
// (CPython 3, uuid module):
//
//	python3 -c 'import uuid; ns = uuid.UUID("6f3e9d2a-1c47-5b8e-9a10-2d4f6b8c0e11"); print(uuid.uuid5(ns, f"{key.hex()}|{seq}|{step}"))'
//
// for each (key, seq, step) below. They pin the namespace, the name layout (lowercase hex of
// the key bytes, decimal integers, '|' separators) and the canonical string form.
func TestIDKnownAnswers(t *testing.T) {
	for name, tc := range map[string]struct {
		key  []byte
		seq  int64
		step uint32
		want string
	}{
		"ascii key":          {[]byte("customer-0042"), 7, 2, "0ed2c6f7-be13-55e3-8120-e2382bdf0187"},
		"empty key, seq 0":   {nil, 0, 0, "30db89a2-7585-5735-849e-0be871f4c11d"},
		"non-UTF-8 key":      {[]byte{0xff, 0x00, 0xfe, 0x80}, 1, 0, "a4958a62-82ea-5d61-b827-d45087781db5"},
		"seq 2^62":           {[]byte("k"), 1 << 62, 3, "23807341-348a-569c-a80a-005e51a73641"},
		"largest seq":        {[]byte("k"), 1<<63 - 1, 0, "6ffcff58-3eec-56ed-9af7-679aa5ef8241"},
		"largest step_index": {[]byte("k"), 0, 1<<32 - 1, "687a51b3-a0ac-5669-9f13-07d5cf8dd722"},
	} {
		t.Run(name, func(t *testing.T) {
			if got := intent.ID(tc.key, tc.seq, tc.step); got != tc.want {
				t.Fatalf("ID(%x, %d, %d) = %s, want %s", tc.key, tc.seq, tc.step, got, tc.want)
			}
		})
	}
}

func TestIDIsAVersion5UUIDAndSeparatesItsInputs(t *testing.T) {
	base := intent.ID([]byte("k"), 1, 0)
	u, err := uuid.Parse(base)
	if err != nil || u.Version() != 5 || u.Variant() != uuid.RFC4122 || u.String() != base {
		t.Fatalf("ID %s is not a canonical RFC 9562 UUIDv5 (%v)", base, err)
	}
	distinct := map[string]string{}
	for name, id := range map[string]string{
		"base":            base,
		"other key":       intent.ID([]byte("l"), 1, 0),
		"other seq":       intent.ID([]byte("k"), 2, 0),
		"other step":      intent.ID([]byte("k"), 1, 1),
		"key absorbs seq": intent.ID([]byte("k\x00\x00\x00\x00\x00\x00\x00\x01"), 0, 0),
		"empty key":       intent.ID(nil, 1, 0),
		"negative seq":    intent.ID([]byte("k"), -1, 0),
	} {
		if prev, dup := distinct[id]; dup {
			t.Errorf("%s and %s share id %s", name, prev, id)
		}
		distinct[id] = name
	}
}

func TestIDAllocatesOnlyItsString(t *testing.T) {
	key := []byte("customer-0042")
	if n := testing.AllocsPerRun(100, func() { _ = intent.ID(key, 7, 2) }); n > 1 {
		t.Fatalf("%v allocations per id", n)
	}
}
