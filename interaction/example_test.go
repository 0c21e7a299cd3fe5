package interaction_test

import (
	"errors"
	"fmt"
	"log"
	"path/filepath"
	"strings"

	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/beamagents/beamagents/interaction"
	"github.com/beamagents/beamagents/internal/testkit/prototest"
)

// shopFileSet stands in for the binary FileDescriptorSet `buf build -o` writes for
// testdata/proto/shop.proto.
func shopFileSet() *descriptorpb.FileDescriptorSet {
	files, err := prototest.Compile(filepath.Join("testdata", "proto"), "shop.proto")
	if err != nil {
		log.Fatal(err)
	}
	return prototest.FileSet(files)
}

func ExampleCompileFileSet() {
	s, err := interaction.CompileFileSet(shopFileSet(), "shop.proposal")
	if err != nil {
		log.Fatal(err)
	}
	for _, t := range s.Types() {
		fmt.Println(t.StableID(), t.Kind())
	}
	// Output:
	// shop.money record
	// shop.channel variant
	// shop.section record
	// shop.attachment record
	// shop.proposal variant
}

func ExampleSchema_Decode() {
	s, err := interaction.CompileFileSet(shopFileSet(), "shop.proposal")
	if err != nil {
		log.Fatal(err)
	}
	doc := `{"schema":"beam_agents.interaction-value.v1","root_type_id":"shop.proposal","schema_digest":"` + s.Digest() +
		`","value":{"case":"shop.proposal.reply","fields":{"shop.reply.text":"Shipped today.","shop.reply.final":true}}}` + "\n"
	v, err := s.Decode([]byte(doc))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(v.CaseID())
	fmt.Printf("%s\n", v.FieldsJSON())

	// A model that invents a field is refused, with a stable code, rule and path.
	_, err = s.Decode([]byte(strings.Replace(doc, `"shop.reply.final":true`, `"shop.reply.final":true,"shop.reply.refund":"all"`, 1)))
	var e *interaction.Error
	if errors.As(err, &e) {
		fmt.Println(e.Code, e.Rule, e.Path)
	}
	// Output:
	// shop.proposal.reply
	// {"shop.reply.text":"Shipped today.","shop.reply.final":true}
	// SPX-Z206 value.fields.unknown $.value.fields["shop.reply.refund"]
}

func ExampleValue_CopyTo() {
	set := shopFileSet()
	s, err := interaction.CompileFileSet(set, "shop.proposal")
	if err != nil {
		log.Fatal(err)
	}
	doc := `{"schema":"beam_agents.interaction-value.v1","root_type_id":"shop.proposal","schema_digest":"` + s.Digest() +
		`","value":{"case":"shop.proposal.reply","fields":{"shop.reply.text":"Shipped today.","shop.reply.final":true}}}` + "\n"
	v, err := s.Decode([]byte(doc))
	if err != nil {
		log.Fatal(err)
	}
	// With generated code this is &shopv1.Proposal{}; a dynamic message works the same.
	m := dynamicpb.NewMessage(s.Root().Descriptor())
	if err := v.CopyTo(m); err != nil {
		log.Fatal(err)
	}
	reply := m.Get(m.Descriptor().Fields().ByName("reply")).Message()
	fmt.Println(reply.Get(reply.Descriptor().Fields().ByName("text")))
	// Output: Shipped today.
}
