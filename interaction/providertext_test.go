package interaction_test

import (
	"errors"
	"fmt"
	"log"
	"testing"

	"github.com/beamagents/beamagents/interaction"
)

func ExampleSchema_ReadProvider() {
	s, err := interaction.CompileFileSet(shopFileSet(), "shop.proposal")
	if err != nil {
		log.Fatal(err)
	}
	// What a provider might write: no envelope, indented, members out of order, no final LF.
	text := `{
  "fields": {"shop.reply.final": true, "shop.reply.text": "Shipped today."},
  "case": "shop.proposal.reply"
}`
	doc, applied, err := s.ReadProvider([]byte(text))
	if err != nil {
		log.Fatal(err)
	}
	v, err := s.Decode(doc) // the canonical document the strict decoder admits
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%s\n%v\n", v.JSON(), applied)

	// Nothing is repaired: a null is refused, not filled in.
	_, _, err = s.ReadProvider([]byte(`{"case":"shop.proposal.reply","fields":{"shop.reply.text":null,"shop.reply.final":true}}`))
	var e *interaction.Error
	if errors.As(err, &e) {
		fmt.Println(e.Code, e.Rule, e.Path)
	}
	// Output:
	// {"case":"shop.proposal.reply","fields":{"shop.reply.text":"Shipped today.","shop.reply.final":true}}
	// [envelope final_lf key_order whitespace]
	// SPX-Z206 value.null $.value.fields["shop.reply.text"]
}

// TestReadProviderCodes: JSON-level refusals are SPX-Z205, every admission rule SPX-Z206, and a
// canonical document reads as itself with nothing applied.
func TestReadProviderCodes(t *testing.T) {
	s, err := interaction.CompileFileSet(shopFileSet(), "shop.proposal")
	if err != nil {
		t.Fatal(err)
	}
	value := `{"case":"shop.proposal.reply","fields":{"shop.reply.text":"hi","shop.reply.final":true}}`
	canon := `{"schema":"beam_agents.interaction-value.v1","root_type_id":"shop.proposal","schema_digest":"` + s.Digest() + `","value":` + value + "}\n"
	doc, applied, err := s.ReadProvider([]byte(canon))
	if err != nil || string(doc) != canon || applied != nil {
		t.Fatalf("the canonical document reads as %q %v %v", doc, applied, err)
	}
	for _, tc := range []struct {
		name, text string
		code       interaction.Code
		rule       interaction.Rule
	}{
		{"not JSON", `{"case":`, interaction.CodeNotCanonical, interaction.RuleJSON},
		{"a duplicate key", `{"case":"shop.proposal.reply","case":"shop.proposal.reply"}`, interaction.CodeNotCanonical, interaction.RuleDuplicateKey},
		{"not UTF-8", "\xff", interaction.CodeNotAdmitted, interaction.RuleUTF8},
		{"too long", string(make([]byte, interaction.MaxProviderBytes+1)), interaction.CodeNotAdmitted, interaction.RuleInputBytes},
		{"an array", `[]`, interaction.CodeNotAdmitted, interaction.RuleRepresentation},
		{"another schema's envelope", `{"schema":"x","root_type_id":"shop.proposal","schema_digest":"d","value":` + value + `}`, interaction.CodeNotAdmitted, interaction.RuleEnvelope},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := s.ReadProvider([]byte(tc.text))
			if !errors.Is(err, &interaction.Error{Code: tc.code, Rule: tc.rule}) {
				t.Fatalf("got %v, want %s %s", err, tc.code, tc.rule)
			}
		})
	}
}
