package cli_test

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/beamagents/beamagents/effector/store"
	"github.com/beamagents/beamagents/examples/support"
	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/intent"
	"github.com/beamagents/beamagents/pipeline"
)

// bin is the real beamagents binary (cmd/beamagents), built once for the tests of this file.
var bin string

func TestMain(m *testing.M) {
	mainIfChild()
	dir, err := os.MkdirTemp("", "beamagents-bin-")
	if err != nil {
		panic(err)
	}
	bin = filepath.Join(dir, "beamagents")
	if out, err := exec.Command("go", "build", "-o", bin, "../cmd/beamagents").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "building beamagents: %v\n%s", err, out)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// execCLI runs the binary with args and extra environment, returning its exit status and
// output streams.
func execCLI(t *testing.T, env []string, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		return exit.ExitCode(), stdout.String(), stderr.String()
	case err != nil:
		t.Fatal(err)
	}
	return 0, stdout.String(), stderr.String()
}

// fixture is the files the bad cases point at: a keyring (its secret, the pasted document and
// a file reference), envelopes, and one typed file of each kind the tool writes, written by
// the same code as the pipeline's sinks.
type fixture struct {
	dir, secret, ring, ringRef, envelopes, aFile, emptyFile string
	typed                                                   map[string]string // by output name: NAME.binpb
	jsonl                                                   map[string]string // NAME.jsonl
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	dir := t.TempDir()
	f := &fixture{dir: dir, typed: map[string]string{}, jsonl: map[string]string{}}
	f.secret = base64.StdEncoding.EncodeToString(bytes.Repeat([]byte("s3cr"), 8))
	f.ring = fmt.Sprintf(`{"active":"k","keys":[{"id":"k","secret":%q}]}`, f.secret)
	write := func(name string, data []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	f.ringRef = "file:" + write("ring.json", []byte(f.ring))
	f.envelopes = write("envelopes.jsonl", support.Envelopes)
	f.aFile = write("a-file", []byte("x"))
	f.emptyFile = write("empty.bin", nil)
	kr, err := intent.LoadKeyring(f.ringRef)
	if err != nil {
		t.Fatal(err)
	}
	ti := &pb.ToolIntent{IntentId: intent.ID([]byte("c"), 0, 0), EntityKey: []byte("c"), ToolName: support.ToolLookupOrder,
		ArgsJson: `{"support.lookup_order.order_id":"A-1001"}`, ExpiresAtMs: 1 << 50}
	if err := intent.Sign(ti, kr); err != nil {
		t.Fatal(err)
	}
	recs := map[string]proto.Message{
		pipeline.IntentsName:     ti,
		pipeline.TracesName:      &pb.TraceEvent{EntityKey: []byte("c"), Seq: 1},
		pipeline.FinalsName:      &pb.FinalReply{EntityKey: []byte("c"), Seq: 1, CaseId: "done"},
		pipeline.SnapshotsName:   &pb.StateSnapshot{EntityKey: []byte("c")},
		pipeline.DeadLettersName: &pb.ActivationErrorRecord{EntityKey: []byte("customer-4"), Reason: "model_error", Detail: "ops@example.com"},
	}
	out := filepath.Join(dir, "outputs")
	for _, o := range pipeline.Outputs() {
		b, _ := proto.MarshalOptions{Deterministic: true}.Marshal(recs[o.Name])
		if err := pipeline.WriteLocal(out, o.Name, o.Type, [][]byte{b}); err != nil {
			t.Fatal(err)
		}
		f.typed[o.Name] = filepath.Join(out, o.Name+".binpb")
		f.jsonl[o.Name] = filepath.Join(out, o.Name+".jsonl")
	}
	env, _ := proto.Marshal(&pb.AgentEnvelope{EntityKey: []byte("c"), Payload: &pb.AgentEnvelope_ExternalEvent{ExternalEvent: []byte("hi")}})
	if err := pipeline.WriteLocal(out, "results", "beam_agents.v1.AgentEnvelope", [][]byte{env}); err != nil {
		t.Fatal(err)
	}
	f.typed["results"] = filepath.Join(out, "results.binpb")
	return f
}

// finalNames are the files a refused command must not have written, relative to its folder.
var finalNames = []string{"intents.binpb", "intents.jsonl", "traces.binpb", "finals.binpb", "finals.jsonl", "snapshots.binpb",
	"dead_letters.binpb", "dead_letters.jsonl", "results.binpb", "results.jsonl", "malformed.jsonl", "redriven.jsonl", "redriven.binpb", "signed.bin"}

// Every bad value a hostile or careless user might give is refused before anything runs:
// exit status 2 (or 1 for a file a reader refuses), the last line of stderr naming the
// problem, no file under a final name, and no secret in any output.
func TestRefusals(t *testing.T) {
	f := newFixture(t)
	pastedKey := "sk-test-" + strings.Repeat("Q", 40)
	for _, tc := range []struct {
		name string
		args func(out string) []string
		env  []string
		code int
		want string // in stderr's last line
	}{
		// secrets
		{"run with the keyring pasted", func(o string) []string { return runArgs(f, o, "--keyring", f.ring) }, nil, 2, "did you paste the keyring itself?"},
		{"run with the keyring pasted after env:", func(o string) []string { return runArgs(f, o, "--keyring", "env:"+f.ring) }, nil, 2, "--keyring: the value is not a reference"},
		{"run with a key pasted", func(o string) []string { return runArgs(f, o, "--model", "openai", "--api_key", pastedKey) }, nil, 2, "did you paste the key itself?"},
		{"run with a key pasted after env:", func(o string) []string { return runArgs(f, o, "--model", "openai", "--api_key", "env:"+pastedKey) }, nil, 2, "did you paste the key after env:?"},
		{"run with a key reference to an unset variable", func(o string) []string {
			return runArgs(f, o, "--model", "openai", "--api_key", "env:BEAMAGENTS_TEST_UNSET")
		}, nil, 2, "BEAMAGENTS_TEST_UNSET is not set"},
		{"run with a keyring file that is not one", func(o string) []string { return runArgs(f, o, "--keyring", "file:"+f.envelopes) }, nil, 2, "not a keyring document"},
		{"run with a keyring of /dev/zero", func(o string) []string { return runArgs(f, o, "--keyring", "file:/dev/zero") }, nil, 2, "/dev/zero is not a regular file"},
		{"effector with the keyring pasted", func(o string) []string { return effArgs(f, o, "--keyring", f.ring) }, nil, 2, "did you paste the keyring itself?"},
		{"effector with a secret where the keyring belongs", func(o string) []string { return effArgs(f, o, "--keyring", "env:BA_RING_X") }, []string{"BA_RING_X=" + f.secret}, 2, "--keyring: intent: intent_keyring_invalid: not a keyring document"},
		{"intent verify with the keyring pasted", func(o string) []string { return []string{"intent", "verify", "--keyring", f.ring, f.typed["intents"]} }, nil, 2, "did you paste the keyring itself?"},
		{"intent sign with the keyring pasted", func(o string) []string {
			return []string{"intent", "sign", "--keyring", f.ring, "--out", filepath.Join(o, "signed.bin"), f.typed["intents"]}
		}, nil, 2, "did you paste the keyring itself?"},
		{"replay with the keyring pasted", func(o string) []string {
			return []string{"replay", "--agent", "support", "--keyring", f.ring, "--cache_from", f.typed["snapshots"], "--input", f.envelopes, "--output_dir", o}
		}, nil, 2, "did you paste the keyring itself?"},
		{"effector with users pasted", func(o string) []string {
			return effArgs(f, o, "--console", "127.0.0.1:0", "--approver_users", "alice:"+pastedKey)
		}, nil, 2, "did you paste the users themselves?"},

		// run: flags accepted and ignored before
		{"run --ordering bogus", func(o string) []string { return runArgs(f, o, "--ordering", "bogus") }, nil, 2, `--ordering: "bogus" is not one of event_time, arrival`},
		{"run --shards -1", func(o string) []string { return runArgs(f, o, "--shards", "-1") }, nil, 2, "--shards: -1 is below its minimum 0"},
		{"run --window -5m", func(o string) []string { return runArgs(f, o, "--shards", "2", "--window", "-5m") }, nil, 2, "--window: -5m0s is negative"},
		{"run --window without --shards", func(o string) []string { return runArgs(f, o, "--window", "5m") }, nil, 2, "--window: needs --shards"},
		{"run --order_resolution_ms -1", func(o string) []string { return runArgs(f, o, "--order_resolution_ms", "-1") }, nil, 2, "--order_resolution_ms: -1 is below its minimum 0"},
		{"run --model_max_attempts 0", func(o string) []string { return runArgs(f, o, "--model_max_attempts", "0") }, nil, 2, "--model_max_attempts: 0 is below its minimum 1"},
		{"run --model_timeout 0", func(o string) []string { return runArgs(f, o, "--model_timeout", "0s") }, nil, 2, "--model_timeout: 0s is not a positive duration"},
		{"run with an extra argument", func(o string) []string { return append(runArgs(f, o), "extra") }, nil, 2, `unexpected argument "extra"`},
		{"run --base_url not-a-url", func(o string) []string { return runArgs(f, o, "--model", "openai", "--base_url", "not-a-url") }, nil, 2, "--base_url: not an absolute http:// or https:// URL"},
		{"run --base_url with an empty port", func(o string) []string {
			return runArgs(f, o, "--model", "openai", "--base_url", "http://127.0.0.1:/v1")
		}, nil, 2, "--base_url: the port is empty"},
		{"run --base_url with port 0", func(o string) []string {
			return runArgs(f, o, "--model", "openai", "--base_url", "http://127.0.0.1:0/v1")
		}, nil, 2,
			"--base_url: the port must be a number from 1 to 65535"},
		{"run --base_url ftp", func(o string) []string { return runArgs(f, o, "--model", "openai", "--base_url", "ftp://127.0.0.1/v1") }, nil, 2,
			"--base_url: the scheme must be http or https"},
		{"run --base_url an endpoint", func(o string) []string {
			return runArgs(f, o, "--model", "openai", "--base_url", "http://127.0.0.1:8080/v1/chat/completions")
		}, nil, 2, "--base_url: the path ends in the endpoint /chat/completions"},
		{"run --base_url with a query", func(o string) []string {
			return runArgs(f, o, "--model", "openai", "--base_url", "http://127.0.0.1:8080/v1?api-version=1")
		}, nil, 2, "--base_url: a base URL has no query"},
		{"run --base_url anthropic with /v1", func(o string) []string {
			return runArgs(f, o, "--model", "anthropic", "--base_url", "http://127.0.0.1:8080/v1")
		}, nil, 2, "--base_url: the Anthropic client appends /v1/messages itself"},
		{"run --model_fallback with an empty port", func(o string) []string {
			return runArgs(f, o, "--model", "openai", "--base_url", "http://127.0.0.1:8080/v1", "--model_fallback", "gpt-small@http://127.0.0.1:/v1")
		}, nil, 2, "--model/--api_key/--model_fallback: model fallback 1: base URL refused: the port is empty"},
		{"run --model_fallback_file with an endpoint", func(o string) []string {
			file := filepath.Join(filepath.Dir(o), "fallbacks.json")
			os.WriteFile(file, []byte(`[{"provider":"anthropic","name":"claude-x","base_url":"http://127.0.0.1:8081/v1/messages"}]`), 0o600)
			return runArgs(f, o, "--model", "openai", "--base_url", "http://127.0.0.1:8080/v1", "--model_fallback_file", file)
		}, nil, 2, "model fallback 1: base URL refused: the path ends in the endpoint /messages"},
		{"run --input_format xml", func(o string) []string { return runArgs(f, o, "--input_format", "xml") }, nil, 2, `--input_format: "xml" is not one of json, binary`},
		{"run --runner bogus", func(o string) []string { return runArgs(f, o, "--runner", "bogus") }, nil, 2, `--runner: unknown runner "bogus"; registered: prism, dataflow, flink, universal`},
		{"run --mode bogus", func(o string) []string { return runArgs(f, o, "--mode", "bogus") }, nil, 2, `--mode: "bogus" is not one of streaming, batch`},
		{"run --at_end bogus", func(o string) []string { return runArgs(f, o, "--at_end", "bogus") }, nil, 2, `--at_end: "bogus" is not one of park, fail`},
		{"run --resume a missing folder", func(o string) []string { return runArgs(f, o, "--resume", filepath.Join(f.dir, "no-such-run")) }, nil, 2, "--resume: " + filepath.Join(f.dir, "no-such-run") + " is not a folder"},
		{"run --resume a folder without snapshots", func(o string) []string { return runArgs(f, o, "--resume", t.TempDir()) }, nil, 2, "holds no snapshots output (snapshots.binpb)"},
		{"run --resume with --ordering arrival", func(o string) []string {
			return runArgs(f, o, "--resume", filepath.Dir(f.typed["snapshots"]), "--ordering", "arrival")
		}, nil, 2, "--resume: needs --ordering event_time"},
		{"run --resume with --restore", func(o string) []string {
			return runArgs(f, o, "--resume", filepath.Dir(f.typed["snapshots"]), "--restore", f.typed["snapshots"])
		}, nil, 2, "--resume: give --resume or --restore, not both"},
		{"run --resume a folder whose snapshots are another type", func(o string) []string {
			d := t.TempDir()
			data, _ := os.ReadFile(f.typed["intents"])
			os.WriteFile(filepath.Join(d, "snapshots.binpb"), data, 0o644)
			return runArgs(f, o, "--resume", d)
		}, nil, 2, "--resume: "},
		{"run --agent suport", func(o string) []string {
			return []string{"run", "--agent", "suport", "--input", f.envelopes, "--output_dir", o}
		}, nil, 2, `--agent: unknown agent "suport"; registered: devices, support`},
		{"run --otlp_protocol bogus", func(o string) []string { return runArgs(f, o, "--otlp_protocol", "udp") }, nil, 2, `--otlp_protocol: "udp" is not one of grpc, http`},
		{"run --verify_results bogus", func(o string) []string { return runArgs(f, o, "--verify_results", "maybe") }, nil, 2, `--verify_results: "maybe" is not one of off, permissive, require`},
		{"run --output_dir a file", func(o string) []string { return runArgs(f, f.aFile) }, nil, 2, "--output_dir: " + f.aFile + " is a file, not a folder"},
		{"run --agent_config /dev/zero", func(o string) []string { return runArgs(f, o, "--agent_config", "/dev/zero") }, nil, 2, "--agent_config: /dev/zero is not a regular file"},

		// typed files
		{"run --input dead letters", func(o string) []string { return runArgs(f, o, "--input", f.typed["dead_letters"]) }, nil, 2,
			"holds beam_agents.v1.ActivationErrorRecord records, not beam_agents.v1.AgentEnvelope"},
		{"run --input finals as JSON Lines", func(o string) []string { return runArgs(f, o, "--input", f.jsonl["finals"]) }, nil, 2,
			"holds beam_agents.v1.FinalReply records, not beam_agents.v1.AgentEnvelope"},
		{"run --restore intents", func(o string) []string { return runArgs(f, o, "--restore", f.typed["intents"]) }, nil, 2,
			"holds beam_agents.v1.ToolIntent records, not beam_agents.v1.StateSnapshot"},
		{"replay --cache_from intents", func(o string) []string {
			return []string{"replay", "--agent", "support", "--cache_from", f.typed["intents"], "--input", f.envelopes, "--output_dir", o}
		}, nil, 2, "holds beam_agents.v1.ToolIntent records, not beam_agents.v1.StateSnapshot"},
		{"replay --prices of envelopes", func(o string) []string {
			return []string{"replay", "--agent", "support", "--cache_from", f.typed["snapshots"], "--input", f.envelopes, "--output_dir", o, "--prices", f.envelopes}
		}, nil, 2, "--prices: "},
		{"redrive --input envelopes", func(o string) []string {
			return []string{"redrive", "--input", f.typed["results"], "--output", filepath.Join(o, "redriven.jsonl")}
		}, nil, 2, "holds beam_agents.v1.AgentEnvelope records, not beam_agents.v1.ActivationErrorRecord"},
		{"redrive --input snapshots", func(o string) []string {
			return []string{"redrive", "--input", f.typed["snapshots"], "--output", filepath.Join(o, "redriven.jsonl")}
		}, nil, 2, "holds beam_agents.v1.StateSnapshot records, not beam_agents.v1.ActivationErrorRecord"},
		{"effector --input dead letters", func(o string) []string { return effArgs(f, o, "--input", f.typed["dead_letters"]) }, nil, 2,
			"holds beam_agents.v1.ActivationErrorRecord records, not beam_agents.v1.ToolIntent"},
		{"inspect a file of another type", func(o string) []string { return []string{"inspect", "--type", "ToolIntent", f.typed["finals"]} }, nil, 1,
			"holds beam_agents.v1.FinalReply records, not beam_agents.v1.ToolIntent"},
		{"intent verify a file of another type", func(o string) []string {
			return []string{"intent", "verify", "--keyring", f.ringRef, f.typed["snapshots"]}
		}, nil, 1,
			"holds beam_agents.v1.StateSnapshot records, not beam_agents.v1.ToolIntent"},
		{"intent sign an empty file", func(o string) []string {
			return []string{"intent", "sign", "--keyring", f.ringRef, "--out", filepath.Join(o, "signed.bin"), f.emptyFile}
		}, nil, 1, "is empty: it holds no beam_agents.v1.ToolIntent"},

		// atomic outputs
		{"run into a folder holding another run's files", func(o string) []string { return runArgs(f, filepath.Dir(f.typed["intents"])) }, nil, 2,
			"already holds another run's files (dead_letters.binpb, dead_letters.jsonl, finals.binpb, …); pass --replace"},
		{"redrive onto its input", func(o string) []string {
			return []string{"redrive", "--input", f.typed["dead_letters"], "--output", f.typed["dead_letters"]}
		}, nil, 2, "redrive never overwrites its input"},

		// effector configuration
		{"effector --agents suport", func(o string) []string { return effArgs(f, o, "--agents", "suport") }, nil, 2, `--agents: unknown agent with tools "suport"; registered: devices, support`},
		{"effector --workers -5", func(o string) []string { return effArgs(f, o, "--workers", "-5") }, nil, 2, "--workers: -5 is below its minimum 1"},
		{"effector --lease -1s", func(o string) []string { return effArgs(f, o, "--lease", "-1s") }, nil, 2, "--lease: -1s is not a positive duration"},
		{"effector --verify bogus", func(o string) []string { return effArgs(f, o, "--verify", "sometimes") }, nil, 2, `--verify: "sometimes" is not one of off, permissive, require`},
		{"effector with an extra argument", func(o string) []string { return append(effArgs(f, o), "extra") }, nil, 2, `unexpected argument "extra"`},
		{"effector --output_dir a file", func(o string) []string { return effArgs(f, f.aFile) }, nil, 2, "is a file, not a folder"},

		// bounded inputs
		{"schema decode --chunk 99999999999", func(o string) []string {
			return []string{"schema", "decode", "--descriptor-set", f.aFile, "--root", "x", "--stream", "--chunk", "99999999999"}
		}, nil, 2, "--chunk: 99999999999 is above its maximum 65536"},
		{"schema verify --schema /dev/zero", func(o string) []string {
			return []string{"schema", "verify", "--descriptor-set", f.aFile, "--root", "x", "--schema", "/dev/zero"}
		}, nil, 1, "/dev/zero is larger than"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out")
			code, stdout, stderr := execCLI(t, tc.env, tc.args(out)...)
			lines := strings.Split(strings.TrimRight(stderr, "\n"), "\n")
			if code != tc.code || !strings.Contains(lines[len(lines)-1], tc.want) {
				t.Fatalf("exit %d (want %d); stderr's last line %q, want %q\nstderr:\n%s", code, tc.code, lines[len(lines)-1], tc.want, stderr)
			}
			for _, secret := range []string{f.secret, f.ring, pastedKey} {
				if strings.Contains(stdout+stderr, secret) {
					t.Fatalf("a secret in the output:\n%s\n%s", stdout, stderr)
				}
			}
			for _, name := range finalNames {
				if _, err := os.Stat(filepath.Join(out, name)); err == nil {
					t.Errorf("%s written under its final name", name)
				}
			}
		})
	}
}

// runArgs are a run over the fixture's envelopes into out, with extra flags.
func runArgs(f *fixture, out string, extra ...string) []string {
	return append([]string{"run", "--agent", support.Name, "--input", f.envelopes, "--output_dir", out, "--allow_unsigned_intents"}, extra...)
}

// effArgs are an effector files run over the fixture's intents into out, with extra flags.
func effArgs(f *fixture, out string, extra ...string) []string {
	return append([]string{"effector", "--input", f.typed["intents"], "--output_dir", out, "--keyring", f.ringRef,
		"--dedup", "bbolt:" + filepath.Join(filepath.Dir(out), "dedup.db")}, extra...)
}

// --replace lets run write into a folder holding an earlier run's files: they are removed
// before the run starts, stale shards of a sharded run included, so that no glob of the new
// outputs reads them again. A folder holding the run's own input is refused even then, and
// replay refuses to replace the recorded run it reads.
func TestReplace(t *testing.T) {
	f := newFixture(t)
	out := filepath.Join(t.TempDir(), "out")
	os.MkdirAll(out, 0o755)
	stale := []string{"intents-00000-of-00002.binpb", "intents-00001-of-00002.jsonl", "traces.binpb", ".finals.binpb.0a1b.partial"}
	for _, s := range stale {
		os.WriteFile(filepath.Join(out, s), []byte("stale"), 0o644)
	}
	if code, _, stderr := execCLI(t, nil, runArgs(f, out)...); code != 2 || !strings.Contains(stderr, "pass --replace") {
		t.Fatalf("without --replace: exit %d\n%s", code, stderr)
	}
	code, stdout, stderr := execCLI(t, nil, runArgs(f, out, "--replace")...)
	if code != 0 {
		t.Fatalf("with --replace: exit %d\n%s\n%s", code, stdout, stderr)
	}
	for _, s := range stale {
		if b, err := os.ReadFile(filepath.Join(out, s)); err == nil && string(b) == "stale" {
			t.Errorf("stale %s kept", s)
		}
	}
	for _, name := range []string{"intents.binpb", "finals.jsonl", "dead_letters.binpb"} {
		if _, err := os.Stat(filepath.Join(out, name)); err != nil {
			t.Errorf("no %s: %v", name, err)
		}
	}
	code, _, stderr = execCLI(t, nil, runArgs(f, out, "--replace", "--restore", filepath.Join(out, "snapshots.binpb"))...)
	if code != 2 || !strings.Contains(stderr, "a run never writes over its input") {
		t.Fatalf("replacing the restore input: exit %d\n%s", code, stderr)
	}
	code, _, stderr = execCLI(t, nil, "replay", "--agent", support.Name, "--cache_from", filepath.Join(out, "snapshots.binpb"),
		"--input", f.envelopes, "--output_dir", out, "--replace")
	if code != 2 || !strings.Contains(stderr, "--cache_from's file snapshots.binpb") {
		t.Fatalf("replay replacing its recording: exit %d\n%s", code, stderr)
	}
	replayed := filepath.Join(t.TempDir(), "replayed")
	os.MkdirAll(replayed, 0o755)
	os.WriteFile(filepath.Join(replayed, "finals.jsonl"), []byte("stale"), 0o644)
	code, stdout, stderr = execCLI(t, nil, "replay", "--agent", support.Name, "--cache_from", filepath.Join(out, "snapshots.binpb"),
		"--input", f.envelopes, "--output_dir", replayed, "--replace")
	if code != 0 && code != 3 { // 3: the unsigned recording diverges, which is not this test's concern
		t.Fatalf("replay --replace: exit %d\n%s\n%s", code, stdout, stderr)
	}
	if b, _ := os.ReadFile(filepath.Join(replayed, "finals.jsonl")); string(b) == "stale" {
		t.Fatal("replay --replace kept the stale finals")
	}
}

// A second effector on a bbolt store another process holds says so, and which flag to change.
func TestEffectorLockedStore(t *testing.T) {
	f := newFixture(t)
	db := filepath.Join(t.TempDir(), "dedup.db")
	st, err := store.OpenBolt(db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	out := filepath.Join(t.TempDir(), "out")
	code, _, stderr := execCLI(t, nil, append(effArgs(f, out), "--dedup", "bbolt:"+db)...)
	if code != 2 || !strings.Contains(stderr, "--dedup: the store bbolt:"+db+" is locked by another process") {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
}
