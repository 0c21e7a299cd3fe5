package provider_test

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/beamagents/beamagents/interaction"
	"github.com/beamagents/beamagents/internal/testkit/corpus"
	"github.com/beamagents/beamagents/internal/testkit/prototest"
	"github.com/beamagents/beamagents/model/provider"
)

var interactionTestdata = filepath.Join("..", "..", "interaction", "testdata")

func corpusSchemas(t *testing.T) (map[string]*interaction.Schema, []corpus.Doc) {
	t.Helper()
	files := prototest.CompileDir(t, filepath.Join(interactionTestdata, "proto"), "shop.proto", "edges.proto", "refused.proto")
	schemas := map[string]*interaction.Schema{}
	docs, err := corpus.Load(filepath.Join(interactionTestdata, "docs"), func(root string) (string, error) {
		for _, f := range files {
			for i := range f.Messages().Len() {
				md := f.Messages().Get(i)
				s, err := interaction.Compile(md)
				if err == nil && s.RootTypeID() == root {
					schemas[root] = s
					return s.Digest(), nil
				}
			}
		}
		t.Fatalf("no schema with root %s", root)
		return "", nil
	})
	if err != nil {
		t.Fatal(err)
	}
	schemas["support.proposal"] = supportSchema(t)
	return schemas, docs
}

func compileProfile(t *testing.T, p *provider.Profile) *jsonschema.Schema {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(p.Schema))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	url := "urn:profile:" + p.Dialect + ":" + p.Name
	if err := c.AddResource(url, doc); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile(url)
	if err != nil {
		t.Fatalf("%s profile of %s is not a 2020-12 schema: %v", p.Dialect, p.Name, err)
	}
	return sch
}

// TestProfilesAdmitEveryAdmittedDocument: each profile is a valid JSON Schema 2020-12
// document, and the value of every document the strict decoder admits validates against it
// (a profile never narrows what is admitted; what it widens is in its delta).
func TestProfilesAdmitEveryAdmittedDocument(t *testing.T) {
	schemas, docs := corpusSchemas(t)
	for _, dialect := range []string{provider.OpenAIStrict, provider.AnthropicTool} {
		compiled := map[string]*jsonschema.Schema{}
		for root, s := range schemas {
			p, err := provider.NewProfile(dialect, s.ProviderJSONSchema())
			if err != nil {
				t.Fatal(err)
			}
			compiled[root] = compileProfile(t, p)
			checkDialect(t, p)
		}
		n := 0
		for _, d := range docs {
			v, err := schemas[d.Schema].Decode(d.Bytes)
			if err != nil {
				continue
			}
			var env struct {
				Value json.RawMessage `json:"value"`
			}
			if err := json.Unmarshal(d.Bytes, &env); err != nil {
				t.Fatal(err)
			}
			inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(env.Value))
			if err != nil {
				t.Fatal(err)
			}
			if err := compiled[d.Schema].Validate(inst); err != nil {
				t.Errorf("%s %s: admitted (%s), refused by the profile: %v", dialect, d.ID(), v.CaseID(), err)
			}
			n++
		}
		if n == 0 {
			t.Fatal("no admitted documents")
		}
	}
}

// checkDialect checks a profile against its API's restrictions: an object root without the
// envelope; for OpenAI strict, every object closed with every property required, and no
// keyword outside the strict subset.
func checkDialect(t *testing.T, p *provider.Profile) {
	t.Helper()
	var root map[string]any
	if err := json.Unmarshal(p.Schema, &root); err != nil {
		t.Fatal(err)
	}
	if root["type"] != "object" {
		t.Fatalf("%s root is not an object", p.Dialect)
	}
	if bytes.Contains(p.Schema, []byte("schema_digest")) || bytes.Contains(p.Schema, []byte(`"x-`)) {
		t.Fatalf("%s profile carries the envelope or custom keywords", p.Dialect)
	}
	if p.Dialect != provider.OpenAIStrict {
		return
	}
	allowed := map[string]bool{"type": true, "properties": true, "required": true, "additionalProperties": true, "$defs": true,
		"$ref": true, "anyOf": true, "enum": true, "pattern": true, "items": true, "minimum": true, "maximum": true, "maxItems": true}
	var walk func(v any, path string)
	walk = func(v any, path string) {
		switch v := v.(type) {
		case map[string]any:
			if v["type"] == "object" {
				props, _ := v["properties"].(map[string]any)
				req, _ := v["required"].([]any)
				if v["additionalProperties"] != false || len(req) != len(props) {
					t.Errorf("%s: an object not closed or not all-required", path)
				}
			}
			for k, sub := range v {
				if strings.HasSuffix(path, "/properties") || strings.HasSuffix(path, "/$defs") {
					walk(sub, path+"/"+k)
					continue
				}
				if !allowed[k] {
					t.Errorf("%s: keyword %s is outside OpenAI's strict subset", path, k)
				}
				walk(sub, path+"/"+k)
			}
		case []any:
			for _, e := range v {
				walk(e, path+"/[]")
			}
		}
	}
	walk(root, "")
}

func TestProfileDelta(t *testing.T) {
	s := supportSchema(t)
	for _, dialect := range []string{provider.OpenAIStrict, provider.AnthropicTool} {
		p, err := provider.NewProfile(dialect, s.ProviderJSONSchema())
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]int{}
		for _, l := range p.Delta {
			got[l.Constraint]++
		}
		// support.proposal: a variant root (its case-to-fields pairing), 6 bounded strings, 1
		// bounded integer.
		if got["case_fields"] != 1 || got["max_bytes"] != 6 || got["range"] != 1 {
			t.Errorf("%s delta %s", dialect, p.DeltaDocument())
		}
	}
}
