package cli

import (
	"bytes"
	"flag"
	"io"
	"os"

	"github.com/beamagents/beamagents/interaction"
	"github.com/beamagents/beamagents/interaction/stream"
)

func init() {
	register(&command{name: "schema", summary: "interaction schemas: derive, jsonschema, decode, verify, delta, canonicalize", run: runSchema})
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

func runSchema(e *env, args []string) int {
	if len(args) == 0 {
		e.errorf("usage: beamagents %s", schemaUsage)
		return 2
	}
	sub, ok := map[string]func(*env, []string) int{
		"derive":       runSchemaDerive,
		"jsonschema":   runSchemaJSONSchema,
		"decode":       runSchemaDecode,
		"verify":       runSchemaVerify,
		"delta":        runSchemaDelta,
		"canonicalize": runSchemaCanonicalize,
	}[args[0]]
	if !ok {
		e.errorf("unknown schema subcommand %q (want derive, jsonschema, decode, verify, delta or canonicalize)", args[0])
		return 2
	}
	return sub(e, args[1:])
}

// schemaFlags holds the flags every schema subcommand takes.
type schemaFlags struct {
	descriptorSet, root string
}

func (f *schemaFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.descriptorSet, "descriptor-set", "", "binary FileDescriptorSet with imports")
	fs.StringVar(&f.root, "root", "", "type_id of the root record or variant")
}

// compile loads the descriptor set and derives the schema; a derivation refusal is reported
// as its one diagnostic line.
func (f *schemaFlags) compile(e *env) (*interaction.Schema, int) {
	data, err := os.ReadFile(f.descriptorSet)
	if err != nil {
		e.errorf("%v", err)
		return nil, 1
	}
	set, err := interaction.UnmarshalFileSet(data)
	if err != nil {
		return nil, refuse(e, err)
	}
	s, err := interaction.CompileFileSet(set, f.root)
	if err != nil {
		return nil, refuse(e, err)
	}
	return s, 0
}

// refuse prints the diagnostic line of a refusal and returns exit status 1.
func refuse(e *env, err error) int {
	io.WriteString(e.stderr, err.Error()+"\n")
	return 1
}

// parseSchemaFlags parses args and requires both schema flags and no arguments.
func parseSchemaFlags(e *env, name string, args []string, extra func(fs *flag.FlagSet)) (*schemaFlags, int, bool) {
	fs := newFlags(e, "schema "+name, "schema "+name+" --descriptor-set FILE --root TYPE_ID")
	var f schemaFlags
	f.register(fs)
	if extra != nil {
		extra(fs)
	}
	if code, ok := parse(fs, args); !ok {
		return nil, code, false
	}
	if f.descriptorSet == "" || f.root == "" || fs.NArg() != 0 {
		fs.Usage()
		return nil, 2, false
	}
	return &f, 0, true
}

func runSchemaDerive(e *env, args []string) int {
	f, code, ok := parseSchemaFlags(e, "derive", args, nil)
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
	f, code, ok := parseSchemaFlags(e, "jsonschema", args, nil)
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
	f, code, ok := parseSchemaFlags(e, "verify", args, func(fs *flag.FlagSet) {
		fs.StringVar(&schemaFile, "schema", "", "canonical schema document to verify")
	})
	if !ok {
		return code
	}
	if schemaFile == "" {
		e.errorf("usage: beamagents schema verify --descriptor-set FILE --root TYPE_ID --schema FILE")
		return 2
	}
	doc, err := os.ReadFile(schemaFile)
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
	f, code, ok := parseSchemaFlags(e, "decode", args, func(fs *flag.FlagSet) {
		fs.BoolVar(&streaming, "stream", false, "decode with the streaming decoder")
		fs.IntVar(&chunk, "chunk", 0, "with --stream: bytes per chunk (default 4096)")
	})
	if !ok {
		return code
	}
	if chunk < 0 || chunk > 0 && !streaming {
		e.errorf("--chunk takes a positive size and needs --stream")
		return 2
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
