package statecodec_test

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"

	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/statecodec"
)

func ExampleDecodeMemory() {
	// An empty cell is a key's first activation.
	m, err := statecodec.DecodeMemory(nil, statecodec.MemoryOptions{})
	if err != nil {
		panic(err)
	}
	_ = m.Put("customer.name", []byte("Ada"), 1767225600000) // event time, not wall clock
	cell, _ := m.Encode()

	// The next activation reads the committed cell back.
	m, err = statecodec.DecodeMemory(cell, statecodec.MemoryOptions{})
	if err != nil {
		panic(err) // in a pipeline: a dead letter, with the cell left as committed
	}
	v, ok := m.Get("customer.name", 1767225660000)
	fmt.Println(string(v), ok, m.TotalValueBytes())

	// Corrupt bytes and blobs from a newer binary are typed errors naming the cell.
	_, err = statecodec.DecodeMemory([]byte{0x12, 0x09}, statecodec.MemoryOptions{})
	fmt.Println(errors.Is(err, statecodec.ErrCorrupt), err.(*statecodec.Error).Cell)
	_, err = statecodec.DecodeMemory([]byte{0x08, 0x02}, statecodec.MemoryOptions{})
	fmt.Println(errors.Is(err, statecodec.ErrFutureVersion))
	// Output:
	// Ada true 3
	// true memory.v1
	// true
}

func ExampleMemory_Put() {
	m := statecodec.NewMemory(statecodec.MemoryOptions{MaxValueBytes: 8})
	_ = m.Put("a", []byte("1234"), 1)
	_ = m.Put("b", []byte("5678"), 2)
	m.Get("a", 3)                   // a is now the most recently used
	_ = m.Put("c", []byte("90"), 4) // over 8 bytes: b, the least recently used, goes
	for k, v := range m.All() {
		fmt.Println(k, string(v))
	}
	err := m.Put("d", []byte("too large"), 5)
	fmt.Println(errors.Is(err, statecodec.ErrTooLarge))
	for name, n := range m.Stats().All() {
		fmt.Println(name, n)
	}
	// Output:
	// a 1234
	// c 90
	// true
	// evictions 1
	// evicted_bytes 4
}

func ExampleCache_Lookup() {
	c := statecodec.NewCache(statecodec.CacheOptions{MaxResponseBytes: 16})
	sum := sha256.Sum256([]byte("canonical request material"))
	key := hex.EncodeToString(sum[:])

	l, _ := c.Lookup(key, 1000)
	fmt.Println(l.Status) // call the model
	digestOnly, _ := c.Store(key, []byte("a response longer than the cap"), 1000)
	fmt.Println(digestOnly)

	// A retry finds only the digest: it calls the model again and can tell whether the
	// provider answered the same.
	l, _ = c.Lookup(key, 2000)
	fmt.Println(l.Status, l.Matches([]byte("a response longer than the cap")), l.Matches([]byte("something else")))
	// Output:
	// miss
	// true
	// digest_only_hit true false
}

func ExampleSuspend() {
	c, err := statecodec.Suspend(statecodec.Suspension{
		Seq: 7, StepIndex: 2, PendingIntentIDs: []string{"intent-a", "intent-b"},
		SuspendedAtMs: 1000, DeadlineMs: 301000,
	})
	if err != nil {
		panic(err)
	}
	fmt.Println(c.Resolve("intent-x"), c.Resolve("intent-a"), c.AllResolved())
	fmt.Println(c.DeadlineDue(301000))
	_ = c.Escalate(601000)
	fmt.Println(c.Escalations(), c.DeadlineDue(301000))
	fmt.Println(c.Resolve("intent-b"), c.AllResolved())

	// Not suspended: the cell is cleared.
	var none *statecodec.Continuation
	cell, _ := none.Encode()
	fmt.Println(len(cell))
	// Output:
	// false true false
	// true
	// 1 false
	// true true
	// 0
}

func ExampleDecodePending() {
	p := statecodec.NewPending()
	_ = p.Add(&pb.ToolIntent{IntentId: "intent-a", ToolName: "refund", Kind: pb.ToolIntent_APPROVAL})
	cell, _ := p.Encode()

	p, err := statecodec.DecodePending(cell)
	if err != nil {
		panic(err)
	}
	ti, ok := p.Get("intent-a")
	fmt.Println(ok, ti.GetKind())
	_, ok = p.Remove("intent-a")
	fmt.Println(ok, p.Len())
	// Output:
	// true APPROVAL
	// true 0
}

func ExampleEncodeSeq() {
	cell, _ := statecodec.EncodeSeq(8)
	seq, _ := statecodec.DecodeSeq(cell)
	fmt.Printf("%x %d\n", cell, seq)
	first, _ := statecodec.DecodeSeq(nil) // a new key
	fmt.Println(first)
	// Output:
	// 0808 8
	// 0
}

func ExampleDecodeCache() {
	// Cells of older schema versions are migrated on decode; the counters say so.
	preVersioned := []byte{0x18, 0x00} // total_response_bytes only, no version stamp
	c, err := statecodec.DecodeCache(preVersioned, statecodec.CacheOptions{})
	if err != nil {
		panic(err)
	}
	for name, n := range c.Stats().All() {
		fmt.Println(name, n)
	}
	cell, _ := c.Encode()
	fmt.Printf("%x\n", cell) // written back at the current version
	// Output:
	// migrated 1
	// pre_versioned 1
	// 0801
}

func ExampleDecodeContinuation() {
	c, err := statecodec.DecodeContinuation(nil)
	fmt.Println(c == nil, err) // an empty cell: not suspended
	_, err = statecodec.DecodeContinuation([]byte{0x08, 0x07})
	fmt.Println(errors.Is(err, statecodec.ErrFutureVersion)) // dead letter, cell untouched
	// Output:
	// true <nil>
	// true
}
