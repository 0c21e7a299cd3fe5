package interaction_test

import (
	"bytes"
	"testing"

	"github.com/beamagents/beamagents/interaction"
)

var fuzzRoots = []string{"shop.proposal", "edges.root"}

// FuzzDecode: Decode never panics; whatever it admits re-renders to exactly the input and
// decodes again to the same value; its recognizer and its step-wise reference agree.
func FuzzDecode(f *testing.F) {
	for _, d := range loadCorpus(f) {
		for i, r := range fuzzRoots {
			if r == d.Schema {
				f.Add(uint8(i), d.Bytes)
			}
		}
	}
	f.Fuzz(func(t *testing.T, root uint8, doc []byte) {
		s := mustSchema(t, fuzzRoots[int(root)%len(fuzzRoots)])
		v, err := s.Decode(doc)
		checkPathsAgree(t, s, doc)
		if err != nil {
			if _, ok := err.(*interaction.Error); !ok {
				t.Fatalf("untyped error %T", err)
			}
			return
		}
		if !bytes.Equal(v.Canonical(), doc) {
			t.Fatalf("admitted %q but renders %q", doc, v.Canonical())
		}
		again, err := s.Decode(v.Canonical())
		if err != nil || !bytes.Equal(again.JSON(), v.JSON()) {
			t.Fatalf("re-decoding the canonical document: %v", err)
		}
	})
}
