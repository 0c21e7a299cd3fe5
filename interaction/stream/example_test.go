package stream_test

import (
	"fmt"
	"log"
	"path/filepath"
	"strings"
	"testing"

	"github.com/beamagents/beamagents/interaction"
	"github.com/beamagents/beamagents/interaction/stream"
	"github.com/beamagents/beamagents/internal/testkit/prototest"
)

// shopSchema stands in for interaction.CompileFileSet on the descriptor set of
// interaction/testdata/proto/shop.proto.
func shopSchema() *interaction.Schema {
	files := prototest.CompileDir(exampleTB{}, filepath.Join("..", "testdata", "proto"), "shop.proto")
	s, err := interaction.CompileFileSet(prototest.FileSet(files), "shop.proposal")
	if err != nil {
		log.Fatal(err)
	}
	return s
}

func Example() {
	s := shopSchema()
	g, err := stream.Compile(s) // once per schema
	if err != nil {
		log.Fatal(err)
	}
	doc := `{"schema":"beam_agents.interaction-value.v1","root_type_id":"shop.proposal","schema_digest":"` + s.Digest() +
		`","value":{"case":"shop.proposal.reply","fields":{"shop.reply.text":"Shipped today.","shop.reply.final":true}}}` + "\n"

	d := g.NewDecoder() // once per provider response
	for len(doc) > 0 {
		n := min(len(doc), 16) // chunks as they arrive from the provider
		if o := d.Push([]byte(doc[:n])); o.State() != stream.Incomplete {
			log.Fatal(o.Err()) // cancel the provider call here
		}
		doc = doc[n:]
	}
	o := d.Finish()
	fmt.Println(o.State(), o.Value().CaseID())
	// Output: accepted shop.proposal.reply
}

func ExampleDecoder_Push() {
	g, err := stream.Compile(shopSchema())
	if err != nil {
		log.Fatal(err)
	}
	d := g.NewDecoder()
	// A model that starts answering in prose is refused at its first byte.
	o := d.Push([]byte("Sure! Here is the JSON"))
	fmt.Println(o.Refusal())
	// A model that invents a case is refused at the first byte no case id can continue.
	d = g.NewDecoder()
	prefix := `{"schema":"beam_agents.interaction-value.v1","root_type_id":"shop.proposal","schema_digest":"` + g.Schema().Digest() + `","value":{"case":"shop.proposal.`
	o = d.Push([]byte(prefix + "delete_account"))
	fmt.Println(o.Refusal().Code, o.Refusal().AtByte-len(prefix), strings.Contains(o.Refusal().Message, "not a case"))
	// Output:
	// STREAM-START at_byte=0: the document must open with '{', not 'S'
	// STREAM-GRAMMAR 0 true
}

type exampleTB struct{ testing.TB }

func (exampleTB) Helper()                      {}
func (exampleTB) Fatal(args ...any)            { log.Fatal(args...) }
func (exampleTB) Fatalf(f string, args ...any) { log.Fatalf(f, args...) }
