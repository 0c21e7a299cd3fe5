package interaction_test

import (
	"bytes"
	"sync"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/beamagents/beamagents/interaction"
)

// projection compiles s's provider projection with an independent JSON Schema 2020-12
// implementation, which also validates it against the 2020-12 meta-schema.
func projection(tb testing.TB, s *interaction.Schema) *jsonschema.Schema {
	tb.Helper()
	if p, ok := projections.Load(s); ok {
		return p.(*jsonschema.Schema)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(s.ProviderJSONSchema()))
	if err != nil {
		tb.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.AssertFormat()
	url := "urn:beamagents:" + s.RootTypeID()
	if err := c.AddResource(url, doc); err != nil {
		tb.Fatal(err)
	}
	sch, err := c.Compile(url)
	if err != nil {
		tb.Fatalf("the projection is not a valid 2020-12 schema: %v", err)
	}
	projections.Store(s, sch)
	return sch
}

var projections sync.Map // *interaction.Schema -> *jsonschema.Schema

func validate(sch *jsonschema.Schema, doc []byte) (parsed bool, err error) {
	inst, perr := jsonschema.UnmarshalJSON(bytes.NewReader(doc))
	if perr != nil {
		return false, nil
	}
	return true, sch.Validate(inst)
}

func TestProjectionIsA2020Schema(t *testing.T) {
	for _, root := range []string{"shop.proposal", "edges.root", "refused2.admitted"} {
		projection(t, mustSchema(t, root))
	}
}

// TestProjectionAdmitsEveryAdmittedDocument: whatever Decode admits validates.
func TestProjectionAdmitsEveryAdmittedDocument(t *testing.T) {
	for _, d := range loadCorpus(t) {
		s := mustSchema(t, d.Schema)
		if _, err := s.Decode(d.Bytes); err != nil {
			continue
		}
		if _, err := validate(projection(t, s), d.Bytes); err != nil {
			t.Errorf("%s: admitted by Decode, refused by the projection: %v", d.ID(), err)
		}
	}
}

// TestProjectionDescribesTheShape: the projection is not vacuous — documents of the wrong
// shape fail it too. Bounds it cannot express (UTF-8 byte lengths, integer ranges, canonical
// form) are left to Decode.
func TestProjectionDescribesTheShape(t *testing.T) {
	shapeRules := map[string]bool{
		"value.fields.unknown": true, "value.fields.missing": true, "value.case": true,
		"envelope": true, "envelope.schema": true, "envelope.root_type_id": true, "envelope.schema_digest": true,
		"value.bytes_length": true, "value.representation": true,
	}
	n := 0
	for _, d := range loadCorpus(t) {
		if !shapeRules[d.Rule()] {
			continue
		}
		parsed, err := validate(projection(t, mustSchema(t, d.Schema)), d.Bytes)
		if !parsed {
			continue
		}
		n++
		if err == nil {
			t.Errorf("%s: the projection admits a document of the wrong shape", d.ID())
		}
	}
	if n < 40 {
		t.Fatalf("only %d shape documents checked", n)
	}
}
