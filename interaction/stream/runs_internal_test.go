package stream

import (
	"math/rand/v2"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/beamagents/beamagents/interaction"
	"github.com/beamagents/beamagents/internal/testkit/prototest"
)

// elementsByByte is elements written plainly: the canonical elements with their commas at
// the start of p, and how many bytes and elements they take.
func elementsByByte(p []byte) (int, int) {
	n, count, end, elems := 0, 0, 0, 0
	for n < len(p) {
		k := 0
		for n+k < len(p) && p[n+k] >= '0' && p[n+k] <= '9' {
			k++
		}
		if n+k == len(p) || p[n+k] != ',' {
			break
		}
		if k == 0 || k > 3 || k > 1 && p[n] == '0' {
			return 0, 0
		}
		if v, _ := strconv.Atoi(string(p[n : n+k])); v > 255 {
			return 0, 0
		}
		n += k + 1
		count++
		end, elems = n, count
	}
	// What follows the last comma is not judged, but a byte before it that is neither a
	// digit nor a comma ends the elements there.
	return end, elems
}

func TestElementsAgreesWithTheByteByBytePath(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	alphabet := []byte("0123456789,,,]x 2255")
	var p [8]byte
	for i := 0; i < 2_000_000; i++ {
		if i%2 == 0 {
			for j := range p {
				p[j] = alphabet[r.IntN(len(alphabet))]
			}
		} else { // elements near the bounds, then noise
			b := p[:0]
			for len(b) < 8 {
				b = strconv.AppendInt(b, int64(r.IntN(300)), 10)
				b = append(b, ',')
			}
			if r.IntN(4) == 0 {
				b[r.IntN(8)] = alphabet[r.IntN(len(alphabet))]
			}
		}
		w := uint64(0)
		for j := 7; j >= 0; j-- {
			w = w<<8 | uint64(p[j])
		}
		gotN, gotE := elements(w)
		wantN, wantE := elementsByByte(p[:])
		// elements declines (0) whenever anything before its last comma is not canonical;
		// when it takes bytes, they must be exactly the canonical elements.
		if gotN != 0 && (gotN != wantN || gotE != wantE) || gotN == 0 && wantN != 0 && lastComma(p[:]) == wantN-1 {
			t.Fatalf("%q: elements %d, %d; byte by byte %d, %d", p[:], gotN, gotE, wantN, wantE)
		}
	}
}

func lastComma(p []byte) int {
	for i := len(p) - 1; i >= 0; i-- {
		if p[i] == ',' {
			return i
		}
	}
	return -1
}

// TestWholeIntAgreesWithTheByteByBytePath: wholeInt takes exactly the integers machine.integer
// admits byte by byte, closing quote included, for every integer field of edges.root (every
// representation, and bounds on both sides of zero, on one side, and zero alone).
func TestWholeIntAgreesWithTheByteByBytePath(t *testing.T) {
	files := prototest.CompileDir(t, filepath.Join("..", "testdata", "proto"), "edges.proto")
	s, err := interaction.CompileFileSet(prototest.FileSet(files), "edges.root")
	if err != nil {
		t.Fatal(err)
	}
	g, err := Compile(s)
	if err != nil {
		t.Fatal(err)
	}
	var ints []*op
	for _, o := range *g.envelope[1].typ {
		if o.kind == opInt {
			ints = append(ints, &o)
		}
	}
	if len(ints) < 12 {
		t.Fatalf("%d integer fields", len(ints))
	}
	// Bounds no field of the schema has: wholly negative, and zero alone.
	for _, ib := range []intBounds{{negOK: true, negMin: 3, negMax: 7}, {zeroOK: true}} {
		o := *ints[0]
		o.ints = ib
		ints = append(ints, &o)
	}
	r := rand.New(rand.NewPCG(5, 6))
	alphabet := []byte(`0123456789-"x9`)
	inputs := []string{`0"`, `-0"`, `00"`, `01"`, `"`, `-"`, `18446744073709551615"`, `18446744073709551616"`,
		`99999999999999999999"`, `100000000000000000000"`, `9223372036854775808"`, `-9223372036854775808"`,
		`-9223372036854775809"`, `5"`, `6"`, `-5"`, `-6"`, `10"`, `20"`, `21"`, `9"`, `255"`, `256"`, `12`}
	for i := 0; i < 100_000; i++ {
		b := make([]byte, 1+r.IntN(23))
		for j := range b {
			b[j] = alphabet[r.IntN(len(alphabet))]
		}
		if r.IntN(2) == 0 {
			b = strconv.AppendUint(b[:r.IntN(2)], r.Uint64()>>r.IntN(64), 10)
			b = append(b, '"')
		}
		inputs = append(inputs, string(b))
	}
	for _, o := range ints {
		for _, p := range inputs {
			want := 0
			m := machine{frames: []frame{{ops: []op{*o, {kind: opEnd}}}}}
			m.cur, m.pos = &m.frames[0].ops[0], intFirst
			for j := 0; j < len(p); j++ {
				if m.integer(o, p[j]) != "" {
					break
				}
				if p[j] == '"' {
					want = j + 1
					break
				}
			}
			if got := wholeInt(o, p); got != want {
				t.Fatalf("%s, %q: wholeInt %d, byte by byte %d", o.field.StableID(), p, got, want)
			}
		}
	}
}
