package cli

import (
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/beamagents/beamagents/interaction"
	"github.com/beamagents/beamagents/interaction/stream"
	"github.com/beamagents/beamagents/internal/testkit/corpus"
	"github.com/beamagents/beamagents/internal/testkit/prototest"
)

var interactionTestdata = filepath.Join("..", "interaction", "testdata")

// descriptorSet writes the interaction test schemas as a binary FileDescriptorSet, as
// `buf build -o` would, and returns its path.
func descriptorSet(t *testing.T) string {
	t.Helper()
	files := prototest.CompileDir(t, filepath.Join(interactionTestdata, "proto"), "shop.proto", "edges.proto", "refused.proto")
	return prototest.WriteFileSet(t, files)
}

func librarySchema(t *testing.T, set, root string) *interaction.Schema {
	t.Helper()
	data, err := os.ReadFile(set)
	if err != nil {
		t.Fatal(err)
	}
	fds, err := interaction.UnmarshalFileSet(data)
	if err != nil {
		t.Fatal(err)
	}
	s, err := interaction.CompileFileSet(fds, root)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestSchemaDeriveAndJSONSchema(t *testing.T) {
	set := descriptorSet(t)
	s := librarySchema(t, set, "shop.proposal")
	for sub, want := range map[string][]byte{"derive": s.Document(), "jsonschema": s.ProviderJSONSchema()} {
		code, out, errOut := runCLI(t, "", "schema", sub, "--descriptor-set", set, "--root", "shop.proposal")
		if code != 0 || out != string(want) || errOut != "" {
			t.Errorf("%s: exit %d, stderr %q, stdout matches: %v", sub, code, errOut, out == string(want))
		}
	}
}

func TestSchemaRefusals(t *testing.T) {
	set := descriptorSet(t)
	garbage := filepath.Join(t.TempDir(), "garbage.binpb")
	os.WriteFile(garbage, []byte{0xff, 0xff, 0xff}, 0o644)
	for _, tc := range []struct {
		name string
		args []string
		line string // prefix of the one diagnostic line
	}{
		{"outside the language", []string{"derive", "--descriptor-set", set, "--root", "refused.repeated"}, "SPX-Z202 type.field.repeated: refused.v1.Repeated.tags: "},
		{"unknown root", []string{"jsonschema", "--descriptor-set", set, "--root", "no.such"}, "SPX-Z202 root.not_found: "},
		{"not a descriptor set", []string{"derive", "--descriptor-set", garbage, "--root", "shop.proposal"}, "SPX-Z202 source.descriptor: "},
		{"derivation refused before decoding", []string{"decode", "--descriptor-set", set, "--root", "refused.cycle"}, "SPX-Z202 type.recursive: "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := runCLI(t, "", append([]string{"schema"}, tc.args...)...)
			if code != 1 || out != "" || !strings.HasPrefix(errOut, tc.line) || strings.Count(errOut, "\n") != 1 {
				t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errOut)
			}
		})
	}
}

func TestSchemaUsage(t *testing.T) {
	set := descriptorSet(t)
	for _, args := range [][]string{
		{"schema"},
		{"schema", "frobnicate"},
		{"schema", "derive"},
		{"schema", "derive", "--root", "shop.proposal"},
		{"schema", "derive", "--descriptor-set", set},
		{"schema", "derive", "--descriptor-set", set, "--root", "shop.proposal", "extra"},
		{"schema", "decode", "--descriptor-set", set, "--root", "shop.proposal", "--bogus"},
		{"schema", "verify", "--descriptor-set", set, "--root", "shop.proposal"},
	} {
		if code, _, _ := runCLI(t, "", args...); code != 2 {
			t.Errorf("%v: exit %d, want 2", args, code)
		}
	}
	if code, out, _ := runCLI(t, "", "help"); code != 0 || !strings.Contains(out, "schema") {
		t.Errorf("help does not list schema: %q", out)
	}
}

func TestSchemaVerify(t *testing.T) {
	set := descriptorSet(t)
	dir := t.TempDir()
	good := filepath.Join(dir, "good.json")
	bad := filepath.Join(dir, "bad.json")
	doc := librarySchema(t, set, "shop.proposal").Document()
	os.WriteFile(good, doc, 0o644)
	os.WriteFile(bad, []byte(strings.Replace(string(doc), `"max_bytes":32`, `"max_bytes":320`, 1)), 0o644)
	if code, out, errOut := runCLI(t, "", "schema", "verify", "--descriptor-set", set, "--root", "shop.proposal", "--schema", good); code != 0 || out != "ok\n" {
		t.Fatalf("good: exit %d %q %q", code, out, errOut)
	}
	code, out, errOut := runCLI(t, "", "schema", "verify", "--descriptor-set", set, "--root", "shop.proposal", "--schema", bad)
	if code != 1 || out != "" || !strings.HasPrefix(errOut, "SPX-Z204 bundle.replay: ") || strings.Count(errOut, "\n") != 1 {
		t.Fatalf("bad: exit %d %q %q", code, out, errOut)
	}
}

// TestSchemaDecodeCorpus: the CLI admits and refuses every corpus document exactly as the
// library does, with the document on stdout or one diagnostic line on stderr.
func TestSchemaDecodeCorpus(t *testing.T) {
	set := descriptorSet(t)
	schemas := map[string]*interaction.Schema{}
	docs, err := corpus.Load(filepath.Join(interactionTestdata, "docs"), func(root string) (string, error) {
		schemas[root] = librarySchema(t, set, root)
		return schemas[root].Digest(), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range docs {
		code, out, errOut := runCLI(t, string(d.Bytes), "schema", "decode", "--descriptor-set", set, "--root", d.Schema)
		_, err := schemas[d.Schema].Decode(d.Bytes)
		switch {
		case err == nil && (code != 0 || out != string(d.Bytes) || errOut != ""):
			t.Errorf("%s: admitted by the library; CLI exit %d, stderr %q", d.ID(), code, errOut)
		case err != nil && (code != 1 || out != "" || errOut != err.Error()+"\n"):
			t.Errorf("%s: CLI exit %d, stderr %q; want 1 and %q", d.ID(), code, errOut, err.Error())
		}
	}
	huge := strings.Repeat("x", 3*interaction.MaxDocumentBytes)
	if code, _, errOut := runCLI(t, huge, "schema", "decode", "--descriptor-set", set, "--root", "shop.proposal"); code != 1 || !strings.HasPrefix(errOut, "SPX-Z206 document_bytes: ") {
		t.Errorf("oversized stdin: exit %d %q", code, errOut)
	}
}

// TestSchemaDecodeStream: with --stream the CLI agrees with the streaming decoder for every
// corpus document and chunk size: the same document on stdout, or one STREAM-* line.
func TestSchemaDecodeStream(t *testing.T) {
	set := descriptorSet(t)
	grammars := map[string]*stream.Grammar{}
	docs, err := corpus.Load(filepath.Join(interactionTestdata, "docs"), func(root string) (string, error) {
		g, err := stream.Compile(librarySchema(t, set, root))
		grammars[root] = g
		return g.Schema().Digest(), err
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range docs {
		for _, chunk := range []string{"1", "5", "65536"} {
			code, out, errOut := runCLI(t, string(d.Bytes), "schema", "decode", "--stream", "--chunk", chunk, "--descriptor-set", set, "--root", d.Schema)
			o := streamAll(grammars[d.Schema], d.Bytes, chunk)
			if r := o.Refusal(); r != nil {
				if code != 1 || out != "" || errOut != r.Error()+"\n" || !strings.HasPrefix(errOut, "STREAM-") {
					t.Errorf("%s chunk %s: exit %d stderr %q, want 1 and %q", d.ID(), chunk, code, errOut, r.Error())
				}
				continue
			}
			if code != 0 || out != string(d.Bytes) || errOut != "" {
				t.Errorf("%s chunk %s: exit %d stderr %q, want the document", d.ID(), chunk, code, errOut)
			}
		}
	}
	for _, args := range [][]string{
		{"--chunk", "5"},
		{"--stream", "--chunk", "-1"},
	} {
		if code, _, _ := runCLI(t, "", append([]string{"schema", "decode", "--descriptor-set", set, "--root", "shop.proposal"}, args...)...); code != 2 {
			t.Errorf("%v: exit %d, want 2", args, code)
		}
	}
	// A stream refused early is not read to its end.
	r := &countingReader{r: strings.NewReader("{ " + strings.Repeat("x", 1<<20))}
	var out, errb strings.Builder
	if code := run(&env{stdin: r, stdout: &out, stderr: &errb}, []string{"schema", "decode", "--stream", "--chunk", "64", "--descriptor-set", set, "--root", "shop.proposal"}); code != 1 || !strings.HasPrefix(errb.String(), "STREAM-WHITESPACE at_byte=1: ") || r.n > 64 {
		t.Errorf("exit %d, stderr %q, read %d bytes", code, errb.String(), r.n)
	}
}

func streamAll(g *stream.Grammar, doc []byte, chunk string) stream.Outcome {
	n, _ := strconv.Atoi(chunk)
	d := g.NewDecoder()
	for i := 0; i < len(doc); i += n {
		if o := d.Push(doc[i:min(i+n, len(doc))]); o.State() != stream.Incomplete {
			return o
		}
	}
	return d.Finish()
}

type countingReader struct {
	r io.Reader
	n int
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += n
	return n, err
}

// The negotiation subcommands are reachable through the schema command.
func TestSchemaDispatchesNegotiation(t *testing.T) {
	for _, sub := range []string{"delta", "canonicalize"} {
		code, _, errOut := runCLI(t, "", "schema", sub)
		if code != 2 || strings.Contains(errOut, "unknown schema subcommand") {
			t.Errorf("schema %s: exit %d, %q", sub, code, errOut)
		}
	}
	if code, _, errOut := runCLI(t, "", "schema", "frobnicate"); code != 2 || !strings.Contains(errOut, "unknown schema subcommand") {
		t.Errorf("unknown subcommand: exit %d %q", code, errOut)
	}
}
