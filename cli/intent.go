package cli

import (
	"flag"
	"fmt"
	"io"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/intent"
	"github.com/beamagents/beamagents/records"
)

func init() {
	register(&command{name: "intent", summary: "sign or verify a binary ToolIntent (intent sign|verify)", subs: []*command{
		{name: "sign", summary: "sign a binary ToolIntent with a keyring", run: runIntentSign},
		{name: "verify", summary: "verify a binary ToolIntent's signature", run: runIntentVerify},
	}})
}

// readIntent reads one binary ToolIntent: a typed record file holding one record (as intent
// sign writes it), or an unheadered blob. An empty file is no intent.
func readIntent(e *env, path string) (*pb.ToolIntent, bool) {
	data, err := records.ReadCapped(path, maxConfigBytes)
	if err != nil {
		e.errorf("%v", err)
		return nil, false
	}
	blob, err := oneMessage(path, data, intentType)
	if err != nil {
		e.errorf("%v", err)
		return nil, false
	}
	ti := &pb.ToolIntent{}
	if err := proto.Unmarshal(blob, ti); err != nil {
		e.errorf("%s does not parse as beam_agents.v1.ToolIntent: %v", path, err)
		return nil, false
	}
	return ti, true
}

// oneMessage is the one message of a file: the record of a typed record file holding exactly
// one record of type want, or an unheadered file's bytes. An empty file holds none.
func oneMessage(path string, data []byte, want protoreflect.FullName) ([]byte, error) {
	got, _, err := records.Split(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if got == "" {
		if len(data) == 0 {
			return nil, fmt.Errorf("%s is empty: it holds no %s", path, want)
		}
		return data, nil
	}
	recs, err := records.Records(path, data, want)
	if err != nil {
		return nil, err
	}
	if len(recs) != 1 {
		return nil, fmt.Errorf("%s holds %d %s records, want exactly one", path, len(recs), want)
	}
	return recs[0], nil
}

// parseIntentArgs parses an intent subcommand's flags (--keyring and those extra defines), loads
// the keyring and reads the one binary intent named by the argument.
func parseIntentArgs(e *env, name, usage string, args []string, extra func(fs *flag.FlagSet)) (*intent.Keyring, *pb.ToolIntent, int) {
	fs := newFlags(e, "intent "+name, usage)
	ref := fs.String("keyring", "", "keyring reference: env:VAR or file:PATH")
	if extra != nil {
		extra(fs)
	}
	if code, ok := parse(fs, args); !ok {
		return nil, nil, code
	}
	if *ref == "" || fs.NArg() != 1 {
		fs.Usage()
		return nil, nil, 2
	}
	if code, ok := checkFlags(e, keyringRef("keyring", *ref, true), smallFile("", fs.Arg(0), maxConfigBytes)); !ok {
		return nil, nil, code
	}
	kr, err := intent.LoadKeyring(*ref)
	if err != nil {
		e.errorf("%v", err)
		return nil, nil, 2
	}
	ti, ok := readIntent(e, fs.Arg(0))
	if !ok {
		return nil, nil, 1
	}
	return kr, ti, 0
}

func runIntentSign(e *env, args []string) int {
	var keyID, out *string
	kr, ti, code := parseIntentArgs(e, "sign", "intent sign --keyring REF [--key-id ID] [--out FILE] FILE", args, func(fs *flag.FlagSet) {
		keyID = fs.String("key-id", "", "key to sign with (default: the keyring's active key)")
		out = fs.String("out", "-", "where to write the signed binary intent (- for stdout)")
	})
	if ti == nil {
		return code
	}
	if *keyID == "" {
		*keyID = kr.Active()
	}
	if err := intent.SignWith(ti, kr, *keyID); err != nil {
		e.errorf("%v", err)
		return 1
	}
	b, err := proto.MarshalOptions{Deterministic: true}.Marshal(ti)
	if err != nil {
		e.errorf("%v", err)
		return 1
	}
	// A typed record file of one ToolIntent (docs/files.md).
	b = records.AppendFrame(records.Header(intentType), b)
	if *out == "-" {
		e.stdout.Write(b)
		return 0
	}
	if err := records.WriteAtomic(*out, b, 0o644); err != nil {
		e.errorf("%v", err)
		return 1
	}
	return 0
}

func runIntentVerify(e *env, args []string) int {
	kr, ti, code := parseIntentArgs(e, "verify", "intent verify --keyring REF FILE", args, nil)
	if ti == nil {
		return code
	}
	o := intent.Verify(ti, kr)
	io.WriteString(e.stdout, o.String()+"\n")
	if o != intent.OK {
		return 1
	}
	return 0
}
