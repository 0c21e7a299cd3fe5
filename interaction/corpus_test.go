package interaction_test

import (
	"bytes"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/beamagents/beamagents/interaction"
	"github.com/beamagents/beamagents/internal/testkit/corpus"
)

// ruleCodes maps every decoding rule to its code; a corpus document named after a rule must
// be refused with exactly that code and rule.
var ruleCodes = map[interaction.Rule]interaction.Code{
	interaction.RuleDocumentBytes: interaction.CodeNotAdmitted, interaction.RuleUTF8: interaction.CodeNotAdmitted,
	interaction.RuleBOM: interaction.CodeNotCanonical, interaction.RuleLineEnding: interaction.CodeNotCanonical,
	interaction.RuleJSON: interaction.CodeNotCanonical, interaction.RuleEnvelope: interaction.CodeNotCanonical,
	interaction.RuleEnvelopeSchema: interaction.CodeNotAdmitted, interaction.RuleEnvelopeRootTypeID: interaction.CodeNotAdmitted,
	interaction.RuleEnvelopeSchemaDigest: interaction.CodeNotAdmitted, interaction.RuleMaxDepth: interaction.CodeNotAdmitted,
	interaction.RuleRepresentation: interaction.CodeNotAdmitted, interaction.RuleCase: interaction.CodeNotAdmitted,
	interaction.RuleFieldsUnknown: interaction.CodeNotAdmitted, interaction.RuleFieldsMissing: interaction.CodeNotAdmitted,
	interaction.RuleIntegerRange: interaction.CodeNotAdmitted, interaction.RuleStringBytes: interaction.CodeNotAdmitted,
	interaction.RuleBytesLength: interaction.CodeNotAdmitted, interaction.RuleBytesElement: interaction.CodeNotAdmitted,
	interaction.RuleCanonical: interaction.CodeNotCanonical,
}

func loadCorpus(tb testing.TB) []corpus.Doc {
	tb.Helper()
	docs, err := corpus.Load(filepath.Join("testdata", "docs"), func(root string) (string, error) {
		return mustSchema(tb, root).Digest(), nil
	})
	if err != nil {
		tb.Fatal(err)
	}
	return docs
}

func TestCorpus(t *testing.T) {
	docs := loadCorpus(t)
	var report bytes.Buffer
	seen := map[interaction.Rule]bool{}
	for _, d := range docs {
		s := mustSchema(t, d.Schema)
		v, err := s.Decode(d.Bytes)
		line := "admitted"
		if err != nil {
			line = err.Error()
		}
		fmt.Fprintf(&report, "%s: %s\n", d.ID(), line)
		t.Run(d.ID(), func(t *testing.T) {
			if d.Valid() {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				if !bytes.Equal(v.Canonical(), d.Bytes) {
					t.Fatal("the canonical document differs from the admitted bytes")
				}
				return
			}
			rule := interaction.Rule(d.Rule())
			code, known := ruleCodes[rule]
			if !known {
				t.Fatalf("corpus file names unknown rule %q", rule)
			}
			seen[rule] = true
			var e *interaction.Error
			if !errors.As(err, &e) || e.Code != code || e.Rule != rule {
				t.Fatalf("got %v, want %s %s", err, code, rule)
			}
			if e.Path == "" || !strings.HasPrefix(e.Path, "$") {
				t.Fatalf("no JSON path: %v", err)
			}
			if strings.ContainsAny(line, "\r\n") || !utf8.ValidString(line) {
				t.Fatalf("diagnostic is not one UTF-8 line: %q", line)
			}
		})
	}
	for rule := range ruleCodes {
		if !seen[rule] {
			t.Errorf("no corpus document exercises %s", rule)
		}
	}
	golden(t, "docs.golden", report.Bytes())
}

// TestDecodePathsAgree runs the recognizer and the step-wise reference on every corpus
// document: they must admit the same documents with the same values.
func TestDecodePathsAgree(t *testing.T) {
	for _, d := range loadCorpus(t) {
		s := mustSchema(t, d.Schema)
		checkPathsAgree(t, s, d.Bytes)
	}
}

func checkPathsAgree(t *testing.T, s *interaction.Schema, doc []byte) {
	t.Helper()
	if len(doc) > interaction.MaxDocumentBytes || !utf8.Valid(doc) {
		return
	}
	fast := s.Recognize(string(doc))
	ref, err := s.Reference(string(doc))
	if (fast != nil) != (err == nil) {
		t.Fatalf("recognizer admits=%v, reference err=%v for %q", fast != nil, err, doc)
	}
	if fast != nil && !reflect.DeepEqual(fast, ref) {
		t.Fatalf("the paths decode different values for %q", doc)
	}
}
