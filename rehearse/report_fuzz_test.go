package rehearse_test

import (
	"bytes"
	"errors"
	"testing"

	"github.com/beamagents/beamagents/rehearse"
)

// ReadReport never panics; what it accepts is a report, refused input is ErrReport, and an
// accepted report reads back the same after WriteJSONL.
func FuzzReadReport(f *testing.F) {
	for _, seed := range []string{
		`{"summary":{"keys":0,"divergent":0,"answered":0,"inlined":0,"live_calls":0,"live_tokens":0}}`,
		`{"key":{"entity":"azE=","divergence":{"kind":"model request","seq":0,"step":0,"detail":"x"},"stop":"unanswered model call","answered":0,"inlined":0,"live_calls":0,"live_tokens":0}}` + "\n" +
			`{"summary":{"keys":1,"divergent":1,"by_kind":{"model request":1},"stopped":{"unanswered model call":1},"answered":0,"inlined":0,"live_calls":0,"live_tokens":0}}`,
		`{"key":{},"summary":{}}`,
		`{"summary":{}}` + "\n" + `{"key":{}}`,
		`{"keys":1}`,
		"",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := rehearse.ReadReport(bytes.NewReader(data))
		if err != nil {
			if !errors.Is(err, rehearse.ErrReport) {
				t.Fatalf("error %v is not ErrReport", err)
			}
			return
		}
		var once, twice bytes.Buffer
		if err := r.WriteJSONL(&once); err != nil {
			t.Fatal(err)
		}
		back, err := rehearse.ReadReport(bytes.NewReader(once.Bytes()))
		if err != nil {
			t.Fatalf("a written report does not read back: %v\n%s", err, once.Bytes())
		}
		if err := back.WriteJSONL(&twice); err != nil || !bytes.Equal(once.Bytes(), twice.Bytes()) {
			t.Fatalf("not stable:\n%s\n%s", once.Bytes(), twice.Bytes())
		}
	})
}
