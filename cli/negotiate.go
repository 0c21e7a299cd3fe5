package cli

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/beamagents/beamagents/interaction"
	"github.com/beamagents/beamagents/negotiate"
)

const schemaDeltaUsage = `schema delta --descriptor-set FILE --producer TYPE_ID --receiver TYPE_ID [--case CASE_ID]
       [--move FROM=TO]... [--drop ID]... [--receiver-accepts-best-effort] [--protocol P] [--json]

Prints the delta between the two schemas and the gates' verdict for each protocol. With
--case, compares that case of the producer's root (a tool binding) with the receiver's root
record. With --protocol, exits 1 when that protocol refuses the boundary (one line
"CODE rule: message" on stderr). --json prints the canonical delta document instead.`

const schemaCanonicalizeUsage = `schema canonicalize --descriptor-set FILE --root TYPE_ID [--protocol P] [--receipt FILE] < MODEL.json

Prints the canonical value document of the provider's text, or refuses it (exit 1, one line
"CODE rule: message" on stderr). --protocol is TRANSFORM_ALL (the default), BEST_EFFORT,
FAIL_FAST (exact canonical documents only) or "" (none agreed). --receipt writes the
conformance receipt's trace attributes as a JSON object to FILE, whatever the outcome.`

// listFlag collects a repeatable flag.
type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, ",") }
func (l *listFlag) Set(v string) error { *l = append(*l, v); return nil }

func parseMoves(e *env, moves []string) (map[string]string, bool) {
	if len(moves) == 0 {
		return nil, true
	}
	out := map[string]string{}
	for _, m := range moves {
		from, to, ok := strings.Cut(m, "=")
		if !ok || from == "" || to == "" {
			e.errorf("--move %q: want FROM=TO", m)
			return nil, false
		}
		out[from] = to
	}
	return out, true
}

func runSchemaDelta(e *env, args []string) int {
	fs := newFlags(e, "schema delta", schemaDeltaUsage)
	set := descriptorSetFlag(fs)
	producer := fs.String("producer", "", "type_id of the producer's root")
	receiver := fs.String("receiver", "", "type_id of the receiver's root")
	caseID := fs.String("case", "", "compare this case of the producer's root with the receiver's root record")
	protocol := fs.String("protocol", "", "exit 1 when this protocol refuses the boundary")
	accepts := fs.Bool("receiver-accepts-best-effort", false, "the receiver consents to best-effort outputs")
	asJSON := fs.Bool("json", false, "print the canonical delta document")
	var moves, drops listFlag
	fs.Var(&moves, "move", "FROM=TO: producer stable id whose values move to a receiver id (repeatable)")
	fs.Var(&drops, "drop", "producer field the receiver agrees may be dropped (repeatable)")
	if code, ok := parse(fs, args); !ok {
		return code
	}
	if *set == "" || *producer == "" || *receiver == "" || fs.NArg() != 0 {
		fs.Usage()
		return 2
	}
	mv, ok := parseMoves(e, moves)
	if !ok {
		return 2
	}
	checked, err := negotiate.ParseProtocol(*protocol)
	if err != nil {
		e.errorf("%v", err)
		return 2
	}
	schemas, code := compileSchemas(e, *set, *producer, *receiver)
	if schemas == nil {
		return code
	}
	a := negotiate.Agreement{ReceiverAcceptsBestEffort: *accepts, Moves: mv, Drop: drops}
	d, err := negotiate.DeltaOptions{Case: *caseID, Moves: mv}.Delta(schemas[0], schemas[1])
	if err != nil {
		return refuse(e, err)
	}
	if *asJSON {
		e.stdout.Write(append(d.Document(), '\n'))
	} else {
		printDelta(e.stdout, d, a)
	}
	if *protocol == "" {
		return 0
	}
	a.Protocol = checked
	if _, err := negotiateBoundary(schemas[0], schemas[1], *caseID, a); err != nil {
		return refuse(e, err)
	}
	return 0
}

func negotiateBoundary(p, r *interaction.Schema, caseID string, a negotiate.Agreement) (*negotiate.Boundary, error) {
	if caseID != "" {
		return negotiate.CheckBinding(p, caseID, r, a)
	}
	return negotiate.Negotiate(p, r, a)
}

func printDelta(w io.Writer, d *negotiate.SchemaDelta, a negotiate.Agreement) {
	scope := ""
	if d.Case() != "" {
		scope = " case " + d.Case()
	}
	fmt.Fprintf(w, "producer %s %s%s\n", d.Producer().RootTypeID(), d.Producer().Digest(), scope)
	fmt.Fprintf(w, "receiver %s %s\n", d.Receiver().RootTypeID(), d.Receiver().Digest())
	fmt.Fprintf(w, "delta %s %d entries\n", d.Digest(), d.Len())
	for _, entry := range d.Entries() {
		fmt.Fprintf(w, "  %s\n", entry)
	}
	for _, p := range append([]negotiate.Protocol{negotiate.NoProtocol}, negotiate.Protocols()...) {
		a.Protocol = p
		m := negotiate.Evaluate(d, a)
		outcome := "builds"
		if _, err := negotiateBoundary(d.Producer(), d.Receiver(), d.Case(), a); err != nil {
			outcome = "refused " + err.Error()
			if ne := (*negotiate.Error)(nil); errors.As(err, &ne) && ne.Rule == negotiate.RuleDelta {
				outcome = fmt.Sprintf("refused %s (%d entries)", ne.Code, len(ne.Entries))
			}
		}
		name := p.String()
		if name == "" {
			name = "(none)"
		}
		fmt.Fprintf(w, "%-13s gate %d %-23s manifest %s %s\n", name, m.Gate, m.Verdict, m.Digest, outcome)
	}
}

func runSchemaCanonicalize(e *env, args []string) int {
	var protocol, receipt *string
	f, code, ok := parseSchemaFlags(e, "canonicalize", schemaCanonicalizeUsage, args, func(fs *flag.FlagSet) {
		protocol = fs.String("protocol", "TRANSFORM_ALL", `TRANSFORM_ALL, BEST_EFFORT, FAIL_FAST or "" (none)`)
		receipt = fs.String("receipt", "", "write the receipt's trace attributes as JSON to this file")
	})
	if !ok {
		return code
	}
	p, err := negotiate.ParseProtocol(*protocol)
	if err != nil {
		e.errorf("%v", err)
		return 2
	}
	s, code := f.compile(e)
	if s == nil {
		return code
	}
	admitter, err := negotiate.NewAdmitter(s, negotiate.Agreement{Protocol: p, ReceiverAcceptsBestEffort: p == negotiate.BestEffort})
	if err != nil {
		return refuse(e, err)
	}
	// One byte more than the bound is enough for canonicalization to refuse an oversized text.
	text, err := io.ReadAll(io.LimitReader(e.stdin, negotiate.MaxInputBytes+1))
	if err != nil {
		e.errorf("reading the model's text: %v", err)
		return 1
	}
	out, admitErr := admitter.Admit(text)
	if *receipt != "" {
		b, _ := json.MarshalIndent(out.Receipt.Attributes(), "", "  ")
		if err := os.WriteFile(*receipt, append(b, '\n'), 0o644); err != nil {
			e.errorf("%v", err)
			return 1
		}
	}
	if admitErr != nil {
		return refuse(e, admitErr)
	}
	e.stdout.Write(out.Document)
	return 0
}
