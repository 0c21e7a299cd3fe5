package budget

import (
	"errors"
	"fmt"

	"google.golang.org/protobuf/encoding/protowire"
)

// The admission stage's state (package transforms): per tenant one Tally cell and a buffer of
// pending events, elements of packed Event frames (AppendPacked). Tallies and frames are
// protobuf wire format with a version, so a later layout is refused, never misread.

const (
	tallyVersion = 1
	frameVersion = 1
)

// ErrCell matches every error of DecodeTally and DecodeFrame.
var ErrCell = errors.New("budget: admission state does not decode")

// MarshalTally encodes t; the zero Tally encodes as nothing (an empty cell).
func MarshalTally(t Tally) []byte {
	if t == (Tally{}) {
		return nil
	}
	b := protowire.AppendTag(nil, 1, protowire.VarintType)
	b = protowire.AppendVarint(b, tallyVersion)
	b = protowire.AppendTag(b, 2, protowire.VarintType)
	b = protowire.AppendVarint(b, uint64(t.WindowMs))
	b = protowire.AppendTag(b, 3, protowire.VarintType)
	b = protowire.AppendVarint(b, uint64(t.Granted))
	return b
}

// DecodeTally decodes a Tally cell (empty: the zero Tally). Its errors match ErrCell.
func DecodeTally(b []byte) (Tally, error) {
	if len(b) == 0 {
		return Tally{}, nil
	}
	var t Tally
	version := uint64(0)
	err := fields(b, func(num protowire.Number, v uint64, _ []byte) error {
		switch num {
		case 1:
			version = v
		case 2:
			t.WindowMs = int64(v)
		case 3:
			t.Granted = int64(v)
		default:
			return fmt.Errorf("%w: unknown tally field %d", ErrCell, num)
		}
		return nil
	})
	switch {
	case err != nil:
		return Tally{}, err
	case version != tallyVersion:
		return Tally{}, fmt.Errorf("%w: tally version %d", ErrCell, version)
	case t.Granted < 0:
		return Tally{}, fmt.Errorf("%w: %d tokens granted", ErrCell, t.Granted)
	}
	t.Started = true
	return t, nil
}

// MarshalFrame encodes a pending event.
func MarshalFrame(ev Event) []byte {
	b := protowire.AppendTag(nil, 1, protowire.VarintType)
	b = protowire.AppendVarint(b, frameVersion)
	b = protowire.AppendTag(b, 2, protowire.BytesType)
	b = protowire.AppendBytes(b, ev.Key)
	b = protowire.AppendTag(b, 3, protowire.VarintType)
	b = protowire.AppendVarint(b, uint64(ev.AtMs))
	b = protowire.AppendTag(b, 4, protowire.BytesType)
	b = protowire.AppendBytes(b, ev.Value)
	if ev.FromMs != 0 {
		b = protowire.AppendTag(b, 5, protowire.VarintType)
		b = protowire.AppendVarint(b, uint64(ev.FromMs))
	}
	return b
}

// DecodeFrame decodes a pending event. Its errors match ErrCell.
func DecodeFrame(b []byte) (Event, error) {
	var ev Event
	version := uint64(0)
	err := fields(b, func(num protowire.Number, v uint64, raw []byte) error {
		switch num {
		case 1:
			version = v
		case 2:
			ev.Key = raw
		case 3:
			ev.AtMs = int64(v)
		case 4:
			ev.Value = raw
		case 5:
			ev.FromMs = int64(v)
		default:
			return fmt.Errorf("%w: unknown frame field %d", ErrCell, num)
		}
		return nil
	})
	switch {
	case err != nil:
		return Event{}, err
	case version != frameVersion:
		return Event{}, fmt.Errorf("%w: frame version %d", ErrCell, version)
	case len(ev.Key) == 0:
		return Event{}, fmt.Errorf("%w: frame without an entity key", ErrCell)
	}
	return ev, nil
}

// fields walks b's fields: varints as v, bytes as raw (aliasing b); other wire types are
// refused.
func fields(b []byte, fn func(num protowire.Number, v uint64, raw []byte) error) error {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return fmt.Errorf("%w: %v", ErrCell, protowire.ParseError(n))
		}
		b = b[n:]
		var v uint64
		var raw []byte
		switch typ {
		case protowire.VarintType:
			v, n = protowire.ConsumeVarint(b)
		case protowire.BytesType:
			raw, n = protowire.ConsumeBytes(b)
		default:
			return fmt.Errorf("%w: field %d has wire type %d", ErrCell, num, typ)
		}
		if n < 0 {
			return fmt.Errorf("%w: %v", ErrCell, protowire.ParseError(n))
		}
		b = b[n:]
		if err := fn(num, v, raw); err != nil {
			return err
		}
	}
	return nil
}

// AppendPacked appends ev's frame to a packed buffer element b: frames, each preceded by its
// length (a varint), so that a buffer's events can be rewritten as one element.
func AppendPacked(b []byte, ev Event) []byte {
	return protowire.AppendBytes(b, MarshalFrame(ev))
}

// ParsePacked decodes a packed buffer element. Its errors match ErrCell.
func ParsePacked(b []byte) ([]Event, error) {
	var evs []Event
	for len(b) > 0 {
		frame, n := protowire.ConsumeBytes(b)
		if n < 0 {
			return nil, fmt.Errorf("%w: packed frames: %v", ErrCell, protowire.ParseError(n))
		}
		ev, err := DecodeFrame(frame)
		if err != nil {
			return nil, err
		}
		evs, b = append(evs, ev), b[n:]
	}
	return evs, nil
}
