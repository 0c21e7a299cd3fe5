package budget_test

import (
	"errors"
	"testing"

	"github.com/beamagents/beamagents/budget"
)

// The admission stage's cells decode or refuse with ErrCell, never panic, and what decodes
// encodes back to a value that decodes the same.
func FuzzDecodeTally(f *testing.F) {
	f.Add([]byte{})
	f.Add(budget.MarshalTally(budget.Tally{WindowMs: 60000, Granted: 300, Started: true}))
	f.Add([]byte{0x08, 0x01, 0x18, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01})
	f.Fuzz(func(t *testing.T, b []byte) {
		tl, err := budget.DecodeTally(b)
		if err != nil {
			if !errors.Is(err, budget.ErrCell) {
				t.Fatalf("untyped error %v", err)
			}
			return
		}
		again, err := budget.DecodeTally(budget.MarshalTally(tl))
		if err != nil || again != tl {
			t.Fatalf("%+v re-decodes as %+v, %v", tl, again, err)
		}
	})
}

func FuzzDecodeFrame(f *testing.F) {
	f.Add(budget.MarshalFrame(budget.Event{Key: []byte("k"), AtMs: 5, Value: []byte{0x0a, 0x01, 'k'}}))
	f.Add([]byte{0x08, 0x01, 0x12, 0x00})
	f.Fuzz(func(t *testing.T, b []byte) {
		ev, err := budget.DecodeFrame(b)
		if err != nil {
			if !errors.Is(err, budget.ErrCell) {
				t.Fatalf("untyped error %v", err)
			}
			return
		}
		again, err := budget.DecodeFrame(budget.MarshalFrame(ev))
		if err != nil || string(again.Key) != string(ev.Key) || again.AtMs != ev.AtMs || again.FromMs != ev.FromMs || string(again.Value) != string(ev.Value) {
			t.Fatalf("%+v re-decodes as %+v, %v", ev, again, err)
		}
	})
}

func FuzzParsePacked(f *testing.F) {
	ev := budget.Event{Key: []byte("k"), AtMs: 5, Value: []byte{0x0a, 0x01, 'k'}, FromMs: 2}
	f.Add(budget.AppendPacked(budget.AppendPacked(nil, ev), ev))
	f.Add([]byte{0x05, 0x08, 0x01})
	f.Fuzz(func(t *testing.T, b []byte) {
		evs, err := budget.ParsePacked(b)
		if err != nil {
			if !errors.Is(err, budget.ErrCell) {
				t.Fatalf("untyped error %v", err)
			}
			return
		}
		var again []byte
		for _, ev := range evs {
			again = budget.AppendPacked(again, ev)
		}
		if evs2, err := budget.ParsePacked(again); err != nil || len(evs2) != len(evs) {
			t.Fatalf("%d events re-decode as %d, %v", len(evs), len(evs2), err)
		}
	})
}
