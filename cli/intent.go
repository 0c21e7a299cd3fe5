package cli

import (
	"io"
	"os"

	"google.golang.org/protobuf/proto"

	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/intent"
)

func init() {
	register(&command{name: "intent", summary: "sign or verify a binary ToolIntent (intent sign|verify)", subs: []*command{
		{name: "sign", summary: "sign a binary ToolIntent with a keyring", run: runIntentSign},
		{name: "verify", summary: "verify a binary ToolIntent's signature", run: runIntentVerify},
	}})
}

func readIntent(e *env, path string) (*pb.ToolIntent, bool) {
	data, err := os.ReadFile(path)
	if err != nil {
		e.errorf("%v", err)
		return nil, false
	}
	ti := &pb.ToolIntent{}
	if err := proto.Unmarshal(data, ti); err != nil {
		e.errorf("%s does not parse as beam_agents.v1.ToolIntent: %v", path, err)
		return nil, false
	}
	return ti, true
}

func runIntentSign(e *env, args []string) int {
	fs := newFlags(e, "intent sign", "intent sign --keyring REF [--key-id ID] [--out FILE] FILE")
	ref := fs.String("keyring", "", "keyring reference: env:VAR or file:PATH")
	keyID := fs.String("key-id", "", "key to sign with (default: the keyring's active key)")
	out := fs.String("out", "-", "where to write the signed binary intent (- for stdout)")
	if code, ok := parse(fs, args); !ok {
		return code
	}
	if *ref == "" || fs.NArg() != 1 {
		fs.Usage()
		return 2
	}
	kr, err := intent.LoadKeyring(*ref)
	if err != nil {
		e.errorf("%v", err)
		return 2
	}
	ti, ok := readIntent(e, fs.Arg(0))
	if !ok {
		return 1
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
	var w io.Writer = e.stdout
	if *out != "-" {
		if err := os.WriteFile(*out, b, 0o644); err != nil {
			e.errorf("%v", err)
			return 1
		}
		return 0
	}
	w.Write(b)
	return 0
}

func runIntentVerify(e *env, args []string) int {
	fs := newFlags(e, "intent verify", "intent verify --keyring REF FILE")
	ref := fs.String("keyring", "", "keyring reference: env:VAR or file:PATH")
	if code, ok := parse(fs, args); !ok {
		return code
	}
	if *ref == "" || fs.NArg() != 1 {
		fs.Usage()
		return 2
	}
	kr, err := intent.LoadKeyring(*ref)
	if err != nil {
		e.errorf("%v", err)
		return 2
	}
	ti, ok := readIntent(e, fs.Arg(0))
	if !ok {
		return 1
	}
	o := intent.Verify(ti, kr)
	io.WriteString(e.stdout, o.String()+"\n")
	if o != intent.OK {
		return 1
	}
	return 0
}
