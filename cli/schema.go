package cli

import (
	"bytes"
	"flag"
	"io"

	"github.com/beamagents/beamagents/interaction"
	"github.com/beamagents/beamagents/interaction/stream"
	"github.com/beamagents/beamagents/records"
)

func init() {
	register(&command{name: "schema", summary: "interaction schemas: derive, jsonschema, decode, verify, delta, canonicalize",
		usage: schemaUsage, subs: []*command{
			{name: "derive", summary: "print the canonical schema document", run: runSchemaDerive},
			{name: "jsonschema", summary: "print the provider JSON Schema", run: runSchemaJSONSchema},
			{name: "decode", summary: "decode a value document (or refuse it)", run: runSchemaDecode},
			{name: "verify", summary: "check a schema document against the descriptor set", run: runSchemaVerify},
			{name: "delta", summary: "schema delta and negotiation verdicts between two roots", run: runSchemaDelta},
			{name: "canonicalize", summary: "provider-style JSON to the canonical value document", run: runSchemaCanonicalize},
		}})
}

const schemaUsage = `schema derive     --descriptor-set FILE --root TYPE_ID
       schema jsonschema --descriptor-set FILE --root TYPE_ID
       schema decode     --descriptor-set FILE --root TYPE_ID [--stream [--chunk N]] < DOCUMENT
       schema verify     --descriptor-set FILE --root TYPE_ID --schema FILE
       schema delta      --descriptor-set FILE --producer TYPE_ID [--case ID] --receiver TYPE_ID
                         [--move FROM=TO] [--drop ID] [--protocol P]
       schema canonicalize --descriptor-set FILE --root TYPE_ID [--protocol P] < MODEL_OUTPUT

FILE is a binary FileDescriptorSet with its imports (protoc --include_imports -o, buf build -o).
decode --stream feeds the document to the streaming decoder in N-byte chunks (default 4096),
refusing with STREAM-* codes as early as the bytes allow. delta prints the schema delta and
the verdict of each protocol (TRANSFORM_ALL, BEST_EFFORT, FAIL_FAST); canonicalize turns
provider-style JSON into the canonical value document, or refuses it.
Exit status: 0 ok or admitted; 1 refused, with one line "CODE rule: message" on stderr; 2 usage.`

// descriptorSetFlag defines --descriptor-set, which every schema subcommand takes.
func descriptorSetFlag(fs *flag.FlagSet) *string {
	return fs.String("descriptor-set", "", "binary FileDescriptorSet with imports")
}

// compileSchemas loads the descriptor set once and derives the schemas of the given root type
// ids; a refusal is reported as its diagnostic line (exit 1).
func compileSchemas(e *env, path string, roots ...string) ([]*interaction.Schema, int) {
	data, err := records.ReadCapped(path, maxConfigBytes)
	if err != nil {
		e.errorf("%v", err)
		return nil, 1
	}
	set, err := interaction.UnmarshalFileSet(data)
	if err != nil {
		return nil, refuse(e, err)
	}
	out := make([]*interaction.Schema, len(roots))
	for i, root := range roots {
		if out[i], err = interaction.CompileFileSet(set, root); err != nil {
			return nil, refuse(e, err)
		}
	}
	return out, 0
}

// refuse prints the one diagnostic line of a refusal and returns exit status 1.
func refuse(e *env, err error) int {
	io.WriteString(e.stderr, err.Error()+"\n")
	return 1
}

// schemaFlags holds the flags of the subcommands that work on one root.
type schemaFlags struct {
	descriptorSet, root *string
}

// compile derives the schema of the root.
func (f *schemaFlags) compile(e *env) (*interaction.Schema, int) {
	s, code := compileSchemas(e, *f.descriptorSet, *f.root)
	if s == nil {
		return nil, code
	}
	return s[0], 0
}

// parseSchemaFlags parses args and requires both schema flags and no arguments.
func parseSchemaFlags(e *env, name, usage string, args []string, extra func(fs *flag.FlagSet)) (*schemaFlags, int, bool) {
	if usage == "" {
		usage = "schema " + name + " --descriptor-set FILE --root TYPE_ID"
	}
	fs := newFlags(e, "schema "+name, usage)
	f := schemaFlags{descriptorSet: descriptorSetFlag(fs), root: fs.String("root", "", "type_id of the root record or variant")}
	if extra != nil {
		extra(fs)
	}
	if code, ok := parse(fs, args); !ok {
		return nil, code, false
	}
	if *f.descriptorSet == "" || *f.root == "" || fs.NArg() != 0 {
		fs.Usage()
		return nil, 2, false
	}
	return &f, 0, true
}

func runSchemaDerive(e *env, args []string) int {
	f, code, ok := parseSchemaFlags(e, "derive", "", args, nil)
	if !ok {
		return code
	}
	s, code := f.compile(e)
	if s == nil {
		return code
	}
	e.stdout.Write(s.Document())
	return 0
}

func runSchemaJSONSchema(e *env, args []string) int {
	f, code, ok := parseSchemaFlags(e, "jsonschema", "", args, nil)
	if !ok {
		return code
	}
	s, code := f.compile(e)
	if s == nil {
		return code
	}
	e.stdout.Write(s.ProviderJSONSchema())
	return 0
}

func runSchemaVerify(e *env, args []string) int {
	var schemaFile string
	f, code, ok := parseSchemaFlags(e, "verify", "", args, func(fs *flag.FlagSet) {
		fs.StringVar(&schemaFile, "schema", "", "canonical schema document to verify")
	})
	if !ok {
		return code
	}
	if schemaFile == "" {
		e.errorf("usage: beamagents schema verify --descriptor-set FILE --root TYPE_ID --schema FILE")
		return 2
	}
	doc, err := records.ReadCapped(schemaFile, maxConfigBytes)
	if err != nil {
		e.errorf("%v", err)
		return 1
	}
	s, code := f.compile(e)
	if s == nil {
		return code
	}
	if err := s.Verify(doc); err != nil {
		return refuse(e, err)
	}
	io.WriteString(e.stdout, "ok\n")
	return 0
}

func runSchemaDecode(e *env, args []string) int {
	var streaming bool
	var chunk int
	f, code, ok := parseSchemaFlags(e, "decode", "", args, func(fs *flag.FlagSet) {
		fs.BoolVar(&streaming, "stream", false, "decode with the streaming decoder")
		fs.IntVar(&chunk, "chunk", 0, "with --stream: bytes per chunk (default 4096)")
	})
	if !ok {
		return code
	}
	if code, ok := checkFlags(e,
		atLeast("chunk", chunk, 0),
		atMost("chunk", chunk, interaction.MaxDocumentBytes),
		when(chunk > 0 && !streaming, func() error { return refuseFlag("chunk", "needs --stream") }),
	); !ok {
		return code
	}
	s, code := f.compile(e)
	if s == nil {
		return code
	}
	if streaming {
		return decodeStream(e, s, max(chunk, 0))
	}
	// One byte more than the bound is enough for Decode to refuse an oversized document.
	doc, err := io.ReadAll(io.LimitReader(e.stdin, interaction.MaxDocumentBytes+1))
	if err != nil {
		e.errorf("reading the document: %v", err)
		return 1
	}
	v, err := s.Decode(doc)
	if err != nil {
		return refuse(e, err)
	}
	io.Copy(e.stdout, bytes.NewReader(v.Canonical()))
	return 0
}

// decodeStream pushes stdin in chunks of the given size and stops reading at the first
// terminal outcome, as a caller cancelling a provider stream would.
func decodeStream(e *env, s *interaction.Schema, chunk int) int {
	if chunk == 0 {
		chunk = 4096
	}
	d, err := stream.NewDecoder(s)
	if err != nil {
		e.errorf("%v", err)
		return 1
	}
	buf := make([]byte, chunk)
	o := stream.Outcome{}
	for o.State() == stream.Incomplete {
		n, err := io.ReadFull(e.stdin, buf)
		if n > 0 {
			o = d.Push(buf[:n])
		}
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			break
		}
		if err != nil {
			e.errorf("reading the document: %v", err)
			return 1
		}
	}
	if o.State() == stream.Incomplete {
		o = d.Finish()
	}
	if r := o.Refusal(); r != nil {
		return refuse(e, r)
	}
	e.stdout.Write(o.Value().Canonical())
	return 0
}
