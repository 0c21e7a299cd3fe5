package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/bufbuild/protocompile/linker"

	"github.com/beamagents/beamagents/internal/testkit/prototest"
)

var (
	negotiateFilesOnce sync.Once
	negotiateFiles     linker.Files
)

// negotiateSet writes the negotiate package's test schemas as a binary FileDescriptorSet
// under t's temporary directory.
func negotiateSet(t *testing.T) string {
	t.Helper()
	negotiateFilesOnce.Do(func() {
		negotiateFiles = prototest.CompileDir(t, filepath.Join("..", "negotiate", "testdata", "proto"), "pairs.proto", "proposal.proto")
	})
	if negotiateFiles == nil {
		t.Fatal("negotiate/testdata/proto did not compile")
	}
	return prototest.WriteFileSet(t, negotiateFiles)
}

func runNegotiate(t *testing.T, fn func(*env, []string) int, stdin string, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := fn(&env{stdin: strings.NewReader(stdin), stdout: &out, stderr: &errb}, args)
	return code, out.String(), errb.String()
}

func TestSchemaDelta(t *testing.T) {
	set := negotiateSet(t)
	for _, tc := range []struct {
		name   string
		args   []string
		code   int
		stdout []string // substrings, in order
		stderr string   // prefix of the one diagnostic line
	}{
		{name: "every kind, every protocol", args: []string{"--producer", "p.order", "--receiver", "r.order", "--move", "order.customer=order.customer_name"},
			stdout: []string{
				"producer p.order sha256:", "receiver r.order sha256:", "delta sha256:", " 13 entries\n",
				"  missing_field p.order/- -> r.order/order.currency_code (string max_bytes 3)\n",
				"  moved p.order/order.customer (string max_bytes 4096) -> r.order/order.customer_name (string max_bytes 4096)\n",
				"(none)        gate 3 NEGOTIATION_REQUIRED    manifest sha256:", "refused negotiation_required (12 entries)\n",
				"TRANSFORM_ALL gate 5 TRANSFORMATION_REQUIRED manifest sha256:", "refused negotiate_untransformable (7 entries)\n",
				"BEST_EFFORT   gate 5 TRANSFORMATION_REQUIRED", "refused negotiate_untransformable (7 entries)\n",
				"FAIL_FAST     gate 5 TRANSFORMATION_REQUIRED", "refused negotiate_fail_fast (12 entries)\n",
			}},
		{name: "best effort with consent", args: []string{"--producer", "missing.p", "--receiver", "missing.r", "--receiver-accepts-best-effort"},
			stdout: []string{"BEST_EFFORT   gate 4 BEST_EFFORT_ALLOWED     manifest sha256:", "builds\n"}},
		{name: "a protocol that builds", args: []string{"--producer", "narrow.p", "--receiver", "narrow.r", "--protocol", "TRANSFORM_ALL"},
			stdout: []string{"TRANSFORM_ALL gate 5 TRANSFORMATION_REQUIRED manifest sha256:", "builds\n"}},
		{name: "a protocol that refuses", args: []string{"--producer", "narrow.p", "--receiver", "narrow.r", "--protocol", "FAIL_FAST"},
			code: 1, stderr: "negotiate_fail_fast delta: FAIL_FAST refuses a delta of 3 entries: type_mismatch(max_bytes) narrow.p/item.blob"},
		{name: "a binding under fail fast", args: []string{"--producer", "assist.proposal", "--case", "assist.lookup", "--receiver", "tool.lookup_order.args", "--protocol", "FAIL_FAST"},
			code: 1, stdout: []string{"producer assist.proposal sha256:", " case assist.lookup\n", "delta sha256:", " 2 entries\n"},
			stderr: "negotiate_fail_fast delta: FAIL_FAST refuses a delta of 2 entries"},
		{name: "a binding with a declared drop", args: []string{"--producer", "assist.proposal", "--case", "assist.lookup", "--receiver", "tool.lookup_order.args", "--drop", "assist.lookup.debug", "--protocol", "TRANSFORM_ALL"},
			stdout: []string{"TRANSFORM_ALL gate 5 TRANSFORMATION_REQUIRED manifest sha256:", "builds\n"}},
		{name: "json", args: []string{"--producer", "same", "--receiver", "same", "--json"},
			stdout: []string{`{"schema":"beam_agents.negotiate-delta.v1","producer_digest":"sha256:`, `"entries":[]}` + "\n"}},
		{name: "a move naming nothing", args: []string{"--producer", "move.p", "--receiver", "move.r", "--move", "order.nothing=order.id"},
			code: 1, stderr: "negotiate_invalid move.unknown: "},
		{name: "an unknown root", args: []string{"--producer", "nothing", "--receiver", "same"},
			code: 1, stderr: "SPX-Z202 root.not_found: "},
		{name: "a malformed move", args: []string{"--producer", "move.p", "--receiver", "move.r", "--move", "order.customer"}, code: 2},
		{name: "an unknown protocol", args: []string{"--producer", "move.p", "--receiver", "move.r", "--protocol", "MAYBE"}, code: 2},
		{name: "no receiver", args: []string{"--producer", "move.p"}, code: 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := runNegotiate(t, runSchemaDelta, "", append([]string{"--descriptor-set", set}, tc.args...)...)
			if code != tc.code {
				t.Fatalf("exit %d, want %d\nstdout %s\nstderr %s", code, tc.code, out, errOut)
			}
			rest := out
			for _, want := range tc.stdout {
				i := strings.Index(rest, want)
				if i < 0 {
					t.Fatalf("stdout lacks %q (in order)\n%s", want, out)
				}
				rest = rest[i+len(want):]
			}
			if code == 1 && (!strings.HasPrefix(errOut, tc.stderr) || strings.Count(errOut, "\n") != 1) {
				t.Errorf("stderr %q, want one line starting %q", errOut, tc.stderr)
			}
		})
	}
}

func TestSchemaCanonicalize(t *testing.T) {
	set := negotiateSet(t)
	provider := `{
  "case": "assist.lookup",
  "fields": {"assist.lookup.limit": 25, "assist.lookup.order_id": "A1", "assist.lookup.debug": ""}
}`
	for _, tc := range []struct {
		name, stdin string
		args        []string
		code        int
		stdout      string // prefix
		stderr      string // prefix of the one diagnostic line
		verdict     string // of the receipt
	}{
		{name: "provider style", stdin: provider, stdout: `{"schema":"beam_agents.interaction-value.v1","root_type_id":"assist.proposal","schema_digest":"sha256:`,
			verdict: "TRANSFORMATION_REQUIRED"},
		{name: "best effort", stdin: provider, args: []string{"--protocol", "BEST_EFFORT"}, stdout: `{"schema":"beam_agents.interaction-value.v1"`,
			verdict: "BEST_EFFORT_ALLOWED"},
		{name: "fail fast", stdin: provider, args: []string{"--protocol", "FAIL_FAST"}, code: 1,
			stderr: "negotiate_fail_fast not_canonical: $: FAIL_FAST admits only the exact canonical document: SPX-Z205 ", verdict: "TRANSFORMATION_REQUIRED"},
		{name: "nothing agreed", stdin: provider, args: []string{"--protocol", ""}, code: 1,
			stderr: "negotiation_required not_canonical: ", verdict: "NEGOTIATION_REQUIRED"},
		{name: "a fraction", stdin: strings.Replace(provider, "25", "25.0", 1), code: 1,
			stderr: `canonicalization_refused value.integer_fraction: $.value.fields["assist.lookup.limit"]: `, verdict: "TRANSFORMATION_REQUIRED"},
		{name: "an unknown protocol", stdin: provider, args: []string{"--protocol", "MAYBE"}, code: 2},
		{name: "no root", stdin: provider, args: []string{"--root", ""}, code: 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			receipt := filepath.Join(t.TempDir(), "receipt.json")
			args := append([]string{"--descriptor-set", set, "--root", "assist.proposal", "--receipt", receipt}, tc.args...)
			code, out, errOut := runNegotiate(t, runSchemaCanonicalize, tc.stdin, args...)
			if code != tc.code {
				t.Fatalf("exit %d, want %d\nstdout %s\nstderr %s", code, tc.code, out, errOut)
			}
			if code == 2 {
				return
			}
			if !strings.HasPrefix(out, tc.stdout) || code == 0 && (!strings.HasSuffix(out, "}\n") || strings.Count(out, "\n") != 1) {
				t.Errorf("stdout %q", out)
			}
			if code == 1 && (!strings.HasPrefix(errOut, tc.stderr) || strings.Count(errOut, "\n") != 1) {
				t.Errorf("stderr %q, want one line starting %q", errOut, tc.stderr)
			}
			data, err := os.ReadFile(receipt)
			if err != nil {
				t.Fatal(err)
			}
			var attrs map[string]string
			if err := json.Unmarshal(data, &attrs); err != nil {
				t.Fatal(err)
			}
			if attrs["beam_agents.conformance.verdict"] != tc.verdict || (attrs["beam_agents.conformance.conforming"] == "true") != (code == 0) {
				t.Errorf("receipt %v", attrs)
			}
		})
	}
}
